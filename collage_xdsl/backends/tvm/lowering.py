"""The TVM hook: kernel -> Relax module (BlockBuilder, weights as constants) ->
`tvm.compile` for the host CPU -> Relax VM.

    func.func @k(%x: tensor<1x8xf32>) -> tensor<1x8xf32>      @main(in0: R.Tensor((1, 8)))
      %r = collage.relu %x                             ->       lv = R.nn.relu(in0)
      func.return %r                                           return (lv,)

The target is the host CPU by name (``"native"`` would mean generic x86), built with the
default Relax pipeline plus the loop-nest schedule (`schedule`), or tuned schedules with
`tune=metaschedule` (`tuning`). Ops Relax lacks are decomposed (LRN, batch norm).
On float16, the ops that accumulate compute in float32 (`half`).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import cache

import numpy as np
import tvm
from tvm import relax
from xdsl.dialects.builtin import TensorType, TupleType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from collage_xdsl.backends.kernel import KernelCompileError
from collage_xdsl.backends.signature import Signature
from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.backends.tvm.half import ACCUMULATING, widened
from collage_xdsl.backends.tvm.indexing import LOWER as INDEXING
from collage_xdsl.backends.tvm.options import TuningOptions
from collage_xdsl.backends.tvm.schedule import cpu_pipeline_with_schedule
from collage_xdsl.backends.tvm.tuning import tuned_pipeline
from collage_xdsl.backends.walk import flat_types, lower_function
from collage_xdsl.dialects import collage as C
from collage_xdsl.dialects.collage import get_bool, get_float, get_int, get_ints
from collage_xdsl.ir.resize import axis_taps, resize_scales
from collage_xdsl.ir.tensors import constant_array, np_dtype, shape_of

R = relax.op
VERSION = f"{tvm.__version__}+loopnest"
"""The library and the default schedule: both decide what a measured cost means."""


@cache
def host_target() -> tvm.target.Target:
    """LLVM for this CPU: its triple and CPU name, as the LLVM codegen reports them."""
    triple = tvm.get_global_func("tvm.codegen.llvm.GetDefaultTargetTriple")()
    cpu = tvm.get_global_func("tvm.codegen.llvm.GetHostCPUName")()
    return tvm.target.Target({"kind": "llvm", "mtriple": triple, "mcpu": cpu})


def _dtype(t: TensorType) -> str:
    dtype = np_dtype(t.get_element_type())
    return "bool" if dtype == np.bool_ else str(dtype)


def _scalar(op: Operation, value: float) -> relax.Expr:
    return relax.const(value, _dtype(op.operands[0].type))


def _emit(expr: relax.Expr) -> relax.Var:
    """Bind an intermediate of a decomposition (Relax infers types binding by binding)."""
    return relax.BlockBuilder.current().emit(expr)


def _clip(op: C.ClipOp, x):
    if op.min is not None:
        x = _emit(R.maximum(x, _scalar(op, get_float(op.min, 0.0))))
    if op.max is not None:
        x = R.minimum(x, _scalar(op, get_float(op.max, 0.0)))
    return x


def _hard_sigmoid(op: C.HardSigmoidOp, x):
    alpha, beta = get_float(op.alpha, 0.2), get_float(op.beta, 0.5)
    return R.clip(_emit(R.add(_emit(R.multiply(x, _scalar(op, alpha))), _scalar(op, beta))),
                  0.0, 1.0)


def _hard_swish(op: C.HardSwishOp, x):
    """x * relu6(x + 3) / 6."""
    gate = _emit(R.nn.relu6(_emit(R.add(x, _scalar(op, 3.0)))))
    return R.divide(_emit(R.multiply(x, gate)), _scalar(op, 6.0))


def _elu(op: Operation, x, alpha: float):
    """x if x > 0, else alpha * (exp(x) - 1); Relax has no parametrised ELU or SELU."""
    negative = _emit(R.multiply(_scalar(op, alpha),
                                _emit(R.subtract(_emit(R.exp(x)), _scalar(op, 1.0)))))
    return R.where(_emit(R.greater(x, _scalar(op, 0.0))), x, negative)


def _prelu(op: C.PReluOp, x, slope):
    """`R.nn.prelu` for a slope varying along one axis (per channel), else
    where(x < 0, slope * x, x)."""
    x_rank, slope_shape = len(shape_of(op.lhs.type)), shape_of(op.rhs.type)
    varying = [i for i, d in enumerate(slope_shape) if d != 1]
    if len(varying) == 1:
        axis = x_rank - len(slope_shape) + varying[0]
        return R.nn.prelu(x, _emit(R.reshape(slope, [slope_shape[varying[0]]])), axis)
    negative = _emit(R.multiply(x, slope))
    return R.where(_emit(R.less(x, _scalar(op, 0.0))), negative, x)


def _batch_norm(op: C.BatchNormOp, x, scale, bias, mean, var):
    rank = len(shape_of(op.input.type))
    shape = [-1] + [1] * (rank - 2)
    eps = _scalar(op, get_float(op.epsilon, 1e-5))
    inv = _emit(R.divide(scale, _emit(R.sqrt(_emit(R.add(var, eps))))))
    shift = _emit(R.subtract(bias, _emit(R.multiply(mean, inv))))
    scaled = _emit(R.multiply(x, _emit(R.reshape(inv, shape))))
    return R.add(scaled, _emit(R.reshape(shift, shape)))


def _lrn(op: C.LrnOp, x):
    """x / (bias + alpha * mean of x^2 over `size` neighbouring channels) ^ beta."""
    n, c, *rest = shape_of(op.input.type)
    size = get_int(op.size, 1)
    before = (size - 1) // 2
    squares = _emit(R.reshape(_emit(R.multiply(x, x)), [n, 1, c, math.prod(rest)]))
    window_mean = _emit(R.nn.avg_pool2d(
        squares, (size, 1), padding=(before, 0, size - 1 - before, 0), count_include_pad=True
    ))
    window_mean = _emit(R.reshape(window_mean, [n, c, *rest]))
    scaled = _emit(R.multiply(_scalar(op, get_float(op.alpha, 1e-4)), window_mean))
    scale = _emit(R.add(_scalar(op, get_float(op.bias, 1.0)), scaled))
    return R.divide(x, _emit(R.power(scale, _scalar(op, get_float(op.beta, 0.75)))))


def _layer_norm(op: C.LayerNormOp, x, scale, bias):
    shape = shape_of(op.input.type)
    axis = get_int(op.axis, -1) % len(shape)
    normalized = list(shape[axis:])
    scale, bias = (
        v if list(shape_of(o.type)) == normalized else _emit(R.broadcast_to(v, normalized))
        for v, o in ((scale, op.scale), (bias, op.bias))
    )
    return R.nn.layer_norm(x, scale, bias, list(range(axis, len(shape))),
                           epsilon=get_float(op.epsilon, 1e-5))


def _channel_norm(op: C.ChannelNormOp, x, scale, bias):
    """group_norm, and instance_norm as group_norm with a group per channel."""
    rank = len(shape_of(op.input.type))
    return R.nn.group_norm(x, scale, bias, op.groups(), 1, list(range(2, rank)),
                           epsilon=get_float(op.epsilon, 1e-5))


def _slice(op: C.SliceOp, x):
    shape = shape_of(op.input.type)
    slices = C.SliceOp.slices(shape, get_ints(op.starts), get_ints(op.ends),
                              get_ints(op.axes), get_ints(op.steps))
    axes = [i for i, s in enumerate(slices) if s != slice(None)]
    begin = [slices[a].start for a in axes]
    # An open end of a negative-step slice runs past index 0.
    end = [-shape[a] - 1 if slices[a].stop is None else slices[a].stop for a in axes]
    return R.strided_slice(x, axes, begin, end, [slices[a].step for a in axes])


def _split(op: C.SplitOp, x) -> list:
    sizes = get_ints(op.sizes)
    indices = [int(i) for i in np.cumsum(sizes)[:-1]]
    parts = _emit(R.split(x, indices, axis=get_int(op.axis, 0)))
    return [relax.TupleGetItem(parts, i) for i in range(len(sizes))]


def _resize(op: C.ResizeOp, x):
    """`R.image.resize2d`, which maps coordinates by output / input: ONNX scales that differ
    from that ratio gather the taps of the reference semantics instead (`_resize_taps`)."""
    nearest, coordinates = op.mode.data == "nearest", op.coordinate_transformation_mode.data
    src, dst = shape_of(op.input.type)[2:], shape_of(op.output.type)[2:]
    ratios = [np.float32(o) / np.float32(i) for o, i in zip(dst, src)]
    if coordinates != "align_corners" and resize_scales(op) != ratios:
        return _resize_taps(op, x)
    return R.image.resize2d(
        x, dst, method="nearest_neighbor" if nearest else "linear",
        coordinate_transformation_mode=coordinates,
        rounding_method=op.nearest_mode.data if nearest and op.nearest_mode else
        "round_prefer_floor" if nearest else "")


def _resize_taps(op: C.ResizeOp, x):
    src, dst = shape_of(op.input.type), shape_of(op.output.type)
    for axis, scale in zip((2, 3), resize_scales(op)):
        low, high, w = axis_taps(op, src[axis], dst[axis], scale)
        near = _emit(R.take(x, relax.const(low), axis))
        if high is None or w is None:
            x = near
            continue
        w = w.reshape([-1 if a == axis else 1 for a in range(4)])
        w = w.astype(np_dtype(op.input.type.get_element_type()))
        far = _emit(R.multiply(_emit(R.take(x, relax.const(high), axis)), relax.const(w)))
        x = _emit(R.add(_emit(R.multiply(near, relax.const(1 - w))), far))
    return x


def _channel_axis(op: C.QdqOp) -> int:
    """`R.quantize` / `R.dequantize`'s axis: a per-tensor (scalar) scale ignores it."""
    axis = op.channel_axis()
    return -1 if axis is None else axis


