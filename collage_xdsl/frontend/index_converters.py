"""The converters of GatherElements, GatherND, ScatterND, TopK, CumSum and Range
(registered in `collage_xdsl.frontend.converters.CONVERTERS`).

    GatherElements(data, indices) axis     -> collage.gather_elements %data, %indices {axis}
    GatherND(data, indices) batch_dims     -> collage.gather_nd %data, %indices {batch_dims}
    ScatterND(data, indices, updates)      -> collage.scatter_nd %data, %indices, %updates
    TopK(x, K) axis, largest, sorted = 1   -> %values, %indices = collage.top_k %x {k, ...}
    CumSum(x, axis) exclusive, reverse     -> collage.cumsum %x {axis, exclusive, reverse}

K and CumSum's axis must be constants. A Range of constants never reaches its converter:
the importer folds it into a `collage.constant`; any other Range is an error, since its
output's length depends on the values of its inputs.
"""

from __future__ import annotations

from collage_xdsl.dialects import collage as C
from collage_xdsl.frontend.context import NodeContext
from collage_xdsl.frontend.converters import converter


def _scalar(ctx: NodeContext, i: int, what: str) -> int:
    """Constant input `i`, a single integer (0-D or of one element)."""
    value = ctx.const(i, what)
    if value.size != 1:
        raise ctx.error(f"input '{what}' must hold one value, got shape {list(value.shape)}")
    return int(value.reshape(()))


@converter("GatherElements")
def convert_gather_elements(ctx: NodeContext):
    return [ctx.emit(C.GatherElementsOp, ctx.value(0), ctx.value(1), ctx.attr("axis", 0))]


@converter("GatherND")
def convert_gather_nd(ctx: NodeContext):
    return [ctx.emit(C.GatherNdOp, ctx.value(0), ctx.value(1), ctx.attr("batch_dims", 0))]


@converter("ScatterND")
def convert_scatter_nd(ctx: NodeContext):
    reduction = ctx.attr("reduction", "none")
    if reduction not in C.SCATTER_REDUCTIONS:
        raise ctx.error(f"reduction '{reduction}' is not supported, only "
                        f"{', '.join(C.SCATTER_REDUCTIONS)}")
    return [ctx.emit(C.ScatterNdOp, ctx.value(0), ctx.value(1), ctx.value(2), reduction)]


@converter("TopK")
def convert_top_k(ctx: NodeContext):
    """K is an attribute before opset 10, a constant input from then on."""
    if not ctx.attr("sorted", 1):
        raise ctx.error("sorted = 0 is not supported, only sorted results")
    k = ctx.attr("k") if ctx.opset < 10 else _scalar(ctx, 1, "K")
    op = ctx.emit_op(C.TopKOp, ctx.value(0), k, ctx.attr("axis", -1),
                     bool(ctx.attr("largest", 1)))
    return list(op.results)


@converter("CumSum")
def convert_cumsum(ctx: NodeContext):
    return [ctx.emit(C.CumSumOp, ctx.value(0), _scalar(ctx, 1, "axis"),
                     bool(ctx.attr("exclusive", 0)), bool(ctx.attr("reverse", 0)))]


@converter("Range")
def convert_range(ctx: NodeContext):
    raise ctx.error("start, limit and delta must be constants: the output's length "
                    "depends on their values")
