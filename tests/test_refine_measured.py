"""Whole-plan scoring measured (`collage_xdsl.refine.measured.MeasuredScorer`): the timing
a comparison may take, a timed sample after an untimed call, and the MLP's plans on the
real backends in a worker process: failing, disagreeing and crashing challengers, the
deadline, a softmax that differs only by rounding, and the tolerances of a float16 and an
int8 model."""

from __future__ import annotations

import os
import time
from functools import partial

import numpy as np
import pytest
from ir_helpers import main_of, parse

from collage_xdsl.backends import compile_kernel, get_backend
from collage_xdsl.backends.kernel import KernelCompileError
from collage_xdsl.baselines.assign import assign_kernels
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits
from collage_xdsl.core.regions import Kernel
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.ir.inputs import random_arguments
from collage_xdsl.ir.interpreter import run_function
from collage_xdsl.planner.options import RefinementOptions
from collage_xdsl.planner.refinement import _scorer, variant_builder
from collage_xdsl.refine import measured
from collage_xdsl.refine.measured import MeasuredScorer, _interleave
from collage_xdsl.refine.moves import make_plan
from collage_xdsl.runtime.agreement import (
    HALF_TOLERANCE,
    SoftmaxRounding,
    ill_conditioned,
)


def test_the_measured_scorer_bounds_a_comparisons_timing():
    scorer = MeasuredScorer(lambda plan: "", [], rounds=15, sample_s=0.005)
    # max-rounds 60; a sample: an untimed run, then timed ones of at least 5 ms
    assert scorer.timing_seconds(0.09) == pytest.approx(2 * 60 * (0.09 + 0.09))
    assert scorer.timing_seconds(1e-6) == pytest.approx(2 * 60 * (1e-6 + 0.005))


def test_a_timed_sample_follows_an_untimed_call():
    """Each sample is the steady state: one untimed call absorbs what the other plan left
    in the caches, then `calls` timed calls (here the first call of a plan is slow)."""
    log = []

    class Plan:
        def __init__(self, name, first_s):
            self.name, self.first_s = name, first_s

        def run(self, inputs):
            log.append(self.name)
            if log[-2:-1] != [self.name]:  # the first call after the other plan
                time.sleep(self.first_s)

    a, b = Plan("a", 0.05), Plan("b", 0.0)
    sa, sb = _interleave(a, b, [], calls=2, rounds=2, first=0)
    assert log == ["a"] * 3 + ["b"] * 3 + ["b"] * 3 + ["a"] * 3
    assert len(sa) == len(sb) == 2 and max(sa) < 0.01  # the slow first calls are untimed


# ---------------------------------------------------------------------------
# Measured: the real backends in a worker process
# ---------------------------------------------------------------------------


class Transformed:
    """A compiled kernel whose outputs go through `transform` (a wrong backend)."""

    def __init__(self, kernel, transform):
        self.kernel, self.transform = kernel, transform
        self.backend, self.version = kernel.backend, kernel.version

    def __call__(self, inputs):
        return self.transform(self.kernel(inputs))

    def release(self):
        self.kernel.release()


def no_openvino_and_wrong_onnxruntime(backend, func, policy):
    """The worker's compile hook: openvino fails to compile, onnxruntime is off by one."""
    if backend == "openvino":
        raise KernelCompileError("openvino is switched off for this test")
    kernel = compile_kernel(backend, func, policy)
    if backend != "onnxruntime":
        return kernel

    return Transformed(kernel, lambda outputs: [np.asarray(y) + 1 for y in outputs])


def openvino_crashes(backend, func, policy):
    if backend == "openvino":
        os._exit(3)
    return compile_kernel(backend, func, policy)


@pytest.fixture(scope="module")
def mlp(example_module):
    """The MLP module, its graph, the tvm-alone plan and a builder for the scorer."""
    module = example_module("mlp")
    graph = DataflowGraph(main_of(module))
    plans = {b: make_plan(assign_kernels(graph, get_backend(b)), b)
             for b in ("tvm", "onnxruntime", "openvino")}
    return plans, variant_builder(module, "main", len(graph)), random_arguments(
        main_of(module), 0, int_high=2)


