"""Matrix products, einsums and convolutions: `linalg.matmul`, `linalg.conv_2d_nchw_fchw`
and `linalg.conv_2d_ngchw_gfchw` where a named op fits, a reduction `linalg.generic`
otherwise (always for an einsum), each accumulating into a zero-filled `tensor.empty`.

    %y = collage.matmul %x, %w : (tensor<1x256xf32>, tensor<256x10xf32>) -> tensor<1x10xf32>
==>
    %z = arith.constant 0.0 : f32
    %0 = tensor.empty() : tensor<1x10xf32>
    %1 = linalg.fill ins(%z : f32) outs(%0 : tensor<1x10xf32>) -> tensor<1x10xf32>
    %y = linalg.matmul ins(%x, %w : tensor<1x256xf32>, tensor<256x10xf32>)
                       outs(%1 : tensor<1x10xf32>) -> tensor<1x10xf32>

A convolution's padding is a `tensor.pad` of its input with zeros; with groups (depthwise
included) the input's channels and the weight's filters are split by group:

    %y = collage.conv2d %x, %w {group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, ...}
           : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x8x8xf32>
==>
    %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %zero : f32
    } : tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32>
    %xg = tensor.expand_shape %p [[0], [1, 2], [3], [4]] output_shape [1, 4, 1, 10, 10]
            : tensor<1x4x10x10xf32> into tensor<1x4x1x10x10xf32>
    %wg = tensor.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [4, 1, 1, 3, 3]
            : tensor<4x1x3x3xf32> into tensor<4x1x1x3x3xf32>
    %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>,
                                     strides = dense<1> : tensor<2xi64>}
           ins(%xg, %wg : ...) outs(%acc : tensor<1x4x1x8x8xf32>) -> tensor<1x4x1x8x8xf32>
    %y = tensor.collapse_shape %c [[0], [1, 2], [3], [4]]
           : tensor<1x4x1x8x8xf32> into tensor<1x4x8x8xf32>

A transposed convolution spreads the input pixels ``stride`` apart into a zero tensor
(`tensor.insert_slice` with strides, framed by ``dilation * (k - 1)`` zeros), crops it
to start ``pads`` cells in (`tensor.extract_slice`), and convolves that with stride 1
and the weight flipped in H and W with its channel roles swapped (a generic reading the
weight with `tensor.extract`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntElementsAttr,
    IndexType,
    TensorType,
    i64,
)
from xdsl.dialects.linalg.ops import Conv2DNchwFchwOp, Conv2DNgchwGfchwOp, MatmulOp
from xdsl.dialects.tensor import (
    ExtractOp,
    ExtractSliceOp,
    InsertSliceOp,
)
from xdsl.ir import SSAValue

from collage_xdsl.dialects import collage as C
from collage_xdsl.dialects.collage import get_int, get_ints
from collage_xdsl.ir.tensors import shape_of
from collage_xdsl.linalg.emit import (
    PARALLEL,
    REDUCTION,
    Body,
    Emitter,
    affine_map,
    broadcast_exprs,
    dims,
    lowers,
    tensor_of,
)
from collage_xdsl.linalg.windows import pad, window_pads


def _multiply_add(b: Body, a: Sequence[SSAValue]) -> list[SSAValue]:
    """The body ``acc + x0 * x1 * ...`` over the block arguments ``(x0, x1, ..., acc)``."""
    floating = isinstance(a[0].type, AnyFloat)
    mul, add = (arith.MulfOp, arith.AddfOp) if floating else (arith.MuliOp, arith.AddiOp)
    product = a[0]
    for x in a[1:-1]:
        product = b.op(mul, product, x)
    return [b.op(add, a[-1], product)]


@lowers(C.MatmulOp)
def matmul(e: Emitter, op: C.MatmulOp, x: SSAValue, w: SSAValue) -> list[SSAValue]:
    """numpy's matmul: 2-D as `linalg.matmul`; batched (leading dimensions broadcast, a
    1-D operand promoted) as a generic over the output's dimensions and the shared one."""
    out = tensor_of(op.results[0])
    acc = e.filled(out, 0)
    xs, ws, os = shape_of(x.type), shape_of(w.type), shape_of(out)
    if len(xs) == 2 and len(ws) == 2:
        return [e.insert(MatmulOp((x, w), (acc,), (out,))).results[0]]
    rank = len(os) + 1  # the output's loops, then k
    loops = dims(rank)
    k = loops[-1]
    batch = len(os) - (len(xs) >= 2) - (len(ws) >= 2)
    lead = loops[:batch]
    x_map = [k] if len(xs) == 1 else [*broadcast_exprs(xs[:-2], os[:batch], lead),
                                      loops[batch], k]
    w_map = [k] if len(ws) == 1 else [*broadcast_exprs(ws[:-2], os[:batch], lead),
                                      k, loops[len(os) - 1]]
    maps = [affine_map(rank, x_map), affine_map(rank, w_map), affine_map(rank, loops[:-1])]
    return [e.generic([x, w], acc, maps, [PARALLEL] * len(os) + [REDUCTION], _multiply_add)]


