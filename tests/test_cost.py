"""The cost of a kernel (`collage_xdsl.core.cost.Cost`): its order (known < unknown <
invalid), addition, printing and validation."""

from __future__ import annotations

import math

import pytest

from collage_xdsl.core.cost import Cost


def test_order_known_lt_unknown_lt_invalid():
    costs = [Cost.invalid("x"), Cost(3.0), Cost.unknown(), Cost.zero(), Cost(1e-6)]
    assert [str(c) for c in sorted(costs)] == ["0s", "1us", "3s", "Unknown", "Invalid(x)"]
    assert not Cost.unknown() < Cost(1e9)
    assert Cost(1e9) < Cost.unknown() < Cost.invalid()
    assert Cost.unknown() == Cost.unknown()
    assert Cost.invalid("a") == Cost.invalid("b")
    assert Cost(2.0) >= Cost(2.0) and Cost(2.0) <= Cost(2.0) and Cost(2.0) > Cost(1.0)
    assert len({Cost.unknown(), Cost.unknown(), Cost(1.0), Cost(1.0)}) == 2


def test_addition():
    assert Cost(1.5) + Cost(2.0) == Cost(3.5)
    assert (Cost(1.0) + Cost.unknown()).is_unknown
    assert (Cost.unknown() + Cost(1.0)).is_unknown
    bad = Cost.invalid("compile failed")
    assert (Cost(1.0) + bad).reason == "compile failed"
    assert (Cost.unknown() + bad).is_invalid
    assert (bad + Cost.unknown()).is_invalid
    assert sum([Cost(1.0), Cost(2.0)]) == Cost(3.0)
    assert sum([Cost(1.0)], Cost.zero()) == Cost(1.0)


def test_addition_is_monotone():
    values = [Cost.zero(), Cost(1.0), Cost(5.0), Cost.unknown(), Cost.invalid()]
    for a in values:
        for b in values:
            assert a + b >= a and a + b >= b


def test_printing_and_validation():
    assert str(Cost(0.0025)) == "2.5ms"
    assert str(Cost(3e-9)) == "3ns"
    assert repr(Cost.invalid("r")) == "Cost.invalid('r')"
    assert repr(Cost(2.0)) == "Cost(2.0)"
    assert Cost(1.0).reason == ""
    with pytest.raises(ValueError, match="negative"):
        Cost(-1.0)
    assert Cost.unknown().is_unknown and not Cost.unknown().is_known
    assert math.isinf(Cost.invalid().seconds)
