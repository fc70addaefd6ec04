"""Measurement in worker processes (`collage_xdsl.measure.pool`): every backend, crashes and
timeouts as Invalid with a restart, batches and groups measured again one kernel at a
time, weights through the on-disk store, the cost database (a warm run starts no worker),
the Invalid path through partitioning to execution, progress and the thread policy."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
from dataclasses import replace

import numpy as np
import pytest
from collage_xdsl.dialects.collage import KernelOp, MatmulOp
from collage_xdsl.passes.partition import CollagePartitionPass
from ir_helpers import RELU_ADD_RELU, parse
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region

from collage_xdsl.backends import compile_kernel
from collage_xdsl.backends.kernel import KernelCompileError
from collage_xdsl.errors import CollageError
from collage_xdsl.ir import tensors
from collage_xdsl.ir.interpreter import run_module
from collage_xdsl.ir.tensors import constant_op, tensor_type
from collage_xdsl.measure import pool as measure
from collage_xdsl.measure.estimator import (
    KernelRequest,
    random_inputs,
)
from collage_xdsl.measure.pool import MeasureSettings, WorkerCostEstimator
from collage_xdsl.planner import plan as planner

FAST = MeasureSettings(warmup=1, round_runs=3, max_runs=12, budget_s=0.05, alone_span_s=0.05)
ONE = replace(FAST, batch_kernels=1)
"""One sub-graph per batch: what one kernel's crash or hang does to the pool."""
T = "tensor<4x8xf32>"


def unary(op: str) -> ModuleOp:
    return parse(f"func.func @k(%x: {T}) -> {T} {{\n  %y = collage.{op} %x : {T}\n"
                 f"  func.return %y : {T}\n}}")


def request(op: str, backend: str = "onnxruntime") -> KernelRequest:
    return KernelRequest(backend, op, 1, lambda: unary(op))


# -- compile hooks run in the worker (module level, so the worker can import them) ---------


def direct(module: ModuleOp, backend: str, policy):
    return compile_kernel(backend, module, policy)


def crashing(module: ModuleOp, backend: str, policy):
    """relu: exits without a word; tanh: segfaults; sigmoid on tvm: hangs; neg on tvm:
    exits; anything else compiles."""
    text = str(module)
    if "collage.relu" in text:
        os._exit(3)
    if "collage.tanh" in text:
        os.kill(os.getpid(), signal.SIGSEGV)
    if "collage.sigmoid" in text and backend == "tvm":
        time.sleep(60)
    if "collage.neg" in text and backend == "tvm":
        os._exit(4)
    return compile_kernel(backend, module, policy)


def slow(module: ModuleOp, backend: str, policy):
    """Takes 0.7 s to compile."""
    time.sleep(0.7)
    return compile_kernel(backend, module, policy)


def report_threads(module: ModuleOp, backend: str, policy):
    """Fails with the thread policy the worker applies, for the test to read."""
    raise KernelCompileError(
        f"threads={policy.threads} spinning={policy.spinning} "
        f"COLLAGE_THREADS={os.environ['COLLAGE_THREADS']}"
    )


class _Slow:
    """A kernel that busy-waits 5 ms per op before running (a sleep's scheduling jitter
    on a loaded machine would swamp the difference between one op and two)."""

    def __init__(self, kernel, ops: int):
        self.kernel, self.ops = kernel, ops

    def __call__(self, inputs):
        until = time.perf_counter() + 5e-3 * self.ops
        while time.perf_counter() < until:
            pass
        return self.kernel(inputs)

    def release(self) -> None:
        self.kernel.release()


def no_add_on_test(module: ModuleOp, backend: str, policy):
    """The toy `test` backend lowers through ONNX Runtime but has no lowering for add;
    tvm kernels are made slow (5 ms per op), so `test` would win wherever it can."""
    if backend == "test":
        if "collage.add" in str(module):
            raise KernelCompileError("test: no lowering for collage.add")
        return compile_kernel("onnxruntime", module, policy)
    ops = sum(op.name.startswith("collage.") for op in module.walk())
    return _Slow(compile_kernel(backend, module, policy), ops)


# -- tests --------------------------------------------------------------------------------


def test_worker_measures_a_small_kernel_on_each_backend():
    requests = [request("sigmoid", b) for b in ("tvm", "onnxruntime", "openvino")]
    with WorkerCostEstimator(settings=FAST, progress=False) as est:  # Backend.compile
        measured = list(est.measure_many(requests))
        assert est.started == 1  # one worker measured them all
    for r, m in zip(requests, measured):
        assert m.cost.is_known and 0 < m.cost.seconds < 0.1, (r.backend, m)
        assert 3 <= m.runs <= 12 and m.spread >= 0 and m.reason == ""


def test_crashing_worker_is_invalid_and_replaced():
    requests = [request("relu"), request("exp"), request("tanh"), request("neg")]
    with WorkerCostEstimator(compile=crashing, settings=ONE, progress=False) as est:
        relu, exp, tanh, neg = est.measure_many(requests)
        assert est.started == 3  # the first and the third kernel killed their worker
    assert relu.cost.is_invalid and relu.reason == "kernel relu on onnxruntime: worker crashed: exit code 3"
    assert tanh.cost.is_invalid and tanh.reason.endswith("worker crashed: signal 11 (SIGSEGV)")
    assert tanh.cost.reason == tanh.reason
    assert exp.cost.is_known and neg.cost.is_known


