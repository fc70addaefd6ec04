"""The end-to-end driver behind the `collage` commands: partition, outline, run.

    options = PartitionOptions(backends=("tvm", "onnxruntime", "openvino"))
    result = partition_module(module, options)   # collage-partition + collage-outline
    outputs = Executable(result.module).run([x])
    single = assign_module(module, "tvm")         # collage-assign{backend=tvm} + outline

Both work on a copy: the caller's module is left as it was. `partition_module` also
returns the explain report (`collage_xdsl.explain`: JSON and table) and the time the
partitioning took.
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

from collage_xdsl.codegen import BACKENDS
from collage_xdsl.errors import CollageError

DEFAULT_BACKENDS = ("tvm", "onnxruntime", "openvino")

DEFAULT_ESTIMATOR = "measured"
"""Kernels compiled and timed in worker processes (`collage_xdsl.measure`)."""


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
    refine_budget: float = 0.0
    """Wall seconds of measured end-to-end refinement after partitioning (`collage-refine`);
    0 turns it off."""


@dataclass
class Partitioned:
    """An outlined module and how it was chosen."""

    module: ModuleOp
    report: dict
    """The explain report as JSON (`collage_xdsl.explain.to_json`)."""
    table: str
    """The explain report as a human table."""
    seconds: float
    """Wall time of partitioning and outlining (estimates included)."""

    def kernel_functions(self) -> list[FuncOp]:
        return kernel_functions(self.module)


def kernel_functions(module: ModuleOp) -> list[FuncOp]:
    """The outlined kernel functions of `module`."""
    return [op for op in module.ops
            if isinstance(op, FuncOp) and "collage.kernel" in op.attributes]


def partition_module(module: ModuleOp, options: PartitionOptions) -> Partitioned:
    """A copy of `module` partitioned over `options.backends` and outlined."""
    from collage_xdsl.passes.outline import CollageOutlinePass
    from collage_xdsl.passes.partition import CollagePartitionPass

    module = module.clone()
    with tempfile.TemporaryDirectory(prefix="collage-explain-") as tmp:
        report_path, table_path = Path(tmp) / "report.json", Path(tmp) / "table.txt"
        started = time.perf_counter()
        CollagePartitionPass(
            backends=options.backends,
            estimator=options.estimator,
            mock_costs=options.mock_costs,
            cost_db=options.cost_db,
            launch_penalty=options.launch_penalty,
            tvm_max_depth=options.max_depth,
            byoc_max_depth=options.max_depth,
            explain=str(report_path),
            explain_table=str(table_path),
        ).apply(Context(), module)
        CollageOutlinePass().apply(Context(), module)
        seconds = time.perf_counter() - started
        report = json.loads(report_path.read_text())
        table = table_path.read_text()
    return Partitioned(module, report, table, seconds)


def assign_module(module: ModuleOp, backend: str) -> ModuleOp:
    """A copy of `module` with every op on `backend` (its own fusion), outlined."""
    from collage_xdsl.passes.assign import CollageAssignPass
    from collage_xdsl.passes.outline import CollageOutlinePass

    parse_backends([backend])
    module = module.clone()
    CollageAssignPass(backend=backend).apply(Context(), module)
    CollageOutlinePass().apply(Context(), module)
    return module
