"""Cut ranking: where refinement tries to cut a kernel in two first.

    gains = cut_gains(graph, candidates, cost_of)     # {(node, backend): share}
    cuts = CutPoints.of(start_kernels, gains)         # database gains, then kernel ends

A cut after node n of a kernel on backend b splits it into a head (what does not depend
on n) and a tail. For every sub-graph F the cost database measured on b, together with
its head and tail, 1 - (cost(head) + cost(tail)) / cost(F) is the share of F's time the
cut saves; a cut's gain is the median share over the F holding it. Why the median and
which cuts paid: `docs/refinement.md`, "Cuts".
"""
from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from collage_xdsl.core.candidates import CandidateKernel
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, of, single
from collage_xdsl.core.regions import Kernel
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.dialects.collage import OpPatternKind
from collage_xdsl.measure.cost_db import CostDatabase
from collage_xdsl.measure.estimator import KernelRequest, in_plan, kernel_request

CostOf = Callable[[SubGraph, str], "float | None"]
"""Seconds of a sub-graph as a kernel of a plan on a backend, None when not known."""


def cut_gains(graph: DataflowGraph, candidates: Sequence[CandidateKernel], cost_of: CostOf
              ) -> dict[tuple[int, str], float]:
    """For each (node, backend) with a positive gain: the median share of a candidate's
    time that cutting it after the node saves, over the candidates on the backend whose
    cost, head's cost and tail's cost are known. Host candidates (no backend) and those
    that do all the work are left out."""
    ops = graph.kernel_nodes
    by_inside: dict[tuple[int, str], list[SubGraph]] = {}
    for c in candidates:
        if c.spec.backend is not None and not graph.does_all_work(c.sub_graph.inside):
            by_inside.setdefault((c.sub_graph.inside & ops, c.spec.name), []).append(c.sub_graph)
    known: dict[tuple[int, str], float | None] = {}

    def cost(inside: int, backend: str) -> float | None:
        """The cheapest known cost of a candidate with these ops on `backend`."""
        key = (inside, backend)
        if key not in known:
            costs = [s for s in (cost_of(sub, backend) for sub in by_inside.get(key, ()))
                     if s is not None]
            known[key] = min(costs, default=None)
        return known[key]

    shares: dict[tuple[int, str], list[float]] = {}
    for (inside, backend) in by_inside:
        whole = cost(inside, backend)
        if not whole:
            continue
        for n in bits(inside):
            tail = inside & graph.nodes[n].downstream & ~single(n)
            if not tail:
                continue
            head_s, tail_s = cost(inside & ~tail, backend), cost(tail, backend)
            if head_s is not None and tail_s is not None:
                shares.setdefault((n, backend), []).append(1 - (head_s + tail_s) / whole)
    return {cut: gain for cut, s in shares.items() if (gain := statistics.median(s)) > 0}


def database_cost_of(db: CostDatabase, version_of: Callable[[KernelRequest], str]) -> CostOf:
    """`CostOf` reading `db` alone (nothing is measured): a sub-graph's cost as a kernel of
    a plan where the partition pass kept a valid measurement of it under `version_of`."""

    def cost_of(sub: SubGraph, backend: str) -> float | None:
        request = kernel_request(sub, backend)
        found = db.get(request.key, backend, version_of(request))
        if found is None:
            return None
        cost = in_plan(found, request.alone)
        return cost.seconds if cost.is_known else None

    return cost_of


@dataclass(frozen=True)
class CutPoints:
    """The cuts refinement offers, with their rank (lower first). First the cuts the cost
    database says gain (`gains`, `collage_xdsl.refine.cuts`: (node, backend) -> the share
    of a fused kernel's time the cut saves), the most first. Then where the start plan's
    kernels end (`ranks`), each exit node ranked 0 where the cut breaks a fusion (a
    reader of the node is elementwise or broadcast, which a backend fuses into it) and the
    plan hands the node to another backend, 1 where it breaks a fusion, 2 where it hands
    off, 3 elsewhere (why: `docs/refinement.md`, "Cuts")."""

    ranks: Mapping[int, int]
    gains: Mapping[tuple[int, str], float] = field(default_factory=dict)

    @staticmethod
    def of(kernels: Sequence[Kernel], gains: Mapping[tuple[int, str], float] | None = None
           ) -> CutPoints:
        gains = dict(gains or {})
        if not kernels:
            return CutPoints({}, gains)
        graph = kernels[0].sub_graph.graph
        backend_of = {n: k.backend for k in kernels for n in bits(k.inside)}
        ranks = {}
        for k in kernels:
            for n in bits(k.sub_graph.exit & graph.kernel_nodes):
                readers = list(bits(graph.nodes[n].output_set))
                fused = any(graph.nodes[u].kind <= OpPatternKind.BROADCAST for u in readers)
                handed_off = any(backend_of.get(u, k.backend) != k.backend for u in readers)
                ranks[n] = 2 * (not fused) + (not handed_off)
        return CutPoints(ranks, gains)

    def nodes(self, backend: str) -> int:
        """The nodes a kernel on `backend` may be cut after."""
        return of(self.ranks) | of(n for n, b in self.gains if b == backend)

    def largest_gain(self, backend: str) -> float:
        """The most the database says one cut of a kernel on `backend` saves (0: none)."""
        return max((g for (_, b), g in self.gains.items() if b == backend), default=0.0)

    def rank(self, node: int, backend: str) -> tuple[int, float]:
        """The sort key of a cut after `node` of a kernel on `backend`."""
        gain = self.gains.get((node, backend))
        return (0, -gain) if gain is not None else (1 + self.ranks[node], 0.0)
