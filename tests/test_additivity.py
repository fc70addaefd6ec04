"""The additive model checked on a real run: kernel calls replayed alone vs the run."""

from __future__ import annotations

import math

import numpy as np
import pytest
from collage_xdsl.dialects import collage as C
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region

from collage_xdsl.core.boundaries import FixedCrossing
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.regions import Kernel, form_regions
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.tensors import tensor_type
from collage_xdsl.runtime import additivity
from collage_xdsl.runtime.additivity import check_additivity
from collage_xdsl.runtime.executable import Executable

BACKENDS = ("onnxruntime", "openvino", "onnxruntime")


def relu_sigmoid_relu(backends=BACKENDS, one_kernel: bool = False) -> Executable:
    """x -> relu -> sigmoid -> relu, op i a kernel on backends[i] (none: not partitioned;
    `one_kernel`: all three one kernel on backends[0])."""
    t = tensor_type((4, 64), np.float32)
    block = Block(arg_types=[t])
    relu = C.ReluOp(block.args[0])
    sigmoid = C.SigmoidOp(relu.results[0])
    last = C.ReluOp(sigmoid.results[0])
    block.add_ops([relu, sigmoid, last, ReturnOp(last.results[0])])
    func = FuncOp("main", FunctionType.from_lists([t], [t]), Region(block))
    module = ModuleOp([func])
    if backends:
        graph = DataflowGraph(func)
        nodes = [1 << graph.node_of(op) for op in (relu, sigmoid, last)]
        form_regions(graph, [Kernel(SubGraph(graph, sum(nodes)), backends[0])] if one_kernel
                  else [Kernel(SubGraph(graph, n), b) for n, b in zip(nodes, backends)])
    return Executable(module)


def test_kernel_calls_replay_the_run():
    exe = relu_sigmoid_relu()
    x = np.random.default_rng(0).normal(size=(4, 64)).astype(np.float32)
    calls = exe.kernel_calls([x])
    assert [c.backend for c in calls] == list(BACKENDS)
    np.testing.assert_array_equal(calls[0].operands[0], x)
    for this, following in zip(calls, calls[1:]):  # each call, alone, gives the next its input
        (out,) = this.kernel(this.operands)
        np.testing.assert_allclose(out, following.operands[0], rtol=1e-6)
    (y,) = calls[-1].kernel(calls[-1].operands)
    np.testing.assert_allclose(y, exe.run([x])[0], rtol=1e-6)


def test_additivity_check_times_both_sides_and_adds_the_boundaries():
    exe = relu_sigmoid_relu()
    x = np.ones((4, 64), np.float32)
    check = check_additivity(exe, [x], FixedCrossing(seconds=1.0), rounds=3, calls=2)
    assert check.calls == 3 and check.ratio.n == 3
    assert check.boundary_s == pytest.approx(2.0)  # onnxruntime > openvino > onnxruntime
    assert check.kernels_s > 0 and check.run_s > 0
    assert check.ratio.low <= check.ratio.median <= check.ratio.high
    # 2 s of boundaries against a run of microseconds: an overestimate, whatever the noise
    assert check.error > 0 and math.isfinite(check.error)
    assert check.to_json()["calls"] == 3 and "error" in check.format()


def test_kernels_alone_are_timed_after_eviction_when_the_run_does_not_fit_in_l2(
        monkeypatch):
    exe = relu_sigmoid_relu()
    x = np.ones((4, 64), np.float32)
    log = []

    class Evictor:
        def __init__(self, threads):
            assert threads == exe.policy.threads

        def __call__(self):
            log.append("evict")

    for kind in {type(c.kernel) for c in exe.kernel_calls([x])}:
        def traced(self, ops, call=kind.__call__):
            log.append("kernel")
            return call(self, ops)
        monkeypatch.setattr(kind, "__call__", traced)
    monkeypatch.setattr(additivity, "Evictor", Evictor)
    monkeypatch.setattr(additivity, "needs_eviction", lambda module, threads: True)
    check_additivity(exe, [x], rounds=2, calls=3)
    alone = (["kernel"] + ["evict", "kernel"] * 3) * 3   # an untimed call, then 3 timed
    run = ["kernel"] * 3 * (1 + 3)                       # the whole run, 1 + 3 times
    assert log == ["kernel"] * 3 + (alone + run) * 2  # the calls recorded, then the rounds
    # a run that fits in the L2 caches (this one: 4 x 64 floats a tensor): no eviction
    log.clear()
    monkeypatch.undo()
    monkeypatch.setattr(additivity, "Evictor", Evictor)
    check_additivity(exe, [x], rounds=2, calls=3)
    assert "evict" not in log
    # a plan of one kernel call: nothing else runs between its calls, so no eviction
    # either, even when the run does not fit in the L2 caches
    monkeypatch.setattr(additivity, "needs_eviction", lambda module, threads: True)
    check = check_additivity(relu_sigmoid_relu(one_kernel=True), [x], rounds=2, calls=3)
    assert check.calls == 1 and "evict" not in log


def test_additivity_check_rejects_what_it_cannot_check():
    x = np.ones((4, 64), np.float32)
    with pytest.raises(CollageError, match="rounds and calls must be at least 1"):
        check_additivity(relu_sigmoid_relu(), [x], rounds=0)
    with pytest.raises(CollageError, match="calls no kernels"):
        check_additivity(relu_sigmoid_relu(backends=()), [x])
