"""Greedy BYOC, TVM's `partition_for_<backend>`: the largest supported regions to the
backend, the rest to tvm through FuseOps.

    kernels = partition_for_kernels(graph, get_backend("openvino"))

The backend's supported ops (host ops excluded) are coalesced into maximal convex regions
(MaxCoalesce of singletons, any depth and number of exits), regions of fewer than
`min_region_ops` ops excepted. Everything else goes to tvm through FuseOps, with the
backend's regions as barriers, so unsupported ops still get TVM's fusion.
"""

from __future__ import annotations

from collage_xdsl.backends.base import Backend
from collage_xdsl.baselines.assign import maximal_regions, supported
from collage_xdsl.baselines.fuse_ops import fuse_ops_kernels
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import count
from collage_xdsl.core.regions import Kernel


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
