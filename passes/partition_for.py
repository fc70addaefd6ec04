"""`collage-partition-for{backend=onnxruntime}`: greedy BYOC, TVM's `partition_for_<backend>`.

The largest supported regions go to the backend: its supported ops (host ops excluded)
are coalesced into maximal convex regions (MaxCoalesce of singletons, any depth and
number of exits), regions of fewer than `min-region-ops` ops excepted. Everything else
goes to `tvm` through FuseOps (`collage-fuse-ops` restricted to the remaining ops, with
the backend's regions as barriers), so unsupported ops still get TVM's fusion rather
than one kernel each. Host ops (`collage.tuple` / `collage.get_item`) stay on the host
unless FuseOps fuses them. No cost is estimated.

    %c = collage.conv2d %x, %w ...          %r = collage.kernel "onnxruntime"(%x, %w)
    %r = collage.relu %c ...          ==>   %s = collage.kernel "tvm"(%r) {label = "sigmoid"}
    %s = collage.sigmoid %r ...                   (onnxruntime does not support sigmoid here)
"""

from __future__ import annotations

from dataclasses import dataclass

from collage_xdsl.passes.assign import backend_named, maximal_regions, supported
from collage_xdsl.passes.fuse_ops import fuse_ops_kernels
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from collage_xdsl.backends.base import Backend
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import count
from collage_xdsl.core.regions import Kernel, partition, partitionable_functions
from collage_xdsl.errors import CollageError


def partition_for_kernels(graph: DataflowGraph, backend: Backend, min_region_ops: int = 1,
                          max_fused_ops: int = 256) -> list[Kernel]:
    """The greedy BYOC kernels of `graph` (what `collage-partition-for` wraps): maximal
    supported regions of at least `min_region_ops` ops on `backend`, FuseOps groups of
    the rest on tvm."""
    regions = [
        r for r in maximal_regions(graph, supported(graph, backend), backend.name)
        if count(r.inside) >= min_region_ops
    ]
    offloaded = 0
    for r in regions:
        offloaded |= r.inside
    return regions + fuse_ops_kernels(graph, max_fused_ops,
                                      allowed=graph.kernel_nodes & ~offloaded)


@dataclass(frozen=True)
class CollagePartitionForPass(ModulePass):
    """Greedy BYOC: maximal supported regions to `backend`, the rest fused for tvm."""

    name = "collage-partition-for"

    backend: str = "onnxruntime"
    min_region_ops: int = 1
    max_fused_ops: int = 256
    test_ops: tuple[str, ...] = ()
    test_fusion: str = "arbitrary"
    test_patterns: tuple[str, ...] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.backend == "tvm":
            raise CollageError(
                "collage-partition-for: backend must be a BYOC backend, not tvm "
                "(use collage-fuse-ops for TVM alone)"
            )
        backend = backend_named(self.backend, self.test_ops, self.test_fusion,
                                self.test_patterns)
        for func in partitionable_functions(op):
            graph = DataflowGraph(func)
            partition(graph, partition_for_kernels(graph, backend, self.min_region_ops,
                                                   self.max_fused_ops))
