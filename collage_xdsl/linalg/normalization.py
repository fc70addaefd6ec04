"""Softmax, the normalizations, the reductions and argmax as chains of `linalg.generic`s:
reductions into a filled accumulator (the output map drops the reduced loops, or reads
them at 0 where the result keeps their dimensions), then a parallel generic that reads the
statistics back along the input's loops.

    %y = collage.softmax %x {axis = -1 : i64} : tensor<2x8xf32>
==>
    %ninf = arith.constant 0xff800000 : f32
    %0 = tensor.empty() : tensor<2xf32>
    %1 = linalg.fill ins(%ninf : f32) outs(%0 : tensor<2xf32>) -> tensor<2xf32>
    %top = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                            affine_map<(d0, d1) -> (d0)>],
                           iterator_types = ["parallel", "reduction"]}
             ins(%x : tensor<2x8xf32>) outs(%1 : tensor<2xf32>) {
    ^bb0(%a: f32, %m: f32):
      %r = arith.maximumf %a, %m : f32
      linalg.yield %r : f32
    } -> tensor<2xf32>
    %total = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                              affine_map<(d0, d1) -> (d0)>,
                                              affine_map<(d0, d1) -> (d0)>],
                             iterator_types = ["parallel", "reduction"]}
               ins(%x, %top : tensor<2x8xf32>, tensor<2xf32>) outs(%2 : tensor<2xf32>) {
    ^bb0(%a: f32, %m: f32, %s: f32):                    // %2: tensor<2xf32> filled with 0.0
      %d = arith.subf %a, %m : f32
      %p = math.exp %d : f32
      %r = arith.addf %s, %p : f32
      linalg.yield %r : f32
    } -> tensor<2xf32>
    %3 = tensor.empty() : tensor<2x8xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d0)>,
                                          affine_map<(d0, d1) -> (d0)>,
                                          affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
           ins(%x, %top, %total : ...) outs(%3 : tensor<2x8xf32>) {
    ^bb0(%a: f32, %m: f32, %s: f32, %o: f32):
      %d = arith.subf %a, %m : f32
      %p = math.exp %d : f32
      %r = arith.divf %p, %s : f32
      linalg.yield %r : f32
    } -> tensor<2x8xf32>

layer_norm, instance_norm and group_norm sum the input, then the squares of its deviation
from the mean, then normalize and apply scale and bias in one parallel generic; group_norm
first reshapes N x C x ... to N x G x C/G x ... so that each group is a set of trailing
dimensions (and back after). batch_norm is one parallel generic; a reduce_* op one
reduction generic (reduce_mean and reduce_l2 then divide or take the square root); argmax
a max reduction, then a min reduction over `linalg.index` where the maximum is. Each
formula is the reference interpreter's (`collage_xdsl.ir.interpreter`,
`collage_xdsl.ir.normalization`): means are sums divided by the element count, argmax is
the index of the first maximum (of the first NaN, where there is one).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import AffineMapAttr, AnyFloat, IntegerType, TensorType, i64
from xdsl.ir import Attribute, SSAValue

from collage_xdsl.dialects import collage as C
from collage_xdsl.dialects.collage import get_bool, get_float, get_int
from collage_xdsl.ir.tensors import shape_of
from collage_xdsl.linalg.emit import (
    PARALLEL,
    REDUCTION,
    Body,
    BodyFn,
    Emitter,
    LoweringError,
    affine_map,
    broadcast_map,
    dims,
    is_float,
    lowers,
    tensor_of,
)
from collage_xdsl.linalg.shapes import reshape_to


def _reduced_map(rank: int, axes: Sequence[int], keepdims: bool) -> AffineMapAttr:
    """The map from a rank-``rank`` loop nest to a result over the other loops: ``axes``
    dropped, or read at 0 with ``keepdims``."""
    return affine_map(rank, [0 if i in axes else d for i, d in enumerate(dims(rank))
                             if keepdims or i not in axes])


def _reduced_type(t: TensorType, axes: Sequence[int], keepdims: bool = False) -> TensorType:
    shape = [1 if i in axes else s for i, s in enumerate(shape_of(t)) if keepdims or i not in axes]
    return TensorType(t.get_element_type(), shape)


def _reduce(e: Emitter, inputs: Sequence[SSAValue], axes: Sequence[int], keepdims: bool,
            acc: SSAValue, body: BodyFn) -> SSAValue:
    """A reduction generic over the loops of ``inputs[0]`` (read whole) into the
    initialised ``acc``; the further inputs are statistics over the same ``axes``."""
    rank = len(shape_of(inputs[0].type))
    stats = _reduced_map(rank, axes, keepdims)
    maps = [affine_map(rank, dims(rank)), *[stats] * len(inputs)]
    iterators = [REDUCTION if i in axes else PARALLEL for i in range(rank)]
    return e.generic(inputs, acc, maps, iterators, body)


def _pointwise(e: Emitter, x: SSAValue, stats: Sequence[SSAValue], axes: Sequence[int],
               body: BodyFn, extra: Sequence[tuple[SSAValue, AffineMapAttr]] = ()) -> SSAValue:
    """A parallel generic over ``x``'s loops into a tensor of ``x``'s type, reading ``x``,
    the ``stats`` reduced over ``axes`` and the ``extra`` operands with their maps."""
    t = tensor_of(x)
    rank = len(shape_of(t))
    identity = affine_map(rank, dims(rank))
    maps = [identity, *[_reduced_map(rank, axes, False)] * len(stats), *[m for _, m in extra],
            identity]
    inputs = [x, *stats, *[v for v, _ in extra]]
    return e.generic(inputs, t, maps, [PARALLEL] * rank, body)


def _extreme(element: Attribute, highest: bool) -> float | int:
    """The identity of min (``highest``) or max over ``element``: an infinity for floats,
    the bound of the signed range for integers."""
    if isinstance(element, AnyFloat):
        return pymath.inf if highest else -pymath.inf
    assert isinstance(element, IntegerType)
    bound = 2 ** (element.width.data - 1)
    return bound - 1 if highest else -bound


def _add(b: Body, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.op(arith.AddfOp if isinstance(x.type, AnyFloat) else arith.AddiOp, x, y)


@lowers(C.SoftmaxOp)
def softmax(e: Emitter, op: C.SoftmaxOp, x: SSAValue) -> list[SSAValue]:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``."""
    t = tensor_of(x)
    axes = (get_int(op.axis, -1) % len(shape_of(t)),)
    stats = _reduced_type(t, axes)

    def shifted_exp(b: Body, a: Sequence[SSAValue]) -> SSAValue:
        return b.op(math.ExpOp, b.op(arith.SubfOp, a[0], a[1]))

    top = _reduce(e, [x], axes, False, e.filled(stats, -pymath.inf),
                  lambda b, a: [b.op(arith.MaximumfOp, a[0], a[1])])
    total = _reduce(e, [x, top], axes, False, e.filled(stats, 0.0),
                    lambda b, a: [b.op(arith.AddfOp, a[2], shifted_exp(b, a))])
    return [_pointwise(e, x, [top, total], axes,
                       lambda b, a: [b.op(arith.DivfOp, shifted_exp(b, a), a[2])])]


