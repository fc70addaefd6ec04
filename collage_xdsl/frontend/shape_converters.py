"""The converters of Resize and Tile (registered in
`collage_xdsl.frontend.converters.CONVERTERS`).

    Resize(x, roi, scales)        -> collage.resize %x {mode, ..., scales = array<f32: sh, sw>}
    Resize(x, roi, "", sizes)     -> collage.resize %x {mode, ...}   (the scale: output / input)
    Tile(x, repeats)              -> collage.tile %x {repeats = array<i64: ...>}
"""

from __future__ import annotations

from collections.abc import Sequence

from collage_xdsl.dialects import collage as C
from collage_xdsl.frontend.context import NodeContext
from collage_xdsl.frontend.converters import converter

_FIXED = {"antialias": 0, "exclude_outside": 0, "keep_aspect_ratio_policy": "stretch"}
"""Resize attributes supported only at their defaults."""


def _choice(ctx: NodeContext, name: str, default: str, allowed: Sequence[str]) -> str:
    value = ctx.attr(name, default)
    if value not in allowed:
        raise ctx.error(f"{name} '{value}' is not supported, only {', '.join(allowed)}")
    return value


def _scales_or_sizes(ctx: NodeContext, shape: Sequence[int]) -> dict:
    """The `scales` (H, W) or `sizes` (H, W) keyword of `ResizeOp`."""
    if ctx.has(3):
        sizes = [int(s) for s in ctx.const(3, "sizes")]
        if len(sizes) != 4 or sizes[:2] != list(shape[:2]):
            raise ctx.error(f"sizes {sizes} must keep N and C of {list(shape)}")
        return {"sizes": sizes[2:]}
    if ctx.has(2) and ctx.const(2, "scales").size:
        scales = [float(s) for s in ctx.const(2, "scales")]
        if len(scales) != 4 or scales[:2] != [1.0, 1.0]:
            raise ctx.error(f"scales {scales} must be 4 values, 1 for N and C")
        return {"scales": scales[2:]}
    raise ctx.error("needs constant scales or sizes")


@converter("Resize")
def convert_resize(ctx: NodeContext):
    shape = ctx.shape(0)
    if ctx.opset < 11 or len(shape) != 4:
        raise ctx.error(f"only opset >= 11 on 4-D (NCHW) inputs is supported, not opset "
                        f"{ctx.opset} on rank {len(shape)}")
    for name, default in _FIXED.items():
        if ctx.attr(name, default) != default:
            raise ctx.error(f"{name} {ctx.attr(name)!r} is not supported, only {default!r}")
    if ctx.attr("axes") is not None:
        raise ctx.error("axes is not supported")
    mode = _choice(ctx, "mode", "nearest", C.RESIZE_MODES)
    coordinates = _choice(ctx, "coordinate_transformation_mode", "half_pixel",
                          C.RESIZE_COORDINATE_MODES)
    rounding = None
    if mode == "nearest":
        rounding = _choice(ctx, "nearest_mode", "round_prefer_floor", C.RESIZE_NEAREST_MODES)
    return [ctx.emit(C.ResizeOp, ctx.value(0), mode, coordinates, rounding,
                     **_scales_or_sizes(ctx, shape))]


@converter("Tile")
def convert_tile(ctx: NodeContext):
    return [ctx.emit(C.TileOp, ctx.value(0), [int(r) for r in ctx.const(1, "repeats")])]
