"""ONNX Resize and Tile end to end: imported as `collage.resize` / `collage.tile`, the
interpreter against ONNX Runtime for every mode, coordinate mode and rounding with scales
and sizes, up and down, each backend's kernel against the interpreter, and a tiny YOLO
neck through `collage run --backends ... --check`."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import pytest
from example_models import f32, make, onnxruntime_outputs
from ir_helpers import check_kernel, main_of
from onnx import numpy_helper
from run_helpers import runs_and_matches_onnxruntime

from collage_xdsl.frontend import FrontendError, import_onnx
from collage_xdsl.ir.interpreter import run_module

RNG = np.random.default_rng(5)
SHAPE = (1, 3, 5, 6)
RESIZES = {
    "scales_up": ("scales", [1, 1, 2, 1.5]),
    "scales_down": ("scales", [1, 1, 0.5, 0.6]),  # not output / input: 2/5 and 3/6
    "sizes_up": ("sizes", [1, 3, 9, 13]),
    "sizes_down": ("sizes", [1, 3, 3, 4]),
}
MODES = {"nearest_round_prefer_floor": ("nearest", "round_prefer_floor"),
         "nearest_floor": ("nearest", "floor"), "linear": ("linear", None)}
COORDINATES = ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"]
CASES = [f"{m}-{c}-{r}" for m, c, r in itertools.product(MODES, COORDINATES, RESIZES)]


def resize(how: str, values, shape=SHAPE, **attrs) -> onnx.ModelProto:
    """One Resize node `rs` over input `x`, with `scales` or `sizes` as an initializer."""
    dtype = np.float32 if how == "scales" else np.int64
    init = numpy_helper.from_array(np.array(values, dtype), how)
    inputs = ["x", "", "scales"] if how == "scales" else ["x", "", "", "sizes"]
    node = onnx.helper.make_node("Resize", inputs, ["y"], name="rs", **attrs)
    return make([node], [f32("x", list(shape))], [f32("y", None)], 19, [init])


def case(name: str) -> onnx.ModelProto:
    mode, coordinates, size = name.split("-")
    mode, rounding = MODES[mode]
    attrs = dict(mode=mode, coordinate_transformation_mode=coordinates)
    if rounding:
        attrs["nearest_mode"] = rounding
    return resize(*RESIZES[size], **attrs)


def tile() -> onnx.ModelProto:
    repeats = numpy_helper.from_array(np.array([1, 2, 3, 1], np.int64), "repeats")
    node = onnx.helper.make_node("Tile", ["x", "repeats"], ["y"])
    return make([node], [f32("x", list(SHAPE))], [f32("y", None)], 17, [repeats])


@pytest.mark.parametrize("name", CASES)
def test_resize_interpreter_matches_onnxruntime(name):
    model, x = case(name), RNG.standard_normal(SHAPE, dtype=np.float32)
    module = import_onnx(model)
    assert "collage.resize" in [op.name for op in module.walk()]
    (want,) = onnxruntime_outputs(model, [x])
    (got,) = run_module(module, [x])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_tile_interpreter_matches_onnxruntime():
    x = RNG.standard_normal(SHAPE, dtype=np.float32)
    module = import_onnx(tile())
    assert "collage.tile" in [op.name for op in module.walk()]
    (want,) = onnxruntime_outputs(tile(), [x])
    np.testing.assert_array_equal(run_module(module, [x])[0], want)


@pytest.mark.parametrize("name", [
    *(f"{m}-{c}-scales_down" for m, c in itertools.product(MODES, COORDINATES)),
    "nearest_round_prefer_floor-asymmetric-scales_up", "linear-half_pixel-sizes_up",
    "nearest_floor-pytorch_half_pixel-sizes_down", "linear-align_corners-sizes_up"])
@pytest.mark.parametrize("backend", ["tvm", "onnxruntime", "openvino"])
def test_backend_kernel_matches_interpreter(backend, name):
    model = case(name)
    x = RNG.standard_normal(SHAPE, dtype=np.float32)
    check_kernel(backend, main_of(import_onnx(model)), [x])


@pytest.mark.parametrize("backend", ["tvm", "onnxruntime", "openvino"])
def test_backend_tile_kernel_matches_interpreter(backend):
    x = RNG.standard_normal(SHAPE, dtype=np.float32)
    check_kernel(backend, main_of(import_onnx(tile())), [x], rtol=0, atol=0)  # exact


@pytest.mark.parametrize("attrs, error", [
    (dict(mode="cubic"), r"node 'rs' \(Resize\): mode 'cubic' is not supported"),
    (dict(coordinate_transformation_mode="tf_crop_and_resize"),
     r"node 'rs' \(Resize\): coordinate_transformation_mode 'tf_crop_and_resize' is not"),
    (dict(nearest_mode="ceil"), r"node 'rs' \(Resize\): nearest_mode 'ceil' is not supported"),
    (dict(antialias=1), r"node 'rs' \(Resize\): antialias 1 is not supported"),
])
def test_what_the_dialect_cannot_express_is_an_import_error(attrs, error):
    with pytest.raises(FrontendError, match=error):
        import_onnx(resize("scales", [1, 1, 2, 2], **attrs))


def test_resize_of_n_or_c_is_an_import_error():
    with pytest.raises(FrontendError, match=r"node 'rs' \(Resize\): scales .* 1 for N and C"):
        import_onnx(resize("scales", [1, 2, 2, 2]))


def weight(name: str, shape) -> onnx.TensorProto:
    return numpy_helper.from_array(RNG.normal(0, 0.5, shape).astype(np.float32), name)


def tiny_yolo_neck() -> onnx.ModelProto:
    """conv (stride 2) -> Resize nearest x2 -> concat with the skip -> conv."""
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    nodes = [
        onnx.helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        onnx.helper.make_node("Relu", ["c1"], ["skip"]),
        onnx.helper.make_node("Conv", ["skip", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1],
                              strides=[2, 2]),
        onnx.helper.make_node("Relu", ["c2"], ["r2"]),
        onnx.helper.make_node("Resize", ["r2", "", "scales"], ["up"], mode="nearest",
                              coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        onnx.helper.make_node("Concat", ["up", "skip"], ["cat"], axis=1),
        onnx.helper.make_node("Conv", ["cat", "w3"], ["y"], kernel_shape=[1, 1]),
    ]
    inits = [weight("w1", (4, 3, 3, 3)), weight("b1", (4,)), weight("w2", (8, 4, 3, 3)),
             weight("b2", (8,)), weight("w3", (2, 12, 1, 1)), scales]
    return make(nodes, [f32("x", [1, 3, 16, 16])], [f32("y", [1, 2, 16, 16])], 17, inits)


@pytest.mark.parametrize("backend", [None, "tvm", "onnxruntime", "openvino"])
def test_tiny_yolo_neck_runs_partitioned_and_matches_onnxruntime(backend, tmp_path, capsys,
                                                                 monkeypatch):
    """As partitioned, then with the resize pinned to each backend in turn."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    runs_and_matches_onnxruntime(tiny_yolo_neck(), tmp_path / "neck.onnx", ["resize"], backend,
                                 capsys)
