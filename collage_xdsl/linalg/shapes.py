"""Constants and the data-movement collage ops as `arith.constant` and `tensor` ops
(`tensor.collapse_shape` / `expand_shape`, `extract_slice`, `concat`, `pad`) or
`linalg.transpose` / index-reading generics.

    %w = collage.constant #collage.weight<"f84f..."> : tensor<256x10xf32>
    %r = collage.reshape %x : tensor<1x16x4x4xf32> -> tensor<1x256xf32>
==>
    %w = arith.constant dense_resource<collage_w_f84f...> : tensor<256x10xf32>
    %f = tensor.collapse_shape %x [[0, 1, 2, 3]] : tensor<1x16x4x4xf32> into tensor<256xf32>
    %r = tensor.expand_shape %f [[0, 1]] output_shape [1, 256]
             : tensor<256xf32> into tensor<1x256xf32>

    %s = collage.slice %x {starts = array<i64: 1>, ends = array<i64: 7>, axes = array<i64: 1>,
                           steps = array<i64: 2>} : tensor<4x8xf32> -> tensor<4x3xf32>
    %g = collage.gather %w, %i {axis = 0 : i64} : (tensor<16x4xf32>, tensor<3xi64>)
                                                   -> tensor<3x4xf32>
==>
    %s = tensor.extract_slice %x[0, 1] [4, 3] [1, 2] : tensor<4x8xf32> to tensor<4x3xf32>
    %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>,
                                          affine_map<(d0, d1) -> (d0, d1)>], ...}
           ins(%i : tensor<3xi64>) outs(%0 : tensor<3x4xf32>) {
    ^bb0(%k: i64, %o: f32):
      %r = arith.index_cast %k : i64 to index     // wrapped by 16 when negative
      %c = linalg.index 1 : index
      %v = tensor.extract %w[%r, %c] : tensor<16x4xf32>
      linalg.yield %v : f32
    } -> tensor<3x4xf32>

A transpose is a `linalg.transpose`, a concat a `tensor.concat`, a split one
`extract_slice` per result; a slice with a negative step is a generic reading the input
(`tensor.extract`) at ``start + step * d``; expand and tile are generics whose input maps
broadcast (size-1 dimensions read at 0) or wrap (``d mod size``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IndexType, TensorType, TupleType
from xdsl.dialects.linalg.ops import TransposeOp
from xdsl.ir import SSAValue

from collage_xdsl.dialects import collage as C
from collage_xdsl.dialects.collage import get_int, get_ints, ints
from collage_xdsl.ir.tensors import constant_array, shape_of
from collage_xdsl.linalg.emit import (
    PARALLEL,
    Body,
    Emitter,
    LoweringError,
    affine_map,
    dims,
    lowers,
    tensor_of,
)


@lowers(C.ConstantOp)
def constant(e: Emitter, op: C.ConstantOp) -> list[SSAValue]:
    key = op.value.key.data if isinstance(op.value, C.WeightAttr) else None
    return [e.constant(constant_array(op), key)]


def reshape_to(e: Emitter, x: SSAValue, out: TensorType) -> SSAValue:
    """``x`` with the shape of ``out``: collapsed to 1-D, then expanded (either step is
    left out where it would be the identity)."""
    source = tensor_of(x)
    if shape_of(source) == shape_of(out):
        return x
    size = math.prod(shape_of(out))
    flat = TensorType(out.get_element_type(), [size])
    if len(shape_of(source)) != 1:
        x = e.collapse(x, [range(len(shape_of(source)))], flat)
    if len(shape_of(out)) == 1:
        return x
    return e.expand(x, [range(len(shape_of(out)))], out)


@lowers(C.ReshapeOp)
def reshape(e: Emitter, op: C.ReshapeOp, x: SSAValue) -> list[SSAValue]:
    out = tensor_of(op.results[0])
    return [reshape_to(e, x, out)]


@lowers(C.TransposeOp)
def transpose(e: Emitter, op: C.TransposeOp, x: SSAValue) -> list[SSAValue]:
    out = tensor_of(op.output)
    return [e.insert(TransposeOp(x, e.empty(out), ints(get_ints(op.perm)), out)).results[0]]


@lowers(C.ConcatOp)
def concat(e: Emitter, op: C.ConcatOp, *inputs: SSAValue) -> list[SSAValue]:
    if any(isinstance(x.type, TupleType) for x in inputs):
        raise LoweringError(f"{op.name}: a tuple operand has no lowering")
    out = tensor_of(op.output)
    axis = get_int(op.axis, 0) % len(shape_of(out))
    return [e.insert(tensor.ConcatOp(list(inputs), axis, out)).result]


def _extract(e: Emitter, x: SSAValue, offsets: Sequence[int], sizes: Sequence[int],
             strides: Sequence[int]) -> SSAValue:
    """``tensor.extract_slice`` of ``x``; ``x`` itself when the slice is all of it."""
    if (not any(offsets) and all(s == 1 for s in strides)
            and list(sizes) == list(shape_of(tensor_of(x)))):
        return x
    return e.insert(tensor.ExtractSliceOp.from_static_parameters(
        x, offsets, sizes, strides)).results[0]


@lowers(C.SplitOp)
def split(e: Emitter, op: C.SplitOp, x: SSAValue) -> list[SSAValue]:
    shape = shape_of(tensor_of(x))
    axis = get_int(op.axis, 0) % len(shape)
    results, start = [], 0
    for result in op.outputs:
        sizes = shape_of(tensor_of(result))
        offsets = [start if i == axis else 0 for i in range(len(shape))]
        results.append(_extract(e, x, offsets, sizes, [1] * len(shape)))
        start += sizes[axis]
    return results


@lowers(C.SliceOp)
def slice_(e: Emitter, op: C.SliceOp, x: SSAValue) -> list[SSAValue]:
    """A strided `extract_slice` when every step is positive, else a generic reading ``x``
    (`tensor.extract`) at ``start + step * d`` along each axis."""
    shape = shape_of(tensor_of(x))
    out = tensor_of(op.output)
    sizes = shape_of(out)
    slices = C.SliceOp.slices(shape, get_ints(op.starts), get_ints(op.ends),
                              get_ints(op.axes), get_ints(op.steps))
    starts, steps = zip(*(s.indices(n)[::2] for s, n in zip(slices, shape)), strict=True)
    if all(step > 0 for step in steps):
        offsets = [lo if size else 0 for lo, size in zip(starts, sizes)]
        return [_extract(e, x, offsets, sizes, steps)]
    rank = len(sizes)

    def body(b: Body, args: Sequence[SSAValue]) -> list[SSAValue]:
        at = [b.op(arith.AddiOp, b.iconst(lo, IndexType()),
                   b.op(arith.MuliOp, b.index(a), b.iconst(step, IndexType())))
              for a, (lo, step) in enumerate(zip(starts, steps))]
        return [b.op(tensor.ExtractOp, x, at, out.get_element_type())]

    return [e.generic([], out, [affine_map(rank, dims(rank))], [PARALLEL] * rank, body)]


@lowers(C.GatherOp)
def gather(e: Emitter, op: C.GatherOp, data: SSAValue, indices: SSAValue) -> list[SSAValue]:
    """A generic over the result reading each index from ``indices`` and the element at
    it from ``data`` (`tensor.extract`); a negative index counts from the axis' end."""
    shape = shape_of(tensor_of(data))
    axis = get_int(op.axis, 0) % len(shape)
    index_rank = len(shape_of(tensor_of(indices)))
    out = tensor_of(op.output)
    rank = len(shape_of(out))
    loops = dims(rank)
    maps = [affine_map(rank, loops[axis: axis + index_rank]), affine_map(rank, loops)]

    def body(b: Body, args: Sequence[SSAValue]) -> list[SSAValue]:
        k = b.op(arith.IndexCastOp, args[0], IndexType())
        negative = b.op(arith.CmpiOp, k, b.iconst(0, IndexType()), "slt")
        wrapped = b.op(arith.AddiOp, k, b.iconst(shape[axis], IndexType()))
        k = b.op(arith.SelectOp, negative, wrapped, k)
        at = ([b.index(d) for d in range(axis)] + [k]
              + [b.index(d) for d in range(axis + index_rank, rank)])
        return [b.op(tensor.ExtractOp, data, at, out.get_element_type())]

    return [e.generic([indices], out, maps, [PARALLEL] * rank, body)]


@lowers(C.ExpandOp)
def expand(e: Emitter, op: C.ExpandOp, x: SSAValue) -> list[SSAValue]:
    return [e.map(tensor_of(op.output), [x], lambda b, args: [args[0]])]


@lowers(C.TileOp)
def tile(e: Emitter, op: C.TileOp, x: SSAValue) -> list[SSAValue]:
    """A generic reading ``x`` at ``d mod size`` along each repeated axis."""
    shape = shape_of(tensor_of(x))
    out = tensor_of(op.output)
    if 0 in shape_of(out):
        return [e.empty(out)]
    rank = len(shape)
    loops = dims(rank)
    read = [d if r == 1 else d % size for d, size, r in zip(loops, shape, get_ints(op.repeats))]
    maps = [affine_map(rank, read), affine_map(rank, loops)]
    return [e.generic([x], out, maps, [PARALLEL] * rank, lambda b, args: [args[0]])]
