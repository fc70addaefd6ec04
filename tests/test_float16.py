"""float16 end to end: the op families in f16 on each backend and in the reference
interpreter match ONNX Runtime; the backends' specs admit f16 (iree's does not); f16 and
mixed-precision versions of the example models run through each backend alone and through
a partition over all of them (`collage run --check`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from example_models import make_models
from ir_helpers import main_of, parse
from onnx import TensorProto, helper, numpy_helper
from test_lowering import FAMILIES

from collage_xdsl.backends import compile_kernel, get_backend
from collage_xdsl.backends.walk import flatten
from collage_xdsl.ir.interpreter import run_function
from collage_xdsl.ir.tensors import np_dtype
from collage_xdsl.runtime.agreement import HALF_TOLERANCE, tolerances
from collage_xdsl.tools import collage

TOL = {"rtol": 1e-2, "atol": 1e-2}
F16_FAMILIES = ["elementwise", "activations", "logic", "layout", "nn", "conv_transpose",
                "norms", "resize"]
"""The op families of `test_lowering` whose text turns into an f16 one by substitution."""


def to_f16(text: str) -> str:
    return text.replace("xf32>", "xf16>").replace("tensor<f32>", "tensor<f16>")


def seeded(func, seed: int = 0) -> list[np.ndarray]:
    """Floats in [0.1, 2) (logs and roots stay defined), ints in [0, 3), random bools."""
    rng = np.random.default_rng(seed)
    feeds = []
    for arg in func.body.block.args:
        shape, dtype = arg.type.get_shape(), np_dtype(arg.type.get_element_type())
        if dtype.kind == "f":
            feeds.append(rng.uniform(0.1, 2.0, shape).astype(dtype))
        elif dtype == np.bool_:
            feeds.append(rng.random(shape) < 0.5)
        else:
            feeds.append(rng.integers(0, 3, shape).astype(dtype))
    return feeds


def run_on(backend: str, func, feeds: list[np.ndarray]) -> list[np.ndarray]:
    if backend == "interpreter":
        return flatten(run_function(func, feeds))
    kernel = compile_kernel(backend, func)
    try:
        return kernel(feeds)
    finally:
        kernel.release()


def assert_match(actual: list[np.ndarray], expected: list[np.ndarray]) -> None:
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a.dtype == e.dtype and a.shape == e.shape, f"output {i}"
        np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), **TOL,
                                   err_msg=f"output {i}")


FAMILY_CASES = [
    pytest.param(backend, family, id=f"{backend}-{family}",
                 marks=[pytest.mark.full] if backend == "tvm" and family != "norms" else [])
    for backend in ("interpreter", "tvm", "openvino") for family in F16_FAMILIES
]
"""Every family on every backend; on tvm (slow to compile) only the norms by default."""


@pytest.mark.parametrize("backend, family", FAMILY_CASES)
def test_f16_family_matches_onnxruntime(backend, family):
    func = main_of(parse(to_f16(FAMILIES[family])))
    assert any("f16" in str(a.type) for a in func.body.block.args)
    feeds = seeded(func)
    assert_match(run_on(backend, func, feeds), run_on("onnxruntime", func, feeds))


# reductions long enough that accumulating in f16 drifts past the tolerance
LONG = {
    "matmul": ("%a: tensor<4x2048xf16>, %b: tensor<2048x8xf16>",
               "collage.matmul %a, %b : (tensor<4x2048xf16>, tensor<2048x8xf16>) -> "
               "tensor<4x8xf16>", "tensor<4x8xf16>"),
    "conv2d": ("%a: tensor<1x64x8x8xf16>, %b: tensor<8x64x3x3xf16>",
               "collage.conv2d %a, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, "
               "0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x64x8x8xf16>, "
               "tensor<8x64x3x3xf16>) -> tensor<1x8x6x6xf16>", "tensor<1x8x6x6xf16>"),
    "reduce_sum": ("%a: tensor<2x8192xf16>",
                   "collage.reduce_sum %a {axes = array<i64: 1>, keepdims = true} : "
                   "tensor<2x8192xf16> -> tensor<2x1xf16>", "tensor<2x1xf16>"),
    "reduce_l2": ("%a: tensor<2x8192xf16>",
                  "collage.reduce_l2 %a {axes = array<i64: 1>, keepdims = true} : "
                  "tensor<2x8192xf16> -> tensor<2x1xf16>", "tensor<2x1xf16>"),
    "einsum": ("%a: tensor<4x2048xf16>, %b: tensor<8x2048xf16>",
               'collage.einsum %a, %b {equation = "ik,jk->ij"} : (tensor<4x2048xf16>, '
               "tensor<8x2048xf16>) -> tensor<4x8xf16>", "tensor<4x8xf16>"),
    "cumsum": ("%a: tensor<2x8192xf16>",
               "collage.cumsum %a {axis = 1 : i64} : tensor<2x8192xf16>", "tensor<2x8192xf16>"),
}


@pytest.mark.parametrize("case", LONG)
@pytest.mark.parametrize("backend", ["interpreter", "tvm", "openvino"])
def test_long_f16_reductions_accumulate_in_f32(backend, case):
    args, body, result = LONG[case]
    func = main_of(parse(f"func.func @k({args}) -> {result} {{\n  %r = {body}\n"
                         f"  func.return %r : {result}\n}}"))
    rng = np.random.default_rng(1)
    feeds = [rng.standard_normal(a.type.get_shape()).astype(np.float16)
             for a in func.body.block.args]
    assert_match(run_on(backend, func, feeds), run_on("onnxruntime", func, feeds))


def test_interpreter_rounds_each_f16_op_computed_in_f32():
    t = "tensor<4096xf16>"
    func = main_of(parse(f"""
