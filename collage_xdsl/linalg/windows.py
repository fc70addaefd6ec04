"""Padding, pooling and local response normalization: `tensor.pad` for the borders, then a
reduction `linalg.generic` (maximum or sum) whose window loops take their bounds from a
window-shaped `tensor.empty` operand, and an element-wise division or normalization after
the sums.

    %y = collage.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                                pads = array<i64: 0, 0, 0, 0>}
           : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
==>
    %z = arith.constant 0.0 : f32
    %0 = tensor.empty() : tensor<1x3x4x4xf32>
    %1 = linalg.fill ins(%z : f32) outs(%0 : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
    %k = tensor.empty() : tensor<2x2xf32>
    %s = linalg.generic {indexing_maps = [
             affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>,
             affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>,
             affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>],
           iterator_types = ["parallel", "parallel", "parallel", "parallel",
                             "reduction", "reduction"]}
           ins(%x, %k : tensor<1x3x8x8xf32>, tensor<2x2xf32>) outs(%1 : tensor<1x3x4x4xf32>) {
    ^bb0(%a: f32, %w: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<1x3x4x4xf32>
    %y = linalg.generic {...} ins(%s : tensor<1x3x4x4xf32>) outs(...) {  // %a / 4.0
    } -> tensor<1x3x4x4xf32>

Padded borders read as the op's fill value (zero, or the lowest value for max pooling);
ceil mode pads the bottom and right edges further so that the last window fits, as the
reference semantics (`collage_xdsl.ir.windows`) do. Average pooling divides each sum by
its own window's count (a constant tensor when the counts differ across the output).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerType, TensorType
from xdsl.dialects.tensor import PadOp
from xdsl.dialects.tensor import YieldOp as PadYieldOp
from xdsl.ir import Block, Region, SSAValue

from collage_xdsl.dialects import collage as C
from collage_xdsl.dialects.collage import get_bool, get_float, get_int, get_ints
from collage_xdsl.ir.tensors import np_dtype, shape_of
from collage_xdsl.linalg.emit import (
    PARALLEL,
    REDUCTION,
    Body,
    Emitter,
    LoweringError,
    affine_map,
    dims,
    is_float,
    lowers,
    tensor_of,
)


def pad(e: Emitter, x: SSAValue, low: Sequence[int], high: Sequence[int],
        value: float | int) -> SSAValue:
    """``x`` widened by ``low`` / ``high`` elements per dimension, the new cells holding
    ``value`` (`tensor.pad`); ``x`` itself when nothing is added."""
    if not any(low) and not any(high):
        return x
    t = tensor_of(x)
    fill = e.scalar(value, t.get_element_type())
    block = Block(arg_types=[IndexType()] * len(low))
    block.add_op(PadYieldOp(fill))
    shape = [n + lo + hi for n, lo, hi in zip(shape_of(t), low, high)]
    out = TensorType(t.get_element_type(), shape)
    return e.insert(PadOp(x, [], [], Region(block), low, high, out)).result


def window_pads(x: SSAValue, pads: Sequence[int], kernel: Sequence[int],
                strides: Sequence[int], dilations: Sequence[int], out_hw: Sequence[int]
                ) -> tuple[list[int], list[int]]:
    """The NCHW `pad` widths (low, high) of a window op: ``pads`` (top, left, bottom,
    right), the bottom and right grown by what ceil mode's last window needs."""
    extra = [max(0, (o - 1) * s + d * (k - 1) + 1 - (n + p0 + p1))
             for o, s, d, k, n, p0, p1 in zip(out_hw, strides, dilations, kernel,
                                              shape_of(x.type)[2:], pads[:2], pads[2:])]
    return [0, 0, pads[0], pads[1]], [0, 0, pads[2] + extra[0], pads[3] + extra[1]]


def _add(b: Body, acc: SSAValue, value: SSAValue) -> SSAValue:
    return b.op(arith.AddfOp if isinstance(value.type, AnyFloat) else arith.AddiOp, acc, value)


