"""`collage-partition`: Collage end to end: candidates, costs, cheapest cover, refinement
and kernel regions (`collage_xdsl.planner.plan.partition`).

    collage-opt m.mlir -p 'collage-partition{backends=tvm,onnxruntime estimator=mock
                           mock-costs="tvm:2,onnxruntime:1" explain="report.json"}'

Before (`backends=tvm,test backend-options="test: ops=relu,add"
mock-costs="tvm:2,test:1"`):

    %a = collage.relu %x : tensor<4xf32>
    %b = collage.add %a, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>

After:

    %b = collage.kernel "test"(%x, %y) {label = "relu_add", cost = 1.9 : f64} : ... {
    ^bb0(%x_1: tensor<4xf32>, %y_1: tensor<4xf32>):
      %a = collage.relu %x_1 : tensor<4xf32>
      %b_1 = collage.add %a, %y_1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      collage.yield %b_1 : tensor<4xf32>
    }
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from collage_xdsl.planner.explain import write_report
from collage_xdsl.planner.options import PartitionOptions
from collage_xdsl.planner.plan import partition, print_refinements


@dataclass(frozen=True)
class CollagePartitionPass(PartitionOptions, ModulePass):
    """Collage: the cheapest cover of every function by candidate kernels, as kernel regions."""

    name = "collage-partition"

    explain: str | None = None
    """Write the explain report as JSON to this file (its table goes to stderr)."""
    explain_table: str | None = None
    """Write the explain report's table to this file instead of stderr."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        explaining = self.explain is not None or self.explain_table is not None
        plans = partition(op, self, explain=explaining)
        print_refinements(plans, sys.stderr)
        if explaining and plans:
            write_report([p.report for p in plans], self.explain,
                         self.explain_table or sys.stderr)
