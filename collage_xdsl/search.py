"""Collage Phase 3: the cheapest cover of a function's nodes by candidate kernels.

Dijkstra over *covered sets* (IndexSet ints). The start state covers the nodes that
need no kernel (block arguments, constants); the goal covers every node. From a state
only the candidates whose kernel nodes include the lowest uncovered node, and do not
overlap the covered set, are expanded: applying C then D reaches the same state as D
then C, so fixing the order by lowest node loses no cover. Nodes that need no kernel
never block a candidate (a kernel may take a constant inside or leave it outside).

Edge cost = candidate cost + ``launch_penalty`` (host candidates, which run on the host
executor, pay no penalty). Costs are non-negative and :class:`Cost` addition is
monotone in the Cost order (known < Unknown < Invalid), so the first time a state is
popped its cost is optimal. Determinism: the queue orders by (cost, covered set as
int, insertion counter), candidates are tried in input order, and a path replaces the
best known path to a state only when it is strictly cheaper.

Pruning before the search, both safe because they never remove the last cheapest cover:

* Invalid candidates are dropped, so a cover with an Invalid kernel is never returned.
* Of the candidates with the same kernel-node set only the cheapest (first on ties) is
  kept: in any cover it can replace the others at no greater cost.
* A candidate of several nodes is dropped when single-node candidates exist for each of
  its nodes whose best edge costs sum to at most its edge cost: in any cover, swapping
  it for those singletons covers the same nodes at no greater cost (and a finer split
  of a kernel cannot introduce a dependency cycle between kernels).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from collage_xdsl.cost import Cost
from collage_xdsl.errors import CollageError
from collage_xdsl.estimators import CostEstimator, kernel_request
from collage_xdsl.graph import DataflowGraph
from collage_xdsl.index_set import bits, first


MAX_REASONS = 5
"""Invalid-candidate reasons quoted in a no-cover error."""


class HasInside(Protocol):
    @property
    def inside(self) -> int: ...


C = TypeVar("C", bound=HasInside)


@dataclass(frozen=True)
class SearchResult(Generic[C]):
    chosen: list[C]
    """The candidates of the cheapest cover, by ascending lowest kernel node."""
    total: Cost
    """Sum of the chosen candidates' costs plus their launch penalties."""
    states_expanded: int
    seconds: float


