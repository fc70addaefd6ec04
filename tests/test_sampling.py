"""The order plans timed side by side take their samples in (`collage_xdsl.sampling`)."""

from __future__ import annotations

from collections import Counter

import pytest

from collage_xdsl.sampling import balanced_order, side_by_side


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


def test_side_by_side_takes_one_sample_each_per_round_in_the_balanced_order():
    log: list[str] = []
    runs = {name: (lambda name: lambda: log.append(name))(name) for name in "ABC"}
    samples = side_by_side(runs, sample_s=0.0, rounds=6)
    assert {name: len(s) for name, s in samples.items()} == {"A": 6, "B": 6, "C": 6}
    assert all(s >= 0 for v in samples.values() for s in v)
    # one sizing call each, then per sample a first call and one timed call (sample_s 0)
    sized, timed = log[:3], log[3:]
    assert sized == list("ABC")
    assert timed[::2] == timed[1::2]
    assert timed[::2] == [n for r in range(6) for n in balanced_order(list("ABC"), r)]
