"""Refining one function's plan end to end (`collage_xdsl.refine`), as `collage-partition`
does before it forms the kernel regions and `collage-refine` does on a partitioned module.

    outcome = refine_function(work, "main", graph, start_kernels, specs, options, budget,
                              gains=stored_cut_gains(work, graph, specs, "costs.sqlite"))
    outcome.kernels, outcome.alternatives, outcome.result.summary("main")

`work` is a module in which the function has no kernel regions (a copy: nothing in it is
changed); each plan the measured scorer times is a copy of it, partitioned by the plan
and outlined.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.dialects.func import FuncOp
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from collage_xdsl.core.candidates import PartitionSpec, generate_candidates
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.outline import outline_kernels
from collage_xdsl.core.regions import Kernel, form_regions
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.ir.inputs import random_arguments
from collage_xdsl.measure.cost_db import CostDatabase
from collage_xdsl.measure.estimator import parse_mock_costs
from collage_xdsl.measure.pool import MeasureSettings
from collage_xdsl.planner.costing import cost_db_versions, evicts
from collage_xdsl.planner.options import RefinementOptions
from collage_xdsl.refine.cuts import cut_gains, database_cost_of
from collage_xdsl.refine.driver import refine
from collage_xdsl.refine.moves import MoveSpace, Plan
from collage_xdsl.refine.report import AUTO, Refinement
from collage_xdsl.refine.scoring import LatencyScorer, ModelLatency, Scorer
from collage_xdsl.runtime.agreement import ATOL, RTOL, SoftmaxRounding, tolerances


@dataclass
class RefinedFunction:
    """What refinement made of one function's plan."""

    result: Refinement
    kernels: list[Kernel]
    """The final plan (the start plan unless one was measured faster); kernels the start
    plan had keep their cost."""
    alternatives: list[FuncOp]
    """The kept alternative plans as detached functions `@<name>.alt1`, ..."""


class Budget:
    """The wall seconds left of one refinement budget shared by the functions of a module."""

    def __init__(self, seconds: float | str):
        self.ends = None if seconds == AUTO else time.monotonic() + float(seconds)

    def left(self) -> float | str:
        return AUTO if self.ends is None else max(0.0, self.ends - time.monotonic())


def refine_function(work: ModuleOp, name: str, graph: DataflowGraph, start: Sequence[Kernel],
                    specs: Sequence[PartitionSpec], options: RefinementOptions,
                    budget: float | str, gains: Mapping[tuple[int, str], float] | None
                    ) -> RefinedFunction:
    """Refine the plan `start` of `@name` (whose dataflow graph is `graph`, numbered as in
    `work`) for `budget` seconds or auto, offering first the cuts `gains` ranks; every
    plan it tries keeps the placement constraints of `options`."""
    backends = [s.backend for s in specs if s.backend is not None]
    constraints = options.constraints()
    space = MoveSpace(graph, backends, options.coalesce_configs(list(specs)),
                      constraints.allowed(graph, specs), constraints.min_kernel_ops)
    result = refine(space, start, _scorer(work, name, len(graph), options),
                    replace(options.driver_options(), budget_s=budget), gains=gains)
    costs = {(k.inside, k.backend): k.cost for k in start}
    kernels = [Kernel(k.sub_graph, k.backend, costs.get((k.inside, k.backend), k.cost))
               for k in result.plan.kernels]
    alternatives = [_plan_function(work, name, len(graph), plan, costs, f"{name}.alt{i}")
                    for i, (plan, _) in enumerate(result.alternatives, 1)]
    return RefinedFunction(result, kernels, alternatives)


def install_alternatives(func: FuncOp, alternatives: Sequence[FuncOp]) -> None:
    """Put the alternative plans' functions after `func` and list them in its
    `collage.alternatives` attribute."""
    for alternative in reversed(alternatives):
        Rewriter.insert_op(alternative, InsertPoint.after(func))
    if alternatives:
        func.attributes["collage.alternatives"] = ArrayAttr(
            [SymbolRefAttr(f.sym_name) for f in alternatives])


def _scorer(work: ModuleOp, name: str, nodes: int, options: RefinementOptions) -> Scorer:
    if options.scorer == "mock":
        return LatencyScorer(ModelLatency(parse_mock_costs(options.mock_costs),
                                          float(options.mock_transfer)))
    from collage_xdsl.refine.measured import MeasuredScorer

    func = SymbolTable.lookup_symbol(work, name)
    assert isinstance(func, FuncOp)
    inputs = random_arguments(func, options.seed, int_high=2)
    rtol, atol = tolerances(work, RTOL, ATOL)
    return MeasuredScorer(variant_builder(work, name, nodes), inputs, name,
                          rounds=options.rounds, timeout_s=float(options.timeout),
                          precision=max(float(options.min_gain) / 2, 0.005),
                          rtol=rtol, atol=atol,
                          explain=SoftmaxRounding(work, name, inputs).note,
                          backend_options=options.backend_map())


def stored_cut_gains(work: ModuleOp, graph: DataflowGraph, specs: Sequence[PartitionSpec],
                     cost_db: str) -> dict[tuple[int, str], float]:
    """What the cost database `cost_db` says each cut in `graph` gains (`cut_gains`, with
    the costs a partition of `work` kept there, under its versions)."""
    versions = cost_db_versions(specs, MeasureSettings(evict=evicts(work)))
    with CostDatabase(cost_db) as db:
        return cut_gains(graph, generate_candidates(graph, specs), database_cost_of(db, versions))


def _partitioned_copy(work: ModuleOp, name: str, nodes: int, plan: Plan,
                      costs: dict | None = None) -> tuple[ModuleOp, FuncOp]:
    """A copy of `work` (whose `@name` has `nodes` dataflow nodes and no kernel regions)
    with `@name` partitioned by `plan`; a kernel in `costs` keeps that cost."""
    module = work.clone()
    func = SymbolTable.lookup_symbol(module, name)
    assert isinstance(func, FuncOp)
    graph = DataflowGraph(func)
    assert len(graph) == nodes, "a copy numbers its dataflow nodes the same way"
    costs = costs or {}
    form_regions(graph, [Kernel(_remap(k.sub_graph, graph), k.backend,
                                costs.get((k.inside, k.backend), k.cost))
                         for k in plan.kernels])
    return module, func


def _plan_function(work: ModuleOp, name: str, nodes: int, plan: Plan,
                   costs: dict, new_name: str) -> FuncOp:
    """`@name` partitioned by `plan` (`_partitioned_copy`), detached and named `new_name`."""
    _, func = _partitioned_copy(work, name, nodes, plan, costs)
    func.detach()
    func.sym_name = StringAttr(new_name)
    return func


def variant_builder(work: ModuleOp, name: str, nodes: int) -> Callable[[Plan], str]:
    """`build(plan)`: the text of a copy of `work` (whose `@name` has `nodes` dataflow nodes
    and no kernel regions) with `@name` partitioned by the plan and every kernel outlined:
    the variants the measured scorer runs."""

    def build(plan: Plan) -> str:
        module, _ = _partitioned_copy(work, name, nodes, plan)
        outline_kernels(module)
        return str(module)

    return build


def _remap(sub: SubGraph, graph: DataflowGraph) -> SubGraph:
    return SubGraph(graph, sub.inside, sub.label, tuple(_remap(n, graph) for n in sub.nested))