@lowers(C.EinsumOp)
def einsum(e: Emitter, op: C.EinsumOp, *xs: SSAValue) -> list[SSAValue]:
    """One loop per letter, the output's (parallel) then the summed ones (reduction); each
    operand read through its term, the product of the operands added to a zero-filled
    accumulator. For "bid,bjd->bij" the loops are (b, i, j, d) and the maps
    ``(d0, d1, d3)``, ``(d0, d2, d3)`` and ``(d0, d1, d2)``."""
    terms, output = C.EinsumOp.terms(op.equation.data)
    summed = list(dict.fromkeys(c for c in "".join(terms) if c not in output))
    letters = [*output, *summed]
    loops = dict(zip(letters, dims(len(letters))))
    maps = [affine_map(len(letters), [loops[c] for c in term]) for term in [*terms, output]]
    iterators = [PARALLEL] * len(output) + [REDUCTION] * len(summed)
    acc = e.filled(tensor_of(op.output), 0)
    return [e.generic(list(xs), acc, maps, iterators, _multiply_add)]


def _ints_attr(values: Sequence[int]) -> DenseIntElementsAttr:
    """``dense<[...]> : tensor<Nxi64>``, the form of a named op's strides and dilations."""
    return DenseIntElementsAttr.from_list(TensorType(i64, [len(values)]), list(values))


