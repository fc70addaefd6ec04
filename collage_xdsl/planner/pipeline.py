"""The end-to-end driver behind the `collage` commands: partition, outline, run.

    options = PartitionOptions(backends=("tvm", "onnxruntime", "openvino"))
    result = partition_module(module, options)   # collage-partition + collage-outline
    options = PartitionOptions(refine_budget="auto")  # + collage-refine in between
    outputs = Executable(result.module).run([x])
    single = assign_module(module, "tvm")         # collage-assign{backend=tvm} + outline

Both work on a copy: the caller's module is left as it was. `partition_module` also
returns the explain report (`collage_xdsl.planner.explain`: JSON and table), the refinement
report (`collage_xdsl.refine.driver`) when it refined, and the time it all took. Refinement
scores plans by measured whole-model latency, or with the mock latency model when the
estimator is `mock`.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from collage_xdsl.backends.kernel import BACKENDS
from collage_xdsl.core.boundaries import NONE, TransitionCosts
from collage_xdsl.core.outline import kernel_functions
from collage_xdsl.errors import CollageError

DEFAULT_BACKENDS = ("tvm", "onnxruntime", "openvino")

DEFAULT_ESTIMATOR = "measured"
"""Kernels compiled and timed in worker processes (`collage_xdsl.measure.pool`)."""

DEFAULT_REFINE_BUDGET = "auto"
"""The end-to-end refinement budget of the `collage` commands with the measured estimator
unless told otherwise (`--refine-budget`): grows with the model, from 30 s to 600 s
(`collage_xdsl.refine.driver`)."""


def parse_backends(text: str | Sequence[str]) -> tuple[str, ...]:
    """Backend names from `tvm,onnxruntime` (or a list): each must have a codegen hook,
    since the result is executed; no duplicates, at least one."""
    names = [n.strip() for n in text.split(",")] if isinstance(text, str) else list(text)
    if not names or any(not n for n in names):
        raise CollageError(f"--backends: expected names separated by commas, got {text!r}")
    for n in names:
        if n not in BACKENDS:
            raise CollageError(
                f"--backends: unknown backend {n!r} (runnable backends: "
                f"{', '.join(sorted(BACKENDS))})"
            )
    if len(set(names)) != len(names):
        raise CollageError(f"--backends: {text!r} names a backend twice")
    return tuple(names)


@dataclass(frozen=True)
class PartitionOptions:
    """The `collage-partition` options the commands expose."""

    backends: tuple[str, ...] = DEFAULT_BACKENDS
    estimator: str = DEFAULT_ESTIMATOR
    cost_db: str | None = None
    """SQLite cost database path (None: no database, every estimate runs)."""
    mock_costs: str = ""
    launch_penalty: float = 0.0
    max_depth: int = 8
    """Max depth of TVM and BYOC candidates (`tvm-max-depth`, `byoc-max-depth`)."""
    max_regions: bool = True
    """Also the backends' maximal regions, at any depth (`byoc-max-regions`,
    `tvm-max-regions`)."""
    refine_budget: float | str = 0.0
    """Wall seconds of measured end-to-end refinement after partitioning (`collage-refine`),
    or "auto" (from 30 s to 600 s, by the time a plan takes to load); 0 turns it off."""
    alternatives: int = 2
    """Near-tied plans refinement keeps for the runtime to choose between (`collage-refine
    {alternatives=N}`, `collage_xdsl.runtime.selector`)."""


@dataclass
class Partitioned:
    """An outlined module and how it was chosen."""

    module: ModuleOp
    report: dict
    """The explain report as JSON (`collage_xdsl.planner.explain.to_json`)."""
    table: str
    """The explain report as a human table."""
    seconds: float
    """Wall time of partitioning, refining and outlining (estimates included)."""
    refinement: dict | None = None
    """The `collage-refine` report (`{"functions": [...]}`), None when not refined."""

    def kernel_functions(self) -> list[FuncOp]:
        return kernel_functions(self.module)

    def transitions(self) -> TransitionCosts:
        """The boundary costs the partition used (one set for every function)."""
        functions = self.report["functions"]
        return TransitionCosts.from_json(functions[0]["transitions"]) if functions else NONE


def partition_module(module: ModuleOp, options: PartitionOptions) -> Partitioned:
    """A copy of `module` partitioned over `options.backends` and outlined."""
    from collage_xdsl.passes.outline import CollageOutlinePass
    from collage_xdsl.passes.partition import CollagePartitionPass
    from collage_xdsl.passes.refine import CollageRefinePass

    module = module.clone()
    refinement = None
    with tempfile.TemporaryDirectory(prefix="collage-explain-") as tmp:
        report_path, table_path = Path(tmp) / "report.json", Path(tmp) / "table.txt"
        refine_path = Path(tmp) / "refine.json"
        started = time.perf_counter()
        CollagePartitionPass(
            backends=options.backends,
            estimator=options.estimator,
            mock_costs=options.mock_costs,
            cost_db=options.cost_db,
            launch_penalty=options.launch_penalty,
            tvm_max_depth=options.max_depth,
            byoc_max_depth=options.max_depth,
            byoc_max_regions=options.max_regions,
            tvm_max_regions=options.max_regions,
            explain=str(report_path),
            explain_table=str(table_path),
        ).apply(Context(), module)
        if options.refine_budget != 0:
            CollageRefinePass(
                backends=options.backends,
                tvm_max_depth=options.max_depth,
                byoc_max_depth=options.max_depth,
                byoc_max_regions=options.max_regions,
                tvm_max_regions=options.max_regions,
                budget=options.refine_budget,
                scorer="mock" if options.estimator == "mock" else "measured",
                mock_costs=options.mock_costs,
                report=str(refine_path),
                alternatives=options.alternatives,
                cost_db=options.cost_db,
            ).apply(Context(), module)
            refinement = json.loads(refine_path.read_text())
        CollageOutlinePass().apply(Context(), module)
        seconds = time.perf_counter() - started
        report = json.loads(report_path.read_text())
        table = table_path.read_text()
    return Partitioned(module, report, table, seconds, refinement)


def assign_module(module: ModuleOp, backend: str, fusion: str = "backend") -> ModuleOp:
    """A copy of `module` with every op on `backend` (`collage-assign`'s `fusion`: its own
    by default), outlined."""
    from collage_xdsl.passes.assign import CollageAssignPass
    from collage_xdsl.passes.outline import CollageOutlinePass

    parse_backends([backend])
    module = module.clone()
    CollageAssignPass(backend=backend, fusion=fusion).apply(Context(), module)
    CollageOutlinePass().apply(Context(), module)
    return module
