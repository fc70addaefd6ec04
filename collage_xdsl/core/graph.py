"""DataflowGraph: the indexed dataflow graph of one `func.func` body (Collage's IndexedGraph).

Nodes are the block arguments, constants and ops of the function body (the `func.return`
terminator is not a node; it marks the nodes it returns as graph outputs). Nodes are
numbered in post-DFS order from the returned values, so index ``i < j`` means node ``j``
cannot influence node ``i``; ops that do not reach the return and unused arguments follow.
A multi-result op (`collage.split`) is one node with several results.

Per node the graph keeps its producer and consumer indices, their bitsets, the bitset of
every node reachable from it (``downstream``), and the immediate dominator and
post-dominator (the graph's single exit is a virtual sink after every graph output).
Beyond the contract: the ``arguments`` / ``constants`` / ``kernel_nodes`` bitsets and
``users_of(value)``, ``in`` and `values_read(op)`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import cached_property

from xdsl.dialects.builtin import ShapedType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.traits import ConstantLike

from collage_xdsl.core.index_set import single
from collage_xdsl.dialects.collage import CompositeOp, GraphOp, OpPatternKind, YieldOp
from collage_xdsl.errors import CollageError


TIMING_VALUE_ELEMENTS = 16
"""A constant of more elements is a weight: a kernel's run time does not depend on its
values (`DataflowGraph.timing_descriptors`); smaller ones (shapes, axes, scales) may."""


class GraphError(CollageError):
    """A function cannot be indexed as a dataflow graph."""


class Node:
    """One dataflow node: a block argument (``value``) or an op (``op``, constants included).

    Beyond the contract: ``input_set`` / ``output_set`` are ``inputs`` / ``outputs`` as
    bitsets, ``values`` the SSA values the node defines and ``name`` a label for messages.
    """

    __slots__ = (
        "index", "value", "op", "inputs", "outputs", "input_set", "output_set",
        "is_graph_output", "downstream", "kind",
    )

    def __init__(self, value: SSAValue | None, op: Operation | None):
        self.index = -1
        self.value = value
        self.op = op
        self.inputs: list[int] = []
        self.outputs: list[int] = []
        self.input_set = 0
        self.output_set = 0
        self.is_graph_output = False
        self.downstream = 0
        self.kind = op_kind(op)

    @property
    def is_arg(self) -> bool:
        return self.op is None

    @property
    def is_constant(self) -> bool:
        return self.op is not None and self.op.has_trait(ConstantLike)

    @property
    def needs_kernel(self) -> bool:
        """Ops other than constants need a kernel; arguments and constants do not."""
        return self.op is not None and not self.is_constant

    @property
    def values(self) -> tuple[SSAValue, ...]:
        """The SSA values this node defines (one per op result; the argument itself)."""
        if self.op is None:
            assert self.value is not None
            return (self.value,)
        return tuple(self.op.results)

    @property
    def name(self) -> str:
        """``%arg0`` for an argument, ``collage.conv2d#5`` for the op at node 5."""
        if self.op is None:
            assert isinstance(self.value, BlockArgument)
            return f"%{self.value.name_hint or f'arg{self.value.index}'}"
        return f"{self.op.name}#{self.index}"

    def __repr__(self) -> str:
        return f"Node({self.name}, inputs={self.inputs}, outputs={self.outputs})"


def op_kind(op: Operation | None) -> OpPatternKind:
    """A graph op's pattern kind; a composite's is the largest of its ops' (a primitive
    function of `collage_xdsl.rewrite.composites` is one node); OPAQUE for other ops."""
    if isinstance(op, GraphOp):
        return op.PATTERN_KIND
    if isinstance(op, CompositeOp):
        return max((op_kind(inner) for inner in op.body.block.ops
                    if not isinstance(inner, YieldOp)), default=OpPatternKind.ELEMWISE)
    return OpPatternKind.OPAQUE


def values_read(op: Operation) -> Iterator[SSAValue]:
    """The values ``op`` reads: its operands, then those its regions use (if any)."""
    yield from op.operands
    for inner in op.walk():
        if inner is not op:
            yield from inner.operands


