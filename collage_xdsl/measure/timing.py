"""The one timing loop: timed calls, samples of a steady state, and rounds that take one
sample of each configuration in a balanced order.

    outputs, started, seconds = clocked(lambda: plan(inputs))   # the call's own result
    seconds = timed(kernel_call, evict=evictor)          # one call, after an eviction
    times = repeat(call, 5, warm=1)                      # an untimed call, then 5 timed
    sample = take_sample(run, calls_per_sample(0.005, run_s))   # .first, .steady
    samples = interleave(["a", "b"], range(30), lambda name: sample_of(name))
    waited = settle()          # until this process's other threads have stopped using CPU

The kernel estimator, the additivity check, boundary calibration, plan scoring, the
run-time plan selector, profiles, `collage bench` and the benchmarks all time through
these. A sample is a first call (what the previous configuration left behind) and the
mean of the calls after it (the configuration itself); rounds follow `balanced_order`,
so each configuration runs first, and right after each other one, equally often. A
configuration in a process of its own settles after each sample (`settle`): library threads
left spinning would otherwise slow the next one. Why: `docs/measurement.md`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

T = TypeVar("T")

MAX_CALLS = 1000
"""The most calls of a sample (a sample of a microsecond-scale kernel stays short)."""

Clock = Callable[[], float]


def clocked(call: Callable[[], T], clock: Clock = time.perf_counter) -> tuple[T, float, float]:
    """What one call returns, the clock when it started, and its seconds."""
    started = clock()
    result = call()
    return result, started, clock() - started


def timed(call: Callable[[], object], clock: Clock = time.perf_counter,
          evict: Callable[[], None] | None = None) -> float:
    """Seconds of one call, right after `evict()` (untimed) when given."""
    if evict is not None:
        evict()
    started = clock()
    call()
    return clock() - started


def repeat(call: Callable[[], object], calls: int, *, warm: int = 0,
           evict: Callable[[], None] | None = None) -> list[float]:
    """`warm` untimed calls, then the seconds of each of `calls` calls (`timed`)."""
    for _ in range(warm):
        call()
    return [timed(call, evict=evict) for _ in range(calls)]


@dataclass(frozen=True)
class Sample:
    first: float
    """Seconds of the first call."""
    steady: float
    """Mean seconds per call of the calls after it."""
    settle: float = 0.0
    """Seconds the process then took to go quiet (`settle`), when it was asked to."""


def calls_per_sample(sample_s: float, call_s: float) -> int:
    """Calls of `call_s` seconds each that last at least `sample_s` (1 to MAX_CALLS)."""
    return max(1, min(MAX_CALLS, math.ceil(sample_s / max(call_s, 1e-9))))


def take_sample(call: Callable[[], object], calls: int) -> Sample:
    """One first call, then `calls` timed together."""
    first = timed(call)
    t1 = time.perf_counter()
    for _ in range(calls):
        call()
    return Sample(first, (time.perf_counter() - t1) / calls)


QUIET_S = 0.02
"""`settle` waits until the other threads have been quiet this long (`docs/measurement.md`,
"Configurations in processes of their own")."""
SETTLE_MAX_S = 1.0
"""`settle` waits at most this long."""
_IDLE_SHARE = 0.05
"""Threads that use less than this share of one CPU (timers, housekeeping) are quiet."""


def other_threads_cpu() -> float:
    """CPU seconds used so far by this process's threads other than the calling one."""
    return time.process_time() - time.thread_time()


def settle(quiet_s: float = QUIET_S, most_s: float = SETTLE_MAX_S,
           clock: Clock = time.perf_counter, cpu: Clock = other_threads_cpu) -> float:
    """Wait until this process's other threads (a library's workers still spinning after
    its call returned) have used no CPU for `quiet_s` seconds, or `most_s` have passed;
    the seconds waited."""
    started = quiet_since = clock()
    used = cpu()
    while True:
        time.sleep(0.001)
        now, now_used = clock(), cpu()
        if now_used - used > _IDLE_SHARE * (now - quiet_since) + 1e-4:
            quiet_since, used = now, now_used
        if now - quiet_since >= quiet_s or now - started >= most_s:
            return now - started


def square_rounds(n: int) -> int:
    """The rounds of one block of `balanced_order` over n items: n, 2n when n is odd."""
    return n if n % 2 == 0 else 2 * n


def balanced_order(items: Sequence[T], r: int, seed: int = 0) -> list[T]:
    """Round r's order of `items`: row r mod p of a Williams design, a Latin square in
    which, over a block of p = n rounds (2n when n is odd), each item runs first, and right
    after each other one, equally often; each block has its own seeded labelling of the
    items, so that the pairs across rounds' boundaries favour none either.

        balanced_order("ABCD", 0) == list("CADB")   # the first block's labelling: C A B D
    """
    n = len(items)
    if n == 0:
        return []
    block, row_r = divmod(r, square_rounds(n))
    labels = [items[i] for i in np.random.default_rng([seed, block]).permutation(n)]
    first = [0] + [(j + 1) // 2 if j % 2 else n - j // 2 for j in range(1, n)]
    row = [labels[(x + row_r) % n] for x in first]
    return row[::-1] if n % 2 and row_r >= n else row


def alternating(items: Sequence[T], r: int) -> list[T]:
    """Round r's order of `items`: as given on even rounds, reversed on odd ones."""
    return list(items) if r % 2 == 0 else list(items)[::-1]


def interleave(names: Sequence[str], rounds: Iterable[int], sample: Callable[[str], float],
               order: Callable[[Sequence[str], int], list[str]] = balanced_order
               ) -> dict[str, list[float]]:
    """For each round r, one `sample(name)` of every name, in `order(names, r)`."""
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in rounds:
        for name in order(names, r):
            samples[name].append(sample(name))
    return samples


def rounds_within(least: int, budget_s: float, most: int) -> Iterator[int]:
    """Round numbers: at least `least`, then more while `budget_s` seconds since the first
    have not passed, at most `most`."""
    started, r = time.perf_counter(), 0
    while r < least or (time.perf_counter() - started < budget_s and r < most):
        yield r
        r += 1
