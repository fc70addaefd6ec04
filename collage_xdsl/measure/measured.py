"""The measured estimator: kernels compiled through their backend's codegen hook, warmed
up and timed in rounds until their statistic is stable (`collage_xdsl.measure.timing`).

    estimator = MeasuredCostEstimator(compile, min_span_s=1.0, evict=Evictor(2))
    estimator.measure_group(requests)       # compiled first, then timed in alternation

A compile or run failure is an Invalid cost that keeps its reason, never an exception.
Why the rounds alternate, span a second and record sequence costs: `docs/measurement.md`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Container, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import partial
from itertools import groupby
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from collage_xdsl.core.cost import Cost
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.estimator import (
    CostEstimator,
    KernelRequest,
    Measurement,
    invalid_measurement,
    measurement_batches,
    random_inputs,
)
from collage_xdsl.measure.timing import timed

MIN_SEQUENCE_SAMPLES = 3
"""Calls right after another kernel (and right after its own) a sequence cost needs."""
ALONE_ROUND_S = 0.02
"""A timing round of a kernel that does all the work lasts at least this long (with
``alone_span_s``): mostly calls right after its own, as when it runs as the plan."""
CompileHook = Callable[[ModuleOp, str], Callable[..., Any]]
"""``compile(kernel_module, backend) -> callable`` taking the kernel's inputs."""


def measurement(evict: bool, min_span_s: float) -> str:
    """How kernel costs are measured: after eviction or back to back
    (`collage_xdsl.measure.evict.needs_eviction`), over how long a span of time
    (`MeasuredCostEstimator`'s ``min_span_s``), and with sequence costs
    (`Measurement.sequence`). Part of a cost's key in the cost database, so that costs
    measured another way are measured again."""
    how = "L2 evicted before each run" if evict else "back to back (the run fits in L2)"
    if min_span_s > 0:
        how += f"; samples over {min_span_s:g} s"
    return f"{how}; with sequence costs"


def alone_measurement(alone_span_s: float) -> str:
    """How kernels that do all the work (`KernelRequest.alone`) are measured besides
    `measurement`: part of their costs' key in the cost database."""
    return (f"alone: in alternation with other whole-model kernels only, for {alone_span_s:g} s, "
            "calls right after its own, never after eviction")