class DataflowGraph:
    """The dataflow graph of ``func``'s single-block body, in post-DFS order.

    ``dominators[i]`` is node i's immediate dominator, -1 when only the virtual source
    dominates it; constants are weights (inlined into kernels), not dataflow sources, so
    they do not count as predecessors here. ``post_dominators[i]`` is node i's immediate
    post-dominator, -1 when only the virtual sink after the graph outputs post-dominates it.
    """

    def __init__(self, func: FuncOp):
        self.func = func
        blocks = list(func.body.blocks)
        if len(blocks) != 1:
            raise GraphError(
                f"function @{func.sym_name.data} has {len(blocks)} blocks; "
                "a dataflow graph needs exactly one"
            )
        raw, raw_inputs, order = self._read_block(blocks[0])
        new_index = {k: i for i, k in enumerate(order)}
        self.nodes: list[Node] = [raw[k] for k in order]
        self._index: dict[Operation | SSAValue, int] = {}
        for i, node in enumerate(self.nodes):
            node.index = i
            node.inputs = [new_index[p] for p in raw_inputs[order[i]]]
            for p in node.inputs:
                if p >= i:
                    raise GraphError(
                        f"{node.op.name if node.op else 'a value'} in "
                        f"@{func.sym_name.data} depends on itself (a dataflow cycle)"
                    )
                node.input_set |= single(p)
            if node.op is not None:
                self._index[node.op] = i
            for v in node.values:
                self._index[v] = i
        self._link()
        self.dominators = self._dominators()
        self.post_dominators = self._post_dominators()

    def _read_block(self, block) -> tuple[list[Node], list[list[int]], list[int]]:
        """The block's nodes in block order (arguments, then ops), each node's producers
        by that order, and the post-DFS order from the returned values; graph outputs are
        marked."""
        name = self.func.sym_name.data
        ops = list(block.ops)
        ret = ops.pop() if ops and isinstance(ops[-1], ReturnOp) else None
        raw = [Node(a, None) for a in block.args] + [Node(None, op) for op in ops]
        producer: dict[SSAValue, int] = {}
        for k, node in enumerate(raw):
            for v in node.values:
                producer[v] = k
        raw_inputs: list[list[int]] = [[] for _ in raw]
        for k, node in enumerate(raw):
            if node.op is None:
                continue
            for v in values_read(node.op):
                p = producer.get(v)
                if p is None:
                    if v in node.op.operands:
                        raise GraphError(f"{node.op.name} in @{name} uses a value defined "
                                         "outside the function body")
                    continue  # defined inside a region of this op
                if p not in raw_inputs[k]:
                    raw_inputs[k].append(p)
        returned: list[int] = []
        for v in ret.operands if ret is not None else ():
            p = producer.get(v)
            if p is None:
                raise GraphError(f"func.return in @{name} returns a value defined outside "
                                 "the function body")
            raw[p].is_graph_output = True
            returned.append(p)
        args = len(block.args)
        roots = returned + list(range(args, len(raw))) + list(range(args))
        return raw, raw_inputs, self._post_dfs(raw_inputs, roots)

    def _link(self) -> None:
        """Consumers, downstream sets and the argument / constant / kernel-node sets."""
        for node in self.nodes:
            for p in node.inputs:
                producer_node = self.nodes[p]
                producer_node.outputs.append(node.index)
                producer_node.output_set |= single(node.index)
        for node in reversed(self.nodes):
            down = single(node.index)
            for c in node.outputs:
                down |= self.nodes[c].downstream
            node.downstream = down
        self.arguments = 0
        """Bitset of the block-argument nodes."""
        self.constants = 0
        """Bitset of the constant nodes."""
        for node in self.nodes:
            if node.is_arg:
                self.arguments |= single(node.index)
            elif node.is_constant:
                self.constants |= single(node.index)
        self.kernel_nodes = ((1 << len(self.nodes)) - 1) & ~(self.arguments | self.constants)
        """Bitset of the nodes that need a kernel."""

    @staticmethod
    def _post_dfs(inputs: list[list[int]], roots: list[int]) -> list[int]:
        """Provisional indices in post-DFS order (inputs first, in operand order)."""
        visited = [False] * len(inputs)
        order: list[int] = []
        for root in roots:
            if visited[root]:
                continue
            visited[root] = True
            stack = [(root, iter(inputs[root]))]
            while stack:
                k, it = stack[-1]
                for p in it:
                    if not visited[p]:
                        visited[p] = True
                        stack.append((p, iter(inputs[p])))
                        break
                else:
                    stack.pop()
                    order.append(k)
        return order

    @staticmethod
    def _lca(tree: list[int], depth: list[int], a: int, b: int) -> int:
        """Lowest common ancestor of ``a`` and ``b`` in a tree of parents (-1 = root)."""
        while a != b:
            if (depth[a] if a >= 0 else 0) >= (depth[b] if b >= 0 else 0):
                a = tree[a]
            else:
                b = tree[b]
        return a

    def _dominators(self) -> list[int]:
        idom = [-1] * len(self.nodes)
        depth = [1] * len(self.nodes)
        for node in self.nodes:
            preds = [p for p in node.inputs if not self.nodes[p].is_constant]
            if node.is_constant or not preds:
                continue
            d = preds[0]
            for p in preds[1:]:
                d = self._lca(idom, depth, d, p)
            idom[node.index] = d
            depth[node.index] = (depth[d] if d >= 0 else 0) + 1
        return idom

    def _post_dominators(self) -> list[int]:
        ipdom = [-1] * len(self.nodes)
        depth = [1] * len(self.nodes)
        for node in reversed(self.nodes):
            if node.is_graph_output or not node.outputs:
                continue  # the virtual sink is a successor
            d = node.outputs[0]
            for s in node.outputs[1:]:
                d = self._lca(ipdom, depth, d, s)
            ipdom[node.index] = d
            depth[node.index] = (depth[d] if d >= 0 else 0) + 1
        return ipdom

    @cached_property
    def descriptors(self) -> list[str]:
        """Per node, its structure without names: op name, attributes and result types
        (constants include their value, weights by content key); arguments: their type."""
        return [_describe(node) for node in self.nodes]

    @cached_property
    def timing_descriptors(self) -> list[str]:
        """`descriptors`, except that a constant of more than `TIMING_VALUE_ELEMENTS`
        elements (a weight) is described by its type alone: what a kernel's run time
        depends on."""
        return [f"constant->({node.op.results[0].type})"
                if node.is_constant and _elements(node.op.results[0].type)
                > TIMING_VALUE_ELEMENTS else d
                for node, d in zip(self.nodes, self.descriptors)]

    def __len__(self) -> int:
        return len(self.nodes)

    def node_of(self, op_or_value: Operation | SSAValue) -> int:
        """The index of the node that is ``op_or_value`` or defines it."""
        try:
            return self._index[op_or_value]
        except (KeyError, TypeError):
            what = op_or_value.name if isinstance(op_or_value, Operation) else "value"
            raise GraphError(
                f"{what} is not in the body of @{self.func.sym_name.data}"
            ) from None

    def __contains__(self, op_or_value: object) -> bool:
        return op_or_value in self._index

    def does_all_work(self, inside: int) -> bool:
        """Does a kernel of the nodes ``inside`` do all of the function's work (every node
        that needs a kernel)? The runtime then calls it directly: it runs as it runs alone."""
        return self.kernel_nodes & ~inside == 0

    def users_of(self, value: SSAValue) -> set[int]:
        """The nodes that use ``value`` (directly or inside their regions); -1 for the return."""
        users: set[int] = set()
        for use in value.uses:
            op = use.operation
            while (parent := op.parent_op()) is not None and parent is not self.func:
                op = parent
            users.add(self._index.get(op, -1))
        return users

    def __repr__(self) -> str:
        return f"DataflowGraph(@{self.func.sym_name.data}, {len(self.nodes)} nodes)"


def _describe(node: Node) -> str:
    if node.op is None:
        return f"arg:{node.value.type}"
    op = node.op
    attrs = sorted({**op.properties, **op.attributes}.items())
    return (f"{op.name}{{{','.join(f'{k}={v}' for k, v in attrs)}}}"
            f"->({','.join(str(r.type) for r in op.results)})")


def _elements(type: Attribute) -> int:
    """Elements of a shaped type (1 for a scalar or an unshaped type)."""
    return math.prod(type.get_shape()) if isinstance(type, ShapedType) else 1
