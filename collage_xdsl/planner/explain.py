"""Explain a partitioning: the chosen kernels, what they cost and their best alternative.

    report = explain_function(graph, kernels, candidates, cost_of, total=..., ...)
    to_json([report]); format_table([report])

Per function: each kernel (backend, label, ops, cost, its sequence cost, the cheapest
other backend for the same nodes), the search's total, candidates, estimates, cost-DB
hits (and costs from other hosts), the search time, the run estimate by part (kernels,
launches, crossings, base) and each backend's cheapest cover alone against the mix:

    @main: 3 kernels, total 4.71 s, 12 candidates, 9 estimates, 0 cost-DB hits, search 0.2 ms
      alone: test 4.71 s, tvm 6.42 s; mixed total 1.000x of test's
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from collage_xdsl.core.boundaries import (
    NONE,
    Crossing,
    PlanEstimate,
    TransitionCosts,
    plan_crossings,
    plan_estimate,
)
from collage_xdsl.core.candidates import CandidateKernel, node_name
from collage_xdsl.core.cost import Cost
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits
from collage_xdsl.core.regions import Kernel, kernel_label
from collage_xdsl.core.search import search
from collage_xdsl.errors import CollageError


@dataclass(frozen=True)
class KernelReport:
    backend: str
    label: str
    ops: tuple[str, ...]
    """Op names (without `collage.`) in dataflow order."""
    nodes: tuple[str, ...]
    """The nodes inside, by SSA name or `#index`."""
    cost: float | None
    best_other: str | None
    """The cheapest other backend with a candidate for the same nodes."""
    best_other_cost: float | None
    sequence: float = 0.0
    """Of ``cost``, the kernel's sequence cost (`collage_xdsl.measure.estimator.in_plan`; 0 for
    a plan's only kernel)."""
    alternative: str | None = None
    """The cheapest other cover of the same ops by the candidates (another backend, or a
    split into several kernels), e.g. `onnxruntime, 2 kernels`."""
    alternative_cost: float | None = None


@dataclass(frozen=True)
class AloneTotal:
    """The search's total with one backend enabled (`collage_xdsl.planner.plan.alone_totals`)."""

    backend: str
    total: Cost | None
    reason: str | None = None
    """Why the backend cannot cover the function alone, when ``total`` is None."""


@dataclass(frozen=True)
class FunctionReport:
    function: str
    kernels: tuple[KernelReport, ...]
    total: Cost
    candidates: int
    estimates: int
    cost_db_hits: int
    search_seconds: float
    states_expanded: int
    estimate: PlanEstimate
    transitions: TransitionCosts = NONE
    """The boundary costs behind ``estimate`` (`collage_xdsl.core.boundaries`)."""
    alone: tuple[AloneTotal, ...] = ()
    cost_db_other_hosts: int = 0
    """Costs in the cost database measured on other hosts (`CostDatabase.other_hosts`):
    why a database carried from another machine measures everything again."""
    crossings: tuple[Crossing, ...] = ()
    """The boundaries the plan crosses, per pair of backends."""
    source: str = "search"
    """Where the plan comes from: the search, a plan file, or the plan the cost database
    keeps for the model (`collage_xdsl.planner.plan_cache`), and why a kept one did not
    count."""

    def cheapest_alone(self) -> tuple[str, float] | None:
        """The backend whose cover alone is cheapest, and its total, when one is known."""
        known = [(a.backend, a.total.seconds) for a in self.alone
                 if a.total is not None and a.total.is_known]
        return min(known, key=lambda k: k[1]) if known else None

    def mixing_ratio(self) -> float | None:
        """The mixed total over the cheapest cover by one backend alone (at most 1 but for
        the search's crossing heuristic; None when either is not known)."""
        best = self.cheapest_alone()
        if best is None or best[1] <= 0 or not self.total.is_known:
            return None
        return self.total.seconds / best[1]


