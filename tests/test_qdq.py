"""QuantizeLinear and DequantizeLinear (int8 and uint8, per tensor and per channel): imported
and interpreted against ONNX Runtime, each kernel on every backend against the interpreter,
import errors for the forms the dialect lacks, the BYOC specs and ONNX Runtime's QDQ fusions,
and a QDQ conv block and a QDQ MatMul block run whole on each backend and partitioned by
`collage run`, matching ONNX Runtime within one quantization step."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from collage_xdsl.dialects import collage as C
from example_models import make, onnxruntime_outputs
from ir_helpers import main_of, parse
from onnx import TensorProto, helper, numpy_helper
from run_helpers import runs_and_matches_onnxruntime

from collage_xdsl.backends import compile_kernel, get_backend
from collage_xdsl.backends.kernel import kernel_function
from collage_xdsl.backends.onnx_export import export_onnx
from collage_xdsl.core.candidates import generate_candidates
from collage_xdsl.frontend import FrontendError, import_onnx
from collage_xdsl.ir.interpreter import run_function, run_module
from collage_xdsl.rewrite.constants import fold_constants

BACKENDS = ["tvm", "onnxruntime", "openvino"]
RNG = np.random.default_rng(11)
ZERO = {np.int8: (-10, 10), np.uint8: (100, 150)}
"""The range zero points are drawn from, by quantized type."""


def tensor(name: str, value) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def info(name: str, dtype, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)),
                                         shape)


def within_one_step(actual: np.ndarray, expected: np.ndarray) -> None:
    """Quantized results agree up to one step (rounding near a half), compared as int32."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert np.abs(actual.astype(np.int32) - expected.astype(np.int32)).max() <= 1


# ---------------------------------------------------------------------------
# The ops against ONNX Runtime, through the importer and the interpreter
# ---------------------------------------------------------------------------

SHAPE = (2, 3, 4, 5)
GRANULARITY = {"tensor": None, "axis1": 1, "last": -1}
"""Per tensor, or per channel along the given axis."""


def parameters(dtype, axis: int | None) -> list[onnx.TensorProto]:
    """A scale (0.01 to 0.05: the normal(0, 3) inputs saturate) and zero point."""
    shape = () if axis is None else (SHAPE[axis],)
    return [tensor("s", RNG.uniform(0.01, 0.05, shape).astype(np.float32)),
            tensor("z", RNG.integers(*ZERO[dtype], shape).astype(dtype))]


def check_op(op_type: str, dtype, axis: int | None, opset: int) -> None:
    attrs = {} if axis is None else {"axis": axis}
    node = helper.make_node(op_type, ["x", "s", "z"], ["y"], **attrs)
    if op_type == "QuantizeLinear":
        x = RNG.normal(0, 3, SHAPE).astype(np.float32)
        out = info("y", dtype, SHAPE)
    else:
        x = RNG.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, SHAPE, endpoint=True,
                         dtype=dtype)
        out = info("y", np.float32, SHAPE)
    model = make([node], [info("x", x.dtype, SHAPE)], [out], opset, parameters(dtype, axis))
    (expected,) = onnxruntime_outputs(model, [x])
    (actual,) = run_module(import_onnx(model), [x])
    if op_type == "QuantizeLinear":
        within_one_step(actual, expected)
    else:
        np.testing.assert_allclose(actual, expected, rtol=1e-6)


@pytest.mark.parametrize("opset", [13, 19, 21])
@pytest.mark.parametrize("granularity", GRANULARITY)
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("op_type", ["QuantizeLinear", "DequantizeLinear"])
def test_op_matches_onnxruntime(op_type, dtype, granularity, opset):
    check_op(op_type, dtype, GRANULARITY[granularity], opset)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("op_type", ["QuantizeLinear", "DequantizeLinear"])
def test_opset_10_per_tensor_matches_onnxruntime(op_type, dtype):
    check_op(op_type, dtype, None, 10)


