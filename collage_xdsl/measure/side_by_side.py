"""Configurations timed side by side: warm-up, slow configurations, then rounds of one block
of each configuration in a balanced order.

    timing = time_side_by_side(contenders, singles=("onnxruntime", "openvino"), rounds=30,
                               warmup=2, slow_factor=10, slow_rounds=3, sample_s=0.05,
                               min_s=60)
    timing.samples["collage"][r]    # steady seconds per call of its block in round r, or None
    timing.first["collage"][r]      # the block's first call, right after the others ran
    timing.failures                 # {"tvm": "crashed: signal 11 (SIGSEGV)"}

A contender is a configuration in a process of its own
(`collage_xdsl.runtime.configurations`) or a function in this one (`InProcess`). Its block in a round is one
sample (`collage_xdsl.measure.timing.take_sample`: a first call, then the mean of calls
enough to last `sample_s`), after which its process settles. Warm-up: `warmup` calls of
each; after the first, a configuration more than `slow_factor` times slower than the
fastest single backend is slow: no more warm-up, one call per sample and `slow_rounds`
rounds only, spread evenly. Rounds: at least `rounds`, more while they fit in `min_s`
seconds by the first round's time (at most `MAX_ROUNDS_FACTOR` x `rounds`), each in the
order of `balanced_order`. A contender that fails is dropped and its reason kept. Why:
`docs/measurement.md`, "The timing loop".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from collage_xdsl.errors import CollageError
from collage_xdsl.measure.timing import (
    Sample,
    balanced_order,
    calls_per_sample,
    take_sample,
    timed,
)

MAX_ROUNDS_FACTOR = 20
"""`min_s` adds at most this many times `rounds` rounds."""


class Failed(CollageError):
    """A contender that failed; the message is its one-line reason."""


def failure_reason(e: BaseException) -> str:
    """`Type: first line of the message` (a `Failed`'s message as it is), at most 300
    characters."""
    text = str(e).strip().splitlines()
    if isinstance(e, Failed) and text:
        reason = text[0]
    else:
        reason = f"{type(e).__name__}: {text[0]}" if text else type(e).__name__
    return reason if len(reason) <= 300 else reason[:297] + "..."


class Contender(Protocol):
    """A configuration to time: `call` runs it once, `sample` takes one block."""

    def call(self) -> float:
        """Seconds of one call."""
        ...

    def sample(self, calls: int) -> Sample:
        """One sample of `calls` calls after a first one."""
        ...


@dataclass
class InProcess:
    """A function timed in this process on fixed inputs (no settling: what it leaves
    running slows the next contender)."""

    run: Callable[[Sequence[np.ndarray]], object]
    inputs: Sequence[np.ndarray]

    def call(self) -> float:
        return timed(lambda: self.run(self.inputs))

    def sample(self, calls: int) -> Sample:
        return take_sample(lambda: self.run(self.inputs), calls)


@dataclass
class Timing:
    samples: dict[str, list[float | None]]
    """Per configuration, the steady-state seconds per call of each round (None where it
    was not timed)."""
    first: dict[str, list[float | None]]
    """Per configuration, the seconds of its first call of each round."""
    settle: dict[str, list[float | None]] = field(default_factory=dict)
    """Per configuration, the seconds its process took to go quiet after each block."""
    calls: dict[str, int] = field(default_factory=dict)
    """Per configuration, the timed calls of a sample."""
    slow: set[str] = field(default_factory=set)
    warmup_seconds: dict[str, float] = field(default_factory=dict)
    """The first warm-up call of each configuration."""
    failures: dict[str, str] = field(default_factory=dict)
    rounds: int = 0
    """Rounds timed."""


def slow_round_indices(rounds: int, slow_rounds: int) -> set[int]:
    """`slow_rounds` of range(rounds), spread evenly (all of them when there are fewer)."""
    if slow_rounds >= rounds:
        return set(range(rounds))
    return {i * rounds // slow_rounds for i in range(slow_rounds)}


def time_side_by_side(contenders: dict[str, Contender], singles: Sequence[str], rounds: int,
                      warmup: int, slow_factor: float, slow_rounds: int,
                      sample_s: float = 0.005, min_s: float = 0.0) -> Timing:
    """Warm up, classify slow configurations, then time at least `rounds` rounds of one
    block each, more while they fit in `min_s` seconds (see the module docstring)."""
    names = list(contenders)
    timing = Timing({n: [] for n in names}, {n: [] for n in names},
                    {n: [] for n in names})
    fastest: dict[str, float] = {}

    def fail(name: str, e: Exception) -> None:
        timing.failures[name] = failure_reason(e)
        names.remove(name)

    def call(name: str) -> float | None:
        try:
            seconds = contenders[name].call()
        except Exception as e:  # a backend crashing on one model must not end the run
            fail(name, e)
            return None
        fastest[name] = min(seconds, fastest.get(name, seconds))
        return seconds

    for w in range(warmup):
        for name in [n for n in names if n not in timing.slow]:
            seconds = call(name)
            if w == 0 and seconds is not None:
                timing.warmup_seconds[name] = seconds
        if w == 0:
            timed_singles = [timing.warmup_seconds[n] for n in singles if n in names]
            if timed_singles:
                timing.slow = {n for n in names
                               if timing.warmup_seconds[n] > slow_factor * min(timed_singles)}
    for name in [n for n in names if n not in timing.slow]:  # warm now: sizes the samples
        call(name)
    timing.calls = {n: 1 if n in timing.slow or n not in fastest
                    else calls_per_sample(sample_s, fastest[n]) for n in names}

    def block(name: str) -> None:
        try:
            sample = contenders[name].sample(timing.calls[name])
        except Exception as e:  # a backend crashing on one model must not end the run
            fail(name, e)
            return
        timing.first[name][-1], timing.samples[name][-1] = sample.first, sample.steady
        timing.settle[name][-1] = sample.settle

    timing.rounds, slow_indices, r = rounds, {0}, 0
    while r < timing.rounds:
        for column in (timing.samples, timing.first, timing.settle):
            for values in column.values():
                values.append(None)
        order = [n for n in names if n not in timing.slow or r in slow_indices]
        started, slow_s = time.perf_counter(), 0.0
        for name in balanced_order(order, r):
            if name in names:
                began = time.perf_counter()
                block(name)
                slow_s += time.perf_counter() - began if name in timing.slow else 0.0
        if r == 0:  # the first round, settling and messages included, sizes the run
            round_s = time.perf_counter() - started - slow_s
            if round_s > 0 and min_s > 0:
                timing.rounds = max(rounds, min(int(min_s / round_s),
                                                MAX_ROUNDS_FACTOR * rounds))
            slow_indices = slow_round_indices(timing.rounds, slow_rounds)
        r += 1
    return timing