def explain_function(
    graph: DataflowGraph,
    kernels: Sequence[Kernel],
    candidates: Sequence[CandidateKernel],
    cost_of: Callable[[CandidateKernel], Cost],
    *,
    total: Cost,
    estimates: int,
    cost_db_hits: int,
    search_seconds: float,
    states_expanded: int,
    transitions: TransitionCosts = NONE,
    alone: dict[str, Cost | str] | None = None,
    sequence_of: Callable[[Kernel], float] = lambda k: 0.0,
    cost_db_other_hosts: int = 0,
    source: str = "search",
) -> FunctionReport:
    """The report for `kernels` chosen over `graph`; `cost_of` re-reads candidate costs
    (from the estimator's memo: nothing is estimated twice); `alone` is
    `collage_xdsl.planner.plan.alone_totals`'s result; `sequence_of` says how much of a
    kernel's cost is its sequence cost."""
    by_inside: dict[int, list[CandidateKernel]] = {}
    for c in candidates:
        if c.spec.backend is not None:
            by_inside.setdefault(c.inside, []).append(c)
    reports = []
    for k in kernels:
        best: tuple[tuple[int, float], str, Cost] | None = None
        for c in by_inside.get(k.inside, []):
            if c.spec.name == k.backend:
                continue
            cost = cost_of(c)
            if best is None or cost.sort_key() < best[0]:
                best = (cost.sort_key(), c.spec.name, cost)
        ops = tuple(
            graph.nodes[i].op.name.removeprefix("collage.")  # type: ignore[union-attr]
            for i in bits(k.inside) if graph.nodes[i].needs_kernel
        )
        alternative = best_alternative(graph, k, candidates, cost_of)
        reports.append(KernelReport(
            k.backend, kernel_label(graph, k), ops,
            tuple(node_name(graph, i) for i in bits(k.inside)),
            k.cost,
            best[1] if best else None,
            best[2].seconds if best else None,
            sequence_of(k),
            *(alternative or (None, None)),
        ))
    return FunctionReport(graph.func.sym_name.data, tuple(reports), total, len(candidates),
                          estimates, cost_db_hits, search_seconds, states_expanded,
                          plan_estimate(graph, kernels, transitions), transitions,
                          tuple(AloneTotal(b, None, t) if isinstance(t, str) else AloneTotal(b, t)
                                for b, t in (alone or {}).items()),
                          cost_db_other_hosts, plan_crossings(graph, kernels, transitions),
                          source)


def best_alternative(graph: DataflowGraph, kernel: Kernel,
                     candidates: Sequence[CandidateKernel],
                     cost_of: Callable[[CandidateKernel], Cost]) -> tuple[str, float] | None:
    """The cheapest cover of `kernel`'s ops by the other candidates within them (the
    search, `collage_xdsl.core.search`, over those ops alone), described by its backends and
    kernel count, and its cost; None when there is none."""
    ops = kernel.inside & graph.kernel_nodes
    within = [c for c in candidates if c.inside & graph.kernel_nodes and
              not c.inside & graph.kernel_nodes & ~ops and
              not (c.inside & graph.kernel_nodes == ops and c.spec.name == kernel.backend)]
    try:
        found = search(graph, within, lambda c: Cost.zero() if c.spec.backend is None
                       else cost_of(c), needs_kernel=ops,
                       is_host=lambda c: c.spec.backend is None)
    except CollageError:
        return None
    kernels = [c for c in found.chosen if c.spec.backend is not None]
    if not kernels or not found.total.is_known:
        return None
    backends = ", ".join(dict.fromkeys(c.spec.name for c in kernels))
    split = f", {len(kernels)} kernels" if len(kernels) > 1 else ""
    return f"{backends}{split}", found.total.seconds


def _number(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def _status(x: float | None) -> str:
    if x is None or math.isnan(x):
        return "unknown"
    return "invalid" if math.isinf(x) else "known"


def to_json(reports: Sequence[FunctionReport]) -> dict:
    return {"functions": [
        {
            "function": r.function,
            "total_cost": _number(r.total.seconds),
            "total_status": _status(r.total.seconds),
            "candidates": r.candidates,
            "estimates": r.estimates,
            "cost_db_hits": r.cost_db_hits,
            "cost_db_other_hosts": r.cost_db_other_hosts,
            "plan_source": r.source,
            "search_seconds": r.search_seconds,
            "states_expanded": r.states_expanded,
            "estimated_seconds": _number(r.estimate.total),
            "estimate": {
                "kernels": _number(r.estimate.kernels),
                "launches": r.estimate.launches,
                "crossings": r.estimate.crossings,
                "base": r.estimate.base,
            },
            "transitions": r.transitions.to_json(),
            "alone": [
                {"backend": a.backend,
                 "total_cost": None if a.total is None else _number(a.total.seconds),
                 "total_status": "no cover" if a.total is None else _status(a.total.seconds),
                 "reason": a.reason}
                for a in r.alone
            ],
            "mixing_ratio": r.mixing_ratio(),
            "kernels": [
                {
                    "backend": k.backend,
                    "label": k.label,
                    "ops": list(k.ops),
                    "nodes": list(k.nodes),
                    "cost": _number(k.cost),
                    "cost_status": _status(k.cost),
                    "sequence": k.sequence,
                    "best_other": None if k.best_other is None else {
                        "backend": k.best_other,
                        "cost": _number(k.best_other_cost),
                        "cost_status": _status(k.best_other_cost),
                    },
                    "alternative": None if k.alternative is None else {
                        "cover": k.alternative,
                        "cost": _number(k.alternative_cost),
                    },
                }
                for k in r.kernels
            ],
            "crossings": [{"from": c.source, "to": c.target, "tensors": c.tensors,
                           "cost": _number(c.seconds)} for c in r.crossings],
        }
        for r in reports
    ]}


def seconds_text(x: float | None) -> str:
    """`1.2 ms`, `340 ns`, `0 s`; `unknown` for None or NaN, `invalid` for inf."""
    if x is None or math.isnan(x):
        return "unknown"
    if math.isinf(x):
        return "invalid"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if x >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x / 1e-9:.3g} ns" if x else "0 s"