def _max(b: Body, acc: SSAValue, value: SSAValue) -> SSAValue:
    return b.op(arith.MaximumfOp if isinstance(value.type, AnyFloat) else arith.MaxSIOp,
                acc, value)


def _window_reduce(e: Emitter, x: SSAValue, init: SSAValue, kernel: Sequence[int],
                   strides: Sequence[int], combine: Callable[[Body, SSAValue, SSAValue],
                                                             SSAValue]) -> SSAValue:
    """Per NCHW output position of ``init``, its ``kernel`` window of ``x`` (padded) folded
    into the initial value by ``combine(b, acc, value)``."""
    n, c, oh, ow, kh, kw = dims(6)
    window = e.empty(TensorType(x.type.get_element_type(), list(kernel)))
    maps = [affine_map(6, [n, c, oh * strides[0] + kh, ow * strides[1] + kw]),
            affine_map(6, [kh, kw]), affine_map(6, [n, c, oh, ow])]
    return e.generic([x, window], init, maps, [PARALLEL] * 4 + [REDUCTION] * 2,
                     lambda b, a: [combine(b, a[2], a[0])])


def _pool_attrs(op: C.Pool2dOp) -> tuple[TensorType, list[int], list[int], list[int]]:
    out = tensor_of(op.output)
    return out, get_ints(op.kernel), get_ints(op.strides), get_ints(op.pads)


@lowers(C.MaxPool2dOp)
def max_pool2d(e: Emitter, op: C.MaxPool2dOp, x: SSAValue) -> list[SSAValue]:
    """The window maximum over ``x`` padded with -inf (the integer minimum), as a generic:
    xdsl builds `linalg.pooling_nchw_max` with a body that takes the maximum of the input
    and the window operand, so its printed generic form would compute the wrong thing."""
    out, kernel, strides, pads = _pool_attrs(op)
    element = out.get_element_type()
    if is_float(element):
        lowest: float | int = -np.inf
    else:
        assert isinstance(element, IntegerType)
        lowest = -(1 << (element.width.data - 1))
    low, high = window_pads(x, pads, kernel, strides, (1, 1), shape_of(out)[2:])
    padded = pad(e, x, low, high, lowest)
    return [_window_reduce(e, padded, e.filled(out, lowest), kernel, strides, _max)]


def _window_counts(k: int, s: int, lo: int, hi: int, out: int, pad0: int) -> np.ndarray:
    """Per output position along one axis: how many cells of its window (starting at
    ``i * s - pad0``) fall in ``[lo, hi)`` of the unpadded input's coordinates."""
    starts = np.arange(out) * s - pad0
    return np.clip(np.minimum(starts + k, hi) - np.maximum(starts, lo), 0, None)


def _divide(e: Emitter, sums: SSAValue, out: TensorType, divisor: np.ndarray) -> SSAValue:
    """``sums / divisor`` element-wise, ``divisor`` broadcast (inline when it is uniform)."""
    t = out.get_element_type()
    if np.all(divisor == divisor.flat[0]):
        count = float(divisor.flat[0])
        return e.map(out, [sums], lambda b, a: [b.op(arith.DivfOp, a[0], b.fconst(count, t))])
    counts = e.constant(divisor.astype(np_dtype(t)))
    return e.map(out, [sums, counts], lambda b, a: [b.op(arith.DivfOp, a[0], a[1])])


