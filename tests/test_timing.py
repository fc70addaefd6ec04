"""The order plans timed side by side take their samples in (`collage_xdsl.measure.timing`)."""

from __future__ import annotations

from collections import Counter

import pytest

from collage_xdsl.measure.timing import balanced_order


@pytest.mark.parametrize("n", range(1, 11))
def test_the_round_order_is_balanced(n):
    # over each block every configuration runs first, and right after each other one,
    # equally often: what one leaves behind does not always slow down the same neighbour
    period = n if n % 2 == 0 else 2 * n
    for block in range(3):
        rows = [balanced_order(range(n), block * period + r) for r in range(period)]
        assert all(sorted(row) == list(range(n)) for row in rows)
        assert set(Counter(row[0] for row in rows).values()) == {period // n}
        follows = Counter(pair for row in rows for pair in zip(row, row[1:]))
        assert len(follows) == n * (n - 1) and len(set(follows.values())) <= 1
    assert balanced_order("ABCD", 0) == list("CADB") and balanced_order([], 3) == []
    assert balanced_order("ABCD", 0, seed=1) != balanced_order("ABCD", 0)


def test_the_pairs_across_round_boundaries_fall_on_no_pair_systematically():
    # one labelling throughout repeats the same boundary pairs block after block (with 4
    # items, 4 of the 12 ordered pairs came twice as often as the others); a
    # labelling per block spreads them (and now and then has an item follow itself)
    n, rounds = 4, 400
    sequence = [x for r in range(rounds) for x in balanced_order(range(n), r)]
    follows = Counter((a, b) for a, b in zip(sequence, sequence[1:]) if a != b)
    fixed = [x for r in range(rounds) for x in balanced_order(range(n), r % n)]
    follows_fixed = Counter(zip(fixed, fixed[1:]))
    assert max(follows_fixed.values()) / min(follows_fixed.values()) == 2
    assert len(follows) == n * (n - 1)
    assert max(follows.values()) / min(follows.values()) < 1.15