def _pool_attrs(op: C.Pool2dOp) -> dict:
    return dict(pool_size=get_ints(op.kernel), strides=get_ints(op.strides),
                padding=get_ints(op.pads), ceil_mode=get_bool(op.ceil_mode, False))


def _reduce(fn: Callable) -> Callable:
    return lambda op, x: fn(x, list(op.reduced_axes()), keepdims=get_bool(op.keepdims, True))


_LOWER: dict[type[Operation], Callable] = {
    C.ConstantOp: lambda op: relax.const(constant_array(op), _dtype(op.output.type)),
    C.ReluOp: lambda op, x: R.nn.relu(x),
    C.SigmoidOp: lambda op, x: R.sigmoid(x),
    C.TanhOp: lambda op, x: R.tanh(x),
    C.ErfOp: lambda op, x: R.erf(x),
    C.ExpOp: lambda op, x: R.exp(x),
    C.LogOp: lambda op, x: R.log(x),
    C.SqrtOp: lambda op, x: R.sqrt(x),
    C.ReciprocalOp: lambda op, x: R.divide(_scalar(op, 1.0), x),
    C.NegOp: lambda op, x: R.negative(x),
    C.AbsOp: lambda op, x: R.abs(x),
    C.NotOp: lambda op, x: R.logical_not(x),
    C.LeakyReluOp: lambda op, x: R.nn.leakyrelu(x, get_float(op.alpha, 0.01)),
    C.HardSigmoidOp: _hard_sigmoid,
    C.HardSwishOp: _hard_swish,
    C.MishOp: lambda op, x: R.multiply(x, _emit(R.tanh(_emit(R.nn.softplus(x))))),
    C.EluOp: lambda op, x: _elu(op, x, get_float(op.alpha, 1.0)),
    C.SoftplusOp: lambda op, x: R.nn.softplus(x),
    C.SeluOp: lambda op, x: R.multiply(
        _scalar(op, get_float(op.gamma, 1.0507)), _emit(_elu(op, x, get_float(op.alpha, 1.6733)))),
    C.PReluOp: _prelu,
    C.ClipOp: _clip,
    C.GeluOp: lambda op, x: (
        R.nn.gelu_tanh(x) if op.approximate is not None and op.approximate.data == "tanh"
        else R.nn.gelu(x)),
    C.CastOp: lambda op, x: R.astype(x, _dtype(op.output.type)),
    C.QuantizeLinearOp: lambda op, x, s, z: R.quantize(
        x, s, z, _channel_axis(op), _dtype(op.output.type)),
    C.DequantizeLinearOp: lambda op, x, s, z: R.dequantize(
        x, s, z, _channel_axis(op), "float32"),
    C.AddOp: lambda op, a, b: R.add(a, b),
    C.SubOp: lambda op, a, b: R.subtract(a, b),
    C.MulOp: lambda op, a, b: R.multiply(a, b),
    C.DivOp: lambda op, a, b: R.divide(a, b),
    C.PowOp: lambda op, a, b: R.power(a, b),
    C.MaximumOp: lambda op, a, b: R.maximum(a, b),
    C.MinimumOp: lambda op, a, b: R.minimum(a, b),
    C.EqualOp: lambda op, a, b: R.equal(a, b),
    C.LessOp: lambda op, a, b: R.less(a, b),
    C.GreaterOp: lambda op, a, b: R.greater(a, b),
    C.WhereOp: lambda op, c, a, b: R.where(c, a, b),
    C.BatchNormOp: _batch_norm,
    C.ExpandOp: lambda op, x: R.broadcast_to(x, shape_of(op.output.type)),
    C.ReshapeOp: lambda op, x: R.reshape(x, shape_of(op.output.type)),
    C.TransposeOp: lambda op, x: R.permute_dims(x, list(get_ints(op.perm))),
    C.ConcatOp: lambda op, *xs: R.concat(
        [v for x in xs for v in (x if isinstance(x, tuple) else (x,))], get_int(op.axis, 0)),
    C.SplitOp: _split,
    C.SliceOp: _slice,
    C.GatherOp: lambda op, d, i: R.take(d, i, get_int(op.axis, 0), mode="wrap"),
    C.PadOp: lambda op, x: R.nn.pad(
        x, [p for b, e in zip(*np.split(np.array(get_ints(op.pads)), 2)) for p in (int(b), int(e))],
        pad_value=get_float(op.value, 0.0)),
    C.TileOp: lambda op, x: R.tile(x, list(get_ints(op.repeats))),
    C.ResizeOp: _resize,
    C.ReduceSumOp: _reduce(R.sum),
    C.ReduceMeanOp: _reduce(R.mean),
    C.ReduceMaxOp: _reduce(R.max),
    C.ReduceMinOp: _reduce(R.min),
    C.ReduceL2Op: lambda op, x: R.sqrt(_emit(_reduce(R.sum)(op, _emit(R.multiply(x, x))))),
    C.ArgMaxOp: lambda op, x: R.argmax(x, get_int(op.axis, 0), get_bool(op.keepdims, True)),
    C.Conv2dOp: lambda op, x, w: R.nn.conv2d(
        x, w, strides=get_ints(op.strides), padding=get_ints(op.pads),
        dilation=get_ints(op.dilations), groups=get_int(op.group, 1)),
    C.ConvTranspose2dOp: lambda op, x, w: R.nn.conv2d_transpose(
        x, w, strides=get_ints(op.strides), padding=get_ints(op.pads),
        output_padding=get_ints(op.output_padding), dilation=get_ints(op.dilations),
        groups=get_int(op.group, 1)),
    C.MatmulOp: lambda op, a, b: R.matmul(a, b),
    C.EinsumOp: lambda op, *xs: R.einsum(list(xs), op.equation.data),
    C.MaxPool2dOp: lambda op, x: R.nn.max_pool2d(x, **_pool_attrs(op)),
    C.AvgPool2dOp: lambda op, x: R.nn.avg_pool2d(
        x, **_pool_attrs(op), count_include_pad=get_bool(op.count_include_pad, False)),
    C.GlobalAvgPool2dOp: lambda op, x: R.mean(x, [2, 3], keepdims=True),
    C.SoftmaxOp: lambda op, x: R.nn.softmax(x, get_int(op.axis, -1)),
    C.LrnOp: _lrn,
    C.LayerNormOp: _layer_norm,
    C.InstanceNormOp: _channel_norm,
    C.GroupNormOp: _channel_norm,
    **INDEXING,
}


