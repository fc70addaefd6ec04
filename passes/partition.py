"""`collage-partition`: Collage end to end — candidates, costs, cheapest cover, kernel regions.

    collage-opt m.mlir -p 'collage-partition{backends=tvm,onnxruntime estimator=mock
                           mock-costs="tvm:2,onnxruntime:1" explain="report.json"}'

Per function: Phase 1-2 candidates of the enabled backends (`collage-candidates` options:
`backends`, `tvm-max-depth`, `byoc-max-depth`, `byoc-max-regions`, `tvm-max-regions`,
`test-ops`, `test-fusion`, `test-patterns`), Phase 3 Dijkstra over covered sets with each candidate
costed once (`estimator=mock` with `mock-costs=BACKEND:SECONDS,...` per op, default 1 s,
or `estimator=measured`: compiled through the backends' codegen and timed in worker
processes, see `collage_xdsl.measure.pool`, with `measure-workers` and `measure-timeout`:
the seconds a worker may go without compiling a kernel or finishing a pass of timing
rounds; `cost-db=PATH`
keeps costs between runs; `launch-penalty` seconds per kernel; `transitions=auto|none|
measured|fixed:SECONDS`: boundary-aware costs, `collage_xdsl.core.boundaries`, calibrated once
per cost database with the measured estimator by default), and Phase 4: the chosen
sub-graphs become `collage.kernel` regions (`coalesce=true` merges touching kernels of
one backend when the merged kernel, costed as one, is no dearer than its parts, see
`collage_xdsl.core.regions`). `explain=PATH.json` writes the report of
`collage_xdsl.planner.explain`, whose table goes to stderr (or to `explain-table=PATH`).

Before:

    %a = collage.relu %x : tensor<4xf32>
    %b = collage.add %a, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>

After (`backends=tvm,test test-ops=relu,add mock-costs="tvm:2,test:1"`):

    %b = collage.kernel "test"(%x, %y) {label = "relu_add", cost = 1.9 : f64} : ... {
    ^bb0(%x_1: tensor<4xf32>, %y_1: tensor<4xf32>):
      %a = collage.relu %x_1 : tensor<4xf32>
      %b_1 = collage.add %a, %y_1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      collage.yield %b_1 : tensor<4xf32>
    }
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from collage_xdsl.passes.candidates import CandidateOptions
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from collage_xdsl.backends import available_backends
from collage_xdsl.backends.base import Backend, FusionStyle
from collage_xdsl.core.boundaries import NONE, TransitionCosts, parse_transitions
from collage_xdsl.core.candidates import (
    CandidateKernel,
    PartitionSpec,
    generate_candidates,
)
from collage_xdsl.core.cost import Cost
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.regions import (
    Kernel,
    coalesce_costed,
    partition,
    partitionable_functions,
)
from collage_xdsl.core.search import alone_totals, kernel_cost, search_candidates
from collage_xdsl.core.subgraph import SubGraph, SubGraphConfig
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.cost_db import CachedCostEstimator, CostDatabase
from collage_xdsl.measure.estimator import (
    CostEstimator,
    KernelRequest,
    MockCostEstimator,
    alone_measurement,
    kernel_request,
    measurement,
    parse_mock_costs,
)
from collage_xdsl.measure.evict import needs_eviction
from collage_xdsl.planner.explain import FunctionReport, explain_function, write_report
from collage_xdsl.runtime.calibration import transition_costs

if TYPE_CHECKING:
    from collage_xdsl.measure.pool import MeasureSettings


def make_estimator(
    specs: Sequence[PartitionSpec], estimator: str, mock_costs: str, cost_db: str | None,
    measure_workers: int = 1, measure_timeout: float = 120.0, evict: bool = True,
) -> tuple[CostEstimator, CostDatabase | None]:
    """The estimator the options ask for, wrapped in the cost database when given one;
    a measured one times kernels after L2 eviction when ``evict`` is set."""
    from collage_xdsl.measure.pool import MeasureSettings, WorkerCostEstimator

    settings = MeasureSettings(evict=evict)
    if estimator == "mock":
        costs = parse_mock_costs(mock_costs)
        known = available_backends()
        unknown = [name for name in costs if name not in known]
        if unknown:
            raise CollageError(f"mock-costs: unknown backend {unknown[0]!r} (available: "
                               f"{', '.join(known)})")
        inner: CostEstimator = MockCostEstimator(costs)
    elif estimator == "measured":
        from collage_xdsl.backends.kernel import BACKENDS

        missing = [s.name for s in specs if s.backend is not None and s.name not in BACKENDS
                   and type(s.backend).compile is Backend.compile]
        if missing:
            raise CollageError(
                f"collage-partition: estimator=measured needs a codegen hook for backend "
                f"{', '.join(repr(m) for m in missing)} (hooks exist for "
                f"{', '.join(sorted(BACKENDS))}); use estimator=mock for toy backends"
            )
        inner = WorkerCostEstimator(workers=measure_workers, timeout_s=measure_timeout,
                                    settings=settings)
    else:
        raise CollageError(
            f"collage-partition: unknown estimator {estimator!r} (mock or measured)"
        )
    if cost_db is None:
        return inner, None
    db = CostDatabase(cost_db)
    return CachedCostEstimator(inner, db, cost_db_versions(specs, settings)), db


def evicts(module: ModuleOp) -> bool:
    """Whether the measured estimator times the kernels of `module` after L2 eviction, with
    this process's thread count (`needs_eviction`)."""
    from collage_xdsl.backends.threads import ThreadPolicy

    return needs_eviction(module, ThreadPolicy.resolve(None).threads)