def _normalize(e: Emitter, x: SSAValue, start: int, epsilon: float,
               scale: tuple[SSAValue, AffineMapAttr], bias: tuple[SSAValue, AffineMapAttr]
               ) -> SSAValue:
    """``(x - mean) / sqrt(var + epsilon) * scale + bias`` with the statistics over the
    dimensions ``start..`` of ``x``: a sum, a sum of squared deviations, then one
    parallel generic."""
    t = tensor_of(x)
    shape = shape_of(t)
    axes = tuple(range(start, len(shape)))
    stats = _reduced_type(t, axes)
    element = t.get_element_type()
    count = float(pymath.prod(shape[start:]))

    def centred(b: Body, a: Sequence[SSAValue]) -> SSAValue:
        return b.op(arith.SubfOp, a[0], b.op(arith.DivfOp, a[1], b.fconst(count, element)))

    def squares(b: Body, a: Sequence[SSAValue]) -> list[SSAValue]:
        c = centred(b, a)
        return [b.op(arith.AddfOp, a[2], b.op(arith.MulfOp, c, c))]

    def normalized(b: Body, a: Sequence[SSAValue]) -> list[SSAValue]:
        var = b.op(arith.DivfOp, a[2], b.fconst(count, element))
        std = b.op(math.SqrtOp, b.op(arith.AddfOp, var, b.fconst(epsilon, element)))
        y = b.op(arith.DivfOp, centred(b, a), std)
        return [b.op(arith.AddfOp, b.op(arith.MulfOp, y, a[3]), a[4])]

    total = _reduce(e, [x], axes, False, e.filled(stats, 0.0),
                    lambda b, a: [b.op(arith.AddfOp, a[1], a[0])])
    deviation = _reduce(e, [x, total], axes, False, e.filled(stats, 0.0), squares)
    return _pointwise(e, x, [total, deviation], axes, normalized, [scale, bias])


