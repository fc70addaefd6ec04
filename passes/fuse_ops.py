"""`collage-fuse-ops{max-fused-ops=256}`: TVM's greedy FuseOps as a baseline; every group
becomes a `collage.kernel "tvm"` region.

The post-dominator algorithm of TVM's `GraphPartitioner` over the `DataflowGraph`: each
op starts in its own group; visiting ops in dataflow order, an op fuses with its
immediate post-dominator when every op on every path between them (and the
post-dominator itself, the "sink") passes the phase's condition on the pattern kind of
its group, and the merged group holds at most `max-fused-ops` ops:

- phase 0: an OUT_EWISE_FUSABLE op (conv2d, matmul) fuses into an ELEMWISE post-dominator
  when all ops between are at most BROADCAST (conv2d + bias add + relu);
- every phase: an ELEMWISE / BROADCAST op fuses into an INJECTIVE or COMM_REDUCE
  post-dominator (path at most INJECTIVE; the sink may also be an OUT_EWISE_FUSABLE group);
- phase 1: INJECTIVE and TUPLE ops fuse when every path is at most INJECTIVE;
- phase 2: injective ops fuse into a TUPLE group already absorbed by an injective group.

COMM_REDUCE ops only end groups, OPAQUE ops never fuse. A group has its sink's kind, or
its anchor's (OUT_EWISE_FUSABLE op) when that is larger. A group of only host ops
(`collage.tuple` / `collage.get_item`) stays on the host. Kernels carry no cost (nothing
is estimated).

    %c = collage.conv2d %x, %w ...          %r = collage.kernel "tvm"(%x, %w)
    %b = collage.add %c, %bias ...    ==>        {label = "conv2d_add_relu"} ... { ... }
    %r = collage.relu %b ...
"""

from __future__ import annotations

from dataclasses import dataclass

from collage_xdsl.dialects.collage import GetItemOp, TupleOp
from collage_xdsl.dialects.collage import OpPatternKind as K
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, single
from collage_xdsl.core.regions import Kernel, partition, partitionable_functions
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.errors import CollageError


class _Groups:
    """Union-find over node indices; each root keeps its group's kind and op count.

    As in TVM, a merged group keeps its parent's kind unless the child holds the anchor
    (an OUT_EWISE_FUSABLE op), whose kind then combines in."""

    def __init__(self, graph: DataflowGraph, allowed: int):
        n = len(graph)
        self.parent = list(range(n))
        self.kind = [node.kind if allowed >> i & 1 else K.OPAQUE
                     for i, node in enumerate(graph.nodes)]
        self.anchor = [k == K.OUT_EWISE_FUSABLE for k in self.kind]
        self.size = [1] * n

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def merge(self, child: int, parent: int) -> None:
        c, p = self.find(child), self.find(parent)
        if c != p:
            self.parent[c] = p
            self.size[p] += self.size[c]
            if self.anchor[c]:
                self.anchor[p] = True
                self.kind[p] = max(self.kind[p], self.kind[c])


