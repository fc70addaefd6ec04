"""Conv, ConvTranspose, MaxPool, AveragePool and GlobalAveragePool on (N, C, L) inputs:
imported as the 2-D op between two reshapes, the interpreter against ONNX Runtime for
pads, strides, dilations, auto_pad, groups (depthwise), ceil_mode and count_include_pad,
each backend's kernel against the interpreter, and a Whisper-style stem (Conv1D, GELU,
strided Conv1D, GELU) through `collage run --backends ... --check`."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from example_models import f32, make, onnxruntime_outputs
from ir_helpers import check_kernel
from onnx import helper, numpy_helper
from run_helpers import runs_and_matches_onnxruntime

from collage_xdsl.frontend import import_onnx
from collage_xdsl.ir.interpreter import run_module

RNG = np.random.default_rng(17)
BACKENDS = ["tvm", "onnxruntime", "openvino"]
X = (2, 4, 11)


def weight(name: str, shape) -> onnx.TensorProto:
    return numpy_helper.from_array(RNG.normal(0, 0.5, shape).astype(np.float32), name)


CASES = {  # name: (op type, attributes, weight shape or None, with a bias)
    "conv_pads_bias": ("Conv", dict(pads=[1, 1]), (6, 4, 3), True),
    "conv_stride_dilation": ("Conv", dict(strides=[2], dilations=[2], pads=[2, 1]), (6, 4, 3),
                             False),
    "conv_same_upper": ("Conv", dict(auto_pad="SAME_UPPER", strides=[2]), (6, 4, 4), False),
    "conv_same_lower": ("Conv", dict(auto_pad="SAME_LOWER", strides=[2]), (6, 4, 4), False),
    "conv_valid": ("Conv", dict(auto_pad="VALID", kernel_shape=[3]), (6, 4, 3), False),
    "conv_depthwise": ("Conv", dict(group=4, pads=[1, 1]), (4, 1, 3), True),
    "conv_group2": ("Conv", dict(group=2), (6, 2, 3), False),
    "conv_transpose": ("ConvTranspose", dict(strides=[2], pads=[1, 0], output_padding=[1]),
                       (4, 3, 3), True),
    "conv_transpose_same_group2": ("ConvTranspose", dict(strides=[2], auto_pad="SAME_UPPER",
                                                         group=2), (4, 2, 3), False),
    "conv_transpose_output_shape": ("ConvTranspose", dict(strides=[2], output_shape=[22]),
                                    (4, 2, 3), False),
    "max_pool": ("MaxPool", dict(kernel_shape=[3], strides=[2], pads=[1, 1]), None, False),
    "max_pool_ceil": ("MaxPool", dict(kernel_shape=[2], strides=[2], ceil_mode=1), None,
                      False),
    "max_pool_same_upper": ("MaxPool", dict(kernel_shape=[3], strides=[2],
                                            auto_pad="SAME_UPPER"), None, False),
    "avg_pool": ("AveragePool", dict(kernel_shape=[3], strides=[2], pads=[1, 1]), None,
                 False),
    "avg_pool_include_pad": ("AveragePool", dict(kernel_shape=[3], pads=[1, 1],
                                                 count_include_pad=1), None, False),
    "avg_pool_same_lower": ("AveragePool", dict(kernel_shape=[4], strides=[3],
                                                auto_pad="SAME_LOWER"), None, False),
    "global_avg_pool": ("GlobalAveragePool", {}, None, False),
}
TWO_D = {"Conv": "collage.conv2d", "ConvTranspose": "collage.conv_transpose2d",
         "MaxPool": "collage.max_pool2d", "AveragePool": "collage.avg_pool2d",
         "GlobalAveragePool": "collage.global_avg_pool2d"}


def case(name: str) -> onnx.ModelProto:
    """The node `win` of case `name` over input `x` [2, 4, 11]."""
    op_type, attrs, w_shape, bias = CASES[name]
    inits = [] if w_shape is None else [weight("w", w_shape)]
    if bias:
        inits.append(weight("b", [w_shape[0] if op_type == "Conv" else
                                  w_shape[1] * attrs.get("group", 1)]))
    node = helper.make_node(op_type, ["x", "w", "b"][: len(inits) + 1], ["y"], name="win",
                            **attrs)
    return make([node], [f32("x", list(X))], [f32("y", None)], 17, inits)


@pytest.mark.parametrize("name", CASES)
def test_1d_window_interpreter_matches_onnxruntime(name):
    model, x = case(name), RNG.standard_normal(X).astype(np.float32)
    module = import_onnx(model)
    ops = [op.name for op in module.walk()
           if op.name.startswith("collage.") and op.name != "collage.constant"]
    two_d = TWO_D[CASES[name][0]]
    with_bias = ["collage.add"] if CASES[name][3] else []
    assert ops == ["collage.reshape", two_d, *with_bias, "collage.reshape"]
    (want,) = onnxruntime_outputs(model, [x])
    (got,) = run_module(module, [x])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["conv_stride_dilation", "conv_depthwise",
                                  "conv_transpose", "max_pool_ceil", "avg_pool_include_pad",
                                  "global_avg_pool"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_1d_window_kernel_matches_interpreter(backend, name):
    module = import_onnx(case(name))
    func = next(op for op in module.ops if op.sym_name.data == "main")
    check_kernel(backend, func, [RNG.standard_normal(X).astype(np.float32)], rtol=1e-4)


def whisper_stem() -> onnx.ModelProto:
    """Whisper's audio-encoder stem, scaled down: mel [1, 8, 32] -> Conv1D (k 3, pad 1) ->
    GELU -> Conv1D (k 3, stride 2, pad 1) -> GELU -> [1, 16, 16]."""
    nodes = [
        helper.make_node("Conv", ["mel", "w1", "b1"], ["c1"], kernel_shape=[3], pads=[1, 1]),
        helper.make_node("Gelu", ["c1"], ["g1"]),
        helper.make_node("Conv", ["g1", "w2", "b2"], ["c2"], kernel_shape=[3], pads=[1, 1],
                         strides=[2]),
        helper.make_node("Gelu", ["c2"], ["y"]),
    ]
    inits = [weight("w1", (16, 8, 3)), weight("b1", (16,)), weight("w2", (16, 16, 3)),
             weight("b2", (16,))]
    model = make(nodes, [f32("mel", [1, 8, 32])], [f32("y", [1, 16, 16])], 20, inits)
    model.ir_version = 9  # opset 20's
    return model


@pytest.mark.parametrize("backend", [None, *BACKENDS])
def test_whisper_stem_runs_partitioned_and_matches_onnxruntime(backend, tmp_path, capsys,
                                                               monkeypatch):
    """As partitioned, then with the convolutions, their reshapes and GELUs pinned to each
    backend in turn."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    runs_and_matches_onnxruntime(whisper_stem(), tmp_path / "stem.onnx",
                                 ["conv2d", "reshape", "gelu"], backend, capsys)
