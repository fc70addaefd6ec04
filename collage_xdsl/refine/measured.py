"""Whole-plan scoring: a challenger timed against the incumbent, side by side, in a worker
process, so that a crashing or hanging plan costs one rejected plan, never the compiler.

    scorer = MeasuredScorer(build, inputs, entry="main")  # build(plan) -> outlined module text
    comparison = scorer.compare(incumbent, challenger, deadline)

The worker runs each plan through the runtime, checks its outputs against the first plan
it loaded (an ill-conditioned softmax may differ by rounding: `explain`), then times both
in alternating rounds of steady-state samples until the median ratio's 95% interval is
within `precision` (`docs/refinement.md`, "Comparing plans"). Failures are comparisons:
a plan that does not build, compile, run or agree fails with the reason.
"""
from __future__ import annotations

import pickle
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np

from collage_xdsl.backends import BackendOptions
from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.backends.walk import flatten
from collage_xdsl.dialects import ir_context
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.stats import median_ci
from collage_xdsl.measure.timing import (
    alternating,
    calls_per_sample,
    clocked,
    interleave,
    take_sample,
)
from collage_xdsl.measure.workers import WorkerProcess, WorkerStartError, incoming
from collage_xdsl.refine.moves import Plan
from collage_xdsl.refine.scoring import Comparison, Scorer
from collage_xdsl.runtime.agreement import ATOL, RTOL
from collage_xdsl.runtime.executable import Executable, KernelCompiler


@dataclass(frozen=True)
class _Config:
    entry: str
    policy: ThreadPolicy
    inputs: list[np.ndarray]
    warmup: int
    rtol: float
    atol: float
    compile: KernelCompiler | None
    backend_options: BackendOptions | None


def _worker_main(conn: Connection, config: _Config) -> None:
    """Load and time plans as the parent asks until ``None`` or the pipe closes."""
    from xdsl.parser import Parser


    ctx = ir_context()
    plans: dict[int, Executable] = {}
    inputs = config.inputs
    reference: list | None = None
    for message in incoming(conn):
        command, *args = message
        try:
            if command == "load":
                ident, text, keep = args
                for old in [k for k in plans if k not in keep]:
                    del plans[old]
                exe = Executable(Parser(ctx, text).parse_module(), entry=config.entry,
                                         threads=config.policy, compile=config.compile,
                                         backend_options=config.backend_options)
                for _ in range(config.warmup):
                    exe.run(inputs)
                outputs, _, seconds = clocked(lambda: exe.run(inputs))
                if reference is None:
                    reference = outputs
                differ = _disagreements(outputs, reference, config.rtol, config.atol)
                plans[ident] = exe
                reply: tuple = ("ok", (seconds, differ))
            else:
                a, b, calls, rounds, first = args
                reply = ("ok", _interleave(plans[a], plans[b], inputs, calls, rounds, first))
        except Exception as e:  # a variant failing is its result, not the worker's end
            reply = ("error", str(e) if isinstance(e, CollageError) else
                     f"{type(e).__name__}: {e}")
        conn.send(reply)


def _disagreements(outputs: Sequence, reference: Sequence, rtol: float, atol: float
                   ) -> list[tuple[int, str]]:
    """(position, max difference) of each output whose values disagree with the
    reference's; an output of another shape is an error."""
    found = []
    for i, (got, want) in enumerate(zip(outputs, reference)):
        for g, w in zip(flatten([got]), flatten([want])):
            g, w = np.asarray(g), np.asarray(w)
            if g.shape != w.shape:
                raise CollageError(f"output {i} disagrees with the start plan's (shape "
                                   f"{g.shape} instead of {w.shape})")
            if not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
                found.append((i, f"max difference {np.max(np.abs(g.astype(float) - w)):.3g}"))
                break
    return found


def _interleave(a, b, inputs: list[np.ndarray], calls: int, rounds: int, first: int
                ) -> tuple[list[float], list[float]]:
    """Steady seconds per call of `a` and `b`, one sample each per round, alternating
    order (round `first` of the comparison first)."""
    plans = {"a": a, "b": b}
    samples = interleave(["a", "b"], range(first, first + rounds),
                         lambda name: take_sample(lambda: plans[name].run(inputs), calls).steady,
                         order=alternating)
    return samples["a"], samples["b"]


class _Failed(Exception):
    def __init__(self, reason: str, unfinished: bool = False):
        super().__init__(reason)
        self.reason, self.unfinished = reason, unfinished


