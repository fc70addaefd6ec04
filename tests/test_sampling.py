"""The order plans timed side by side take their samples in (`collage_xdsl.sampling`)."""

from __future__ import annotations

from collections import Counter

import pytest

from collage_xdsl.sampling import balanced_order


@pytest.mark.parametrize("n", range(1, 11))
def test_the_round_order_is_balanced(n):
    # over a period every configuration runs first, and right after each other one,
    # equally often: what one leaves behind does not always slow down the same neighbour
    period = n if n % 2 == 0 else 2 * n
    rows = [balanced_order(range(n), r) for r in range(period)]
    assert all(sorted(row) == list(range(n)) for row in rows)
    assert set(Counter(row[0] for row in rows).values()) == {period // n}
    follows = Counter(pair for row in rows for pair in zip(row, row[1:]))
    assert len(follows) == n * (n - 1) and len(set(follows.values())) <= 1
    assert balanced_order(range(n), period) == rows[0]
    assert balanced_order("ABCD", 1) == list("BCAD")
