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

Boundary-aware costs (``transitions``, a :class:`TransitionCosts`; needs the graph and
``backend_of``): a kernel also pays its backend's launch cost, and each tensor it reads
from, or hands to, an already covered kernel node of another backend pays a crossing
(`collage_xdsl.core.boundaries`). A crossing is charged when the second of its two kernels
joins the cover, so every crossing of a cover is charged once. The state is still the
covered set: the path that reaches a state first fixes the backends of its nodes, so with
crossings the search is a best-first heuristic rather than exact (the end-to-end
refinement, `collage-refine`, measures what it cannot see). Of candidates with the same
kernel-node set the cheapest per backend is kept, since their crossings differ.

Pruning before the search, both safe because they never remove the last cheapest cover
(with crossings: the singles' crossings between each other count against them):

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
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from collage_xdsl.core.boundaries import Boundaries, TransitionCosts
from collage_xdsl.core.cost import Cost
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, first
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.estimator import CostEstimator, in_plan, kernel_request

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
    backend_of: Callable[[C], str | None] | None = None,
    transitions: TransitionCosts | None = None,
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
    if not 0 <= launch_penalty < math.inf:
        raise CollageError(f"search: launch penalty must be finite seconds >= 0, not "
                           f"{launch_penalty}")
    penalty = Cost(launch_penalty)
    if transitions is not None and transitions.is_zero:
        transitions = None
    if transitions is not None and (graph is None or backend_of is None):
        raise CollageError("search: transition costs need the graph and backend_of")
    boundaries = Boundaries(graph) if transitions is not None else None

    def backend(i: int) -> str | None:
        return backend_of(candidates[i]) if backend_of is not None else None

    def name(v: int) -> str:
        return graph.nodes[v].name if graph is not None else f"node {v}"

    # -- cost every candidate once; keep the cheapest per kernel-node set --------------
    invalid: list[tuple[int, str]] = []  # (work set, "candidate: reason")
    # (work set, backend when crossings count) -> (edge cost, candidate index)
    best_for: dict[tuple[int, str | None], tuple[Cost, int]] = {}
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
        if transitions is not None and backend(i) is not None:
            edge = edge + Cost(transitions.kernel(backend(i)))
        key = (work, backend(i) if transitions is not None else None)
        if key not in best_for or edge < best_for[key][0]:
            best_for[key] = (edge, i)

    best_single: dict[int, tuple[Cost, int]] = {}
    for (w, _), (e, i) in best_for.items():
        v = first(w)
        if w & (w - 1) == 0 and (v not in best_single or e < best_single[v][0]):
            best_single[v] = (e, i)

    def singles_cost(work: int) -> Cost | None:
        """The cost of covering ``work`` by the best single-node candidates (None: some
        node has none), crossings between them included."""
        singles = [best_single.get(v) for v in bits(work)]
        if None in singles:
            return None
        total = sum((e for e, _ in singles), Cost.zero())
        if boundaries is not None:
            where = {v: backend(i) for v, (_, i) in zip(bits(work), singles)}
            for v in bits(work):
                _, outs = boundaries.crossings(1 << v)
                total = total + Cost(sum(transitions.edge(where[v], where[q], n)
                                         for q, n in outs if q in where))
        return total

    at: dict[int, list[tuple[Cost, int, int]]] = {}
    crossings: dict[int, tuple[list, list]] = {}
    reachable = 0
    for (work, _), (edge, i) in sorted(best_for.items(), key=lambda item: item[1][1]):
        if work & (work - 1):
            singles = singles_cost(work)
            if singles is not None and singles <= edge:
                continue
        at.setdefault(first(work), []).append((edge, work, i))
        if boundaries is not None and backend(i) is not None:
            crossings[i] = boundaries.crossings(candidates[i].inside)
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
    owners: dict[int, dict[str, int]] = {start: {}}
    """Per state on its best path: backend -> the kernel nodes it covers (crossings only)."""

    def crossing_cost(i: int, owned: dict[str, int]) -> Cost:
        b = backend(i)
        ins, outs = crossings.get(i, ((), ()))
        total = 0.0
        for theirs, mask in owned.items():
            if theirs != b:
                total += sum(transitions.edge(theirs, b, n) for p, n in ins if mask >> p & 1)
                total += sum(transitions.edge(b, theirs, n) for q, n in outs if mask >> q & 1)
        return Cost(total)

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
            if i in crossings:
                new = new + crossing_cost(i, owners[covered])
            old = best.get(nxt)
            if old is None or new < old[0]:
                best[nxt] = (new, covered, i)
                if boundaries is not None:
                    owned = dict(owners[covered])
                    b = backend(i)
                    if b is not None:
                        owned[b] = owned.get(b, 0) | work
                    owners[nxt] = owned
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


def kernel_cost(estimator: CostEstimator, sub_graph, backend: str) -> Cost:
    """``sub_graph`` on ``backend`` as a kernel of a plan of its graph: alone when it does
    all of the graph's work (the plan's only kernel), else with its sequence cost
    (`collage_xdsl.measure.estimator.in_plan`)."""
    request = kernel_request(sub_graph, backend)
    return in_plan(estimator.measure(request), alone=request.alone)


def search_candidates(
    graph: DataflowGraph, candidates: Sequence, estimator: CostEstimator,
    *, launch_penalty: float = 0.0, transitions: TransitionCosts | None = None,
) -> SearchResult:
    """:func:`search` over candidate kernels (``.sub_graph``, ``.spec.name``,
    ``.spec.backend``, ``.describe(graph)``): host candidates (a spec without backend)
    cost nothing, pay no launch penalty and no crossings; the others are costed by
    ``estimator`` (`kernel_cost`: with their sequence costs unless they do all the work),
    plus ``transitions`` when given."""

    def is_host(c) -> bool:
        return c.spec.backend is None

    def cost_of(c) -> Cost:
        if is_host(c):
            return Cost.zero()
        return kernel_cost(estimator, c.sub_graph, c.spec.name)

    return search(graph, candidates, cost_of, launch_penalty=launch_penalty,
                  is_host=is_host, describe=lambda c: c.describe(graph),
                  backend_of=lambda c: None if is_host(c) else c.spec.name,
                  transitions=transitions)


def alone_totals(
    graph: DataflowGraph, candidates: Sequence, estimator: CostEstimator,
    *, launch_penalty: float = 0.0, transitions: TransitionCosts | None = None,
) -> dict[str, Cost | str]:
    """For each backend with candidates, in first-candidate order: the total of the
    cheapest cover by its candidates and the host's alone (what :func:`search_candidates`
    finds with only that backend enabled), or why there is none. Against these, the
    mixed cover's total shows what mixing backends gains by the cost model's own
    estimates. Every cost was estimated for the mixed search already."""
    backends = list(dict.fromkeys(c.spec.name for c in candidates if c.spec.backend is not None))
    totals: dict[str, Cost | str] = {}
    for backend in backends:
        own = [c for c in candidates if c.spec.backend is None or c.spec.name == backend]
        try:
            totals[backend] = search_candidates(
                graph, own, estimator, launch_penalty=launch_penalty, transitions=transitions
            ).total
        except CollageError as e:
            totals[backend] = str(e)
    return totals
