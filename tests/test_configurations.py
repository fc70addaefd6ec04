"""Configurations in processes of their own (`collage_xdsl.runtime.configurations`): each
in a process apart from the others and the parent, built with the policy its users run
it with, timed in blocks that alternate between the processes in a balanced order, each
process quiet before the next block; a configuration that fails to build, raises or
crashes fails alone with a one-line reason."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import StringAttr

from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.core.outline import kernel_functions
from collage_xdsl.measure.side_by_side import time_side_by_side
from collage_xdsl.measure.stats import per_round_ratios
from collage_xdsl.measure.timing import QUIET_S, balanced_order
from collage_xdsl.planner.pipeline import assign_module
from collage_xdsl.runtime.configurations import (
    Built,
    Configurations,
    OnnxFile,
    Plan,
)
from collage_xdsl.tools.model import load_model, random_inputs

THREADS = 2


@dataclass(frozen=True)
class Logged:
    """A configuration whose every call appends `name pid` to `log`, then sleeps; it
    crashes (SIGSEGV) at its call number `crash_at` or fails to build with `broken`."""

    name: str
    log: str
    seconds: float = 0.001
    crash_at: int = 0
    broken: bool = False

    def build(self, threads: int, policy: ThreadPolicy | None = None) -> Built:
        if self.broken:
            raise RuntimeError("no such library\nsecond line")
        calls = []

        def run(inputs):
            calls.append(1)
            if len(calls) == self.crash_at:
                os.kill(os.getpid(), signal.SIGSEGV)
            with open(self.log, "a") as f:
                f.write(f"{self.name} {os.getpid()}\n")
            time.sleep(self.seconds)
            return [np.asarray(inputs[0]) + 1]

        return Built(run, policy or ThreadPolicy(threads))


def _blocks(log: Path) -> list[tuple[str, set[str]]]:
    """The log's runs of calls by one configuration: (name, the pids that made them)."""
    blocks: list[tuple[str, set[str]]] = []
    for line in log.read_text().splitlines():
        name, pid = line.split()
        if blocks and blocks[-1][0] == name:
            blocks[-1][1].add(pid)
        else:
            blocks.append((name, {pid}))
    return blocks


def test_each_configuration_runs_in_a_process_of_its_own(tmp_path):
    log = tmp_path / "calls.log"
    x = [np.zeros(2, np.float32)]
    with Configurations(x, THREADS) as configs:
        for name in ("a", "b", "c"):
            assert configs.start(name, Logged(name, str(log)))
        pids = [p.pid for p in configs.running.values()]
        assert len(set(pids)) == 3 and os.getpid() not in pids
        np.testing.assert_array_equal(configs.running["b"].outputs()[0], x[0] + 1)
        timing = time_side_by_side(configs.running, ["a"], rounds=3, warmup=1,
                                   slow_factor=1e9, slow_rounds=1, sample_s=0.0)
        processes = [p.worker.process for p in configs.running.values()]
    assert not any(p.is_alive() for p in processes)  # stopped on exit
    # calls by the process of their configuration only: b's outputs, warm-up (a call
    # each), sizing (one more), then a block of each configuration a round in the
    # balanced order, a first call and one timed call
    blocks = _blocks(log)
    assert all(pid == {str(configs.running[name].pid)} for name, pid in blocks)
    calls = ["b", *"abc", *"abc", *(name for r in range(3)
                                    for name in balanced_order(["a", "b", "c"], r)
                                    for _ in range(2))]
    assert [name for name, _ in blocks] == _runs(calls)
    ratios = per_round_ratios(timing.samples["b"], timing.samples["a"])
    assert len(ratios) == 3 and all(r > 0 for r in ratios)
    assert all(s >= QUIET_S for s in timing.settle["c"])  # each block ends quiet


def _runs(names: list[str]) -> list[str]:
    """`names` with equal neighbours merged, as `_blocks` reads them."""
    return [n for i, n in enumerate(names) if i == 0 or names[i - 1] != n]


