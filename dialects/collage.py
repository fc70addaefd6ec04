"""The `collage` dialect: graph-level DNN operators on builtin tensor types.

Every operator declares its `OpPatternKind` (the fusion rules read it) and infers
its result types from its operands and attributes; the verifier checks the
declared result types against that inference, so a bad shape or attribute is a
diagnostic on the op.

    %w = collage.constant #collage.weight<"9f3c..."> : tensor<64x3x7x7xf32>
    %c = collage.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>}
             : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x112x112xf32>
    %r = collage.relu %c : tensor<1x64x112x112xf32>
"""

from __future__ import annotations

import math
from abc import ABC
from collections.abc import Sequence
from enum import IntEnum
from functools import cache
from importlib.metadata import entry_points
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    TupleType,
    f32,
    f64,
    i1,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, Region, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    attr_def,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import ConstantLike, HasParent, IsolatedFromAbove, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException


class OpPatternKind(IntEnum):
    """TVM's operator pattern kinds, ordered so that `max` gives a sub-graph's kind."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_EWISE_FUSABLE = 4
    TUPLE = 7
    OPAQUE = 8


# ---------------------------------------------------------------------------
# Attributes
# ---------------------------------------------------------------------------


@irdl_attr_definition
class WeightAttr(ParametrizedAttribute):
    """A large constant kept by reference in the weight store (see `collage_xdsl.ir.tensors`)."""

    name = "collage.weight"
    key: StringAttr

    def __init__(self, key: str | StringAttr):
        super().__init__(StringAttr(key) if isinstance(key, str) else key)


def ints(values: Sequence[int]) -> DenseArrayBase:
    """An `array<i64: ...>` attribute."""
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


def get_ints(attr: Attribute | None, default: Sequence[int] = ()) -> tuple[int, ...]:
    if attr is None:
        return tuple(default)
    assert isinstance(attr, DenseArrayBase)
    return tuple(int(v) for v in attr.get_values())


def get_float(attr: Attribute | None, default: float) -> float:
    if attr is None:
        return default
    assert isinstance(attr, FloatAttr)
    return float(attr.value.data)


def get_int(attr: Attribute | None, default: int) -> int:
    if attr is None:
        return default
    assert isinstance(attr, IntegerAttr)
    return int(attr.value.data)


def get_bool(attr: Attribute | None, default: bool) -> bool:
    return bool(get_int(attr, int(default)))


# ---------------------------------------------------------------------------
# Shape helpers
# ---------------------------------------------------------------------------


def _tensor(t: Attribute, what: str) -> TensorType:
    if not isinstance(t, TensorType):
        raise VerifyException(f"{what} must be a tensor, got {t}")
    return t


def _shape(t: Attribute, what: str = "operand") -> tuple[int, ...]:
    return tuple(_tensor(t, what).get_shape())


def _elt(t: Attribute) -> Attribute:
    return _tensor(t, "operand").get_element_type()


def _axis(axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < max(rank, 1):
        raise VerifyException(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def _broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise VerifyException(
            "operand shapes " + ", ".join(str(list(s)) for s in shapes) + " do not broadcast"
        ) from None


def _broadcasts_to(src: tuple[int, ...], dst: tuple[int, ...]) -> bool:
    try:
        return tuple(np.broadcast_shapes(src, dst)) == tuple(dst)
    except ValueError:
        return False


def _same_elt(types: Sequence[Attribute]) -> Attribute:
    elts = list(dict.fromkeys(_elt(t) for t in types))  # in operand order: a stable message
    if len(elts) != 1:
        raise VerifyException(
            "operands must have one element type, got " + ", ".join(map(str, elts))
        )
    return elts[0]


def _pool_out(size: int, k: int, s: int, p0: int, p1: int, d: int, ceil: bool) -> int:
    span = size + p0 + p1 - d * (k - 1) - 1
    out = (math.ceil(span / s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + p0:
        out -= 1
    if out < 1:
        raise VerifyException(f"window {k} (dilation {d}) does not fit input size {size}")
    return out


# ---------------------------------------------------------------------------
# Operation bases
# ---------------------------------------------------------------------------


class GraphOp(IRDLOperation, ABC):
    """A graph-level operator: has a pattern kind and infers its result types."""

    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.OPAQUE

    def infer_result_types(self) -> list[Attribute]:
        """The result types implied by operand types and attributes (raises VerifyException)."""
        raise NotImplementedError

    def verify_(self) -> None:
        expected = self.infer_result_types()
        actual = [r.type for r in self.results]
        if expected != actual:
            raise VerifyException(
                f"result types {', '.join(map(str, actual))} do not match the inferred "
                f"{', '.join(map(str, expected))}"
            )


class UnaryOp(GraphOp, ABC):
    """`%r = collage.relu %x : tensor<...>` — result has the operand's type."""

    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.ELEMWISE
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    output = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input)"

    def __init__(self, input: SSAValue, attributes: dict[str, Attribute] | None = None):
        super().__init__(operands=[input], result_types=[input.type], attributes=attributes)

    def infer_result_types(self) -> list[Attribute]:
        _tensor(self.input.type, "input")
        return [self.input.type]


class FloatUnaryOp(UnaryOp, ABC):
    def infer_result_types(self) -> list[Attribute]:
        if not isinstance(_elt(self.input.type), AnyFloat):
            raise VerifyException(f"{self.name} needs a floating-point operand")
        return [self.input.type]


class BinaryOp(GraphOp, ABC):
    """`%r = collage.add %a, %b : (tensor<...>, tensor<...>) -> tensor<...>` (numpy broadcast)."""

    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.BROADCAST
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=self.infer([lhs.type, rhs.type]))

    @classmethod
    def result_element(cls, elt: Attribute) -> Attribute:
        return elt

    @classmethod
    def infer(cls, types: Sequence[Attribute]) -> list[Attribute]:
        elt = _same_elt(types)
        return [TensorType(cls.result_element(elt), _broadcast(*map(_shape, types)))]

    def infer_result_types(self) -> list[Attribute]:
        return self.infer([self.lhs.type, self.rhs.type])


class CompareOp(BinaryOp, ABC):
    @classmethod
    def result_element(cls, elt: Attribute) -> Attribute:
        return i1


class ReduceOp(GraphOp, ABC):
    """`collage.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true}`; no axes = all."""

    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.COMM_REDUCE
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axes = opt_attr_def(DenseArrayBase)
    keepdims = opt_attr_def(BoolAttr)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, axes: Sequence[int] | None, keepdims: bool):
        attrs: dict[str, Attribute] = {"keepdims": IntegerAttr(int(keepdims), i1)}
        if axes is not None:
            attrs["axes"] = ints(axes)
        shape = _shape(input.type)
        out = self._reduce_shape(shape, axes, keepdims)
        super().__init__(
            operands=[input], result_types=[TensorType(_elt(input.type), out)], attributes=attrs
        )

    @staticmethod
    def _reduce_shape(
        shape: tuple[int, ...], axes: Sequence[int] | None, keepdims: bool
    ) -> tuple[int, ...]:
        rank = len(shape)
        reduced = set(range(rank)) if axes is None else {_axis(a, rank) for a in axes}
        if axes is not None and len(reduced) != len(axes):
            raise VerifyException(f"axes {list(axes)} repeat an axis")
        return tuple(
            1 if i in reduced else d for i, d in enumerate(shape) if keepdims or i not in reduced
        )

    def reduced_axes(self) -> tuple[int, ...]:
        rank = len(_shape(self.input.type))
        if self.axes is None:
            return tuple(range(rank))
        return tuple(_axis(a, rank) for a in get_ints(self.axes))

    def infer_result_types(self) -> list[Attribute]:
        axes = None if self.axes is None else get_ints(self.axes)
        shape = self._reduce_shape(_shape(self.input.type), axes, get_bool(self.keepdims, True))
        return [TensorType(_elt(self.input.type), shape)]


# ---------------------------------------------------------------------------
# Constants, tuples
# ---------------------------------------------------------------------------


@irdl_op_definition
class ConstantOp(GraphOp):
    """A constant tensor, inline (`dense<...>`) or by reference (`#collage.weight<"key">`).

    Constants need no kernel; their kind is ELEMWISE so they never raise a sub-graph's kind.
    """

    name = "collage.constant"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.ELEMWISE
    value = attr_def(DenseIntOrFPElementsAttr | WeightAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure(), ConstantLike())

    def __init__(self, value: Attribute, type: Attribute):
        super().__init__(attributes={"value": value}, result_types=[type])

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        attrs = parser.parse_optional_attr_dict()
        value = parser.parse_attribute()
        if isinstance(value, DenseIntOrFPElementsAttr):
            type = value.get_type()
        else:
            parser.parse_punctuation(":")
            type = parser.parse_type()
        op = cls(value, type)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes, reserved_attr_names=("value",))
        printer.print_string(" ")
        printer.print_attribute(self.value)
        if not isinstance(self.value, DenseIntOrFPElementsAttr):
            printer.print_string(" : ")
            printer.print_attribute(self.output.type)

    def infer_result_types(self) -> list[Attribute]:
        if isinstance(self.value, DenseIntOrFPElementsAttr):
            if self.value.get_type() != self.output.type:
                raise VerifyException(
                    f"value type {self.value.get_type()} does not match result type "
                    f"{self.output.type}"
                )
        return [self.output.type]


