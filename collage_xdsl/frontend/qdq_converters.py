"""The converters of QuantizeLinear and DequantizeLinear, opsets 10 to 21 (registered in
`collage_xdsl.frontend.converters.CONVERTERS`): per tensor or per channel, between float32
and int8 or uint8. The importer never folds a DequantizeLinear (`onnx_import`), so a
quantized weight stays a `collage.dequantize_linear` of an int8 constant, the form the
backends' QDQ fusions look for.

    QuantizeLinear(x, s, z) axis=1, s, z 1-D  -> collage.quantize_linear %x, %s, %z {axis = 1}
    QuantizeLinear(x, s)      (no zero point) -> collage.quantize_linear %x, %s, %zero (uint8 0)
    DequantizeLinear(q, s, z)  s, z of shape [1] -> collage.dequantize_linear %q, %s', %z'
                                                   (per tensor: s', z' scalars)
    DequantizeLinear(b, s)     b constant, not int8/uint8 (an int32 bias, an int4 or
                               float8 weight) -> the float32 constant, folded
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from xdsl.ir import SSAValue

from collage_xdsl.dialects import collage as C
from collage_xdsl.frontend.context import NodeContext, onnx_dtype
from collage_xdsl.frontend.converters import _constant, _norm, _reshape, converter
from collage_xdsl.ir.quantize import dequantize
from collage_xdsl.ir.tensors import np_dtype

_QUANTIZED = (np.dtype(np.int8), np.dtype(np.uint8))
_F32 = np.dtype(np.float32)


def _dtype(ctx: NodeContext, i: int) -> np.dtype:
    """Input `i`'s element type, also for types the IR lacks (int4, float8)."""
    value = ctx.raw(i)
    if isinstance(value, np.ndarray):
        return value.dtype
    return np_dtype(value.type.get_element_type())  # type: ignore[attr-defined]


def _check_quantized(ctx: NodeContext, dtype: np.dtype) -> None:
    if dtype not in _QUANTIZED:
        raise ctx.error(f"quantized type {dtype} is not supported, only int8 and uint8")


def _check_f32(ctx: NodeContext, what: str, dtype: np.dtype) -> None:
    if dtype != _F32:
        raise ctx.error(f"{what} is {dtype}; only float32 is supported on the float side")


def _channel_axis(ctx: NodeContext) -> int | None:
    """The input axis a per-channel scale runs along; None for a per-tensor scale (a scalar
    or one value)."""
    shape, scale = ctx.shape(0), ctx.shape(1)
    if ctx.attr("block_size", 0) or (len(scale) > 1 and math.prod(scale) > 1):
        raise ctx.error(f"blocked quantization (scale shape {list(scale)}, block_size "
                        f"{ctx.attr('block_size', 0)}) is not supported, only per-tensor "
                        "and per-channel")
    if math.prod(scale) == 1:
        return None
    axis = _norm(ctx, ctx.attr("axis", 1), len(shape))
    if scale != (shape[axis],):
        raise ctx.error(f"scale shape {list(scale)} does not fit axis {axis} of the input "
                        f"shape {list(shape)}")
    return axis


def _parameter(ctx: NodeContext, i: int, shape: tuple[int, ...], dtype: np.dtype
               ) -> SSAValue:
    """Input `i` (the scale or zero point) as a scalar (per tensor) or 1-D (per channel)
    value of `shape`; a missing zero point is zeros of `dtype`."""
    if not ctx.has(i):
        return _constant(ctx, np.zeros(shape, dtype))
    if math.prod(ctx.shape(i)) != math.prod(shape):
        raise ctx.error(f"zero point shape {list(ctx.shape(i))} must match scale shape "
                        f"{list(ctx.shape(1))}")
    if ctx.shape(i) == shape:
        return ctx.value(i)
    if ctx.is_const(i):
        return _constant(ctx, ctx.const(i, "").reshape(shape))
    return _reshape(ctx, ctx.value(i), shape)


def _operands(ctx: NodeContext, quantized: np.dtype) -> tuple[list[SSAValue], int | None]:
    """The input, scale and zero point operands of the op, and its channel axis."""
    axis = _channel_axis(ctx)
    shape = () if axis is None else (ctx.shape(0)[axis],)
    return [ctx.value(0), _parameter(ctx, 1, shape, _F32),
            _parameter(ctx, 2, shape, quantized)], axis


def _folded(ctx: NodeContext) -> list[np.ndarray]:
    """A constant DequantizeLinear of a type the IR lacks (an int32 bias; from opset 19 also
    int4 or float8 weights, blocked or not): onnx's reference evaluator, which implements
    DequantizeLinear from opset 19; before that, as `ir.quantize` does (exact in int32)."""
    if ctx.opset >= 19:
        return ctx.importer.fold(ctx)
    zero = ctx.const(2, "x_zero_point") if ctx.has(2) else np.zeros((), np.int32)
    return [dequantize(ctx.const(0, "x"), ctx.const(1, "x_scale"), zero, _channel_axis(ctx))]


@converter("QuantizeLinear")
def convert_quantize_linear(ctx: NodeContext):
    _check_f32(ctx, "input x", _dtype(ctx, 0))
    _check_f32(ctx, "the scale", _dtype(ctx, 1))
    if ctx.attr("precision", 0) not in (0, onnx.TensorProto.FLOAT):
        raise ctx.error(f"precision {ctx.attr('precision')} is not supported, only float32")
    output_dtype = ctx.attr("output_dtype", 0)
    quantized = (_dtype(ctx, 2) if ctx.has(2) else
                 onnx_dtype(output_dtype) if output_dtype else np.dtype(np.uint8))
    _check_quantized(ctx, quantized)
    operands, axis = _operands(ctx, quantized)
    return [ctx.emit(C.QuantizeLinearOp, *operands, axis)]


@converter("DequantizeLinear")
def convert_dequantize_linear(ctx: NodeContext):
    quantized = _dtype(ctx, 0)
    _check_f32(ctx, "the scale", _dtype(ctx, 1))
    if ctx.attr("output_dtype", 0) not in (0, onnx.TensorProto.FLOAT):
        raise ctx.error(f"output_dtype {ctx.attr('output_dtype')} is not supported, only "
                        "float32")
    if quantized not in _QUANTIZED and all(ctx.is_const(i) for i in ctx.inputs()):
        return _folded(ctx)
    _check_quantized(ctx, quantized)
    operands, axis = _operands(ctx, quantized)
    return [ctx.emit(C.DequantizeLinearOp, *operands, axis)]
