"""SubGraph: derived sets, validity rules, combinators, extraction and structural hash.

Every extraction is run through the reference interpreter and compared with the values
the whole function computes for the same SSA values.
"""

from __future__ import annotations

import numpy as np
import pytest
from collage_xdsl.dialects import collage as C
from collage_xdsl.dialects.collage import OpPatternKind
from xdsl.dialects.builtin import FloatAttr, ModuleOp, f32
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Block, Region

from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import of, single
from collage_xdsl.core.subgraph import SubGraph, SubGraphConfig
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.interpreter import evaluate_op, run_function, run_module
from collage_xdsl.ir.tensors import constant_op, tensor_type

RNG = np.random.default_rng(0)
X = tensor_type((1, 2, 5, 5), np.float32)
TAPS = SubGraphConfig(max_exits=2, allow_taps=True)
TWO = SubGraphConfig(max_exits=2)


class Builder:
    """A `func.func @main` built op by op; `sub(*ops)` is the sub-graph of those ops."""

    def __init__(self, n_args: int = 1):
        self.block = Block(arg_types=[X] * n_args)
        self.args = list(self.block.args)
        self.graph: DataflowGraph | None = None

    def __call__(self, op):
        self.block.add_op(op)
        return op

    def weight(self, shape=(2, 2, 3, 3)):
        return self(constant_op(RNG.standard_normal(shape).astype(np.float32))).output

    def conv(self, x):
        return self(C.Conv2dOp(x, self.weight(), pads=(1, 1, 1, 1)))

    def leaky(self, x, alpha=0.1):
        return self(C.LeakyReluOp(x, {"alpha": FloatAttr(alpha, f32)}))

    def finish(self, *results) -> DataflowGraph:
        self.block.add_op(ReturnOp(*results))
        func = FuncOp("main", ([a.type for a in self.args], [r.type for r in results]),
                      Region(self.block))
        ModuleOp([func])
        self.graph = DataflowGraph(func)
        return self.graph

    def sub(self, *ops, label: str = "") -> SubGraph:
        assert self.graph is not None
        return SubGraph(self.graph, of(self.graph.node_of(op) for op in ops), label)

    def idx(self, *ops) -> int:
        assert self.graph is not None
        return of(self.graph.node_of(op) for op in ops)


def check_extraction(sub: SubGraph) -> None:
    """The extracted kernel computes what the whole function computes for its outputs."""
    func = sub.graph.func
    values = {a: RNG.standard_normal(X.get_shape()).astype(np.float32)
              for a in func.body.block.args}
    for op in list(func.body.block.ops)[:-1]:
        values.update(zip(op.results, evaluate_op(op, [values[v] for v in op.operands])))
    module = sub.extract()
    module.verify()
    (kernel,) = module.ops
    assert kernel.sym_name.data == "kernel"
    got = run_function(kernel, [values[v] for v in sub.input_values])
    assert len(got) == len(sub.output_values) > 0
    for g, v in zip(got, sub.output_values):
        np.testing.assert_allclose(g, values[v], rtol=1e-5, atol=1e-5)
    func.verify()  # the original is untouched


def test_single_op():
    b = Builder()
    conv = b.conv(b.args[0])
    g = b.finish(conv.output)
    s = b.sub(conv)
    i = g.node_of(conv)
    assert (s.entry, s.exit, s.input, s.output) == (single(i), single(i), b.idx(b.args[0]), 0)
    assert s.depth == 1 and s.kind == OpPatternKind.OUT_EWISE_FUSABLE and s.is_valid()
    assert s.input_values == (b.args[0],)  # the weight is cloned in, not a parameter
    assert "collage.constant" in str(s.extract())
    check_extraction(s)


def test_two_independent_adds():
    b = Builder(2)
    x, y = b.args
    p = b(C.AddOp(x, y))
    q = b(C.MulOp(y, x))
    b.finish(p.output, q.output)
    s = b.sub(p, q)
    assert s.exit == b.idx(p, q) and s.entry == b.idx(p, q)
    assert not s.is_valid() and "2 exits exceed the maximum 1" in s.why_invalid()
    assert s.is_valid(TWO)
    assert s.input_values == (x, y) and s.output_values == (p.output, q.output)
    check_extraction(s)


def conv_add_relu():
    b = Builder()
    conv = b.conv(b.args[0])
    bias = b.weight((1, 2, 1, 1))
    add = b(C.AddOp(conv.output, bias))
    relu = b(C.ReluOp(add.output))
    b.finish(relu.output)
    return b, conv, add, relu


def test_conv_add_relu_and_depth():
    b, conv, add, relu = conv_add_relu()
    s = b.sub(conv, add, relu)
    assert s.entry == b.idx(conv) and s.exit == b.idx(relu) and s.output == 0
    assert s.depth == 3 and s.kind == OpPatternKind.OUT_EWISE_FUSABLE
    assert s.is_valid() and s.is_valid(SubGraphConfig(max_depth=3))
    assert "depth 3 exceeds the maximum 2" in s.why_invalid(SubGraphConfig(max_depth=2))
    assert b.sub(add, relu).kind == OpPatternKind.BROADCAST
    assert b.sub(add, relu).depth == 2  # the bias constant counts 0
    check_extraction(s)
    check_extraction(b.sub(conv, add))


