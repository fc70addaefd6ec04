"""SubGraph: the dataflow nodes inside a candidate kernel, what derives from them, and
whether they make a valid kernel.

    sub = SubGraph(graph, of([2, 3]))
    sub.entry, sub.exit, sub.input, sub.output     # node sets, as the design doc defines
    sub.why_invalid(SubGraphConfig(max_exits=1))   # None, or why not
    sub.extract()                                  # a module with the kernel function

Constants are weights every kernel carries: an outside constant feeding the sub-graph is
cloned in, an inside one is never an exit. Sub-graphs are closed under disjoint union and
under wrapping by a label (nested composites, extracted as `collage.composite` regions).
"""
from __future__ import annotations

import hashlib
import heapq
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, total_ordering

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.traits import SymbolTable

from collage_xdsl.core.graph import DataflowGraph, values_read
from collage_xdsl.core.index_set import bits, count, first, single, to_str
from collage_xdsl.dialects.collage import CompositeOp, OpPatternKind, YieldOp
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.structure import function_hash
from collage_xdsl.ir.tensors import tensor_bytes


class SubGraphError(CollageError):
    """A sub-graph operation was asked of sub-graphs that do not allow it."""


@dataclass(frozen=True)
class SubGraphConfig:
    """Which sub-graphs count as valid kernels.

    max_exits: most exit nodes (0 = unbounded); allow_taps: whether an exit node may also
    feed another inside node; max_depth: longest path of kernel ops (0 = unbounded).
    """

    max_exits: int = 1
    allow_taps: bool = False
    max_depth: int = 0


_ANY_SHAPE = SubGraphConfig(max_exits=0, allow_taps=True, max_depth=0)
"""Only the structural rules: what `extract` needs."""


def _union_labels(a: str, b: str) -> str:
    if not a or a == b:
        return b
    return a if not b else f"{a}+{b}"


