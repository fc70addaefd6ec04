"""IndexSet: a set of dataflow-node indices held in a plain Python ``int`` used as a bitset.

Bit ``i`` is set iff node ``i`` is in the set, so union is ``|``, intersection ``&``,
difference ``a & ~b``, subset ``a & ~b == 0`` — all fast, immutable and hashable.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator


def bits(s: int) -> Iterator[int]:
    """The indices in ``s``, ascending."""
    while s:
        low = s & -s
        yield low.bit_length() - 1
        s ^= low


def single(i: int) -> int:
    """The set holding just ``i``."""
    return 1 << i


def of(indices: Iterable[int]) -> int:
    """The set holding ``indices``."""
    s = 0
    for i in indices:
        s |= 1 << i
    return s


def count(s: int) -> int:
    """How many indices ``s`` holds."""
    return s.bit_count()


def first(s: int) -> int:
    """The lowest index in ``s``, or -1 when it is empty."""
    return (s & -s).bit_length() - 1


def last(s: int) -> int:
    """The highest index in ``s``, or -1 when it is empty."""
    return s.bit_length() - 1


def to_str(s: int) -> str:
    """``{1,4,5}``: a readable form for messages and reprs."""
    return "{" + ",".join(map(str, bits(s))) + "}"
