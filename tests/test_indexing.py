"""GatherElements, GatherND, ScatterND, TopK, CumSum and Range end to end: every attribute
variant imported and run by the interpreter and by each backend's kernel, against ONNX
Runtime on random inputs (negative indices included); what the dialect cannot express is
one clear import error; a small model runs through `collage run --backends ... --check`."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import pytest
from example_models import f32, make, onnxruntime_outputs
from onnx import TensorProto, helper, numpy_helper
from run_helpers import runs_and_matches_onnxruntime

from collage_xdsl.backends import compile_kernel, get_backend
from collage_xdsl.frontend import FrontendError, import_onnx
from collage_xdsl.ir.interpreter import InterpreterError, run_module

RNG = np.random.default_rng(11)
X = (3, 4, 5)
BACKENDS = ["interpreter", "tvm", "onnxruntime", "openvino"]


def indices(dims, shape, dtype=np.int64, unique=False) -> np.ndarray:
    """Random indices into `dims` (one per index of the last axis of `shape` when `dims` is
    a list), about half of them negative; `unique` tuples with `unique`."""
    dims = np.asarray(dims)
    if unique:
        every = np.array(list(itertools.product(*map(range, dims))))
        index = every[RNG.permutation(len(every))[:int(np.prod(shape[:-1]))]].reshape(shape)
    else:
        index = RNG.integers(0, dims, shape)
    return (index - dims * RNG.integers(0, 2, shape)).astype(dtype)


def model(node, inputs: dict[str, np.ndarray], outputs: dict[str, int], opset=20,
          constants: dict[str, np.ndarray] | None = None) -> tuple[onnx.ModelProto, list]:
    """A model of the one `node` over graph `inputs` (name -> value) and `constants`
    (initializers), with `outputs` (name -> element type); and the inputs' values."""
    infos = [helper.make_tensor_value_info(
        n, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape)) for n, v in inputs.items()]
    outs = [helper.make_tensor_value_info(n, t, None) for n, t in outputs.items()]
    inits = [numpy_helper.from_array(v, n) for n, v in (constants or {}).items()]
    return make([node], infos, outs, opset, inits), list(inputs.values())


def x(shape=X) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


F, I64 = TensorProto.FLOAT, TensorProto.INT64


def gather_elements(axis, index_shape, dtype=np.int64):
    node = helper.make_node("GatherElements", ["x", "i"], ["y"], axis=axis)
    return model(node, {"x": x(), "i": indices(X[axis], index_shape, dtype)}, {"y": F})


def gather_nd(batch_dims, index_shape):
    node = helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=batch_dims)
    dims = list(X[batch_dims:batch_dims + index_shape[-1]])
    return model(node, {"x": x(), "i": indices(dims, index_shape)}, {"y": F})


def scatter_nd(reduction, index_shape):
    """Unique index tuples without a reduction (where a repeat's result is undefined)."""
    node = helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction=reduction)
    dims = list(X[:index_shape[-1]])
    index = indices(dims, index_shape, unique=reduction == "none")
    updates = x((*index_shape[:-1], *X[index_shape[-1]:]))
    return model(node, {"x": x(), "i": index, "u": updates}, {"y": F})


def top_k(k, axis, largest, opset=20):
    """K a constant input, or an attribute before opset 10."""
    if opset < 10:
        node = helper.make_node("TopK", ["x"], ["v", "i"], k=k, axis=axis)
        return model(node, {"x": x()}, {"v": F, "i": I64}, opset)
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=axis, largest=largest)
    return model(node, {"x": x()}, {"v": F, "i": I64}, opset, {"k": np.array([k])})


def cumsum(axis, exclusive, reverse):
    node = helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=exclusive,
                            reverse=reverse)
    return model(node, {"x": x()}, {"y": F}, constants={"axis": np.array(axis)})


