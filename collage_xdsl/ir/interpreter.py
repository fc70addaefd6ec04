"""A numpy reference interpreter for the `collage` dialect, with ONNX semantics.

`run_function` executes any `func.func` of collage ops (a whole model or one
extracted kernel), following `func.call` into functions of the same module and
running the bodies of `collage.kernel` / `collage.composite` regions:

    results = run_module(module, [x])            # func @main(%x) -> ...
    (y,) = evaluate_op(relu_op, [x])             # one op

Every op is vectorised (convolution by im2col + matmul, pooling and LRN by
sliding windows) and computes in its operands' dtype, as ONNX Runtime does for
float32; float16 operands compute in float32, each float16 result rounded
(`collage_xdsl.ir.half`). Each result is checked against the op's IR result type; an
intermediate is dropped as soon as its last user has run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.dialects.builtin import ModuleOp, TensorType, TupleType
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import SymbolTable

from collage_xdsl.dialects import collage as C
from collage_xdsl.dialects.collage import get_bool, get_float, get_int, get_ints
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.half import narrow, widen
from collage_xdsl.ir.indexing import cumsum, gather_elements, gather_nd, scatter_nd, top_k
from collage_xdsl.ir.normalization import batch_norm, channel_norm, layer_norm
from collage_xdsl.ir.quantize import dequantize_linear, quantize_linear
from collage_xdsl.ir.resize import resize
from collage_xdsl.ir.tensors import constant_array, np_dtype, shape_of
from collage_xdsl.ir.windows import avg_pool, conv2d, conv_transpose2d, max_pool

Value = np.ndarray | tuple


class InterpreterError(CollageError):
    """An op the interpreter cannot execute, or inputs that do not fit the IR."""


# ---------------------------------------------------------------------------
# Type checks
# ---------------------------------------------------------------------------


def _describe(t: Attribute) -> str:
    if isinstance(t, TensorType):
        return f"{np_dtype(t.get_element_type())}{list(shape_of(t))}"
    return str(t)


def _mismatch(value: Value, t: Attribute) -> str | None:
    """Why ``value`` does not have IR type ``t`` (None when it does)."""
    if isinstance(t, TupleType):
        types = t.types.data
        if not isinstance(value, tuple) or len(value) != len(types):
            return f"expected a tuple of {len(types)}, got {type(value).__name__}"
        for i, (v, et) in enumerate(zip(value, types)):
            if (why := _mismatch(v, et)) is not None:
                return f"element {i}: {why}"
        return None
    if not isinstance(value, np.ndarray):
        return f"expected an array, got {type(value).__name__}"
    want_dtype, want_shape = np_dtype(t.get_element_type()), shape_of(t)
    if value.dtype != want_dtype or value.shape != want_shape:
        return f"expected {_describe(t)}, got {value.dtype}{list(value.shape)}"
    return None


# ---------------------------------------------------------------------------
# Element-wise helpers
# ---------------------------------------------------------------------------


def _scalar(x: np.ndarray, value: float):
    return x.dtype.type(value)


def _erf(x: np.ndarray) -> np.ndarray:
    """erf, vectorised: a Taylor series near 0 and Numerical Recipes' erfc (rel. err. < 1.2e-7)
    elsewhere, evaluated in float64."""
    wide = x.astype(np.float64)
    z = np.abs(wide)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = 0.17087277
    for c in (-0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418,
              0.37409196, 1.00002368, -1.26551223):
        poly = c + t * poly
    far = np.sign(wide) * (1.0 - t * np.exp(-z * z + poly))
    z2 = z * z
    series = 0.0
    for n in range(12, -1, -1):
        series = (-1) ** n / (math.factorial(n) * (2 * n + 1)) + z2 * series
    near = 2.0 / math.sqrt(math.pi) * wide * series
    return np.where(z < 0.5, near, far).astype(x.dtype)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(x))
    one = _scalar(x, 1)
    return np.where(x >= 0, one / (one + e), e / (one + e))


def _gelu(op: C.GeluOp, x: np.ndarray) -> np.ndarray:
    half, one = _scalar(x, 0.5), _scalar(x, 1)
    if op.approximate is not None and op.approximate.data == "tanh":
        inner = _scalar(x, math.sqrt(2 / math.pi)) * (x + _scalar(x, 0.044715) * x * x * x)
        return half * x * (one + np.tanh(inner))
    return half * x * (one + _erf(x / _scalar(x, math.sqrt(2))))


def _clip(op: C.ClipOp, x: np.ndarray) -> np.ndarray:
    if op.min is not None:
        x = np.maximum(x, _scalar(x, get_float(op.min, 0.0)))
    if op.max is not None:
        x = np.minimum(x, _scalar(x, get_float(op.max, 0.0)))
    return x


def _hard_sigmoid(x: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    return np.clip(_scalar(x, alpha) * x + _scalar(x, beta), _scalar(x, 0), _scalar(x, 1))


def _elu(x: np.ndarray, alpha: float) -> np.ndarray:
    return np.where(x > 0, x, _scalar(x, alpha) * np.expm1(x))


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return a / b
    if (b == 0).any():
        raise ValueError("integer division by zero")
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q).astype(a.dtype)


def _reduce_sum(op: C.ReduceOp, x: np.ndarray) -> np.ndarray:
    return np.sum(x, axis=op.reduced_axes(), keepdims=get_bool(op.keepdims, True), dtype=x.dtype)


def _reduce_mean(op: C.ReduceOp, x: np.ndarray) -> np.ndarray:
    mean = np.mean(x, axis=op.reduced_axes(), keepdims=get_bool(op.keepdims, True))
    return mean.astype(x.dtype, copy=False)


def _reduce_max(op: C.ReduceOp, x: np.ndarray) -> np.ndarray:
    return np.max(x, axis=op.reduced_axes(), keepdims=get_bool(op.keepdims, True))


def _reduce_l2(op: C.ReduceOp, x: np.ndarray) -> np.ndarray:
    return np.sqrt(_reduce_sum(op, x * x))


def _argmax(op: C.ArgMaxOp, x: np.ndarray) -> np.ndarray:
    return np.argmax(x, axis=get_int(op.axis, 0), keepdims=get_bool(op.keepdims, True))


# ---------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------


def _softmax(op: C.SoftmaxOp, x: np.ndarray) -> np.ndarray:
    axis = get_int(op.axis, -1)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _lrn(op: C.LrnOp, x: np.ndarray) -> np.ndarray:
    """ONNX LRN: x / (bias + alpha / size * sum of squares over neighbouring channels) ** beta."""
    size = get_int(op.size, 1)
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    pad = [(0, 0)] * x.ndim
    pad[1] = (before, after)
    squares = np.pad(x * x, pad)
    window_sum = sliding_window_view(squares, size, axis=1).sum(axis=-1)
    alpha, beta, bias = (get_float(a, 0.0) for a in (op.alpha, op.beta, op.bias))
    scale = _scalar(x, bias) + _scalar(x, alpha / size) * window_sum
    return x / scale ** _scalar(x, beta)


# ---------------------------------------------------------------------------
# Layout
# ---------------------------------------------------------------------------


def _concat(op: C.ConcatOp, *inputs: Value) -> np.ndarray:
    arrays = inputs[0] if len(inputs) == 1 and isinstance(inputs[0], tuple) else inputs
    return np.concatenate(arrays, axis=get_int(op.axis, 0))


def _split(op: C.SplitOp, x: np.ndarray) -> list[np.ndarray]:
    bounds = np.cumsum(get_ints(op.sizes))[:-1]
    return np.split(x, bounds, axis=get_int(op.axis, 0))


def _slice(op: C.SliceOp, x: np.ndarray) -> np.ndarray:
    return x[C.SliceOp.slices(x.shape, get_ints(op.starts), get_ints(op.ends),
                              get_ints(op.axes), get_ints(op.steps))]


def _gather(op: C.GatherOp, data: np.ndarray, indices: np.ndarray) -> np.ndarray:
    axis = get_int(op.axis, 0)
    n = data.shape[axis]
    if indices.size and (indices.min() < -n or indices.max() >= n):
        raise ValueError(f"indices out of range [{-n}, {n - 1}] on axis {axis}")
    return np.take(data, indices, axis=axis)


def _pad(op: C.PadOp, x: np.ndarray) -> np.ndarray:
    pads = get_ints(op.pads)
    r = x.ndim
    return np.pad(x, [(pads[i], pads[i + r]) for i in range(r)],
                  constant_values=_scalar(x, get_float(op.value, 0.0)))


def _result_dtype(op: Operation) -> np.dtype:
    return np_dtype(op.results[0].type.get_element_type())


# ---------------------------------------------------------------------------
# The op table: op class -> (op, *operand values) -> result value or list of results
# ---------------------------------------------------------------------------

_UNARY: dict[type[Operation], Callable[[np.ndarray], np.ndarray]] = {
    C.ReluOp: lambda x: np.maximum(x, _scalar(x, 0)),
    C.SigmoidOp: _sigmoid,
    C.TanhOp: np.tanh,
    C.ErfOp: _erf,
    C.ExpOp: np.exp,
    C.LogOp: np.log,
    C.SqrtOp: np.sqrt,
    C.ReciprocalOp: lambda x: _scalar(x, 1) / x,
    C.NegOp: np.negative,
    C.AbsOp: np.abs,
    C.NotOp: np.logical_not,
    C.HardSwishOp: lambda x: x * _hard_sigmoid(x, 1 / 6, 0.5),
    C.MishOp: lambda x: x * np.tanh(np.logaddexp(_scalar(x, 0), x)),
    C.SoftplusOp: lambda x: np.logaddexp(_scalar(x, 0), x),
}

_BINARY: dict[type[Operation], Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    C.AddOp: np.add,
    C.SubOp: np.subtract,
    C.MulOp: np.multiply,
    C.DivOp: _div,
    C.PowOp: np.power,
    C.MaximumOp: np.maximum,
    C.MinimumOp: np.minimum,
    C.EqualOp: np.equal,
    C.LessOp: np.less,
    C.GreaterOp: np.greater,
    C.PReluOp: lambda x, slope: np.where(x < 0, slope * x, x),
    C.MatmulOp: np.matmul,
}

_IMPLS: dict[type[Operation], Callable[..., Value | list[Value]]] = {
    **{cls: (lambda fn: lambda op, x: fn(x))(fn) for cls, fn in _UNARY.items()},
    **{cls: (lambda fn: lambda op, a, b: fn(a, b))(fn) for cls, fn in _BINARY.items()},
    C.ConstantOp: lambda op: constant_array(op),
    C.TupleOp: lambda op, *elements: tuple(elements),
    C.GetItemOp: lambda op, t: t[get_int(op.index, 0)],
    C.LeakyReluOp: lambda op, x: np.where(x >= 0, x, _scalar(x, get_float(op.alpha, 0.01)) * x),
    C.HardSigmoidOp: lambda op, x: _hard_sigmoid(
        x, get_float(op.alpha, 0.2), get_float(op.beta, 0.5)),
    C.EluOp: lambda op, x: _elu(x, get_float(op.alpha, 1.0)),
    C.SeluOp: lambda op, x: _scalar(x, get_float(op.gamma, 1.0507)) * _elu(
        x, get_float(op.alpha, 1.6733)),
    C.ClipOp: _clip,
    C.GeluOp: _gelu,
    C.CastOp: lambda op, x: x.astype(_result_dtype(op)),
    C.QuantizeLinearOp: quantize_linear,
    C.DequantizeLinearOp: dequantize_linear,
    C.WhereOp: lambda op, c, a, b: np.where(c, a, b),
    C.BatchNormOp: batch_norm,
    C.ExpandOp: lambda op, x: np.broadcast_to(x, shape_of(op.output.type)),
    C.ReshapeOp: lambda op, x: x.reshape(shape_of(op.output.type)),
    C.TransposeOp: lambda op, x: np.transpose(x, get_ints(op.perm)),
    C.ConcatOp: _concat,
    C.SplitOp: _split,
    C.SliceOp: _slice,
    C.GatherOp: _gather,
    C.PadOp: _pad,
    C.TileOp: lambda op, x: np.tile(x, get_ints(op.repeats)),
    C.ResizeOp: resize,
    C.GatherElementsOp: gather_elements,
    C.GatherNdOp: gather_nd,
    C.ScatterNdOp: scatter_nd,
    C.TopKOp: top_k,
    C.CumSumOp: cumsum,
    C.ReduceSumOp: _reduce_sum,
    C.ReduceMeanOp: _reduce_mean,
    C.ReduceMaxOp: _reduce_max,
    C.ReduceMinOp: lambda op, x: np.min(
        x, axis=op.reduced_axes(), keepdims=get_bool(op.keepdims, True)),
    C.ReduceL2Op: _reduce_l2,
    C.ArgMaxOp: _argmax,
    C.Conv2dOp: conv2d,
    C.ConvTranspose2dOp: conv_transpose2d,
    C.MaxPool2dOp: max_pool,
    C.AvgPool2dOp: avg_pool,
    C.GlobalAvgPool2dOp: lambda op, x: x.mean(axis=(2, 3), keepdims=True),
    C.EinsumOp: lambda op, *xs: np.einsum(op.equation.data, *xs, optimize=True),
    C.SoftmaxOp: _softmax,
    C.LrnOp: _lrn,
    C.LayerNormOp: layer_norm,
    C.InstanceNormOp: channel_norm,
    C.GroupNormOp: channel_norm,
}


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def evaluate_op(op: Operation, operands: Sequence[Value]) -> list[Value]:
    """The results of one collage op applied to ``operands`` (arrays, or tuples of arrays)."""
    where = _op_ref(op)
    impl = _IMPLS.get(type(op))
    if impl is None:
        raise InterpreterError(f"{where}: the reference interpreter has no semantics for this op")
    if len(operands) != len(op.operands):
        raise InterpreterError(
            f"{where}: expected {len(op.operands)} operands, got {len(operands)}"
        )
    for i, (value, operand) in enumerate(zip(operands, op.operands)):
        if (why := _mismatch(value, operand.type)) is not None:
            raise InterpreterError(f"{where}: operand {i}: {why}")
    try:
        with np.errstate(all="ignore"):
            produced = impl(op, *(widen(v) for v in operands))
    except (ValueError, IndexError, TypeError, ArithmeticError) as e:
        raise InterpreterError(f"{where}: {e}") from None
    results = list(produced) if isinstance(produced, list) else [produced]
    results = [r if isinstance(r, tuple) else np.asarray(r) for r in results]
    results = [narrow(r, t) for r, t in zip(results, op.result_types)] + results[len(op.results):]
    return _check_results(f"{where}: interpreter bug", results, op)


def _op_ref(op: Operation) -> str:
    """The op's name, its label if any and the name of its first result, e.g.
    `collage.conv2d %conv1`."""
    parts = [op.name]
    if (label := op.attributes.get("label")) is not None:
        parts.append(f'"{label.data}"')
    if op.results and op.results[0].name_hint:
        parts.append(f"%{op.results[0].name_hint}")
    return " ".join(parts)


def _last_uses(ops: Sequence[Operation]) -> list[list[SSAValue]]:
    """For each op position, the values whose last user is that op (or that op's unused results)."""
    last: dict[SSAValue, int] = {}
    for i, op in enumerate(ops):
        for v in op.operands:
            last[v] = i
        for r in op.results:
            last.setdefault(r, i)
    dying: list[list[SSAValue]] = [[] for _ in ops]
    for v, i in last.items():
        dying[i].append(v)
    return dying


def _as_output(value: Value) -> Value:
    if isinstance(value, tuple):
        return tuple(_as_output(v) for v in value)
    return value if value.flags.writeable else value.copy()


def run_function(func: FuncOp, inputs: Sequence[Value]) -> list[Value]:
    """Execute ``func`` on ``inputs``; `func.call` goes to functions of the enclosing module."""
    name = func.sym_name.data
    if func.is_declaration:
        raise InterpreterError(f"@{name}: is a declaration without a body")
    args = func.body.block.args
    if len(inputs) != len(args):
        raise InterpreterError(f"@{name}: expected {len(args)} inputs, got {len(inputs)}")
    values = []
    for i, (arg, value) in enumerate(zip(args, inputs)):
        value = value if isinstance(value, tuple) else np.asarray(value)
        if (why := _mismatch(value, arg.type)) is not None:
            raise InterpreterError(f"@{name}: argument {i} (%{arg.name_hint or i}): {why}")
        values.append(value)
    return [_as_output(v) for v in _run_block(func.body.block, values, f"@{name}")]


def _run_block(block: Block, inputs: Sequence[Value], where: str) -> list[Value]:
    """The values the block's terminator (`func.return` or `collage.yield`) passes on."""
    env: dict[SSAValue, Value] = dict(zip(block.args, inputs))
    ops = list(block.ops)
    dying = _last_uses(ops)
    for i, op in enumerate(ops):
        operands = [env[v] for v in op.operands]
        if isinstance(op, ReturnOp | C.YieldOp):
            return operands
        if isinstance(op, CallOp):
            results = _call(op, operands)
        elif isinstance(op, C.RegionOp):
            results = _run_region(op, operands)
        else:
            results = evaluate_op(op, operands)
        env.update(zip(op.results, results))
        for v in dying[i]:
            del env[v]
    raise InterpreterError(f"{where}: the body does not end in a terminator")


def _check_results(what: str, results: list[Value], op: Operation) -> list[Value]:
    if len(results) != len(op.results):
        raise InterpreterError(f"{what}: {len(results)} results for {len(op.results)}")
    for i, (value, result) in enumerate(zip(results, op.results)):
        if (why := _mismatch(value, result.type)) is not None:
            raise InterpreterError(f"{what}: result {i}: {why}")
    return results


def _run_region(op: C.RegionOp, operands: list[Value]) -> list[Value]:
    """A `collage.kernel` or `collage.composite` runs its body on its inputs."""
    where = _op_ref(op)
    return _check_results(where, _run_block(op.body.block, operands, where), op)


def _call(op: CallOp, operands: list[Value]) -> list[Value]:
    callee = SymbolTable.lookup_symbol(op, op.callee)
    if not isinstance(callee, FuncOp):
        raise InterpreterError(f"func.call: no function {op.callee} in the module")
    return _check_results(f"func.call {op.callee}", run_function(callee, operands), op)


def run_module(module: ModuleOp, inputs: Sequence[Value], entry: str = "main") -> list[Value]:
    """Execute the function ``@entry`` of ``module``."""
    func = SymbolTable.lookup_symbol(module, entry)
    if not isinstance(func, FuncOp):
        raise InterpreterError(f"the module has no function @{entry}")
    return run_function(func, inputs)