def diamond():
    """conv -> relu -> relu2 and conv -> leaky, joined by add."""
    b = Builder()
    conv = b.conv(b.args[0])
    relu = b(C.ReluOp(conv.output))
    relu2 = b(C.ReluOp(relu.output))
    leaky = b.leaky(conv.output)
    add = b(C.AddOp(relu2.output, leaky.output))
    b.finish(add.output)
    return b, conv, relu, relu2, leaky, add


def test_diamond_one_and_two_outputs():
    b, conv, relu, relu2, leaky, add = diamond()
    whole = b.sub(conv, relu, relu2, leaky, add)
    assert whole.is_valid() and whole.depth == 4
    check_extraction(whole)
    two = b.sub(conv, relu, relu2, leaky)
    assert two.exit == b.idx(relu2, leaky) and two.output == b.idx(add)
    assert not two.is_valid() and two.is_valid(TWO)
    check_extraction(two)
    # conv and relu2 without relu: the path conv -> relu -> relu2 leaves and re-enters.
    hole = b.sub(conv, relu2)
    assert "leaves it and re-enters" in hole.why_invalid(SubGraphConfig(max_exits=0))
    with pytest.raises(CollageError, match="re-enters"):
        hole.extract()


def tap():
    """conv feeds relu and the final add(relu, conv)."""
    b = Builder()
    conv = b.conv(b.args[0])
    relu = b(C.ReluOp(conv.output))
    add = b(C.AddOp(relu.output, conv.output))
    b.finish(add.output)
    return b, conv, relu, add


def test_tap():
    b, conv, relu, add = tap()
    s = b.sub(conv, relu)
    assert s.exit == b.idx(conv, relu)
    assert "a tap" in s.why_invalid(TWO)
    assert s.is_valid(TAPS)
    assert s.output_values == (conv.output, relu.output)
    check_extraction(s)
    assert b.sub(conv, relu, add).is_valid()


def test_chain_path_through_outside_node():
    b = Builder()
    p = b(C.ReluOp(b.args[0]))
    q = b(C.NegOp(p.output))
    r = b(C.AbsOp(q.output))
    b.finish(r.output)
    assert not b.sub(p, r).is_valid(SubGraphConfig(max_exits=0, allow_taps=True))
    assert b.sub(p, q, r).is_valid()
    assert b.sub(p).are_touching(b.sub(q)) and b.sub(r).are_touching(b.sub(q))
    assert not b.sub(p).are_touching(b.sub(r))
    assert not b.sub(p, q).are_touching(b.sub(q, r))  # overlapping


def test_nested_composites():
    b, conv, add, relu = conv_add_relu()
    comp = b.sub(conv, add).with_label("conv_bias")
    assert comp.nested == (SubGraph(b.graph, b.idx(conv, add), "conv_bias"),)
    s = comp.disjoint_union(b.sub(relu))
    assert s.label == "conv_bias" and s.nested == comp.nested
    assert s.is_valid() and s != b.sub(conv, add, relu)
    text = str(s.extract())
    assert 'collage.composite "conv_bias"' in text and "collage.yield" in text
    check_extraction(s)
    # A structural hash sees the composite boundary.
    assert s.structural_hash() != b.sub(conv, add, relu).structural_hash()


def test_nested_composite_with_tap():
    b, conv, relu, relu2, leaky, add = diamond()
    comp = b.sub(conv, relu).with_label("conv_relu")  # conv also feeds leaky: a tap
    s = comp.disjoint_union(b.sub(relu2, leaky, add, label="rest"))
    assert s.label == "conv_relu+rest"
    assert "nested 'conv_relu' is invalid" in s.why_invalid(SubGraphConfig(max_exits=2))
    assert s.is_valid(TAPS)
    check_extraction(s)
    two = b.sub(relu2).with_label("a").disjoint_union(b.sub(leaky).with_label("b"))
    assert not two.is_valid() and two.is_valid(TWO)
    assert [n.label for n in two.nested] == ["a", "b"]


def test_nested_must_be_contained_and_disjoint():
    b, conv, add, relu = conv_add_relu()
    g = b.graph
    inner = b.sub(conv, add, label="c")
    assert "not contained" in SubGraph(g, b.idx(add, relu), "x", (inner,)).why_invalid()
    other = b.sub(add, label="d")
    overlapping = SubGraph(g, b.idx(conv, add, relu), "x", (inner, other))
    assert "overlaps" in overlapping.why_invalid()


