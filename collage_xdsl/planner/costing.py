"""Costing candidates for the search: the estimator the options ask for, the cost database
around it, the boundary costs, and a kernel's cost as part of a plan.

    estimator, db = make_estimator(specs, options, evict=evicts(module))
    cost = kernel_cost(estimator, sub_graph, "onnxruntime")
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import ModuleOp

from collage_xdsl.backends import available_backends, runnable_backends
from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.core.boundaries import NONE, TransitionCosts, parse_transitions
from collage_xdsl.core.candidates import PartitionSpec
from collage_xdsl.core.cost import Cost
from collage_xdsl.core.regions import Kernel
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.cluster import RayCostEstimator, ray_address
from collage_xdsl.measure.cost_db import CachedCostEstimator, CostDatabase
from collage_xdsl.measure.estimator import (
    CostEstimator,
    KernelRequest,
    MockCostEstimator,
    in_plan,
    kernel_request,
    parse_mock_costs,
)
from collage_xdsl.measure.evict import needs_eviction
from collage_xdsl.measure.measured import alone_measurement, measurement
from collage_xdsl.measure.pool import MeasureSettings, WorkerCostEstimator
from collage_xdsl.planner.options import MEASURE_ON, PartitionOptions, not_runnable
from collage_xdsl.runtime.calibration import transition_costs


def evicts(module: ModuleOp) -> bool:
    """Whether the measured estimator times the kernels of `module` after L2 eviction, with
    this process's thread count (`needs_eviction`)."""
    return needs_eviction(module, ThreadPolicy.resolve(None).threads)


def make_estimator(specs: Sequence[PartitionSpec], options: PartitionOptions, evict: bool
                   ) -> tuple[CostEstimator, CostDatabase | None]:
    """The estimator `options` ask for, wrapped in the cost database when they name one;
    a measured one times kernels after L2 eviction when `evict` (`evicts`), in worker
    processes here or on the Ray cluster `measure_on` names."""
    settings = MeasureSettings(evict=evict)
    if options.estimator == "mock":
        costs = parse_mock_costs(options.mock_costs)
        known = available_backends()
        unknown = [name for name in costs if name not in known]
        if unknown:
            raise CollageError(f"mock-costs: unknown backend {unknown[0]!r} (available: "
                               f"{', '.join(known)})")
        inner: CostEstimator = MockCostEstimator(costs)
    else:
        missing = not_runnable(list(specs))
        if missing:
            raise CollageError(
                f"collage-partition: estimator=measured needs a codegen hook for backend "
                f"{missing} (hooks exist for {', '.join(runnable_backends())}); use "
                "estimator=mock for toy backends")
        address = ray_address(options.measure_on, MEASURE_ON)
        if address is None:
            inner = WorkerCostEstimator(workers=options.measure_workers,
                                        timeout_s=options.measure_timeout, settings=settings,
                                        backend_options=options.backend_map())
        else:
            inner = RayCostEstimator(address, measure_on=options.measure_on, option=MEASURE_ON,
                                     timeout_s=options.measure_timeout, settings=settings,
                                     backend_options=options.backend_map())
    if options.cost_db is None:
        return inner, None
    db = CostDatabase(options.cost_db)
    return CachedCostEstimator(inner, db, cost_db_versions(specs, settings)), db


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


def boundary_costs(specs: Sequence[PartitionSpec], options: PartitionOptions,
                   db: CostDatabase | None) -> TransitionCosts:
    """The `transitions` option's costs: calibrated (kept in `db`) for `measured`, and for
    `auto` with the measured estimator when every backend can run kernels."""
    choice = parse_transitions(options.transitions)
    if isinstance(choice, TransitionCosts):
        return choice
    backends = [s for s in specs if s.backend is not None]
    missing = not_runnable(list(specs))
    if choice == "none" or (choice == "auto" and (options.estimator != "measured" or missing)):
        return NONE
    if missing:
        raise CollageError(f"collage-partition: transitions=measured runs kernels on every "
                           f"backend; {missing} has no codegen hook")
    return transition_costs([s.name for s in backends],
                            {s.name: s.backend.version for s in backends},
                            ThreadPolicy.resolve(None), db, options.backend_map())


def kernel_cost(estimator: CostEstimator, sub_graph: SubGraph, backend: str) -> Cost:
    """``sub_graph`` on ``backend`` as a kernel of a plan of its graph: alone when it does
    all of the graph's work (the plan's only kernel), else with its sequence cost
    (`collage_xdsl.measure.estimator.in_plan`)."""
    request = kernel_request(sub_graph, backend)
    return in_plan(estimator.measure(request), alone=request.alone)


def merged_costs(estimator: CostEstimator, kernels: Sequence[Kernel]) -> list[float | None]:
    """Costs of coalesced kernels of one plan (`kernel_cost`), estimated together (None
    when not known)."""
    estimator.estimate_all(kernel_request(k.sub_graph, k.backend) for k in kernels)
    costs = [kernel_cost(estimator, k.sub_graph, k.backend) for k in kernels]
    return [None if c.is_unknown else c.seconds for c in costs]


def sequence_cost(estimator: CostEstimator, kernel: Kernel) -> float:
    """Of `kernel`'s cost in its plan (``Kernel.cost``, from `kernel_cost`), the part that
    is its sequence cost."""
    alone = estimator.estimate(kernel_request(kernel.sub_graph, kernel.backend))
    return kernel.cost - alone.seconds if alone.is_known and kernel.cost is not None else 0.0
