"""Collage Phase 3: the cheapest cover of a function's kernel nodes by candidate kernels.

    result = search(graph, candidates, cost_of, launch_penalty=1e-6)
    result.chosen, result.total

Four steps, as in TVM's Collage: `price_candidates` (each candidate's edge cost, the
cheapest per covered node set), `prune_candidates` (drop a multi-node candidate its
single-node parts cover as cheaply), `candidate_index` (candidates by their lowest node)
and `dijkstra` over covered node sets. With boundary costs (`transitions`) each kernel
also pays its backend's launch and each tensor crossing backends a crossing; the search
is then best-first rather than exact. The argument and its pruning rules are in
`docs/design.md` ("The search").
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


@dataclass(frozen=True)
class Edge:
    """A candidate as a step of the search: what it covers and what taking it costs."""

    cost: Cost
    """The candidate's cost, its launch penalty and its backend's launch cost."""
    work: int
    """The kernel nodes it covers."""
    index: int
    """Its position in the candidates."""
    backend: str | None
    """Its backend when boundary costs count (None: the host, or no boundary costs)."""


@dataclass
class Problem(Generic[C]):
    """What one search is asked: the candidates and how to cost and describe them."""

    candidates: Sequence[C]
    cost_of: Callable[[C], Cost | float]
    size: int
    needs_kernel: int
    penalty: Cost
    is_host: Callable[[C], bool]
    describe: Callable[[C], str]
    backend_of: Callable[[C], str | None]
    graph: DataflowGraph | None
    crossings: Crossings | None

    @property
    def full(self) -> int:
        return (1 << self.size) - 1

    def name(self, v: int) -> str:
        return self.graph.nodes[v].name if self.graph is not None else f"node {v}"


class Crossings:
    """The crossing costs of a search with boundary costs: per edge, the tensors it reads
    from and hands to kernel nodes outside it, priced against their backends."""

    def __init__(self, graph: DataflowGraph, costs: TransitionCosts):
        self.costs = costs
        self.boundaries = Boundaries(graph)
        self._of: dict[int, tuple[list, list]] = {}

    def of(self, edge: Edge, inside: int) -> tuple[list, list]:
        if edge.index not in self._of:
            self._of[edge.index] = self.boundaries.crossings(inside)
        return self._of[edge.index]

    def against(self, edge: Edge, inside: int, owned: dict[str, int]) -> Cost:
        """What `edge` pays for tensors to and from the kernel nodes each other backend
        `owned` already covers."""
        ins, outs = self.of(edge, inside)
        total = 0.0
        for theirs, mask in owned.items():
            if theirs != edge.backend:
                total += sum(self.costs.edge(theirs, edge.backend, n)
                             for p, n in ins if mask >> p & 1)
                total += sum(self.costs.edge(edge.backend, theirs, n)
                             for q, n in outs if mask >> q & 1)
        return Cost(total)

    def among(self, edges: Sequence[Edge]) -> Cost:
        """What single-node `edges` pay for the tensors they hand each other."""
        where = {first(e.work): e.backend for e in edges}
        total = 0.0
        for e in edges:
            _, outs = self.boundaries.crossings(e.work)
            total += sum(self.costs.edge(e.backend, where[q], n) for q, n in outs if q in where)
        return Cost(total)


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
    ``cost_of`` is called once per candidate; host candidates (``is_host``) pay no launch
    penalty. Raises :class:`CollageError` when no cover exists, naming a node that cannot
    be covered and why."""
    started = time.perf_counter()
    problem = _problem(graph_or_size, candidates, cost_of, needs_kernel, launch_penalty,
                       is_host, describe, backend_of, transitions)
    cheapest, invalid = price_candidates(problem)
    edges = prune_candidates(problem, cheapest)
    _check_coverable(problem, edges, invalid)
    chosen, total, expanded = dijkstra(problem, candidate_index(edges))
    return SearchResult([candidates[e.index] for e in chosen], total, expanded,
                        time.perf_counter() - started)


def _problem(graph_or_size, candidates, cost_of, needs_kernel, launch_penalty, is_host,
             describe, backend_of, transitions) -> Problem:
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
    if transitions is not None and transitions.is_zero:
        transitions = None
    if transitions is not None and (graph is None or backend_of is None):
        raise CollageError("search: transition costs need the graph and backend_of")
    return Problem(candidates, cost_of, size, needs_kernel, Cost(launch_penalty),
                   is_host or (lambda c: False), describe,
                   backend_of if transitions is not None else (lambda c: None), graph,
                   Crossings(graph, transitions) if transitions is not None else None)


def price_candidates(problem: Problem) -> tuple[dict[tuple[int, str | None], Edge],
                                                list[tuple[int, str]]]:
    """Each candidate's edge, the cheapest (first on ties) per covered node set and, with
    boundary costs, backend; and the Invalid candidates as (nodes, "candidate: reason")."""
    cheapest: dict[tuple[int, str | None], Edge] = {}
    invalid: list[tuple[int, str]] = []
    for i, c in enumerate(problem.candidates):
        if c.inside & ~problem.full:
            raise CollageError(f"search: candidate {problem.describe(c)} names nodes beyond "
                               f"the {problem.size} nodes")
        work = c.inside & problem.needs_kernel
        if not work:
            continue  # covers nothing that needs a kernel
        cost = _as_cost(problem, c, problem.cost_of(c))
        if cost.is_invalid:
            invalid.append((work, f"{problem.describe(c)}: {cost.reason or 'Invalid'}"))
            continue
        backend = problem.backend_of(c)
        edge = cost if problem.is_host(c) else cost + problem.penalty
        if problem.crossings is not None and backend is not None:
            edge = edge + Cost(problem.crossings.costs.kernel(backend))
        key = (work, backend)
        if key not in cheapest or edge < cheapest[key].cost:
            cheapest[key] = Edge(edge, work, i, backend)
    return cheapest, invalid


