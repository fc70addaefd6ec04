"""ONNX Einsum end to end: imported as `collage.einsum`, the interpreter against ONNX Runtime
for attention's contractions, matmuls, dot products, transposes, sums, a diagonal and an
implicit output, each backend's kernel against the interpreter, and a small attention
block through `collage run --backends ... --check`."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from example_models import f32, make, onnxruntime_outputs
from ir_helpers import check_kernel
from onnx import helper, numpy_helper
from run_helpers import runs_and_matches_onnxruntime

from collage_xdsl.frontend import FrontendError, import_onnx
from collage_xdsl.ir.interpreter import run_module

RNG = np.random.default_rng(13)
BACKENDS = ["tvm", "onnxruntime", "openvino"]

EQUATIONS = {  # equation: operand shapes
    "bhid,bhjd->bhij": [(1, 2, 3, 4), (1, 2, 5, 4)],
    "bhij,bhjd->bhid": [(2, 2, 3, 5), (2, 2, 5, 4)],
    "bij,bjk->bik": [(2, 3, 4), (2, 4, 5)],
    "ij,jk->ik": [(3, 4), (4, 5)],
    "bi,bi->b": [(3, 4), (3, 4)],
    "ij->ji": [(3, 4)],
    "ij->i": [(3, 4)],
    "ii->i": [(4, 4)],
    "ij,jk,kl->il": [(2, 3), (3, 4), (4, 2)],
    "i,j->ij": [(3,), (4,)],
    "ij, jk": [(3, 4), (4, 5)],  # implicit output: "ik"
    "bji": [(2, 3, 4)],  # implicit output: "bij"
}


def einsum(equation: str, shapes) -> onnx.ModelProto:
    """One Einsum node `es` over inputs x0, x1, ..."""
    names = [f"x{i}" for i in range(len(shapes))]
    node = helper.make_node("Einsum", names, ["y"], equation=equation, name="es")
    return make([node], [f32(n, list(s)) for n, s in zip(names, shapes)], [f32("y", None)], 12)


def feeds(shapes) -> list[np.ndarray]:
    return [RNG.standard_normal(s).astype(np.float32) for s in shapes]


@pytest.mark.parametrize("equation", EQUATIONS)
def test_einsum_interpreter_matches_onnxruntime(equation):
    model, xs = einsum(equation, EQUATIONS[equation]), feeds(EQUATIONS[equation])
    module = import_onnx(model)
    assert [op.name for op in module.walk() if op.name.startswith("collage.")] == [
        "collage.einsum"]
    (want,) = onnxruntime_outputs(model, xs)
    (got,) = run_module(module, xs)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("equation", ["bhid,bhjd->bhij", "bi,bi->b", "ij->ji", "ij->i",
                                      "ii->i", "ij,jk,kl->il"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_einsum_kernel_matches_interpreter(backend, equation):
    module = import_onnx(einsum(equation, EQUATIONS[equation]))
    func = next(op for op in module.ops if op.sym_name.data == "main")
    check_kernel(backend, func, feeds(EQUATIONS[equation]), rtol=1e-4)


@pytest.mark.parametrize("equation, shapes, error", [
    ("...ij->...ji", [(2, 3, 4)], r"node 'es' \(Einsum\): equation '...ij->...ji': an "
                                  r"ellipsis is not supported"),
    ("ij,jk->ik", [(3, 4), (5, 6)], r"node 'es' \(Einsum\): letter 'j' is 4 and 5"),
])
def test_what_the_dialect_cannot_express_is_an_import_error(equation, shapes, error):
    model = einsum(equation, shapes)
    with pytest.raises(FrontendError, match=error):
        import_onnx(model)


def attention_block() -> onnx.ModelProto:
    """x [1, 6, 16] -> q, k, v (MatMul, Reshape to 2 heads, Transpose) -> Einsum
    bhid,bhjd->bhij -> * 1/sqrt(8) -> Softmax -> Einsum bhij,bhjd->bhid -> Transpose ->
    Reshape -> MatMul."""
    def weight(name, shape):
        return numpy_helper.from_array(RNG.normal(0, 0.3, shape).astype(np.float32), name)

    heads = numpy_helper.from_array(np.array([1, 6, 2, 8], np.int64), "heads")
    merged = numpy_helper.from_array(np.array([1, 6, 16], np.int64), "merged")
    scale = numpy_helper.from_array(np.array(8 ** -0.5, np.float32), "scale")
    nodes = []
    for name in "qkv":
        nodes += [helper.make_node("MatMul", ["x", f"w{name}"], [f"{name}0"]),
                  helper.make_node("Reshape", [f"{name}0", "heads"], [f"{name}1"]),
                  helper.make_node("Transpose", [f"{name}1"], [name], perm=[0, 2, 1, 3])]
    nodes += [
        helper.make_node("Einsum", ["q", "k"], ["s"], equation="bhid,bhjd->bhij"),
        helper.make_node("Mul", ["s", "scale"], ["s1"]),
        helper.make_node("Softmax", ["s1"], ["p"], axis=-1),
        helper.make_node("Einsum", ["p", "v"], ["o"], equation="bhij,bhjd->bhid"),
        helper.make_node("Transpose", ["o"], ["o1"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["o1", "merged"], ["o2"]),
        helper.make_node("MatMul", ["o2", "wo"], ["y"]),
    ]
    inits = [weight(f"w{n}", (16, 16)) for n in "qkvo"] + [heads, merged, scale]
    return make(nodes, [f32("x", [1, 6, 16])], [f32("y", [1, 6, 16])], 13, inits)


@pytest.mark.parametrize("backend", [None, *BACKENDS])
def test_attention_block_runs_partitioned_and_matches_onnxruntime(backend, tmp_path, capsys,
                                                                   monkeypatch):
    """As partitioned, then with both einsums pinned to each backend in turn."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    runs_and_matches_onnxruntime(attention_block(), tmp_path / "attention.onnx", ["einsum"],
                                 backend, capsys)
