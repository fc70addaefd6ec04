"""The median's confidence interval (`collage_xdsl.measure.stats`)."""

from __future__ import annotations

from collage_xdsl.measure.stats import median_ci


def test_median_interval_is_the_order_statistics_around_the_middle():
    def ranks(n):
        ci = median_ci([float(v) for v in range(n)])
        return ci.low, ci.high

    # x(4)..x(12) of 15 (rank 1 first) covers the median with 96.5%, x(5)..x(11) 88%
    assert ranks(15) == (3.0, 11.0)
    assert ranks(100) == (39.0, 60.0)
    assert ranks(6) == (0.0, 5.0) and ranks(3) == (0.0, 2.0)  # too few: the whole range
