"""Phase 4: the chosen sub-graphs of a function become `collage.kernel` regions, and the
inverse (`recover_kernels`).

    form_regions(graph, [Kernel(sub_graph, "tvm", cost=1e-6), ...])

Constants a kernel reads are cloned into its region (kernels may share one); every value
defined inside and read outside is a result, in dataflow order; nested composites become
`collage.composite` regions; a kernel whose values nothing reads is erased; host nodes
(arguments, constants, uncovered tuples) stay outside. The function body is sorted
topologically at the end (`docs/design.md`, "Kernel regions").
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import ConstantLike, IsTerminator, Pure

from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, to_str
from collage_xdsl.core.subgraph import SubGraph, SubGraphConfig
from collage_xdsl.dialects.collage import CompositeOp, KernelOp, RegionOp, YieldOp
from collage_xdsl.errors import CollageError

ANY_SHAPE = SubGraphConfig(max_exits=0, allow_taps=True, max_depth=0)
"""What any kernel region needs: ops only, no arguments, convex (no path out and back in)."""

PRIMITIVE = "collage.primitive"
"""The unit attribute of a composite that `form_composites` made: a node of the dataflow
graph, which `recover_kernels` keeps whole (it inlines the composites of rules)."""


class PartitionError(CollageError):
    """The chosen kernels cannot be rewritten into regions."""


@dataclass(frozen=True)
class Kernel:
    """A chosen kernel: its sub-graph, backend and estimated cost (None = not estimated)."""

    sub_graph: SubGraph
    backend: str
    cost: float | None = None

    @property
    def inside(self) -> int:
        return self.sub_graph.inside


def kernel_label(graph: DataflowGraph, kernel: Kernel) -> str:
    """The sub-graph's label when it labels the whole kernel (a plain labelled sub-graph
    or one composite covering it), else its distinct op names in dataflow order, TVM
    style (`conv2d_add_relu`); a top-level composite node is named by its label."""
    sub = kernel.sub_graph
    if sub.label and all(n.inside == sub.inside for n in sub.nested):
        return sub.label
    names: list[str] = []
    for i in bits(kernel.inside):
        node = graph.nodes[i]
        if node.needs_kernel:
            op = node.op
            short = op.label.data if isinstance(op, CompositeOp) else op.name  # type: ignore
            short = short.removeprefix("collage.")
            if short not in names:
                names.append(short)
    return "_".join(names)


def partitionable_functions(module: ModuleOp) -> list[FuncOp]:
    """The functions of `module` a partitioner rewrites: those with a body, except kernel
    functions that `collage-outline` made. A function that already holds kernel regions
    is an error (partition once)."""
    found = []
    for op in module.ops:
        if not isinstance(op, FuncOp) or op.is_declaration or "collage.kernel" in op.attributes:
            continue
        if any(isinstance(inner, KernelOp) for inner in op.body.walk()):
            raise PartitionError(
                f"@{op.sym_name.data} already holds collage.kernel regions; a function is "
                "partitioned once"
            )
        found.append(op)
    return found


def form_all_regions(module: ModuleOp, kernels_of: Callable[[DataflowGraph], Sequence[Kernel]]
                     ) -> None:
    """`form_regions` in every partitionable function of `module`, with the kernels
    `kernels_of(graph)` chooses for its dataflow graph."""
    for func in partitionable_functions(module):
        graph = DataflowGraph(func)
        form_regions(graph, kernels_of(graph))


def form_regions(graph: DataflowGraph, kernels: Sequence[Kernel]) -> None:
    """Wrap each kernel's sub-graph of `graph.func` in a `collage.kernel` region (a dead
    kernel of pure ops is erased)."""
    covered = 0
    for k in kernels:
        shared = k.inside & covered & ~graph.constants  # sharing a constant is fine
        if shared:
            raise PartitionError(
                f"kernels overlap on nodes {to_str(shared)} of "
                f"@{graph.func.sym_name.data}"
            )
        covered |= k.inside
        why = k.sub_graph.why_invalid(ANY_SHAPE)
        if why is not None:
            raise PartitionError(
                f"kernel for {k.backend} on nodes {to_str(k.inside)} of "
                f"@{graph.func.sym_name.data} is not a valid sub-graph: {why}"
            )
    plans = [(k, _ops_of(graph, k.sub_graph)) for k in kernels]
    constants = _constants_read(graph, covered)
    for k, (ops, nested) in sorted(plans, key=lambda e: -e[0].inside.bit_length()):
        label = kernel_label(graph, k)
        cost = k.cost

        def make(inputs, types, region, k=k, label=label, cost=cost) -> RegionOp:
            return KernelOp(k.backend, inputs, types, region, label, cost)

        kernel = _wrap(ops, nested, make)
        if not kernel.results and all(op.has_trait(Pure) or isinstance(op, (CompositeOp, YieldOp))
                                      for op in kernel.body.walk()):
            Rewriter.erase_op(kernel)
    _erase_unused(constants)
    _topological_sort(graph.func.body.block)


def form_composites(graph: DataflowGraph, sub_graphs: Sequence[SubGraph]) -> list[CompositeOp]:
    """Wrap each labelled sub-graph of `graph.func` in a `collage.composite` region of the
    function body: a primitive function, one node of the dataflow graph until partitioning
    puts it whole in a kernel. The sub-graphs must not overlap and their contraction must
    stay acyclic (`collage_xdsl.rewrite.composites` chooses them so)."""
    covered = 0
    for sub in sub_graphs:
        covered |= sub.inside
    constants = _constants_read(graph, covered)
    made = []
    for sub in sub_graphs:
        ops, nested = _ops_of(graph, sub)
        composite = _wrap(ops, nested,
                          lambda i, t, r, label=sub.label: CompositeOp(label, i, t, r))
        composite.attributes[PRIMITIVE] = UnitAttr()
        made.append(composite)
    _erase_unused(constants)
    _topological_sort(graph.func.body.block)
    return made  # type: ignore[return-value]


def _constants_read(graph: DataflowGraph, covered: int) -> set[Operation]:
    """The constant ops that the ops of the nodes `covered` read (cloned into regions)."""
    return {
        v.owner for i in bits(covered) if graph.nodes[i].needs_kernel
        for v in graph.nodes[i].op.operands  # type: ignore[union-attr]
        if isinstance(v.owner, Operation) and v.owner.has_trait(ConstantLike)
    }


def _erase_unused(constants: set[Operation]) -> None:
    for c in constants:
        if not any(r.uses for r in c.results):
            Rewriter.erase_op(c)


_Plan = tuple[list[Operation], list[tuple[str, "_Plan"]]]


def _ops_of(graph: DataflowGraph, sub_graph: SubGraph) -> _Plan:
    """The non-constant ops of a sub-graph in dataflow order, and its nested composites."""
    inside = sub_graph.inside
    ops = [
        graph.nodes[i].op
        for i in bits(inside)
        if graph.nodes[i].needs_kernel
    ]
    nested = [(s.label, _ops_of(graph, s)) for s in sub_graph.nested]
    return ops, nested  # type: ignore[return-value]


def _wrap(
    ops: list[Operation],
    nested: list[tuple[str, _Plan]],
    make: Callable[[list[SSAValue], list[Attribute], Region], RegionOp],
) -> RegionOp:
    """Move `ops` (one block, dataflow order) into a new region op built by `make`."""
    for label, (inner_ops, inner_nested) in nested:
        if not set(inner_ops) <= set(ops):
            raise PartitionError(f"composite {label!r} is not part of its enclosing kernel")
        last = max(ops.index(o) for o in inner_ops)
        composite = _wrap(
            inner_ops, inner_nested, lambda i, t, r, label=label: CompositeOp(label, i, t, r)
        )
        inner = set(inner_ops)
        ops = [
            composite if n == last else o
            for n, o in enumerate(ops)
            if o not in inner or n == last
        ]
    op_set = set(ops)
    new_block = Block()
    mapping: dict[SSAValue, SSAValue] = {}
    inputs: list[SSAValue] = []
    cloned: list[Operation] = []
    for op in ops:
        for v in op.operands:
            if v in mapping or (isinstance(v.owner, Operation) and v.owner in op_set):
                continue
            owner = v.owner
            if isinstance(owner, Operation) and owner.has_trait(ConstantLike):
                clone = owner.clone()
                cloned.append(clone)
                mapping[v] = clone.results[v.index]  # type: ignore[attr-defined]
            else:
                inputs.append(v)
                mapping[v] = new_block.insert_arg(v.type, len(new_block.args))
                if v.name_hint:
                    mapping[v].name_hint = v.name_hint
    exits = [
        r for op in ops for r in op.results
        if any(use.operation not in op_set for use in r.uses)
    ]
    region_op = make(inputs, [r.type for r in exits], Region(new_block))
    Rewriter.insert_op(region_op, InsertPoint.after(ops[-1]))
    for r, out in zip(exits, region_op.results):
        r.replace_uses_with_if(out, lambda use: use.operation not in op_set)
    for c in cloned:
        new_block.add_op(c)
    for op in ops:
        op.detach()
        new_block.add_op(op)
        for idx, v in enumerate(op.operands):
            if v in mapping:
                op.operands[idx] = mapping[v]
    new_block.add_op(YieldOp(exits))
    _topological_sort(new_block)
    return region_op


def _topological_sort(block: Block) -> None:
    """Reorder `block` so every op follows the ops of this block it reads (stable)."""
    ops = list(block.ops)
    position = {op: n for n, op in enumerate(ops)}
    done: set[Operation] = set()
    order: list[Operation] = []
    for root in ops:
        if root in done or root.has_trait(IsTerminator):
            continue
        stack = [(root, iter(_producers(root, position)))]
        done.add(root)
        while stack:
            op, it = stack[-1]
            for p in it:
                if p not in done:
                    done.add(p)
                    stack.append((p, iter(_producers(p, position))))
                    break
            else:
                stack.pop()
                order.append(op)
    order += [op for op in ops if op.has_trait(IsTerminator)]
    if order == ops:
        return
    for op in ops:
        op.detach()
    for op in order:
        block.add_op(op)


def _producers(op: Operation, position: Mapping[Operation, int]) -> list[Operation]:
    found = []
    for v in op.operands:
        owner = v.owner
        if isinstance(owner, Operation) and owner in position:
            found.append(owner)
    return sorted(set(found), key=position.__getitem__)


_Region = tuple[str, list[Operation], list["_Region"]]
"""A region's label, its ops (constants aside) and its nested composites."""


