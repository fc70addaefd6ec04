"""TVM schedule tuning (`collage_xdsl.backends.tvm.tuning`): options, the child-process crash
fallback, tuned schedules and the tuning database."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import tvm
import tvm_ffi
from collage_xdsl.dialects import ir_context
from collage_xdsl.passes.partition import CollagePartitionPass
from tvm import s_tir, tirx
from tvm.relax.backend.cpu_generic import pipeline as cpu_pipeline
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser
from xdsl.passes import PassPipeline

from collage_xdsl.backends import compile_kernel, get_backend
from collage_xdsl.backends.tvm import tuning
from collage_xdsl.backends.tvm.lowering import host_target, to_relax
from collage_xdsl.backends.tvm.options import TuningOptions, tuning_backend_options
from collage_xdsl.errors import CollageError
from collage_xdsl.planner.options import PartitionOptions
from collage_xdsl.planner.pipeline import partition_module
from collage_xdsl.tools.collage import build_parser, main

KERNEL = """
func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>) -> tensor<8x8xf32> {
  %c = collage.matmul %a, %b : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %d = collage.relu %c : tensor<8x8xf32>
  func.return %d : tensor<8x8xf32>
}
"""

CRASHING_WORKER = [sys.executable, "-c", (
    "import os, signal, sys; sys.stdin.read(); "
    "print('  File \"<unknown>\", line 0, in tvm::ffi::ToJSONGraph(tvm::ffi::Any const&)', "
    "file=sys.stderr, flush=True); os.kill(os.getpid(), signal.SIGSEGV)")]
"""A stand-in for the tuning child that dies the way MetaSchedule's driver does here."""


def context() -> Context:
    return ir_context()


def parse_module(text: str = KERNEL) -> ModuleOp:
    return Parser(context(), text).parse_module()


def kernel() -> FuncOp:
    return next(op for op in parse_module().ops if isinstance(op, FuncOp))


def inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((8, 16), np.float32), rng.standard_normal((16, 8), np.float32)
    return a, b, np.maximum(a @ b, 0)


@pytest.fixture
def db(monkeypatch, tmp_path):
    """A clean tuning database and tuner state; restored afterwards."""
    monkeypatch.setattr(tuning, "_REPORTED", [])
    monkeypatch.setattr(tuning, "_FAILED", {})
    return tmp_path / "tuning"


def test_options_validate_and_tag_the_tvm_version(db, monkeypatch):
    with pytest.raises(CollageError, match="unknown mode 'autotvm'"):
        TuningOptions("autotvm")
    with pytest.raises(CollageError, match="at least 1"):
        TuningOptions("metaschedule", trials=0)
    with pytest.raises(CollageError, match="option trials must be a number"):
        get_backend("tvm", trials="many")
    assert get_backend("tvm").tuning.mode == "none"
    untuned = get_backend("tvm").version
    assert untuned.endswith("+loopnest")
    assert get_backend("tvm", tune="metaschedule", trials=3, db=str(db)).version == \
        untuned + "+ms3"
    assert get_backend("onnxruntime").version == get_backend("onnxruntime").version


def test_pass_option_reaches_the_tvm_codegen(db, monkeypatch, capsys):
    monkeypatch.setattr(tuning, "WORKER_COMMAND", CRASHING_WORKER)
    pipeline = PassPipeline.parse_spec(
        {"collage-partition": lambda: CollagePartitionPass},
        f'collage-partition{{backends=tvm backend-options="tvm: tune=metaschedule trials=3 '
        f'db={db}"}}',
    )
    (pass_,) = pipeline.passes
    assert pass_.backend_map() == {"tvm": {"tune": "metaschedule", "trials": "3", "db": str(db)}}
    pipeline.apply(context(), parse_module())
    tvm_spec, _host = pass_.specs()
    assert tvm_spec.backend.tuning == TuningOptions("metaschedule", 3, str(db))
    compiled = tvm_spec.backend.compile(kernel())
    assert compiled.version.endswith("+loopnest+ms3")
    assert any("MetaSchedule crashed" in note for note in compiled.notes)


def test_crashing_tuner_falls_back_to_the_loop_nest_schedule(db, monkeypatch, capsys):
    monkeypatch.setattr(tuning, "WORKER_COMMAND", CRASHING_WORKER)
    tuned = {"tune": "metaschedule", "trials": 2, "db": str(db)}
    a, b, expected = inputs()
    first = compile_kernel("tvm", kernel(), options=tuned)
    np.testing.assert_allclose(first([a, b])[0], expected, rtol=1e-5, atol=1e-5)
    reason = "MetaSchedule crashed: signal 11 (SIGSEGV) in tvm::ffi::ToJSONGraph"
    assert first.notes == [f"tvm tune=metaschedule: {reason}; using the loop-nest schedule"]
    second = compile_kernel("tvm", kernel(), options=tuned)  # not tuned again, not reported again
    assert second.notes == first.notes
    assert capsys.readouterr().err.count(reason) == 1


