"""Reference semantics of `collage.resize` in numpy, with ONNX Resize's semantics (as ONNX
Runtime computes them, in f32), for the interpreter (`collage_xdsl.ir.interpreter`).

    y = resize(op, x)      # op: the collage.resize, for its modes and scales
"""

from __future__ import annotations

import numpy as np

from collage_xdsl.dialects import collage as C
from collage_xdsl.ir.tensors import shape_of

F32 = np.float32


def source_coordinates(mode: str, out_len: int, in_len: int, scale: float) -> np.ndarray:
    """Where each output position reads the input, by ONNX's coordinate_transformation_mode."""
    x, s = np.arange(out_len, dtype=F32), F32(scale)
    if mode == "align_corners":
        return x * F32(in_len - 1) / F32(out_len - 1) if out_len > 1 else np.zeros_like(x)
    if mode == "asymmetric":
        return x / s
    if mode == "pytorch_half_pixel" and out_len <= 1:
        return np.zeros_like(x)
    return (x + F32(0.5)) / s - F32(0.5)  # half_pixel, pytorch_half_pixel


def _nearest(x: np.ndarray, rounding: str, in_len: int) -> np.ndarray:
    down = np.floor(x)
    if rounding == "round_prefer_floor":
        down = np.where(x - down == F32(0.5), down, np.round(x))
    return np.clip(down, 0, in_len - 1).astype(np.int64)


def _linear(x: np.ndarray, in_len: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two neighbours of each clamped coordinate and the second one's weight."""
    x = np.clip(x, F32(0), F32(in_len - 1))
    low = np.floor(x).astype(np.int64)
    return low, np.minimum(low + 1, in_len - 1), x - low.astype(F32)


def resize_scales(op: C.ResizeOp) -> list[float]:
    """The (H, W) scales the coordinates map through: the op's, else output / input."""
    src, dst = shape_of(op.input.type)[2:], shape_of(op.output.type)[2:]
    return list(op.scale_values() or [F32(o) / F32(i) for o, i in zip(dst, src)])


def axis_taps(op: C.ResizeOp, in_len: int, out_len: int, scale: float
              ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """What each output position reads along one axis: (index, None, None) for nearest,
    (low index, high index, weight of high) for linear."""
    coords = source_coordinates(op.coordinate_transformation_mode.data, out_len, in_len, scale)
    if op.mode.data == "nearest":
        rounding = op.nearest_mode.data if op.nearest_mode else "round_prefer_floor"
        return _nearest(coords, rounding, in_len), None, None
    return _linear(coords, in_len)


def _along(op: C.ResizeOp, x: np.ndarray, axis: int, out_len: int, scale: float) -> np.ndarray:
    """Resize one axis of ``x`` (the op's modes are separable over H and W)."""
    low, high, w = axis_taps(op, x.shape[axis], out_len, scale)
    if high is None or w is None:
        return np.take(x, low, axis=axis)
    w = w.reshape([-1 if a == axis else 1 for a in range(x.ndim)]).astype(x.dtype)
    return np.take(x, low, axis=axis) * (1 - w) + np.take(x, high, axis=axis) * w


def resize(op: C.ResizeOp, x: np.ndarray) -> np.ndarray:
    out, scales = shape_of(op.output.type), resize_scales(op)
    return _along(op, _along(op, x, 2, out[2], scales[0]), 3, out[3], scales[1])