def _split_dim(e: Emitter, x: SSAValue, dim: int, parts: int) -> SSAValue:
    """``x`` (rank 4) with dimension ``dim`` split into ``parts`` x the rest
    (`tensor.expand_shape`)."""
    shape = list(shape_of(x.type))
    shape[dim : dim + 1] = [parts, shape[dim] // parts]
    groups = [[i] for i in range(dim)] + [[dim, dim + 1]] + [[i + 1] for i in range(dim + 1, 4)]
    return e.expand(x, groups, TensorType(tensor_of(x).get_element_type(), shape))


def _grouped_conv(e: Emitter, x: SSAValue, w: SSAValue, out: TensorType,
                  strides: Sequence[int], dilations: Sequence[int], group: int) -> SSAValue:
    """``x`` (NCHW, padded) convolved with ``w`` (O, C/group, KH, KW) into ``out``:
    `linalg.conv_2d_nchw_fchw` for one group, else `linalg.conv_2d_ngchw_gfchw` on ``x``
    and ``w`` split by group, its (N, G, O/G, OH, OW) result collapsed."""
    attrs = {"strides": _ints_attr(strides), "dilations": _ints_attr(dilations)}
    if group == 1:
        conv = Conv2DNchwFchwOp((x, w), (e.filled(out, 0),), (out,), **attrs)
        return e.insert(conv).results[0]
    n, o, oh, ow = shape_of(out)
    split = TensorType(out.get_element_type(), [n, group, o // group, oh, ow])
    conv = Conv2DNgchwGfchwOp((_split_dim(e, x, 1, group), _split_dim(e, w, 0, group)),
                              (e.filled(split, 0),), (split,), **attrs)
    return e.collapse(e.insert(conv).results[0], [[0], [1, 2], [3], [4]], out)


@lowers(C.Conv2dOp)
def conv2d(e: Emitter, op: C.Conv2dOp, x: SSAValue, w: SSAValue) -> list[SSAValue]:
    """``x`` zero-padded, then the named convolution of its groups."""
    out = tensor_of(op.output)
    strides, dilations = get_ints(op.strides), get_ints(op.dilations)
    low, high = window_pads(x, get_ints(op.pads), shape_of(w.type)[2:], strides, dilations,
                            shape_of(out)[2:])
    return [_grouped_conv(e, pad(e, x, low, high, 0), w, out, strides, dilations,
                          get_int(op.group, 1))]


def _flipped(e: Emitter, w: SSAValue, group: int) -> SSAValue:
    """The transposed convolution's weight (C, O/G, KH, KW) as a convolution's
    (O, C/G, KH, KW): ``w'[g * O/G + f, c, a, b] = w[g * C/G + c, f, KH-1-a, KW-1-b]``,
    a generic reading ``w`` with `tensor.extract`."""
    channels, per_group, kh, kw = shape_of(w.type)
    element = w.type.get_element_type()
    out = TensorType(element, [group * per_group, channels // group, kh, kw])
    index = IndexType()

    def body(b: Body, args: Sequence[SSAValue]) -> list[SSAValue]:
        o, c, y, x = (b.index(d) for d in range(4))
        size = b.iconst(per_group, index)
        g, f = b.op(arith.DivUIOp, o, size), b.op(arith.RemUIOp, o, size)
        channel = b.op(arith.AddiOp, b.op(arith.MuliOp, g, b.iconst(channels // group, index)),
                       c)
        at = [channel, f, b.op(arith.SubiOp, b.iconst(kh - 1, index), y),
              b.op(arith.SubiOp, b.iconst(kw - 1, index), x)]
        return [b.op(ExtractOp, w, at, element)]

    return e.generic([], out, [affine_map(4, dims(4))], [PARALLEL] * 4, body)


@lowers(C.ConvTranspose2dOp)
def conv_transpose2d(e: Emitter, op: C.ConvTranspose2dOp, x: SSAValue, w: SSAValue
                     ) -> list[SSAValue]:
    """``x`` spread ``stride`` apart into zeros framed by ``dilation * (k - 1)`` (plus
    ``output_padding`` at the end), cropped to start ``pads`` cells in, then convolved
    with stride 1 and the flipped weight."""
    out = tensor_of(op.output)
    strides, dilations = get_ints(op.strides), get_ints(op.dilations)
    pads, extra = get_ints(op.pads), get_ints(op.output_padding)
    group = get_int(op.group, 1)
    batch, channels, *hw = shape_of(x.type)
    frame = [d * (k - 1) for d, k in zip(dilations, shape_of(w.type)[2:])]
    spread = [(n - 1) * s + 1 + 2 * f + p for n, s, f, p in zip(hw, strides, frame, extra)]
    zeros = e.filled(TensorType(out.get_element_type(), [batch, channels, *spread]), 0)
    spread_x = e.insert(InsertSliceOp.from_static_parameters(
        x, zeros, [0, 0, *frame], shape_of(x.type), [1, 1, *strides])).results[0]
    sizes = [batch, channels, *(o + f for o, f in zip(shape_of(out)[2:], frame))]
    if sizes[2:] != spread:
        spread_x = e.insert(ExtractSliceOp.from_static_parameters(
            spread_x, [0, 0, *pads[:2]], sizes, [1] * 4)).results[0]
    return [_grouped_conv(e, spread_x, _flipped(e, w, group), out, (1, 1), dilations, group)]
