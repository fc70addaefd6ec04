"""A dataflow pattern language over `collage` graphs (Relay's DFPattern, in Python).

    conv = is_op("collage.conv2d")(wildcard(), is_constant()).has_attr({"group": 1})
    bias = is_op("collage.add")(conv, is_constant()) | is_op("collage.add")(is_constant(), conv)
    pat = is_op("collage.relu")(bias).named("root")
    matches = find_matches(pat, DataflowGraph(func), check=lambda m: m.op("root") is not None)

Matching enumerates *every* match, overlapping ones included: each node is tried as
the root, and alternatives yield all their ways of matching. A match's `inside` set
holds the nodes bound to `is_op` and `is_constant` patterns (wildcards stay outside,
so constants matched by `is_constant` are pulled into the candidate). A pattern object
used twice must bind the same node both times. The optional `check` callback sees the
whole `Match` (the root, the matched nodes by pattern name and the graph), like
`PatternCheckContext` in TVM Relax's FuseOpsByPattern. `chain_pattern` builds the op
chains that options and fusion-spec files write `a+b+c`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, Operation, OpResult, SSAValue

from collage_xdsl.core.candidates import HOST_OPS
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.dialects.collage import Collage, ConstantOp, GraphOp
from collage_xdsl.ir.tensors import ir_dtype

Binding = dict["Pattern", int]
"""Pattern object -> node index, for the patterns matched so far."""


class Pattern:
    """Base of all patterns; compared and hashed by identity."""

    name: str | None = None

    def match(self, graph: DataflowGraph, index: int, binding: Binding) -> Iterator[Binding]:
        """Every way this pattern matches node `index`, extending `binding`."""
        bound = binding.get(self)
        if bound is not None:
            if bound == index:
                yield binding
            return
        for b in self._match(graph, index, binding):
            yield {**b, self: index}

    def _match(self, graph: DataflowGraph, index: int, binding: Binding) -> Iterator[Binding]:
        raise NotImplementedError

    @property
    def captures(self) -> bool:
        """Whether the node this pattern matches is inside the match."""
        return False

    def __or__(self, other: Pattern) -> Pattern:
        return AltPattern(self, other)

    def has_attr(self, attrs: Mapping[str, Any]) -> Pattern:
        return PredicatePattern(self, f"attrs {dict(attrs)}", lambda g, i: _has_attrs(g, i, attrs))

    def has_shape(self, shape: Sequence[int | None]) -> Pattern:
        """Result shape equals `shape` (None matches any extent)."""
        want = tuple(shape)
        return PredicatePattern(self, f"shape {list(want)}", lambda g, i: _has_shape(g, i, want))

    def has_dtype(self, dtype: np.dtype | type | str | Attribute) -> Pattern:
        elt = dtype if isinstance(dtype, Attribute) else ir_dtype(np.dtype(dtype))
        return PredicatePattern(self, f"dtype {elt}", lambda g, i: _element_type(g, i) == elt)

    def named(self, name: str) -> Pattern:
        """This pattern, reported under `name` in `Match.nodes`."""
        return PredicatePattern(self, "", lambda g, i: True, name)


@dataclass(eq=False)
class WildcardPattern(Pattern):
    """Matches any node; the node stays outside the match."""

    def _match(self, graph, index, binding):
        yield binding

    def __repr__(self) -> str:
        return "*"


@dataclass(eq=False)
class ConstantPattern(Pattern):
    """Matches a `collage.constant`; the constant is pulled into the match."""

    def _match(self, graph, index, binding):
        op = graph.nodes[index].op
        if op is not None and op.name == "collage.constant":
            yield binding

    @property
    def captures(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "const"


@dataclass(eq=False)
class OpPattern(Pattern):
    """`is_op(name)` matches any call of the op; `is_op(name)(a, b)` also its operands."""

    op_name: str
    args: tuple[Pattern, ...] | None = None

    def __call__(self, *args: Pattern) -> OpPattern:
        return OpPattern(self.op_name, tuple(args))

    @property
    def captures(self) -> bool:
        return True

    def _match(self, graph, index, binding):
        op = graph.nodes[index].op
        if op is None or op.name != self.op_name:
            return
        if self.args is None:
            yield binding
            return
        if len(op.operands) != len(self.args):
            return
        yield from _match_all(graph, [producer(graph, v) for v in op.operands], self.args, binding)

    def __repr__(self) -> str:
        if self.args is None:
            return self.op_name
        return f"{self.op_name}({', '.join(map(repr, self.args))})"


@dataclass(eq=False)
class AltPattern(Pattern):
    """`p | q`: every match of `p`, then every match of `q`."""

    left: Pattern
    right: Pattern

    def _match(self, graph, index, binding):
        yield from self.left.match(graph, index, binding)
        yield from self.right.match(graph, index, binding)

    @property
    def captures(self) -> bool:
        return False  # the alternative that matched binds (and captures) the node itself

    def __repr__(self) -> str:
        return f"({self.left!r} | {self.right!r})"


@dataclass(eq=False)
class PredicatePattern(Pattern):
    """`inner`, further restricted by a predicate over (graph, node index)."""

    inner: Pattern
    what: str
    predicate: Callable[[DataflowGraph, int], bool]
    name: str | None = field(default=None)

    def _match(self, graph, index, binding):
        if self.predicate(graph, index):
            yield from self.inner.match(graph, index, binding)

    def __repr__(self) -> str:
        text = f"{self.inner!r}.where({self.what})" if self.what else repr(self.inner)
        return f"{text} as {self.name}" if self.name else text


def is_op(op_name: str) -> OpPattern:
    return OpPattern(op_name)


def wildcard() -> WildcardPattern:
    return WildcardPattern()


def is_constant() -> ConstantPattern:
    return ConstantPattern()


def producer(graph: DataflowGraph, value: SSAValue) -> int:
    """The node index that defines `value` (an op, for any of its results, or an argument)."""
    return graph.node_of(value.op if isinstance(value, OpResult) else value)


def _match_all(
    graph: DataflowGraph, indices: list[int], patterns: Sequence[Pattern], binding: Binding
) -> Iterator[Binding]:
    if not patterns:
        yield binding
        return
    for b in patterns[0].match(graph, indices[0], binding):
        yield from _match_all(graph, indices[1:], patterns[1:], b)


def _result_type(graph: DataflowGraph, index: int) -> Attribute | None:
    node = graph.nodes[index]
    if node.op is None:
        return node.value.type
    return node.op.results[0].type if len(node.op.results) == 1 else None


def _element_type(graph: DataflowGraph, index: int) -> Attribute | None:
    t = _result_type(graph, index)
    return t.get_element_type() if isinstance(t, TensorType) else None


def _has_shape(graph: DataflowGraph, index: int, want: tuple[int | None, ...]) -> bool:
    t = _result_type(graph, index)
    if not isinstance(t, TensorType):
        return False
    shape = tuple(t.get_shape())
    return len(shape) == len(want) and all(w is None or w == s for w, s in zip(want, shape))


def attr_value(attr: Attribute) -> Any:
    """A Python value for an attribute, to compare with `has_attr` arguments."""
    if isinstance(attr, IntegerAttr):
        value = int(attr.value.data)
        return bool(value) if attr.type == i1 else value
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, DenseArrayBase):
        return tuple(attr.get_values())
    if isinstance(attr, ArrayAttr):
        return tuple(attr_value(a) for a in attr.data)
    return attr


def _has_attrs(graph: DataflowGraph, index: int, attrs: Mapping[str, Any]) -> bool:
    op: Operation | None = graph.nodes[index].op
    return op is not None and op_has_attrs(op, attrs)


def op_has_attrs(op: Operation, attrs: Mapping[str, Any]) -> bool:
    """Whether `op` has every attribute of `attrs` with that value (an `Attribute`, or a
    Python value compared with `attr_value`; a list compares as a tuple)."""
    for key, want in attrs.items():
        have = op.attributes.get(key)
        if have is None:
            return False
        if isinstance(want, Attribute):
            if have != want:
                return False
        elif attr_value(have) != (tuple(want) if isinstance(want, list) else want):
            return False
    return True


def kernel_op_names() -> tuple[str, ...]:
    """The dialect's graph ops that need a kernel (not constants, tuples or projections)."""
    return tuple(
        op.name for op in Collage.operations
        if issubclass(op, GraphOp) and op is not ConstantOp and op.name not in HOST_OPS
    )


