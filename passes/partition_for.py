"""`collage-partition-for{backend=onnxruntime}`: greedy BYOC, TVM's `partition_for_<backend>`
(`collage_xdsl.baselines.partition_for`): the largest supported regions to the backend
(regions of fewer than `min-region-ops` ops excepted), the rest to tvm through FuseOps.
No cost is estimated.

    %c = collage.conv2d %x, %w ...          %r = collage.kernel "onnxruntime"(%x, %w)
    %r = collage.relu %c ...          ==>   %s = collage.kernel "tvm"(%r) {label = "sigmoid"}
    %s = collage.sigmoid %r ...                   (onnxruntime does not support sigmoid here)
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from collage_xdsl.backends import backend_for, parse_backend_options
from collage_xdsl.baselines.partition_for import partition_for_kernels
from collage_xdsl.core.regions import form_all_regions
from collage_xdsl.errors import CollageError


@dataclass(frozen=True)
class CollagePartitionForPass(ModulePass):
    """Greedy BYOC: maximal supported regions to `backend`, the rest fused for tvm."""

    name = "collage-partition-for"

    backend: str = "onnxruntime"
    """The BYOC backend that takes its maximal supported regions."""
    min_region_ops: int = 1
    """Regions of fewer ops stay with tvm."""
    max_fused_ops: int = 256
    """Most ops in one FuseOps group of the rest."""
    backend_options: str = ""
    """Backend options, `NAME: KEY=VALUE ...` (see collage-partition)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        backend = backend_for(self.backend, parse_backend_options(self.backend_options))
        if not backend.byoc:
            raise CollageError(
                f"collage-partition-for: backend must be a BYOC backend, not {self.backend} "
                "(use collage-fuse-ops for TVM alone)"
            )
        form_all_regions(op, lambda graph: partition_for_kernels(
            graph, backend, self.min_region_ops, self.max_fused_ops))
