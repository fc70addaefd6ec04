"""Cost of a candidate kernel: estimated latency in seconds.

Collage only needs costs to be additive and totally ordered. Two special values:

* **Unknown** (NaN inside): the estimator could not say; some other heuristic has to
  decide. Unknown is never less than a known cost.
* **Invalid** (+inf inside): the backend could not compile or run the kernel. It keeps
  the reason, for error messages and the explain report.

The total order is ``known costs (by value) < Unknown < Invalid``; all Unknown costs
are equal to each other, and so are all Invalid ones (whatever their reasons).
Addition: Invalid absorbs everything, otherwise Unknown absorbs known costs, and two
known costs add their seconds. Both are monotone (adding a cost never makes a sum
smaller in the order), which is what the Dijkstra search relies on.
"""

from __future__ import annotations

import math


class Cost:
    """A non-negative latency in seconds, or Unknown, or Invalid (with a reason)."""

    __slots__ = ("seconds", "reason")

    seconds: float
    reason: str

    def __init__(self, seconds: float, reason: str = ""):
        seconds = float(seconds)
        if seconds < 0:
            raise ValueError(f"a cost cannot be negative: {seconds}")
        self.seconds = seconds
        self.reason = reason if seconds == math.inf else ""

    @staticmethod
    def zero() -> Cost:
        return Cost(0.0)

    @staticmethod
    def unknown() -> Cost:
        return Cost(math.nan)

    @staticmethod
    def invalid(reason: str = "") -> Cost:
        return Cost(math.inf, reason)

    @property
    def is_unknown(self) -> bool:
        return math.isnan(self.seconds)

    @property
    def is_invalid(self) -> bool:
        return self.seconds == math.inf

    @property
    def is_known(self) -> bool:
        return math.isfinite(self.seconds)

    def sort_key(self) -> tuple[int, float]:
        """Key realising the total order: (0, seconds) < (1, 0) Unknown < (2, 0) Invalid."""
        if self.is_invalid:
            return (2, 0.0)
        if self.is_unknown:
            return (1, 0.0)
        return (0, self.seconds)

    def __add__(self, other: Cost) -> Cost:
        if not isinstance(other, Cost):
            return NotImplemented
        if self.is_invalid:
            return self
        if other.is_invalid:
            return other
        return Cost(self.seconds + other.seconds)  # NaN + x is NaN: Unknown absorbs

    def __radd__(self, other: object) -> Cost:
        # lets ``sum(costs, Cost.zero())`` and plain ``sum(costs)`` (start 0) work
        if other == 0:
            return self
        return NotImplemented

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Cost):
            return NotImplemented
        return self.sort_key() == other.sort_key()

    def __hash__(self) -> int:
        return hash(self.sort_key())

    def __lt__(self, other: Cost) -> bool:
        if not isinstance(other, Cost):
            return NotImplemented
        return self.sort_key() < other.sort_key()

    def __le__(self, other: Cost) -> bool:
        if not isinstance(other, Cost):
            return NotImplemented
        return self.sort_key() <= other.sort_key()

    def __gt__(self, other: Cost) -> bool:
        if not isinstance(other, Cost):
            return NotImplemented
        return self.sort_key() > other.sort_key()

    def __ge__(self, other: Cost) -> bool:
        if not isinstance(other, Cost):
            return NotImplemented
        return self.sort_key() >= other.sort_key()

    def __str__(self) -> str:
        if self.is_invalid:
            return f"Invalid({self.reason})" if self.reason else "Invalid"
        if self.is_unknown:
            return "Unknown"
        s = self.seconds
        if s == 0:
            return "0s"
        for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
            if s >= scale:
                return f"{s / scale:.4g}{unit}"
        return f"{s / 1e-9:.4g}ns"

    def __repr__(self) -> str:
        if self.is_invalid:
            return f"Cost.invalid({self.reason!r})"
        if self.is_unknown:
            return "Cost.unknown()"
        return f"Cost({self.seconds!r})"