def cost_db_versions(specs: Sequence[PartitionSpec], settings: MeasureSettings
                     ) -> Callable[[KernelRequest], str]:
    """The version a kernel's measurement is kept under in the cost database: the
    backend's version and how `settings` timed it (a kernel that does all the work, as a
    plan alone)."""
    how = measurement(settings.evict, settings.min_span_s)
    alone_how = alone_measurement(settings.alone_span_s)
    versions = {s.name: f"{s.backend.version}; {how}" for s in specs if s.backend is not None}

    def version_of(request: KernelRequest) -> str:
        version = versions[request.backend]
        return f"{version}; {alone_how}" if request.alone else version

    return version_of


@dataclass(frozen=True)
class CollagePartitionPass(CandidateOptions):
    """Collage: cheapest cover of every function by candidate kernels, as kernel regions.

    Candidates come from the `CandidateOptions` (backends, depths, caps, `test` backend)."""

    name = "collage-partition"

    estimator: str = "mock"
    mock_costs: str = ""
    launch_penalty: float | int = 0.0
    """Seconds (`float | int`: the pipeline syntax reads `launch-penalty=1` as an int)."""
    cost_db: str | None = None
    measure_workers: int = 1
    measure_timeout: float | int = 120.0
    coalesce: bool = True
    explain: str | None = None
    explain_table: str | None = None
    transitions: str = "auto"
    tvm_tune: str | None = None
    """TVM schedule tuning, none or metaschedule (`collage_xdsl.backends.tvm.tuning`); None
    keeps the process setting (``COLLAGE_TVM_TUNE``, default none)."""
    tvm_tune_trials: int = 16
    tvm_tune_db: str | None = None
    """Tuning database directory (default ``~/.cache/collage-xdsl/tvm-tuning``)."""

    def coalesce_config(self, spec: PartitionSpec) -> SubGraphConfig | None:
        """What a merged kernel of `spec`'s backend must satisfy: convex, and within the
        backend's max depth unless it also offers maximal regions (any depth). None for a
        backend that does not fuse (its kernels are single ops or patterns)."""
        backend = spec.backend
        assert backend is not None
        if backend.fusion is FusionStyle.NONE:
            return None
        if backend.byoc:
            depth = 0 if self.byoc_max_regions else self.byoc_max_depth
        else:
            depth = 0 if self.tvm_max_regions else self.tvm_max_depth
        return SubGraphConfig(max_exits=0, allow_taps=True, max_depth=depth)

    def transition_costs(self, specs: Sequence[PartitionSpec], db: CostDatabase | None
                         ) -> TransitionCosts:
        """The `transitions` option's costs: calibrated (kept in `db`) for `measured`, and
        for `auto` with the measured estimator when every backend has a codegen hook."""
        from collage_xdsl.backends.kernel import BACKENDS
        from collage_xdsl.backends.threads import ThreadPolicy

        choice = parse_transitions(self.transitions)
        if isinstance(choice, TransitionCosts):
            return choice
        backends = [s for s in specs if s.backend is not None]
        missing = [s.name for s in backends if s.name not in BACKENDS]
        if choice == "none" or (choice == "auto" and (self.estimator != "measured" or missing)):
            return NONE
        if missing:
            raise CollageError(
                f"collage-partition: transitions=measured runs kernels on every backend; "
                f"{', '.join(repr(m) for m in missing)} has no codegen hook"
            )
        return transition_costs([s.name for s in backends],
                                {s.name: s.backend.version for s in backends},
                                ThreadPolicy.resolve(None), db)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.tvm_tune is not None:  # before any TVM kernel is compiled or measured
            from collage_xdsl.backends.tvm.tuning import TuningOptions, default_db_dir

            TuningOptions(self.tvm_tune, self.tvm_tune_trials,
                          self.tvm_tune_db or str(default_db_dir())).export()
        specs = self.specs()
        estimator, db = make_estimator(specs, self.estimator, self.mock_costs, self.cost_db,
                                       self.measure_workers, self.measure_timeout, evicts(op))
        configs = {s.name: self.coalesce_config(s) for s in specs if s.backend is not None}
        transitions = self.transition_costs(specs, db)

        def valid(sub: SubGraph, backend: str) -> bool:
            config = configs[backend]
            return config is not None and sub.is_valid(config)

        def cost_of(c: CandidateKernel) -> Cost:
            if c.spec.backend is None:
                return Cost.zero()
            return kernel_cost(estimator, c.sub_graph, c.spec.name)

        reports: list[FunctionReport] = []
        explaining = self.explain is not None or self.explain_table is not None
        try:
            # the file's costs of other hosts: one count for the whole module
            other_hosts = db.other_hosts() if explaining and db is not None else 0
            for func in partitionable_functions(op):
                hits0, misses0 = (db.stats()["hits"], db.stats()["misses"]) if db else (0, 0)
                graph = DataflowGraph(func)
                candidates = generate_candidates(graph, specs)
                estimator.estimate_all(  # all at once: measured in parallel, one progress bar
                    kernel_request(c.sub_graph, c.spec.name)
                    for c in candidates if c.spec.backend is not None
                )
                result = search_candidates(graph, candidates, estimator,
                                           launch_penalty=self.launch_penalty,
                                           transitions=transitions)
                kernels = [Kernel(c.sub_graph, c.spec.name, cost_of(c).seconds)
                           for c in result.chosen if c.spec.backend is not None]
                if self.coalesce:
                    kernels = coalesce_costed(graph, kernels, valid,
                                              lambda ks: merged_costs(estimator, ks),
                                              transitions.kernel)
                if explaining:
                    if db is not None:
                        hits, misses = db.stats()["hits"] - hits0, db.stats()["misses"] - misses0
                    else:
                        hits, misses = 0, _distinct_estimates(candidates)
                    reports.append(explain_function(
                        graph, kernels, candidates, cost_of, total=result.total,
                        estimates=misses, cost_db_hits=hits,
                        search_seconds=result.seconds, states_expanded=result.states_expanded,
                        transitions=transitions,
                        alone=alone_totals(graph, candidates, estimator,
                                           launch_penalty=self.launch_penalty,
                                           transitions=transitions),
                        sequence_of=lambda k: sequence_cost(estimator, k),
                        cost_db_other_hosts=other_hosts,
                    ))
                partition(graph, kernels)
        finally:
            estimator.close()
            if db is not None:
                db.close()
        if reports:
            write_report(reports, self.explain, self.explain_table or sys.stderr)


def merged_costs(estimator: CostEstimator, kernels: Sequence[Kernel]) -> list[float | None]:
    """Costs of coalesced kernels of one plan (`kernel_cost`), estimated together (None
    when not known)."""
    estimator.estimate_all(kernel_request(k.sub_graph, k.backend) for k in kernels)
    costs = [kernel_cost(estimator, k.sub_graph, k.backend) for k in kernels]
    return [None if c.is_unknown else c.seconds for c in costs]


def sequence_cost(estimator: CostEstimator, kernel: Kernel) -> float:
    """Of `kernel`'s cost in its plan (``Kernel.cost``, from `kernel_cost`), the part
    that is its sequence cost."""
    alone = estimator.estimate(kernel_request(kernel.sub_graph, kernel.backend))
    return kernel.cost - alone.seconds if alone.is_known and kernel.cost is not None else 0.0


def _distinct_estimates(candidates: Sequence[CandidateKernel]) -> int:
    """Estimates an estimator without a database runs: one per distinct (kernel, backend)."""
    return len({(c.sub_graph.structural_hash(), c.spec.name)
                for c in candidates if c.spec.backend is not None})