def qdq_model(inputs: list[str], feeds: list[np.ndarray], inits, opset: int, **attrs):
    """x -> QuantizeLinear(x, *inputs[1:]) -> DequantizeLinear by the same scale and zero
    point, both outputs; `feeds` are the values of the graph inputs among `inputs`."""
    graph_inputs = [info(n, f.dtype, f.shape) for n, f in zip(inputs, feeds)]
    nodes = [helper.make_node("QuantizeLinear", inputs, ["q"], **attrs),
             helper.make_node("DequantizeLinear", ["q", *inputs[1:]], ["y"],
                              **{k: v for k, v in attrs.items() if k == "axis"})]
    return make(nodes, graph_inputs, [onnx.ValueInfoProto(name="q"), info("y", np.float32, None)],
                opset, inits)


FORMS = {  # name: (node inputs, graph input feeds, initializers, opset, attributes)
    "no zero point (uint8)": (["x", "s"], [], [tensor("s", np.float32(0.03))], 13, {}),
    "output_dtype int8": (["x", "s"], [], [tensor("s", np.float32(0.03))], 21,
                          {"output_dtype": TensorProto.INT8}),
    "one-value [1] scale": (["x", "s", "z"], [], [tensor("s", np.array([0.03], np.float32)),
                                                 tensor("z", np.array([7], np.int8))], 13, {}),
    "scale and zero point inputs": (["x", "s", "z"],
                                    [np.float32(0.03), np.uint8(120)], [], 13, {}),
    "per-channel scale input": (["x", "s", "z"], [np.full(4, 0.03, np.float32),
                                                  np.arange(4, dtype=np.int8)], [], 13,
                                {"axis": 2}),
    "one-value [1] scale input": (["x", "s", "z"], [np.array([0.03], np.float32),
                                                    np.array([3], np.int8)], [], 19, {}),
}


@pytest.mark.parametrize("form", FORMS)
def test_forms_match_onnxruntime(form):
    """A missing zero point, opset 21's output_dtype, a one-value scale (per tensor), and
    a scale and zero point that are graph inputs rather than constants."""
    inputs, feeds, inits, opset, attrs = FORMS[form]
    x = RNG.normal(0, 3, SHAPE).astype(np.float32)
    feeds = [x, *(np.asarray(f) for f in feeds)]
    model = qdq_model(inputs, feeds, inits, opset, **attrs)
    q_want, y_want = onnxruntime_outputs(model, feeds)
    q, y = run_module(import_onnx(model), feeds)
    within_one_step(q, q_want)
    np.testing.assert_allclose(y, y_want, rtol=1e-6, atol=0.03)


def test_int32_constant_is_dequantized_at_import():
    """An int32 DequantizeLinear of constants (a quantized bias) becomes a float constant."""
    node = helper.make_node("DequantizeLinear", ["b", "s"], ["d"], axis=0)
    add = helper.make_node("Add", ["x", "d"], ["y"])
    inits = [tensor("b", np.array([-300, 7, 1000], np.int32)),
             tensor("s", np.array([0.5, 0.25, 0.125], np.float32))]
    model = make([node, add], [info("x", np.float32, [3])], [info("y", np.float32, [3])],
                 13, inits)
    x = RNG.normal(0, 1, 3).astype(np.float32)
    (expected,) = onnxruntime_outputs(model, [x])
    module = import_onnx(model)
    assert "dequantize_linear" not in str(module)
    np.testing.assert_array_equal(run_module(module, [x])[0], expected)


def test_int4_constant_weight_is_folded_at_import():
    """A constant DequantizeLinear of a type the IR lacks (an int4 weight) folds to f32."""
    node = helper.make_node("DequantizeLinear", ["w", "s"], ["d"])
    add = helper.make_node("Add", ["x", "d"], ["y"])
    inits = [helper.make_tensor("w", TensorProto.INT4, [4], [1, -2, 3, -8]),
             tensor("s", np.float32(0.5))]
    model = make([node, add], [info("x", np.float32, [4])], [info("y", np.float32, [4])],
                 21, inits)
    model.ir_version = 10
    module = import_onnx(model)
    assert "dequantize_linear" not in str(module)
    x = np.zeros(4, np.float32)
    np.testing.assert_array_equal(run_module(module, [x])[0], [0.5, -1.0, 1.5, -4.0])


