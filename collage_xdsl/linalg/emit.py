"""Building upstream-dialect IR in place of one collage op: the `Emitter` the per-op
lowerings write with, and the registry they join.

    @lowers(C.ReluOp)
    def relu(e: Emitter, op: C.ReluOp, x: SSAValue) -> list[SSAValue]:
        return [e.map(op.output.type, [x],
                      lambda b, a: [b.op(arith.MaximumfOp, a[0], b.fconst(0.0, f32))])]

An emitter inserts before the op it lowers; what it builds is on tensors only
(`tensor.empty` as the destination of every `linalg` op), so the result stays in value
semantics and needs no bufferization before `iree-opt` or `mlir-opt` reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import FillOp, GenericOp, IndexOp, YieldOp
from xdsl.dialects.tensor import CollapseShapeOp, ExpandShapeOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap
from xdsl.rewriter import InsertPoint

from collage_xdsl.errors import CollageError
from collage_xdsl.ir.tensors import dense_attr, shape_of, tensor_type
from collage_xdsl.linalg.resources import weight_resource

INLINE_ELEMENTS = 16
"""Constants up to this many elements are printed inline (`dense<...>`); larger ones
are `dense_resource` blobs in the module's `dialect_resources` section."""


class LoweringError(CollageError):
    """A collage op that `collage-lower-linalg` cannot lower (its name and the reason)."""


Lowering = Callable[..., list[SSAValue]]
"""``lower(emitter, op, *operands) -> results``: values that replace the op's results."""

LOWERINGS: dict[type[Operation], Lowering] = {}
"""Per collage op class, its lowering (filled by the `@lowers` modules)."""


def lowers(*kinds: type[Operation]) -> Callable[[Lowering], Lowering]:
    """Register the decorated function as the lowering of the op classes ``kinds``."""

    def register(lower: Lowering) -> Lowering:
        for kind in kinds:
            LOWERINGS[kind] = lower
        return lower

    return register


def dims(n: int) -> list[AffineExpr]:
    """The loop dimensions ``d0 .. d(n-1)``."""
    return [AffineDimExpr(i) for i in range(n)]


def affine_map(n_dims: int, results: Sequence[AffineExpr | int]) -> AffineMapAttr:
    """``affine_map<(d0 .. d(n-1)) -> (results)>``; an int result is a constant."""
    exprs = [AffineExpr.constant(r) if isinstance(r, int) else r for r in results]
    return AffineMapAttr(AffineMap(n_dims, 0, tuple(exprs)))


def broadcast_exprs(shape: Sequence[int], out_shape: Sequence[int],
                    loops: Sequence[AffineExpr]) -> list[AffineExpr | int]:
    """Where a ``shape`` operand numpy-broadcast to ``out_shape`` (whose dimensions the
    ``loops`` iterate) is read: leading dimensions dropped, size-1 dimensions at 0."""
    offset = len(out_shape) - len(shape)
    return [0 if size == 1 and out_shape[offset + i] != 1 else loops[offset + i]
            for i, size in enumerate(shape)]


def broadcast_map(shape: Sequence[int], out_shape: Sequence[int]) -> AffineMapAttr:
    """The map reading a ``shape`` operand numpy-broadcast to ``out_shape``."""
    rank = len(out_shape)
    return affine_map(rank, broadcast_exprs(shape, out_shape, dims(rank)))


def tensor_of(value: SSAValue) -> TensorType:
    """``value``'s type, a tensor (every value a lowering reads or writes is one)."""
    t = value.type
    assert isinstance(t, TensorType)
    return t


def reassociation(groups: Sequence[Sequence[int]]) -> ArrayAttr:
    """A `tensor.collapse_shape` / `expand_shape` reassociation: per dimension of the
    lower-rank side, the dimensions of the higher-rank side it gathers."""
    return ArrayAttr([ArrayAttr([IntegerAttr(i, i64) for i in g]) for g in groups])


PARALLEL = IteratorTypeAttr.parallel()
REDUCTION = IteratorTypeAttr.reduction()


class Body(Builder):
    """The builder of a `linalg.generic` body: scalar arith / math ops on its arguments."""

    def fconst(self, value: float, t: Attribute) -> SSAValue:
        return self.insert(arith.ConstantOp(FloatAttr(value, t))).result

    def iconst(self, value: int, t: Attribute) -> SSAValue:
        return self.insert(arith.ConstantOp(IntegerAttr(value, t))).result

    def index(self, dim: int) -> SSAValue:
        """The current iteration's index along loop ``dim`` (`linalg.index`)."""
        return self.insert(IndexOp(dim)).result

    def op(self, kind: type[Operation], *operands: SSAValue, **kw) -> SSAValue:
        """``kind(*operands, **kw)`` inserted, its (only) result."""
        return self.insert(kind(*operands, **kw)).results[0]


