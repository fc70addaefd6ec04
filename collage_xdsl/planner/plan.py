"""The partition library call: a module's functions planned and their kernel regions formed.

    plans = partition(module, PartitionOptions(backends=("tvm", "onnxruntime")))
    plans[0].kernels, plans[0].report, plans[0].refined

Per function: candidates of the enabled backends (Phases 1-2), each costed once, the
cheapest cover (Phase 3, `collage_xdsl.core.search`), MaxCoalesce, end-to-end refinement
when it has a budget, and the kernel regions of the final plan (Phase 4), with the kept
alternative plans as functions beside it. The explain report is built on request.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO

from xdsl.dialects.builtin import ModuleOp

from collage_xdsl.core.boundaries import TransitionCosts
from collage_xdsl.core.candidates import (
    CandidateKernel,
    PartitionSpec,
    generate_candidates,
)
from collage_xdsl.core.coalesce import coalesce_costed
from collage_xdsl.core.cost import Cost
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.regions import Kernel, form_regions, partitionable_functions
from collage_xdsl.core.search import SearchResult, search
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.cost_db import CachedCostEstimator
from collage_xdsl.measure.estimator import CostEstimator, kernel_request
from collage_xdsl.planner.costing import (
    boundary_costs,
    evicts,
    kernel_cost,
    make_estimator,
    merged_costs,
    sequence_cost,
)
from collage_xdsl.planner.explain import FunctionReport, explain_function
from collage_xdsl.planner.options import PartitionOptions
from collage_xdsl.planner.plan_cache import PlanKey
from collage_xdsl.planner.promising import measure_promising
from collage_xdsl.planner.plan_file import (
    plan_json,
    plan_kernels,
    read_plan,
    write_plan,
)
from collage_xdsl.planner.refinement import (
    Budget,
    RefinedFunction,
    install_alternatives,
    refine_function,
)
from collage_xdsl.refine.cuts import cut_gains, database_cost_of

Progress = Callable[[str], None]
"""Told each phase as it starts (`"candidates @main"`, `"search @main"`, ...)."""


@dataclass
class FunctionPlan:
    """How one function was partitioned."""

    function: str
    kernels: list[Kernel]
    """The plan whose kernel regions were formed."""
    report: FunctionReport | None
    """The explain report of the search's plan (on request)."""
    refined: RefinedFunction | None
    """What refinement made of the search's plan (with a budget)."""


def print_refinements(plans: Sequence[FunctionPlan], stream: IO[str]) -> None:
    """What refinement did, one line per refined function (`Refinement.summary`)."""
    for plan in plans:
        if plan.refined is not None:
            print(plan.refined.result.summary(plan.function), file=stream)


def candidate_cost(estimator: CostEstimator, c: CandidateKernel) -> Cost:
    """What a candidate costs in a plan: nothing on the host, else `kernel_cost`."""
    return Cost.zero() if c.spec.backend is None else \
        kernel_cost(estimator, c.sub_graph, c.spec.name)


def search_candidates(graph: DataflowGraph, candidates: Sequence[CandidateKernel],
                      estimator: CostEstimator, *, launch_penalty: float = 0.0,
                      transitions: TransitionCosts | None = None,
                      cost_of: Callable[[CandidateKernel], Cost | float] | None = None
                      ) -> SearchResult:
    """`search` over candidate kernels: host candidates cost nothing and pay no launch
    penalty or crossings; the others cost `kernel_cost` (or `cost_of`) plus
    ``transitions``."""

    def is_host(c: CandidateKernel) -> bool:
        return c.spec.backend is None

    return search(graph, candidates, cost_of or (lambda c: candidate_cost(estimator, c)),
                  launch_penalty=launch_penalty,
                  is_host=is_host, describe=lambda c: c.describe(graph),
                  backend_of=lambda c: None if is_host(c) else c.spec.name,
                  transitions=transitions)


def alone_totals(graph: DataflowGraph, candidates: Sequence[CandidateKernel],
                 estimator: CostEstimator, *, launch_penalty: float = 0.0,
                 transitions: TransitionCosts | None = None) -> dict[str, Cost | str]:
    """For each backend with candidates, in first-candidate order: the total of the
    cheapest cover by its candidates and the host's alone, or why there is none (costs
    already estimated for the mixed search)."""
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


