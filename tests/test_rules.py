"""Partition rules and combiners: exact candidate sets on hand-built graphs."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import pytest
from collage_xdsl.dialects.collage import OpPatternKind
from graph_helpers import CONV, CONV_ARGS, MLP, MLP_ARGS, SPLIT, T4, names, parse_graph

from collage_xdsl.backends.base import Backend, FusionStyle
from collage_xdsl.core.candidates import CandidateKernel, PartitionSpec
from collage_xdsl.core.combiners import (
    JOIN_ANYTHING,
    TVM_SIMPLE_RULES,
    AllSimpleCombinerRule,
    ConstantCombinerRule,
    TupleArgCombinerRule,
    TupleProjCombinerRule,
)
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, of
from collage_xdsl.core.patterns import is_constant, is_op, wildcard
from collage_xdsl.core.rules import (
    CombinePartitionRule,
    CompositePartitionRule,
    DataflowTemplatePartitionRule,
    DFPatternPartitionRule,
    HostPartitionRule,
    MaxCoalescePartitionRule,
    OnlyValidPartitionRule,
    OpCallByKindPartitionRule,
    OpPredicatePartitionRule,
    PartitionRule,
    PrimitivePartitionRule,
    UnionPartitionRule,
)
from collage_xdsl.core.subgraph import SubGraph, SubGraphConfig

DIAMOND = """
  %a = collage.relu %x : tensor<2x4xf32>
  %b = collage.tanh %x : tensor<2x4xf32>
  %s = collage.add %a, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %s : tensor<2x4xf32>"""

ONE_EXIT = SubGraphConfig(max_exits=1, allow_taps=False)
TVM_COMBINERS = (AllSimpleCombinerRule("", TVM_SIMPLE_RULES), TupleArgCombinerRule(),
                 TupleProjCombinerRule())


def run(rule: PartitionRule, graph: DataflowGraph) -> list[CandidateKernel]:
    return rule.all_candidates(graph, PartitionSpec("b", rule))


def node_sets(rule: PartitionRule, graph: DataflowGraph) -> set[frozenset[str]]:
    result = [frozenset(names(graph, c.inside)) for c in run(rule, graph)]
    assert len(result) == len(set(result)), "duplicate candidates"
    return set(result)


def sets(*groups: str) -> set[frozenset[str]]:
    return {frozenset(f"%{n}" for n in g.split()) for g in groups}


def tvm_rule(depth: int) -> PartitionRule:
    return OnlyValidPartitionRule("", CombinePartitionRule(
        "", OpCallByKindPartitionRule(""), TVM_COMBINERS, depth
    ), SubGraphConfig(max_exits=1, allow_taps=False, max_depth=depth))


def test_op_call_by_kind_gives_op_singletons_only():
    g = parse_graph(CONV, CONV_ARGS)
    assert node_sets(OpCallByKindPartitionRule(""), g) == sets("c", "a", "r", "m")
    capped = OpCallByKindPartitionRule("", OpPatternKind.BROADCAST)
    assert node_sets(capped, g) == sets("a", "r")
    assert [c.rule_name for c in run(OpCallByKindPartitionRule(""), g)] == [
        "conv2d", "add", "relu", "reduce_sum"
    ]


def test_op_predicate_rule():
    g = parse_graph(CONV, CONV_ARGS)
    rule = OpPredicatePartitionRule("ew", lambda op: op.name in ("collage.add", "collage.relu"))
    assert node_sets(rule, g) == sets("a", "r")
    assert {c.rule_name for c in run(rule, g)} == {"ew"}


def test_dfpattern_composite_and_primitive_rules():
    g = parse_graph(CONV, CONV_ARGS)
    conv_bias = is_op("collage.add")(is_op("collage.conv2d")(wildcard(), is_constant()),
                                     is_constant())
    composite = CompositePartitionRule("b.conv_bias", DFPatternPartitionRule("", conv_bias))
    (c,) = run(composite, g)
    assert names(g, c.inside) == {"%w", "%c", "%b", "%a"}
    assert c.rule_name == "b.conv_bias" and c.sub_graph.label == "b.conv_bias"
    assert [n.label for n in c.sub_graph.nested] == ["b.conv_bias"]
    only_constants = DFPatternPartitionRule("k", is_constant())
    assert len(run(only_constants, g)) == 2
    assert run(PrimitivePartitionRule("p", only_constants), g) == []
    (p,) = run(PrimitivePartitionRule("p", composite), g)
    assert p == c and p.rule_name == "p.b.conv_bias"


def test_union_rule_dedups_and_nests_names():
    g = parse_graph(CONV, CONV_ARGS)
    rule = UnionPartitionRule("u", (OpCallByKindPartitionRule(""),
                                    OpPredicatePartitionRule("", lambda op: True)))
    cands = run(rule, g)
    assert [c.rule_name for c in cands] == ["u.conv2d", "u.add", "u.relu", "u.reduce_sum"]


def test_tvm_fuse_ops_rules_on_conv_chain():
    """conv -> add -> relu -> reduce_sum: out_ewise_fusable->broadcast joins conv, add and
    relu; broadcast->comm_reduce joins add/relu with the reduction but never the conv."""
    g = parse_graph(CONV, CONV_ARGS)
    assert node_sets(tvm_rule(0), g) == sets(
        "c", "a", "r", "m", "c a", "a r", "r m", "c a r", "a r m"
    )


def test_depth_limit_applies_to_combined_candidates():
    g = parse_graph(CONV, CONV_ARGS)
    cands = run(CombinePartitionRule("", OpCallByKindPartitionRule(""), TVM_COMBINERS, 2), g)
    assert {frozenset(names(g, c.inside)) for c in cands} == sets(
        "c", "a", "r", "m", "c a", "a r", "r m"
    )
    assert max(c.sub_graph.depth for c in cands) == 2


def test_older_upstream_combines_with_newer_downstream():
    """relu and tanh both feed add: {relu, tanh, add} needs the old {relu} to meet the
    {tanh, add} found in the first round (TVM only combined new upstream candidates)."""
    g = parse_graph(DIAMOND)
    assert node_sets(tvm_rule(0), g) == sets("a", "b", "s", "a s", "b s", "a b s")


def test_gpt2_mlp_block_tvm_depth_2():
    """%h feeds three ops, so no valid candidate holds it with a consumer; every other
    edge fuses (all kinds <= broadcast, the reshape is injective); {a2, m3, m4} joins
    two producers of one multiply."""
    g = parse_graph(MLP, MLP_ARGS)
    singles = "mm h p m1 a1 m2 t a2 m3 m4 y".split()
    pairs = ["mm h", "p m1", "m1 a1", "a1 m2", "m2 t", "t a2", "a2 m4", "m3 m4", "m4 y"]
    assert node_sets(tvm_rule(2), g) == sets(*singles, *pairs, "a2 m3 m4")


def brute_force_valid(graph: DataflowGraph, depth: int) -> set[frozenset[str]]:
    """Every weakly connected set of ops that is a valid one-exit kernel of that depth."""
    ops = list(bits(graph.kernel_nodes))
    config = SubGraphConfig(max_exits=1, allow_taps=False, max_depth=depth)
    found = set()
    for k in range(1, len(ops) + 1):
        for chosen in combinations(ops, k):
            inside = sum(1 << i for i in chosen)
            if _connected(graph, inside) and SubGraph(graph, inside).is_valid(config):
                found.add(frozenset(names(graph, inside)))
    return found


def _connected(graph: DataflowGraph, inside: int) -> bool:
    start = inside & -inside
    seen, frontier = start, start
    while frontier:
        grown = 0
        for i in bits(frontier):
            node = graph.nodes[i]
            grown |= (node.input_set | node.output_set) & inside
        frontier = grown & ~seen
        seen |= grown
    return seen == inside


@pytest.mark.parametrize("depth", [3, 5, 0])
def test_arbitrary_fusion_finds_exactly_the_valid_connected_kernels(depth):
    """Join-anything with pruning to valid unions equals brute force over all subsets."""
    g = parse_graph(MLP, MLP_ARGS)
    config = SubGraphConfig(max_exits=1, allow_taps=False, max_depth=depth)
    rule = OnlyValidPartitionRule("", CombinePartitionRule(
        "", OpCallByKindPartitionRule(""),
        (AllSimpleCombinerRule("", JOIN_ANYTHING, grow=True),), depth, config,
    ), config)
    assert node_sets(rule, g) == brute_force_valid(g, depth)


def test_split_reshape_transpose_tuple_concat():
    """The tuple joins its injective producers and the concat; the fused concat is still
    injective for the relu after it; the split joins only once both its consumers are in."""
    g = parse_graph(SPLIT)
    assert node_sets(tvm_rule(0), g) == sets(
        "s", "a", "r", "e", "c", "o", "r e", "c o",
        "a e t c", "a r e t c", "s a r e t c",
        "a e t c o", "a r e t c o", "s a r e t c o",
    )


def test_tuple_projection_combiner():
    g = parse_graph("""
  %a = collage.relu %x : tensor<2x4xf32>
  %t = collage.tuple %a, %x : (tensor<2x4xf32>, tensor<2x4xf32>)
       -> tuple<tensor<2x4xf32>, tensor<2x4xf32>>
  %g = collage.get_item %t {index = 1 : i64} : (tuple<tensor<2x4xf32>, tensor<2x4xf32>>)
       -> tensor<2x4xf32>
  func.return %g : tensor<2x4xf32>""")
    seeds = UnionPartitionRule("", (OpCallByKindPartitionRule(""),
                                    DFPatternPartitionRule("", is_op("collage.tuple"))))
    rule = CombinePartitionRule("", seeds, (TupleProjCombinerRule(),))
    assert node_sets(rule, g) == sets("a", "t", "t g")
    assert node_sets(HostPartitionRule(), g) == sets("t", "g")
    assert {c.cost for c in run(HostPartitionRule(), g)} == {0.0}


def test_constant_combiner_pulls_in_the_constants_read():
    g = parse_graph(CONV, CONV_ARGS)
    rule = CombinePartitionRule("", OpCallByKindPartitionRule(""), (ConstantCombinerRule(),))
    assert node_sets(rule, g) == sets("c", "a", "r", "m", "c w", "a b")
    assert [c.rule_name for c in run(rule, g)][-2:] == ["conv2d+const", "add+const"]


def test_only_valid_drops_multi_exit_and_reentrant_sub_graphs():
    g = parse_graph(DIAMOND)
    every = CombinePartitionRule("", OpCallByKindPartitionRule(""),
                                 (AllSimpleCombinerRule("", JOIN_ANYTHING),))
    two_exits = DFPatternPartitionRule("", is_op("collage.relu") | is_op("collage.tanh"))
    multi = CombinePartitionRule("", two_exits, ())
    assert node_sets(OnlyValidPartitionRule("", every, ONE_EXIT), g) == sets(
        "a", "b", "s", "a s", "b s", "a b s"
    )
    assert node_sets(OnlyValidPartitionRule("", multi, ONE_EXIT), g) == sets("a", "b")


def test_max_coalesce_gives_maximal_supported_regions():
    g = parse_graph(MLP, MLP_ARGS)
    no_tanh = OpPredicatePartitionRule("", lambda op: op.name != "collage.tanh")
    regions = MaxCoalescePartitionRule("max", no_tanh, SubGraphConfig(max_exits=0,
                                                                      allow_taps=True))
    # one region of all but tanh would be left at %m2 and re-entered at %a2
    assert node_sets(regions, g) == sets("mm h p m1 a1 m2 m3", "a2 m4 y")
    one_exit = MaxCoalescePartitionRule("max", no_tanh, SubGraphConfig(max_exits=2))
    result = node_sets(one_exit, g)
    covered = set().union(*result)
    assert covered == {f"%{n}" for n in "mm h p m1 a1 m2 m3 a2 m4 y".split()}
    assert all(SubGraph(g, c.inside).is_valid(SubGraphConfig(max_exits=2))
               for c in run(one_exit, g))
    assert {c.rule_name for c in run(one_exit, g)} == {"max.region"}


SHARED_CONSTANT = """
  %c = collage.constant dense<0.5> : tensor<4x8xf32>
  %a = collage.add %x, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = collage.relu %a : tensor<4x8xf32>
  %m = collage.mul %r, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %m : tensor<4x8xf32>"""


@dataclass(frozen=True)
class Seeds(PartitionRule):
    """The given node sets (by SSA name), as candidates."""

    groups: tuple[str, ...]
    name: str = "seeds"

    def all_candidates(self, graph, spec):
        by_name = {f"%{n.op.results[0].name_hint}": n.index for n in graph.nodes
                   if n.op is not None and n.op.results}
        return [CandidateKernel(SubGraph(graph, of(by_name[f"%{v}"] for v in g.split())),
                                spec, self.name) for g in self.groups]


def test_max_coalesce_merges_regions_that_share_only_a_constant():
    """{a, c} and {c, m} both hold %c (as the importer's CSE leaves a weight two ops read):
    with %r between them they are one region, %c once."""
    g = parse_graph(SHARED_CONSTANT, "%x: tensor<4x8xf32>")
    rule = MaxCoalescePartitionRule("max", Seeds(("a c", "r", "c m")),
                                    SubGraphConfig(max_exits=0, allow_taps=True))
    assert node_sets(rule, g) == sets("a c r m")


def test_combiners_unite_candidates_that_share_only_a_constant():
    g = parse_graph(SHARED_CONSTANT, "%x: tensor<4x8xf32>")
    rule = CombinePartitionRule("", Seeds(("a c", "r", "c m")),
                                (AllSimpleCombinerRule("", JOIN_ANYTHING),))
    assert node_sets(rule, g) == sets("a c", "r", "c m", "a c r", "c r m", "a c r m")


def test_tuple_combiner_unites_producers_that_share_only_a_constant():
    """The tuple's two producers both hold %c; sharing a constant is no overlap, so they
    join the tuple and its concat; producers sharing an op (%a) never do."""
    t4 = "tensor<4x8xf32>"
    pair = f"tuple<{t4}, {t4}>"
    g = parse_graph(f"""
  %c = collage.constant dense<0.5> : {t4}
  %a = collage.add %x, %c : ({t4}, {t4}) -> {t4}
  %e = collage.mul %a, %c : ({t4}, {t4}) -> {t4}
  %t = collage.tuple %a, %e : ({t4}, {t4}) -> {pair}
  %o = collage.concat %t {{axis = 1 : i64}} : ({pair}) -> tensor<4x16xf32>
  func.return %o : tensor<4x16xf32>""", f"%x: {t4}")
    shared_constant = CombinePartitionRule("", Seeds(("a c", "e c", "o")),
                                           (TupleArgCombinerRule(),))
    assert node_sets(shared_constant, g) == sets("a c", "e c", "o", "a c e t o")
    shared_op = CombinePartitionRule("", Seeds(("a c", "a e", "o")), (TupleArgCombinerRule(),))
    assert node_sets(shared_op, g) == sets("a c", "a e", "o")


def test_dataflow_template_rule():
    """An OPU-like pipeline pad -> conv -> add -> relu|pool: chains along template links,
    each stage at most once per group."""
    g = parse_graph(f"""
  %p = collage.pad %x {{pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 0>}} : {T4} -> {T4}
  %w = collage.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = collage.conv2d %p, %w {{strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>,
       dilations = array<i64: 1, 1>, group = 1 : i64}} : ({T4}, tensor<2x2x1x1xf32>) -> {T4}
  %a = collage.add %c, %x : ({T4}, {T4}) -> {T4}
  %r = collage.relu %a : {T4}
  %q = collage.pad %r {{pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 0>}} : {T4} -> {T4}
  func.return %q : {T4}""", CONV_ARGS)
    links = {"collage.pad": ("collage.conv2d",), "collage.conv2d": ("collage.add",),
             "collage.add": ("collage.relu", "collage.max_pool2d"),
             "collage.relu": ("collage.pad",)}
    rule = DataflowTemplatePartitionRule("opu", links)
    assert node_sets(rule, g) == sets(
        "p", "p c", "p c a", "p c a r", "c", "c a", "c a r", "c a r q", "a", "a r", "a r q",
        "r", "r q", "q",
    )
    opu = Backend("opu", rule=OnlyValidPartitionRule("", rule, ONE_EXIT),
                  fusion=FusionStyle.NONE)
    spec = opu.partition_spec()
    assert spec.rule is opu.rule
    assert sets("p c a r") <= {frozenset(names(g, c.inside))
                               for c in spec.rule.all_candidates(g, spec)}


def test_max_per_node_keeps_the_smallest_kernels_of_each_lowest_node():
    """The cap bounds the fused candidates sharing a lowest node; rounds form unions
    smallest first, so what it keeps are the smallest ones, and no cap (0) keeps them all."""
    g = parse_graph(MLP, MLP_ARGS)
    config = SubGraphConfig(max_exits=1, allow_taps=False, max_depth=0)

    def rule(cap: int) -> PartitionRule:
        return CombinePartitionRule(
            "", OpCallByKindPartitionRule(""),
            (AllSimpleCombinerRule("", JOIN_ANYTHING, grow=True),), 0, config, cap)

    everything = run(rule(0), g)
    assert {frozenset(names(g, c.inside)) for c in everything} == brute_force_valid(g, 0)
    capped = run(rule(3), g)
    per_low: dict[int, list[int]] = {}
    for c in capped:
        per_low.setdefault(min(bits(c.inside)), []).append(c.inside.bit_count())
    assert max(map(len, per_low.values())) == 3 and len(capped) < len(everything)
    for low, kept in per_low.items():
        dropped = [c.inside.bit_count() for c in everything
                   if min(bits(c.inside)) == low and c not in capped]
        assert not dropped or max(kept) <= min(dropped)
