"""Reference semantics of `collage.quantize_linear` and `collage.dequantize_linear` in numpy,
as ONNX (and ONNX Runtime, in f32) defines them, for the interpreter
(`collage_xdsl.ir.interpreter`) and the frontend's folding of constants:

    q = quantize(x, scale, zero_point, axis)     # saturate(rint(x / scale) + zero_point)
    y = dequantize(q, scale, zero_point, axis)   # (q - zero_point) * scale

`axis` is None for a scalar (per-tensor) scale and zero point, else the input axis their
1-D values run along (per channel). `np.rint` rounds half to even.
"""

from __future__ import annotations

import numpy as np

from collage_xdsl.dialects import collage as C


def _along(value: np.ndarray, axis: int | None, rank: int) -> np.ndarray:
    """A scale or zero point shaped to broadcast against the input."""
    if axis is None:
        return value.reshape(())
    return value.reshape([-1 if a == axis else 1 for a in range(rank)])


def quantize(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray,
             axis: int | None) -> np.ndarray:
    """saturate(round_half_to_even(x / scale) + zero_point), in the zero point's type."""
    info = np.iinfo(zero_point.dtype)
    scale, zero = _along(scale, axis, x.ndim), _along(zero_point, axis, x.ndim)
    y = np.rint(x / scale) + zero.astype(x.dtype)
    return np.clip(y, info.min, info.max).astype(zero_point.dtype)


def dequantize(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray,
               axis: int | None) -> np.ndarray:
    """(x - zero_point) * scale, the difference exact in int32, the product in f32."""
    scale, zero = _along(scale, axis, x.ndim), _along(zero_point, axis, x.ndim)
    return (x.astype(np.int32) - zero.astype(np.int32)).astype(scale.dtype) * scale


def quantize_linear(op: C.QuantizeLinearOp, x, scale, zero_point) -> np.ndarray:
    return quantize(x, scale, zero_point, op.channel_axis())


def dequantize_linear(op: C.DequantizeLinearOp, x, scale, zero_point) -> np.ndarray:
    return dequantize(x, scale, zero_point, op.channel_axis())