_LOWER.update({cls: widened(_LOWER[cls]) for cls in ACCUMULATING})


def to_relax(func: FuncOp) -> tvm.IRModule:
    """The Relax module whose @main computes ``func`` and returns its flat results as a tuple."""
    bb = relax.BlockBuilder()
    params = [
        relax.Var(f"in{i}", relax.TensorType(shape=list(shape_of(t)), dtype=_dtype(t)))
        for i, t in enumerate(flat_types(func.function_type.inputs.data))
    ]

    def emit(op: Operation, operands: list) -> list:
        lower = _LOWER.get(type(op))
        if lower is None:
            raise KernelCompileError(
                f"tvm: {op.name} has no Relax lowering (kernel @{func.sym_name.data})"
            )
        if isinstance(op, C.ConstantOp):
            return [lower(op)]
        try:
            produced = lower(op, *operands)
            results = produced if isinstance(produced, list) else [produced]
            return [bb.emit(r) for r in results]
        except Exception as e:  # TVM's FFI raises ValueError, TypeError, RuntimeError, ...
            raise KernelCompileError(f"tvm: cannot lower {op.name}: {_first_line(e)}") from None

    with bb.function("main", params):
        with bb.dataflow():
            results = lower_function(func, params, emit)
            output = bb.emit_output(relax.Tuple(results))
        bb.emit_func_output(output)
    return bb.get()


