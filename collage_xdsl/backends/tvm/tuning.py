"""Schedule tuning for TVM kernels (`tune=metaschedule`), in a separate process.

    tvm.compile(mod, target, relax_pipeline=tuned_pipeline(target, options, notes))

Every TIR function Relax legalization and fusion produce is a task keyed by its structural
hash, the target and the TVM version. A task missing from the tuning database (a folder of
JSON records) is tuned in a child process (`python -m collage_xdsl.backends.tvm.tuning`):
a random search over MetaSchedule's design space, each sample checked against the
unscheduled function and timed, the loop-nest schedule competing too. MetaSchedule's own
driver crashes in the apache-tvm 0.27 wheel; whatever fails leaves the task to the
loop-nest schedule, with the reason in the kernel's notes (`docs/measurement.md`).
"""
from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import tvm
import tvm_ffi
from tvm import s_tir, tirx
from tvm.relax.backend.cpu_generic import pipeline as cpu_pipeline
from tvm.s_tir import dlight

from collage_xdsl.backends.tvm.options import TuningOptions
from collage_xdsl.backends.tvm.schedule import LoopNestSchedule
from collage_xdsl.ir.inputs import random_array

WORKER_COMMAND = [sys.executable, "-m", "collage_xdsl.backends.tvm.tuning"]
"""The tuning child: reads a JSON request on stdin, writes records into the database."""
WORKER_TIMEOUT_S = 600.0


# ---------------------------------------------------------------------------
# The tuning database: one JSON record per task
# ---------------------------------------------------------------------------


def task_key(func: tirx.PrimFunc, target: tvm.target.Target, trials: int) -> str:
    text = f"{tvm_ffi.structural_hash(func)}|{target}|{tvm.__version__}|{trials}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _record_path(db_dir: str, key: str) -> Path:
    return Path(db_dir) / f"{key}.json"


def load_record(db_dir: str, key: str) -> dict | None:
    try:
        return json.loads(_record_path(db_dir, key).read_text())
    except (OSError, ValueError):
        return None


def _store_record(db_dir: str, key: str, record: dict) -> None:
    path = _record_path(db_dir, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record))
    tmp.replace(path)


def _plain(obj):
    """A trace's JSON (TVM containers and immediates) as plain lists / strings / numbers."""
    if isinstance(obj, tirx.IntImm | tirx.FloatImm):
        return obj.value
    for kind in (bool, int, float, str):
        if isinstance(obj, kind):
            return kind(obj)
    return None if obj is None else [_plain(x) for x in obj]


# ---------------------------------------------------------------------------
# The child: random search over MetaSchedule's design space
# ---------------------------------------------------------------------------


def _random_args(func: tirx.PrimFunc, rng: np.random.Generator) -> list[np.ndarray]:
    from tvm.s_tir.meta_schedule.arg_info import ArgInfo

    return [random_array(rng, [int(d) for d in info.shape], np.dtype(str(info.dtype)))
            for info in ArgInfo.from_prim_func(func)]  # indices and flags: 0 or 1


def _run(func: tirx.PrimFunc, target, args: list[np.ndarray], repeats: int):
    """(outputs, median seconds) of ``func`` compiled for ``target`` on copies of ``args``."""
    func = func.with_attr("global_symbol", "main")  # fused functions have none
    library = tvm.compile(tvm.IRModule({"main": func}), target=target).mod
    dev = tvm.cpu()
    tensors = [tvm.runtime.tensor(a, dev) for a in args]
    library["main"](*tensors)
    timing = library.time_evaluator("main", dev, number=1, repeat=repeats)(*tensors)
    return [t.numpy() for t in tensors], float(timing.median)


def tune_task(func: tirx.PrimFunc, target: tvm.target.Target, trials: int) -> dict:
    """The best schedule of ``func``: ``{"trace": JSON or None (loop-nest), "seconds", ...}``."""
    import tvm.s_tir.meta_schedule as ms

    rng = np.random.default_rng(0)
    args = _random_args(func, rng)
    reference, _ = _run(func, target, [a.copy() for a in args], repeats=1)
    repeats = 20
    loop_nest = LoopNestSchedule().apply(func, target, False)
    base = loop_nest.mod["main"] if loop_nest is not None else func
    _, best_s = _run(base, target, [a.copy() for a in args], repeats)
    record = {"trace": None, "seconds": best_s, "loop_nest_seconds": best_s, "samples": 0}
    tune_target = tvm.target.Target({**json.loads(str(target)), "num-cores": os.cpu_count() or 1})
    postprocs = ms.Postproc.create("llvm")
    space = ms.space_generator.PostOrderApply(
        sch_rules="llvm", postprocs=postprocs, mutator_probs={})
    start, seed = time.perf_counter(), 0
    while record["samples"] < trials:
        seed += 1
        context = ms.TuneContext(mod=tvm.IRModule({"main": func}), target=tune_target,
                                 space_generator=space, task_name="main", num_threads=1,
                                 rand_state=seed)
        for sch in context.generate_design_space()[: trials - record["samples"]]:
            record["samples"] += 1
            if not all(p.apply(sch) for p in postprocs):
                continue
            trace = _plain(sch.trace.as_json())
            if not tvm_ffi.structural_equal(replay(func, trace), sch.mod["main"]):
                continue  # a trace the database could not reproduce
            outputs, seconds = _run(sch.mod["main"], target, [a.copy() for a in args], repeats)
            if not all(np.allclose(o, r, rtol=1e-4, atol=1e-5, equal_nan=True)
                       for o, r in zip(outputs, reference)):
                continue
            if seconds < record["seconds"]:
                record.update(trace=trace, seconds=seconds)
    record["tuning_seconds"] = time.perf_counter() - start
    return record