@lowers(C.LayerNormOp)
def layer_norm(e: Emitter, op: C.LayerNormOp, x: SSAValue, scale: SSAValue, bias: SSAValue
               ) -> list[SSAValue]:
    """Statistics over the dimensions ``axis..``; scale and bias broadcast to them."""
    shape = shape_of(x.type)
    start = get_int(op.axis, -1) % len(shape)
    return [_normalize(e, x, start, get_float(op.epsilon, 1e-5),
                       (scale, broadcast_map(shape_of(scale.type), shape)),
                       (bias, broadcast_map(shape_of(bias.type), shape)))]


@lowers(C.InstanceNormOp, C.GroupNormOp)
def channel_norm(e: Emitter, op: C.ChannelNormOp, x: SSAValue, scale: SSAValue,
                 bias: SSAValue) -> list[SSAValue]:
    """Statistics per sample and group: with several channels per group, ``x`` is
    reshaped N x C x ... -> N x G x C/G x ... (and scale and bias C -> G x C/G) around
    the normalization so that a group's elements are its trailing dimensions."""
    t = tensor_of(x)
    shape = shape_of(t)
    groups = op.groups()
    per_group = shape[1] // groups
    if per_group > 1:
        element = t.get_element_type()
        view = reshape_to(e, x, TensorType(element, [shape[0], groups, per_group, *shape[2:]]))
        affine = TensorType(element, [groups, per_group])
        scale, bias = reshape_to(e, scale, affine), reshape_to(e, bias, affine)
    else:
        view = x
    rank = len(shape_of(view.type))
    channel = affine_map(rank, dims(rank)[1: 1 + len(shape_of(scale.type))])
    y = _normalize(e, view, 2, get_float(op.epsilon, 1e-5), (scale, channel), (bias, channel))
    return [reshape_to(e, y, t)]


@lowers(C.BatchNormOp)
def batch_norm(e: Emitter, op: C.BatchNormOp, x: SSAValue, scale: SSAValue, bias: SSAValue,
               mean: SSAValue, var: SSAValue) -> list[SSAValue]:
    """``x * inv + (bias - mean * inv)`` with ``inv = scale / sqrt(var + epsilon)``, the
    per-channel operands read along dimension 1."""
    rank = len(shape_of(x.type))
    channel = affine_map(rank, [dims(rank)[1]])
    epsilon = get_float(op.epsilon, 1e-5)

    def body(b: Body, a: Sequence[SSAValue]) -> list[SSAValue]:
        xv, s, beta, mu, v = a[:5]
        eps = b.fconst(epsilon, xv.type)
        inv = b.op(arith.DivfOp, s, b.op(math.SqrtOp, b.op(arith.AddfOp, v, eps)))
        shift = b.op(arith.SubfOp, beta, b.op(arith.MulfOp, mu, inv))
        return [b.op(arith.AddfOp, b.op(arith.MulfOp, xv, inv), shift)]

    return [_pointwise(e, x, [], (), body, [(v, channel) for v in (scale, bias, mean, var)])]


