"""1-D window nodes (Conv, ConvTranspose, MaxPool, AveragePool and GlobalAveragePool on an
(N, C, L) input) through their 2-D converters: the input and the weight get an H axis of
size 1, the attributes their 2-D form with a 1 on H (a pad of 0), and the result drops
the axis again.

    Conv(x: [1, 8, 32], w: [16, 8, 3]) pads = [1, 1], strides = [2]
->  %x4 = collage.reshape %x : tensor<1x8x32xf32> -> tensor<1x8x1x32xf32>
    %c = collage.conv2d %x4, %w4 {strides = array<i64: 1, 2>, pads = array<i64: 0, 1, 0, 1>,
             dilations = array<i64: 1, 1>, ...} -> tensor<1x16x1x16xf32>
    %y = collage.reshape %c : tensor<1x16x1x16xf32> -> tensor<1x16x16xf32>
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from collage_xdsl.dialects import collage as C
from collage_xdsl.frontend.context import NodeContext, Value
from collage_xdsl.frontend.converters import Converter, _constant, _reshape
from collage_xdsl.ir.tensors import shape_of

_ON_H = {"kernel_shape": 1, "strides": 1, "dilations": 1, "output_padding": 0,
         "output_shape": 1}
"""The per-axis attributes and the value they take on H; `pads` [b, e] becomes
[0, b, 0, e]. (ONNX shape inference has checked their lengths against the input.)"""


def _attrs_2d(ctx: NodeContext) -> dict[str, Any]:
    """The node's attributes in their 2-D form."""
    attrs = dict(ctx.attrs)
    for name, on_h in _ON_H.items():
        if name in attrs:
            attrs[name] = [on_h, *ctx.ints_attr(name)]
    if "pads" in attrs:
        begin, end = ctx.ints_attr("pads")
        attrs["pads"] = [0, begin, 0, end]
    return attrs


def _with_h(ctx: NodeContext, i: int) -> SSAValue:
    """Input ``i`` (N, C, L) as (N, C, 1, L); a constant stays one, and the result of a
    previous 1-D window (a reshape dropping H) is taken from before that reshape."""
    if ctx.is_const(i):
        return _constant(ctx, np.expand_dims(ctx.raw(i), 2))  # type: ignore[arg-type]
    n, c, length = ctx.shape(i)
    x = ctx.value(i)
    if isinstance(x.owner, C.ReshapeOp) and shape_of(x.owner.input.type) == (n, c, 1, length):
        return x.owner.input
    return _reshape(ctx, x, [n, c, 1, length])


class _As2d(NodeContext):
    """A 1-D node as its 2-D converter sees it: inputs 0 and 1 with H = 1, 2-D attributes."""

    def __init__(self, ctx: NodeContext):
        super().__init__(ctx.importer, ctx.node, ctx.opset)
        self.attrs = _attrs_2d(ctx)
        self.lifted = {i: _with_h(ctx, i) for i in (0, 1)
                       if ctx.has(i) and len(ctx.shape(i)) == 3}

    def raw(self, i: int) -> Value:
        return self.lifted[i] if i in self.lifted else super().raw(i)

    def value(self, i: int) -> SSAValue:
        return self.lifted[i] if i in self.lifted else super().value(i)


def one_d_as_2d(convert: Converter) -> Converter:
    """``convert``, a 2-D window converter, taking an (N, C, L) input as (N, C, 1, L)."""

    @functools.wraps(convert)
    def convert_1d_or_2d(ctx: NodeContext):
        if len(ctx.shape(0)) != 3:
            return convert(ctx)
        y, *rest = convert(_As2d(ctx))
        assert isinstance(y, SSAValue)
        n, c, _, length = shape_of(y.type)
        return [_reshape(ctx, y, [n, c, length]), *rest]

    return convert_1d_or_2d
