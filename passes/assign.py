"""`collage-assign{backend=onnxruntime}`: the single-backend baseline — every op on one backend.

How the ops are grouped into kernels (`fusion` option):

- `fusion=backend` (default): the backend's own fusion, as if it were handed the model
  alone. A backend with TVM-style fusion (`tvm`) gets `collage-fuse-ops` groups; a graph
  compiler (BYOC with arbitrary fusion: `onnxruntime`, `openvino`) gets the maximal
  regions of its ops (MaxCoalesce of singletons while the region stays convex — the whole
  graph when nothing splits it), which it then fuses internally; a backend that does not
  fuse gets one kernel per op.
- `fusion=whole`: the maximal regions of all ops, tuples and projections included,
  whatever the backend's fusion style: the whole function as one kernel when it is
  convex, which the backend compiles and fuses as a whole (for `tvm`, one Relax module
  instead of one per FuseOps group): a backend alone as it would be handed the model file.
- `fusion=none`: one kernel per op.

`collage.tuple` / `collage.get_item` stay on the host except inside FuseOps groups (TVM
fuses a tuple into its concatenate) and with `fusion=whole`. An op the backend does not
support is an error naming the op. Kernels carry no cost (nothing is estimated).

    %a = collage.relu %x : tensor<4xf32>       %b = collage.kernel "onnxruntime"(%x, %y)
    %b = collage.add %a, %y : ...        ==>        {label = "relu_add"} ... { ... }
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from collage_xdsl.passes.fuse_ops import fuse_ops_kernels, host_only
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from collage_xdsl.backends import get_backend
from collage_xdsl.backends.base import Backend, FusionStyle
from collage_xdsl.core.candidates import node_name
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, single
from collage_xdsl.core.regions import (
    ANY_SHAPE,
    Kernel,
    coalesce,
    partition,
    partitionable_functions,
)
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.errors import CollageError


def backend_named(name: str, test_ops: Sequence[str], test_fusion: str,
                  test_patterns: Sequence[str]) -> Backend:
    """The registered backend `name`; the `test` backend is built from the test options."""
    if name == "test":
        return get_backend(name, ops=test_ops, fusion=test_fusion, patterns=test_patterns)
    return get_backend(name)


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
    return coalesce(graph, singletons, lambda sub, _: sub.is_valid(ANY_SHAPE))


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


@dataclass(frozen=True)
class CollageAssignPass(ModulePass):
    """Every op on `backend`: its own fusion (`fusion=backend`), its maximal regions
    (`fusion=whole`) or one kernel per op (`fusion=none`)."""

    name = "collage-assign"

    backend: str = "tvm"
    fusion: str = "backend"
    max_fused_ops: int = 256
    test_ops: tuple[str, ...] = ()
    test_fusion: str = "arbitrary"
    test_patterns: tuple[str, ...] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        backend = backend_named(self.backend, self.test_ops, self.test_fusion,
                                self.test_patterns)
        for func in partitionable_functions(op):
            graph = DataflowGraph(func)
            partition(graph, assign_kernels(graph, backend, self.fusion, self.max_fused_ops))
