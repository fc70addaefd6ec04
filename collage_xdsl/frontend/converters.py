"""One converter per ONNX op type: an ONNX node -> `collage` ops.

A converter gets a `NodeContext` (attributes, inputs, `emit`) and returns the node's
outputs in order: SSA values, numpy arrays (constants), or None for an output the
dialect does not model (an error if the model uses it). Nodes whose inputs are all
constant never reach a converter: the importer folds them.

    Gemm(a, b, c) transB -> collage.matmul %a, %bT ; collage.add                (bT folded)

The 2-D window ops' converters are in `collage_xdsl.frontend.window_converters`.
Resize's and Tile's are in `collage_xdsl.frontend.shape_converters`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, StringAttr, f32, i64
from xdsl.ir import SSAValue

from collage_xdsl.dialects import collage as C
from collage_xdsl.frontend.context import NodeContext, Value, onnx_dtype
from collage_xdsl.ir.tensors import constant_op, np_dtype

Converter = Callable[[NodeContext], Sequence[Value | None]]
CONVERTERS: dict[str, Converter] = {}


def converter(*op_types: str) -> Callable[[Converter], Converter]:
    def register(fn: Converter) -> Converter:
        for op_type in op_types:
            CONVERTERS[op_type] = fn
        return fn

    return register


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _constant(ctx: NodeContext, array: np.ndarray) -> SSAValue:
    ctx.element_type(array.dtype)
    op = constant_op(array)
    ctx.importer.block.add_op(op)
    return op.results[0]


def _dtype(ctx: NodeContext, i: int) -> np.dtype:
    return np_dtype(ctx.type(i).get_element_type())


def _reshape(ctx: NodeContext, value: SSAValue, shape: Sequence[int]) -> SSAValue:
    if tuple(value.type.get_shape()) == tuple(shape):  # type: ignore[attr-defined]
        return value
    return ctx.emit(C.ReshapeOp, value, list(shape))


def _axes(ctx: NodeContext, attr_until: int, i: int) -> list[int] | None:
    """`axes`: an attribute before opset `attr_until`, a (constant) input `i` from then on."""
    if ctx.opset < attr_until:
        return ctx.ints_attr("axes")
    return [int(a) for a in ctx.const(i, "axes").reshape(-1)] if ctx.has(i) else None


def _norm(ctx: NodeContext, axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def _only_output_0(ctx: NodeContext) -> None:
    for i in range(1, len(ctx.node.output)):
        if ctx.output_used(i):
            raise ctx.error(f"output {i} ('{ctx.node.output[i]}') is used; only inference "
                            "output 0 is supported")


# ---------------------------------------------------------------------------
# Element-wise and broadcast ops
# ---------------------------------------------------------------------------

_UNARY = {
    "Relu": C.ReluOp, "Sigmoid": C.SigmoidOp, "Tanh": C.TanhOp, "Erf": C.ErfOp,
    "Exp": C.ExpOp, "Log": C.LogOp, "Sqrt": C.SqrtOp, "Reciprocal": C.ReciprocalOp,
    "Neg": C.NegOp, "Abs": C.AbsOp, "Not": C.NotOp,
    "HardSwish": C.HardSwishOp, "Mish": C.MishOp, "Softplus": C.SoftplusOp,
}

_BINARY = {
    "Add": C.AddOp, "Sub": C.SubOp, "Mul": C.MulOp, "Div": C.DivOp, "Pow": C.PowOp,
    "Equal": C.EqualOp, "Less": C.LessOp, "Greater": C.GreaterOp, "PRelu": C.PReluOp,
}

_VARIADIC = {"Sum": C.AddOp, "Max": C.MaximumOp, "Min": C.MinimumOp}


@converter(*_UNARY)
def convert_unary(ctx: NodeContext):
    return [ctx.emit(_UNARY[ctx.node.op_type], ctx.value(0))]


_FLOAT_ATTRS = {  # op type: its op and float attributes with ONNX's defaults (as f32)
    "LeakyRelu": (C.LeakyReluOp, {"alpha": 0.01}), "Elu": (C.EluOp, {"alpha": 1.0}),
    "HardSigmoid": (C.HardSigmoidOp, {"alpha": 0.2, "beta": 0.5}),
    "Selu": (C.SeluOp, {"alpha": 1.6732632, "gamma": 1.050701}),
}


@converter(*_FLOAT_ATTRS)
def convert_float_attrs(ctx: NodeContext):
    op, defaults = _FLOAT_ATTRS[ctx.node.op_type]
    attrs = {name: FloatAttr(ctx.attr(name, d), f32) for name, d in defaults.items()}
    return [ctx.emit(op, ctx.value(0), attrs)]


@converter("Gelu")
def convert_gelu(ctx: NodeContext):
    approximate = ctx.attr("approximate", "none")
    attrs = {} if approximate == "none" else {"approximate": StringAttr(approximate)}
    return [ctx.emit(C.GeluOp, ctx.value(0), attrs)]


@converter("Clip")
def convert_clip(ctx: NodeContext):
    if ctx.opset < 11:
        bounds = {"min": ctx.attr("min"), "max": ctx.attr("max")}
    else:
        bounds = {
            name: float(ctx.const(i, name).reshape(())) if ctx.has(i) else None
            for i, name in ((1, "min"), (2, "max"))
        }
    attrs = {k: FloatAttr(v, f32) for k, v in bounds.items() if v is not None}
    return [ctx.emit(C.ClipOp, ctx.value(0), attrs)]


@converter("Cast")
def convert_cast(ctx: NodeContext):
    elt = ctx.element_type(onnx_dtype(ctx.attr("to")))
    if ctx.type(0).get_element_type() == elt:
        return [ctx.value(0)]
    return [ctx.emit(C.CastOp, ctx.value(0), elt)]


@converter(*_BINARY)
def convert_binary(ctx: NodeContext):
    rhs = ctx.value(1)
    if ctx.node.op_type == "Pow" and ctx.is_const(1) and _dtype(ctx, 1) != _dtype(ctx, 0):
        rhs = _constant(ctx, ctx.const(1, "Y").astype(_dtype(ctx, 0)))
    return [ctx.emit(_BINARY[ctx.node.op_type], ctx.value(0), rhs)]


@converter(*_VARIADIC)
def convert_variadic(ctx: NodeContext):
    result = ctx.value(ctx.inputs()[0])
    for i in ctx.inputs()[1:]:
        result = ctx.emit(_VARIADIC[ctx.node.op_type], result, ctx.value(i))
    return [result]


@converter("Where")
def convert_where(ctx: NodeContext):
    return [ctx.emit(C.WhereOp, ctx.value(0), ctx.value(1), ctx.value(2))]


@converter("Identity")
def convert_identity(ctx: NodeContext):
    return [ctx.raw(0)]


@converter("Dropout")
def convert_dropout(ctx: NodeContext):
    """Inference: the identity; the mask, if used, is all true."""
    if ctx.has(2) and bool(ctx.const(2, "training_mode").reshape(())):
        raise ctx.error("training_mode is true; only inference is supported")
    mask = np.ones(ctx.shape(0), dtype=np.bool_) if ctx.output_used(1) else None
    return [ctx.raw(0), mask]


@converter("BatchNormalization")
def convert_batch_norm(ctx: NodeContext):
    if ctx.attr("training_mode", 0):
        raise ctx.error("training_mode is set; only inference is supported")
    _only_output_0(ctx)
    eps = ctx.attr("epsilon", 1e-5)
    return [ctx.emit(C.BatchNormOp, *(ctx.value(i) for i in range(5)), eps)]


@converter("LayerNormalization")
def convert_layer_norm(ctx: NodeContext):
    _only_output_0(ctx)
    bias = ctx.value(2) if ctx.has(2) else _constant(
        ctx, np.zeros(ctx.shape(1), dtype=_dtype(ctx, 1))
    )
    return [ctx.emit(C.LayerNormOp, ctx.value(0), ctx.value(1), bias,
                     ctx.attr("axis", -1), ctx.attr("epsilon", 1e-5))]


# ---------------------------------------------------------------------------
# Layout ops (all reshapes become collage.reshape)
# ---------------------------------------------------------------------------


@converter("Reshape")
def convert_reshape(ctx: NodeContext):
    src = ctx.shape(0)
    dims = [int(d) for d in ctx.const(1, "shape").reshape(-1)]
    if not ctx.attr("allowzero", 0):
        dims = [src[i] if d == 0 else d for i, d in enumerate(dims)]
    if dims.count(-1) > 1 or any(d < -1 for d in dims):
        raise ctx.error(f"invalid target shape {dims}")
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or math.prod(src) % known:
            raise ctx.error(f"cannot reshape {list(src)} to {dims}")
        dims[dims.index(-1)] = math.prod(src) // known
    return [_reshape(ctx, ctx.value(0), dims)]


@converter("Flatten")
def convert_flatten(ctx: NodeContext):
    src = ctx.shape(0)
    axis = ctx.attr("axis", 1)
    axis += len(src) if axis < 0 else 0
    if not 0 <= axis <= len(src):
        raise ctx.error(f"axis {ctx.attr('axis')} is out of range for rank {len(src)}")
    return [_reshape(ctx, ctx.value(0), [math.prod(src[:axis]), math.prod(src[axis:])])]


@converter("Squeeze")
def convert_squeeze(ctx: NodeContext):
    src = ctx.shape(0)
    axes = _axes(ctx, 13, 1)
    drop = {i for i, d in enumerate(src) if d == 1} if axes is None else {
        _norm(ctx, a, len(src)) for a in axes
    }
    if any(src[a] != 1 for a in drop):
        raise ctx.error(f"cannot squeeze axes {sorted(drop)} of shape {list(src)}")
    return [_reshape(ctx, ctx.value(0), [d for i, d in enumerate(src) if i not in drop])]


@converter("Unsqueeze")
def convert_unsqueeze(ctx: NodeContext):
    src = ctx.shape(0)
    axes = _axes(ctx, 13, 1)
    if axes is None:
        raise ctx.error("axes are required")
    rank = len(src) + len(axes)
    new = {_norm(ctx, a, rank) for a in axes}
    rest = iter(src)
    return [_reshape(ctx, ctx.value(0), [1 if i in new else next(rest) for i in range(rank)])]


@converter("Expand")
def convert_expand(ctx: NodeContext):
    return [ctx.emit(C.ExpandOp, ctx.value(0), [int(d) for d in ctx.const(1, "shape")])]


@converter("Transpose")
def convert_transpose(ctx: NodeContext):
    perm = ctx.ints_attr("perm", list(reversed(range(len(ctx.shape(0))))))
    return [ctx.emit(C.TransposeOp, ctx.value(0), perm)]


@converter("Concat")
def convert_concat(ctx: NodeContext):
    return [ctx.emit(C.ConcatOp, [ctx.value(i) for i in ctx.inputs()], ctx.attr("axis"))]


@converter("Split")
def convert_split(ctx: NodeContext):
    shape = ctx.shape(0)
    axis = _norm(ctx, ctx.attr("axis", 0), len(shape))
    if ctx.opset < 13:
        sizes = ctx.ints_attr("split")
    else:
        sizes = [int(s) for s in ctx.const(1, "split")] if ctx.has(1) else None
    if sizes is None:
        num, dim = ctx.attr("num_outputs"), shape[axis]
        if num:  # opset 18: ceil-sized chunks, the last one smaller
            chunk = -(-dim // num)
            sizes = [max(min(chunk, dim - chunk * j), 0) for j in range(num)]
        elif dim % len(ctx.node.output):
            raise ctx.error(f"dimension {dim} does not split evenly into "
                            f"{len(ctx.node.output)} outputs")
        else:
            sizes = [dim // len(ctx.node.output)] * len(ctx.node.output)
    op = ctx.emit_op(C.SplitOp, ctx.value(0), axis, sizes)
    return list(op.results)


@converter("Slice")
def convert_slice(ctx: NodeContext):
    if ctx.opset < 10:
        starts, ends = ctx.ints_attr("starts"), ctx.ints_attr("ends")
        axes = ctx.ints_attr("axes", range(len(starts)))
        steps = [1] * len(starts)
    else:
        starts = [int(v) for v in ctx.const(1, "starts")]
        ends = [int(v) for v in ctx.const(2, "ends")]
        axes = [int(v) for v in ctx.const(3, "axes")] if ctx.has(3) else list(range(len(starts)))
        steps = [int(v) for v in ctx.const(4, "steps")] if ctx.has(4) else [1] * len(starts)
    shape = ctx.shape(0)
    dims = [shape[_norm(ctx, a, len(shape))] for a in axes]
    # clamping to [-dim-1, dim] keeps the meaning and drops INT64_MAX-style sentinels
    starts = [min(max(s, -d - 1), d) for s, d in zip(starts, dims)]
    ends = [min(max(e, -d - 1), d) for e, d in zip(ends, dims)]
    return [ctx.emit(C.SliceOp, ctx.value(0), starts, ends, axes, steps)]


@converter("Gather")
def convert_gather(ctx: NodeContext):
    return [ctx.emit(C.GatherOp, ctx.value(0), ctx.value(1), ctx.attr("axis", 0))]


@converter("Pad")
def convert_pad(ctx: NodeContext):
    if ctx.attr("mode", "constant") != "constant":
        raise ctx.error(f"mode '{ctx.attr('mode')}' is not supported, only 'constant'")
    rank = len(ctx.shape(0))
    if ctx.opset < 11:
        pads, value = ctx.ints_attr("pads"), float(ctx.attr("value", 0.0))
    else:
        pads = [int(p) for p in ctx.const(1, "pads")]
        value = float(ctx.const(2, "constant_value").reshape(())) if ctx.has(2) else 0.0
        if ctx.has(3):
            axes = [_norm(ctx, int(a), rank) for a in ctx.const(3, "axes")]
            full = [0] * (2 * rank)
            for j, a in enumerate(axes):
                full[a], full[a + rank] = pads[j], pads[j + len(axes)]
            pads = full
    return [ctx.emit(C.PadOp, ctx.value(0), pads, value)]


# ---------------------------------------------------------------------------
# Reductions, softmax, normalization
# ---------------------------------------------------------------------------

_REDUCE = {"ReduceSum": (C.ReduceSumOp, 13), "ReduceMean": (C.ReduceMeanOp, 18),
           "ReduceMax": (C.ReduceMaxOp, 18), "ReduceMin": (C.ReduceMinOp, 18),
           "ReduceL2": (C.ReduceL2Op, 18)}


@converter(*_REDUCE)
def convert_reduce(ctx: NodeContext):
    op, attr_until = _REDUCE[ctx.node.op_type]
    axes = _axes(ctx, attr_until, 1) or None
    if axes is None and ctx.attr("noop_with_empty_axes", 0):
        return [ctx.value(0)]
    return [ctx.emit(op, ctx.value(0), axes, bool(ctx.attr("keepdims", 1)))]


@converter("Softmax")
def convert_softmax(ctx: NodeContext):
    """From opset 13 along one axis; before, over the input coerced to 2-D at `axis`,
    which is along `axis` when only 1s follow it (a classifier's N x 1000 x 1 x 1)."""
    shape = ctx.shape(0)
    axis = _norm(ctx, ctx.attr("axis", -1 if ctx.opset >= 13 else 1), len(shape))
    if ctx.opset >= 13 or all(d == 1 for d in shape[axis + 1:]):
        attrs = {"axis": IntegerAttr(axis if ctx.opset >= 13 else axis - len(shape), i64)}
        return [ctx.emit(C.SoftmaxOp, ctx.value(0), attrs)]
    attrs = {"axis": IntegerAttr(-1, i64)}
    flat = _reshape(ctx, ctx.value(0), [math.prod(shape[:axis]), math.prod(shape[axis:])])
    return [_reshape(ctx, ctx.emit(C.SoftmaxOp, flat, attrs), shape)]


@converter("LRN")
def convert_lrn(ctx: NodeContext):
    attrs = {
        "size": IntegerAttr(ctx.attr("size"), i64),
        "alpha": FloatAttr(ctx.attr("alpha", 1e-4), f32),
        "beta": FloatAttr(ctx.attr("beta", 0.75), f32),
        "bias": FloatAttr(ctx.attr("bias", 1.0), f32),
    }
    return [ctx.emit(C.LrnOp, ctx.value(0), attrs)]


# ---------------------------------------------------------------------------
# Convolution, matmul, pooling
# ---------------------------------------------------------------------------


def _transposed(ctx: NodeContext, i: int) -> SSAValue:
    if ctx.is_const(i):
        return _constant(ctx, np.ascontiguousarray(ctx.const(i, "").T))
    return ctx.emit(C.TransposeOp, ctx.value(i), [1, 0])


@converter("Gemm")
def convert_gemm(ctx: NodeContext):
    """alpha * A' B' + beta * C; transposes fold into constants, scales appear only if != 1."""
    a = _transposed(ctx, 0) if ctx.attr("transA", 0) else ctx.value(0)
    b = _transposed(ctx, 1) if ctx.attr("transB", 0) else ctx.value(1)
    dtype = _dtype(ctx, 0)
    out = ctx.emit(C.MatmulOp, a, b)
    alpha, beta = ctx.attr("alpha", 1.0), ctx.attr("beta", 1.0)
    if alpha != 1.0:
        out = ctx.emit(C.MulOp, out, _constant(ctx, np.array(alpha, dtype=dtype)))
    if not ctx.has(2):
        return [out]
    if beta == 1.0:
        c = ctx.value(2)
    elif ctx.is_const(2):
        c = _constant(ctx, (ctx.const(2, "C") * beta).astype(dtype))
    else:
        c = ctx.emit(C.MulOp, ctx.value(2), _constant(ctx, np.array(beta, dtype=dtype)))
    return [ctx.emit(C.AddOp, out, c)]


@converter("MatMul")
def convert_matmul(ctx: NodeContext):
    return [ctx.emit(C.MatmulOp, ctx.value(0), ctx.value(1))]