func.func @k(%x: {t}) -> tensor<f16> {{
  %e = collage.exp %x : {t}
  %s = collage.reduce_sum %e {{keepdims = false}} : {t} -> tensor<f16>
  func.return %s : tensor<f16>
}}"""))
    x = np.random.default_rng(2).uniform(-1, 1, 4096).astype(np.float16)
    (got,) = run_function(func, [x])
    e = np.exp(x.astype(np.float32)).astype(np.float16)
    assert got.dtype == np.float16
    assert got == e.astype(np.float32).sum(dtype=np.float32).astype(np.float16)


def test_openvino_computes_f16_kernels_in_f32():
    t = "tensor<2x8xf16>"
    func = main_of(parse(f"""
func.func @k(%x: {t}, %w: tensor<8x8xf16>) -> {t} {{
  %m = collage.matmul %x, %w : ({t}, tensor<8x8xf16>) -> {t}
  func.return %m : {t}
}}"""))
    kernel = compile_kernel("openvino", func)
    layers = [op.get_rt_info() for op in kernel.compiled.get_runtime_model().get_ordered_ops()]
    kernel.release()
    matmuls = [r["runtimePrecision"].astype(str) for r in layers
               if r["layerType"].astype(str) == "MatMul"]
    assert matmuls == ["f32"]


F16_RELU = "func.func @k(%x: tensor<4xT>) -> tensor<4xT> {\n" \
           "  %r = collage.relu %x : tensor<4xT>\n  func.return %r : tensor<4xT>\n}"


@pytest.mark.parametrize("backend, element, supported", [
    ("onnxruntime", "f16", True), ("openvino", "f16", True), ("tvm", "f16", True),
    ("iree", "f16", False), ("iree", "f32", True), ("onnxruntime", "bf16", False),
    ("openvino", "f64", False),
])
def test_specs_admit_f16_except_iree(backend, element, supported):
    relu = main_of(parse(F16_RELU.replace("T", element))).body.block.first_op
    assert get_backend(backend).supports(relu) is supported


def test_check_tolerances_are_raised_for_a_model_with_f16():
    f16 = parse(F16_RELU.replace("T", "f16"))
    assert tolerances(f16, 1e-4, 1e-5) == (HALF_TOLERANCE, HALF_TOLERANCE)
    assert tolerances(f16, 0.1, 0.2) == (0.1, 0.2)
    assert tolerances(parse(F16_RELU.replace("T", "f32")), 1e-4, 1e-5) == (1e-4, 1e-5)


# ---------------------------------------------------------------------------
# The example models in f16
# ---------------------------------------------------------------------------


def _half_initializers(graph: onnx.GraphProto, names: set[str] | None = None) -> None:
    for i, init in enumerate(graph.initializer):
        if init.data_type == TensorProto.FLOAT and (names is None or init.name in names):
            array = numpy_helper.to_array(init).astype(np.float16)
            graph.initializer[i].CopyFrom(numpy_helper.from_array(array, init.name))


def half_model(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` in float16: its float initializers, inputs, outputs and value infos."""
    half = onnx.ModelProto()
    half.CopyFrom(model)
    _half_initializers(half.graph)
    for info in (*half.graph.input, *half.graph.output, *half.graph.value_info):
        if info.type.tensor_type.elem_type == TensorProto.FLOAT:
            info.type.tensor_type.elem_type = TensorProto.FLOAT16
    onnx.checker.check_model(half, full_check=True)
    return half