def test_measured_scorer_rejects_variants_that_fail_or_disagree(mlp):
    plans, build, x = mlp
    scorer = MeasuredScorer(build, x, rounds=3, compile=no_openvino_and_wrong_onnxruntime)
    try:
        far = time.monotonic() + 300
        openvino = scorer.compare(plans["tvm"], plans["openvino"], far)
        assert openvino.ratio == float("inf") and not openvino.incumbent_failed
        assert "openvino is switched off for this test" in openvino.reason
        wrong = scorer.compare(plans["tvm"], plans["onnxruntime"], far)
        assert "output 0 disagrees with the start plan's" in wrong.reason
        split = make_plan([Kernel(SubGraph(k.sub_graph.graph, 1 << i), "tvm")
                           for k in plans["tvm"].kernels
                           for i in bits(k.inside & k.sub_graph.graph.kernel_nodes)], "split")
        good = scorer.compare(plans["tvm"], split, far)
        assert good.reason == "" and 0 < good.ratio <= good.ratio_high < float("inf")
        assert good.incumbent_s > 0 and good.challenger_s > 0 and scorer.started == 1
    finally:
        scorer.close()


def test_measured_scorer_survives_a_crashing_worker_and_the_deadline(mlp):
    plans, build, x = mlp
    scorer = MeasuredScorer(build, x, rounds=3, compile=openvino_crashes)
    try:
        crash = scorer.compare(plans["tvm"], plans["openvino"], time.monotonic() + 300)
        assert crash.reason == "worker crashed: exit code 3" and not crash.incumbent_failed
        late = scorer.compare(plans["tvm"], plans["onnxruntime"], time.monotonic() + 0.01)
        assert late.unfinished and late.reason == "incumbent: the budget ran out"
        again = scorer.compare(plans["tvm"], plans["onnxruntime"], time.monotonic() + 300)
        assert again.reason == "" and scorer.started == 3
    finally:
        scorer.close()


V = "tensor<1x4xf32>"
SOFTMAX = f"""
func.func @main(%x: {V}) -> (tensor<1x4x1x1xf32>, {V}) {{
  %s = collage.constant dense<SCALE> : {V}
  %l = collage.mul %x, %s : ({V}, {V}) -> {V}
  %p = collage.softmax %l {{axis = -1 : i64}} : {V}
  %r = collage.reshape %p : {V} -> tensor<1x4x1x1xf32>
  %z = collage.relu %x : {V}
  func.return %r, %z : tensor<1x4x1x1xf32>, {V}
}}
"""


def onnxruntime_reverses_probabilities(backend, func, policy):
    """The worker's compile hook: onnxruntime kernels reverse their rank-4 outputs (the
    reshaped softmax of SOFTMAX)."""
    kernel = compile_kernel(backend, func, policy)
    if backend != "onnxruntime":
        return kernel

    return Transformed(kernel, lambda outputs: [
        np.ascontiguousarray(np.flip(y, axis=1)) if np.ndim(y) == 4 else y for y in outputs])


