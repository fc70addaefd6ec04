"""The single-backend baseline: every op of a function on one backend.

    kernels = assign_kernels(graph, get_backend("onnxruntime"), fusion="backend")

How the ops are grouped into kernels (`fusion`):

- `backend` (default): the backend's own fusion, as if it were handed the model alone: a
  backend with TVM-style fusion gets FuseOps groups, a graph compiler (BYOC with arbitrary
  fusion) the maximal regions of its ops, a backend that does not fuse one kernel per op.
- `whole`: the maximal regions of all ops, tuples and projections included: the whole
  function as one kernel when it is convex (a backend alone, handed the model file).
- `none`: one kernel per op.

Tuples and projections stay on the host except inside FuseOps groups and with `whole`.
An op the backend does not support is an error naming the op.
"""

from __future__ import annotations

from collage_xdsl.backends.base import Backend, FusionStyle
from collage_xdsl.baselines.fuse_ops import fuse_ops_kernels, host_only
from collage_xdsl.core.candidates import node_name
from collage_xdsl.core.coalesce import coalesce
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, single
from collage_xdsl.core.regions import ANY_SHAPE, Kernel
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.errors import CollageError


def supported(graph: DataflowGraph, backend: Backend) -> int:
    """The kernel nodes (host ops excluded) `backend` supports, as a bitset."""
    found = 0
    for i in bits(graph.kernel_nodes):
        if not host_only(graph, single(i)) and backend.supports(graph.nodes[i].op):
            found |= single(i)
    return found


def maximal_regions(graph: DataflowGraph, nodes: int, backend: str) -> list[Kernel]:
    """The maximal convex regions of `nodes` (MaxCoalesce of singletons)."""
    singletons = [Kernel(SubGraph(graph, single(i)), backend) for i in bits(nodes)]
    return coalesce(singletons, lambda sub, _: sub.is_valid(ANY_SHAPE))


FUSIONS = ("backend", "whole", "none")
"""`collage-assign`'s ways of grouping ops into kernels."""


def assign_kernels(graph: DataflowGraph, backend: Backend, fusion: str = "backend",
                   max_fused_ops: int = 256) -> list[Kernel]:
    """Every op of `graph` on `backend` (what `collage-assign` wraps): its own fusion
    (`fusion="backend"`), its maximal regions (`"whole"`) or one kernel per op (`"none"`).
    An op the backend does not support is an error naming the op."""
    if fusion not in FUSIONS:
        raise CollageError(f"collage-assign: unknown fusion {fusion!r} "
                           f"({', '.join(FUSIONS)})")
    nodes = supported(graph, backend)
    needed = graph.kernel_nodes & ~nodes
    for i in bits(needed):
        if not host_only(graph, single(i)):
            raise CollageError(
                f"collage-assign: backend {backend.name!r} does not support "
                f"{graph.nodes[i].op.name} (node {node_name(graph, i)} in "
                f"@{graph.func.sym_name.data})"
            )
    if fusion == "whole":  # tuples and projections join the regions they connect
        return [k for k in maximal_regions(graph, graph.kernel_nodes, backend.name)
                if not host_only(graph, k.inside)]
    if fusion == "none" or backend.fusion is FusionStyle.NONE:
        return [Kernel(SubGraph(graph, single(i)), backend.name) for i in bits(nodes)]
    if backend.fusion is FusionStyle.TVM:
        return fuse_ops_kernels(graph, max_fused_ops, backend=backend.name)
    return maximal_regions(graph, nodes, backend.name)