class MeasuredCostEstimator(CostEstimator):
    """Times compiled kernels.

    Per kernel: build it, ``compile(module, backend)``, make inputs, run ``warmup`` times
    untimed, then time runs in rounds of ``round_runs``, each run right after ``evict()``
    when given. After each round the statistic (the ``percentile`` of all samples, the
    median by default) is compared with the previous round's: it stops once they differ by
    at most ``tolerance`` (relative) and its samples span ``min_span_s`` of wall time, or
    when ``max_runs`` samples or ``budget_s`` seconds of its own rounds are spent. The cost
    is the statistic; the spread is the interquartile range.

    With ``alone_span_s`` > 0 a kernel that does all the work (`KernelRequest.alone`:
    a whole-model plan) is timed as the plan runs: in rounds of at least `ALONE_ROUND_S`,
    until its samples span ``alone_span_s`` and its rounds took ``budget_s``, never after
    ``evict()``, its cost the statistic of the calls right after its own.

    Kernels are measured in batches (`measurement_batches`), compiled first and then timed
    round by round in alternation (`measure_group`), so that a kernel's rounds spread over
    the time the batch takes (`docs/measurement.md`, "Batches and alternation").
    """

    def __init__(
        self,
        compile: CompileHook,
        make_inputs: Callable[[ModuleOp], Sequence[np.ndarray]] = random_inputs,
        *,
        warmup: int = 2,
        round_runs: int = 5,
        max_runs: int = 200,
        budget_s: float = 1.0,
        tolerance: float = 0.02,
        percentile: float = 50.0,
        min_span_s: float = 0.0,
        alone_span_s: float = 0.0,
        batch_kernels: int = 1,
        batch_bytes: int = 1 << 30,
        clock: Callable[[], float] = time.perf_counter,
        evict: Callable[[], None] | None = None,
    ):
        super().__init__()
        if not 0 <= percentile <= 100:
            raise CollageError(f"measured estimator: percentile {percentile} not in [0, 100]")
        if round_runs < 1 or max_runs < round_runs:
            raise CollageError(
                f"measured estimator: need 1 <= round_runs ({round_runs}) <= max_runs ({max_runs})"
            )
        if min_span_s < 0 or alone_span_s < 0 or batch_kernels < 1 or batch_bytes < 0:
            raise CollageError(
                f"measured estimator: need min_span_s ({min_span_s}) >= 0, alone_span_s "
                f"({alone_span_s}) >= 0, batch_kernels ({batch_kernels}) >= 1 and "
                f"batch_bytes ({batch_bytes}) >= 0")
        self.compile = compile
        self.make_inputs = make_inputs
        self.warmup = warmup
        self.round_runs = round_runs
        self.max_runs = max_runs
        self.budget_s = budget_s
        self.tolerance = tolerance
        self.percentile = percentile
        self.min_span_s = min_span_s
        self.alone_span_s = alone_span_s
        self.batch_kernels = batch_kernels
        self.batch_bytes = batch_bytes
        self.clock = clock
        self.evict = evict

    def _measure(self, request: KernelRequest) -> Measurement:
        (measured,) = self.measure_group([request])
        return measured

    def _measure_many(self, requests: Sequence[KernelRequest]) -> Iterator[Measurement]:
        """One batch at a time (`measurement_batches`; `measurement_order` put each
        sub-graph's backends next to each other), timed in alternation (`measure_group`)."""
        for batch in measurement_batches(requests, self.batch_kernels, self.batch_bytes):
            yield from self.measure_group(batch)

    def measure_group(self, requests: Sequence[KernelRequest],
                      progress: Callable[[], None] = lambda: None) -> list[Measurement]:
        """Kernels measured together (a sub-graph's backends, or a batch of sub-graphs):
        each one built, compiled and warmed up, then all timed in alternating rounds (a
        round of the first, a round of the next, ...), each until its own statistic is
        stable over ``min_span_s``. ``progress()`` is called after each kernel is prepared
        and after each pass of rounds (a worker tells its parent it is not hung).

        A pass takes the kernels backend by backend, each backend's from one further on
        than the pass before, so a round's first call mostly comes right after a call of
        another kernel of the same backend, as in a run of several kernels, and its other
        calls right after its own. The difference of the two medians is the kernel's
        sequence cost (`Measurement.sequence`), an upper bound on what a plan pays for
        calling its kernels one after another (`docs/measurement.md`, "Sequence costs")."""
        results: dict[int, Measurement] = {}
        timing: dict[int, _Timing] = {}
        for i, request in enumerate(requests):
            ready = self._prepare(request)
            if isinstance(ready, Measurement):
                results[i] = ready
            else:
                timing[i] = ready
            progress()
        backend_of = {i: requests[i].backend for i in timing}
        groups = [list(g) for _, g in groupby(sorted(timing, key=backend_of.get),
                                              key=backend_of.get)]
        last: _Timing | None = None
        passes = 0
        while timing:
            for i in _pass_order(groups, timing, passes):
                t = timing[i]
                done = self._round(t, after=_After.OWN if last is t else
                                   _After.SAME_BACKEND if last is not None
                                   and last.backend == t.backend else _After.OTHER)
                last = t
                if done is not None:
                    results[i] = done
                    del timing[i]
            passes += 1
            progress()
        return [results[i] for i in range(len(requests))]

    def _prepare(self, request: KernelRequest) -> _Timing | Measurement:
        """The kernel compiled, its inputs made and its warm-up runs done, or why not."""
        where = f"kernel {request.key} on {request.backend}"
        try:
            module = request.build()
            kernel = self.compile(module, request.backend)
        except Exception as e:  # a backend toolchain failing is a result, not a crash
            return invalid_measurement(f"{where}: compile failed: {type(e).__name__}: {e}")
        try:
            inputs = list(self.make_inputs(module))
        except Exception as e:
            return invalid_measurement(f"{where}: could not make inputs: {type(e).__name__}: {e}")
        try:
            for _ in range(self.warmup):
                kernel(*inputs)
        except Exception as e:
            return invalid_measurement(
                f"{where}: run failed after 0 timed runs: {type(e).__name__}: {e}")
        return _Timing(where, request.backend, partial(kernel, *inputs),
                       alone=request.alone and self.alone_span_s > 0)

    def _round(self, t: _Timing, after: _After) -> Measurement | None:
        """Time one round of `t`'s kernel, its first call right after `after`; its
        measurement once it is done."""
        started = self.clock()
        if t.first is None:
            t.first = started
        try:
            run = 0
            evict = None if t.alone else self.evict
            while run < self.round_runs or t.alone and self.clock() - started < ALONE_ROUND_S:
                seconds = timed(t.call, self.clock, evict)
                t.samples.append(seconds)
                if run > 0 or after is _After.OWN:
                    t.after_own.append(seconds)
                elif after is _After.SAME_BACKEND:
                    t.after_other.append(seconds)
                run += 1
        except Exception as e:
            return invalid_measurement(f"{t.where}: run failed after {len(t.samples)} timed "
                                       f"runs: {type(e).__name__}: {e}")
        ended = self.clock()
        t.spent += ended - started
        if t.alone:
            if ended - t.first < self.alone_span_s or t.spent < self.budget_s:
                return None
            chosen = t.after_own if len(t.after_own) >= MIN_SEQUENCE_SAMPLES else t.samples
            stat = float(np.percentile(chosen, self.percentile))
        else:
            stat = float(np.percentile(t.samples, self.percentile))
            stable = (t.previous is not None and abs(stat - t.previous) <= self.tolerance * stat
                      and ended - t.first >= self.min_span_s)
            if not (stable or len(t.samples) + self.round_runs > self.max_runs
                    or t.spent >= self.budget_s):
                t.previous = stat
                return None
        q25, q75 = np.percentile(t.samples, [25, 75])
        sequence = (float(np.median(t.after_other) - np.median(t.after_own))
                    if min(len(t.after_other), len(t.after_own)) >= MIN_SEQUENCE_SAMPLES
                    else 0.0)
        return Measurement(Cost(max(stat, 0.0)), float(q75 - q25), len(t.samples),
                           sequence=sequence)