_COMBINE = {
    C.ReduceMaxOp: (arith.MaximumfOp, arith.MaxSIOp),
    C.ReduceMinOp: (arith.MinimumfOp, arith.MinSIOp),
}


@lowers(C.ReduceSumOp, C.ReduceMeanOp, C.ReduceMaxOp, C.ReduceMinOp, C.ReduceL2Op)
def reduce(e: Emitter, op: C.ReduceOp, x: SSAValue) -> list[SSAValue]:
    """One reduction generic into the result's shape; reduce_mean then divides by the
    element count and reduce_l2 (a sum of squares) takes the square root."""
    out = tensor_of(op.output)
    axes, keepdims = op.reduced_axes(), get_bool(op.keepdims, True)
    element = out.get_element_type()
    floating = is_float(element)
    if isinstance(op, C.ReduceL2Op) and not floating:
        raise LoweringError(f"{op.name}: integer inputs have no lowering")
    if type(op) in _COMBINE:
        kind = _COMBINE[type(op)][0 if floating else 1]
        init = _extreme(element, isinstance(op, C.ReduceMinOp))
        return [_reduce(e, [x], axes, keepdims, e.filled(out, init),
                        lambda b, a: [b.op(kind, a[0], a[1])])]
    if isinstance(op, C.ReduceL2Op):
        result = _reduce(e, [x], axes, keepdims, e.filled(out, 0.0),
                         lambda b, a: [b.op(arith.AddfOp, a[1], b.op(arith.MulfOp, a[0], a[0]))])
        return [e.map(out, [result], lambda b, a: [b.op(math.SqrtOp, a[0])])]
    result = _reduce(e, [x], axes, keepdims, e.filled(out, 0), lambda b, a: [_add(b, a[1], a[0])])
    if isinstance(op, C.ReduceSumOp):
        return [result]
    count = pymath.prod(shape_of(x.type)[i] for i in axes)

    def mean(b: Body, a: Sequence[SSAValue]) -> list[SSAValue]:
        if floating:
            return [b.op(arith.DivfOp, a[0], b.fconst(float(count), element))]
        return [b.op(arith.DivSIOp, a[0], b.iconst(count, element))]

    return [e.map(out, [result], mean)]


@lowers(C.ArgMaxOp)
def argmax(e: Emitter, op: C.ArgMaxOp, x: SSAValue) -> list[SSAValue]:
    """The maximum along ``axis`` (a reduction), then the least index holding it (a
    second reduction, `linalg.index` along the axis, starting from the axis' size)."""
    t, out = tensor_of(x), tensor_of(op.output)
    shape = shape_of(t)
    axes = (get_int(op.axis, 0) % len(shape),)
    keepdims = get_bool(op.keepdims, True)
    element = t.get_element_type()
    floating = is_float(element)
    top = _reduce(e, [x], axes, keepdims,
                  e.filled(_reduced_type(t, axes, keepdims), _extreme(element, False)),
                  lambda b, a: [b.op(arith.MaximumfOp if floating else arith.MaxSIOp,
                                     a[0], a[1])])

    def first(b: Body, a: Sequence[SSAValue]) -> list[SSAValue]:
        if floating:
            hit = b.op(arith.OrIOp, b.op(arith.CmpfOp, a[0], a[1], "oeq"),
                       b.op(arith.CmpfOp, a[0], a[0], "uno"))
        else:
            hit = b.op(arith.CmpiOp, a[0], a[1], "eq")
        index = b.op(arith.IndexCastOp, b.index(axes[0]), i64)
        candidate = b.op(arith.SelectOp, hit, index, b.iconst(shape[axes[0]], i64))
        return [b.op(arith.MinSIOp, a[2], candidate)]

    return [_reduce(e, [x, top], axes, keepdims, e.filled(out, shape[axes[0]]), first)]