@lowers(C.AvgPool2dOp)
def avg_pool2d(e: Emitter, op: C.AvgPool2dOp, x: SSAValue) -> list[SSAValue]:
    """Window sums over ``x`` zero-padded, divided by each window's count: the cells of
    the input, plus those of the explicit padding with `count_include_pad` (never those
    ceil mode adds)."""
    out, kernel, strides, pads = _pool_attrs(op)
    if not is_float(out):
        raise LoweringError(f"{op.name}: integer average pooling has no lowering")
    out_hw = shape_of(out)[2:]
    low, high = window_pads(x, pads, kernel, strides, (1, 1), out_hw)
    sums = _window_reduce(e, pad(e, x, low, high, 0), e.filled(out, 0), kernel, strides, _add)
    include = get_bool(op.count_include_pad, False)
    counts = [_window_counts(k, s, -p0 if include else 0, n + p1 if include else n, o, p0)
              for n, k, s, p0, p1, o in zip(shape_of(x.type)[2:], kernel, strides, pads[:2],
                                            pads[2:], out_hw)]
    return [_divide(e, sums, out, np.outer(*counts))]


@lowers(C.GlobalAvgPool2dOp)
def global_avg_pool2d(e: Emitter, op: C.GlobalAvgPool2dOp, x: SSAValue) -> list[SSAValue]:
    """The sum over H and W into an NxC tensor, then divided by H * W into NxCx1x1."""
    out = tensor_of(op.output)
    if not is_float(out):
        raise LoweringError(f"{op.name}: integer average pooling has no lowering")
    n, c, h, w = shape_of(x.type)
    t = out.get_element_type()
    loops = dims(4)
    sums = e.generic([x], e.filled(TensorType(t, [n, c]), 0),
                     [affine_map(4, loops), affine_map(4, loops[:2])],
                     [PARALLEL] * 2 + [REDUCTION] * 2, lambda b, a: [_add(b, a[1], a[0])])
    count = float(h * w)
    return [e.generic([sums], out, [affine_map(4, loops[:2]), affine_map(4, loops)],
                      [PARALLEL] * 4,
                      lambda b, a: [b.op(arith.DivfOp, a[0], b.fconst(count, t))])]


@lowers(C.PadOp)
def pad_op(e: Emitter, op: C.PadOp, x: SSAValue) -> list[SSAValue]:
    """Constant padding: `tensor.pad` yielding the op's value (truncated for integers)."""
    pads = get_ints(op.pads)
    rank = len(pads) // 2
    value = get_float(op.value, 0.0)
    if not is_float(x.type):
        value = int(value)
    return [pad(e, x, pads[:rank], pads[rank:], value)]


@lowers(C.LrnOp)
def lrn(e: Emitter, op: C.LrnOp, x: SSAValue) -> list[SSAValue]:
    """ONNX LRN: the sum of squares over ``size`` neighbouring channels (``x`` zero-padded
    along C), then ``x / (bias + alpha / size * sum) ** beta`` element-wise."""
    out = tensor_of(op.output)
    t = out.get_element_type()
    shape = shape_of(out)
    rank = len(shape)
    size = get_int(op.size, 1)
    before = (size - 1) // 2
    alpha, beta, bias = (get_float(a, 0.0) for a in (op.alpha, op.beta, op.bias))
    low, high = [0] * rank, [0] * rank
    low[1], high[1] = before, size - 1 - before
    loops = dims(rank + 1)
    reads = [loops[1] + loops[rank] if i == 1 else loops[i] for i in range(rank)]
    maps = [affine_map(rank + 1, reads), affine_map(rank + 1, [loops[rank]]),
            affine_map(rank + 1, loops[:rank])]
    sums = e.generic([pad(e, x, low, high, 0), e.empty(TensorType(t, [size]))],
                     e.filled(out, 0), maps, [PARALLEL] * rank + [REDUCTION],
                     lambda b, a: [b.op(arith.AddfOp, a[2], b.op(arith.MulfOp, a[0], a[0]))])

    def normalize(b: Body, a: Sequence[SSAValue]) -> list[SSAValue]:
        scaled = b.op(arith.MulfOp, b.fconst(alpha / size, t), a[1])
        scale = b.op(arith.AddfOp, b.fconst(bias, t), scaled)
        return [b.op(arith.DivfOp, a[0], b.op(math.PowFOp, scale, b.fconst(beta, t)))]

    return [e.map(out, [x, sums], normalize)]