@irdl_op_definition
class TupleOp(GraphOp):
    """`%t = collage.tuple %a, %b : (tensor<..>, tensor<..>) -> tuple<tensor<..>, tensor<..>>`"""

    name = "collage.tuple"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.TUPLE
    elements = var_operand_def(AnyAttr())
    output = result_def(TupleType)
    traits = traits_def(Pure())
    assembly_format = "$elements attr-dict `:` functional-type($elements, $output)"

    def __init__(self, elements: Sequence[SSAValue]):
        super().__init__(
            operands=[list(elements)], result_types=[TupleType(tuple(e.type for e in elements))]
        )

    def infer_result_types(self) -> list[Attribute]:
        return [TupleType(tuple(e.type for e in self.elements))]


@irdl_op_definition
class GetItemOp(GraphOp):
    """`%e = collage.get_item %t {index = 1 : i64} : (tuple<...>) -> tensor<...>` (projection)."""

    name = "collage.get_item"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.INJECTIVE
    tuple = operand_def(TupleType)
    index = attr_def(IntegerAttr)
    output = result_def(AnyAttr())
    traits = traits_def(Pure())
    assembly_format = "$tuple attr-dict `:` functional-type($tuple, $output)"

    def __init__(self, tuple: SSAValue, index: int):
        assert isinstance(tuple.type, TupleType)
        super().__init__(
            operands=[tuple],
            attributes={"index": IntegerAttr(index, i64)},
            result_types=[tuple.type.types.data[index]],
        )

    def infer_result_types(self) -> list[Attribute]:
        assert isinstance(self.tuple.type, TupleType)
        types = self.tuple.type.types.data
        i = get_int(self.index, 0)
        if not 0 <= i < len(types):
            raise VerifyException(f"index {i} is out of range for a tuple of {len(types)}")
        return [types[i]]


# ---------------------------------------------------------------------------
# Element-wise
# ---------------------------------------------------------------------------


@irdl_op_definition
class ReluOp(UnaryOp):
    name = "collage.relu"


@irdl_op_definition
class SigmoidOp(FloatUnaryOp):
    name = "collage.sigmoid"


@irdl_op_definition
class TanhOp(FloatUnaryOp):
    name = "collage.tanh"


@irdl_op_definition
class ErfOp(FloatUnaryOp):
    name = "collage.erf"


@irdl_op_definition
class ExpOp(FloatUnaryOp):
    name = "collage.exp"


@irdl_op_definition
class LogOp(FloatUnaryOp):
    name = "collage.log"


@irdl_op_definition
class SqrtOp(FloatUnaryOp):
    name = "collage.sqrt"


@irdl_op_definition
class ReciprocalOp(FloatUnaryOp):
    name = "collage.reciprocal"


@irdl_op_definition
class NegOp(UnaryOp):
    name = "collage.neg"


@irdl_op_definition
class AbsOp(UnaryOp):
    name = "collage.abs"


@irdl_op_definition
class NotOp(UnaryOp):
    name = "collage.not"

    def infer_result_types(self) -> list[Attribute]:
        if _elt(self.input.type) != i1:
            raise VerifyException("collage.not needs an i1 operand")
        return [self.input.type]


@irdl_op_definition
class LeakyReluOp(FloatUnaryOp):
    """`collage.leaky_relu %x {alpha = 0.1 : f32}`"""

    name = "collage.leaky_relu"
    alpha = attr_def(FloatAttr)


@irdl_op_definition
class HardSigmoidOp(FloatUnaryOp):
    """`collage.hard_sigmoid %x {alpha = 0.2 : f32, beta = 0.5 : f32}`: clip(a*x + b, 0, 1)."""

    name = "collage.hard_sigmoid"
    alpha = attr_def(FloatAttr)
    beta = attr_def(FloatAttr)


@irdl_op_definition
class HardSwishOp(FloatUnaryOp):
    """`collage.hard_swish %x`: x * clip(x + 3, 0, 6) / 6."""

    name = "collage.hard_swish"


@irdl_op_definition
class MishOp(FloatUnaryOp):
    """`collage.mish %x`: x * tanh(softplus(x))."""

    name = "collage.mish"


@irdl_op_definition
class EluOp(FloatUnaryOp):
    """`collage.elu %x {alpha = 1.0 : f32}`: x if x > 0, else alpha * (exp(x) - 1)."""

    name = "collage.elu"
    alpha = attr_def(FloatAttr)


@irdl_op_definition
class SoftplusOp(FloatUnaryOp):
    """`collage.softplus %x`: log(1 + exp(x))."""

    name = "collage.softplus"


@irdl_op_definition
class SeluOp(FloatUnaryOp):
    """`collage.selu %x {alpha = 1.67 : f32, gamma = 1.05 : f32}`: gamma * elu(x, alpha)."""

    name = "collage.selu"
    alpha = attr_def(FloatAttr)
    gamma = attr_def(FloatAttr)


@irdl_op_definition
class PReluOp(BinaryOp):
    """`%r = collage.prelu %x, %slope : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) ->
    tensor<1x4x8x8xf32>`: x if x >= 0, else slope * x; the slope broadcasts to x's shape
    (ONNX's unidirectional broadcast)."""

    name = "collage.prelu"

    @classmethod
    def infer(cls, types: Sequence[Attribute]) -> list[Attribute]:
        elt = _same_elt(types)
        if not isinstance(elt, AnyFloat):
            raise VerifyException(f"{cls.name} needs floating-point operands")
        x, slope = (_shape(t) for t in types)
        if not _broadcasts_to(slope, x):
            raise VerifyException(f"slope {list(slope)} does not broadcast to input {list(x)}")
        return [TensorType(elt, x)]


@irdl_op_definition
class ClipOp(FloatUnaryOp):
    """`collage.clip %x {min = 0.0 : f32, max = 6.0 : f32}`; a missing bound is unbounded."""

    name = "collage.clip"
    min = opt_attr_def(FloatAttr)
    max = opt_attr_def(FloatAttr)

    def infer_result_types(self) -> list[Attribute]:
        lo, hi = get_float(self.min, -math.inf), get_float(self.max, math.inf)
        if lo > hi:
            raise VerifyException(f"min {lo} is greater than max {hi}")
        return super().infer_result_types()


@irdl_op_definition
class GeluOp(FloatUnaryOp):
    """`collage.gelu %x {approximate = "tanh"}`; default exact (erf)."""

    name = "collage.gelu"
    approximate = opt_attr_def(StringAttr)

    def infer_result_types(self) -> list[Attribute]:
        if self.approximate is not None and self.approximate.data not in ("none", "tanh"):
            raise VerifyException(
                f'approximate must be "none" or "tanh", got "{self.approximate.data}"'
            )
        return super().infer_result_types()


@irdl_op_definition
class CastOp(GraphOp):
    """`%r = collage.cast %x : tensor<4xi64> -> tensor<4xf32>`"""

    name = "collage.cast"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.ELEMWISE
    input = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, element_type: Attribute):
        super().__init__(
            operands=[input], result_types=[TensorType(element_type, _shape(input.type))]
        )

    def infer_result_types(self) -> list[Attribute]:
        return [TensorType(_elt(self.output.type), _shape(self.input.type))]


QUANTIZED_TYPES = (IntegerType(8), IntegerType(8, Signedness.UNSIGNED))
"""The integer side of quantize_linear and dequantize_linear: int8 (i8) and uint8 (ui8)."""


class QdqOp(GraphOp, ABC):
    """ONNX QuantizeLinear / DequantizeLinear between f32 and the zero point's type (i8 or
    ui8). `scale` (f32) and `zero_point` are scalars (per tensor) or 1-D with one value per
    slice of the input along `axis` (per channel; only then is `axis` given):

        %q = collage.quantize_linear %x, %s, %z {axis = 1 : i64}
            : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<1x3x4x4xi8>
    """

    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.ELEMWISE
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    zero_point = operand_def(TensorType)
    axis = opt_attr_def(IntegerAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $scale `,` $zero_point attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, input: SSAValue, scale: SSAValue, zero_point: SSAValue,
                 axis: int | None = None):
        attrs = {} if axis is None else {"axis": IntegerAttr(axis, i64)}
        element = self.result_element(_elt(zero_point.type))
        super().__init__(operands=[input, scale, zero_point], attributes=attrs,
                         result_types=[TensorType(element, _shape(input.type))])

    @staticmethod
    def result_element(quantized: Attribute) -> Attribute:
        """The result's element type, given the zero point's."""
        raise NotImplementedError

    def channel_axis(self) -> int | None:
        """The (non-negative) axis of a per-channel scale; None for a per-tensor one."""
        if self.axis is None:
            return None
        return _axis(get_int(self.axis, 0), len(_shape(self.input.type)))

    def check_parameters(self) -> Attribute:
        """Checks the scale, zero point and axis; the zero point's element type."""
        scale, zero = _shape(self.scale.type, "scale"), _shape(self.zero_point.type, "zero point")
        quantized = _elt(self.zero_point.type)
        if _elt(self.scale.type) != f32:
            raise VerifyException(f"scale must be f32, got {_elt(self.scale.type)}")
        if quantized not in QUANTIZED_TYPES:
            raise VerifyException(f"zero point must be i8 or ui8, got {quantized}")
        if zero != scale:
            raise VerifyException(f"zero point shape {list(zero)} must match scale shape "
                                  f"{list(scale)}")
        if len(scale) > 1:
            raise VerifyException(f"scale must be a scalar or 1-D, got shape {list(scale)}")
        if scale and self.axis is None:
            raise VerifyException(f"a per-channel scale (shape {list(scale)}) needs an axis")
        if not scale and self.axis is not None:
            raise VerifyException("axis is only for a per-channel (1-D) scale, got a scalar")
        axis = self.channel_axis()
        if axis is not None and scale[0] != _shape(self.input.type)[axis]:
            raise VerifyException(f"scale has {scale[0]} values for the "
                                  f"{_shape(self.input.type)[axis]} channels of axis {axis}")
        return quantized