def full_op_name(name: str) -> str | None:
    """`relu` or `collage.relu` as `collage.relu`; None when no kernel op is called so."""
    full = name if name.startswith("collage.") else f"collage.{name}"
    return full if full in kernel_op_names() else None


def chain_pattern(op_names: Sequence[str]) -> Pattern:
    """`[a, b, c]` (full names of `collage` ops): c(.., b(.., a(*, ..), ..), ..), each op
    consuming the previous one at any operand position (the other operands and the first
    op's operands are wildcards)."""
    pattern: Pattern = is_op(op_names[0])
    for name in op_names[1:]:
        arity = _arity(name)
        alternatives = [
            is_op(name)(*(pattern if k == pos else wildcard() for k in range(arity)))
            for pos in range(arity)
        ]
        pattern = alternatives[0]
        for alt in alternatives[1:]:
            pattern = pattern | alt
    return pattern


def _arity(name: str) -> int:
    """The number of operands the `collage` op called `name` declares."""
    op = next(o for o in Collage.operations if o.name == name)
    return len(op.get_irdl_definition().operands)


@dataclass(frozen=True)
class Match:
    """One match: its root node, the nodes inside it, and the named nodes."""

    graph: DataflowGraph = field(compare=False, repr=False)
    root: int
    inside: int
    nodes: Mapping[str, int] = field(compare=False)

    def op(self, name: str) -> Operation | None:
        """The op matched by the pattern called `name` (None for an argument)."""
        return self.graph.nodes[self.nodes[name]].op

    @property
    def root_op(self) -> Operation | None:
        return self.graph.nodes[self.root].op


def find_matches(
    pattern: Pattern,
    graph: DataflowGraph,
    check: Callable[[Match], bool] | None = None,
) -> list[Match]:
    """All matches of `pattern` rooted at any node, overlapping ones included, deduplicated."""
    found: dict[tuple[int, int, tuple], Match] = {}
    for index in range(len(graph)):
        for binding in pattern.match(graph, index, {}):
            inside = 0
            for p, i in binding.items():
                if p.captures:
                    inside |= 1 << i
            if not inside:
                continue
            names = {p.name: i for p, i in binding.items() if p.name}
            key = (index, inside, tuple(sorted(names.items())))
            if key in found:
                continue
            m = Match(graph, index, inside, names)
            if check is None or check(m):
                found[key] = m
    return list(found.values())