@pytest.mark.parametrize("scale, rounding", [(6.8e9, True), (1.0, False)])
def test_measured_scorer_accepts_a_softmax_that_differs_only_by_rounding(scale, rounding,
                                                                         monkeypatch):
    import collage_xdsl.runtime.agreement as conditioning

    module = parse(SOFTMAX.replace("SCALE", str(scale)))
    graph = DataflowGraph(main_of(module))
    tvm, ort = (make_plan(assign_kernels(graph, get_backend(b)), f"{b} alone")
                for b in ("tvm", "onnxruntime"))
    x = random_arguments(main_of(module), 0, int_high=2)
    interpreted = []
    monkeypatch.setattr(conditioning, "run_function",
                        lambda f, a: interpreted.append(f) or run_function(f, a))
    explain = SoftmaxRounding(module, "main", x)
    assert explain.softmax_outputs == {0}
    assert explain.note(1) is None and not interpreted  # relu is no softmax: nothing to run
    scorer = MeasuredScorer(variant_builder(module, "main", len(graph)), x, rounds=3,
                            compile=onnxruntime_reverses_probabilities, explain=explain.note)
    try:
        far = time.monotonic() + 300
        c = scorer.compare(tvm, ort, far)
        again = scorer.compare(tvm, ort, far)
    finally:
        scorer.close()
    assert len(interpreted) == 1  # the logits are computed once
    logits = explain.logits()[0]
    assert ill_conditioned(logits) == rounding
    if rounding:  # one-hot at the largest logit, reversed: a real disagreement, accepted
        assert c.reason == "" and 0 < c.ratio < float("inf")
        assert c.note == again.note == (
            f"output 0 is the softmax of logits up to {np.abs(logits).max():.3g}, where one "
            f"float32 ulp is {np.spacing(np.abs(logits).max()):.3g}: decided by rounding")
    else:
        assert c.reason.startswith("output 0 disagrees with the start plan's (max difference")
        assert c.ratio == float("inf") and c.note == ""


H = "tensor<1x64xf16>"
Q = "tensor<1x64xf32>"
TOLERANCE_MODELS = {
    "float16": (f"""
func.func @main(%x: {H}) -> {H} {{
  %r = collage.relu %x : {H}
  func.return %r : {H}
}}
""", HALF_TOLERANCE),
    "int8": (f"""
func.func @main(%x: {Q}) -> {Q} {{
  %s = collage.constant dense<5.000000e-02> : tensor<f32>
  %z = collage.constant dense<128> : tensor<ui8>
  %q = collage.quantize_linear %x, %s, %z : ({Q}, tensor<f32>, tensor<ui8>) -> tensor<1x64xui8>
  %y = collage.dequantize_linear %q, %s, %z : (tensor<1x64xui8>, tensor<f32>, tensor<ui8>) -> {Q}
  func.return %y : {Q}
}}
""", 0.05),
}
"""A float16 model and an int8 one whose output is dequantized in steps of 0.05, each with
the least atol its plans are compared with."""


def shifted(shifts: dict[str, float], backend, func, policy):
    """The worker's compile hook: each backend's outputs shifted by `shifts[backend]`."""
    shift = shifts[backend]
    return Transformed(compile_kernel(backend, func, policy), lambda outputs: [
        y + np.asarray(shift, y.dtype) for y in map(np.asarray, outputs)])


@pytest.mark.parametrize("model", TOLERANCE_MODELS)
def test_refinement_compares_plans_within_the_models_tolerances(model, monkeypatch):
    """Plans that differ by half the model's atol (beyond float32's) agree; by three times
    it, they do not."""
    text, atol = TOLERANCE_MODELS[model]
    module = parse(text)
    graph = DataflowGraph(main_of(module))
    tvm, ort, ov = (make_plan(assign_kernels(graph, get_backend(b)), f"{b} alone")
                    for b in ("tvm", "onnxruntime", "openvino"))
    hook = partial(shifted, {"tvm": 0.0, "onnxruntime": atol / 2, "openvino": 3 * atol})
    # the scorer refinement makes for the model, with the hook
    monkeypatch.setattr(measured, "MeasuredScorer", partial(MeasuredScorer, compile=hook))
    scorer = _scorer(module, "main", len(graph), RefinementOptions(rounds=3))
    try:
        far = time.monotonic() + 300
        within, beyond = scorer.compare(tvm, ort, far), scorer.compare(tvm, ov, far)
    finally:
        scorer.close()
    assert within.reason == "" and 0 < within.ratio < float("inf")
    assert beyond.reason.startswith("output 0 disagrees with the start plan's (max difference")