def _as_cost(problem: Problem, candidate, cost: Cost | float) -> Cost:
    if isinstance(cost, Cost):
        return cost
    try:
        return Cost(cost)
    except ValueError as e:
        raise CollageError(f"search: candidate {problem.describe(candidate)}: {e}") from None


def prune_candidates(problem: Problem, cheapest: dict[tuple[int, str | None], Edge]
                     ) -> list[Edge]:
    """The edges worth expanding, in candidate order: a multi-node edge is dropped when
    the best single-node edges of its nodes (their crossings between each other included)
    cost at most as much; swapping it for them covers the same nodes no dearer."""
    single: dict[int, Edge] = {}
    for e in cheapest.values():
        v = first(e.work)
        if e.work & (e.work - 1) == 0 and (v not in single or e.cost < single[v].cost):
            single[v] = e
    kept = []
    for e in sorted(cheapest.values(), key=lambda e: e.index):
        if e.work & (e.work - 1):
            parts = [single.get(v) for v in bits(e.work)]
            if None not in parts and _singles_cost(problem, parts) <= e.cost:
                continue
        kept.append(e)
    return kept


def _singles_cost(problem: Problem, parts: list[Edge]) -> Cost:
    total = sum((e.cost for e in parts), Cost.zero())
    if problem.crossings is not None:
        total = total + problem.crossings.among(parts)
    return total


def candidate_index(edges: Sequence[Edge]) -> dict[int, list[Edge]]:
    """The edges by the lowest node they cover: the only ones the search expands from a
    state whose lowest uncovered node that is."""
    index: dict[int, list[Edge]] = {}
    for e in edges:
        index.setdefault(first(e.work), []).append(e)
    return index


def _check_coverable(problem: Problem, edges: Sequence[Edge],
                     invalid: Sequence[tuple[int, str]]) -> None:
    reachable = 0
    for e in edges:
        reachable |= e.work
    uncoverable = problem.needs_kernel & ~reachable
    if not uncoverable:
        return
    v = first(uncoverable)
    reasons = [r for w, r in invalid if w >> v & 1]
    shown = "; ".join(reasons[:MAX_REASONS])
    if len(reasons) > MAX_REASONS:
        shown += f"; and {len(reasons) - MAX_REASONS} more"
    why = f"every candidate containing it is Invalid: {shown}" if reasons else \
        "no candidate contains it"
    raise CollageError(f"search: cannot cover {problem.name(v)}: {why}")


@dataclass
class _State:
    cost: Cost
    previous: int
    edge: Edge | None
    owned: dict[str, int]
    """Per backend, the kernel nodes its path covers (boundary costs only)."""


def dijkstra(problem: Problem, index: dict[int, list[Edge]]) -> tuple[list[Edge], Cost, int]:
    """The cheapest path from the covered set of nodes needing no kernel to the full set:
    its edges, its cost and the states expanded. The queue orders by (cost, covered set,
    insertion), and a path replaces the best known one only when strictly cheaper."""
    full = problem.full
    start = full & ~problem.needs_kernel
    best = {start: _State(Cost.zero(), -1, None, {})}
    queue: list[tuple[tuple[int, float], int, int]] = [(Cost.zero().sort_key(), start, 0)]
    pushed, done, dead_end = 1, set(), -1
    while queue:
        _, covered, _ = heapq.heappop(queue)
        if covered in done:
            continue  # a stale entry: this state was reached more cheaply before
        done.add(covered)
        if covered == full:
            return _path(best, covered), best[covered].cost, len(done)
        state, v = best[covered], first(full & ~covered)
        fired = False
        for e in index.get(v, ()):
            if e.work & covered:
                continue
            fired, nxt = True, covered | e.work
            if nxt in done:
                continue
            new = state.cost + e.cost + _crossing(problem, e, state.owned)
            if nxt not in best or new < best[nxt].cost:
                best[nxt] = _State(new, covered, e, _owned_after(problem, e, state.owned))
                heapq.heappush(queue, (new.sort_key(), nxt, pushed))
                pushed += 1
        if not fired:
            dead_end = max(dead_end, v)
    raise CollageError(
        f"search: no combination of non-overlapping candidates covers every node: "
        f"{problem.name(dead_end)} is only contained in candidates that overlap nodes which "
        "other candidates must cover")


def _crossing(problem: Problem, e: Edge, owned: dict[str, int]) -> Cost:
    if problem.crossings is None or e.backend is None:
        return Cost.zero()
    return problem.crossings.against(e, problem.candidates[e.index].inside, owned)


def _owned_after(problem: Problem, e: Edge, owned: dict[str, int]) -> dict[str, int]:
    if problem.crossings is None or e.backend is None:
        return owned
    return {**owned, e.backend: owned.get(e.backend, 0) | e.work}


def _path(best: dict[int, _State], covered: int) -> list[Edge]:
    chosen = []
    while best[covered].edge is not None:
        state = best[covered]
        chosen.append(state.edge)
        covered = state.previous
    return chosen[::-1]
