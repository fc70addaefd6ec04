"""Measuring only the promising candidates: those that can still be on a plan within the
noise of the best, by predicted bounds of what the unmeasured ones cost.

    found = measure_promising(graph, candidates, estimator, cheapest_total)
    found.candidates                 # the host's and the measured ones: what the search takes
    found.timed, found.known, found.pruned

A cold cost database makes a partition time every candidate (thousands on a CNN), though
most can never be on the best plan: a convolution on a backend five times slower than
another cannot. The steps:

1. Costs the estimator already knows (the cost database) are taken as they are.
2. Seeds: per backend, its whole-model candidate and a sample of its candidates spread
   over their sizes (`SEEDS`) are measured, so that each backend has a cost model
   (`collage_xdsl.measure.predict.CostPredictor`, fitted to its measured candidates).
3. Each unmeasured candidate gets bounds from its backend's predictor; a measured one
   costs what it measured, within `NOISE`. The cheapest plan by the upper bounds
   (`cheapest_total`, the search itself) bounds the best plan's cost from above, U.
   A plan that uses candidate c costs at least L(c) = c's lower bound plus, for every
   kernel node outside c, the least share per node of a candidate covering it
   (`lowest_plan_through`). A candidate with L(c) > U x (1 + NOISE) can be on no plan
   within the noise of the best, and is pruned.
4. The unmeasured candidates left are measured, the most promising half first (at least
   `ROUND_KERNELS`); the predictors are fitted again to what was measured and step 3
   repeats until every candidate left is measured.

When every true cost lies within its bounds, no candidate of the best plan is ever
pruned: the best plan costs at most U, and each of its candidates c at most the best
plan's cost >= L(c). The predictor's band is its largest cross-validated error, widened.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from collage_xdsl.core.candidates import CandidateKernel
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, count
from collage_xdsl.measure.estimator import CostEstimator, in_plan, kernel_request
from collage_xdsl.measure.predict import CostPredictor, KernelFeatures

NOISE = 0.02
"""A measured cost is taken to lie within this share of its value; a candidate is kept
while a plan through it can be within this share of the best."""
SEEDS = 24
"""Candidates per backend measured before any is predicted (all, when it has fewer)."""
ROUND_KERNELS = 48
"""Candidates measured at least between two fits of the predictors."""
LARGE_NODES = 8
LARGE = 64
"""The candidates of more than `LARGE_NODES` kernel nodes, at most `LARGE` of them, that
count in a plan's lower bound only where they do not overlap the candidate it is through
(`lowest_plan_through`)."""
"""Candidates measured at least between two fits of the predictors."""

CheapestTotal = Callable[[Callable[[CandidateKernel], float]], float]
"""The cheapest plan's total cost (launches and crossings included) when each
candidate costs what the given function says: the search, run on other costs."""


@dataclass
class Promising:
    """What `measure_promising` found."""

    candidates: list[CandidateKernel]
    """The host candidates and every candidate with a known, valid cost, in their
    original order."""
    known: int
    """Candidates whose cost the estimator knew already (the cost database)."""
    timed: int
    """Candidates measured now (structurally equal ones share one measurement)."""
    pruned: int
    """Candidates never measured: no plan through them can be within the noise of the
    best."""
    rounds: int

    def summary(self) -> str:
        return (f"{self.known} known, {self.timed} measured, {self.pruned} pruned as "
                f"predicted too slow for any plan within {NOISE:.0%} of the best "
                f"({self.rounds} rounds)")


def lowest_plan_through(insides: Sequence[int], lows: np.ndarray, kernel_nodes: int
                        ) -> np.ndarray:
    """Per candidate c (its node set `insides[c]`, its cost at least `lows[c]`), a lower
    bound of the cost of any cover of `kernel_nodes` by the candidates that uses c: its
    own low plus, for each kernel node outside c, the least share per node,
    `lows[k] / nodes of k`, of a candidate k that covers that node and could be in the
    cover beside c. Any cover costs at least the sum of its candidates' shares.

    "Could be beside c" is checked for the `LARGE` candidates of more than `LARGE_NODES`
    nodes that are cheapest per node, which must not overlap c (a whole-model candidate,
    cheap per node, is never beside another); the others count whether they overlap c or
    not, which only lowers the bound."""
    where = {n: j for j, n in enumerate(bits(kernel_nodes))}
    nodes = [np.array([where[n] for n in bits(inside & kernel_nodes)], dtype=np.int64)
             for inside in insides]
    sizes = np.array([max(len(n), 1) for n in nodes])
    per_node = lows / sizes
    wide = np.where(sizes > LARGE_NODES, per_node, math.inf)
    large = [i for i in np.argsort(wide)[:LARGE] if math.isfinite(wide[i])]
    is_large = set(large)
    small_share = np.full(len(where), math.inf)
    for i, n in enumerate(nodes):
        if i not in is_large:
            np.minimum.at(small_share, n, per_node[i])
    large_member = np.zeros((len(large), len(where)), dtype=bool)
    large_shares = np.full((len(large), len(where)), math.inf)
    for row, i in enumerate(large):
        large_member[row, nodes[i]] = True
        large_shares[row, nodes[i]] = per_node[i]
    bounds = np.empty(len(insides))
    for i, n in enumerate(nodes):
        beside = ~large_member[:, n].any(axis=1)
        share = np.minimum(small_share, large_shares[beside].min(axis=0, initial=math.inf))
        share[~np.isfinite(share)] = 0.0  # a node no finite candidate covers adds nothing
        bounds[i] = lows[i] + share.sum() - share[n].sum()
    return bounds


def measure_promising(graph: DataflowGraph, candidates: Sequence[CandidateKernel],
                      estimator: CostEstimator, cheapest_total: CheapestTotal, *,
                      launch_penalty: float = 0.0,
                      progress: Callable[[str], None] = lambda line: None) -> Promising:
    """Measure the candidates that can be on a plan within `NOISE` of the best (see the
    module docstring) and return them with the host candidates."""
    kernels = [c for c in candidates if c.spec.backend is not None]
    requests = [kernel_request(c.sub_graph, c.spec.name) for c in kernels]
    costs: dict[int, float] = {}

    def look_up() -> None:
        """The costs the estimator knows now (a measured kernel's timing twins too)."""
        for i, r in enumerate(requests):
            if i not in costs and (found := estimator.known(r)) is not None:
                costs[i] = in_plan(found, r.alone).seconds

    look_up()
    known = len(costs)
    features = KernelFeatures(graph)
    rows = np.array([features.of(c.sub_graph) for c in kernels]) if kernels else np.zeros(0)

    def measure(indices: Sequence[int]) -> None:
        measured = estimator.measure_many([requests[i] for i in indices])
        for i, m in zip(indices, measured):
            costs[i] = in_plan(m, requests[i].alone).seconds
        look_up()

    measure([i for i in _seeds(kernels, requests) if i not in costs])
    rounds = 0
    while True:  # each round decides afresh, so a warm database gives the same decision
        rounds += 1
        lows, highs = _bounds(kernels, rows, costs)
        alive = np.isfinite(lows)
        upper = cheapest_total(_cost_function(kernels, highs, alive))
        through = lowest_plan_through([c.inside for c in kernels],
                                      lows + launch_penalty, graph.kernel_nodes)
        alive &= ~(through > upper * (1 + NOISE))
        todo = sorted((i for i in np.flatnonzero(alive) if i not in costs),
                      key=lambda i: through[i])
        progress(f"{len(todo)} candidates left to measure, {int((~alive).sum())} pruned")
        if not todo:
            break
        measure(todo[:max(ROUND_KERNELS, len(todo) // 2)])
    kept = {id(kernels[i]) for i in costs if math.isfinite(costs[i])}
    chosen = [c for c in candidates if c.spec.backend is None or id(c) in kept]
    return Promising(chosen, known, len(costs) - known, len(kernels) - len(costs), rounds)


def _seeds(kernels: Sequence[CandidateKernel], requests) -> list[int]:
    """Per backend: its candidates that do all the work, and `SEEDS` of the others spread
    evenly over their sizes (a seeded draw within each size band)."""
    chosen: list[int] = []
    by_backend: dict[str, list[int]] = {}
    for i, c in enumerate(kernels):
        by_backend.setdefault(c.spec.name, []).append(i)
    for backend, indices in by_backend.items():
        largest = max(indices, key=lambda i: requests[i].num_ops)
        chosen += [i for i in indices if requests[i].alone or i == largest]
        rest = sorted((i for i in indices if i not in chosen),
                      key=lambda i: (requests[i].num_ops, requests[i].key))
        if len(rest) <= SEEDS:
            chosen += rest
            continue
        rng = random.Random(backend)
        bands = np.array_split(np.array(rest), SEEDS)
        chosen += [int(rng.choice(list(band))) for band in bands]
    return chosen


def _bounds(kernels: Sequence[CandidateKernel], rows: np.ndarray, costs: dict[int, float]
            ) -> tuple[np.ndarray, np.ndarray]:
    """Per candidate, the least and most it may cost: a measured cost within `NOISE`
    (inf for an Invalid one), else its backend's predicted bounds."""
    lows, highs = np.zeros(len(kernels)), np.full(len(kernels), math.inf)
    by_backend: dict[str, list[int]] = {}
    for i, c in enumerate(kernels):
        by_backend.setdefault(c.spec.name, []).append(i)
    for indices in by_backend.values():
        unknown = [i for i in indices if i not in costs]
        if unknown:
            measured = [i for i in indices if i in costs and math.isfinite(costs[i])]
            predictor = CostPredictor.fit(rows[measured], [costs[i] for i in measured])
            lows[unknown], highs[unknown] = predictor.bounds(rows[unknown])
        for i in indices:
            if i in costs:
                lows[i], highs[i] = costs[i] / (1 + NOISE), costs[i] * (1 + NOISE)
    return lows, highs


def _cost_function(kernels: Sequence[CandidateKernel], costs: np.ndarray, alive: np.ndarray
                   ) -> Callable[[CandidateKernel], float]:
    """A candidate's cost from `costs` (host candidates nothing; pruned ones Invalid)."""
    index = {id(c): i for i, c in enumerate(kernels)}

    def cost_of(c: CandidateKernel) -> float:
        if c.spec.backend is None:
            return 0.0
        i = index[id(c)]
        return costs[i] if alive[i] else math.inf

    return cost_of
