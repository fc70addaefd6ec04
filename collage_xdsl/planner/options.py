"""The options of planning, shared by the passes (each field is a pass option, `_` written
`-`) and the `collage` commands.

    options = PartitionOptions(backends=("tvm", "onnxruntime"), estimator="measured",
                               cost_db="costs.sqlite", refine_budget="auto")
    options.specs()              # the partition specs of the enabled backends
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from collage_xdsl.backends import (
    BackendOptions,
    gather_specs,
    parse_backend_options,
    runnable_backends,
)
from collage_xdsl.backends.base import MAX_CANDIDATES_PER_NODE, FusionStyle
from collage_xdsl.core.candidates import PartitionSpec
from collage_xdsl.core.placement import Constraints
from collage_xdsl.core.subgraph import SubGraphConfig
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.cluster import LOCAL, ray_address
from collage_xdsl.refine.report import RefineOptions

DEFAULT_BACKENDS = ("tvm", "onnxruntime", "openvino")
MEASURE_ON = "collage-partition: measure-on"
"""How errors about the `measure_on` option name it."""


@dataclass(frozen=True)
class CandidateOptions:
    """Which candidate kernels there are (Phases 1 and 2)."""

    backends: tuple[str, ...] = DEFAULT_BACKENDS
    """The enabled backends, by registered name."""
    tvm_max_depth: int = 8
    """Most ops on a path through a native backend's fused kernel (0: unbounded)."""
    byoc_max_depth: int = 8
    """Most ops on a path through a BYOC backend's kernel (0: unbounded)."""
    byoc_max_regions: bool = True
    """Also offer each BYOC backend's maximal supported regions, at any depth."""
    tvm_max_regions: bool = True
    """Also offer the kernels MaxCoalesce makes of a native backend's fused candidates."""
    max_candidates_per_node: int = MAX_CANDIDATES_PER_NODE
    """Most fused candidates sharing a lowest node (0: no cap)."""
    backend_options: str = ""
    """Backend options, `NAME: KEY=VALUE ...; NAME: ...` (e.g. `test: ops=relu,add
    fusion=tvm` or `tvm: tune=metaschedule trials=16`)."""
    fusion_spec: str = ""
    """A TOML file extending or replacing backends' candidate rules (`docs/fusion_spec.md`)."""

    pin: str = ""
    """Ops pinned to a backend, `SELECTOR=BACKEND;...`; a selector is `op:KIND` or a glob
    over node names (`collage_xdsl.core.placement`)."""
    forbid: str = ""
    """Backends forbidden for matching ops, `SELECTOR=B1,B2;...`."""
    min_kernel_ops: int = 0
    """BYOC kernels of fewer ops are not offered (0: any size)."""
    min_kernel_seconds: float | int = 0.0
    """BYOC kernels estimated faster than this are not offered (0: any)."""
    no_fallback: bool = False
    """Fail, listing them, when ops no enabled BYOC backend accepts would fall back to the
    native backend."""

    def constraints(self) -> Constraints:
        """The placement constraints these options ask for."""
        return Constraints.parse(self.pin, self.forbid, self.min_kernel_ops,
                                 float(self.min_kernel_seconds), self.no_fallback)

    def backend_map(self) -> BackendOptions:
        return parse_backend_options(self.backend_options)

    def specs(self) -> list[PartitionSpec]:
        """The partition specs of the enabled backends, then the host's."""
        return gather_specs(self.backends, native_max_depth=self.tvm_max_depth,
                            byoc_max_depth=self.byoc_max_depth,
                            byoc_max_regions=self.byoc_max_regions,
                            native_max_regions=self.tvm_max_regions,
                            max_per_node=self.max_candidates_per_node,
                            options=self.backend_map(), fusion_spec=self.fusion_spec)

    def coalesce_config(self, spec: PartitionSpec) -> SubGraphConfig | None:
        """What a merged kernel of `spec`'s backend must satisfy: convex, and within the
        backend's max depth unless it also offers maximal regions (any depth). None for a
        backend that does not fuse (its kernels are single ops or patterns)."""
        backend = spec.backend
        if backend.fusion is FusionStyle.NONE:
            return None
        if backend.byoc:
            depth = 0 if self.byoc_max_regions else self.byoc_max_depth
        else:
            depth = 0 if self.tvm_max_regions else self.tvm_max_depth
        return SubGraphConfig(max_exits=0, allow_taps=True, max_depth=depth)

    def coalesce_configs(self, specs: list[PartitionSpec]) -> dict[str, SubGraphConfig | None]:
        return {s.name: self.coalesce_config(s) for s in specs if s.backend is not None}