def _pass_order(groups: Sequence[Sequence[int]], live: Container[int], n: int) -> list[int]:
    """Pass `n` of `measure_group`: the `live` kernels of each group (a backend's) in turn,
    each group's from its `n`-th on (so the first of a group, which follows another
    backend's, changes from pass to pass)."""
    order: list[int] = []
    for group in groups:
        left = [i for i in group if i in live]
        if left:
            start = n % len(left)
            order += left[start:] + left[:start]
    return order


class _After(Enum):
    """What a timed call came right after."""

    OWN = "a call of the same kernel"
    SAME_BACKEND = "a call of another kernel of the same backend"
    OTHER = "a call on another backend, or nothing timed yet"


@dataclass
class _Timing:
    """A kernel being timed by `MeasuredCostEstimator.measure_group`."""

    where: str
    backend: str
    call: Callable[[], Any]
    """One call of the kernel on its inputs (a `partial`: no Python frame of ours)."""
    alone: bool = False
    """Timed as a plan's only kernel (`MeasuredCostEstimator`'s ``alone_span_s``)."""
    samples: list[float] = field(default_factory=list)
    after_own: list[float] = field(default_factory=list)
    """The samples of calls right after a call of the same kernel."""
    after_other: list[float] = field(default_factory=list)
    """The samples of calls right after a call of another kernel of the same backend."""
    previous: float | None = None
    """The statistic after the previous round."""
    first: float | None = None
    """When its first timed round started."""
    spent: float = 0.0
    """Seconds its rounds took so far (evictions included)."""