def fuse_groups(graph: DataflowGraph, max_fused_ops: int = 256, allowed: int | None = None
                ) -> list[int]:
    """TVM FuseOps groups (as node bitsets, dataflow order) of the kernel ops in `allowed`
    (default: all); ops outside `allowed` are barriers and belong to no group."""
    if allowed is None:
        allowed = graph.kernel_nodes
    allowed &= graph.kernel_nodes
    nodes = graph.nodes
    groups = _Groups(graph, allowed)

    def path(src: int, sink: int) -> list[int]:
        """Nodes on a path from src to sink, sink included, src excluded."""
        return [n for n in bits(nodes[src].downstream & ~single(src))
                if n <= sink and nodes[n].downstream >> sink & 1]

    def edge_kind(src: int, sink: int) -> K:
        """The largest edge kind between src and sink: an edge has its consumer's kind,
        except that a BROADCAST consumer reading an operand of its own shape is ELEMWISE."""
        on_path = path(src, sink)
        members = single(src) | sum(single(n) for n in on_path)
        kinds = [K.ELEMWISE]
        for n in on_path:
            node = nodes[n]
            for operand in node.op.operands:  # type: ignore[union-attr]
                if not members >> graph.node_of(operand) & 1:
                    continue
                kind = node.kind
                if kind == K.BROADCAST and operand.type == node.op.results[0].type:
                    kind = K.ELEMWISE
                kinds.append(kind)
        return max(kinds)

    def check(src: int, sink: int, cond) -> bool:
        return all(allowed >> n & 1 and cond(groups.kind[groups.find(n)], n == sink)
                   for n in path(src, sink))

    def commit(src: int, sink: int) -> None:
        for n in [src, *path(src, sink)]:
            groups.merge(n, sink)

    def fused_size(src: int, sink: int) -> int:
        roots = {groups.find(n) for n in [src, *path(src, sink)]}
        return sum(groups.size[r] for r in roots)

    for phase in range(3):
        for i in bits(allowed):
            sink = graph.post_dominators[i]
            kind = groups.kind[groups.find(i)]
            if sink < 0 or kind == K.OPAQUE or not allowed >> sink & 1:
                continue
            sink_kind = groups.kind[groups.find(sink)]
            if phase == 2:
                if kind > K.INJECTIVE or sink_kind == K.TUPLE:
                    continue
                if nodes[sink].kind == K.TUPLE and sink_kind <= K.INJECTIVE and check(
                    i, sink, lambda k, is_sink: k <= K.INJECTIVE
                ):
                    commit(i, sink)
                continue
            if groups.find(i) == groups.find(sink) or fused_size(i, sink) > max_fused_ops:
                continue
            path_kind = edge_kind(i, sink)
            if kind == K.OUT_EWISE_FUSABLE:
                if phase == 0 and path_kind == K.ELEMWISE and check(
                    i, sink, lambda k, is_sink: k <= K.BROADCAST
                ):
                    commit(i, sink)
            elif kind <= K.BROADCAST:
                if (path_kind <= K.INJECTIVE or path_kind == K.COMM_REDUCE) and check(
                    i, sink,
                    lambda k, is_sink: k <= K.INJECTIVE if not is_sink
                    else k <= K.OUT_EWISE_FUSABLE,
                ):
                    commit(i, sink)
            elif kind in (K.INJECTIVE, K.TUPLE):
                if phase == 1 and check(i, sink, lambda k, is_sink: k <= K.INJECTIVE):
                    commit(i, sink)
    members: dict[int, int] = {}
    for i in bits(allowed):
        r = groups.find(i)
        members[r] = members.get(r, 0) | single(i)
    return sorted(members.values(), key=lambda s: s & -s)


def host_only(graph: DataflowGraph, inside: int) -> bool:
    """Whether every op in `inside` is one the host runs (building / projecting tuples)."""
    return all(isinstance(graph.nodes[i].op, TupleOp | GetItemOp) for i in bits(inside))


def fuse_ops_kernels(graph: DataflowGraph, max_fused_ops: int, allowed: int | None = None,
                     backend: str = "tvm") -> list[Kernel]:
    """One `backend` kernel per FuseOps group; host-only groups stay outside."""
    return [
        Kernel(SubGraph(graph, g), backend)
        for g in fuse_groups(graph, max_fused_ops, allowed)
        if not host_only(graph, g)
    ]


@dataclass(frozen=True)
class CollageFuseOpsPass(ModulePass):
    """TVM-style greedy FuseOps: post-dominator fusion groups, each a `tvm` kernel region."""

    name = "collage-fuse-ops"

    max_fused_ops: int = 256

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_fused_ops < 1:
            raise CollageError(
                f"collage-fuse-ops: max-fused-ops must be at least 1, got {self.max_fused_ops}"
            )
        for func in partitionable_functions(op):
            graph = DataflowGraph(func)
            partition(graph, fuse_ops_kernels(graph, self.max_fused_ops))