VARIANTS = {
    "gather_elements-axis0": lambda: gather_elements(0, (2, 4, 5)),
    "gather_elements-axis-1-i32": lambda: gather_elements(-1, (3, 4, 7), np.int32),
    "gather_elements-short": lambda: gather_elements(1, (2, 6, 3)),
    "gather_nd-tuples": lambda: gather_nd(0, (4, 3)),
    "gather_nd-slices": lambda: gather_nd(0, (2, 2, 1)),
    "gather_nd-batch1": lambda: gather_nd(1, (3, 2, 2)),
    "gather_nd-batch2": lambda: gather_nd(2, (3, 4, 1)),
    "scatter_nd-none": lambda: scatter_nd("none", (2, 2)),
    "scatter_nd-add": lambda: scatter_nd("add", (5, 1)),
    "scatter_nd-mul": lambda: scatter_nd("mul", (4, 2)),
    "scatter_nd-min": lambda: scatter_nd("min", (6, 3)),
    "scatter_nd-max": lambda: scatter_nd("max", (5, 1)),
    "top_k-largest": lambda: top_k(3, -1, 1),
    "top_k-smallest": lambda: top_k(2, 0, 0),
    "top_k-opset9": lambda: top_k(4, 1, 1, opset=9),
    "cumsum": lambda: cumsum(0, 0, 0),
    "cumsum-exclusive": lambda: cumsum(1, 1, 0),
    "cumsum-reverse": lambda: cumsum(-1, 0, 1),
    "cumsum-exclusive-reverse": lambda: cumsum(-2, 1, 1),
}

NOT_ON = {"gather_elements-short": {"openvino"}}
"""Variants a backend's spec leaves out (by its op predicate)."""


def run(backend: str, module, feeds: list) -> list[np.ndarray]:
    if backend == "interpreter":
        return run_module(module, feeds)
    kernel = compile_kernel(backend, module)
    try:
        return kernel(feeds)
    finally:
        kernel.release()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_variant_matches_onnxruntime(variant, backend):
    onnx_model, feeds = VARIANTS[variant]()
    module = import_onnx(onnx_model)
    name = "collage." + variant.split("-")[0]
    (op,) = [op for op in module.walk() if op.name == name]
    if backend != "interpreter":
        assert get_backend(backend).supports(op) is (backend not in NOT_ON.get(variant, ()))
        if not get_backend(backend).supports(op):
            return
    expected = onnxruntime_outputs(onnx_model, feeds)
    actual = run(backend, module, feeds)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype and a.shape == e.shape
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5)


def test_top_k_ties_keep_the_lower_index_first():
    onnx_model, _ = top_k(3, 1, 1)
    feeds = [RNG.integers(0, 3, X).astype(np.float32)]
    expected = onnxruntime_outputs(onnx_model, feeds)
    for a, e in zip(run_module(import_onnx(onnx_model), feeds), expected):
        np.testing.assert_array_equal(a, e)


# ---------------------------------------------------------------------------
# Range: folded when constant
# ---------------------------------------------------------------------------


def range_model(constant: bool) -> onnx.ModelProto:
    """y = x + Range(start, limit, delta): start a graph input unless `constant`."""
    values = {"start": np.array(2.0, np.float32), "limit": np.array(-1.0, np.float32),
              "delta": np.array(-0.5, np.float32)}
    nodes = [helper.make_node("Range", list(values), ["r"], name="rng"),
             helper.make_node("Add", ["x", "r"], ["y"])]
    inputs = [f32("x", [6])] + ([] if constant else [f32("start", [])])
    inits = [numpy_helper.from_array(v, n) for n, v in values.items()
             if constant or n != "start"]
    return make(nodes, inputs, [f32("y", [6])], 17, inits)


def test_constant_range_folds_into_a_constant():
    module = import_onnx(range_model(True))
    assert [op.name for op in module.walk() if op.name.startswith("collage.")] == [
        "collage.constant", "collage.add"]
    feeds = [x((6,))]
    (expected,) = onnxruntime_outputs(range_model(True), feeds)
    np.testing.assert_array_equal(run_module(module, feeds)[0], expected)


# ---------------------------------------------------------------------------
# What the dialect cannot express
# ---------------------------------------------------------------------------


