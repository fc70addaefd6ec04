"""MaxCoalesce: after the search, touching kernels of one backend merge while the union
stays valid; `coalesce_costed` keeps a merged kernel only when it costs no more than its
parts with their launches.

    merged = coalesce(kernels, lambda sub, backend: sub.is_valid(config))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from collage_xdsl.core.regions import Kernel
from collage_xdsl.core.subgraph import SubGraph


def coalesce(kernels: Sequence[Kernel], is_valid: Callable[[SubGraph, str], bool]
             ) -> list[Kernel]:
    """MaxCoalesce: merge touching kernels of one backend while `is_valid(union, backend)`.

    Kernels are visited in dataflow order; each absorbs its touching same-backend
    neighbours one at a time (rescanning after each merge) until nothing more merges."""
    result = sorted(kernels, key=lambda k: k.inside & -k.inside)
    changed = True
    while changed:
        changed = False
        i = 0
        while i < len(result):
            a, j = result[i], 0
            while j < len(result):
                b = result[j]
                if j == i or a.backend != b.backend or not a.sub_graph.are_touching(b.sub_graph):
                    j += 1
                    continue
                union = a.sub_graph.disjoint_union(b.sub_graph)
                if not is_valid(union, a.backend):
                    j += 1
                    continue
                cost = None if a.cost is None or b.cost is None else a.cost + b.cost
                a = result[i] = Kernel(union, a.backend, cost)
                del result[j]
                if j < i:
                    i -= 1
                changed, j = True, 0
            i += 1
    return result


def coalesce_costed(
    kernels: Sequence[Kernel], is_valid: Callable[[SubGraph, str], bool],
    cost_of: Callable[[Sequence[Kernel]], Sequence[float]], launch: Callable[[str], float],
) -> list[Kernel]:
    """`coalesce`, then each merged kernel costed by `cost_of` (all merged kernels in one
    call; NaN or infinite: no cost) and kept with that cost when ``cost + launch`` is at
    most its parts' costs plus one launch each; otherwise its parts are kept instead."""
    merged = coalesce(kernels, is_valid)
    parts = {k.inside: k for k in kernels}
    fresh = [k for k in merged if k.inside not in parts]
    result = [k for k in merged if k.inside in parts]
    for k, cost in zip(fresh, cost_of(fresh)):
        inside = [p for p in kernels if p.sub_graph.overlaps(k.sub_graph)]
        apart = sum(p.cost + launch(p.backend) for p in inside if p.cost is not None)
        known = all(p.cost is not None for p in inside) and cost is not None
        if known and cost + launch(k.backend) <= apart and cost < float("inf"):
            result.append(Kernel(k.sub_graph, k.backend, cost))
        else:
            result.extend(inside)
    return sorted(result, key=lambda k: k.inside & -k.inside)
