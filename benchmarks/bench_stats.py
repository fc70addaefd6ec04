"""Statistics of interleaved benchmark rounds: per-round ratios, the median with a
distribution-free confidence interval, and the geometric mean over models.

    ratios = per_round_ratios(samples["collage"], samples["onnxruntime"])
    ci = median_ci(ratios)        # MedianCI(median=0.93, low=0.90, high=0.95, coverage=0.98, n=30)
    geomean([0.9, 1.1])

Samples are aligned by round: ``samples[r]`` is the seconds of round r, or None where the
configuration was not timed in that round (slow configurations take part in a few rounds
only). A per-round ratio divides two blocks of the same round, so a slow phase of the
machine scales numerator and denominator alike.

The per-round ratios, the median and its 95% order-statistic interval (``per_round_ratios``,
``median``, ``median_ci``, ``MedianCI``) are `collage_xdsl.measure.stats`'s, re-exported
here: `collage bench` and collage-refine's timings use the same.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from collage_xdsl.errors import CollageError
from collage_xdsl.measure.stats import LEVEL, MedianCI, median, median_ci, per_round_ratios

__all__ = ["LEVEL", "MedianCI", "geomean", "median", "median_ci", "per_round_ratios"]


def geomean(values: Sequence[float]) -> float:
    """The geometric mean of positive values."""
    if not values or any(v <= 0 for v in values):
        raise CollageError(f"geometric mean needs positive values, got {list(values)}")
    return math.exp(sum(math.log(v) for v in values) / len(values))