def with_graph_input(onnx_model: onnx.ModelProto, name: str) -> onnx.ModelProto:
    """`onnx_model` with the initializer `name` turned into a graph input."""
    (init,) = [t for t in onnx_model.graph.initializer if t.name == name]
    onnx_model.graph.initializer.remove(init)
    onnx_model.graph.input.append(
        helper.make_tensor_value_info(name, init.data_type, list(init.dims)))
    return onnx_model


def named(onnx_model: onnx.ModelProto, **attrs) -> onnx.ModelProto:
    """`onnx_model` with its one node named `n` and `attrs` set on it."""
    node = onnx_model.graph.node[0]
    node.name = "n"
    node.attribute.extend(helper.make_attribute(k, v) for k, v in attrs.items())
    return onnx_model


@pytest.mark.parametrize("build, error", [
    (lambda: named(with_graph_input(top_k(2, 1, 1)[0], "k")),
     r"node 'n' \(TopK\): input 'K' must be a constant, it depends on the graph inputs"),
    (lambda: named(top_k(2, 1, 1)[0], sorted=0),
     r"node 'n' \(TopK\): sorted = 0 is not supported, only sorted results"),
    (lambda: named(with_graph_input(cumsum(1, 0, 0)[0], "axis")),
     r"node 'n' \(CumSum\): input 'axis' must be a constant, it depends on the graph inputs"),
    (lambda: range_model(False),
     r"node 'rng' \(Range\): start, limit and delta must be constants: the output's length "
     r"depends on their values"),
])
def test_what_the_dialect_cannot_express_is_one_import_error(build, error):
    with pytest.raises(FrontendError, match=error) as raised:
        import_onnx(build())
    assert "\n" not in str(raised.value)


def test_out_of_range_indices_are_an_interpreter_error():
    onnx_model, (data, index) = gather_elements(1, (3, 2, 5))
    index[0, 0, 0] = 4
    with pytest.raises(InterpreterError, match=r"collage.gather_elements .*indices out of range"):
        run_module(import_onnx(onnx_model), [data, index])


# ---------------------------------------------------------------------------
# A small model, partitioned
# ---------------------------------------------------------------------------


def top_k_scores() -> onnx.ModelProto:
    """Softmax scores -> the 2 best per row (TopK) -> their features (GatherElements of the
    expanded indices) -> a running sum (CumSum) -> a ScatterND into a zero grid."""
    consts = {"k": np.array([2]), "axis": np.array(1), "zeros": np.zeros((4, 2, 3), np.float32),
              "rows": np.array([[3], [0], [2], [1]]), "shape": np.array([4, 2, 3]),
              "last": np.array([2])}
    nodes = [
        helper.make_node("Softmax", ["x"], ["p"], axis=1),
        helper.make_node("TopK", ["p", "k"], ["v", "i"], axis=1),
        helper.make_node("Unsqueeze", ["i", "last"], ["i3"]),
        helper.make_node("Expand", ["i3", "shape"], ["ie"]),
        helper.make_node("GatherElements", ["f", "ie"], ["g"], axis=1),
        helper.make_node("CumSum", ["g", "axis"], ["c"]),
        helper.make_node("ScatterND", ["zeros", "rows", "c"], ["y"]),
    ]
    inits = [numpy_helper.from_array(v, n) for n, v in consts.items()]
    return make(nodes, [f32("x", [4, 6]), f32("f", [4, 6, 3])], [f32("y", [4, 2, 3])], 17,
                inits)


@pytest.mark.parametrize("backend", [None, "tvm", "onnxruntime", "openvino"])
def test_top_k_scores_runs_partitioned_and_matches_onnxruntime(backend, tmp_path, capsys,
                                                               monkeypatch):
    """As partitioned, then with the indexing ops pinned to each backend in turn (the
    full-size GatherElements is one OpenVINO runs)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    runs_and_matches_onnxruntime(top_k_scores(), tmp_path / "topk.onnx",
                                 ["top_k", "gather_elements", "cumsum", "scatter_nd"],
                                 backend, capsys)

