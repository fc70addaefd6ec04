"""HardSigmoid, HardSwish, Mish, Elu, PRelu, Softplus and Selu on every backend: each op's
kernel against the interpreter over negative and positive inputs (both sides of HardSwish's
and HardSigmoid's kinks), PRelu with each slope shape, and a MobileNetV3-style model
through `collage run --backends ... --check`."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from example_models import f32, make
from ir_helpers import check_kernel, main_of, parse
from onnx import helper, numpy_helper
from run_helpers import runs_and_matches_onnxruntime

BACKENDS = ["tvm", "onnxruntime", "openvino"]
RNG = np.random.default_rng(11)
SHAPE = "tensor<2x3x4x5xf32>"

UNARY = {
    "hard_sigmoid": "{alpha = 0.3 : f32, beta = 0.4 : f32}",
    "hard_swish": "",
    "mish": "",
    "elu": "{alpha = 0.7 : f32}",
    "softplus": "",
    "selu": "{alpha = 1.67326319 : f32, gamma = 1.05070102 : f32}",
}

SLOPES = {"per_channel": (3, 1, 1), "shared": (1,), "last_axis": (5,), "full": (2, 3, 4, 5)}


def kernel(text: str):
    module = parse(text)
    module.verify()
    return main_of(module)


def unary_kernel(op: str):
    return kernel(f"""
    func.func @{op}(%x: {SHAPE}) -> {SHAPE} {{
      %y = collage.{op} %x {UNARY[op]} : {SHAPE}
      func.return %y : {SHAPE}
    }}""")


def prelu_kernel(slope_shape: tuple[int, ...]):
    slope = f"tensor<{'x'.join(map(str, slope_shape))}xf32>"
    return kernel(f"""
    func.func @prelu(%x: {SHAPE}, %s: {slope}) -> {SHAPE} {{
      %y = collage.prelu %x, %s : ({SHAPE}, {slope}) -> {SHAPE}
      func.return %y : {SHAPE}
    }}""")


def inputs(*shapes) -> list[np.ndarray]:
    """Uniform in [-6, 6), the first also holding the kinks -3, 0 and 3 exactly."""
    arrays = [RNG.uniform(-6, 6, shape).astype(np.float32) for shape in shapes]
    arrays[0].reshape(-1)[:3] = [-3.0, 0.0, 3.0]
    return arrays


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("backend", BACKENDS)
def test_unary_activation_kernel_matches_interpreter(backend, op):
    check_kernel(backend, unary_kernel(op), inputs((2, 3, 4, 5)))


@pytest.mark.parametrize("slope", SLOPES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_prelu_kernel_matches_interpreter(backend, slope):
    check_kernel(backend, prelu_kernel(SLOPES[slope]), inputs((2, 3, 4, 5), SLOPES[slope]))


def mobilenet_v3_block() -> onnx.ModelProto:
    """Conv -> HardSwish -> Conv -> HardSigmoid -> Mul: a MobileNetV3 squeeze-excite gate."""
    def weight(name, shape):
        return numpy_helper.from_array(RNG.normal(0, 0.5, shape).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("HardSwish", ["c1"], ["h"]),
        helper.make_node("Conv", ["h", "w2", "b2"], ["c2"], kernel_shape=[1, 1]),
        helper.make_node("HardSigmoid", ["c2"], ["gate"], alpha=1 / 6),
        helper.make_node("Mul", ["h", "gate"], ["y"]),
    ]
    inits = [weight("w1", (8, 3, 3, 3)), weight("b1", (8,)), weight("w2", (8, 8, 1, 1)),
             weight("b2", (8,))]
    return make(nodes, [f32("x", [1, 3, 16, 16])], [f32("y", [1, 8, 16, 16])], 18, inits)


@pytest.mark.parametrize("backend", [None, *BACKENDS])
def test_mobilenet_v3_block_runs_partitioned_and_matches_onnxruntime(backend, tmp_path, capsys,
                                                                      monkeypatch):
    """As partitioned, then with both activations pinned to each backend in turn."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    runs_and_matches_onnxruntime(mobilenet_v3_block(), tmp_path / "block.onnx",
                                 ["hard_swish", "hard_sigmoid"], backend, capsys)
