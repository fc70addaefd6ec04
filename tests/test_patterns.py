"""The dataflow pattern language: matches, overlapping matches, predicates, check callback."""

from __future__ import annotations

from graph_helpers import names, parse_graph

from collage_xdsl.core.candidates import node_name
from collage_xdsl.core.patterns import Match, find_matches, is_constant, is_op, wildcard

T = "tensor<2x4xf32>"
CHAIN = f"""
  %a = collage.relu %x : {T}
  %b = collage.relu %a : {T}
  %c = collage.relu %b : {T}
  func.return %c : {T}"""

BIAS = f"""
  %w = collage.constant dense<1.0> : tensor<4xf32>
  %l = collage.add %x, %w : ({T}, tensor<4xf32>) -> {T}
  %r = collage.add %w, %x : (tensor<4xf32>, {T}) -> {T}
  %s = collage.add %l, %r : ({T}, {T}) -> {T}
  %m = collage.mul %s, %s : ({T}, {T}) -> {T}
  %n = collage.mul %m, %x : ({T}, {T}) -> {T}
  func.return %n : {T}"""


def match_sets(pattern, graph, check=None) -> list[set[str]]:
    return [names(graph, m.inside) for m in find_matches(pattern, graph, check)]


def test_overlapping_matches_are_all_found():
    g = parse_graph(CHAIN)
    relu2 = is_op("collage.relu")(is_op("collage.relu")(wildcard()))
    assert match_sets(relu2, g) == [{"%a", "%b"}, {"%b", "%c"}]


def test_wildcard_stays_outside_and_constant_is_pulled_in():
    g = parse_graph(BIAS)
    pattern = is_op("collage.add")(wildcard(), is_constant())
    assert match_sets(pattern, g) == [{"%l", "%w"}]


def test_alternatives_match_either_operand_order():
    g = parse_graph(BIAS)
    add = "collage.add"
    pattern = is_op(add)(wildcard(), is_constant()) | is_op(add)(is_constant(), wildcard())
    assert match_sets(pattern, g) == [{"%l", "%w"}, {"%r", "%w"}]


def test_alternatives_inside_operands_enumerate_every_combination():
    g = parse_graph(BIAS)
    add = "collage.add"
    bias = is_op(add)(wildcard(), is_constant()) | is_op(add)(is_constant(), wildcard())
    assert match_sets(is_op(add)(bias, bias), g) == []  # one pattern object binds one node
    assert match_sets(is_op(add)(bias, bias | wildcard()), g) == [{"%w", "%l", "%s"}]
    other = is_op(add)(wildcard(), is_constant()) | is_op(add)(is_constant(), wildcard())
    assert match_sets(is_op(add)(bias, other), g) == [{"%w", "%l", "%r", "%s"}]


def test_a_pattern_used_twice_binds_one_node():
    g = parse_graph(BIAS)
    p = wildcard()
    assert match_sets(is_op("collage.mul")(p, p), g) == [{"%m"}]
    assert match_sets(is_op("collage.mul")(wildcard(), wildcard()), g) == [{"%m"}, {"%n"}]


def test_operand_count_must_agree_and_bare_is_op_ignores_operands():
    g = parse_graph(CHAIN)
    assert match_sets(is_op("collage.relu")(wildcard(), wildcard()), g) == []
    assert match_sets(is_op("collage.relu"), g) == [{"%a"}, {"%b"}, {"%c"}]


def test_attribute_shape_and_dtype_predicates():
    g = parse_graph(f"""
  %t = collage.transpose %x {{perm = array<i64: 1, 0>}} : {T} -> tensor<4x2xf32>
  %u = collage.transpose %t {{perm = array<i64: 1, 0>}} : tensor<4x2xf32> -> {T}
  %c = collage.cast %u : {T} -> tensor<2x4xf16>
  func.return %c : tensor<2x4xf16>""")
    tr = is_op("collage.transpose")
    assert match_sets(tr.has_attr({"perm": [1, 0]}), g) == [{"%t"}, {"%u"}]
    assert match_sets(tr.has_attr({"perm": (0, 1)}), g) == []
    assert match_sets(tr.has_attr({"missing": 1}), g) == []
    assert match_sets(tr.has_shape((4, None)), g) == [{"%t"}]
    assert match_sets(tr.has_shape((4,)), g) == []
    assert match_sets(wildcard().has_dtype("float16") | is_op("nothing"), g) == []
    assert match_sets(is_op("collage.cast").has_dtype("float16"), g) == [{"%c"}]
    assert match_sets(is_op("collage.cast").has_dtype("float32"), g) == []


def test_check_callback_sees_named_nodes_root_and_graph():
    g = parse_graph(CHAIN)
    seen: list[Match] = []

    def check(m: Match) -> bool:
        seen.append(m)
        return m.graph.nodes[m.nodes["inner"]].op.results[0].name_hint == "b"

    inner = is_op("collage.relu")(wildcard()).named("inner")
    pattern = is_op("collage.relu")(inner)
    assert match_sets(pattern, g, check) == [{"%b", "%c"}]
    assert [(node_name(g, m.root), m.op("inner").results[0].name_hint) for m in seen] == [
        ("%b", "a"), ("%c", "b")
    ]
    assert all(m.root_op is m.graph.nodes[m.root].op for m in seen)