def half_from(model: onnx.ModelProto, first: int) -> onnx.ModelProto:
    """`model` (a chain of nodes) computing in float16 from node `first` on: the tensor
    entering it cast to f16, the later nodes' initializers f16, the output cast to f32."""
    mixed = onnx.ModelProto()
    mixed.CopyFrom(model)
    graph, nodes = mixed.graph, list(mixed.graph.node)
    _half_initializers(graph, {name for n in nodes[first:] for name in n.input})
    x, out = nodes[first].input[0], graph.output[0].name
    nodes[first].input[0], nodes[-1].output[0] = f"{x}_f16", f"{out}_f16"
    cast_in = helper.make_node("Cast", [x], [f"{x}_f16"], to=TensorProto.FLOAT16)
    cast_out = helper.make_node("Cast", [f"{out}_f16"], [out], to=TensorProto.FLOAT)
    del graph.node[:]
    graph.node.extend([*nodes[:first], cast_in, *nodes[first:], cast_out])
    onnx.checker.check_model(mixed, full_check=True)
    return mixed


def collage_run_checks(model: onnx.ModelProto, path: Path, capsys, *options: str) -> str:
    """`collage run PATH --check` with `options` passes; its output."""
    onnx.save(model, path)
    status = collage.main(["run", str(path), "-q", *options, "--check"])
    out = capsys.readouterr()
    assert status == 0, out.out + out.err
    assert "check: 1 output(s) match onnxruntime (rtol=0.01, atol=0.01)" in out.out
    return out.err


@pytest.mark.parametrize("name", ["mnist_cnn", "mlp"])
def test_f16_model_in_the_interpreter_matches_onnxruntime(tmp_path, capsys, name):
    collage_run_checks(half_model(make_models.make_model(name)), tmp_path / "m.onnx", capsys)


@pytest.mark.parametrize("backend", ["tvm", "onnxruntime", "openvino"])
def test_f16_cnn_on_each_backend_alone_matches_onnxruntime(tmp_path, capsys, backend):
    err = collage_run_checks(half_model(make_models.make_model("mnist_cnn")),
                             tmp_path / "cnn.onnx", capsys, "--backends", backend,
                             "--estimator", "mock")
    assert f"({backend} " in err


def test_f16_cnn_partitioned_over_all_backends_matches_onnxruntime(tmp_path, capsys):
    err = collage_run_checks(
        half_model(make_models.make_model("mnist_cnn")), tmp_path / "cnn.onnx", capsys,
        "--backends", "tvm,onnxruntime,openvino,iree", "--estimator", "mock",
        "--pin", "op:conv2d=openvino", "--pin", "op:matmul=onnxruntime")
    assert "openvino" in err and "onnxruntime" in err and "iree" not in err


@pytest.mark.full
def test_mixed_mlp_partitioned_over_all_backends_matches_onnxruntime(tmp_path, capsys):
    """The f32 first layer on iree, the f16 rest on the others, casts between."""
    err = collage_run_checks(
        half_from(make_models.make_model("mlp"), 2), tmp_path / "mlp.onnx", capsys,
        "--backends", "tvm,onnxruntime,openvino,iree", "--estimator", "mock",
        "--pin", "gemm.3*=iree", "--pin", "gemm.7*=openvino", "--pin", "gemm.11*=tvm")
    assert "3 kernels (iree 1, openvino 1, tvm 1)" in err


def test_mixed_mlp_in_the_interpreter_and_on_tvm_matches_onnxruntime(tmp_path, capsys):
    mixed = half_from(make_models.make_model("mlp"), 2)
    collage_run_checks(mixed, tmp_path / "mlp.onnx", capsys)
    collage_run_checks(mixed, tmp_path / "mlp.onnx", capsys, "--backends", "tvm,onnxruntime",
                       "--estimator", "mock", "--pin", "gemm.7*=onnxruntime")
