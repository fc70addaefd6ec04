"""Interleaved timing of a model's configurations: warm-up, slow configurations, rounds.

    timing = time_interleaved(runs, inputs, singles=("onnxruntime", "openvino", "tvm"),
                              rounds=30, warmup=2, slow_factor=10, slow_rounds=3,
                              sample_s=0.005, min_s=60)
    timing.rounds                   # 30, or more where 30 rounds take less than 60 s
    timing.samples["collage"][r]    # steady-state seconds per call in round r, or None
    timing.first["collage"][r]      # its first call of round r, after the others ran

Warm-up: `warmup` calls of every configuration, interleaved. After the first warm-up
round, a configuration whose warm-up call took more than `slow_factor` times the fastest
single backend's is *slow*: it makes no more warm-up calls and is timed in only
`slow_rounds` rounds, spread evenly over the run (still interleaved, so each of its
samples has a same-round sample of every other configuration). Untuned TVM on big
convolutions (seconds per call on VGG-19) would otherwise dominate the run.

Rounds: at least `rounds`, and as many more as fit in `min_s` seconds by the warm-up calls
(the configurations that are not slow; at most `MAX_ROUNDS_FACTOR` x `rounds`). One
round's ratio of two configurations scatters widely here: the standard deviation of its
log was 0.05-0.28 over the rounds of bench25/cse7 (most 0.08-0.20), and 0.11-0.17 for one
plan timed as two configurations, with samples of 5 ms and 50 ms alike
(`benchmarks/experiments/order_bias.py` on the MLP and SqueezeNet): the machine's speed
wanders between the samples of a round, not within one. The median of 30 rounds then has a
standard error of 1-6% (1.25 sd / sqrt(rounds)), and a plan exactly as fast as the best
single backend comes out above 1.02x about one time in four at sd 0.15. Fast models get
many more rounds for little time (the MLP: about 0.35 s a round of seven configurations).

Round r takes one sample of every configuration timed in that round, in the order of row
r of a balanced Latin square (`collage_xdsl.measure.timing.balanced_order`): over a few rounds
each configuration runs first equally often and right after each other one equally often,
so what one leaves behind (busy worker threads, caches) does not always slow down the
same neighbour. Rotating one order (A B C, B C A, ...) kept every neighbour: with the
MNIST CNN, two configurations running the same ONNX Runtime kernel, one always after TVM
and one always after Collage's OpenVINO plan, measured 1.09x apart over 30 rounds. The
square's labels change from block to block, or the pairs across the rounds' boundaries,
which it does not balance, favour the same configurations all run long (1-2% between
equal ones). A sample is the configuration's steady-state latency, measured the way
refinement's comparisons (`collage_xdsl.refine.measured`) and the estimator's kernel timings
are: one call (timed separately as `first`: the latency right after the other
configurations ran, caches holding their weights), then the mean of `calls` calls, enough
to last `sample_s` (from the fastest of the warm-up calls and one more after them, so a
slow first call cannot make a sample one call; 1 for slow configurations). One call per
round alone measured a context instead of the model: the transformer encoder's 16-kernel
plan took 1.31 ms repeated and 1.61-1.89 ms right after four other configurations, ONNX
Runtime alone 1.39 and 1.47-1.60 ms, so the two swapped places. A configuration that
raises is dropped from the remaining rounds and reported in `failures`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from collage_xdsl.measure.timing import (
    balanced_order,
    calls_per_sample,
    take_sample,
    timed,
)

Run = Callable[[Sequence[np.ndarray]], list[np.ndarray]]


MAX_ROUNDS_FACTOR = 20
"""`min_s` adds at most this many times `rounds` rounds."""


@dataclass
class Timing:
    samples: dict[str, list[float | None]]
    """Per configuration, the steady-state seconds per call of each round (None where it
    was not timed)."""
    first: dict[str, list[float | None]]
    """Per configuration, the seconds of its first call of each round."""
    calls: dict[str, int] = field(default_factory=dict)
    """Per configuration, the timed calls of a sample."""
    slow: set[str] = field(default_factory=set)
    warmup_seconds: dict[str, float] = field(default_factory=dict)
    """The first warm-up call of each configuration."""
    failures: dict[str, str] = field(default_factory=dict)
    rounds: int = 0
    """Rounds timed."""


def failure_reason(e: BaseException) -> str:
    """`Type: first line of the message`, at most 300 characters."""
    text = str(e).strip().splitlines()
    reason = f"{type(e).__name__}: {text[0]}" if text else type(e).__name__
    return reason if len(reason) <= 300 else reason[:297] + "..."


def slow_round_indices(rounds: int, slow_rounds: int) -> set[int]:
    """`slow_rounds` of range(rounds), spread evenly (all of them when there are fewer)."""
    if slow_rounds >= rounds:
        return set(range(rounds))
    return {i * rounds // slow_rounds for i in range(slow_rounds)}


def time_interleaved(runs: dict[str, Run], inputs: Sequence[np.ndarray],
                     singles: Sequence[str], rounds: int, warmup: int,
                     slow_factor: float, slow_rounds: int, sample_s: float = 0.005,
                     min_s: float = 0.0) -> Timing:
    """Warm up, classify slow configurations, then time at least `rounds` interleaved
    rounds, more while they fit in `min_s` seconds."""
    names = list(runs)
    timing = Timing({}, {})
    fastest_call: dict[str, float] = {}

    def fail(name: str, e: Exception) -> None:
        timing.failures[name] = failure_reason(e)
        names.remove(name)

    def call(name: str) -> float | None:
        try:
            return timed(lambda: runs[name](inputs))
        except Exception as e:  # a backend crashing on one model must not end the run
            fail(name, e)
            return None

    for w in range(warmup):
        for name in [n for n in names if n not in timing.slow]:
            seconds = call(name)
            if w == 0 and seconds is not None:
                timing.warmup_seconds[name] = seconds
            if seconds is not None:
                fastest_call[name] = min(seconds, fastest_call.get(name, seconds))
        if w == 0:
            timed_singles = [timing.warmup_seconds[n] for n in singles if n in names]
            if timed_singles:
                fastest = min(timed_singles)
                timing.slow = {n for n in names
                               if timing.warmup_seconds[n] > slow_factor * fastest}
    for name in [n for n in names if n not in timing.slow]:  # warm now: sizes the samples
        seconds = call(name)
        if seconds is not None:
            fastest_call[name] = min(seconds, fastest_call[name])
    timing.calls = {n: 1 if n in timing.slow or n not in fastest_call
                    else calls_per_sample(sample_s, fastest_call[n])
                    for n in names}
    round_s = sum((1 + timing.calls[n]) * fastest_call[n] for n in names
                  if n not in timing.slow and n in fastest_call)
    if round_s > 0:
        rounds = max(rounds, min(int(min_s / round_s), MAX_ROUNDS_FACTOR * rounds))
    timing.rounds = rounds
    timing.samples = {name: [None] * rounds for name in runs}
    timing.first = {name: [None] * rounds for name in runs}
    slow_indices = slow_round_indices(rounds, slow_rounds)
    for r in range(rounds):
        order = [n for n in names if n not in timing.slow or r in slow_indices]
        for name in balanced_order(order, r):
            if name not in names:
                continue
            try:
                sample = take_sample(lambda: runs[name](inputs), timing.calls[name])
            except Exception as e:  # a backend crashing on one model must not end the run
                fail(name, e)
                continue
            timing.first[name][r], timing.samples[name][r] = sample.first, sample.steady
    return timing