class MeasuredScorer(Scorer):
    """Compares plans by timing them in a worker process (see the module docstring)."""

    def __init__(
        self,
        build: Callable[[Plan], str],
        inputs: Sequence[np.ndarray],
        entry: str = "main",
        *,
        rounds: int = 15,
        max_rounds: int | None = None,
        precision: float = 0.015,
        sample_s: float = 0.005,
        warmup: int = 3,
        threads: ThreadPolicy | int | None = None,
        compile: KernelCompiler | None = None,
        backend_options: BackendOptions | None = None,
        timeout_s: float = 120.0,
        rtol: float = RTOL,
        atol: float = ATOL,
        explain: Callable[[int], str | None] | None = None,
        start_timeout_s: float = 120.0,
    ):
        if rounds < 1:
            raise CollageError(f"collage-refine: rounds must be at least 1, got {rounds}")
        max_rounds = 4 * rounds if max_rounds is None else max_rounds
        if max_rounds < rounds:
            raise CollageError(f"collage-refine: max-rounds ({max_rounds}) must be at least "
                               f"rounds ({rounds})")
        if not timeout_s > 0:
            raise CollageError(f"collage-refine: timeout must be positive, got {timeout_s}")
        try:
            pickle.dumps(compile)
        except (pickle.PicklingError, AttributeError, TypeError) as e:
            raise CollageError(f"collage-refine: the compile hook {compile!r} cannot be sent "
                               f"to a worker process ({e}); use a module-level function"
                               ) from None
        self.build, self.explain = build, explain
        self.rounds, self.max_rounds, self.precision = rounds, max_rounds, precision
        self.sample_s = sample_s
        self.timeout_s = timeout_s
        self.start_timeout_s = start_timeout_s
        self._config = _Config(entry, ThreadPolicy.resolve(threads),
                               [np.asarray(x) for x in inputs], max(warmup, 1), rtol, atol,
                               compile, backend_options)
        self._worker: WorkerProcess | None = None
        self._loaded: dict[int, float] = {}
        """Plans the worker holds: id -> seconds of one run after the warm-up."""
        self._notes: dict[int, str] = {}
        """Why a plan's outputs that differ from the reference's still agree, by id."""
        self._ids: dict[frozenset, int] = {}
        self._first: int | None = None
        self.started = 0
        """Worker processes started so far (restarts included)."""

    def load(self, plan: Plan, deadline: float) -> Comparison:
        """Build, compile and run `plan` once in the worker (as an incumbent)."""
        try:
            seconds = self._load_incumbent(plan, deadline)
        except _Failed as e:
            return Comparison.failed(e.reason, incumbent=not e.unfinished,
                                     unfinished=e.unfinished)
        return Comparison(1.0, seconds, seconds)

    def timing_seconds(self, run_s: float) -> float:
        """Both plans timed in every round up to `max_rounds`, each sample an untimed run
        and at least `sample_s` of timed ones."""
        return 2 * self.max_rounds * (run_s + max(run_s, self.sample_s))

    def compare(self, incumbent: Plan, challenger: Plan, deadline: float) -> Comparison:
        a, b = self._id(incumbent), self._id(challenger)
        try:
            ta = self._load_incumbent(incumbent, deadline)
        except _Failed as e:
            return Comparison.failed(f"incumbent: {e.reason}", incumbent=not e.unfinished,
                                     unfinished=e.unfinished)
        assert self._first is not None
        try:
            tb = self._load(challenger, b, {self._first, a, b}, deadline)
            calls = calls_per_sample(self.sample_s, min(ta, tb))
            sa: list[float] = []
            sb: list[float] = []
            batch = self.rounds
            while batch:
                more_a, more_b = self._request(("time", a, b, calls, batch, len(sa)), deadline)
                sa, sb = sa + more_a, sb + more_b
                ci = median_ci([y / x for x, y in zip(sa, sb)])
                if ci.high - ci.low <= 2 * self.precision * ci.median:
                    break
                batch = min(max(1, len(sa) // 2), self.max_rounds - len(sa))
        except _Failed as e:
            return Comparison.failed(e.reason, unfinished=e.unfinished)
        return Comparison(ci.median, float(np.median(sa)), float(np.median(sb)),
                          ratio_high=ci.high, note=self._notes.get(b, ""))

    def _id(self, plan: Plan) -> int:
        return self._ids.setdefault(plan.key, len(self._ids))

    def _load_incumbent(self, plan: Plan, deadline: float) -> float:
        ident = self._id(plan)
        if self._first is None:
            self._first = ident
        return self._load(plan, ident, {self._first, ident}, deadline)

    def _load(self, plan: Plan, ident: int, keep: set[int], deadline: float) -> float:
        if ident not in self._loaded:
            try:
                text = self.build(plan)
            except CollageError as e:
                raise _Failed(f"could not build the plan: {e}") from None
            self._loaded = {k: v for k, v in self._loaded.items() if k in keep}
            seconds, differ = self._request(("load", ident, text, keep), deadline)
            self._notes[ident] = "; ".join(self._explained(differ))
            self._loaded[ident] = seconds
        return self._loaded[ident]

    def _explained(self, differ: list[tuple[int, str]]) -> list[str]:
        """The notes that explain every disagreement; `_Failed` when one is not."""
        notes = []
        for output, worst in differ:
            problem = f"output {output} disagrees with the start plan's ({worst})"
            try:
                note = self.explain(output) if self.explain is not None else None
            except CollageError as e:
                raise _Failed(f"{problem}; whether by rounding is unknown: {e}") from None
            if note is None:
                raise _Failed(problem)
            notes.append(note)
        return notes

    def _request(self, message: tuple, deadline: float) -> Any:
        """The worker's answer to `message`; `_Failed` when it fails, dies or runs out of
        time (then the worker is killed)."""
        if self._worker is None:
            try:
                self._worker = WorkerProcess(
                    _worker_main, (self._config,), name="collage-refine",
                    what="refinement worker", start_timeout_s=self.start_timeout_s,
                    threads=self._config.policy.threads)
            except WorkerStartError as e:
                raise _Failed(str(e)) from None
            self.started += 1
        worker = self._worker
        worker.send(message)
        limit = min(deadline, time.monotonic() + self.timeout_s)
        ready = wait([worker.conn, worker.process.sentinel], max(0.0, limit - time.monotonic()))
        reply = worker.receive() if worker.conn in ready else None
        if reply is not None:
            status, value = reply
            if status == "error":
                raise _Failed(value)
            return value
        self._kill()
        if ready:
            raise _Failed(f"worker crashed: {worker.exit_reason()}")
        if limit >= deadline:
            raise _Failed("the budget ran out", unfinished=True)
        raise _Failed(f"timed out after {self.timeout_s:g} s")

    def _kill(self) -> None:
        if self._worker is not None:
            self._worker.kill()
            self._worker = None
        self._loaded = {}

    def close(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
        self._loaded = {}
