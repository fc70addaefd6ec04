"""ONNX ConvTranspose end to end: imported as `collage.conv_transpose2d` (+ bias add), the
interpreter against ONNX Runtime, each backend's kernel against the interpreter, and a
tiny UNet through `collage run --backends ... --check`."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from example_models import f32, make, onnxruntime_outputs
from ir_helpers import check_kernel, main_of
from onnx import numpy_helper
from run_helpers import runs_and_matches_onnxruntime

from collage_xdsl.frontend import FrontendError, import_onnx
from collage_xdsl.ir.interpreter import run_module

RNG = np.random.default_rng(3)


def weight(name: str, shape) -> onnx.TensorProto:
    return numpy_helper.from_array(RNG.normal(0, 0.5, shape).astype(np.float32), name)


def conv_transpose(x_shape, w_shape, bias: bool, **attrs) -> onnx.ModelProto:
    """One ConvTranspose node `ct` over input `x` (weight `w`, bias `b` when asked)."""
    inits = [weight("w", w_shape)]
    if bias:
        inits.append(weight("b", [w_shape[1] * attrs.get("group", 1)]))
    node = onnx.helper.make_node("ConvTranspose", ["x", "w", "b"][: len(inits) + 1], ["y"],
                                 name="ct", **attrs)
    return make([node], [f32("x", list(x_shape))], [f32("y", None)], 17, inits)


CASES = {
    "stride2_bias": ((1, 4, 5, 5), (4, 3, 3, 3), True, dict(strides=[2, 2])),
    "pads_output_padding": ((1, 4, 5, 5), (4, 3, 3, 3), False,
                            dict(strides=[2, 2], pads=[1, 0, 0, 1], output_padding=[1, 1])),
    "group2_bias": ((1, 4, 5, 6), (4, 3, 3, 2), True, dict(strides=[2, 1], group=2)),
    "dilation2": ((1, 4, 5, 5), (4, 3, 3, 3), False, dict(dilations=[2, 2], pads=[1, 1, 1, 1])),
    "output_shape": ((1, 4, 5, 5), (4, 3, 3, 3), True, dict(strides=[2, 2], output_shape=[10, 9])),
    "same_upper": ((1, 4, 5, 5), (4, 3, 3, 3), True, dict(strides=[2, 2], auto_pad="SAME_UPPER")),
    "same_lower": ((1, 4, 5, 5), (4, 3, 3, 3), False, dict(strides=[2, 2], auto_pad="SAME_LOWER")),
    "all_at_once": ((2, 4, 4, 5), (4, 2, 2, 3), True,
                    dict(strides=[3, 2], dilations=[1, 2], output_padding=[2, 1], group=2,
                         pads=[0, 1, 2, 1])),
}


def case(name: str) -> tuple[onnx.ModelProto, np.ndarray]:
    x_shape, w_shape, bias, attrs = CASES[name]
    return conv_transpose(x_shape, w_shape, bias, **attrs), RNG.standard_normal(
        x_shape, dtype=np.float32)


@pytest.mark.parametrize("name", CASES)
def test_interpreter_matches_onnxruntime(name):
    model, x = case(name)
    module = import_onnx(model)
    ops = [op.name for op in module.walk() if op.name.startswith("collage.")]
    assert "collage.conv_transpose2d" in ops and ("collage.add" in ops) == CASES[name][2]
    (want,) = onnxruntime_outputs(model, [x])
    (got,) = run_module(module, [x])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["pads_output_padding", "group2_bias", "dilation2",
                                  "same_upper", "all_at_once"])
@pytest.mark.parametrize("backend", ["tvm", "onnxruntime", "openvino"])
def test_backend_kernel_matches_interpreter(backend, name):
    model, x = case(name)
    check_kernel(backend, main_of(import_onnx(model)), [x], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("attrs, error", [
    (dict(strides=[2, 2], output_shape=[12, 12]),
     r"node 'ct' \(ConvTranspose\): output_shape \[12, 12\] needs negative leading pads"),
    (dict(dilations=[2, 2], output_padding=[1, 1]),
     r"node 'ct' \(ConvTranspose\): output_padding \[1, 1\] must be >= 0 and below the strides"),
])
def test_what_the_dialect_cannot_express_is_an_import_error(attrs, error):
    with pytest.raises(FrontendError, match=error):
        import_onnx(conv_transpose((1, 4, 5, 5), (4, 3, 3, 3), False, **attrs))


def tiny_unet() -> onnx.ModelProto:
    """conv -> maxpool -> conv -> convtranspose (stride 2) -> concat with the skip -> conv."""
    nodes = [
        onnx.helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        onnx.helper.make_node("Relu", ["c1"], ["skip"]),
        onnx.helper.make_node("MaxPool", ["skip"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        onnx.helper.make_node("Conv", ["p", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        onnx.helper.make_node("Relu", ["c2"], ["r2"]),
        onnx.helper.make_node("ConvTranspose", ["r2", "wt", "bt"], ["up"], strides=[2, 2],
                              kernel_shape=[2, 2], name="convtranspose25"),
        onnx.helper.make_node("Concat", ["up", "skip"], ["cat"], axis=1),
        onnx.helper.make_node("Conv", ["cat", "w3"], ["y"], kernel_shape=[1, 1]),
    ]
    inits = [weight("w1", (4, 3, 3, 3)), weight("b1", (4,)), weight("w2", (8, 4, 3, 3)),
             weight("b2", (8,)), weight("wt", (8, 4, 2, 2)), weight("bt", (4,)),
             weight("w3", (2, 8, 1, 1))]
    return make(nodes, [f32("x", [1, 3, 16, 16])], [f32("y", [1, 2, 16, 16])], 17, inits)


@pytest.mark.parametrize("backend", [None, "tvm", "onnxruntime", "openvino"])
def test_tiny_unet_runs_partitioned_and_matches_onnxruntime(backend, tmp_path, capsys,
                                                            monkeypatch):
    """As partitioned, then with the conv_transpose2d pinned to each backend in turn."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    runs_and_matches_onnxruntime(tiny_unet(), tmp_path / "unet.onnx", ["conv_transpose2d"],
                                 backend, capsys)