@irdl_op_definition
class QuantizeLinearOp(QdqOp):
    """saturate(round_half_to_even(x / scale) + zero_point): f32 -> i8 or ui8."""

    name = "collage.quantize_linear"

    @staticmethod
    def result_element(quantized: Attribute) -> Attribute:
        return quantized

    def infer_result_types(self) -> list[Attribute]:
        quantized = self.check_parameters()
        if _elt(self.input.type) != f32:
            raise VerifyException(f"input must be f32, got {_elt(self.input.type)}")
        return [TensorType(quantized, _shape(self.input.type))]


@irdl_op_definition
class DequantizeLinearOp(QdqOp):
    """(x - zero_point) * scale: i8 or ui8 -> f32."""

    name = "collage.dequantize_linear"

    @staticmethod
    def result_element(quantized: Attribute) -> Attribute:
        return f32

    def infer_result_types(self) -> list[Attribute]:
        quantized = self.check_parameters()
        if _elt(self.input.type) != quantized:
            raise VerifyException(f"input element type {_elt(self.input.type)} must be the "
                                  f"zero point's {quantized}")
        return [TensorType(f32, _shape(self.input.type))]


# ---------------------------------------------------------------------------
# Broadcast
# ---------------------------------------------------------------------------


@irdl_op_definition
class AddOp(BinaryOp):
    name = "collage.add"


@irdl_op_definition
class SubOp(BinaryOp):
    name = "collage.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    name = "collage.mul"


@irdl_op_definition
class DivOp(BinaryOp):
    name = "collage.div"


@irdl_op_definition
class PowOp(BinaryOp):
    name = "collage.pow"


@irdl_op_definition
class MaximumOp(BinaryOp):
    name = "collage.maximum"


@irdl_op_definition
class MinimumOp(BinaryOp):
    name = "collage.minimum"


@irdl_op_definition
class EqualOp(CompareOp):
    name = "collage.equal"


@irdl_op_definition
class LessOp(CompareOp):
    name = "collage.less"


@irdl_op_definition
class GreaterOp(CompareOp):
    name = "collage.greater"


