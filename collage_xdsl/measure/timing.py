"""One latency sample of a model run: the steady state after a first call.

    calls = calls_per_sample(0.005, fastest_call_s)   # enough calls to last 5 ms
    sample = take_sample(lambda: exe.run(inputs), calls)
    sample.first    # seconds of the first call, right after whatever ran before
    sample.steady   # mean seconds of the `calls` calls after it

Refinement's comparisons (`collage_xdsl.refine.measured`), `collage bench` and the benchmark
suite all time plans this way, as the measured estimator times kernels (warm-up, then
repeated calls): the first call pays for what the previous plan left in the caches, the
calls after it show the plan itself. One call per sample measured a context instead of
the model: on the transformer encoder, a 16-kernel plan took 1.31 ms repeated and
1.61-1.89 ms right after four other configurations ran, ONNX Runtime alone 1.39 and
1.47-1.60 ms, so the two swapped places.

Plans timed side by side take one sample each per round, in the order `balanced_order`
gives round r: each runs first, and right after each other one, equally often.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

T = TypeVar("T")

MAX_CALLS = 1000
"""The most calls of a sample (a sample of a microsecond-scale kernel stays short)."""


@dataclass(frozen=True)
class Sample:
    first: float
    """Seconds of the first call."""
    steady: float
    """Mean seconds per call of the calls after it."""


def calls_per_sample(sample_s: float, call_s: float) -> int:
    """Calls of `call_s` seconds each that last at least `sample_s` (1 to MAX_CALLS)."""
    return max(1, min(MAX_CALLS, math.ceil(sample_s / max(call_s, 1e-9))))


def take_sample(call: Callable[[], object], calls: int) -> Sample:
    """One first call, then `calls` timed together."""
    t0 = time.perf_counter()
    call()
    t1 = time.perf_counter()
    for _ in range(calls):
        call()
    return Sample(t1 - t0, (time.perf_counter() - t1) / calls)


def square_rounds(n: int) -> int:
    """The rounds of one block of `balanced_order` over n items: n, 2n when n is odd."""
    return n if n % 2 == 0 else 2 * n


def balanced_order(items: Sequence[T], r: int, seed: int = 0) -> list[T]:
    """Round r's order of `items`: row r mod p of a Williams design, a Latin square in
    which, over a block of p = n rounds (2n when n is odd), each item runs first, and right
    after each other one, equally often; each block has its own (seeded) labelling of the
    items.

    Rounds run back to back, so a round's first item also follows the previous round's
    last, a pair the square does not balance: with one labelling throughout, those pairs
    repeat block after block (with 4 items, item x follows x+1 at every boundary), and
    some items followed some others twice as often as the rest. Three configurations
    running one function, among two others, then measured 0.982-1.006 of each other,
    one pair 0.982-0.985 in each of four runs (medians of per-round ratios, 1800-2300
    rounds of 1 ms samples, the MLP's TVM plan); with a labelling per block, 0.994-1.002
    (`python scripts/order_bias.py mlp.onnx --runs 4`).

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
