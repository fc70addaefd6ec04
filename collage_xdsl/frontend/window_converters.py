"""The converters of the 2-D window ops: Conv, ConvTranspose, MaxPool / AveragePool and
GlobalAveragePool (registered in `collage_xdsl.frontend.converters.CONVERTERS`).

    Conv(x, w, b)          -> %c = collage.conv2d %x, %w ; collage.add %c, %b   (b as [C,1,1])
    ConvTranspose(x, w, b) -> collage.conv_transpose2d %x, %w ; collage.add     (likewise)

On an (N, C, L) input each is the 2-D op between two reshapes (`windows_1d.one_d_as_2d`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IntegerAttr, i1
from xdsl.ir import SSAValue

from collage_xdsl.dialects import collage as C
from collage_xdsl.frontend.context import NodeContext
from collage_xdsl.frontend.converters import (
    _constant,
    _only_output_0,
    _reshape,
    converter,
)
from collage_xdsl.frontend.windows_1d import one_d_as_2d


def _window(ctx: NodeContext, kernel: Sequence[int]):
    """(strides, dilations, pads as [top, left, bottom, right]) of a 2-D conv / pool node."""
    shape = ctx.shape(0)
    if len(shape) != 4 or len(kernel) != 2:
        raise ctx.error(f"only 2-D windows on rank-4 NCHW inputs are supported, got input "
                        f"{list(shape)} and kernel {list(kernel)}")
    strides = ctx.ints_attr("strides", [1, 1])
    dilations = ctx.ints_attr("dilations", [1, 1])
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    if auto_pad == "NOTSET":
        return strides, dilations, ctx.ints_attr("pads", [0, 0, 0, 0])
    if auto_pad == "VALID":
        return strides, dilations, [0, 0, 0, 0]
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise ctx.error(f"unknown auto_pad '{auto_pad}'")
    begin, end = [], []
    for size, k, s, d in zip(shape[2:], kernel, strides, dilations):
        total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
        small, big = total // 2, total - total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else big)
        end.append(big if auto_pad == "SAME_UPPER" else small)
    return strides, dilations, begin + end


@converter("Conv")
@one_d_as_2d
def convert_conv(ctx: NodeContext):
    kernel = ctx.ints_attr("kernel_shape", ctx.shape(1)[2:])
    strides, dilations, pads = _window(ctx, kernel)
    out = ctx.emit(C.Conv2dOp, ctx.value(0), ctx.value(1), strides, pads, dilations,
                   ctx.attr("group", 1))
    return [_add_bias(ctx, out)]


def _add_bias(ctx: NodeContext, out: SSAValue) -> SSAValue:
    """`out + B` with the optional bias input 2 of a Conv / ConvTranspose as `[C, 1, 1]`."""
    if not ctx.has(2):
        return out
    channels = ctx.shape(2)[0]
    if ctx.is_const(2):
        bias = _constant(ctx, ctx.const(2, "B").reshape(channels, 1, 1))
    else:
        bias = _reshape(ctx, ctx.value(2), [channels, 1, 1])
    return ctx.emit(C.AddOp, out, bias)


@converter("ConvTranspose")
@one_d_as_2d
def convert_conv_transpose(ctx: NodeContext):
    """The total pads that `output_shape` (or SAME_*: input * stride) implies are split as
    ONNX specifies: the odd one at the end for SAME_UPPER, else at the start; a total below
    0 at the end is output padding."""
    kernel = ctx.ints_attr("kernel_shape", ctx.shape(1)[2:])
    strides, dilations, pads = _window(ctx, kernel)  # Conv's pads, but for SAME_* auto_pad
    extra, want = ctx.ints_attr("output_padding", [0, 0]), ctx.ints_attr("output_shape")
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    if want is None and auto_pad.startswith("SAME_"):
        want = [size * s for size, s in zip(ctx.shape(0)[2:], strides)]
    for i, size in enumerate(ctx.shape(0)[2:] if want else ()):
        total = (size - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 + extra[i] - want[i]
        pads[i] = int(total / 2) if auto_pad == "SAME_UPPER" else total - int(total / 2)
        pads[i + 2], extra[i] = max(total - pads[i], 0), extra[i] + max(pads[i] - total, 0)
        if pads[i] < 0:
            raise ctx.error(f"output_shape {want} needs negative leading pads")
    out = ctx.emit(C.ConvTranspose2dOp, ctx.value(0), ctx.value(1), strides, pads, dilations,
                   extra, ctx.attr("group", 1))
    return [_add_bias(ctx, out)]


@converter("MaxPool", "AveragePool")
@one_d_as_2d
def convert_pool(ctx: NodeContext):
    _only_output_0(ctx)
    kernel = ctx.ints_attr("kernel_shape")
    strides, dilations, pads = _window(ctx, kernel)
    if any(d != 1 for d in dilations):
        raise ctx.error(f"dilations {dilations} are not supported for pooling")
    ceil_mode = bool(ctx.attr("ceil_mode", 0))
    if ctx.node.op_type == "MaxPool":
        return [ctx.emit(C.MaxPool2dOp, ctx.value(0), kernel, strides, pads, ceil_mode)]
    include = {"count_include_pad": IntegerAttr(ctx.attr("count_include_pad", 0), i1)}
    return [ctx.emit(C.AvgPool2dOp, ctx.value(0), kernel, strides, pads, ceil_mode, include)]


@converter("GlobalAveragePool")
@one_d_as_2d
def convert_global_avg_pool(ctx: NodeContext):
    if len(ctx.shape(0)) != 4:
        raise ctx.error(f"only rank-4 NCHW inputs are supported, got {list(ctx.shape(0))}")
    return [ctx.emit(C.GlobalAvgPool2dOp, ctx.value(0))]