@irdl_op_definition
class WhereOp(GraphOp):
    """`%r = collage.where %cond, %a, %b : (tensor<..xi1>, tensor<..>, tensor<..>) -> tensor<..>`"""

    name = "collage.where"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.BROADCAST
    condition = operand_def(TensorType)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$condition `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, condition: SSAValue, lhs: SSAValue, rhs: SSAValue):
        super().__init__(
            operands=[condition, lhs, rhs],
            result_types=self.infer([condition.type, lhs.type, rhs.type]),
        )

    @staticmethod
    def infer(types: Sequence[Attribute]) -> list[Attribute]:
        if _elt(types[0]) != i1:
            raise VerifyException("condition must have element type i1")
        elt = _same_elt(types[1:])
        return [TensorType(elt, _broadcast(*map(_shape, types)))]

    def infer_result_types(self) -> list[Attribute]:
        return self.infer([o.type for o in self.operands])


@irdl_op_definition
class BatchNormOp(GraphOp):
    """Inference batch normalization over axis 1:
    `collage.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1e-05 : f32}`."""

    name = "collage.batch_norm"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.BROADCAST
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    var = operand_def(TensorType)
    epsilon = attr_def(FloatAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $scale `,` $bias `,` $mean `,` $var attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(self, input: SSAValue, scale, bias, mean, var, epsilon: float):
        super().__init__(
            operands=[input, scale, bias, mean, var],
            attributes={"epsilon": FloatAttr(epsilon, f32)},
            result_types=[input.type],
        )

    def infer_result_types(self) -> list[Attribute]:
        shape = _shape(self.input.type)
        if len(shape) < 2:
            raise VerifyException(f"input must have rank >= 2, got rank {len(shape)}")
        for name in ("scale", "bias", "mean", "var"):
            s = _shape(getattr(self, name).type)
            if s != (shape[1],):
                raise VerifyException(f"{name} must have shape [{shape[1]}], got {list(s)}")
        _same_elt([o.type for o in self.operands])
        if get_float(self.epsilon, 0.0) < 0:
            raise VerifyException("epsilon must be non-negative")
        return [self.input.type]


# ---------------------------------------------------------------------------
# Injective (layout) ops
# ---------------------------------------------------------------------------


@irdl_op_definition
class ReshapeOp(GraphOp):
    """`%r = collage.reshape %x : tensor<1x2048x1x1xf32> -> tensor<1x2048xf32>`"""

    name = "collage.reshape"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.INJECTIVE
    input = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, shape: Sequence[int]):
        super().__init__(
            operands=[input], result_types=[TensorType(_elt(input.type), list(shape))]
        )

    def infer_result_types(self) -> list[Attribute]:
        src, dst = _shape(self.input.type), _shape(self.output.type)
        if math.prod(src) != math.prod(dst):
            raise VerifyException(
                f"cannot reshape {list(src)} ({math.prod(src)} elements) to "
                f"{list(dst)} ({math.prod(dst)} elements)"
            )
        return [TensorType(_elt(self.input.type), dst)]


@irdl_op_definition
class ExpandOp(GraphOp):
    """Broadcast to a larger shape: `collage.expand %x : tensor<1x4xf32> -> tensor<3x4xf32>`"""

    name = "collage.expand"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.BROADCAST
    input = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, shape: Sequence[int]):
        out = _broadcast(_shape(input.type), tuple(shape))
        super().__init__(operands=[input], result_types=[TensorType(_elt(input.type), out)])

    def infer_result_types(self) -> list[Attribute]:
        dst = _shape(self.output.type)
        if not _broadcasts_to(_shape(self.input.type), dst):
            raise VerifyException(
                f"cannot expand {list(_shape(self.input.type))} to {list(dst)}"
            )
        return [TensorType(_elt(self.input.type), dst)]


@irdl_op_definition
class TransposeOp(GraphOp):
    """`collage.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<..> -> tensor<..>`"""

    name = "collage.transpose"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.INJECTIVE
    input = operand_def(TensorType)
    perm = attr_def(DenseArrayBase)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, perm: Sequence[int]):
        shape = _shape(input.type)
        super().__init__(
            operands=[input],
            attributes={"perm": ints(perm)},
            result_types=[TensorType(_elt(input.type), [shape[p] for p in perm])],
        )

    def infer_result_types(self) -> list[Attribute]:
        shape, perm = _shape(self.input.type), get_ints(self.perm)
        if sorted(perm) != list(range(len(shape))):
            raise VerifyException(f"perm {list(perm)} is not a permutation of rank {len(shape)}")
        return [TensorType(_elt(self.input.type), [shape[p] for p in perm])]


@irdl_op_definition
class ConcatOp(GraphOp):
    """`collage.concat %a, %b {axis = 1 : i64} : (...) -> tensor<..>`.

    The operands are tensors, or a single tuple of tensors (Relay-style)."""

    name = "collage.concat"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.INJECTIVE
    inputs = var_operand_def(TensorType | TupleType)
    axis = attr_def(IntegerAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $output)"

    def __init__(self, inputs: Sequence[SSAValue], axis: int):
        types = self._tensor_types([i.type for i in inputs])
        super().__init__(
            operands=[list(inputs)],
            attributes={"axis": IntegerAttr(axis, i64)},
            result_types=self.infer(types, axis),
        )

    @staticmethod
    def _tensor_types(types: Sequence[Attribute]) -> list[Attribute]:
        if len(types) == 1 and isinstance(types[0], TupleType):
            return list(types[0].types.data)
        if any(isinstance(t, TupleType) for t in types):
            raise VerifyException("a tuple operand must be the only operand")
        return list(types)

    @staticmethod
    def infer(types: Sequence[Attribute], axis: int) -> list[Attribute]:
        if not types:
            raise VerifyException("concat needs at least one input")
        shapes = [_shape(t) for t in types]
        rank = len(shapes[0])
        ax = _axis(axis, rank)
        for s in shapes:
            if len(s) != rank or any(a != b for i, (a, b) in enumerate(zip(s, shapes[0])) if i != ax):
                raise VerifyException(
                    f"input shapes {[list(s) for s in shapes]} differ off axis {axis}"
                )
        out = list(shapes[0])
        out[ax] = sum(s[ax] for s in shapes)
        return [TensorType(_same_elt(types), out)]

    def infer_result_types(self) -> list[Attribute]:
        return self.infer(
            self._tensor_types([i.type for i in self.inputs]), get_int(self.axis, 0)
        )


@irdl_op_definition
class SplitOp(GraphOp):
    """`%a, %b = collage.split %x {axis = 1 : i64, sizes = array<i64: 2, 2>} : ...`"""

    name = "collage.split"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.INJECTIVE
    input = operand_def(TensorType)
    axis = attr_def(IntegerAttr)
    sizes = attr_def(DenseArrayBase)
    outputs = var_result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type($input, $outputs)"

    def __init__(self, input: SSAValue, axis: int, sizes: Sequence[int]):
        super().__init__(
            operands=[input],
            attributes={"axis": IntegerAttr(axis, i64), "sizes": ints(sizes)},
            result_types=[self.infer(input.type, axis, sizes)],
        )

    @staticmethod
    def infer(t: Attribute, axis: int, sizes: Sequence[int]) -> list[Attribute]:
        shape = _shape(t)
        ax = _axis(axis, len(shape))
        if sum(sizes) != shape[ax] or any(s < 0 for s in sizes):
            raise VerifyException(f"sizes {list(sizes)} do not split dimension {shape[ax]}")
        return [
            TensorType(_elt(t), [s if i == ax else d for i, d in enumerate(shape)])
            for s in sizes
        ]

    def infer_result_types(self) -> list[Attribute]:
        return self.infer(self.input.type, get_int(self.axis, 0), get_ints(self.sizes))


@irdl_op_definition
class SliceOp(GraphOp):
    """Static strided slice: `{starts = array<i64: 0>, ends = array<i64: 2>, axes = array<i64: 1>,
    steps = array<i64: 1>}`; bounds are clamped as in ONNX Slice."""

    name = "collage.slice"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.INJECTIVE
    input = operand_def(TensorType)
    starts = attr_def(DenseArrayBase)
    ends = attr_def(DenseArrayBase)
    axes = attr_def(DenseArrayBase)
    steps = attr_def(DenseArrayBase)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, starts, ends, axes, steps):
        super().__init__(
            operands=[input],
            attributes={"starts": ints(starts), "ends": ints(ends), "axes": ints(axes),
                        "steps": ints(steps)},
            result_types=[self.infer(input.type, starts, ends, axes, steps)],
        )

    @staticmethod
    def slices(shape, starts, ends, axes, steps) -> tuple[slice, ...]:
        if not len(starts) == len(ends) == len(axes) == len(steps):
            raise VerifyException("starts, ends, axes and steps must have one length")
        result = [slice(None)] * len(shape)
        for s, e, a, st in zip(starts, ends, axes, steps):
            if st == 0:
                raise VerifyException("steps must be non-zero")
            ax = _axis(a, len(shape))
            lo, hi, step = slice(s, e, st).indices(shape[ax])
            result[ax] = slice(lo, hi if hi >= 0 else None, step)
        return tuple(result)

    @classmethod
    def infer(cls, t, starts, ends, axes, steps) -> list[Attribute]:
        shape = _shape(t)
        sl = cls.slices(shape, starts, ends, axes, steps)
        out = [len(range(*s.indices(d))) for s, d in zip(sl, shape)]
        return [TensorType(_elt(t), out)]

    def infer_result_types(self) -> list[Attribute]:
        return self.infer(
            self.input.type, get_ints(self.starts), get_ints(self.ends),
            get_ints(self.axes), get_ints(self.steps),
        )


@irdl_op_definition
class GatherOp(GraphOp):
    """`collage.gather %data, %indices {axis = 0 : i64} : (...) -> tensor<..>` (ONNX Gather)."""

    name = "collage.gather"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.INJECTIVE
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    axis = attr_def(IntegerAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$data `,` $indices attr-dict `:` functional-type(operands, results)"

    def __init__(self, data: SSAValue, indices: SSAValue, axis: int):
        super().__init__(
            operands=[data, indices],
            attributes={"axis": IntegerAttr(axis, i64)},
            result_types=self.infer(data.type, indices.type, axis),
        )

    @staticmethod
    def infer(data: Attribute, indices: Attribute, axis: int) -> list[Attribute]:
        shape, ishape = _shape(data), _shape(indices)
        if not isinstance(_elt(indices), IntegerType) or _elt(indices) == i1:
            raise VerifyException("indices must be integers")
        ax = _axis(axis, len(shape))
        return [TensorType(_elt(data), list(shape[:ax]) + list(ishape) + list(shape[ax + 1 :]))]

    def infer_result_types(self) -> list[Attribute]:
        return self.infer(self.data.type, self.indices.type, get_int(self.axis, 0))


@irdl_op_definition
class PadOp(GraphOp):
    """Constant padding: `{pads = array<i64: begins..., ends...>, value = 0.0 : f32}`."""

    name = "collage.pad"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.INJECTIVE
    input = operand_def(TensorType)
    pads = attr_def(DenseArrayBase)
    value = opt_attr_def(FloatAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, pads: Sequence[int], value: float = 0.0):
        super().__init__(
            operands=[input],
            attributes={"pads": ints(pads), "value": FloatAttr(value, f32)},
            result_types=self.infer(input.type, pads),
        )

    @staticmethod
    def infer(t: Attribute, pads: Sequence[int]) -> list[Attribute]:
        shape = _shape(t)
        if len(pads) != 2 * len(shape) or any(p < 0 for p in pads):
            raise VerifyException(
                f"pads must be {2 * len(shape)} non-negative values, got {list(pads)}"
            )
        r = len(shape)
        return [TensorType(_elt(t), [d + pads[i] + pads[i + r] for i, d in enumerate(shape)])]

    def infer_result_types(self) -> list[Attribute]:
        return self.infer(self.input.type, get_ints(self.pads))


@irdl_op_definition
class TileOp(GraphOp):
    """`collage.tile %x {repeats = array<i64: 1, 2>} : tensor<2x3xf32> -> tensor<2x6xf32>`"""

    name = "collage.tile"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.INJECTIVE
    input = operand_def(TensorType)
    repeats = attr_def(DenseArrayBase)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, repeats: Sequence[int]):
        super().__init__(operands=[input], attributes={"repeats": ints(repeats)},
                         result_types=self.infer(input.type, repeats))

    @staticmethod
    def infer(t: Attribute, repeats: Sequence[int]) -> list[Attribute]:
        shape = _shape(t)
        if len(repeats) != len(shape) or any(r < 0 for r in repeats):
            raise VerifyException(
                f"repeats must be {len(shape)} non-negative values, got {list(repeats)}")
        return [TensorType(_elt(t), [d * r for d, r in zip(shape, repeats)])]

    def infer_result_types(self) -> list[Attribute]:
        return self.infer(self.input.type, get_ints(self.repeats))


RESIZE_MODES = ("nearest", "linear")
RESIZE_COORDINATE_MODES = ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel")
RESIZE_NEAREST_MODES = ("round_prefer_floor", "floor")


@irdl_op_definition
class ResizeOp(GraphOp):
    """ONNX Resize of an NCHW tensor's H and W (nearest or bilinear):

        collage.resize %x {mode = "nearest", coordinate_transformation_mode = "asymmetric",
            nearest_mode = "floor", scales = array<f32: 2.0, 2.0>}
            : tensor<1x4x5x5xf32> -> tensor<1x4x10x10xf32>

    `scales` (H, W) as ONNX's `scales` input: the output is floor(input * scale) and the
    coordinates map through the scale; without it (ONNX `sizes`) the scale is output / input.
    """

    name = "collage.resize"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.INJECTIVE
    input = operand_def(TensorType)
    mode = attr_def(StringAttr)
    coordinate_transformation_mode = attr_def(StringAttr)
    nearest_mode = opt_attr_def(StringAttr)
    scales = opt_attr_def(DenseArrayBase)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, mode: str, coordinate_mode: str,
                 nearest_mode: str | None, *, scales: Sequence[float] | None = None,
                 sizes: Sequence[int] | None = None):
        shape = _shape(input.type)
        attrs: dict[str, Attribute] = {
            "mode": StringAttr(mode), "coordinate_transformation_mode": StringAttr(coordinate_mode)}
        if nearest_mode is not None:
            attrs["nearest_mode"] = StringAttr(nearest_mode)
        if scales is not None:
            attrs["scales"] = DenseArrayBase.from_list(f32, [float(s) for s in scales])
            sizes = self.scaled(shape[2:], scales)
        hw = list(sizes) if sizes is not None and len(shape) == 4 else list(shape[2:])
        super().__init__(operands=[input], attributes=attrs,
                         result_types=[TensorType(_elt(input.type), [*shape[:2], *hw])])

    @staticmethod
    def scaled(hw: Sequence[int], scales: Sequence[float]) -> list[int]:
        """ONNX's output size: floor(size * scale), computed in f32 as ONNX Runtime does."""
        return [int(np.float32(d) * np.float32(s)) for d, s in zip(hw, scales)]

    def scale_values(self) -> tuple[float, float] | None:
        if self.scales is None:
            return None
        return tuple(float(v) for v in self.scales.get_values())  # type: ignore[return-value]

    def infer_result_types(self) -> list[Attribute]:
        src, dst = _shape(self.input.type), _shape(self.output.type)
        if len(src) != 4 or len(dst) != 4 or dst[:2] != src[:2]:
            raise VerifyException(f"resizes H and W of a 4-D tensor, not {list(src)} to "
                                  f"{list(dst)}")
        for attr, allowed in [(self.mode, RESIZE_MODES),
                              (self.coordinate_transformation_mode, RESIZE_COORDINATE_MODES),
                              (self.nearest_mode, RESIZE_NEAREST_MODES)]:
            if attr is not None and attr.data not in allowed:
                raise VerifyException(f"'{attr.data}' is not one of {', '.join(allowed)}")
        scales = self.scale_values()
        if scales is not None:
            if len(scales) != 2 or min(scales) <= 0:
                raise VerifyException(f"scales must be 2 positive values, got {list(scales)}")
            if self.scaled(src[2:], scales) != list(dst[2:]):
                raise VerifyException(f"scales {list(scales)} make {list(src)} "
                                      f"{[*src[:2], *self.scaled(src[2:], scales)]}, not "
                                      f"{list(dst)}")
        return [TensorType(_elt(self.input.type), dst)]


# ---------------------------------------------------------------------------
# Indexing: gathers and scatters by index tensors, top-k, cumulative sums
# ---------------------------------------------------------------------------


def _index_shape(t: Attribute, element_types: Sequence[Attribute]) -> tuple[int, ...]:
    """The shape of an indices operand whose element type is one of `element_types`."""
    if _elt(t) not in element_types:
        raise VerifyException(f"indices must be {' or '.join(map(str, element_types))}, "
                              f"got {_elt(t)}")
    return _shape(t)


def _index_tuples(data: tuple[int, ...], indices: tuple[int, ...], batch_dims: int) -> int:
    """The length of the index tuples (indices' last dimension) that address `data` after
    its first `batch_dims` dimensions, as GatherND and ScatterND read them."""
    if not indices:
        raise VerifyException("indices must have rank >= 1")
    if indices[-1] < 1 or batch_dims + indices[-1] > len(data):
        raise VerifyException(f"index tuples of length {indices[-1]} do not address data "
                              f"{list(data)}" + (f" after {batch_dims} batch dimensions"
                                                 if batch_dims else ""))
    return indices[-1]


@irdl_op_definition
class GatherElementsOp(GraphOp):
    """ONNX GatherElements: `out[i][j] = data[i][indices[i][j]]` along `axis` (here 1),
    indices in [-d, d) for the axis' size d; the result has the indices' shape.

        collage.gather_elements %data, %indices {axis = 1 : i64}
            : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
    """

    name = "collage.gather_elements"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.INJECTIVE
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    axis = attr_def(IntegerAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$data `,` $indices attr-dict `:` functional-type(operands, results)"

    def __init__(self, data: SSAValue, indices: SSAValue, axis: int):
        super().__init__(operands=[data, indices], attributes={"axis": IntegerAttr(axis, i64)},
                         result_types=self.infer(data.type, indices.type, axis))

    @staticmethod
    def infer(data: Attribute, indices: Attribute, axis: int) -> list[Attribute]:
        shape, ishape = _shape(data), _index_shape(indices, (IntegerType(32), i64))
        if not shape:
            raise VerifyException("data must have rank >= 1")
        ax = _axis(axis, len(shape))
        if len(ishape) != len(shape) or any(
                i > d for a, (i, d) in enumerate(zip(ishape, shape)) if a != ax):
            raise VerifyException(f"indices {list(ishape)} must have the rank of data "
                                  f"{list(shape)} and fit in it off axis {axis}")
        return [TensorType(_elt(data), ishape)]

    def infer_result_types(self) -> list[Attribute]:
        return self.infer(self.data.type, self.indices.type, get_int(self.axis, 0))


@irdl_op_definition
class GatherNdOp(GraphOp):
    """ONNX GatherND: the slices of `data` that the index tuples in the last dimension of
    `indices` address, after `batch_dims` leading dimensions the two share:

        collage.gather_nd %data, %indices {batch_dims = 0 : i64}
            : (tensor<3x4x5xf32>, tensor<2x2xi64>) -> tensor<2x5xf32>

    The result's shape is indices' shape without its last dimension, then the data
    dimensions the tuples do not address."""

    name = "collage.gather_nd"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.INJECTIVE
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    batch_dims = attr_def(IntegerAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$data `,` $indices attr-dict `:` functional-type(operands, results)"

    def __init__(self, data: SSAValue, indices: SSAValue, batch_dims: int = 0):
        super().__init__(operands=[data, indices],
                         attributes={"batch_dims": IntegerAttr(batch_dims, i64)},
                         result_types=self.infer(data.type, indices.type, batch_dims))

    @staticmethod
    def infer(data: Attribute, indices: Attribute, batch_dims: int) -> list[Attribute]:
        shape, ishape = _shape(data), _index_shape(indices, (i64,))
        if not 0 <= batch_dims < min(len(shape), max(len(ishape), 1)):
            raise VerifyException(f"batch_dims {batch_dims} must be below the ranks of data "
                                  f"{list(shape)} and indices {list(ishape)}")
        if shape[:batch_dims] != ishape[:batch_dims]:
            raise VerifyException(f"the {batch_dims} batch dimensions of data {list(shape)} "
                                  f"and indices {list(ishape)} differ")
        m = _index_tuples(shape, ishape, batch_dims)
        return [TensorType(_elt(data), [*ishape[:-1], *shape[batch_dims + m:]])]

    def infer_result_types(self) -> list[Attribute]:
        return self.infer(self.data.type, self.indices.type, get_int(self.batch_dims, 0))


SCATTER_REDUCTIONS = ("none", "add", "mul", "min", "max")


@irdl_op_definition
class ScatterNdOp(GraphOp):
    """ONNX ScatterND: a copy of `data` whose slices at the index tuples of `indices` are
    `updates`, or `updates` combined into them by `reduction` (add, mul, min, max;
    absent: none, where a slice addressed twice gets either update):

        collage.scatter_nd %data, %indices, %updates {reduction = "add"}
            : (tensor<4x5xf32>, tensor<3x1xi64>, tensor<3x5xf32>) -> tensor<4x5xf32>
    """

    name = "collage.scatter_nd"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.OPAQUE
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    reduction = opt_attr_def(StringAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, data: SSAValue, indices: SSAValue, updates: SSAValue,
                 reduction: str = "none"):
        attrs = {} if reduction == "none" else {"reduction": StringAttr(reduction)}
        super().__init__(operands=[data, indices, updates], attributes=attrs,
                         result_types=[data.type])

    def reduction_name(self) -> str:
        return "none" if self.reduction is None else self.reduction.data

    def infer_result_types(self) -> list[Attribute]:
        if self.reduction_name() not in SCATTER_REDUCTIONS:
            raise VerifyException(f"reduction '{self.reduction_name()}' is not one of "
                                  f"{', '.join(SCATTER_REDUCTIONS)}")
        shape = _shape(self.data.type)
        ishape = _index_shape(self.indices.type, (i64,))
        m = _index_tuples(shape, ishape, 0)
        expected = (*ishape[:-1], *shape[m:])
        if _shape(self.updates.type) != expected:
            raise VerifyException(f"updates shape {list(_shape(self.updates.type))} must be "
                                  f"{list(expected)}")
        _same_elt([self.data.type, self.updates.type])
        return [self.data.type]


@irdl_op_definition
class TopKOp(GraphOp):
    """ONNX TopK (sorted): the `k` largest (or smallest) values along `axis`, in order, and
    their i64 indices; of equal values the lower index comes first.

        %v, %i = collage.top_k %x {k = 2 : i64, axis = -1 : i64, largest = true}
            : tensor<3x5xf32> -> tensor<3x2xf32>, tensor<3x2xi64>
    """

    name = "collage.top_k"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.OPAQUE
    input = operand_def(TensorType)
    k = attr_def(IntegerAttr)
    axis = attr_def(IntegerAttr)
    largest = attr_def(BoolAttr)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($values) `,` type($indices)"

    def __init__(self, input: SSAValue, k: int, axis: int, largest: bool):
        attrs = {"k": IntegerAttr(k, i64), "axis": IntegerAttr(axis, i64),
                 "largest": IntegerAttr(int(largest), i1)}
        super().__init__(operands=[input], attributes=attrs,
                         result_types=self.infer(input.type, k, axis))

    @staticmethod
    def infer(t: Attribute, k: int, axis: int) -> list[Attribute]:
        shape = _shape(t)
        ax = _axis(axis, len(shape))
        if not shape or not 1 <= k <= shape[ax]:
            raise VerifyException(f"k {k} must be in [1, {shape[ax] if shape else 0}], the "
                                  f"size of axis {axis}")
        out = [k if i == ax else d for i, d in enumerate(shape)]
        return [TensorType(_elt(t), out), TensorType(i64, out)]

    def infer_result_types(self) -> list[Attribute]:
        return self.infer(self.input.type, get_int(self.k, 1), get_int(self.axis, -1))


@irdl_op_definition
class CumSumOp(GraphOp):
    """ONNX CumSum along `axis`: `exclusive` leaves each element out of its own sum,
    `reverse` sums from the end.

        collage.cumsum %x {axis = 1 : i64, exclusive = false, reverse = true}
            : tensor<3x5xf32>
    """

    name = "collage.cumsum"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.OPAQUE
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    axis = attr_def(IntegerAttr)
    exclusive = opt_attr_def(BoolAttr)
    reverse = opt_attr_def(BoolAttr)
    output = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input)"

    def __init__(self, input: SSAValue, axis: int, exclusive: bool, reverse: bool):
        attrs = {"axis": IntegerAttr(axis, i64), "exclusive": IntegerAttr(int(exclusive), i1),
                 "reverse": IntegerAttr(int(reverse), i1)}
        super().__init__(operands=[input], attributes=attrs, result_types=[input.type])

    def infer_result_types(self) -> list[Attribute]:
        shape = _shape(self.input.type)
        if not shape:
            raise VerifyException("input must have rank >= 1")
        _axis(get_int(self.axis, 0), len(shape))
        return [self.input.type]


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    name = "collage.reduce_sum"


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    name = "collage.reduce_mean"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    name = "collage.reduce_max"


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    name = "collage.reduce_min"


@irdl_op_definition
class ReduceL2Op(ReduceOp):
    """sqrt(sum(x * x)) over `axes`."""

    name = "collage.reduce_l2"


@irdl_op_definition
class ArgMaxOp(GraphOp):
    """`collage.argmax %x {axis = 1 : i64, keepdims = true}`: i64 indices of the first maximum."""

    name = "collage.argmax"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.COMM_REDUCE
    input = operand_def(TensorType)
    axis = attr_def(IntegerAttr)
    keepdims = opt_attr_def(BoolAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, axis: int, keepdims: bool):
        attrs = {"axis": IntegerAttr(axis, i64), "keepdims": IntegerAttr(int(keepdims), i1)}
        super().__init__(operands=[input], attributes=attrs,
                         result_types=self.infer(input.type, axis, keepdims))

    @staticmethod
    def infer(t: Attribute, axis: int, keepdims: bool) -> list[Attribute]:
        shape = _shape(t)
        ax = _axis(axis, len(shape))
        return [TensorType(i64, ReduceOp._reduce_shape(shape, [ax], keepdims))]

    def infer_result_types(self) -> list[Attribute]:
        return self.infer(self.input.type, get_int(self.axis, 0), get_bool(self.keepdims, True))


# ---------------------------------------------------------------------------
# Out-element-wise-fusable: convolution, matmul, pooling
# ---------------------------------------------------------------------------


@irdl_op_definition
class Conv2dOp(GraphOp):
    """NCHW / OIHW 2-D convolution without bias (the bias is a following `collage.add`).

    `{strides = array<i64: sh, sw>, pads = array<i64: top, left, bottom, right>,
      dilations = array<i64: dh, dw>, group = 1 : i64}`"""

    name = "collage.conv2d"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.OUT_EWISE_FUSABLE
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    strides = attr_def(DenseArrayBase)
    pads = attr_def(DenseArrayBase)
    dilations = attr_def(DenseArrayBase)
    group = attr_def(IntegerAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `,` $weight attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, weight: SSAValue, strides=(1, 1), pads=(0, 0, 0, 0),
                 dilations=(1, 1), group: int = 1):
        attrs = {"strides": ints(strides), "pads": ints(pads), "dilations": ints(dilations),
                 "group": IntegerAttr(group, i64)}
        super().__init__(
            operands=[input, weight], attributes=attrs,
            result_types=self.infer(input.type, weight.type, strides, pads, dilations, group),
        )

    @staticmethod
    def infer(x, w, strides, pads, dilations, group) -> list[Attribute]:
        xs, ws = _shape(x, "input"), _shape(w, "weight")
        if len(xs) != 4 or len(ws) != 4:
            raise VerifyException(
                f"input and weight must have rank 4, got ranks {len(xs)} and {len(ws)}"
            )
        if len(strides) != 2 or len(dilations) != 2 or len(pads) != 4:
            raise VerifyException("strides and dilations need 2 values, pads 4")
        if min(strides) < 1 or min(dilations) < 1 or min(pads) < 0 or group < 1:
            raise VerifyException("strides, dilations and group must be positive, pads >= 0")
        n, c, h, wd = xs
        o, ci, kh, kw = ws
        if c % group or o % group or ci * group != c:
            raise VerifyException(
                f"weight {list(ws)} with group {group} does not fit {c} input channels"
            )
        oh = _pool_out(h, kh, strides[0], pads[0], pads[2], dilations[0], False)
        ow = _pool_out(wd, kw, strides[1], pads[1], pads[3], dilations[1], False)
        return [TensorType(_same_elt([x, w]), [n, o, oh, ow])]

    def infer_result_types(self) -> list[Attribute]:
        return self.infer(
            self.input.type, self.weight.type, get_ints(self.strides), get_ints(self.pads),
            get_ints(self.dilations), get_int(self.group, 1),
        )


@irdl_op_definition
class ConvTranspose2dOp(GraphOp):
    """NCHW / IOHW 2-D transposed convolution without bias: weight `[C, O / group, kh, kw]`,
    output size `(in - 1) * stride + (k - 1) * dilation + 1 + output_padding - begin - end`.

    `{strides = array<i64: sh, sw>, pads = array<i64: top, left, bottom, right>,
      dilations = array<i64: dh, dw>, output_padding = array<i64: oh, ow>, group = 1 : i64}`"""

    name = "collage.conv_transpose2d"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.OUT_EWISE_FUSABLE
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    strides = attr_def(DenseArrayBase)
    pads = attr_def(DenseArrayBase)
    dilations = attr_def(DenseArrayBase)
    output_padding = attr_def(DenseArrayBase)
    group = attr_def(IntegerAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `,` $weight attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, weight: SSAValue, strides=(1, 1), pads=(0, 0, 0, 0),
                 dilations=(1, 1), output_padding=(0, 0), group: int = 1):
        attrs = {"strides": ints(strides), "pads": ints(pads), "dilations": ints(dilations),
                 "output_padding": ints(output_padding), "group": IntegerAttr(group, i64)}
        super().__init__(
            operands=[input, weight], attributes=attrs,
            result_types=self.infer(input.type, weight.type, strides, pads, dilations,
                                    output_padding, group),
        )

    @staticmethod
    def infer(x, w, strides, pads, dilations, output_padding, group) -> list[Attribute]:
        xs, ws = _shape(x, "input"), _shape(w, "weight")
        if len(xs) != 4 or len(ws) != 4:
            raise VerifyException(
                f"input and weight must have rank 4, got ranks {len(xs)} and {len(ws)}"
            )
        if len(strides) != 2 or len(dilations) != 2 or len(output_padding) != 2 or len(pads) != 4:
            raise VerifyException("strides, dilations and output_padding need 2 values, pads 4")
        if min(strides) < 1 or min(dilations) < 1 or min(pads) < 0 or group < 1:
            raise VerifyException("strides, dilations and group must be positive, pads >= 0")
        if any(not 0 <= p < s for p, s in zip(output_padding, strides)):
            raise VerifyException(
                f"output_padding {list(output_padding)} must be >= 0 and below the strides "
                f"{list(strides)}"
            )
        n, c, h, wd = xs
        ci, og, kh, kw = ws
        if c % group or ci != c:
            raise VerifyException(
                f"weight {list(ws)} with group {group} does not fit {c} input channels"
            )
        out = [(size - 1) * s + (k - 1) * d + 1 + op - p0 - p1 for size, k, s, d, op, p0, p1
               in zip((h, wd), (kh, kw), strides, dilations, output_padding, pads[:2], pads[2:])]
        if min(out) < 1:
            raise VerifyException(f"pads {list(pads)} leave an empty output {out}")
        return [TensorType(_same_elt([x, w]), [n, og * group, *out])]

    def infer_result_types(self) -> list[Attribute]:
        return self.infer(
            self.input.type, self.weight.type, get_ints(self.strides), get_ints(self.pads),
            get_ints(self.dilations), get_ints(self.output_padding), get_int(self.group, 1),
        )


@irdl_op_definition
class MatmulOp(GraphOp):
    """numpy.matmul semantics (batched, broadcast batch dims)."""

    name = "collage.matmul"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.OUT_EWISE_FUSABLE
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=self.infer(lhs.type, rhs.type))

    @staticmethod
    def infer(a: Attribute, b: Attribute) -> list[Attribute]:
        sa, sb = _shape(a), _shape(b)
        if not sa or not sb:
            raise VerifyException("matmul operands must have rank >= 1")
        ka = sa[-1]
        kb = sb[-2] if len(sb) >= 2 else sb[0]
        if ka != kb:
            raise VerifyException(f"contracting dimensions differ: {list(sa)} x {list(sb)}")
        batch = _broadcast(sa[:-2], sb[:-2])
        out = list(batch) + ([sa[-2]] if len(sa) >= 2 else []) + ([sb[-1]] if len(sb) >= 2 else [])
        return [TensorType(_same_elt([a, b]), out)]

    def infer_result_types(self) -> list[Attribute]:
        return self.infer(self.lhs.type, self.rhs.type)


@irdl_op_definition
class EinsumOp(GraphOp):
    """ONNX Einsum with an explicit output and no ellipsis (numpy.einsum semantics):

        collage.einsum %q, %k {equation = "bhid,bhjd->bhij"}
            : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x6xf32>

    One term of letters per operand, one per dimension; a letter names the same size
    wherever it appears; the letters missing from the output are summed over. The kind
    is TVM's for a contraction of two operands (a one-operand transpose or sum would be
    injective or comm-reduce there)."""

    name = "collage.einsum"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.OUT_EWISE_FUSABLE
    inputs = var_operand_def(TensorType)
    equation = attr_def(StringAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $output)"

    def __init__(self, inputs: Sequence[SSAValue], equation: str):
        equation = "".join(equation.split())
        super().__init__(operands=[list(inputs)], attributes={"equation": StringAttr(equation)},
                         result_types=self.infer(equation, [i.type for i in inputs]))

    @staticmethod
    def terms(equation: str) -> tuple[list[str], str]:
        """The input terms and the output term: "bij,bjk->bik" -> (["bij", "bjk"], "bik")."""
        if "..." in equation:
            raise VerifyException(f"equation '{equation}': an ellipsis is not supported")
        inputs, arrow, output = equation.partition("->")
        if not arrow:
            raise VerifyException(f"equation '{equation}' needs an explicit output ('->')")
        terms = inputs.split(",")
        for term in [*terms, output]:
            if not all(c.isascii() and c.isalpha() for c in term):
                raise VerifyException(f"equation '{equation}': term '{term}' is not letters")
        if len(set(output)) != len(output):
            raise VerifyException(f"equation '{equation}': an output letter repeats")
        if missing := sorted(set(output) - set(inputs)):
            raise VerifyException(f"equation '{equation}': output letter '{missing[0]}' "
                                  "is in no input")
        return terms, output

    @classmethod
    def infer(cls, equation: str, types: Sequence[Attribute]) -> list[Attribute]:
        terms, output = cls.terms(equation)
        if len(terms) != len(types):
            raise VerifyException(f"equation '{equation}' has {len(terms)} inputs, got "
                                  f"{len(types)} operands")
        sizes: dict[str, int] = {}
        for i, (term, t) in enumerate(zip(terms, types)):
            shape = _shape(t)
            if len(shape) != len(term):
                raise VerifyException(f"operand {i} has rank {len(shape)}, term '{term}' "
                                      f"needs {len(term)}")
            for letter, size in zip(term, shape):
                if sizes.setdefault(letter, size) != size:
                    raise VerifyException(f"letter '{letter}' is {sizes[letter]} and {size} "
                                          f"(operand {i})")
        return [TensorType(_same_elt(types), [sizes[c] for c in output])]

    def infer_result_types(self) -> list[Attribute]:
        return self.infer(self.equation.data, [i.type for i in self.inputs])


class Pool2dOp(GraphOp, ABC):
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.OUT_EWISE_FUSABLE
    input = operand_def(TensorType)
    kernel = attr_def(DenseArrayBase)
    strides = attr_def(DenseArrayBase)
    pads = attr_def(DenseArrayBase)
    ceil_mode = opt_attr_def(BoolAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, kernel, strides, pads, ceil_mode: bool = False,
                 attributes: dict[str, Attribute] | None = None):
        attrs = {"kernel": ints(kernel), "strides": ints(strides), "pads": ints(pads),
                 "ceil_mode": IntegerAttr(int(ceil_mode), i1), **(attributes or {})}
        super().__init__(
            operands=[input], attributes=attrs,
            result_types=self.infer(input.type, kernel, strides, pads, ceil_mode),
        )

    @staticmethod
    def infer(x, kernel, strides, pads, ceil_mode) -> list[Attribute]:
        xs = _shape(x, "input")
        if len(xs) != 4:
            raise VerifyException(f"input must have rank 4, got rank {len(xs)}")
        if len(kernel) != 2 or len(strides) != 2 or len(pads) != 4:
            raise VerifyException("kernel and strides need 2 values, pads 4")
        if min(kernel) < 1 or min(strides) < 1 or min(pads) < 0:
            raise VerifyException("kernel and strides must be positive, pads >= 0")
        oh = _pool_out(xs[2], kernel[0], strides[0], pads[0], pads[2], 1, ceil_mode)
        ow = _pool_out(xs[3], kernel[1], strides[1], pads[1], pads[3], 1, ceil_mode)
        return [TensorType(_elt(x), [xs[0], xs[1], oh, ow])]

    def infer_result_types(self) -> list[Attribute]:
        return self.infer(
            self.input.type, get_ints(self.kernel), get_ints(self.strides),
            get_ints(self.pads), get_bool(self.ceil_mode, False),
        )


@irdl_op_definition
class MaxPool2dOp(Pool2dOp):
    name = "collage.max_pool2d"


@irdl_op_definition
class AvgPool2dOp(Pool2dOp):
    """Average pooling; `count_include_pad` (default false) as in ONNX AveragePool."""

    name = "collage.avg_pool2d"
    count_include_pad = opt_attr_def(BoolAttr)


@irdl_op_definition
class GlobalAvgPool2dOp(GraphOp):
    name = "collage.global_avg_pool2d"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.OUT_EWISE_FUSABLE
    input = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue):
        s = _shape(input.type)
        super().__init__(
            operands=[input], result_types=[TensorType(_elt(input.type), [s[0], s[1], 1, 1])]
        )

    def infer_result_types(self) -> list[Attribute]:
        s = _shape(self.input.type)
        if len(s) != 4:
            raise VerifyException(f"input must have rank 4, got rank {len(s)}")
        return [TensorType(_elt(self.input.type), [s[0], s[1], 1, 1])]


# ---------------------------------------------------------------------------
# Opaque
# ---------------------------------------------------------------------------


@irdl_op_definition
class SoftmaxOp(FloatUnaryOp):
    """`collage.softmax %x {axis = -1 : i64} : tensor<..>`"""

    name = "collage.softmax"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.OPAQUE
    axis = attr_def(IntegerAttr)

    def infer_result_types(self) -> list[Attribute]:
        _axis(get_int(self.axis, -1), len(_shape(self.input.type)))
        return super().infer_result_types()


@irdl_op_definition
class LrnOp(FloatUnaryOp):
    """Local response normalization across channels (ONNX LRN)."""

    name = "collage.lrn"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.OPAQUE
    size = attr_def(IntegerAttr)
    alpha = attr_def(FloatAttr)
    beta = attr_def(FloatAttr)
    bias = attr_def(FloatAttr)

    def infer_result_types(self) -> list[Attribute]:
        if get_int(self.size, 1) < 1:
            raise VerifyException("size must be positive")
        if len(_shape(self.input.type)) < 3:
            raise VerifyException("input must have rank >= 3")
        return super().infer_result_types()


@irdl_op_definition
class LayerNormOp(GraphOp):
    """`collage.layer_norm %x, %scale, %bias {axis = -1 : i64, epsilon = 1e-05 : f32}`:
    normalizes over dimensions axis..rank-1; scale and bias have those dimensions."""

    name = "collage.layer_norm"
    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.OPAQUE
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    axis = attr_def(IntegerAttr)
    epsilon = attr_def(FloatAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $scale `,` $bias attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, input: SSAValue, scale: SSAValue, bias: SSAValue, axis: int,
                 epsilon: float):
        super().__init__(
            operands=[input, scale, bias],
            attributes={"axis": IntegerAttr(axis, i64), "epsilon": FloatAttr(epsilon, f32)},
            result_types=[input.type],
        )

    def infer_result_types(self) -> list[Attribute]:
        shape = _shape(self.input.type)
        ax = _axis(get_int(self.axis, -1), len(shape))
        _same_elt([o.type for o in self.operands])
        for name in ("scale", "bias"):
            s = _shape(getattr(self, name).type)
            if not _broadcasts_to(s, shape[ax:]):
                raise VerifyException(
                    f"{name} shape {list(s)} does not broadcast to {list(shape[ax:])}"
                )
        return [self.input.type]


class ChannelNormOp(GraphOp, ABC):
    """Normalizes an N x C x ... input over groups of channels and the spatial dimensions,
    then scales and shifts per channel: `scale` and `bias` have shape [C]."""

    PATTERN_KIND: ClassVar[OpPatternKind] = OpPatternKind.OPAQUE
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    epsilon = attr_def(FloatAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $scale `,` $bias attr-dict `:` functional-type(operands, results)"
    )
    MIN_RANK: ClassVar[int] = 3

    def groups(self) -> int:
        return _shape(self.input.type)[1]

    def infer_result_types(self) -> list[Attribute]:
        shape = _shape(self.input.type)
        if len(shape) < self.MIN_RANK:
            raise VerifyException(f"input must have rank >= {self.MIN_RANK}, got {len(shape)}")
        _same_elt([o.type for o in self.operands])
        for name in ("scale", "bias"):
            s = _shape(getattr(self, name).type)
            if s != shape[1:2]:
                raise VerifyException(f"{name} shape {list(s)} must be [{shape[1]}]")
        return [self.input.type]


@irdl_op_definition
class InstanceNormOp(ChannelNormOp):
    """`collage.instance_norm %x, %scale, %bias {epsilon = 1e-05 : f32}`: each channel of
    each sample normalized over the spatial dimensions (ONNX InstanceNormalization)."""

    name = "collage.instance_norm"

    def __init__(self, input: SSAValue, scale: SSAValue, bias: SSAValue, epsilon: float):
        super().__init__(operands=[input, scale, bias], result_types=[input.type],
                         attributes={"epsilon": FloatAttr(epsilon, f32)})


@irdl_op_definition
class GroupNormOp(ChannelNormOp):
    """`collage.group_norm %x, %scale, %bias {num_groups = 2 : i64, epsilon = 1e-05 : f32}`:
    each of `num_groups` groups of channels normalized together (ONNX GroupNormalization
    in its opset-21 form, with a per-channel scale and bias)."""

    name = "collage.group_norm"
    num_groups = attr_def(IntegerAttr)
    MIN_RANK: ClassVar[int] = 2

    def __init__(self, input: SSAValue, scale: SSAValue, bias: SSAValue, num_groups: int,
                 epsilon: float):
        attrs = {"num_groups": IntegerAttr(num_groups, i64), "epsilon": FloatAttr(epsilon, f32)}
        super().__init__(operands=[input, scale, bias], result_types=[input.type],
                         attributes=attrs)

    def groups(self) -> int:
        return get_int(self.num_groups, 1)

    def infer_result_types(self) -> list[Attribute]:
        result = super().infer_result_types()
        channels, groups = _shape(self.input.type)[1], self.groups()
        if groups < 1 or channels % groups:
            raise VerifyException(f"num_groups {groups} must divide the {channels} channels")
        return result


# ---------------------------------------------------------------------------
# Kernel regions (Phase 4 of the partitioner)
# ---------------------------------------------------------------------------


class RegionOp(IRDLOperation, ABC):
    """A sub-graph wrapped in a single-block region, isolated from above: the block
    arguments stand for `inputs` and `collage.yield` gives the `outputs`."""

    inputs = var_operand_def(AnyAttr())
    outputs = var_result_def(AnyAttr())
    body = region_def("single_block")

    def __init__(self, inputs: Sequence[SSAValue], output_types: Sequence[Attribute],
                 body: Region, attributes: dict[str, Attribute]):
        super().__init__(operands=[list(inputs)], result_types=[list(output_types)],
                         regions=[body], attributes=attributes)

    def verify_(self) -> None:
        block = self.body.block
        arg_types = [a.type for a in block.args]
        in_types = [v.type for v in self.inputs]
        if arg_types != in_types:
            raise VerifyException(
                f"block argument types ({', '.join(map(str, arg_types))}) do not match the "
                f"input types ({', '.join(map(str, in_types))})"
            )
        last = block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException(f"{self.name} must end with collage.yield")
        yielded = [v.type for v in last.values]
        out_types = [r.type for r in self.outputs]
        if yielded != out_types:
            raise VerifyException(
                f"yielded types ({', '.join(map(str, yielded))}) do not match the result "
                f"types ({', '.join(map(str, out_types))})"
            )

    def inline(self) -> list[Operation]:
        """Move the body before this op, its arguments bound to `inputs`, and replace the
        op's results with what the body yields; the op is erased. Returns the moved ops in
        order, the terminator left out."""
        block = self.body.block
        terminator = block.last_op
        assert terminator is not None
        values = list(terminator.operands)
        body = [op for op in block.ops if op is not terminator]
        Rewriter.inline_block(block, InsertPoint.before(self), list(self.inputs))
        for result, value in zip(self.results, values):
            result.replace_all_uses_with(value)
        Rewriter.erase_op(terminator)
        Rewriter.erase_op(self)
        return body


BACKEND_ENTRY_POINTS = "collage_xdsl.backends"
"""The entry-point group backends are registered under (`collage_xdsl.backends`)."""
RUNTIME_BACKENDS: set[str] = set()
"""Backends registered in this process (`collage_xdsl.backends.register_backend`)."""


@cache
def installed_backends() -> frozenset[str]:
    """The backends installed as entry points (read once per process)."""
    return frozenset(e.name for e in entry_points(group=BACKEND_ENTRY_POINTS))


def backend_names() -> list[str]:
    """The names a `collage.kernel` may give: installed backends and those registered in
    this process."""
    return sorted(installed_backends() | RUNTIME_BACKENDS)


@irdl_op_definition
class KernelOp(RegionOp):
    """A chosen candidate kernel: its sub-graph, the backend that runs it, a label and
    the estimated cost in seconds (absent when not estimated; NaN = unknown, inf = invalid).

        %r = collage.kernel "tvm"(%x, %w) {label = "conv2d_relu", cost = 1.5e-04 : f64}
                 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
        ^bb0(%a: tensor<1x3x8x8xf32>, %b: tensor<4x3x3x3xf32>):
          %c = collage.conv2d %a, %b {...} : (...) -> tensor<1x4x6x6xf32>
          %d = collage.relu %c : tensor<1x4x6x6xf32>
          collage.yield %d : tensor<1x4x6x6xf32>
        }
    """

    name = "collage.kernel"
    backend = attr_def(StringAttr)
    label = opt_attr_def(StringAttr)
    cost = opt_attr_def(FloatAttr)
    traits = traits_def(IsolatedFromAbove())
    assembly_format = (
        "$backend `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs) $body"
    )

    def __init__(self, backend: str, inputs: Sequence[SSAValue],
                 output_types: Sequence[Attribute], body: Region, label: str = "",
                 cost: float | None = None):
        attrs: dict[str, Attribute] = {"backend": StringAttr(backend)}
        if label:
            attrs["label"] = StringAttr(label)
        if cost is not None:
            attrs["cost"] = FloatAttr(cost, f64)
        super().__init__(inputs, output_types, body, attrs)

    def verify_(self) -> None:
        """Also: its backend is a known one (`backend_names`), it is not nested in a kernel
        (or a part or an outlined function of one), and a cost, when given, is not
        negative."""
        super().verify_()
        known = backend_names()
        if self.backend.data not in known:
            raise VerifyException(f"collage.kernel names unknown backend "
                                  f"{self.backend.data!r} (registered: {', '.join(known)})")
        parent = self.parent_op()
        while parent is not None:
            if isinstance(parent, RegionOp):
                raise VerifyException(f"collage.kernel cannot be nested in a {parent.name}")
            if isinstance(parent, FuncOp) and "collage.kernel" in parent.attributes:
                raise VerifyException("collage.kernel cannot be nested in the kernel "
                                      f"function @{parent.sym_name.data}")
            parent = parent.parent_op()
        if self.cost is not None and self.cost.value.data < 0:
            raise VerifyException(f"cost {self.cost.value.data} is negative (seconds; NaN "
                                  "= unknown, inf = invalid)")