def test_disjoint_union_and_errors():
    b, conv, add, relu = conv_add_relu()
    u = b.sub(conv, label="conv").disjoint_union(b.sub(add, relu, label="conv"))
    assert u == b.sub(conv, add, relu, label="conv")
    assert u.label == "conv"
    with pytest.raises(CollageError, match="share nodes"):
        b.sub(conv, add).disjoint_union(b.sub(add))
    with pytest.raises(CollageError, match="beyond the"):
        SubGraph(b.graph, single(len(b.graph)))
    weight = b.graph.nodes[b.graph.node_of(conv.weight)]
    assert "no op that needs a kernel" in SubGraph(b.graph, single(weight.index)).why_invalid()
    assert "function arguments" in SubGraph(
        b.graph, b.idx(b.args[0], conv)).why_invalid()
    with pytest.raises(CollageError, match="cannot extract"):
        SubGraph(b.graph, single(weight.index)).extract()


def test_sub_graphs_may_share_a_constant():
    """One weight read by a conv and by the add after it (as the importer's CSE leaves equal
    weights): sub-graphs holding it with different ops do not overlap, and unite."""
    b = Builder()
    w = b.weight((2, 1, 1, 1))
    conv = b(C.Conv2dOp(b.args[0], w, group=2))
    add = b(C.AddOp(conv.output, w))
    b.finish(add.output)
    shared = single(b.graph.node_of(w))
    head, tail = (SubGraph(b.graph, b.idx(op) | shared) for op in (conv, add))
    assert not head.overlaps(tail) and head.are_touching(tail)
    assert head.disjoint_union(tail).inside == b.idx(conv, add) | shared
    assert SubGraph(b.graph, b.idx(conv, add) | shared, "x", (head, tail)).is_valid()
    assert head.overlaps(SubGraph(b.graph, b.idx(conv)))
    with pytest.raises(CollageError, match="share nodes"):
        head.disjoint_union(b.sub(conv, add))


def test_identity_and_order():
    b, conv, add, relu = conv_add_relu()
    a1, a2 = b.sub(conv, add), b.sub(add, conv)
    assert a1 == a2 and hash(a1) == hash(a2) and len({a1, a2}) == 1
    assert a1 != b.sub(conv, add, label="l") and a1 != a1.with_label("")
    assert sorted([b.sub(relu), b.sub(add), b.sub(conv, relu)]) == [
        b.sub(conv, relu), b.sub(add), b.sub(relu)]


def test_split_exit_returns_only_escaping_results():
    b = Builder()
    split = b(C.SplitOp(b.args[0], 1, [1, 1]))
    neg = b(C.NegOp(split.results[0]))
    add = b(C.AddOp(neg.output, split.results[1]))
    b.finish(add.output, split.results[0])
    s = b.sub(split, neg)
    assert s.output_values == (split.results[0], split.results[1], neg.output)
    check_extraction(s)
    inner = b.sub(neg, add)
    assert inner.input_values == (split.results[0], split.results[1])
    check_extraction(inner)


def repeated():
    """x -> leaky(0.1) -> neg -> leaky(0.1) -> neg -> leaky(0.2) -> neg."""
    b = Builder()
    v, pairs = b.args[0], []
    for alpha in (0.1, 0.1, 0.2):
        leaky = b.leaky(v, alpha)
        neg = b(C.NegOp(leaky.output))
        pairs.append((leaky, neg))
        v = neg.output
    b.finish(v)
    return b, pairs


def test_structural_hash():
    b, pairs = repeated()
    h = [b.sub(*p).structural_hash() for p in pairs]
    assert h[0] == h[1] != h[2]
    assert len(h[0]) == 32 and h[0] == b.sub(*pairs[0]).structural_hash()
    for p in pairs:
        check_extraction(b.sub(*p))
    # Constants are hashed by value.
    c1, c2 = conv_add_relu(), conv_add_relu()
    assert c1[0].sub(c1[3]).structural_hash() == c2[0].sub(c2[3]).structural_hash()
    assert c1[0].sub(c1[1]).structural_hash() != c2[0].sub(c2[1]).structural_hash()


def test_extraction_copies_called_functions():
    helper_block = Block(arg_types=[X])
    helper_block.add_op(neg := C.NegOp(helper_block.args[0]))
    helper_block.add_op(ReturnOp(neg.output))
    helper = FuncOp("helper", ([X], [X]), Region(helper_block))
    b = Builder()
    call = b(CallOp("helper", [b.args[0]], [X]))
    relu = b(C.ReluOp(call.res[0]))
    g = b.finish(relu.output)
    g.func.parent_op().body.block.add_op(helper)
    s = b.sub(call, relu)
    assert s.kind == OpPatternKind.OPAQUE and s.is_valid()
    module = s.extract()
    module.verify()
    assert [f.sym_name.data for f in module.ops] == ["kernel", "helper"]
    x = RNG.standard_normal(X.get_shape()).astype(np.float32)
    (got,) = run_module(module, [x], entry="kernel")
    np.testing.assert_allclose(got, np.maximum(-x, 0))
    assert s.structural_hash() == b.sub(call, relu).structural_hash()
    helper.detach()
    with pytest.raises(CollageError, match="func.call to @helper has no function"):
        b.sub(call, relu).extract()