@total_ordering
class SubGraph:
    """The nodes ``inside`` a sub-graph of ``graph``, with a ``label`` and ``nested``
    labelled sub-graphs (composites). Immutable; derived sets are computed once.

    Equal, hashed and ordered by (inside, label, nested); ordering starts with the
    lowest inside index, as the search wants.
    """

    def __init__(self, graph: DataflowGraph, inside: int, label: str = "",
                 nested: tuple[SubGraph, ...] = ()):
        if inside < 0 or inside >> len(graph):
            raise SubGraphError(
                f"sub-graph {label!r} names nodes {to_str(inside & ~((1 << len(graph)) - 1))} "
                f"beyond the {len(graph)} nodes of @{graph.func.sym_name.data}"
            )
        for sub in nested:
            if sub.graph is not graph:
                raise SubGraphError(f"nested sub-graph {sub!r} is of another dataflow graph")
        self.graph = graph
        self.inside = inside
        self.label = label
        self.nested = tuple(sorted(nested))
        self._validity: dict[SubGraphConfig, str | None] = {}

    # -- identity ------------------------------------------------------------------

    @cached_property
    def _key(self) -> tuple:
        return (first(self.inside), self.inside, self.label, tuple(s._key for s in self.nested))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SubGraph) and self._key == other._key

    def __lt__(self, other: SubGraph) -> bool:
        return self._key < other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        nested = "".join(f", {s!r}" for s in self.nested)
        return f"SubGraph({self.label!r}, inside={to_str(self.inside)}{nested})"

    # -- derived sets -------------------------------------------------------------

    @cached_property
    def _frontier(self) -> tuple[int, int, int, int]:
        """(entry, exit, input, output)."""
        nodes = self.graph.nodes
        outside = ~self.inside
        sources = outside & ~self.graph.constants
        entry = exit_ = input_ = output = 0
        for i in bits(self.inside & ~self.graph.constants):
            node = nodes[i]
            ins = node.input_set & sources
            if ins:
                entry |= single(i)
                input_ |= ins
            outs = node.output_set & outside
            if outs or node.is_graph_output:
                exit_ |= single(i)
                output |= outs
        return entry, exit_, input_, output

    @property
    def entry(self) -> int:
        return self._frontier[0]

    @property
    def exit(self) -> int:
        return self._frontier[1]

    @property
    def input(self) -> int:
        return self._frontier[2]

    @property
    def output(self) -> int:
        return self._frontier[3]

    @cached_property
    def depth(self) -> int:
        """The most kernel ops on one dataflow path inside (constants count 0)."""
        nodes, kernel = self.graph.nodes, self.graph.kernel_nodes
        depth: dict[int, int] = {}
        for i in bits(self.inside):
            node = nodes[i]
            below = max((depth[p] for p in node.inputs if p in depth), default=0)
            depth[i] = below + (kernel >> i & 1)  # needs_kernel, without a trait lookup
        return max(depth.values(), default=0)

    @cached_property
    def kind(self) -> OpPatternKind:
        """The largest pattern kind of the inside ops that need a kernel (ELEMWISE if none)."""
        nodes = self.graph.nodes
        kinds = [nodes[i].kind for i in bits(self.inside & self.graph.kernel_nodes)]
        return max(kinds, default=OpPatternKind.ELEMWISE)

    @cached_property
    def nbytes(self) -> int:
        """Bytes of the tensors a kernel of this sub-graph holds and defines: the values of
        its nodes and the constants it reads (cloned in)."""
        graph = self.graph
        held = self.inside
        for i in bits(self.inside):
            held |= graph.nodes[i].input_set & graph.constants
        return sum(tensor_bytes(v.type) for i in bits(held) for v in graph.nodes[i].values)

    # -- validity -----------------------------------------------------------------

    def why_invalid(self, config: SubGraphConfig = SubGraphConfig()) -> str | None:
        """Why this is not a valid kernel under ``config``, or None when it is."""
        if config not in self._validity:
            self._validity[config] = self._check(config)
        return self._validity[config]

    def is_valid(self, config: SubGraphConfig = SubGraphConfig()) -> bool:
        return self.why_invalid(config) is None

    def _check(self, config: SubGraphConfig) -> str | None:
        graph, nodes = self.graph, self.graph.nodes
        if not self.inside & graph.kernel_nodes:
            return "it holds no op that needs a kernel"
        if self.inside & graph.arguments:
            return f"it holds function arguments {to_str(self.inside & graph.arguments)}"
        if config.max_exits > 0 and count(self.exit) > config.max_exits:
            return f"{count(self.exit)} exits exceed the maximum {config.max_exits}"
        if config.max_depth > 0 and self.depth > config.max_depth:
            return f"depth {self.depth} exceeds the maximum {config.max_depth}"
        if not config.allow_taps:
            for i in bits(self.exit):
                if nodes[i].output_set & self.inside:
                    return f"exit node {i} also feeds inside nodes (a tap)"
        reach = 0
        for o in bits(self.output):
            reach |= nodes[o].downstream
        if reach & self.inside:
            return (f"a path leaves it and re-enters at nodes "
                    f"{to_str(reach & self.inside)}")
        union = 0
        for sub in self.nested:
            if sub.inside & ~self.inside:
                return f"nested {sub.label!r} is not contained in it"
            if sub.inside & union & ~graph.constants:  # sharing a constant is fine
                return f"nested {sub.label!r} overlaps another nested sub-graph"
            union |= sub.inside
            why = sub.why_invalid(config)
            if why is not None:
                return f"nested {sub.label!r} is invalid: {why}"
        return None

    # -- combinators ---------------------------------------------------------------

    def overlaps(self, other: SubGraph) -> bool:
        """Whether both hold a node other than a constant. A constant is cloned into every
        kernel that reads it, so kernels may share one (after the importer's CSE, equal
        weights are one constant read by many ops)."""
        return bool(self.inside & other.inside & ~self.graph.constants)

    def disjoint_union(self, other: SubGraph) -> SubGraph:
        """The sub-graph of both sides' nodes, keeping both sides' nested sub-graphs; the
        sides must not overlap (they may share constants)."""
        if other.graph is not self.graph:
            raise SubGraphError(f"cannot unite {self!r} with {other!r} of another graph")
        if self.overlaps(other):
            raise SubGraphError(
                f"cannot unite {self!r} and {other!r}: they share nodes "
                f"{to_str(self.inside & other.inside & ~self.graph.constants)}"
            )
        return SubGraph(self.graph, self.inside | other.inside,
                        _union_labels(self.label, other.label), self.nested + other.nested)

    def with_label(self, label: str) -> SubGraph:
        """The same nodes wrapped as one nested composite called ``label``."""
        inner = SubGraph(self.graph, self.inside, label, self.nested)
        return SubGraph(self.graph, self.inside, label, (inner,))

    def are_touching(self, other: SubGraph) -> bool:
        """Not overlapping, and some exit of one feeds an entry of the other."""
        return not self.overlaps(other) and bool(
            self.output & other.inside or other.output & self.inside
        )

    # -- extraction ----------------------------------------------------------------

    def extract(self, name: str = "kernel") -> ModuleOp:
        """A module with one ``func.func @name`` computing just this sub-graph.

        Parameters: one per non-constant value read from outside, in order of first
        use; constants (inside, or outside and feeding it) are cloned in; results: every
        exit value used outside or returned by the graph, by node index then result
        number (see `input_values` / `output_values`). Nested sub-graphs become
        `collage.composite` regions. The original function is not touched.
        """
        return self._extract(name)[0]

    @cached_property
    def _interface(self) -> tuple[tuple[SSAValue, ...], tuple[SSAValue, ...]]:
        _, inputs, outputs = self._extract("kernel")
        return inputs, outputs

    @property
    def input_values(self) -> tuple[SSAValue, ...]:
        """The values of the original function bound to the extracted parameters, in order."""
        return self._interface[0]

    @property
    def output_values(self) -> tuple[SSAValue, ...]:
        """The values of the original function the extracted function returns, in order."""
        return self._interface[1]

    def structural_hash(self) -> str:
        """A hex digest of the extracted kernel's structure: op names, attributes, types and
        constants (weights by their content key), not SSA names, node indices or labels."""
        return self._structural_hash

    @cached_property
    def _structural_hash(self) -> str:
        if not any(_has_body(self.graph.nodes[i].op) for i in bits(self.inside)):
            return self._graph_hashes[0]
        module = self._extract("kernel")[0]
        return function_hash((f for f in module.ops if isinstance(f, FuncOp)), names=True)

    @cached_property
    def timing_hash(self) -> str:
        """`structural_hash` with weights described by their type alone
        (`DataflowGraph.timing_descriptors`): equal for kernels that differ only in their
        weights' values, such as a model's repeated layers, which run equally fast. A
        sub-graph with calls or composite nodes has its structural hash."""
        if not any(_has_body(self.graph.nodes[i].op) for i in bits(self.inside)):
            return self._graph_hashes[1]
        return self.structural_hash()

    @cached_property
    def _graph_hashes(self) -> tuple[str, str]:
        """The structural and the timing hash of a sub-graph without calls or composite
        nodes, read straight off the graph's cached node descriptors (no extraction), in
        one walk: the kernel ops in dataflow order, each with its path of nested composites
        (ordinal and label) and its operands as parameter / constant / local numbers, then
        the results. The two differ in how they describe constants."""
        graph, desc, timing = self.graph, self.graph.descriptors, self.graph.timing_descriptors
        h = hashlib.blake2b(digest_size=16, person=b"graph")
        t = hashlib.blake2b(digest_size=16, person=b"graph")
        composite: dict[int, str] = {}

        def both(text: str) -> None:
            h.update(text.encode())
            t.update(text.encode())

        def nest(sub: SubGraph, path: str) -> None:
            for k, inner in enumerate(sorted(sub.nested, key=lambda s: first(s.inside))):
                inner_path = f"{path}/{k}:{inner.label}"
                for i in bits(inner.inside):
                    composite[i] = inner_path
                nest(inner, inner_path)

        nest(self, "")
        local: dict[SSAValue, str] = {}
        params: dict[SSAValue, str] = {}
        consts: dict[int, str] = {}

        def ref(v: SSAValue) -> str:
            if v in local:
                return local[v]
            p = graph.node_of(v)
            if graph.nodes[p].is_constant:
                if p not in consts:
                    consts[p] = f"c{len(consts)}"
                    h.update(f"{consts[p]}={desc[p]};".encode())
                    t.update(f"{consts[p]}={timing[p]};".encode())
                return consts[p]
            if v not in params:
                params[v] = f"p{len(params)}"
                both(f"{params[v]}:{v.type};")
            return params[v]

        for i in bits(self.inside & graph.kernel_nodes):
            op = graph.nodes[i].op
            assert op is not None
            both(f"{desc[i]}[{composite.get(i, '')}]"
                 f"({','.join(ref(v) for v in values_read(op))});")
            for r in op.results:
                local[r] = f"%{len(local)}"
        outputs = [local[v] for i in bits(self.exit) for v in graph.nodes[i].values
                   if _escapes(graph, v, self.inside)]
        both(f"return({','.join(outputs)})")
        return h.hexdigest(), t.hexdigest()

    def _extract(self, name: str) -> tuple[ModuleOp, tuple[SSAValue, ...], tuple[SSAValue, ...]]:
        why = self.why_invalid(_ANY_SHAPE)
        if why is not None:
            raise SubGraphError(f"cannot extract {self!r} from "
                                f"@{self.graph.func.sym_name.data}: {why}")
        body = Block()
        params: dict[SSAValue, SSAValue] = {}

        def param(v: SSAValue) -> SSAValue:
            if v not in params:
                params[v] = body.insert_arg(v.type, len(body.args))
            return params[v]

        local = _emit(self.graph, self, body, param)
        outputs = tuple(v for i in bits(self.exit) for v in self.graph.nodes[i].values
                        if _escapes(self.graph, v, self.inside))
        body.add_op(ReturnOp(*(local[v] for v in outputs)))
        func = FuncOp(name, ([a.type for a in body.args], [v.type for v in outputs]),
                      Region(body))
        return ModuleOp([func, *self._callees(func)]), tuple(params), outputs

    def _callees(self, func: FuncOp) -> list[FuncOp]:
        """Clones of the functions ``func`` calls, transitively, from the graph's module."""
        module = self.graph.func.parent_op()
        found: dict[str, FuncOp] = {}
        todo = [func]
        while todo:
            for call in todo.pop().walk():
                if not isinstance(call, CallOp) or call.callee.string_value() in found:
                    continue
                callee = SymbolTable.lookup_symbol(module, call.callee) if module else None
                if not isinstance(callee, FuncOp):
                    raise SubGraphError(f"cannot extract {self!r}: func.call to "
                                        f"{call.callee} has no function in the module")
                found[call.callee.string_value()] = callee.clone()
                todo.append(callee)
        return list(found.values())


