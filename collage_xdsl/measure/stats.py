"""The median of timing samples with its distribution-free 95% confidence interval, for
`collage_xdsl.refine.measured` (collage-refine), `collage bench` and the benchmarks
(`benchmarks/bench_stats.py`).

    ratios = per_round_ratios(samples["collage"], samples["onnxruntime"])
    ci = median_ci(ratios)        # MedianCI(median=0.93, low=0.90, high=0.95, coverage=0.98, n=30)

The interval is the order-statistic (binomial) interval: for n sorted samples
x(1) <= ... <= x(n), [x(k), x(n+1-k)] covers the population median with probability
1 - 2 P(B <= k-1), B ~ Binomial(n, 1/2), and k is the largest with coverage >= 95%. It
assumes nothing about the distribution and needs no resampling, so it is deterministic.
Below 6 samples no k reaches 95%: the interval is then [min, max] and ``coverage`` says
what it achieves (1 - 2^(1-n)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from collage_xdsl.errors import CollageError

LEVEL = 0.95


@dataclass(frozen=True)
class MedianCI:
    """A sample median with its order-statistic confidence interval."""

    median: float
    low: float
    high: float
    coverage: float
    """The probability that [low, high] covers the population median."""
    n: int


def median(samples: Sequence[float]) -> float:
    if not samples:
        raise CollageError("median of no samples")
    s = sorted(samples)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def _binomial_cdf(k: int, n: int) -> float:
    """P(B <= k) for B ~ Binomial(n, 1/2)."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2**n


def median_ci(samples: Sequence[float], level: float = LEVEL) -> MedianCI:
    """The median of ``samples`` and its order-statistic interval (module docstring)."""
    s = sorted(samples)
    n = len(s)
    if n == 0:
        raise CollageError("confidence interval of no samples")
    k = 1
    while k < (n + 1) // 2 and 1 - 2 * _binomial_cdf(k, n) >= level:
        k += 1
    return MedianCI(median(s), s[k - 1], s[n - k], 1 - 2 * _binomial_cdf(k - 1, n), n)


def per_round_ratios(config: Sequence[float | None], best: Sequence[float | None]
                     ) -> list[float]:
    """``config[r] / best[r]`` for every round r in which both were timed (None: not)."""
    if len(config) != len(best):
        raise CollageError(f"per-round ratios: {len(config)} rounds against {len(best)}")
    return [c / b for c, b in zip(config, best) if c is not None and b is not None]
