"""DataflowGraph: post-DFS order, inputs/outputs, downstream sets, (post-)dominators."""

from __future__ import annotations

import random

import numpy as np
import pytest
from collage_xdsl.dialects import collage as C
from collage_xdsl.dialects.collage import OpPatternKind
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region

from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, count, first, last, of, single, to_str
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.tensors import constant_op, tensor_type

T = tensor_type((2, 3), np.float32)


def put(block: Block, op):
    block.add_op(op)
    return op


def make_func(block: Block, *results) -> FuncOp:
    block.add_op(ReturnOp(*results))
    func = FuncOp("main", ([a.type for a in block.args], [r.type for r in results]),
                  Region(block))
    ModuleOp([func])
    return func


def test_index_set_helpers():
    s = of([5, 0, 3])
    assert list(bits(s)) == [0, 3, 5]
    assert (count(s), first(s), last(s)) == (3, 0, 5)
    assert (first(0), last(0), count(0)) == (-1, -1, 0)
    assert single(4) == 16 and to_str(s) == "{0,3,5}"


def diamond():
    """x -> a=relu -> b=neg, a -> c=abs, d = add(b, c), returned."""
    block = Block(arg_types=[T])
    (x,) = block.args
    a = put(block, C.ReluOp(x))
    b = put(block, C.NegOp(a.output))
    c = put(block, C.AbsOp(a.output))
    d = put(block, C.AddOp(b.output, c.output))
    return DataflowGraph(make_func(block, d.output)), (x, a, b, c, d)


def test_diamond_nodes_and_downstream():
    g, (x, a, b, c, d) = diamond()
    ix, ia, ib, ic, id_ = (g.node_of(v) for v in (x, a, b, c, d))
    assert [ix, ia, ib, ic, id_] == [0, 1, 2, 3, 4]
    assert g.node_of(d.output) == id_
    assert g.nodes[id_].inputs == [ib, ic] and g.nodes[ia].outputs == [ib, ic]
    assert g.nodes[id_].is_graph_output and not g.nodes[ic].is_graph_output
    assert g.nodes[ia].downstream == of([ia, ib, ic, id_])
    assert g.nodes[ib].downstream == of([ib, id_])
    assert g.nodes[ix].is_arg and not g.nodes[ix].needs_kernel
    assert g.nodes[id_].kind == OpPatternKind.BROADCAST and g.nodes[ix].kind == OpPatternKind.OPAQUE
    assert g.dominators == [-1, ix, ia, ia, ia]
    assert g.post_dominators == [ia, id_, id_, id_, -1]
    assert g.kernel_nodes == of([ia, ib, ic, id_]) and g.arguments == single(ix)


def test_residual_block_dominators():
    """conv -> bn -> relu -> conv -> bn -> add(skip) -> relu, with weights as constants."""
    x_t = tensor_type((1, 4, 6, 6), np.float32)
    block = Block(arg_types=[x_t])
    (x,) = block.args
    rng = np.random.default_rng(0)
    stem = put(block, C.ReluOp(x))

    def conv_bn(v):
        w = put(block, constant_op(rng.standard_normal((4, 4, 3, 3)).astype(np.float32)))
        conv = put(block, C.Conv2dOp(v, w.output, pads=(1, 1, 1, 1)))
        s = put(block, constant_op(np.ones(4, np.float32)))
        bn = put(block, C.BatchNormOp(conv.output, s.output, s.output, s.output, s.output,
                                        1e-5))
        return w, conv, s, bn

    w1, conv1, s1, bn1 = conv_bn(stem.output)
    r1 = put(block, C.ReluOp(bn1.output))
    w2, conv2, s2, bn2 = conv_bn(r1.output)
    add = put(block, C.AddOp(bn2.output, stem.output))
    out = put(block, C.ReluOp(add.output))
    g = DataflowGraph(make_func(block, out.output))
    n = {k: g.node_of(v) for k, v in dict(stem=stem, w1=w1, conv1=conv1, s1=s1, bn1=bn1,
                                            r1=r1, conv2=conv2, bn2=bn2, add=add,
                                            out=out).items()}
    dom, pdom = g.dominators, g.post_dominators
    assert dom[n["conv1"]] == n["stem"]  # the weight is not a dataflow source
    assert dom[n["add"]] == n["stem"] and dom[n["bn2"]] == n["conv2"]
    assert dom[n["w1"]] == -1 and dom[n["stem"]] == g.node_of(x)
    assert pdom[n["stem"]] == n["add"] and pdom[n["conv1"]] == n["bn1"]
    assert pdom[n["w1"]] == n["conv1"] and pdom[n["s1"]] == n["bn1"]
    assert pdom[n["out"]] == -1
    assert g.nodes[n["s1"]].outputs == [n["bn1"]]  # one node input per producer
    assert g.nodes[n["bn1"]].inputs == [n["conv1"], n["s1"]]
    assert g.nodes[n["w1"]].is_constant and not g.nodes[n["w1"]].needs_kernel
    assert g.nodes[n["stem"]].downstream & single(n["out"])
    assert not g.nodes[n["bn2"]].downstream & single(n["r1"])