@dataclass(frozen=True)
class RefinementOptions(CandidateOptions):
    """End-to-end refinement of a partitioned function (`collage_xdsl.refine`)."""

    budget: float | int | str = 0.0
    """Wall seconds for the whole refinement, or auto (grows with the model); 0: none."""
    seed: int = 0
    """Orders the mutations."""
    min_gain: float | int = 0.03
    """How much faster (relative) a mutation must be to replace the incumbent."""
    rounds: int = 15
    """Timing rounds of one comparison at least."""
    timeout: float | int = 120.0
    """Seconds a plan may take to compile or to be timed."""
    scorer: str = "measured"
    """measured (plans timed in a worker) or mock (`mock-costs`, `mock-transfer`)."""
    mock_costs: str = ""
    """Per-op seconds per backend for the mock scorer, `BACKEND:SECONDS,...`."""
    mock_transfer: float | int = 0.0
    """Seconds per dataflow edge between kernels of different backends (mock scorer)."""
    alternatives: int = 0
    """Measured plans kept beside the result for the runtime to choose between."""
    cost_db: str | None = None
    """The partition's cost database: the cuts it measured to gain are tried first."""

    def budget_seconds(self) -> float | str:
        """The budget as seconds, or "auto" (`check` validates it)."""
        return self.budget if isinstance(self.budget, str) else float(self.budget)

    def driver_options(self) -> RefineOptions:
        """What the refinement driver takes (validated there)."""
        return RefineOptions(self.budget_seconds(), self.seed, float(self.min_gain),
                             self.alternatives)

    def check(self, specs: list[PartitionSpec]) -> None:
        """Bad values, and a measured scorer over a backend that cannot run kernels, are
        errors naming the option."""
        self.driver_options()
        if self.scorer not in ("measured", "mock"):
            raise CollageError(f"collage-refine: unknown scorer {self.scorer!r} "
                               "(measured or mock)")
        if self.rounds < 1:
            raise CollageError(f"collage-refine: rounds must be at least 1, got {self.rounds}")
        if not self.timeout > 0:
            raise CollageError(f"collage-refine: timeout must be positive, got {self.timeout}")
        if not self.mock_transfer >= 0:
            raise CollageError(f"collage-refine: mock-transfer must be >= 0, got "
                               f"{self.mock_transfer}")
        missing = not_runnable(specs)
        if self.scorer == "measured" and missing:
            raise CollageError(
                f"collage-refine: scorer=measured runs every kernel; backend {missing} has no "
                f"codegen hook (hooks exist for {', '.join(runnable_backends())}); use "
                "scorer=mock for toy backends")


@dataclass(frozen=True)
class PartitionOptions(CandidateOptions):
    """Collage end to end: candidates, their costs, the search, MaxCoalesce, refinement."""

    estimator: str = "mock"
    """mock (`mock-costs`) or measured (kernels compiled and timed in worker processes)."""
    mock_costs: str = ""
    """Per-op seconds per backend for the mock estimator, `BACKEND:SECONDS,...`."""
    cost_db: str | None = None
    """SQLite cost database keeping measured costs between runs (none: measure all)."""
    measure_workers: int = 1
    """Worker processes measuring kernels."""
    measure_timeout: float | int = 120.0
    """Seconds a worker may go without compiling a kernel or finishing a pass of rounds."""
    measure_on: str = LOCAL
    """Where kernels are measured: local (worker processes here), ray:auto or
    ray://HOST:PORT (a Ray cluster, `collage_xdsl.measure.cluster`)."""
    prune: bool = True
    """With the measured estimator, measure only the candidates that can still be on a plan
    within the noise of the best, by predicted costs (`collage_xdsl.planner.promising`);
    false: measure every candidate."""
    launch_penalty: float | int = 0.0
    """Seconds added per kernel."""
    transitions: str = "auto"
    """Boundary costs: auto, none, measured or fixed:SECONDS."""
    coalesce: bool = True
    """Merge touching kernels of one backend when the merged kernel costs no more."""
    refine_budget: float | int | str = 0.0
    """Seconds of end-to-end refinement before the kernel regions are formed, or auto; 0:
    none."""
    refine_alternatives: int = 0
    """Measured plans refinement keeps beside its result."""
    refine_seed: int = 0
    """Orders refinement's mutations."""
    plan_file: str | None = None
    """A saved plan (`docs/control.md`, "Plans as files") to follow instead of searching;
    it is checked to be a valid partition and not refined."""
    save_plan: str | None = None
    """Where to write the final plan as a plan file."""
    replan: bool = False
    """Search again even when the cost database keeps a plan for this model and these
    options (`collage_xdsl.planner.plan_cache`)."""

    def refinement(self) -> RefinementOptions:
        """Refinement as this partition asks for it: scored like the estimator measures
        (the mock scorer with the mock costs), reading the same cost database."""
        return RefinementOptions(
            **{f.name: getattr(self, f.name) for f in fields(CandidateOptions)},
            budget=self.refine_budget, seed=self.refine_seed,
            scorer="mock" if self.estimator == "mock" else "measured",
            mock_costs=self.mock_costs, alternatives=self.refine_alternatives,
            cost_db=self.cost_db)

    def check(self, specs: list[PartitionSpec]) -> None:
        """Bad values are errors naming the option (the estimator's needs are checked
        when it is made: `collage_xdsl.planner.costing.make_estimator`)."""
        if self.estimator not in ("mock", "measured"):
            raise CollageError(f"collage-partition: unknown estimator {self.estimator!r} "
                               "(mock or measured)")
        if ray_address(self.measure_on, MEASURE_ON) is not None and self.estimator == "mock":
            raise CollageError(f"{MEASURE_ON} {self.measure_on}: measures kernels; it needs "
                               "estimator=measured")
        if self.refine_budget != 0:
            self.refinement().check(specs)


def not_runnable(specs: list[PartitionSpec]) -> str:
    """The enabled backends that cannot run their kernels, quoted; empty when none."""
    return ", ".join(repr(s.name) for s in specs
                     if s.backend is not None and not s.backend.can_compile)


def parse_backends(text: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Backend names from `tvm,onnxruntime` (or a list): each must be able to run its
    kernels, since the result is executed; no duplicates, at least one."""
    names = [n.strip() for n in text.split(",")] if isinstance(text, str) else list(text)
    if not names or any(not n for n in names):
        raise CollageError(f"--backends: expected names separated by commas, got {text!r}")
    runnable = runnable_backends()
    for n in names:
        if n not in runnable:
            raise CollageError(f"--backends: unknown backend {n!r} (runnable backends: "
                               f"{', '.join(runnable)})")
    if len(set(names)) != len(names):
        raise CollageError(f"--backends: {text!r} names a backend twice")
    return tuple(names)
