"""What the cost database says a cut inside a kernel gains: refinement's first cuts.

    gains = cut_gains(graph, candidates, cost_of)     # {(node, backend): seconds}
    gains[(38, "openvino")]                           # AlexNet's first FC matmul: > 0

A cut after node n of a kernel on backend b splits it into a head (what does not depend on
n, n included) and a tail (what does). The partition pass measured, for many sub-graphs F
of the model, F as one kernel on b and often its head and tail as kernels too. Where it
did, cost(F) - cost(head) - cost(tail) is what the database says cutting F after n
gains; the most over every such F is the cut's predicted gain (costs as kernels of a
plan: `collage_xdsl.search.kernel_cost`, which counts a call right after another
kernel's, so a second call's overhead is already in the halves).

Why: a backend can run a fused kernel slower than its pieces. OpenVINO runs a batch-1
fully connected layer with its ReLU fused 1.5-1.8x slower than without
(`scripts/openvino_fc_relu.py`), and its whole-model kernel cut after each such layer's
bias add runs 0.85-0.90x (`scripts/onnx_cuts.py`). A search plan that put the layer in
one kernel of another backend (AlexNet with every backend: ONNX Runtime) ends no kernel
there, so the start plan's kernel ends (`collage_xdsl.refine.CutPoints`) never offered
that cut; the database had measured it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from collage_xdsl.candidates import CandidateKernel
from collage_xdsl.cost_db import CostDatabase
from collage_xdsl.estimators import KernelRequest, in_plan, kernel_request
from collage_xdsl.graph import DataflowGraph
from collage_xdsl.index_set import bits, single
from collage_xdsl.subgraph import SubGraph

CostOf = Callable[[SubGraph, str], "float | None"]
"""Seconds of a sub-graph as a kernel of a plan on a backend, None when not known."""


def cut_gains(graph: DataflowGraph, candidates: Sequence[CandidateKernel], cost_of: CostOf
              ) -> dict[tuple[int, str], float]:
    """For each (node, backend) where some candidate on the backend, its head and its tail
    (cut after the node) all have a known cost and the candidate costs more than its two
    halves: the most it costs more. Host candidates (no backend) are left out."""
    ops = graph.kernel_nodes
    by_inside: dict[tuple[int, str], list[SubGraph]] = {}
    for c in candidates:
        if c.spec.backend is not None:
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

    gains: dict[tuple[int, str], float] = {}
    for (inside, backend) in by_inside:
        for n in bits(inside):
            tail = inside & graph.nodes[n].downstream & ~single(n)
            if not tail:
                continue
            whole = cost(inside, backend)
            if whole is None:
                break
            head_s, tail_s = cost(inside & ~tail, backend), cost(tail, backend)
            if head_s is None or tail_s is None:
                continue
            gain = whole - head_s - tail_s
            if gain > gains.get((n, backend), 0.0):
                gains[(n, backend)] = gain
    return gains


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