ERRORS = {  # name: (nodes, graph inputs, initializers, opset, message)
    "blocked": ([helper.make_node("DequantizeLinear", ["w", "s"], ["y"], axis=1,
                                  block_size=2, name="dq")], [],
                [tensor("w", np.zeros((2, 4), np.int8)),
                 tensor("s", np.ones((2, 2), np.float32))], 21,
                r"node 'dq' \(DequantizeLinear\): blocked quantization \(scale shape "
                r"\[2, 2\], block_size 2\) is not supported"),
    "float8": ([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q")],
               [info("x", np.float32, [4])],
               [tensor("s", np.float32(0.5)),
                helper.make_tensor("z", TensorProto.FLOAT8E4M3FN, [], [0])], 19,
               r"node 'q' \(QuantizeLinear\): quantized type float8_e4m3fn is not supported"),
    "float16": ([helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q")],
                [info("x", np.float16, [4])], [tensor("s", np.float16(0.5))], 19,
                r"node 'q' \(QuantizeLinear\): input x is float16; only float32 is supported "
                r"on the float side"),
    "int32 input": ([helper.make_node("DequantizeLinear", ["x", "s"], ["y"], name="dq")],
                    [info("x", np.int32, [4])], [tensor("s", np.float32(0.5))], 13,
                    r"node 'dq' \(DequantizeLinear\): quantized type int32 is not supported"),
    "scale of another axis": ([helper.make_node("DequantizeLinear", ["x", "s"], ["y"],
                                                axis=0, name="dq")],
                              [info("x", np.int8, [2, 3])],
                              [tensor("s", np.ones(3, np.float32))], 13,
                              r"node 'dq' \(DequantizeLinear\): scale shape \[3\] does not "
                              r"fit axis 0 of the input shape \[2, 3\]"),
}


@pytest.mark.parametrize("case", ERRORS)
def test_unsupported_forms_are_import_errors(case):
    nodes, inputs, inits, opset, message = ERRORS[case]
    model = make(nodes, inputs, [onnx.ValueInfoProto(name="y")], opset, inits)
    model.ir_version = 10
    with pytest.raises(FrontendError, match=message):
        import_onnx(model)


# ---------------------------------------------------------------------------
# Kernels on every backend
# ---------------------------------------------------------------------------

X = "tensor<2x3x4x5xf32>"
KERNELS = {  # name: (quantized type, per-channel axis or None, scale / zero point by argument)
    "quantize_i8_channel": ("i8", 1, False),
    "quantize_ui8_tensor": ("ui8", None, False),
    "quantize_ui8_arguments": ("ui8", None, True),
    "dequantize_i8_channel": ("i8", -1, False),
    "dequantize_ui8_tensor": ("ui8", None, False),
    "dequantize_i8_arguments": ("i8", 1, True),
}


def kernel(name: str):
    """One op of `KERNELS`; its scale is 0.01 to 0.05 and its zero point random, inline
    constants or (the `_arguments` kernels) arguments fed by `kernel_feeds`."""
    quantized, axis, arguments = KERNELS[name]
    op = name.split("_")[0]
    q = X.replace("f32", quantized)
    x_type, y_type = (X, q) if op == "quantize" else (q, X)
    channels = None if axis is None else SHAPE[axis]
    p_shape = "" if channels is None else f"{channels}x"
    s_type, z_type = f"tensor<{p_shape}f32>", f"tensor<{p_shape}{quantized}>"
    attrs = "" if axis is None else f" {{axis = {axis} : i64}}"
    dtype = np.int8 if quantized == "i8" else np.uint8
    params, constants = f", %s: {s_type}, %z: {z_type}", ""
    if not arguments:
        s, z = parameter_values(dtype, channels)
        params, constants = "", (f"%s = collage.constant dense<{s.tolist()}> : {s_type}\n"
                                 f"%z = collage.constant dense<{z.tolist()}> : {z_type}")
    return main_of(parse(f"""
    func.func @main(%x: {x_type}{params}) -> {y_type} {{
      {constants}
      %y = collage.{op}_linear %x, %s, %z{attrs} : ({x_type}, {s_type}, {z_type}) -> {y_type}
      func.return %y : {y_type}
    }}"""))


def parameter_values(dtype, channels: int | None) -> tuple[np.ndarray, np.ndarray]:
    shape = () if channels is None else (channels,)
    return (RNG.uniform(0.01, 0.05, shape).astype(np.float32),
            RNG.integers(*ZERO[dtype], shape).astype(dtype))


def kernel_feeds(name: str) -> list[np.ndarray]:
    quantized, axis, arguments = KERNELS[name]
    dtype = np.int8 if quantized == "i8" else np.uint8
    if name.startswith("quantize"):
        x = RNG.normal(0, 3, SHAPE).astype(np.float32)
    else:
        x = RNG.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, SHAPE, endpoint=True,
                         dtype=dtype)
    if not arguments:
        return [x]
    return [x, *parameter_values(dtype, None if axis is None else SHAPE[axis])]


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_kernel_matches_interpreter(backend, name):
    func, feeds = kernel(name), kernel_feeds(name)
    (expected,) = run_function(func, feeds)
    compiled = compile_kernel(backend, func)
    try:
        (actual,) = compiled(feeds)
    finally:
        compiled.release()
    if name.startswith("quantize"):
        within_one_step(actual, expected)
    else:
        assert actual.dtype == expected.dtype
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------
# QDQ blocks
# ---------------------------------------------------------------------------

OUT_SCALE = 0.05
"""The output's quantization step in both blocks: the tolerance of the comparisons."""


def conv_block() -> onnx.ModelProto:
    """x -> Q -> DQ (uint8, per tensor) and DQ(int8 weight per output channel) -> Conv
    -> Q -> DQ -> Relu (opset 13)."""
    inits = [tensor("w", RNG.integers(-100, 100, (8, 4, 3, 3)).astype(np.int8)),
             tensor("ws", RNG.uniform(0.002, 0.01, 8).astype(np.float32)),
             tensor("wz", np.zeros(8, np.int8)), tensor("xs", np.float32(0.02)),
             tensor("xz", np.uint8(128)), tensor("ys", np.float32(OUT_SCALE)),
             tensor("yz", np.uint8(128))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["qx"]),
             helper.make_node("DequantizeLinear", ["qx", "xs", "xz"], ["dx"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["dw"], axis=0),
             helper.make_node("Conv", ["dx", "dw"], ["conv"], pads=[1, 1, 1, 1]),
             helper.make_node("QuantizeLinear", ["conv", "ys", "yz"], ["qy"]),
             helper.make_node("DequantizeLinear", ["qy", "ys", "yz"], ["dy"]),
             helper.make_node("Relu", ["dy"], ["y"])]
    return make(nodes, [info("x", np.float32, [1, 4, 8, 8])],
                [info("y", np.float32, [1, 8, 8, 8])], 13, inits)


def matmul_block() -> onnx.ModelProto:
    """x -> Q -> DQ (uint8, per tensor) and DQ(int8 weight per output column) -> MatMul
    -> Q -> DQ (opset 21)."""
    inits = [tensor("w", RNG.integers(-100, 100, (16, 8)).astype(np.int8)),
             tensor("ws", RNG.uniform(0.005, 0.02, 8).astype(np.float32)),
             tensor("wz", np.zeros(8, np.int8)), tensor("xs", np.float32(0.02)),
             tensor("xz", np.uint8(128)), tensor("ys", np.float32(OUT_SCALE)),
             tensor("yz", np.uint8(128))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["qx"]),
             helper.make_node("DequantizeLinear", ["qx", "xs", "xz"], ["dx"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["dw"], axis=1),
             helper.make_node("MatMul", ["dx", "dw"], ["mm"]),
             helper.make_node("QuantizeLinear", ["mm", "ys", "yz"], ["qy"]),
             helper.make_node("DequantizeLinear", ["qy", "ys", "yz"], ["y"])]
    model = make(nodes, [info("x", np.float32, [4, 16])], [info("y", np.float32, [4, 8])],
                 21, inits)
    model.ir_version = 10
    return model


BLOCKS = {"conv2d": conv_block, "matmul": matmul_block}


@pytest.mark.parametrize("backend", ["interpreter", *BACKENDS])
@pytest.mark.parametrize("block", BLOCKS)
def test_block_on_one_backend_matches_onnxruntime(block, backend):
    """The whole imported block as one kernel (or interpreted)."""
    model = BLOCKS[block]()
    x = RNG.normal(0, 1, [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim])
    feeds = [x.astype(np.float32)]
    (expected,) = onnxruntime_outputs(model, feeds)
    func = main_of(import_onnx(model))
    if backend == "interpreter":
        (actual,) = run_function(func, feeds)
    else:
        compiled = compile_kernel(backend, func)
        try:
            (actual,) = compiled(feeds)
        finally:
            compiled.release()
    np.testing.assert_allclose(actual, expected, rtol=0, atol=OUT_SCALE * 1.001)


@pytest.mark.parametrize("block", BLOCKS)
def test_onnxruntime_offers_the_qdq_kernel_it_fuses(block, tmp_path):
    """The onnxruntime spec has the block's Q(op(DQ, DQ)) as a composite candidate, which
    ONNX Runtime's optimizer turns into one QLinearConv / QLinearMatMul."""
    func = main_of(import_onnx(BLOCKS[block]()))
    candidates = generate_candidates(func, [get_backend("onnxruntime").partition_spec()])
    (candidate,) = [c for c in candidates if c.rule_name == f"onnxruntime.qdq_{block}"]
    options = ort.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    model = export_onnx(kernel_function(candidate.sub_graph.extract()))
    ort.InferenceSession(model.SerializeToString(), options,
                         providers=["CPUExecutionProvider"])
    ops = [n.op_type for n in onnx.load(tmp_path / "optimized.onnx").graph.node]
    fused = {"conv2d": "QLinearConv", "matmul": "QLinearMatMul"}[block]
    assert fused in ops and not {"QuantizeLinear", "DequantizeLinear"} & set(ops), ops


def test_constant_folding_keeps_the_dequantized_weight():
    module = import_onnx(conv_block())
    fold_constants(module)
    (weight,) = [op for op in main_of(module).body.block.ops
                 if isinstance(op, C.DequantizeLinearOp) and op.channel_axis() == 0]
    assert isinstance(weight.input.owner, C.ConstantOp)


@pytest.mark.parametrize("backend", ["onnxruntime", "openvino"])
def test_byoc_specs_take_the_qdq_ops(backend):
    func = main_of(import_onnx(conv_block()))
    spec = get_backend(backend)
    qdq = [op for op in func.body.block.ops if op.name.endswith("quantize_linear")]
    assert len(qdq) == 5 and all(spec.supports(op) for op in qdq)


TOLERANCE = ("--rtol", "0", "--atol", str(OUT_SCALE * 1.001))


@pytest.mark.parametrize("backend", [None, *(pytest.param(b, marks=pytest.mark.full)
                                             for b in BACKENDS)])
@pytest.mark.parametrize("block", BLOCKS)
def test_block_runs_partitioned_and_matches_onnxruntime(block, backend, tmp_path, capsys,
                                                        monkeypatch):
    """As partitioned, then (`--full`) with the quantize and dequantize ops pinned to each
    backend."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    runs_and_matches_onnxruntime(BLOCKS[block](), tmp_path / "block.onnx",
                                 ["quantize_linear", "dequantize_linear"], backend, capsys,
                                 *TOLERANCE)


@pytest.mark.parametrize("block", BLOCKS)
def test_block_split_between_onnxruntime_and_tvm_matches_onnxruntime(block, tmp_path, capsys,
                                                                     monkeypatch):
    """The conv / matmul pinned to onnxruntime with shallow kernels: its QDQ kernel hands
    the uint8 result to a tvm kernel that dequantizes it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    summary = runs_and_matches_onnxruntime(
        BLOCKS[block](), tmp_path / "block.onnx", [block], "onnxruntime", capsys,
        "--max-depth", "4", "--no-max-regions", *TOLERANCE)
    assert "2 kernels (onnxruntime 1, tvm 1)" in summary


def test_a_dequantized_output_is_compared_within_one_quantization_step():
    from collage_xdsl.runtime.agreement import STEP_MARGIN, tolerances

    rtol, atol = tolerances(import_onnx(matmul_block()), 1e-4, 1e-5)
    assert rtol == 1e-4 and atol == pytest.approx(OUT_SCALE * STEP_MARGIN)  # the f32 scale
    relu_output = import_onnx(conv_block())  # its output is a Relu of the dequantized value
    assert tolerances(relu_output, 1e-4, 1e-5) == (1e-4, 1e-5)
