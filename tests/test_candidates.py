"""Candidate kernels (`collage_xdsl.core.candidates.generate_candidates`) from the enabled
backends' specs: support predicates, ops no backend supports, opaque ops, host tuples,
ResNet-50 with every built-in backend, and the collage-candidates pass."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from collage_xdsl.passes.candidates import CollageCandidatesPass
from graph_helpers import CONV, CONV_ARGS, SPLIT, names, parse_graph
from xdsl.context import Context
from xdsl.dialects.func import FuncOp

from collage_xdsl.backends import (
    gather_specs,
    get_backend,
)
from collage_xdsl.backends.base import f32_only
from collage_xdsl.core.candidates import generate_candidates
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.errors import CollageError
from collage_xdsl.frontend import import_onnx


def test_predicates_decide_support():
    g = parse_graph("""
  %c = collage.cast %x : tensor<2x4xf32> -> tensor<2x4xf64>
  %r = collage.relu %c : tensor<2x4xf64>
  func.return %r : tensor<2x4xf64>""")
    ort = get_backend("onnxruntime")
    ops = [n.op for n in g.nodes if n.op is not None and n.op.name != "func.return"]
    assert [ort.supports(op) for op in ops] == [False, False]
    assert not f32_only(ops[1])
    with pytest.raises(CollageError, match="no enabled backend supports collage.cast .*%c"):
        generate_candidates(g, gather_specs(["onnxruntime"]))
    assert {names(g, c.inside).pop() for c in generate_candidates(g, gather_specs(["tvm"]))
            } == {"%c", "%r"}


def test_op_no_enabled_backend_supports_is_an_error():
    g = parse_graph(CONV, CONV_ARGS)
    specs = gather_specs(["test"], options={"test": {"ops": ["relu", "add"]}})
    with pytest.raises(CollageError, match=r"no enabled backend supports collage.conv2d "
                                           r"\(node %c in @main\); enabled backends: test"):
        generate_candidates(g, specs)


@pytest.mark.parametrize("regions", [True, False])
def test_tvm_covers_every_op_including_opaque_ones(regions):
    g = parse_graph("""
  %s = collage.softmax %x {axis = 1 : i64} : tensor<2x4xf32>
  %r = collage.relu %s : tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>""")
    specs = gather_specs(["tvm"], native_max_regions=regions)
    got = {(c.rule_name, frozenset(names(g, c.inside))) for c in generate_candidates(g, specs)}
    fused = {("softmax", frozenset({"%s"})), ("relu", frozenset({"%r"}))}  # opaque never fuses
    # ... but MaxCoalesce would merge the two kernels, so the search also sees that kernel
    region = {("max.region", frozenset({"%s", "%r"}))}
    assert got == (fused | region if regions else fused)


def test_tuples_are_placed_on_the_host():
    g = parse_graph(SPLIT)
    cands = generate_candidates(g, gather_specs(["tvm"]))
    host = [c for c in cands if c.spec.name == "host"]
    assert [(names(g, c.inside), c.cost, c.rule_name) for c in host] == [
        ({"%t"}, 0.0, "host.tuple")
    ]


def test_pass_prints_generate_candidates(capsys):
    g = parse_graph(CONV, CONV_ARGS)
    module = g.func.parent_op()
    before = str(module)
    CollageCandidatesPass(backends=("tvm", "test"), backend_options="test: ops=relu").apply(Context(), module)
    assert str(module) == before
    lines = capsys.readouterr().out.splitlines()
    specs = gather_specs(["tvm", "test"], options={"test": {"ops": ["relu"]}})
    expected = [c.describe(g) for c in generate_candidates(g, specs)]
    assert lines == [f"// candidates @main: {len(expected)}", *expected]
    assert "tvm conv2d+add+relu [%c, %a, %r] kind=out_ewise_fusable label=-" in lines
    assert "test relu [%r] kind=elemwise label=-" in lines


def test_resnet50_candidates_with_all_builtin_backends():
    light = Path(onnx.__file__).parent / "backend/test/data/light"
    resnet50 = import_onnx(light / "light_resnet50.onnx")
    func = next(op for op in resnet50.ops if isinstance(op, FuncOp))
    graph = DataflowGraph(func)
    cands = generate_candidates(graph, gather_specs(["tvm", "onnxruntime", "openvino"],
                                                    native_max_depth=8, byoc_max_depth=8))
    assert len({c.spec.name for c in cands}) == 3
    assert all(c.sub_graph.depth <= 8 for c in cands if c.rule_name != "max.region")
    regions = [c for c in cands if c.rule_name == "max.region"]
    assert [(c.spec.name, c.inside) for c in regions] == [
        ("tvm", graph.kernel_nodes), ("onnxruntime", graph.kernel_nodes),
        ("openvino", graph.kernel_nodes)
    ]


def test_ops_of_other_dialects_get_no_candidate():
    g = parse_graph("""
  %r = collage.relu %x : tensor<2x4xf32>
  %c = func.call @ext(%r) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %c : tensor<2x4xf32>""",
                    extra="func.func private @ext(tensor<2x4xf32>) -> tensor<2x4xf32>")
    with pytest.raises(CollageError, match=r"no enabled backend supports func.call \(node %c"):
        generate_candidates(g, gather_specs(["tvm", "onnxruntime"]))