class _Planner:
    """The state of one `partition` call: specs, estimator, database, boundary costs."""

    def __init__(self, module: ModuleOp, options: PartitionOptions, explain: bool,
                 progress: Progress):
        self.module, self.options, self.explain, self.progress = module, options, explain, progress
        self.specs: list[PartitionSpec] = options.specs()
        options.check(self.specs)
        self.estimator, self.db = make_estimator(self.specs, options, evicts(module))
        if self.db is not None and self.db.read_only:
            progress(f"cost database {self.db.path} is read-only: its costs are used, what "
                     "is measured now is not kept")
        self.configs = options.coalesce_configs(self.specs)
        self.constraints = options.constraints()
        self.followed = read_plan(options.plan_file) if options.plan_file else None
        """The plan file the partition follows instead of searching."""
        self.kept_costs: dict[str, list] | None = None
        """The kernels' costs of a plan kept in the cost database, when it is followed."""
        self.source = f"plan file {options.plan_file}" if options.plan_file else "search"
        """Where the plans come from, for the explain report."""
        self.budget: Budget | None = None
        """The refinement budget, shared by the functions; it starts with the first."""
        self.other_hosts = 0

    def valid(self, sub: SubGraph, backend: str) -> bool:
        config = self.configs[backend]
        return config is not None and sub.is_valid(config)

    def cost_of(self, c: CandidateKernel) -> Cost:
        return candidate_cost(self.estimator, c)

    def plan(self, transitions: TransitionCosts) -> list[FunctionPlan]:
        if self.explain and self.db is not None:  # one count for the whole module
            self.other_hosts = self.db.other_hosts()
        key = self._kept_plan()
        plans = [self.plan_function(func, transitions)
                 for func in partitionable_functions(self.module)]
        if key is not None:
            key.keep(self.db, plans)
        return plans

    def _kept_plan(self) -> PlanKey | None:
        """Follow the plan the cost database keeps for this model, if one counts; else the
        key to keep the new plan under (None without a database or with a plan file)."""
        if self.db is None or self.followed is not None:
            return None
        key = PlanKey.of(self.module, self.options, self.specs)
        if self.options.replan:
            self.source = "search (replan)"
            return key
        kept, why_not = key.lookup(self.db)
        if kept is None:
            self.source = f"search ({why_not})" if why_not else "search"
            return key
        self.followed = {"path": f"cost database {self.db.path}", **kept["plan"]}
        self.kept_costs, self.source = kept["costs"], "kept in the cost database"
        return None

    def plan_function(self, func, transitions: TransitionCosts) -> FunctionPlan:
        name = func.sym_name.data
        hits0, misses0 = self._db_counts()
        graph = DataflowGraph(func)
        if self.followed is not None:
            return self.follow(graph, transitions)
        self.progress(f"candidates @{name}")
        allowed = self.constraints.allowed(graph, self.specs)
        candidates = self.constraints.filter(graph, generate_candidates(graph, self.specs),
                                             allowed)
        self.progress(f"costs @{name}: {len(candidates)} candidates")
        if self.options.prune and self.options.estimator == "measured":
            promising = measure_promising(
                graph, candidates, self.estimator,
                lambda cost_of: self._cheapest_total(graph, candidates, cost_of, transitions),
                launch_penalty=self.options.launch_penalty,
                progress=lambda line: self.progress(f"costs @{name}: {line}"))
            self.progress(f"costs @{name}: {promising.summary()}")
            candidates = promising.candidates
        else:
            self.estimator.estimate_all(  # all at once: measured in batches, one progress bar
                kernel_request(c.sub_graph, c.spec.name)
                for c in candidates if c.spec.backend is not None)
        if self.constraints.min_kernel_seconds:
            candidates = self.constraints.filter(graph, candidates, allowed,
                                                 lambda c: self.cost_of(c).seconds)
        self.progress(f"search @{name}")
        result = search_candidates(graph, candidates, self.estimator,
                                   launch_penalty=self.options.launch_penalty,
                                   transitions=transitions)
        kernels = [Kernel(c.sub_graph, c.spec.name, self.cost_of(c).seconds)
                   for c in result.chosen if c.spec.backend is not None]
        if self.options.coalesce:
            kernels = coalesce_costed(kernels, self.valid,
                                      lambda ks: merged_costs(self.estimator, ks),
                                      transitions.kernel)
        report = self._report(graph, kernels, candidates, result, transitions, hits0,
                              misses0) if self.explain else None
        refined = self._refine(func, graph, kernels, candidates)
        form_regions(graph, refined.kernels if refined else kernels)
        if refined:
            install_alternatives(func, refined.alternatives)
        return FunctionPlan(name, refined.kernels if refined else kernels, report, refined)

    def _cheapest_total(self, graph: DataflowGraph, candidates: Sequence[CandidateKernel],
                        cost_of: Callable[[CandidateKernel], float],
                        transitions: TransitionCosts) -> float:
        """The search's total with candidates costing `cost_of` (inf when nothing covers)."""
        try:
            return search_candidates(graph, candidates, self.estimator, cost_of=cost_of,
                                     launch_penalty=self.options.launch_penalty,
                                     transitions=transitions).total.seconds
        except CollageError:
            return math.inf

    def follow(self, graph: DataflowGraph, transitions: TransitionCosts) -> FunctionPlan:
        """The function partitioned as the plan file says, each kernel costed."""
        name = graph.func.sym_name.data
        self.progress(f"plan {self.source} @{name}")
        kernels = plan_kernels(graph, self.followed, self.specs, self.configs,
                               self.constraints)
        kept = (self.kept_costs or {}).get(name)
        estimated = kept is None or len(kept) != len(kernels)
        costs = merged_costs(self.estimator, kernels) if estimated else kept
        kernels = [Kernel(k.sub_graph, k.backend, c) for k, c in zip(kernels, costs)]
        report = None
        if self.explain:
            total = Cost.unknown() if None in costs else Cost(sum(costs))
            report = explain_function(graph, kernels, [], self.cost_of, total=total,
                                      estimates=len(kernels) if estimated else 0,
                                      cost_db_hits=0, search_seconds=0.0,
                                      states_expanded=0, transitions=transitions,
                                      source=self.source)
        form_regions(graph, kernels)
        return FunctionPlan(name, kernels, report, None)

    def _refine(self, func, graph: DataflowGraph, kernels: list[Kernel],
                candidates: Sequence[CandidateKernel]) -> RefinedFunction | None:
        options = self.options.refinement()
        if options.budget_seconds() == 0 or not kernels:
            return None
        name = func.sym_name.data
        gains = self._cut_gains(graph, candidates)
        whole = len(kernels) == 1 and graph.does_all_work(kernels[0].inside)
        if gains is not None and whole and not any(
                g >= options.min_gain for (_, b), g in gains.items() if b == kernels[0].backend):
            self.progress(f"refinement @{name} skipped: the search's plan is "
                          f"{kernels[0].backend}'s whole model and no cut the cost database "
                          f"measured gains {options.min_gain:.0%}")
            return None
        self.progress(f"refinement @{name}")
        if self.budget is None:
            self.budget = Budget(options.budget_seconds())
        return refine_function(self.module.clone(), name, graph, kernels, self.specs, options,
                               self.budget.left(), gains)

    def _cut_gains(self, graph: DataflowGraph, candidates: Sequence[CandidateKernel]
                   ) -> dict[tuple[int, str], float] | None:
        """What the cost database says each cut gains (`cut_gains`); None without one."""
        if not isinstance(self.estimator, CachedCostEstimator):
            return None
        stored = database_cost_of(self.estimator.db, self.estimator.version_of)
        return cut_gains(graph, candidates, stored)

    def _db_counts(self) -> tuple[int, int]:
        if self.db is None:
            return 0, 0
        stats = self.db.stats()
        return stats["hits"], stats["misses"]

    def _report(self, graph, kernels, candidates, result, transitions, hits0, misses0
                ) -> FunctionReport:
        if self.db is not None:
            hits, misses = self._db_counts()
            hits, misses = hits - hits0, misses - misses0
        else:
            hits, misses = 0, len({(c.sub_graph.structural_hash(), c.spec.name)
                                   for c in candidates if c.spec.backend is not None})
        alone = alone_totals(graph, candidates, self.estimator,
                             launch_penalty=self.options.launch_penalty,
                             transitions=transitions)
        return explain_function(
            graph, kernels, candidates, self.cost_of, total=result.total, estimates=misses,
            cost_db_hits=hits, search_seconds=result.seconds,
            states_expanded=result.states_expanded, transitions=transitions, alone=alone,
            sequence_of=lambda k: sequence_cost(self.estimator, k),
            cost_db_other_hosts=self.other_hosts, source=self.source)

    def close(self) -> None:
        self.estimator.close()
        if self.db is not None:
            self.db.close()


def partition(module: ModuleOp, options: PartitionOptions, *, explain: bool = False,
              progress: Progress = lambda phase: None) -> list[FunctionPlan]:
    """Partition every function of `module` in place (see the module docstring)."""
    planner = _Planner(module, options, explain, progress)
    try:
        progress("boundary costs")
        transitions = boundary_costs(planner.specs, options, planner.db)
        plans = planner.plan(transitions)
    finally:
        planner.close()
    if options.save_plan:
        write_plan(options.save_plan, plan_json(plans, options.backends))
    return plans