BodyFn = Callable[[Body, Sequence[SSAValue]], Sequence[SSAValue]]


class Emitter:
    """Inserts upstream ops before ``op``; `collage_xdsl.linalg.lower` replaces ``op``'s
    results with the values a lowering returns."""

    def __init__(self, op: Operation):
        self.builder = Builder(InsertPoint.before(op))

    def insert(self, op: Operation) -> Operation:
        return self.builder.insert(op)

    def empty(self, t: TensorType) -> SSAValue:
        """``tensor.empty() : t``, the destination of a linalg op."""
        return self.insert(tensor.EmptyOp([], t)).tensor

    def scalar(self, value: float | int, element: Attribute) -> SSAValue:
        attr = (IntegerAttr(int(value), element) if isinstance(element, IntegerType | IndexType)
                else FloatAttr(float(value), element))
        return self.insert(arith.ConstantOp(attr)).result

    def filled(self, t: TensorType, value: float | int) -> SSAValue:
        """A tensor of type ``t`` holding ``value`` everywhere (`linalg.fill`)."""
        fill = FillOp((self.scalar(value, t.get_element_type()),), (self.empty(t),), (t,))
        return self.insert(fill).results[0]

    def constant(self, array: np.ndarray, key: str | None = None) -> SSAValue:
        """``array`` as an `arith.constant`: inline when small, else a `dense_resource`
        blob named after ``key`` (a weight's key) or the array's contents."""
        array = np.asarray(array)
        if array.size <= INLINE_ELEMENTS:
            value: Attribute = dense_attr(array)
        else:
            t = tensor_type(array.shape, array.dtype)
            value = DenseResourceAttr.from_params(weight_resource(array, key), t)
        assert isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr)
        return self.insert(arith.ConstantOp(value, value.type)).result

    def collapse(self, x: SSAValue, groups: Sequence[Sequence[int]], out: TensorType
                 ) -> SSAValue:
        """``x`` as ``out`` by `tensor.collapse_shape` with the reassociation ``groups``."""
        return self.insert(CollapseShapeOp(
            operands=[x], result_types=[out],
            properties={"reassociation": reassociation(groups)})).results[0]

    def expand(self, x: SSAValue, groups: Sequence[Sequence[int]], out: TensorType
               ) -> SSAValue:
        """``x`` as ``out`` by `tensor.expand_shape` with the reassociation ``groups``."""
        return self.insert(ExpandShapeOp(x, [], reassociation(groups), shape_of(out),
                                         out)).results[0]

    def generic(
        self,
        inputs: Sequence[SSAValue],
        out: TensorType | SSAValue,
        maps: Sequence[AffineMapAttr],
        iterators: Sequence[IteratorTypeAttr],
        body: BodyFn,
    ) -> SSAValue:
        """A `linalg.generic` over ``inputs`` into ``out`` (a type: a new `tensor.empty`;
        a value: an initialised accumulator); ``body(b, args)`` returns the yielded scalar.
        ``maps`` has one map per input, then the output's."""
        init = self.empty(out) if isinstance(out, TensorType) else out
        out_type = tensor_of(init)
        elements = [_element(v.type) for v in (*inputs, init)]
        block = Block(arg_types=elements)
        b = Body(InsertPoint.at_end(block))
        results = body(b, block.args)
        b.insert(YieldOp(*results))
        op = GenericOp(list(inputs), [init], Region(block), maps, iterators, [out_type])
        return self.insert(op).results[0]

    def map(self, out: TensorType, inputs: Sequence[SSAValue], body: BodyFn) -> SSAValue:
        """An element-wise `linalg.generic`: each input numpy-broadcast to ``out``."""
        shape = shape_of(out)
        maps = [broadcast_map(shape_of(v.type), shape) for v in inputs]
        maps.append(affine_map(len(shape), dims(len(shape))))
        return self.generic(inputs, out, maps, [PARALLEL] * len(shape),
                            lambda b, args: body(b, args[: len(inputs)]))


def _element(t: Attribute) -> Attribute:
    return t.get_element_type() if isinstance(t, TensorType) else t


def is_float(t: Attribute) -> bool:
    """Whether ``t`` (a tensor or scalar type) holds floating-point numbers."""
    return isinstance(_element(t), AnyFloat)