def search(
    graph_or_size: DataflowGraph | int,
    candidates: Sequence[C],
    cost_of: Callable[[C], Cost | float],
    *,
    needs_kernel: int | None = None,
    launch_penalty: float = 0.0,
    is_host: Callable[[C], bool] | None = None,
    describe: Callable[[C], str] = str,
) -> SearchResult[C]:
    """The cheapest exact cover of the ``needs_kernel`` nodes by ``candidates``.

    ``needs_kernel`` defaults to the graph's kernel nodes (all nodes for a bare size).
    ``cost_of`` is called once per candidate. Raises :class:`CollageError` when no cover
    exists, naming a node that cannot be covered and why.
    """
    started = time.perf_counter()
    graph = graph_or_size if isinstance(graph_or_size, DataflowGraph) else None
    size = len(graph) if graph is not None else int(graph_or_size)
    full = (1 << size) - 1
    if needs_kernel is None:
        needs_kernel = graph.kernel_nodes if graph is not None else full
    if needs_kernel & ~full:
        raise CollageError(f"search: needs_kernel names nodes beyond the {size} nodes")
    if not launch_penalty >= 0:
        raise CollageError(f"search: launch penalty must be >= 0 seconds, not {launch_penalty}")
    penalty = Cost(launch_penalty)

    def name(v: int) -> str:
        return graph.nodes[v].name if graph is not None else f"node {v}"

    # -- cost every candidate once; keep the cheapest per kernel-node set --------------
    invalid: list[tuple[int, str]] = []  # (work set, "candidate: reason")
    best_for: dict[int, tuple[Cost, int]] = {}  # work set -> (edge cost, candidate index)
    for i, c in enumerate(candidates):
        if c.inside & ~full:
            raise CollageError(
                f"search: candidate {describe(c)} names nodes beyond the {size} nodes"
            )
        work = c.inside & needs_kernel
        if not work:
            continue  # covers nothing that needs a kernel
        cost = cost_of(c)
        if not isinstance(cost, Cost):
            try:
                cost = Cost(cost)
            except ValueError as e:
                raise CollageError(f"search: candidate {describe(c)}: {e}") from None
        if cost.is_invalid:
            invalid.append((work, f"{describe(c)}: {cost.reason or 'Invalid'}"))
            continue
        edge = cost if is_host is not None and is_host(c) else cost + penalty
        if work not in best_for or edge < best_for[work][0]:
            best_for[work] = (edge, i)

    best_single = {first(w): e for w, (e, _) in best_for.items() if w & (w - 1) == 0}
    at: dict[int, list[tuple[Cost, int, int]]] = {}
    reachable = 0
    for work, (edge, i) in sorted(best_for.items(), key=lambda item: item[1][1]):
        if work & (work - 1):
            singles = [best_single.get(v) for v in bits(work)]
            if None not in singles and sum(singles, Cost.zero()) <= edge:
                continue
        at.setdefault(first(work), []).append((edge, work, i))
        reachable |= work

    uncoverable = needs_kernel & ~reachable
    if uncoverable:
        v = first(uncoverable)
        reasons = [r for w, r in invalid if w >> v & 1]
        shown = "; ".join(reasons[:MAX_REASONS])
        if len(reasons) > MAX_REASONS:
            shown += f"; and {len(reasons) - MAX_REASONS} more"
        why = (
            f"every candidate containing it is Invalid: {shown}"
            if reasons else "no candidate contains it"
        )
        raise CollageError(f"search: cannot cover {name(v)}: {why}")

    # -- Dijkstra -----------------------------------------------------------------------
    start = full & ~needs_kernel
    best: dict[int, tuple[Cost, int, int]] = {start: (Cost.zero(), -1, -1)}
    queue: list[tuple[tuple[int, float], int, int]] = [(Cost.zero().sort_key(), start, 0)]
    pushed = 1
    done: set[int] = set()
    dead_end = -1
    while queue:
        _, covered, _ = heapq.heappop(queue)
        if covered in done:
            continue  # a stale entry: this state was reached more cheaply before
        done.add(covered)
        if covered == full:
            return _result(candidates, best, covered, len(done), started)
        cost = best[covered][0]
        v = first(full & ~covered)
        fired = False
        for edge, work, i in at.get(v, ()):
            if work & covered:
                continue
            fired = True
            nxt = covered | work
            if nxt in done:
                continue
            new = cost + edge
            old = best.get(nxt)
            if old is None or new < old[0]:
                best[nxt] = (new, covered, i)
                heapq.heappush(queue, (new.sort_key(), nxt, pushed))
                pushed += 1
        if not fired:
            dead_end = max(dead_end, v)
    raise CollageError(
        f"search: no combination of non-overlapping candidates covers every node: "
        f"{name(dead_end)} is only contained in candidates that overlap nodes which other "
        "candidates must cover"
    )


def _result(candidates, best, covered, expanded, started) -> SearchResult:
    total = best[covered][0]
    chosen = []
    while best[covered][1] != -1:
        _, covered, i = best[covered]
        chosen.append(candidates[i])
    chosen.reverse()
    return SearchResult(chosen, total, expanded, time.perf_counter() - started)


def search_candidates(
    graph: DataflowGraph, candidates: Sequence, estimator: CostEstimator,
    *, launch_penalty: float = 0.0,
) -> SearchResult:
    """:func:`search` over candidate kernels (``.sub_graph``, ``.spec.name``,
    ``.spec.backend``, ``.describe(graph)``): host candidates (a spec without backend)
    cost nothing and pay no launch penalty; the others are costed by ``estimator``."""

    def is_host(c) -> bool:
        return c.spec.backend is None

    def cost_of(c) -> Cost:
        if is_host(c):
            return Cost.zero()
        return estimator.estimate(kernel_request(c.sub_graph, c.spec.name))

    return search(graph, candidates, cost_of, launch_penalty=launch_penalty,
                  is_host=is_host, describe=lambda c: c.describe(graph))
