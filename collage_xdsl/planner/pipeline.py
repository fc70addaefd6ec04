"""Whole-module helpers behind the `collage` commands: partition and outline a copy, or put
a copy on one backend.

    partitioned = partition_module(module, PartitionOptions(backends=("tvm", "openvino")))
    outputs = partitioned.executable().run([x])
    single = assign_module(module, "tvm", fusion="whole")

Both work on a copy: the caller's module is left as it was.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from collage_xdsl.backends import BackendOptions, backend_for
from collage_xdsl.baselines.assign import assign_kernels
from collage_xdsl.core.boundaries import NONE, TransitionCosts
from collage_xdsl.core.outline import outline_kernels
from collage_xdsl.core.regions import form_all_regions
from collage_xdsl.planner.explain import format_table, to_json
from collage_xdsl.planner.options import PartitionOptions, parse_backends
from collage_xdsl.planner.plan import FunctionPlan, Progress, partition
from collage_xdsl.runtime.executable import Executable


@dataclass
class Partitioned:
    """An outlined module and how it was chosen."""

    module: ModuleOp
    plans: list[FunctionPlan]
    seconds: float
    """Wall time of partitioning, refining and outlining (estimates included)."""
    backend_options: BackendOptions = field(default_factory=dict)
    """The options the backends were made with (TVM's tuning, ...)."""

    def executable(self, **kwargs: Any) -> Executable:
        """The module through the runtime, its kernels compiled by the backends made with
        `backend_options` (`kwargs` go to `Executable`)."""
        return Executable(self.module, backend_options=self.backend_options, **kwargs)

    @cached_property
    def report(self) -> dict:
        """The explain report of the search's plans as JSON (`planner.explain.to_json`)."""
        return to_json([p.report for p in self.plans])

    @cached_property
    def table(self) -> str:
        """The explain report as a human table."""
        return format_table([p.report for p in self.plans])

    @cached_property
    def refinement(self) -> dict | None:
        """What refinement did per function (`{"functions": [...]}`), None when it did not run."""
        refined = [p for p in self.plans if p.refined is not None]
        if not refined:
            return None
        return {"functions": [{"function": p.function, **p.refined.result.to_json()}
                              for p in refined]}

    def transitions(self) -> TransitionCosts:
        """The boundary costs the partition used (one set for every function)."""
        return self.plans[0].report.transitions if self.plans else NONE


def partition_module(module: ModuleOp, options: PartitionOptions,
                     progress: Progress = lambda phase: None) -> Partitioned:
    """A copy of `module` partitioned (with its explain report) and outlined."""
    started = time.perf_counter()
    module = module.clone()
    plans = partition(module, options, explain=True, progress=progress)
    progress("outline")
    outline_kernels(module)
    return Partitioned(module, plans, time.perf_counter() - started, options.backend_map())


def assign_module(module: ModuleOp, backend: str, fusion: str = "backend",
                  options: BackendOptions | None = None) -> ModuleOp:
    """A copy of `module` with every op on `backend` made with its `options`
    (`collage-assign`'s `fusion`: its own by default), outlined."""
    parse_backends([backend])
    found = backend_for(backend, options)
    module = module.clone()
    form_all_regions(module, lambda graph: assign_kernels(graph, found, fusion))
    outline_kernels(module)
    return module