def test_tuned_kernel_matches_and_is_reused_from_the_database(db, monkeypatch):
    options = {"tune": "metaschedule", "trials": 2, "db": str(db)}
    a, b, expected = inputs()
    tuned = compile_kernel("tvm", kernel(), options=options)
    np.testing.assert_allclose(tuned([a, b])[0], expected, rtol=1e-5, atol=1e-5)
    assert len(list(db.glob("*.json"))) == 1
    assert not any("MetaSchedule" in note for note in tuned.notes)
    monkeypatch.setattr(tuning, "WORKER_COMMAND", CRASHING_WORKER)  # a child would crash
    again = compile_kernel("tvm", kernel(), options=options)
    assert again.notes and all("tuning database" in n or "loop-nest schedule kept" in n
                               for n in again.notes)
    np.testing.assert_allclose(again([a, b])[0], expected, rtol=1e-5, atol=1e-5)


def test_recorded_trace_is_replayed(db):
    """A schedule trace stored as the task's record is what gets compiled."""
    target = host_target()
    with target:
        legalized = tvm.transform.Sequential(
            cpu_pipeline.library_dispatch_passes(target) + cpu_pipeline.legalize_passes(target)
        )(to_relax(kernel()))
    (func,) = [f for f in legalized.functions.values() if isinstance(f, tirx.PrimFunc)]
    sch = s_tir.Schedule(func)
    i, _j, k = sch.get_loops(sch.get_sblock("matmul"))
    sch.split(k, [4, None])
    sch.parallel(i)
    trace = tuning._plain(sch.trace.as_json())
    assert tvm_ffi.structural_equal(tuning.replay(func, trace), sch.mod["main"])
    options = TuningOptions("metaschedule", trials=2, db_dir=str(db))
    tuning._store_record(options.db_dir, tuning.task_key(func, target, options.trials),
                         {"trace": trace, "seconds": 1e-6, "loop_nest_seconds": 2e-6,
                          "samples": 1})
    tuned = {"tune": "metaschedule", "trials": options.trials, "db": options.db_dir}
    compiled = compile_kernel("tvm", kernel(), options=tuned)
    assert any("tuned 1.0 us (loop-nest 2.0 us, from the tuning database)" in n
               for n in compiled.notes)
    a, b, expected = inputs()
    np.testing.assert_allclose(compiled([a, b])[0], expected, rtol=1e-5, atol=1e-5)


def test_collage_command_options(db, monkeypatch, tmp_path, capsys):
    args = build_parser().parse_args(["compile", "m.onnx", "-o", "out", "--tvm-tune",
                                      "metaschedule", "--tvm-tune-trials", "4"])
    assert (args.tvm_tune, args.tvm_tune_trials, args.tvm_tune_db) == ("metaschedule", 4, None)
    assert build_parser().parse_args(["bench", "m.onnx"]).tvm_tune == "none"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "m.onnx", "--tvm-tune", "autotvm"])
    model = tmp_path / "k.mlir"
    model.write_text(KERNEL)
    monkeypatch.setattr(tuning, "WORKER_COMMAND", CRASHING_WORKER)
    status = main(["run", str(model), "--backends", "tvm", "--estimator", "mock",
                   "--tvm-tune", "metaschedule", "--tvm-tune-db", str(db)])
    assert status == 0
    assert "MetaSchedule crashed: signal 11 (SIGSEGV)" in capsys.readouterr().err


def test_a_partition_compiles_its_kernels_with_the_backend_options_it_was_made_with(
        db, monkeypatch, capsys):
    options = PartitionOptions(backends=("tvm",), estimator="mock",
                               backend_options=tuning_backend_options("metaschedule", 3, str(db)))
    partitioned = partition_module(parse_module(), options)
    assert partitioned.backend_options == {
        "tvm": {"tune": "metaschedule", "trials": "3", "db": str(db)}}
    monkeypatch.setattr(tuning, "WORKER_COMMAND", CRASHING_WORKER)
    a, b, expected = inputs()
    outputs = partitioned.executable(adapt=False).run([a, b])
    np.testing.assert_allclose(outputs[0], expected, rtol=1e-5, atol=1e-5)
    assert "MetaSchedule crashed: signal 11 (SIGSEGV)" in capsys.readouterr().err