def _has_body(op: Operation | None) -> bool:
    """Whether `op` computes what its node descriptor does not show: a call, or a
    composite's region (hashed from the extracted kernel instead)."""
    return isinstance(op, CallOp) or (op is not None and bool(op.regions))


def _escapes(graph: DataflowGraph, value: SSAValue, inside: int) -> bool:
    """Whether ``value`` is used outside ``inside`` or returned by the graph."""
    return any(u < 0 or not inside >> u & 1 for u in graph.users_of(value))


def _units(graph: DataflowGraph, sub: SubGraph) -> list[int | SubGraph]:
    """The kernel ops of ``sub`` outside its nested sub-graphs, and those nested sub-graphs,
    in a dataflow order (ties by lowest node index)."""
    owner: dict[int, int] = {}
    units: list[int | SubGraph] = []
    for nested in sub.nested:
        for i in bits(nested.inside):
            owner[i] = len(units)
        units.append(nested)
    for i in bits(sub.inside & graph.kernel_nodes):
        if i not in owner:
            owner[i] = len(units)
            units.append(i)
    deps: list[set[int]] = [set() for _ in units]
    users: list[list[int]] = [[] for _ in units]
    for i, u in owner.items():
        for p in graph.nodes[i].inputs:
            d = owner.get(p)
            if d is not None and d != u and d not in deps[u]:
                deps[u].add(d)
                users[d].append(u)
    lowest = [first(single(u) if isinstance(u, int) else u.inside) for u in units]
    ready = [(lowest[u], u) for u in range(len(units)) if not deps[u]]
    heapq.heapify(ready)
    order: list[int | SubGraph] = []
    while ready:
        _, u = heapq.heappop(ready)
        order.append(units[u])
        for w in users[u]:
            deps[w].discard(u)
            if not deps[w]:
                heapq.heappush(ready, (lowest[w], w))
    return order