@irdl_op_definition
class CompositeOp(RegionOp):
    """A labelled part of a kernel (a BYOC "Composite", e.g. a matched pattern): nested
    inside a `collage.kernel` or an outlined kernel function.

        %r = collage.composite "conv2d_relu" (%a, %b) : (...) -> tensor<...> { ... }
    """

    name = "collage.composite"
    label = attr_def(StringAttr)
    traits = traits_def(IsolatedFromAbove())
    assembly_format = (
        "$label `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs) $body"
    )

    def __init__(self, label: str, inputs: Sequence[SSAValue],
                 output_types: Sequence[Attribute], body: Region):
        super().__init__(inputs, output_types, body, {"label": StringAttr(label)})

    def verify_(self) -> None:
        """Also: in a block that holds kernels (a partitioned function), a composite is
        inside one of them, not beside them on no backend. (A composite directly in a
        function is fine otherwise: kernel functions, extracted or outlined, hold them.)"""
        super().verify_()
        block = self.parent_block()
        if block is not None and any(isinstance(op, KernelOp) for op in block.ops):
            raise VerifyException("collage.composite must be inside a collage.kernel when "
                                  "its function holds kernels")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """`collage.yield %a, %b : tensor<..>, tensor<..>` ends a kernel or composite region."""

    name = "collage.yield"
    values = var_operand_def(AnyAttr())
    traits = traits_def(IsTerminator(), HasParent(KernelOp, CompositeOp), Pure())
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[list(values)])


