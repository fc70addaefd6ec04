"""`collage-fuse-ops{max-fused-ops=256}`: TVM's greedy FuseOps as a baseline
(`collage_xdsl.baselines.fuse_ops`); every group becomes a `collage.kernel "tvm"` region.

    %c = collage.conv2d %x, %w ...          %r = collage.kernel "tvm"(%x, %w)
    %b = collage.add %c, %bias ...    ==>        {label = "conv2d_add_relu"} ... { ... }
    %r = collage.relu %b ...
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from collage_xdsl.baselines.fuse_ops import fuse_ops_kernels
from collage_xdsl.core.regions import form_all_regions


@dataclass(frozen=True)
class CollageFuseOpsPass(ModulePass):
    """TVM-style greedy FuseOps: post-dominator fusion groups, each a `tvm` kernel region."""

    name = "collage-fuse-ops"

    max_fused_ops: int = 256
    """Most ops in one fused group."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        form_all_regions(op, lambda graph: fuse_ops_kernels(graph, self.max_fused_ops))
