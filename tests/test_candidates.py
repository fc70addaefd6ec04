"""Backends, the registry, derived specs, generate_candidates and the collage-candidates pass."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path

import onnx
import pytest
from collage_xdsl.passes.candidates import CollageCandidatesPass
from test_patterns import names, parse_graph
from test_rules import CONV, CONV_ARGS, MLP, MLP_ARGS, SPLIT
from xdsl.context import Context
from xdsl.dialects.func import FuncOp

import collage_xdsl.backends as registry
from collage_xdsl.backends import (
    ENTRY_POINT_GROUP,
    available_backends,
    gather_specs,
    get_backend,
    register_backend,
)
from collage_xdsl.backends.base import Backend, FusionStyle, f32_only
from collage_xdsl.backends.test import make_test_backend
from collage_xdsl.core.candidates import generate_candidates
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.errors import CollageError
from collage_xdsl.frontend import import_onnx

FAKE = Backend("fake", supported_ops={"collage.relu": None}, fusion=FusionStyle.NONE)


def test_builtin_backends_are_registered():
    assert {"tvm", "onnxruntime", "openvino", "test"} <= set(available_backends())
    assert get_backend("tvm").version.startswith("apache-tvm==0.27")
    assert get_backend("onnxruntime").version.startswith("onnxruntime==")
    assert get_backend("openvino").byoc and not get_backend("tvm").byoc
    with pytest.raises(CollageError, match="unknown backend 'nope'.*onnxruntime"):
        get_backend("nope")


def test_python_api_registration(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTERED", {})
    register_backend("fake", FAKE)
    assert "fake" in available_backends()
    assert get_backend("fake") is FAKE
    register_backend("fake", lambda **options: "not a backend")
    with pytest.raises(CollageError, match="'fake' is a str, not a Backend"):
        get_backend("fake")
    register_backend("other", FAKE)
    with pytest.raises(CollageError, match="registered as 'other' calls itself 'fake'"):
        get_backend("other")


@pytest.fixture
def fresh_registry():
    """The registry reads the entry points afresh, and again after the test."""
    registry._entry_points.cache_clear()
    yield
    registry._entry_points.cache_clear()


def test_entry_point_registration(monkeypatch, fresh_registry):
    eps = [EntryPoint("fake", "test_candidates:FAKE", ENTRY_POINT_GROUP),
           EntryPoint("broken", "no_such_module_here:X", ENTRY_POINT_GROUP)]
    installed = registry.entry_points
    monkeypatch.setattr(registry, "entry_points",
                        lambda group: [*installed(group=group), *eps])
    assert {"fake", "broken", "tvm", "onnxruntime"} <= set(available_backends())
    assert get_backend("fake") is FAKE
    with pytest.raises(CollageError, match="'broken' failed to load from no_such_module_here"):
        get_backend("broken")


def test_predicates_decide_support():
    g = parse_graph("""
  %c = collage.cast %x : tensor<2x4xf32> -> tensor<2x4xf16>
  %r = collage.relu %c : tensor<2x4xf16>
  func.return %r : tensor<2x4xf16>""")
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


def test_onnxruntime_patterns_are_composites():
    g = parse_graph(CONV, CONV_ARGS)
    spec = get_backend("onnxruntime").partition_spec(max_regions=False)
    labelled = {c.sub_graph.label: names(g, c.inside)
                for c in spec.rule.all_candidates(g, spec) if c.rule_name == c.sub_graph.label}
    assert labelled == {
        "onnxruntime.conv2d_bias_relu": {"%w", "%c", "%b", "%a", "%r"},
        "onnxruntime.conv2d_bias": {"%w", "%c", "%b", "%a"},
    }


@pytest.mark.parametrize("regions", [True, False])
def test_byoc_max_regions_option(regions):
    g = parse_graph(MLP, MLP_ARGS)
    specs = gather_specs(["openvino"], byoc_max_depth=2, byoc_max_regions=regions,
                         native_max_regions=not regions)
    cands = generate_candidates(g, specs)
    deep = [c for c in cands if c.sub_graph.depth > 2]
    if regions:
        assert [names(g, c.inside) for c in deep] == [
            {f"%{n}" for n in "mm h p m1 a1 m2 t a2 m3 m4 y".split()}
        ]
        assert deep[0].rule_name == "max.region"
    else:
        assert deep == []
    assert {c.spec.name for c in cands} == {"openvino"}


def test_test_backend_from_options():
    g = parse_graph(CONV, CONV_ARGS)
    backend = make_test_backend(ops=["conv2d", "collage.add", "relu", "reduce_sum"],
                                fusion="none", patterns=["conv2d+add+relu"])
    spec = backend.partition_spec(max_regions=False)
    got = {(c.rule_name, frozenset(names(g, c.inside))) for c in spec.rule.all_candidates(g, spec)}
    assert got == {
        ("test.conv2d_add_relu", frozenset({"%c", "%a", "%r"})),
        ("conv2d", frozenset({"%c"})), ("add", frozenset({"%a"})),
        ("relu", frozenset({"%r"})), ("reduce_sum", frozenset({"%m"})),
    }
    with pytest.raises(CollageError, match="unknown op 'frobnicate'"):
        make_test_backend(ops=["frobnicate"])
    with pytest.raises(CollageError, match="unknown fusion style 'some'"):
        make_test_backend(fusion="some")


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