def test_a_group_whose_worker_dies_is_measured_again_one_kernel_at_a_time():
    # one sub-graph on three backends goes to one worker; tvm kills it
    requests = [request("neg", b) for b in ("onnxruntime", "tvm", "openvino")]
    with WorkerCostEstimator(compile=crashing, settings=FAST, progress=False) as est:
        ort, tvm, ov = est.measure_many(requests)
        assert est.started == 3  # the group's worker, then the one tvm killed alone
    assert ort.cost.is_known and ov.cost.is_known
    assert tvm.cost.is_invalid and tvm.reason == "kernel neg on tvm: worker crashed: exit code 4"


def test_a_batch_of_sub_graphs_goes_to_one_worker_and_a_crash_costs_one_kernel():
    # three sub-graphs on two backends: one batch, one worker
    requests = [request(op, b) for op in ("neg", "exp", "sqrt") for b in ("openvino", "onnxruntime")]
    with WorkerCostEstimator(settings=FAST, progress=False) as est:
        assert all(m.cost.is_known for m in est.measure_many(requests))
        assert est.started == 1
    # neg on tvm kills the batch's worker: the batch again, one kernel at a time
    requests = [request(op, b) for op in ("exp", "neg") for b in ("onnxruntime", "tvm")]
    with WorkerCostEstimator(compile=crashing, settings=FAST, progress=False) as est:
        measured = list(est.measure_many(requests))
        assert est.started == 2  # the batch's worker, then the one neg on tvm killed
    assert [m.cost.is_known for m in measured] == [True, True, True, False]
    assert measured[3].reason == "kernel neg on tvm: worker crashed: exit code 4"


def test_a_batch_longer_than_the_timeout_is_not_timed_out_while_it_reports_progress():
    # four kernels of 0.7 s each: 2.8 s in all, but progress after each, every 0.7 s
    requests = [request(op) for op in ("exp", "neg", "sqrt", "sigmoid")]
    with WorkerCostEstimator(compile=slow, settings=FAST, timeout_s=1.0, progress=False) as est:
        assert all(m.cost.is_known for m in est.measure_many(requests))
        assert est.started == 1


def test_a_group_that_times_out_is_measured_again_one_kernel_at_a_time():
    requests = [request("sigmoid", b) for b in ("onnxruntime", "tvm")]
    with WorkerCostEstimator(compile=crashing, settings=FAST, timeout_s=2, progress=False) as est:
        ort, tvm = est.measure_many(requests)  # silent for 2 s in the group, then alone
        assert est.started == 2
    assert ort.cost.is_known
    assert tvm.reason == "kernel sigmoid on tvm: timed out after 2 s (compile and measurement)"


def test_timeout_is_invalid_and_the_next_kernel_is_measured():
    with WorkerCostEstimator(compile=crashing, settings=ONE, timeout_s=2, progress=False) as est:
        started = time.monotonic()
        hung, fine = est.measure_many([request("sigmoid", "tvm"), request("exp")])
        assert time.monotonic() - started < 30
        assert est.started == 2
    assert hung.cost.is_invalid
    assert hung.reason == "kernel sigmoid on tvm: timed out after 2 s (compile and measurement)"
    assert fine.cost.is_known


def test_compile_error_is_invalid_without_restart():
    with WorkerCostEstimator(compile=no_add_on_test, settings=FAST, progress=False) as est:
        add = KernelRequest("test", "add", 1, lambda: parse(
            f"func.func @k(%x: {T}) -> {T} {{\n  %y = collage.add %x, %x : ({T}, {T}) -> {T}\n"
            f"  func.return %y : {T}\n}}"))
        bad, good = est.measure_many([add, request("relu", "test")])
        assert est.started == 1
    assert bad.cost.is_invalid and "KernelCompileError: test: no lowering for collage.add" in bad.reason
    assert good.cost.is_known


def test_worker_reads_weights_from_the_parents_store(tmp_path, monkeypatch):
    monkeypatch.setattr(tensors, "_STORE", None)
    monkeypatch.setenv("COLLAGE_WEIGHTS_DIR", str(tmp_path / "weights"))
    modules = []
    for seed in (1, 2):
        weight = constant_op(np.random.default_rng(seed).standard_normal((8, 8)).astype("f4"))
        x = Block(arg_types=[tensor_type((4, 8), np.float32)])
        y = MatmulOp(x.args[0], weight.results[0])
        x.add_ops([weight, y, ReturnOp(y.results[0])])
        func = FuncOp("k", ([x.args[0].type], [y.results[0].type]), Region(x))
        modules.append(ModuleOp([func]))
    (weight, _, _) = modules[1].ops.first.body.block.ops
    tensors.weight_store().path(weight.value.key.data).unlink()
    monkeypatch.delenv("COLLAGE_WEIGHTS_DIR")  # the worker must be told where the store is
    with WorkerCostEstimator(compile=direct, settings=FAST, progress=False) as est:
        found, lost = est.measure_many(
            [KernelRequest("onnxruntime", f"mm{i}", 1, lambda m=m: m) for i, m in enumerate(modules)]
        )
    assert found.cost.is_known, found.reason
    assert lost.cost.is_invalid and "not found in" in lost.reason