def test_a_configuration_that_fails_or_crashes_fails_alone(tmp_path):
    log = str(tmp_path / "calls.log")
    with Configurations([np.zeros(2, np.float32)], THREADS) as configs:
        assert not configs.start("broken", Logged("broken", log, broken=True))
        for name, crash_at in (("ok", 0), ("crashes", 5), ("other", 0)):
            assert configs.start(name, Logged(name, log, crash_at=crash_at))
        timing = time_side_by_side(configs.running, ["ok"], rounds=4, warmup=1,
                                   slow_factor=1e9, slow_rounds=1, sample_s=0.0)
    assert configs.failures == {"broken": "RuntimeError: no such library"}
    assert multiprocessing.active_children() == []  # no process left behind
    assert timing.failures == {"crashes": "crashed: signal 11 (SIGSEGV)"}
    assert all(s is not None for s in timing.samples["ok"] + timing.samples["other"])
    assert len(timing.samples["crashes"]) == 4


@pytest.fixture(scope="module")
def mlp(example_file):
    model = load_model(example_file("mlp"))
    return model, random_inputs(model, 0)


def mixed_plan(module):
    """One kernel per op, onnxruntime and openvino by turns."""
    from collage_xdsl.passes.assign import CollageAssignPass
    from collage_xdsl.passes.outline import CollageOutlinePass

    module = module.clone()
    CollageAssignPass(backend="onnxruntime", fusion="none").apply(Context(), module)
    CollageOutlinePass().apply(Context(), module)
    for i, func in enumerate(kernel_functions(module)):
        func.attributes["collage.backend"] = StringAttr(("onnxruntime", "openvino")[i % 2])
    return module


def test_libraries_alone_run_with_their_defaults_and_mixed_plans_share(mlp):
    """ONNX Runtime alone spins on after a run, as its users run it; a plan of ONNX Runtime
    alone does the same; a plan that mixes libraries stops spinning when a run returns.
    All agree on the outputs."""
    model, inputs = mlp
    alone = ThreadPolicy.library_defaults(THREADS)
    specs = {"onnxruntime": OnnxFile("onnxruntime", str(model.onnx_path),
                                     tuple(model.input_names)),
             "collage-ort": Plan.of(assign_module(model.module, "onnxruntime", "whole")),
             "collage-mixed": Plan.of(mixed_plan(model.module))}
    with Configurations(inputs, THREADS) as configs:
        for name, spec in specs.items():
            assert configs.start(name, spec), configs.failures
        policies = {name: p.policy for name, p in configs.running.items()}
        outputs = {name: p.outputs() for name, p in configs.running.items()}
    assert policies["onnxruntime"] == alone and alone.spinning == "on"
    assert policies["collage-ort"] == alone
    assert policies["collage-mixed"] == ThreadPolicy(THREADS, "run")
    for got in outputs.values():
        np.testing.assert_allclose(got[0], outputs["onnxruntime"][0], rtol=1e-4, atol=1e-5)


def _cpu_seconds(pid: int) -> float:
    """CPU seconds all threads of process `pid` have used (their scheduler statistics)."""
    tasks = Path(f"/proc/{pid}/task")
    return sum(int((t / "schedstat").read_text().split()[0]) for t in tasks.iterdir()) / 1e9


def test_a_spinning_onnxruntime_process_is_quiet_after_its_block(mlp):
    """ONNX Runtime's own defaults leave its threads spinning after a run; the block's
    answer comes once they stopped, so the next process's block starts on idle cores."""
    model, inputs = mlp
    spec = OnnxFile("onnxruntime", str(model.onnx_path), tuple(model.input_names))
    with Configurations(inputs, THREADS) as configs:
        assert configs.start("onnxruntime", spec), configs.failures
        process = configs.running["onnxruntime"]
        for _ in range(3):
            sample = process.sample(200)
            before = _cpu_seconds(process.pid)
            time.sleep(0.05)
            assert _cpu_seconds(process.pid) - before < 0.002
            assert sample.settle >= QUIET_S