Collage = Dialect(
    "collage",
    [
        ConstantOp, TupleOp, GetItemOp,
        ReluOp, SigmoidOp, TanhOp, ErfOp, ExpOp, LogOp, SqrtOp, ReciprocalOp, NegOp, AbsOp,
        NotOp, LeakyReluOp, ClipOp, GeluOp, CastOp,
        QuantizeLinearOp, DequantizeLinearOp,
        HardSigmoidOp, HardSwishOp, MishOp, EluOp, SoftplusOp, SeluOp, PReluOp,
        AddOp, SubOp, MulOp, DivOp, PowOp, MaximumOp, MinimumOp, EqualOp, LessOp, GreaterOp,
        WhereOp, BatchNormOp, ExpandOp,
        ReshapeOp, TransposeOp, ConcatOp, SplitOp, SliceOp, GatherOp, PadOp,
        TileOp, ResizeOp,
        GatherElementsOp, GatherNdOp, ScatterNdOp, TopKOp, CumSumOp,
        ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceL2Op, ArgMaxOp,
        Conv2dOp, ConvTranspose2dOp, MatmulOp, MaxPool2dOp, AvgPool2dOp, GlobalAvgPool2dOp,
        EinsumOp,
        SoftmaxOp, LrnOp, LayerNormOp, InstanceNormOp, GroupNormOp,
        KernelOp, CompositeOp, YieldOp,
    ],
    [WeightAttr],
)
