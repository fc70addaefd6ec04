"""The converters of InstanceNormalization, GroupNormalization and ArgMax (registered in
`collage_xdsl.frontend.converters.CONVERTERS`).

    GroupNormalization(x, s, b) opset 18-20, s and b per group -> per channel:
        collage.group_norm %x, %s', %b'    (s' = s repeated C/G times; folded if constant)
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from collage_xdsl.dialects import collage as C
from collage_xdsl.frontend.context import NodeContext
from collage_xdsl.frontend.converters import _constant, _reshape, converter


@converter("InstanceNormalization")
def convert_instance_norm(ctx: NodeContext):
    return [ctx.emit(C.InstanceNormOp, ctx.value(0), ctx.value(1), ctx.value(2),
                     ctx.attr("epsilon", 1e-5))]


def _per_channel(ctx: NodeContext, i: int, groups: int) -> SSAValue:
    """Input `i` (scale or bias) per channel: from opset 21 as is, before per group."""
    channels = ctx.shape(0)[1]
    if ctx.opset >= 21 or groups == channels:
        return ctx.value(i)
    if ctx.shape(i) != (groups,):
        raise ctx.error(f"input {i} has shape {list(ctx.shape(i))}, expected [{groups}]")
    if ctx.is_const(i):
        return _constant(ctx, np.repeat(ctx.const(i, ""), channels // groups))
    column = _reshape(ctx, ctx.value(i), [groups, 1])
    return _reshape(ctx, ctx.emit(C.ExpandOp, column, [groups, channels // groups]), [channels])


@converter("GroupNormalization")
def convert_group_norm(ctx: NodeContext):
    groups = ctx.attr("num_groups")
    if len(ctx.shape(0)) < 2 or groups < 1 or ctx.shape(0)[1] % groups:
        raise ctx.error(f"num_groups {groups} must divide the channels of {list(ctx.shape(0))}")
    scale, bias = _per_channel(ctx, 1, groups), _per_channel(ctx, 2, groups)
    return [ctx.emit(C.GroupNormOp, ctx.value(0), scale, bias, groups,
                     ctx.attr("epsilon", 1e-5))]


@converter("ArgMax")
def convert_argmax(ctx: NodeContext):
    if ctx.attr("select_last_index", 0):
        raise ctx.error("select_last_index = 1 is not supported, only the first maximum")
    return [ctx.emit(C.ArgMaxOp, ctx.value(0), ctx.attr("axis", 0),
                     bool(ctx.attr("keepdims", 1)))]