def recover_kernels(func: FuncOp) -> tuple[DataflowGraph, list[Kernel]]:
    """Inline the `collage.kernel` regions of `func` (composites included, but for
    `PRIMITIVE` ones: nodes) and return its dataflow graph with one kernel per region: the
    inverse of `form_regions`."""
    found: list[tuple[KernelOp, _Region]] = []
    for op in list(func.body.block.ops):
        if isinstance(op, KernelOp):
            found.append((op, _inline(op)))
    graph = DataflowGraph(func)

    def sub_graph(region: _Region) -> SubGraph:
        label, ops, nested = region
        inside = 0
        for op in ops:
            inside |= 1 << graph.node_of(op)
        return SubGraph(graph, inside, label, tuple(sub_graph(n) for n in nested))

    kernels = [Kernel(sub_graph(region), op.backend.data,
                      None if op.cost is None else op.cost.value.data)
               for op, region in found]
    return graph, kernels


def _inline(region_op: RegionOp) -> _Region:
    """Move the body of `region_op` before it, in its place; the op is erased."""
    label = region_op.label.data if region_op.label is not None else ""  # type: ignore
    body = region_op.inline()
    ops: list[Operation] = []
    nested: list[_Region] = []
    for op in body:
        if isinstance(op, CompositeOp) and PRIMITIVE not in op.attributes:
            inner = _inline(op)
            nested.append(inner)
            ops += inner[1]
        elif not op.has_trait(ConstantLike):
            ops.append(op)
    return label, ops, nested
