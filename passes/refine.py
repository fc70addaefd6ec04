"""`collage-refine`: end-to-end refinement of a partitioned module
(`collage_xdsl.planner.refinement`); `collage-partition{refine-budget=...}` refines before it
forms the regions, this pass refines a module partitioned before.

    collage-opt m.mlir -p 'collage-partition{estimator=mock},collage-refine{budget=5
                           scorer=mock mock-costs="tvm:1,onnxruntime:2" mock-transfer=3}'

Per function holding `collage.kernel` regions the plan is recovered from the regions,
refined within `budget` seconds (or auto), and, when it changed, partitioned again
(kernels the start plan had keep their `cost`); `alternatives=N` keeps near-tied plans as
functions `@<name>.alt1`, ... listed in `collage.alternatives`. One line per function on
stderr; `report=PATH.json` writes every trial.

Before (`backends=tvm,test backend-options="test: ops=relu" scorer=mock
mock-costs="tvm:1,test:0.5" mock-transfer=2`):

    %a = collage.kernel "test"(%x) {label = "relu"} ... { collage.relu ... }
    %b = collage.kernel "tvm"(%a) {label = "sigmoid"} ... { collage.sigmoid ... }
    %c = collage.kernel "test"(%b) {label = "relu"} ... { collage.relu ... }

After (no handover at all outweighs relu's cheaper kernels):

    %c = collage.kernel "tvm"(%x) {label = "relu_sigmoid"} ... { ... }
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from collage_xdsl.dialects.collage import KernelOp
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from collage_xdsl.core.regions import form_regions, recover_kernels
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.estimator import parse_mock_costs
from collage_xdsl.planner.options import RefinementOptions
from collage_xdsl.planner.refinement import (
    Budget,
    install_alternatives,
    refine_function,
    stored_cut_gains,
)


@dataclass(frozen=True)
class CollageRefinePass(RefinementOptions, ModulePass):
    """Refine each partitioned function by measured (or modelled) whole-function latency."""

    name = "collage-refine"

    report: str | None = None
    """Write every trial of every function as JSON to this file."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        specs = self.specs()
        self.check(specs)
        parse_mock_costs(self.mock_costs)
        if self.budget_seconds() == 0:
            return
        functions = [f for f in op.ops if isinstance(f, FuncOp) and not f.is_declaration
                     and any(isinstance(o, KernelOp) for o in f.body.block.ops)]
        if not functions:
            raise CollageError("collage-refine: no function holds collage.kernel regions; run "
                               "it after collage-partition and before collage-outline")
        if self.cost_db is not None and not Path(self.cost_db).is_file():
            raise CollageError(f"collage-refine: cost database {self.cost_db} does not "
                               "exist (collage-partition's cost-db fills it)")
        budget, reports = Budget(self.budget_seconds()), []
        for func in functions:
            name = func.sym_name.data
            work = op.clone()
            work_func = SymbolTable.lookup_symbol(work, name)
            assert isinstance(work_func, FuncOp)
            graph, start = recover_kernels(work_func)
            gains = None if self.cost_db is None else stored_cut_gains(work, graph, specs,
                                                                        self.cost_db)
            refined = refine_function(work, name, graph, start, specs, self, budget.left(),
                                      gains)
            print(refined.result.summary(name), file=sys.stderr)
            reports.append({"function": name, **refined.result.to_json()})
            if refined.result.changed:
                form_regions(graph, refined.kernels)
                work_func.detach()
                Rewriter.insert_op(work_func, InsertPoint.before(func))
                Rewriter.erase_op(func)
                func = work_func
            install_alternatives(func, refined.alternatives)
        self._write_report(reports)

    def _write_report(self, reports: list[dict]) -> None:
        if self.report is None:
            return
        try:
            Path(self.report).write_text(json.dumps({"functions": reports}, indent=2) + "\n")
        except OSError as e:
            raise CollageError(f"collage-refine: cannot write report {self.report}: "
                               f"{e.strerror}") from None
