"""Element-wise and broadcasting collage ops as one parallel `linalg.generic` each, with
the scalar computation in `arith` / `math`.

    %s = collage.add %x, %b : (tensor<1x8x4x4xf32>, tensor<8x1x1xf32>) -> tensor<1x8x4x4xf32>
==>
    %0 = tensor.empty() : tensor<1x8x4x4xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>,
                                          affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>,
                                          affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                         iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
           ins(%x, %b : ...) outs(%0 : tensor<1x8x4x4xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %r = arith.addf %a, %c : f32
      linalg.yield %r : f32
    } -> tensor<1x8x4x4xf32>

Integer operands use the signed integer ops; a comparison yields i1. Each formula is the
reference interpreter's (`collage_xdsl.ir.interpreter`), so the two agree op by op.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import AnyFloat, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue

from collage_xdsl.dialects import collage as C
from collage_xdsl.dialects.collage import get_float
from collage_xdsl.linalg.emit import (
    Body,
    Emitter,
    LoweringError,
    lowers,
    tensor_of,
)

Scalar = Callable[[Body, Sequence[SSAValue], Attribute], SSAValue]
"""The scalar body: the builder, the element values, the element type."""


def _elementwise(e: Emitter, op: Operation, inputs: Sequence[SSAValue], scalar: Scalar
                 ) -> list[SSAValue]:
    out = tensor_of(op.results[0])
    element = inputs[0].type.get_element_type()
    return [e.map(out, inputs, lambda b, args: [scalar(b, args, element)])]


def _unary(fn: Callable[[Body, SSAValue, Attribute], SSAValue], *kinds: type[Operation]):
    @lowers(*kinds)
    def lower(e: Emitter, op: Operation, x: SSAValue) -> list[SSAValue]:
        return _elementwise(e, op, [x], lambda b, a, t: fn(b, a[0], t))

    return lower


def _float_or_int(float_op: type[Operation], int_op: type[Operation]):
    def scalar(b: Body, a: Sequence[SSAValue], t: Attribute) -> SSAValue:
        return b.op(float_op if isinstance(t, AnyFloat) else int_op, a[0], a[1])

    return scalar


_BINARY: dict[type[Operation], Scalar] = {
    C.AddOp: _float_or_int(arith.AddfOp, arith.AddiOp),
    C.SubOp: _float_or_int(arith.SubfOp, arith.SubiOp),
    C.MulOp: _float_or_int(arith.MulfOp, arith.MuliOp),
    C.DivOp: _float_or_int(arith.DivfOp, arith.DivSIOp),
    C.MaximumOp: _float_or_int(arith.MaximumfOp, arith.MaxSIOp),
    C.MinimumOp: _float_or_int(arith.MinimumfOp, arith.MinSIOp),
    C.PowOp: lambda b, a, t: b.op(math.PowFOp, a[0], a[1]),
}


@lowers(*_BINARY)
def binary(e: Emitter, op: Operation, x: SSAValue, y: SSAValue) -> list[SSAValue]:
    if type(op) is C.PowOp and not isinstance(x.type.get_element_type(), AnyFloat):
        raise LoweringError(f"{op.name}: integer powers have no lowering")
    return _elementwise(e, op, [x, y], _BINARY[type(op)])


_PREDICATES = {C.EqualOp: ("oeq", "eq"), C.LessOp: ("olt", "slt"), C.GreaterOp: ("ogt", "sgt")}


@lowers(*_PREDICATES)
def compare(e: Emitter, op: Operation, x: SSAValue, y: SSAValue) -> list[SSAValue]:
    fp, integer = _PREDICATES[type(op)]

    def scalar(b: Body, a: Sequence[SSAValue], t: Attribute) -> SSAValue:
        if isinstance(t, AnyFloat):
            return b.op(arith.CmpfOp, a[0], a[1], fp)
        return b.op(arith.CmpiOp, a[0], a[1], integer)

    return _elementwise(e, op, [x, y], scalar)


@lowers(C.WhereOp)
def where(e: Emitter, op: C.WhereOp, cond: SSAValue, x: SSAValue, y: SSAValue
          ) -> list[SSAValue]:
    out = tensor_of(op.results[0])
    return [e.map(out, [cond, x, y], lambda b, a: [b.op(arith.SelectOp, a[0], a[1], a[2])])]


def _relu(b: Body, x: SSAValue, t: Attribute) -> SSAValue:
    if isinstance(t, AnyFloat):
        return b.op(arith.MaximumfOp, x, b.fconst(0.0, t))
    return b.op(arith.MaxSIOp, x, b.iconst(0, t))


def _neg(b: Body, x: SSAValue, t: Attribute) -> SSAValue:
    if isinstance(t, AnyFloat):
        return b.op(arith.NegfOp, x)
    return b.op(arith.SubiOp, b.iconst(0, t), x)


def _abs(b: Body, x: SSAValue, t: Attribute) -> SSAValue:
    if isinstance(t, AnyFloat):
        return b.op(math.AbsFOp, x)
    return b.op(math.AbsIOp, x)


def _sigmoid(b: Body, x: SSAValue, t: Attribute) -> SSAValue:
    """``1 / (1 + exp(-x))``."""
    one = b.fconst(1.0, t)
    return b.op(arith.DivfOp, one, b.op(arith.AddfOp, one, b.op(math.ExpOp, b.op(arith.NegfOp, x))))


def _softplus(b: Body, x: SSAValue, t: Attribute) -> SSAValue:
    """``max(x, 0) + log1p(exp(-|x|))``, which does not overflow."""
    pos = b.op(arith.MaximumfOp, x, b.fconst(0.0, t))
    tail = b.op(math.Log1pOp, b.op(math.ExpOp, b.op(arith.NegfOp, b.op(math.AbsFOp, x))))
    return b.op(arith.AddfOp, pos, tail)


def _hard_sigmoid(b: Body, x: SSAValue, t: Attribute, alpha: float, beta: float) -> SSAValue:
    """``clip(alpha * x + beta, 0, 1)``."""
    y = b.op(arith.AddfOp, b.op(arith.MulfOp, x, b.fconst(alpha, t)), b.fconst(beta, t))
    return b.op(arith.MinimumfOp, b.op(arith.MaximumfOp, y, b.fconst(0.0, t)), b.fconst(1.0, t))


def _elu(b: Body, x: SSAValue, t: Attribute, alpha: float) -> SSAValue:
    """``x if x > 0 else alpha * expm1(x)``."""
    neg = b.op(arith.MulfOp, b.fconst(alpha, t), b.op(math.ExpM1Op, x))
    return b.op(arith.SelectOp, b.op(arith.CmpfOp, x, b.fconst(0.0, t), "ogt"), x, neg)


def _gelu(b: Body, x: SSAValue, t: Attribute, tanh: bool) -> SSAValue:
    """``x/2 (1 + erf(x/sqrt 2))``, or its tanh approximation."""
    if tanh:
        cube = b.op(arith.MulfOp, b.op(arith.MulfOp, x, x), x)
        inner = b.op(arith.AddfOp, x, b.op(arith.MulfOp, b.fconst(0.044715, t), cube))
        core = b.op(math.TanhOp, b.op(arith.MulfOp, b.fconst(pymath.sqrt(2 / pymath.pi), t), inner))
    else:
        core = b.op(math.ErfOp, b.op(arith.MulfOp, x, b.fconst(1 / pymath.sqrt(2), t)))
    half_x = b.op(arith.MulfOp, x, b.fconst(0.5, t))
    return b.op(arith.MulfOp, half_x, b.op(arith.AddfOp, b.fconst(1.0, t), core))


_unary(_relu, C.ReluOp)
_unary(_neg, C.NegOp)
_unary(_abs, C.AbsOp)
_unary(_sigmoid, C.SigmoidOp)
_unary(_softplus, C.SoftplusOp)
_unary(lambda b, x, t: b.op(math.TanhOp, x), C.TanhOp)
_unary(lambda b, x, t: b.op(math.ErfOp, x), C.ErfOp)
_unary(lambda b, x, t: b.op(math.ExpOp, x), C.ExpOp)
_unary(lambda b, x, t: b.op(math.LogOp, x), C.LogOp)
_unary(lambda b, x, t: b.op(math.SqrtOp, x), C.SqrtOp)
_unary(lambda b, x, t: b.op(arith.DivfOp, b.fconst(1.0, t), x), C.ReciprocalOp)
_unary(lambda b, x, t: b.op(arith.MulfOp, x, _hard_sigmoid(b, x, t, 1 / 6, 0.5)), C.HardSwishOp)
_unary(lambda b, x, t: b.op(arith.MulfOp, x, b.op(math.TanhOp, _softplus(b, x, t))), C.MishOp)
_unary(lambda b, x, t: b.op(arith.XOrIOp, x, b.iconst(1, t)), C.NotOp)


@lowers(C.LeakyReluOp, C.HardSigmoidOp, C.EluOp, C.SeluOp, C.GeluOp, C.ClipOp)
def parametric(e: Emitter, op: Operation, x: SSAValue) -> list[SSAValue]:
    """The activations with attributes, read once here."""
    if isinstance(op, C.LeakyReluOp):
        alpha = get_float(op.alpha, 0.01)

        def scalar(b: Body, a: Sequence[SSAValue], t: Attribute) -> SSAValue:
            scaled = b.op(arith.MulfOp, a[0], b.fconst(alpha, t))
            ge = b.op(arith.CmpfOp, a[0], b.fconst(0.0, t), "oge")
            return b.op(arith.SelectOp, ge, a[0], scaled)
    elif isinstance(op, C.HardSigmoidOp):
        alpha, beta = get_float(op.alpha, 0.2), get_float(op.beta, 0.5)

        def scalar(b: Body, a: Sequence[SSAValue], t: Attribute) -> SSAValue:
            return _hard_sigmoid(b, a[0], t, alpha, beta)
    elif isinstance(op, C.EluOp | C.SeluOp):
        alpha = get_float(op.alpha, 1.0 if isinstance(op, C.EluOp) else 1.6733)
        gamma = get_float(op.gamma, 1.0507) if isinstance(op, C.SeluOp) else 1.0

        def scalar(b: Body, a: Sequence[SSAValue], t: Attribute) -> SSAValue:
            return b.op(arith.MulfOp, b.fconst(gamma, t), _elu(b, a[0], t, alpha))
    elif isinstance(op, C.GeluOp):
        tanh = op.approximate is not None and op.approximate.data == "tanh"

        def scalar(b: Body, a: Sequence[SSAValue], t: Attribute) -> SSAValue:
            return _gelu(b, a[0], t, tanh)
    else:
        assert isinstance(op, C.ClipOp)
        bounds = (None if op.min is None else get_float(op.min, 0.0),
                  None if op.max is None else get_float(op.max, 0.0))

        def scalar(b: Body, a: Sequence[SSAValue], t: Attribute) -> SSAValue:
            y = a[0]
            if bounds[0] is not None:
                y = b.op(arith.MaximumfOp, y, b.fconst(bounds[0], t))
            if bounds[1] is not None:
                y = b.op(arith.MinimumfOp, y, b.fconst(bounds[1], t))
            return y
    return _elementwise(e, op, [x], scalar)


@lowers(C.PReluOp)
def prelu(e: Emitter, op: C.PReluOp, x: SSAValue, slope: SSAValue) -> list[SSAValue]:
    def scalar(b: Body, a: Sequence[SSAValue], t: Attribute) -> SSAValue:
        negative = b.op(arith.CmpfOp, a[0], b.fconst(0.0, t), "olt")
        return b.op(arith.SelectOp, negative, b.op(arith.MulfOp, a[1], a[0]), a[0])

    return _elementwise(e, op, [x, slope], scalar)


def _convert(b: Body, x: SSAValue, source: Attribute, target: Attribute) -> SSAValue:
    """A scalar of type ``source`` as ``target`` (ONNX Cast: floats truncate toward zero
    into integers; anything non-zero is true)."""
    if source == target:
        return x
    if isinstance(target, IntegerType) and target.width.data == 1:
        zero = b.fconst(0.0, source) if isinstance(source, AnyFloat) else b.iconst(0, source)
        return (b.op(arith.CmpfOp, x, zero, "une") if isinstance(source, AnyFloat)
                else b.op(arith.CmpiOp, x, zero, "ne"))
    if isinstance(source, AnyFloat) and isinstance(target, AnyFloat):
        wider = target.bitwidth > source.bitwidth
        return b.op(arith.ExtFOp if wider else arith.TruncFOp, x, target)
    if isinstance(source, AnyFloat):
        return b.op(arith.FPToSIOp, x, target)
    assert isinstance(source, IntegerType)
    unsigned = source.width.data == 1
    if isinstance(target, AnyFloat):
        return b.op(arith.UIToFPOp if unsigned else arith.SIToFPOp, x, target)
    assert isinstance(target, IntegerType)
    if target.width.data > source.width.data:
        return b.op(arith.ExtUIOp if unsigned else arith.ExtSIOp, x, target)
    return b.op(arith.TruncIOp, x, target)


@lowers(C.CastOp)
def cast(e: Emitter, op: C.CastOp, x: SSAValue) -> list[SSAValue]:
    out = tensor_of(op.results[0])
    source, target = x.type.get_element_type(), out.get_element_type()
    return [e.map(out, [x], lambda b, a: [_convert(b, a[0], source, target)])]