def _first_line(e: Exception) -> str:
    lines = [line for line in str(e).splitlines() if line.strip()]
    return lines[-1].strip() if lines else type(e).__name__


_ALIGNMENT = 64


def _aligned_empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialised C-contiguous array whose data is `_ALIGNMENT`-byte aligned."""
    nbytes = max(math.prod(shape) * dtype.itemsize, 1)
    raw = np.empty(nbytes + _ALIGNMENT, np.uint8)
    offset = -raw.ctypes.data % _ALIGNMENT
    return raw[offset : offset + math.prod(shape) * dtype.itemsize].view(dtype).reshape(shape)


_BORROWED = object()
"""`_shared_results`: a value whose storage the VM does not allocate afresh per call."""


def _shared_results(func: FuncOp) -> tuple[int, ...]:
    """The flat results of ``func`` that the VM may return as storage it did not allocate
    for the call: a parameter (the caller's input or the staging buffer), a constant (the
    same array every call), a reshape of one (Relax reshapes are views), or a value
    returned before. `TvmKernel` copies these, so that its results are the caller's.

        func.return %x, %c, %r, %r   ->   (0, 1, 3)     (%r = relu %x: fresh)
    """

    def fresh(t):
        return tuple(fresh(e) for e in t.types.data) if isinstance(t, TupleType) else object()

    def emit(op: Operation, operands: list) -> list:
        if isinstance(op, C.ConstantOp) or (
                isinstance(op, C.ReshapeOp) and operands[0] is _BORROWED):
            return [_BORROWED]
        return [fresh(r.type) for r in op.results]

    params = [_BORROWED] * len(flat_types(func.function_type.inputs.data))
    shared, seen = [], set()
    for i, value in enumerate(lower_function(func, params, emit)):
        if value is _BORROWED or id(value) in seen:
            shared.append(i)
        seen.add(id(value))
    return tuple(shared)


class TvmKernel:
    """A kernel compiled by TVM for the host CPU, run on a Relax VM."""

    backend = "tvm"

    def __init__(self, func: FuncOp, policy: ThreadPolicy, tuning: TuningOptions):
        self.signature = Signature.of(func, self.backend)
        self.policy = policy
        self.version = VERSION + tuning.version_tag
        self.notes: list[str] = []
        """What schedule tuning did (`collage_xdsl.backends.tvm.tuning`)."""
        module = to_relax(func)
        target = host_target()
        pipeline = (cpu_pipeline_with_schedule(target) if tuning.mode == "none"
                    else tuned_pipeline(target, tuning, self.notes))
        try:
            executable = tvm.compile(module, target=target, relax_pipeline=pipeline)
        except Exception as e:  # TVM's FFI raises ValueError, TypeError, RuntimeError, ...
            raise KernelCompileError(
                f"tvm: cannot compile kernel @{func.sym_name.data}: {_first_line(e)}"
            ) from None
        self.vm: relax.VirtualMachine | None = relax.VirtualMachine(executable, tvm.cpu())
        self._main = self.vm["main"]
        self._staging = [_aligned_empty(shape, dtype) for shape, dtype in self.signature.inputs]
        self._staged = [tvm.runtime.empty(a.shape, str(a.dtype)) if a.size == 0  # compact
                        else tvm.runtime.from_dlpack(a) for a in self._staging]
        self._copied = _shared_results(func)

    def __call__(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Inputs go in without a TVM allocation: zero-copy when 64-byte aligned (DLPack
        needs that), else copied into a staging buffer (a zero-size input always: its
        staged tensor is TVM's, since DLPack hands TVM a zero-size numpy array with
        strides TVM rejects); outputs come back zero-copy (the VM allocates them afresh on
        every call), except those it may share (`_shared_results`), which are copied."""
        assert self.vm is not None, "the kernel was released"
        self.policy.configure_tvm()
        args = []
        for x, buffer, staged in zip(self.signature.check(inputs), self._staging, self._staged):
            if x.size and x.ctypes.data % _ALIGNMENT == 0 and x.flags.writeable:
                args.append(tvm.runtime.from_dlpack(x))
            else:
                np.copyto(buffer, x)
                args.append(staged)
        outputs = [np.from_dlpack(r) for r in self._main(*args)]
        for i in self._copied:
            outputs[i] = outputs[i].copy()
        return outputs

    def release(self) -> None:
        self.vm = self._main = None
        self._staging, self._staged = [], []


def compile(func: FuncOp, policy: ThreadPolicy, tuning: TuningOptions = TuningOptions()
            ) -> TvmKernel:
    policy.configure_tvm()
    return TvmKernel(func, policy, tuning)
