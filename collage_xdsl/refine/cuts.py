"""What the cost database says a cut inside a kernel gains: refinement's first cuts.

    gains = cut_gains(graph, candidates, cost_of)     # {(node, backend): share}
    gains[(38, "openvino")]                           # AlexNet's second FC matmul: 0.12

A cut after node n of a kernel on backend b splits it into a head (what does not depend on
n, n included) and a tail (what does). The partition pass measured many sub-graphs F of
the model as kernels on b, and for many of them their head and tail too. For each such F,
1 - (cost(head) + cost(tail)) / cost(F) is the share of F's time the cut saves (costs as
kernels of a plan, `collage_xdsl.core.search.kernel_cost`: each counts a call right after
another kernel's, so the second call's overhead is in the halves). The cut's gain is the
median share over every F holding it; a cut is offered first where that is positive.

The median, because one F says little: in AlexNet's database (the benchmark's cold
fill) one node's shares spread from -2.35 to +0.39 (OpenVINO, the third convolution's
bias add), and the largest share was above +0.3 at 28 of 29 OpenVINO nodes. The
medians put first the three cuts measured to pay end to end: after the first and second
fully connected layers' matmuls (+0.09, +0.12; with tvm and OpenVINO, 0.82x of
OpenVINO's greedy plan) and after the second's bias add (+0.17; 0.94x of OpenVINO
alone). Every other node's median was +0.06 or less. Kernels that do all the
function's work are left out: timed as a plan alone, not as a plan's part.

Why: a backend can run a fused kernel slower than its pieces. OpenVINO runs a batch-1
fully connected layer with its ReLU fused 1.5-1.8x slower than without
(`scripts/openvino_fc_relu.py`). A search plan that put the layer in one kernel of
another backend (AlexNet with every backend: ONNX Runtime) ends no kernel there, so the
start plan's kernel ends (`collage_xdsl.refine.moves.CutPoints`) did not offer that cut; the
database had measured it.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

from collage_xdsl.core.candidates import CandidateKernel
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, single
from collage_xdsl.core.subgraph import SubGraph
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
