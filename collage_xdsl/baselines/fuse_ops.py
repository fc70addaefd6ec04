"""TVM's greedy FuseOps: post-dominator fusion groups over a `DataflowGraph`.

    groups = fuse_groups(graph, max_fused_ops=256)       # node bitsets, dataflow order
    kernels = fuse_ops_kernels(graph, 256)               # one tvm Kernel per group

The algorithm of TVM's `GraphPartitioner`: each op starts in its own group; visiting ops
in dataflow order, an op fuses with its immediate post-dominator when every op on every
path between them (and the post-dominator itself, the "sink") passes the phase's
condition on the pattern kind of its group, and the merged group holds at most
`max_fused_ops` ops:

- phase 0: an OUT_EWISE_FUSABLE op (conv2d, matmul) fuses into an ELEMWISE post-dominator
  when all ops between are at most BROADCAST (conv2d + bias add + relu);
- every phase: an ELEMWISE / BROADCAST op fuses into an INJECTIVE or COMM_REDUCE
  post-dominator (path at most INJECTIVE; the sink may also be an OUT_EWISE_FUSABLE group);
- phase 1: INJECTIVE and TUPLE ops fuse when every path is at most INJECTIVE;
- phase 2: injective ops fuse into a TUPLE group already absorbed by an injective group.

COMM_REDUCE ops only end groups, OPAQUE ops never fuse. A group has its sink's kind, or
its anchor's (OUT_EWISE_FUSABLE op) when that is larger.
"""

from __future__ import annotations

from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, single
from collage_xdsl.core.regions import Kernel
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.dialects.collage import GetItemOp, TupleOp
from collage_xdsl.dialects.collage import OpPatternKind as K
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


class _FuseOps:
    """One run of FuseOps over the kernel ops in `allowed`."""

    def __init__(self, graph: DataflowGraph, max_fused_ops: int, allowed: int):
        self.graph, self.nodes = graph, graph.nodes
        self.max_fused_ops, self.allowed = max_fused_ops, allowed
        self.groups = _Groups(graph, allowed)

    def path(self, src: int, sink: int) -> list[int]:
        """Nodes on a path from src to sink, sink included, src excluded."""
        nodes = self.nodes
        return [n for n in bits(nodes[src].downstream & ~single(src))
                if n <= sink and nodes[n].downstream >> sink & 1]

    def edge_kind(self, src: int, sink: int) -> K:
        """The largest edge kind between src and sink: an edge has its consumer's kind,
        except that a BROADCAST consumer reading an operand of its own shape is ELEMWISE."""
        on_path = self.path(src, sink)
        members = single(src) | sum(single(n) for n in on_path)
        kinds = [K.ELEMWISE]
        for n in on_path:
            node = self.nodes[n]
            for operand in node.op.operands:  # type: ignore[union-attr]
                if not members >> self.graph.node_of(operand) & 1:
                    continue
                kind = node.kind
                if kind == K.BROADCAST and operand.type == node.op.results[0].type:
                    kind = K.ELEMWISE
                kinds.append(kind)
        return max(kinds)

    def check(self, src: int, sink: int, cond) -> bool:
        groups = self.groups
        return all(self.allowed >> n & 1 and cond(groups.kind[groups.find(n)], n == sink)
                   for n in self.path(src, sink))

    def commit(self, src: int, sink: int) -> None:
        for n in [src, *self.path(src, sink)]:
            self.groups.merge(n, sink)

    def fused_size(self, src: int, sink: int) -> int:
        roots = {self.groups.find(n) for n in [src, *self.path(src, sink)]}
        return sum(self.groups.size[r] for r in roots)

    def visit(self, phase: int, i: int) -> None:
        """Fuse op `i` into its post-dominator when the phase's rules allow it."""
        groups, sink = self.groups, self.graph.post_dominators[i]
        kind = groups.kind[groups.find(i)]
        if sink < 0 or kind == K.OPAQUE or not self.allowed >> sink & 1:
            return
        sink_kind = groups.kind[groups.find(sink)]
        if phase == 2:
            if (kind <= K.INJECTIVE and sink_kind != K.TUPLE
                    and self.nodes[sink].kind == K.TUPLE and sink_kind <= K.INJECTIVE
                    and self.check(i, sink, lambda k, is_sink: k <= K.INJECTIVE)):
                self.commit(i, sink)
            return
        if groups.find(i) == groups.find(sink) or self.fused_size(i, sink) > self.max_fused_ops:
            return
        path_kind = self.edge_kind(i, sink)
        if kind == K.OUT_EWISE_FUSABLE:
            fuse = phase == 0 and path_kind == K.ELEMWISE and self.check(
                i, sink, lambda k, is_sink: k <= K.BROADCAST)
        elif kind <= K.BROADCAST:
            fuse = (path_kind <= K.INJECTIVE or path_kind == K.COMM_REDUCE) and self.check(
                i, sink, lambda k, is_sink: k <= K.INJECTIVE if not is_sink
                else k <= K.OUT_EWISE_FUSABLE)
        else:
            fuse = kind in (K.INJECTIVE, K.TUPLE) and phase == 1 and self.check(
                i, sink, lambda k, is_sink: k <= K.INJECTIVE)
        if fuse:
            self.commit(i, sink)

    def run(self) -> list[int]:
        for phase in range(3):
            for i in bits(self.allowed):
                self.visit(phase, i)
        members: dict[int, int] = {}
        for i in bits(self.allowed):
            r = self.groups.find(i)
            members[r] = members.get(r, 0) | single(i)
        return sorted(members.values(), key=lambda s: s & -s)


def fuse_groups(graph: DataflowGraph, max_fused_ops: int = 256, allowed: int | None = None
                ) -> list[int]:
    """TVM FuseOps groups (as node bitsets, dataflow order) of the kernel ops in `allowed`
    (default: all); ops outside `allowed` are barriers and belong to no group."""
    if max_fused_ops < 1:
        raise CollageError(f"max-fused-ops must be at least 1, got {max_fused_ops}")
    allowed = graph.kernel_nodes if allowed is None else allowed & graph.kernel_nodes
    return _FuseOps(graph, max_fused_ops, allowed).run()


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