def _emit(graph: DataflowGraph, sub: SubGraph, block: Block,
          outer: Callable[[SSAValue], SSAValue]) -> dict[SSAValue, SSAValue]:
    """Clone ``sub``'s ops into ``block``; ``outer(v)`` gives the block's value for a
    non-constant value from outside ``sub``. Returns the map of cloned values."""
    local: dict[SSAValue, SSAValue] = {}

    def value(v: SSAValue) -> SSAValue:
        if v not in local:
            node = graph.nodes[graph.node_of(v)]
            if not node.is_constant:
                return outer(v)
            assert node.op is not None
            clone = node.op.clone()
            block.add_op(clone)
            local.update(zip(node.op.results, clone.results))
        return local[v]

    for unit in _units(graph, sub):
        if isinstance(unit, int):
            op = graph.nodes[unit].op
            assert isinstance(op, Operation)
            mapping = {v: value(v) for v in values_read(op) if v in graph}
            clone = op.clone(value_mapper=mapping)
            block.add_op(clone)
            local.update(zip(op.results, clone.results))
            continue
        inner = Block()
        inputs: dict[SSAValue, SSAValue] = {}

        def arg(v: SSAValue, inner: Block = inner, inputs: dict = inputs) -> SSAValue:
            if v not in inputs:
                inputs[v] = inner.insert_arg(v.type, len(inner.args))
            return inputs[v]

        inner_local = _emit(graph, unit, inner, arg)
        results = [v for i in bits(unit.inside & graph.kernel_nodes)
                   for v in graph.nodes[i].values if _escapes(graph, v, unit.inside)]
        inner.add_op(YieldOp([inner_local[v] for v in results]))
        composite = CompositeOp(unit.label, [value(v) for v in inputs],
                                [v.type for v in results], Region(inner))
        block.add_op(composite)
        local.update(zip(results, composite.results))
    return local
