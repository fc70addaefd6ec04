"""`collage-assign{backend=onnxruntime}`: the single-backend baseline, every op on one
backend (`collage_xdsl.baselines.assign`): its own fusion (`fusion=backend`), its maximal
regions (`fusion=whole`: the whole function as one kernel when convex) or one kernel per op
(`fusion=none`). Kernels carry no cost.

    %a = collage.relu %x : tensor<4xf32>       %b = collage.kernel "onnxruntime"(%x, %y)
    %b = collage.add %a, %y : ...        ==>        {label = "relu_add"} ... { ... }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from collage_xdsl.backends import backend_for, parse_backend_options
from collage_xdsl.baselines.assign import assign_kernels
from collage_xdsl.core.regions import form_all_regions


@dataclass(frozen=True)
class CollageAssignPass(ModulePass):
    """Every op on `backend`: its own fusion (`fusion=backend`), its maximal regions
    (`fusion=whole`) or one kernel per op (`fusion=none`)."""

    name = "collage-assign"

    backend: str = "tvm"
    """The backend every op goes to."""
    fusion: str = "backend"
    """backend (its own fusion), whole (maximal regions) or none (one kernel per op)."""
    max_fused_ops: int = 256
    """Most ops in one FuseOps group (TVM-style fusion)."""
    backend_options: str = ""
    """Backend options, `NAME: KEY=VALUE ...` (see collage-partition)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        backend = backend_for(self.backend, parse_backend_options(self.backend_options))
        form_all_regions(op, lambda graph: assign_kernels(graph, backend, self.fusion,
                                                          self.max_fused_ops))