def _signed(x: float) -> str:
    return ("-" if x < 0 else "+") + seconds_text(abs(x))


def format_table(reports: Sequence[FunctionReport]) -> str:
    lines = []
    for r in reports:
        lines.append(
            f"@{r.function}: {len(r.kernels)} kernel{'s' * (len(r.kernels) != 1)}, "
            f"total {seconds_text(r.total.seconds)}, "
            f"{r.candidates} candidates, {r.estimates} estimates, {r.cost_db_hits} cost-DB "
            f"hits, search {seconds_text(r.search_seconds)}"
        )
        if r.source != "search":
            lines.append(f"  plan: {r.source}")
        if r.cost_db_other_hosts and r.estimates:
            lines.append(f"  cost database: {r.cost_db_other_hosts} costs measured on other "
                         "hosts (another CPU, core count or platform), not used here")
        e = r.estimate
        sequence = sum(k.sequence for k in r.kernels)
        of_which = f" (sequence costs {_signed(sequence)})" if sequence else ""
        lines.append(f"  estimated run {seconds_text(e.total)}: kernels {seconds_text(e.kernels)}"
                     f"{of_which}, launches {seconds_text(e.launches)}, crossings "
                     f"{seconds_text(e.crossings)}, base {seconds_text(e.base)}")
        if r.alone:
            parts = [f"{a.backend} {seconds_text(a.total.seconds)}" if a.total is not None
                     else f"{a.backend} no cover ({a.reason})" for a in r.alone]
            ratio, best = r.mixing_ratio(), r.cheapest_alone()
            mixed = "" if ratio is None or best is None else \
                f"; mixed total {ratio:.3f}x of {best[0]}'s"
            lines.append(f"  alone: {', '.join(parts)}{mixed}")
        if r.crossings:
            lines.append("  crossings: " + ", ".join(
                f"{c.source} -> {c.target} {c.tensors} tensor{'s' * (c.tensors != 1)} "
                f"{seconds_text(c.seconds)}" for c in r.crossings))
        lines.append(f"  {'backend':<12} {'cost':<12} {'best other':<24} label / ops")
        for k in r.kernels:
            other = "-" if k.best_other is None else \
                f"{k.best_other} {seconds_text(k.best_other_cost)}"
            sequence = f"; sequence cost {_signed(k.sequence)}" if k.sequence else ""
            alternative = "" if k.alternative is None else \
                f"; next best cover: {k.alternative} {seconds_text(k.alternative_cost)}"
            lines.append(f"  {k.backend:<12} {seconds_text(k.cost):<12} {other:<24} "
                         f"{k.label}: {', '.join(k.ops)}{sequence}{alternative}")
    return "\n".join(lines) + "\n"


def write_report(reports: Sequence[FunctionReport], json_path: str | None,
                 table: IO[str] | str | None) -> None:
    """Write the JSON report to `json_path` and the table to a stream or a file path."""
    try:
        if json_path:
            Path(json_path).write_text(json.dumps(to_json(reports), indent=2) + "\n")
        if isinstance(table, str):
            Path(table).write_text(format_table(reports))
        elif table is not None:
            table.write(format_table(reports))
    except OSError as e:
        raise CollageError(f"explain: cannot write {e.filename}: {e.strerror}") from None