def replay(func: tirx.PrimFunc, trace: list) -> tirx.PrimFunc:
    """``func`` scheduled by a recorded trace."""
    sch = s_tir.Schedule(func)
    s_tir.schedule.Trace.apply_json_to_schedule(trace, sch)
    return sch.mod["main"]


def _worker_main() -> None:
    request = json.load(sys.stdin)
    target = tvm.target.Target(json.loads(request["target"]))
    for key, script in request["tasks"].items():
        func = tvm.script.from_source(script)
        _store_record(request["db_dir"], key, tune_task(func, target, request["trials"]))


# ---------------------------------------------------------------------------
# The parent: tune missing tasks in a child, replay recorded schedules
# ---------------------------------------------------------------------------

_REPORTED: list[str] = []
_FAILED: dict[str, str] = {}
"""Task key -> why tuning it failed in this process (not retried)."""


def _crash_reason(returncode: int, stderr: str) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "unknown signal"
        where = next((line.split(" in ", 1)[1].split("(")[0] for line in stderr.splitlines()
                      if " in tvm::" in line), None)
        return (f"MetaSchedule crashed: signal {-returncode} ({name})"
                + (f" in {where}" if where else ""))
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return f"MetaSchedule failed (exit {returncode}): {lines[-1] if lines else 'no message'}"


def _tune_in_child(tasks: dict[str, tirx.PrimFunc], target, options: TuningOptions) -> str | None:
    """Tune ``tasks`` in a child process; the failure reason, or None."""
    request = json.dumps({
        "target": str(target), "trials": options.trials, "db_dir": options.db_dir,
        "tasks": {key: func.script() for key, func in tasks.items()},
    })
    try:
        done = subprocess.run(WORKER_COMMAND, input=request, capture_output=True, text=True,
                              timeout=WORKER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"MetaSchedule timed out after {WORKER_TIMEOUT_S:.0f} s"
    if done.returncode != 0:
        return _crash_reason(done.returncode, done.stderr)
    return None


def _report(reason: str, notes: list[str]) -> None:
    notes.append(f"tvm tune=metaschedule: {reason}; using the loop-nest schedule")
    if not _REPORTED:
        _REPORTED.append(reason)
        print(f"collage: {notes[-1]}", file=sys.stderr)


def apply_tuned(mod: tvm.IRModule, target, options: TuningOptions, notes: list[str]
                ) -> tvm.IRModule:
    """``mod`` with every TIR function that has a tuned schedule replaced by it (tuning the
    missing ones first); notes say what was tuned, reused or why tuning failed."""
    funcs = {gv: f for gv, f in mod.functions.items() if isinstance(f, tirx.PrimFunc)}
    keys = {gv: task_key(f, target, options.trials) for gv, f in funcs.items()}
    missing = {keys[gv]: f for gv, f in funcs.items()
               if load_record(options.db_dir, keys[gv]) is None and keys[gv] not in _FAILED}
    if missing:
        reason = _tune_in_child(missing, target, options)
        for key in missing:
            if reason is None and load_record(options.db_dir, key) is None:
                _FAILED[key] = "MetaSchedule wrote no record"
            elif reason is not None:
                _FAILED[key] = reason
    for gv, func in funcs.items():
        record = load_record(options.db_dir, keys[gv])
        if record is None:
            _report(_FAILED[keys[gv]], notes)
            continue
        if record["trace"] is None:
            notes.append(f"{gv.name_hint}: loop-nest schedule kept (fastest of "
                         f"{record['samples']} samples)")
            continue
        mod[gv] = replay(func, record["trace"]).with_attr("tirx.is_scheduled", True)
        notes.append(f"{gv.name_hint}: tuned {record['seconds'] * 1e6:.1f} us "
                     f"(loop-nest {record['loop_nest_seconds'] * 1e6:.1f} us, "
                     f"{'new' if keys[gv] in missing else 'from the tuning database'})")
    return mod


def tuned_pipeline(target: tvm.target.Target, options: TuningOptions, notes: list[str]
                   ) -> tvm.transform.Pass:
    """`cpu_pipeline_with_schedule` with tuned schedules applied before the loop-nest one."""

    @tvm.transform.module_pass(opt_level=0, name="CollageTunedCpuPipeline")
    def pipeline(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        with target:
            mod = tvm.transform.Sequential(
                cpu_pipeline.library_dispatch_passes(target) + cpu_pipeline.legalize_passes(target)
            )(mod)
            mod = apply_tuned(mod, target, options, notes)
            return tvm.transform.Sequential(
                [dlight.ApplyDefaultSchedule(LoopNestSchedule())]
                + cpu_pipeline.dataflow_lower_passes(target)
                + cpu_pipeline.finalize_passes(target)
            )(mod)

    return pipeline


if __name__ == "__main__":
    _worker_main()
