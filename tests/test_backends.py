"""Backends (`collage_xdsl.backends`): the built-in ones, registration through the Python
API and entry points, their declared patterns and options (`gather_specs`, the test
backend's), and compiling through the codegen hook with versioned kernels."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import numpy as np
import pytest
from collage_xdsl.dialects.collage import BACKEND_ENTRY_POINTS
from graph_helpers import CONV, CONV_ARGS, MLP, MLP_ARGS, names, parse_graph
from ir_helpers import parse
from xdsl.dialects.builtin import ModuleOp

import collage_xdsl.backends as registry
from collage_xdsl.backends import (
    available_backends,
    backend_for,
    compile_kernel,
    gather_specs,
    get_backend,
    parse_backend_options,
    register_backend,
    runnable_backends,
)
from collage_xdsl.backends.base import Backend, FusionStyle
from collage_xdsl.backends.kernel import KernelCompileError
from collage_xdsl.backends.test import make_test_backend
from collage_xdsl.backends.tvm.options import tuning_backend_options
from collage_xdsl.core.candidates import generate_candidates
from collage_xdsl.errors import CollageError

T = "tensor<4x8xf32>"


def unary(op: str) -> ModuleOp:
    return parse(f"func.func @k(%x: {T}) -> {T} {{\n  %y = collage.{op} %x : {T}\n"
                 f"  func.return %y : {T}\n}}")


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
    eps = [EntryPoint("fake", "test_backends:FAKE", BACKEND_ENTRY_POINTS),
           EntryPoint("broken", "no_such_module_here:X", BACKEND_ENTRY_POINTS)]
    installed = registry.entry_points
    monkeypatch.setattr(registry, "entry_points",
                        lambda group: [*installed(group=group), *eps])
    assert {"fake", "broken", "tvm", "onnxruntime"} <= set(available_backends())
    assert get_backend("fake") is FAKE
    with pytest.raises(CollageError, match="'broken' failed to load from no_such_module_here"):
        get_backend("broken")


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


def test_backend_options_as_text_reach_the_factory():
    text = "test: ops=relu,add fusion=tvm patterns=relu+add; tvm: tune=none trials=4"
    options = parse_backend_options(text)
    assert options == {"test": {"ops": "relu,add", "fusion": "tvm", "patterns": "relu+add"},
                       "tvm": {"tune": "none", "trials": "4"}}
    backend = get_backend("test", **options["test"])  # text converted to the factory's types
    assert set(backend.supported_ops) == {"collage.relu", "collage.add"}
    assert backend.fusion is FusionStyle.TVM and [p.name for p in backend.patterns] == ["relu_add"]
    assert get_backend("tvm", **options["tvm"]).tuning.trials == 4
    assert get_backend("test", ops="relu") == get_backend("test", ops=["relu"])
    assert get_backend("test", ops="relu") is get_backend("test", ops="relu")  # made once


def test_a_backend_option_value_may_be_quoted():
    text = tuning_backend_options("metaschedule", 4, "/my dir/tuning")
    assert text == "tvm: tune=metaschedule trials=4 db='/my dir/tuning'"
    assert parse_backend_options(text) == {
        "tvm": {"tune": "metaschedule", "trials": "4", "db": "/my dir/tuning"}}
    assert backend_for("tvm", parse_backend_options(text)).tuning.db_dir == "/my dir/tuning"
    assert backend_for("tvm", {}) is get_backend("tvm")
    assert tuning_backend_options("none", 4, "/x") == ""


@pytest.mark.parametrize("text, message", [
    ("tvm: db='/my dir", "backend-options: tvm: No closing quotation"),
    ("test ops=relu", "expected NAME: KEY=VALUE"),
    ("test: ops=relu; test: fusion=tvm", "each backend once"),
    ("test: ops", "expected KEY=VALUE, each key once, got 'ops'"),
    ("test: ops=relu ops=add", "each key once"),
])
def test_bad_backend_options_text_is_an_error(text, message):
    with pytest.raises(CollageError, match=message):
        parse_backend_options(text)


@pytest.mark.parametrize("name, options, message", [
    ("tvm", {"trials": "many"}, "backend 'tvm': option trials must be a number, got 'many'"),
    ("tvm", {"tunes": "x"}, "backend 'tvm': unknown option 'tunes' \\(options: tune, trials, db\\)"),
    ("onnxruntime", {"threads": "2"}, "backend 'onnxruntime' takes no options, got threads"),
    ("nosuch", {}, "unknown backend 'nosuch'; available: iree, onnxruntime, openvino, test, tvm"),
])
def test_bad_backend_options_are_errors_naming_the_backend(name, options, message):
    with pytest.raises(CollageError, match=message):
        get_backend(name, **options)


def test_only_backends_with_a_codegen_hook_run_kernels():
    assert runnable_backends() == ["iree", "onnxruntime", "openvino", "tvm"]
    assert not get_backend("test").can_compile
    with pytest.raises(KernelCompileError, match="backend 'test' has no codegen"):
        get_backend("test", ops="relu").compile(unary("relu"))
    with pytest.raises(KernelCompileError, match="unknown backend 'nosuch'"):
        compile_kernel("nosuch", unary("relu"))


@pytest.mark.parametrize("name", ["tvm", "onnxruntime", "openvino"])
def test_backend_compiles_through_codegen_and_versions_its_kernels(name):
    backend = get_backend(name)
    kernel = backend.compile(unary("exp"), threads=1)
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
    np.testing.assert_allclose(kernel([x])[0], np.exp(x), rtol=1e-5)
    assert backend.version == f"{backend.package}=={kernel.version}"
    with pytest.raises(KernelCompileError):
        backend.compile(ModuleOp([]))