def test_abandoned_batch_kills_busy_workers():
    est = WorkerCostEstimator(compile=crashing, settings=ONE, workers=2, progress=False)
    results = est.measure_many([request("exp"), request("sigmoid", "tvm")])
    assert next(results).cost.is_known  # the second worker still hangs on its kernel
    results.close()  # the caller stopped: nothing is left running
    est.close()
    assert est.started == 2
    assert not [p for p in multiprocessing.active_children() if p.name == "collage-measure"]


CHAIN = f"""
func.func @main(%x: {T}, %y: {T}) -> {T} {{
  %a = collage.relu %x : {T}
  %b = collage.add %a, %y : ({T}, {T}) -> {T}
  %c = collage.sigmoid %b : {T}
  %d = collage.mul %c, %a : ({T}, {T}) -> {T}
  func.return %d : {T}
}}
"""


def test_warm_cost_db_measures_nothing(tmp_path, monkeypatch):
    db = str(tmp_path / "costs.sqlite")
    runs = []
    for run in ("cold", "warm"):
        module = parse(CHAIN)
        report = tmp_path / f"{run}.json"
        CollagePartitionPass(backends=("onnxruntime", "openvino"), estimator="measured",
                             cost_db=db, explain=str(report)).apply(Context(), module)
        (function,) = json.loads(report.read_text())["functions"]
        runs.append((str(module), function["estimates"], function["cost_db_hits"]))

        class NoWorker:
            def __init__(self, *args):
                raise AssertionError("a warm run started a measurement worker")

        monkeypatch.setattr(measure, "_Worker", NoWorker)
    (cold, measured, _), (warm, remeasured, hits) = runs
    assert measured > 0 and remeasured == 0 and hits == measured
    assert warm == cold




def test_uncompilable_kernels_are_avoided_and_the_model_runs(monkeypatch):
    """The `test` backend (relu and add, any fusion) cannot compile add: its kernels with
    an add are Invalid, the search leaves the add to tvm, and the partitioned model
    computes what the original does."""
    est = WorkerCostEstimator(compile=no_add_on_test, settings=FAST, progress=False)
    monkeypatch.setattr(planner, "make_estimator", lambda *args: (est, None))
    module, reference = parse(RELU_ADD_RELU), parse(RELU_ADD_RELU)
    CollagePartitionPass(backends=("tvm", "test"), backend_options="test: ops=relu,add",
                         estimator="measured").apply(Context(), module)
    invalid = [m for m in est._memo.values() if m.cost.is_invalid]
    assert len(invalid) == 4  # add, relu+add, add+relu, relu+add+relu on test
    assert all("no lowering for collage.add" in m.reason for m in invalid)
    kernels = [(k.backend.data, [op.name for op in k.body.ops][:-1])
               for k in module.walk() if isinstance(k, KernelOp)]
    # which relus join tvm's add depends on the timings; the add is never on test
    assert [op for _, ops in kernels for op in ops] == [
        "collage.relu", "collage.add", "collage.relu"]
    assert all(backend == "tvm" for backend, ops in kernels if "collage.add" in ops)
    inputs = random_inputs(reference)
    np.testing.assert_allclose(run_module(module, inputs)[0], run_module(reference, inputs)[0],
                               rtol=1e-6)


def _unbuildable() -> ModuleOp:
    raise ValueError("no such sub-graph")


@pytest.mark.parametrize("progress", [True, None])
def test_progress_bar_and_unbuildable_kernels(progress, capsys, monkeypatch):
    monkeypatch.setattr(measure, "PROGRESS_DELAY_S", 0)
    requests = [KernelRequest("tvm", f"k{i}", 1, _unbuildable) for i in range(3)]
    with WorkerCostEstimator(progress=progress) as est:
        measured = list(est.measure_many(requests))
        assert est.started == 0
    assert all(m.reason.endswith("could not build it: ValueError: no such sub-graph")
               for m in measured)
    shown = "measuring kernels" in capsys.readouterr().err
    assert shown == bool(progress)  # None: only on a TTY, and pytest's stderr is not one


def test_worker_thread_policy_shares_the_default_out(monkeypatch):
    monkeypatch.setenv("COLLAGE_THREADS", "4")
    with WorkerCostEstimator(compile=report_threads, workers=2, progress=False) as est:
        (m,) = est.measure_many([request("relu")])
    assert m.reason.endswith("threads=2 spinning=run COLLAGE_THREADS=2")


def test_compile_hook_must_reach_the_worker():
    with pytest.raises(CollageError, match="cannot be sent to a worker process"):
        WorkerCostEstimator(compile=lambda module, backend, policy: None)
