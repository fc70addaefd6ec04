"""InstanceNormalization, GroupNormalization (opset 18's per-group and 21's per-channel
scale), ReduceMin, ReduceL2 and ArgMax: imported and interpreted against ONNX Runtime, each
op's kernel on every backend against the interpreter, and a small model through
`collage run --backends ... --check`."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from example_models import f32, make, onnxruntime_outputs
from ir_helpers import check_kernel, main_of, parse
from onnx import TensorProto, helper, numpy_helper
from run_helpers import runs_and_matches_onnxruntime

from collage_xdsl.frontend import FrontendError, import_onnx
from collage_xdsl.ir.interpreter import run_module

BACKENDS = ["tvm", "onnxruntime", "openvino"]
RNG = np.random.default_rng(5)


def check_against_onnxruntime(node, shapes, out_shape, opset, out_type=TensorProto.FLOAT):
    """`node` on inputs of `shapes`: imported and interpreted, as ONNX Runtime runs it."""
    names = list(node.input)
    output = helper.make_tensor_value_info("y", out_type, out_shape)
    model = make([node], [f32(n, s) for n, s in zip(names, shapes)], [output], opset)
    feeds = [RNG.normal(1, 2, s).astype(np.float32) for s in shapes]
    (expected,) = onnxruntime_outputs(model, feeds)
    (actual,) = run_module(import_onnx(model), feeds)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(2, 3, 5), (1, 4, 3, 6), (2, 2, 2, 3, 4)])
def test_instance_norm_matches_onnxruntime(shape):
    node = helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-3)
    check_against_onnxruntime(node, [shape, shape[1:2], shape[1:2]], shape, 17)


@pytest.mark.parametrize("opset", [18, 21])
@pytest.mark.parametrize("groups", [1, 2, 4])
@pytest.mark.parametrize("shape", [(2, 8, 5), (1, 4, 3, 6)])
def test_group_norm_matches_onnxruntime(shape, groups, opset):
    """Opset 18 has a scale and bias per group, opset 21 per channel."""
    node = helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=groups,
                            epsilon=1e-4)
    per = (groups,) if opset < 21 else shape[1:2]
    check_against_onnxruntime(node, [shape, per, per], shape, opset)


REDUCTIONS = [((3, 4, 5), [1], 1), ((3, 4, 5), [0, -1], 0), ((3, 4, 5), None, 1),
              ((2, 6), [-1], 0)]


@pytest.mark.parametrize("op_type", ["ReduceMin", "ReduceL2"])
@pytest.mark.parametrize("shape,axes,keepdims", REDUCTIONS)
@pytest.mark.parametrize("opset", [17, 18])
def test_reduction_matches_onnxruntime(op_type, shape, axes, keepdims, opset):
    """Axes as an attribute before opset 18, as an input from then on."""
    inputs, inits = ["x"], []
    if axes is not None and opset >= 18:
        inputs.append("axes")
        inits.append(numpy_helper.from_array(np.array(axes, dtype=np.int64), "axes"))
    attrs = {"axes": axes} if axes is not None and opset < 18 else {}
    node = helper.make_node(op_type, inputs, ["y"], keepdims=keepdims, **attrs)
    model = make([node], [f32("x", shape)], [f32("y", None)], opset, inits)
    x = RNG.normal(0, 2, shape).astype(np.float32)
    (expected,) = onnxruntime_outputs(model, [x])
    (actual,) = run_module(import_onnx(model), [x])
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("axis,keepdims", [(0, 1), (1, 0), (-1, 1), (2, 0)])
def test_argmax_matches_onnxruntime(axis, keepdims):
    """Ties resolve to the first maximum, as with select_last_index = 0."""
    node = helper.make_node("ArgMax", ["x"], ["y"], axis=axis, keepdims=keepdims)
    model = make([node], [f32("x", (3, 4, 5))],
                 [helper.make_tensor_value_info("y", TensorProto.INT64, None)], 13)
    x = RNG.integers(0, 3, (3, 4, 5)).astype(np.float32)  # many ties
    (expected,) = onnxruntime_outputs(model, [x])
    (actual,) = run_module(import_onnx(model), [x])
    assert actual.dtype == expected.dtype == np.int64
    np.testing.assert_array_equal(actual, expected)


def test_argmax_select_last_index_is_an_import_error():
    node = helper.make_node("ArgMax", ["x"], ["y"], axis=1, select_last_index=1, name="am")
    model = make([node], [f32("x", (3, 4))],
                 [helper.make_tensor_value_info("y", TensorProto.INT64, None)], 13)
    with pytest.raises(FrontendError, match=r"node 'am' \(ArgMax\).*select_last_index"):
        import_onnx(model)


# ---------------------------------------------------------------------------
# Kernels on every backend
# ---------------------------------------------------------------------------

X = "tensor<2x4x3x5xf32>"
NORMS = {
    "instance_norm": "{epsilon = 1.000000e-05 : f32}",
    "group_norm_1": "{num_groups = 1 : i64, epsilon = 1.000000e-05 : f32}",
    "group_norm_2": "{num_groups = 2 : i64, epsilon = 1.000000e-03 : f32}",
    "group_norm_4": "{num_groups = 4 : i64, epsilon = 1.000000e-05 : f32}",
}
REDUCE_KERNELS = {
    "reduce_min": ("{axes = array<i64: 1, 3>, keepdims = true}", "tensor<2x1x3x1xf32>"),
    "reduce_l2": ("{axes = array<i64: -1>, keepdims = false}", "tensor<2x4x3xf32>"),
    "argmax": ("{axis = 1 : i64, keepdims = false}", "tensor<2x3x5xi64>"),
    "argmax_keep": ("{axis = -1 : i64, keepdims = true}", "tensor<2x4x3x1xi64>"),
}


def kernel(text: str):
    module = parse(text)
    module.verify()
    return main_of(module)


def norm_kernel(name: str):
    op = name.rsplit("_", 1)[0] if name[-1].isdigit() else name
    return kernel(f"""
    func.func @{op}(%x: {X}, %s: tensor<4xf32>, %b: tensor<4xf32>) -> {X} {{
      %y = collage.{op} %x, %s, %b {NORMS[name]} : ({X}, tensor<4xf32>, tensor<4xf32>) -> {X}
      func.return %y : {X}
    }}""")


def reduce_kernel(name: str):
    attrs, out = REDUCE_KERNELS[name]
    op = name.removesuffix("_keep")
    return kernel(f"""
    func.func @{op}(%x: {X}) -> {out} {{
      %y = collage.{op} %x {attrs} : {X} -> {out}
      func.return %y : {out}
    }}""")


@pytest.mark.parametrize("name", NORMS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_norm_kernel_matches_interpreter(backend, name):
    feeds = [RNG.normal(1, 2, s).astype(np.float32) for s in [(2, 4, 3, 5), (4,), (4,)]]
    check_kernel(backend, norm_kernel(name), feeds, rtol=1e-4)


@pytest.mark.parametrize("name", REDUCE_KERNELS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_reduce_kernel_matches_interpreter(backend, name):
    x = RNG.normal(0, 2, (2, 4, 3, 5)).astype(np.float32)
    check_kernel(backend, reduce_kernel(name), [x], rtol=1e-4)


# ---------------------------------------------------------------------------
# A model
# ---------------------------------------------------------------------------


def norm_block() -> onnx.ModelProto:
    """Conv -> GroupNormalization -> SiLU (x * Sigmoid x) -> Conv -> InstanceNormalization ->
    ReduceMean over the spatial axes."""
    def weight(name, shape):
        return numpy_helper.from_array(RNG.normal(0, 0.5, shape).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("GroupNormalization", ["c1", "gs", "gb"], ["g"], num_groups=4),
        helper.make_node("Sigmoid", ["g"], ["sg"]),
        helper.make_node("Mul", ["g", "sg"], ["h"]),
        helper.make_node("Conv", ["h", "w2", "b2"], ["c2"], kernel_shape=[1, 1]),
        helper.make_node("InstanceNormalization", ["c2", "is", "ib"], ["n"]),
        helper.make_node("ReduceMean", ["n", "axes"], ["y"], keepdims=0),
    ]
    inits = [weight("w1", (8, 3, 3, 3)), weight("b1", (8,)), weight("gs", (8,)),
             weight("gb", (8,)), weight("w2", (6, 8, 1, 1)), weight("b2", (6,)),
             weight("is", (6,)), weight("ib", (6,)),
             numpy_helper.from_array(np.array([2, 3], dtype=np.int64), "axes")]
    model = make(nodes, [f32("x", [1, 3, 12, 12])], [f32("y", [1, 6])], 21, inits)
    model.ir_version = 10  # opset 21's
    return model


@pytest.mark.parametrize("backend", [None, *BACKENDS])
def test_norm_block_runs_partitioned_and_matches_onnxruntime(backend, tmp_path, capsys,
                                                              monkeypatch):
    """As partitioned, then with both normalizations pinned to each backend in turn."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    runs_and_matches_onnxruntime(norm_block(), tmp_path / "block.onnx",
                                 ["group_norm", "instance_norm"], backend, capsys)
