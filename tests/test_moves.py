"""What a plan may become (`collage_xdsl.refine.moves`): seeds, mutations that are valid covers
of the function (convex, supported, acyclic), and cuts in the order of their rank."""

from __future__ import annotations

import random

from collage_xdsl.passes.assign import assign_kernels
from ir_helpers import main_of, parse
from refine_helpers import CONFIGS, MLP_CHAIN, T, chain_space, kernels, named

from collage_xdsl.backends import get_backend
from collage_xdsl.backends.test import make_test_backend
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import first
from collage_xdsl.core.regions import Kernel
from collage_xdsl.core.subgraph import SubGraph, SubGraphConfig
from collage_xdsl.refine.cuts import CutPoints
from collage_xdsl.refine.moves import MoveSpace, make_plan


def test_seeds_are_each_backend_alone_and_greedy_byoc():
    space = chain_space(test_ops=("relu", "tanh"))
    seeds = space.seeds()
    assert [s if isinstance(s, str) else s.origin for s in seeds] == [
        "tvm alone",
        "test alone: collage-assign: backend 'test' does not support collage.sigmoid "
        "(node %a in @main)",
        "test greedy (partition-for), rest tvm",
    ]
    greedy = seeds[2]
    assert sorted((k.backend, k.inside) for k in greedy.kernels) == sorted([
        ("test", named(space.graph, "b", "c", "d")), ("tvm", named(space.graph, "a")),
        ("tvm", named(space.graph, "e"))])


def test_kernels_that_depend_on_each_other_in_a_cycle_are_ruled_out():
    graph = DataflowGraph(main_of(parse(f"""
func.func @main(%x: {T}) -> ({T}, {T}) {{
  %a1 = collage.relu %x : {T}
  %b1 = collage.sigmoid %a1 : {T}
  %b2 = collage.tanh %x : {T}
  %a2 = collage.relu %b2 : {T}
  func.return %b1, %a2 : {T}, {T}
}}""")))
    space = MoveSpace(graph, [get_backend("tvm")], CONFIGS)
    a, b = SubGraph(graph, named(graph, "a1", "a2")), SubGraph(graph, named(graph, "b1", "b2"))
    assert a.is_valid(CONFIGS["tvm"]) and b.is_valid(CONFIGS["tvm"])  # each convex
    assert not space.acyclic([Kernel(a, "tvm"), Kernel(b, "tvm")])
    assert space.acyclic(kernels(graph, ("a1", "tvm"), ("a2", "tvm"), ("b1b2", "tvm")))


def test_every_mutation_of_a_real_plan_is_a_valid_cover(example_module):
    module = example_module("mnist_cnn")
    graph = DataflowGraph(main_of(module))
    backends = [get_backend(n) for n in ("tvm", "onnxruntime", "openvino")]
    space = MoveSpace(graph, backends, {b.name: CONFIGS["tvm"] for b in backends})
    start = make_plan(assign_kernels(graph, backends[0], fusion="none"), "start")
    mutations = space.mutations(start, random.Random(0))
    assert len(mutations) > 20
    assert {m.origin.split()[0] for m in mutations} == {"merge", "reassign", "move"}
    for plan in mutations:
        covered = 0
        for k in plan.kernels:
            assert not k.inside & covered and space.fits(k.sub_graph, k.backend)
            covered |= k.inside
        assert covered == graph.kernel_nodes and space.acyclic(plan.kernels)


def test_a_cut_splits_a_kernel_after_one_of_the_start_plans_exits():
    space = chain_space()
    graph = space.graph
    whole = make_plan(kernels(graph, ("abcde", "tvm")), "tvm alone")
    assert not [m for m in space.mutations(whole, random.Random(0))
                if m.origin.startswith("cut")]
    ends = CutPoints.of(kernels(graph, ("ab", "tvm"), ("cde", "tvm")))
    cuts = space.mutations(whole, random.Random(0), ends)
    cut = [m for m in cuts if m.origin.startswith("cut")]
    assert len(cut) == 1  # after e nothing is left to cut off
    assert cut[0].origin.startswith("cut ") and cut[0].origin.endswith(
        f"@tvm after relu#{first(named(graph, 'b'))}")
    assert sorted(k.inside for k in cut[0].kernels) == sorted(
        [named(graph, "a", "b"), named(graph, "c", "d", "e")])
    assert all(k.backend == "tvm" for k in cut[0].kernels)


def test_cuts_that_break_a_fusion_where_the_start_plan_hands_off_come_first():
    """matmul, relu, matmul, relu, matmul; the start plan runs %c on the test backend:
    tvm alone is cut first after %c (its ReLU fuses into it, and the plan hands it off),
    then after %a (a fusion), %b (a hand-off) and %d, whatever the shuffle."""
    graph = DataflowGraph(main_of(parse(MLP_CHAIN)))
    space = MoveSpace(graph, [get_backend("tvm"), make_test_backend(ops=("matmul",))],
                      CONFIGS)
    start = kernels(graph, ("a", "tvm"), ("b", "tvm"), ("c", "test"), ("d", "tvm"),
                    ("e", "tvm"))
    ends = CutPoints.of(start)
    a, b, c, d = (first(named(graph, x)) for x in "abcd")
    assert {n: ends.ranks[n] for n in (a, b, c, d)} == {c: 0, a: 1, b: 2, d: 3}
    whole = make_plan(kernels(graph, ("abcde", "tvm")), "tvm alone")
    for seed in range(4):
        cuts = space.mutations(whole, random.Random(seed), ends, cuts_only=True)
        assert [int(m.origin.rsplit("#", 1)[1]) for m in cuts] == [c, a, b, d]


def test_every_cut_of_a_whole_model_kernel_is_a_valid_cover(example_module):
    """The transformer encoder's residual branches: a cut's head keeps what does not
    depend on the cut node, so both parts stay convex and the tail never feeds the head."""
    module = example_module("transformer_encoder")
    graph = DataflowGraph(main_of(module))
    backends = [get_backend(n) for n in ("onnxruntime", "openvino")]
    any_depth = SubGraphConfig(max_exits=0, allow_taps=True, max_depth=0)  # maximal regions
    space = MoveSpace(graph, backends, {b.name: any_depth for b in backends})
    whole = make_plan(assign_kernels(graph, backends[1], fusion="whole"), "openvino alone")
    exits = CutPoints.of(assign_kernels(graph, backends[0], fusion="none"))
    cuts = [m for m in space.mutations(whole, random.Random(0), exits)
            if m.origin.startswith("cut")]
    assert len(cuts) > 20
    for plan in cuts:
        head, tail = sorted(plan.kernels, key=lambda k: first(k.inside))
        assert head.inside | tail.inside == whole.kernels[0].inside
        assert space.fits(head.sub_graph, "openvino") and space.fits(tail.sub_graph, "openvino")
        assert not head.sub_graph.input & tail.inside and space.acyclic(plan.kernels)