def random_func(rng: random.Random, n_ops: int) -> FuncOp:
    block = Block(arg_types=[T] * rng.randint(1, 3))
    values = list(block.args)
    for _ in range(n_ops):
        r = rng.random()
        if r < 0.15:
            op = constant_op(np.full((2, 3), rng.random(), np.float32))
        elif r < 0.5:
            op = rng.choice([C.ReluOp, C.NegOp, C.AbsOp])(rng.choice(values))
        else:
            op = C.AddOp(rng.choice(values), rng.choice(values))
        block.add_op(op)
        values.append(op.results[0])
    results = rng.sample(values[len(block.args):], rng.randint(1, 3))
    return make_func(block, *results)


def reaches(g: DataflowGraph, src: int, avoid: int = -1) -> int:
    """Brute force: nodes reachable from src without passing through avoid."""
    seen, todo = 0, [src]
    while todo:
        i = todo.pop()
        if i == avoid or seen >> i & 1:
            continue
        seen |= single(i)
        todo.extend(g.nodes[i].outputs)
    return seen


@pytest.mark.parametrize("seed", range(25))
def test_random_dags(seed):
    rng = random.Random(seed)
    func = random_func(rng, rng.randint(3, 25))
    g = DataflowGraph(func)
    block_ops = list(func.body.block.ops)[:-1]
    assert len(g) == len(func.body.block.args) + len(block_ops)
    for node in g.nodes:
        assert all(p < node.index for p in node.inputs), "post-DFS: inputs come first"
        if node.op is not None:
            expected = list(dict.fromkeys(g.node_of(v) for v in node.op.operands))
            assert node.inputs == expected
        assert node.downstream == reaches(g, node.index)
        assert node.output_set == of(node.outputs)
    # Dominators: sources are the non-constant nodes without non-constant inputs.
    live = [n.index for n in g.nodes if not n.is_constant]
    sources = [i for i in live if not any(not g.nodes[p].is_constant
                                          for p in g.nodes[i].inputs)]
    for i in live:
        strict = [d for d in live if d != i and not any(
            reaches(g, s, avoid=d) >> i & 1 for s in sources)]
        assert g.dominators[i] == max(strict, default=-1), f"node {i}"
    # Post-dominators: the virtual sink follows graph outputs and dead ends.
    sinks = {n.index for n in g.nodes if n.is_graph_output or not n.outputs}
    for node in g.nodes:
        i = node.index
        strict = [d for d in range(len(g)) if d != i
                  and not any(reaches(g, i, avoid=d) >> s & 1 for s in sinks)]
        assert g.post_dominators[i] == min(strict, default=-1), f"node {i}"


def test_split_is_one_node_and_unused_ops_are_nodes():
    block = Block(arg_types=[T])
    (x,) = block.args
    split = put(block, C.SplitOp(x, 1, [1, 2]))
    dead = put(block, C.ReluOp(x))
    neg = put(block, C.NegOp(split.results[1]))
    g = DataflowGraph(make_func(block, neg.output, split.results[0]))
    i = g.node_of(split)
    assert g.node_of(split.results[0]) == g.node_of(split.results[1]) == i
    assert len(g.nodes[i].values) == 2 and g.nodes[i].is_graph_output
    assert g.nodes[g.node_of(dead)].outputs == [] and g.node_of(dead) == len(g) - 1
    assert g.users_of(split.results[0]) == {-1}
    assert g.users_of(split.results[1]) == {g.node_of(neg)}


def test_errors_name_the_function():
    g, _ = diamond()
    stranger = C.ReluOp(Block(arg_types=[T]).args[0])
    with pytest.raises(CollageError, match=r"collage.relu is not in the body of @main"):
        g.node_of(stranger)
    empty = FuncOp("decl", ([T], [T]), Region())
    with pytest.raises(CollageError, match=r"@decl has 0 blocks"):
        DataflowGraph(empty)


def test_cycle_is_an_error():
    block = Block(arg_types=[T])
    (x,) = block.args
    add = put(block, C.AddOp(x, x))
    relu = put(block, C.ReluOp(add.output))
    add.operands[1] = relu.output
    with pytest.raises(CollageError, match=r"collage.add in @main depends on itself"):
        DataflowGraph(make_func(block, relu.output))
