"""A collage kernel function as an ONNX model (the input of the ONNX Runtime and
OpenVINO hooks).

Every dialect op becomes one ONNX node (opset 20); constants become initializers;
the graph's inputs and outputs follow the function's signature with tuples
flattened (`collage_xdsl.backends.walk`):

    func.func @k(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {     graph k (in0[1,8] f32)
      %g = collage.gelu %x : tensor<1x8xf32>              ->     v0 = Gelu(in0)
      func.return %g : tensor<1x8xf32>                           outputs: v0[1,8] f32
    }
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import TensorProto, external_data_helper, helper, numpy_helper
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from collage_xdsl.backends.kernel import KernelCompileError
from collage_xdsl.backends.walk import flat_types, lower_function
from collage_xdsl.dialects import collage as C
from collage_xdsl.dialects.collage import get_bool, get_float, get_int, get_ints
from collage_xdsl.ir.tensors import constant_array, np_dtype, shape_of

OPSET = 20
"""Gelu needs 20; ONNX Runtime 1.31 and OpenVINO 2026.4 both read it."""


def onnx_dtype(t: TensorType) -> int:
    return helper.np_dtype_to_tensor_dtype(np_dtype(t.get_element_type()))


class _Graph:
    """The nodes and initializers of the ONNX graph under construction."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[TensorProto] = []
        self.produced: set[str] = set()
        self._count = 0

    def fresh(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}{self._count}"

    def const(self, array: np.ndarray) -> str:
        name = self.fresh("c")
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def ints(self, values: Sequence[int]) -> str:
        return self.const(np.array(values, dtype=np.int64))

    def node(self, op_type: str, inputs: Sequence[str], outputs: int = 1, **attrs) -> list[str]:
        names = [self.fresh("v") for _ in range(outputs)]
        self.nodes.append(
            helper.make_node(op_type, list(inputs), names, name=self.fresh(op_type), **attrs)
        )
        self.produced.update(names)
        return names


def _scalar_like(op: Operation, value: float) -> np.ndarray:
    return np.array(value, dtype=np_dtype(op.operands[0].type.get_element_type()))


def _clip(g: _Graph, op: C.ClipOp, x: str) -> list[str]:
    lo = "" if op.min is None else g.const(_scalar_like(op, get_float(op.min, 0.0)))
    hi = "" if op.max is None else g.const(_scalar_like(op, get_float(op.max, 0.0)))
    return g.node("Clip", [x, lo, hi])


def _reduce(kind: str) -> Callable[..., list[str]]:
    def lower(g: _Graph, op: C.ReduceOp, x: str) -> list[str]:
        axes = [] if op.axes is None else [g.ints(get_ints(op.axes))]
        return g.node(kind, [x, *axes], keepdims=int(get_bool(op.keepdims, True)))

    return lower


def _resize(g: _Graph, op: C.ResizeOp, x: str) -> list[str]:
    """Resize with `scales` when the op has them, else with `sizes`."""
    scales = op.scale_values()
    sizes = ["", g.const(np.array([1, 1, *scales], np.float32))] if scales else [
        "", "", g.ints(shape_of(op.output.type))]
    nearest = {"nearest_mode": op.nearest_mode.data} if op.nearest_mode else {}
    return g.node("Resize", [x, *sizes], mode=op.mode.data, **nearest,
                  coordinate_transformation_mode=op.coordinate_transformation_mode.data)


def _pool(g: _Graph, op: C.Pool2dOp, x: str) -> list[str]:
    attrs = dict(
        kernel_shape=list(get_ints(op.kernel)), strides=list(get_ints(op.strides)),
        pads=list(get_ints(op.pads)), ceil_mode=int(get_bool(op.ceil_mode, False)),
    )
    if isinstance(op, C.AvgPool2dOp):
        return g.node("AveragePool", [x], count_include_pad=int(
            get_bool(op.count_include_pad, False)), **attrs)
    return g.node("MaxPool", [x], **attrs)


def _group_norm(g: _Graph, op: C.GroupNormOp, x: str, scale: str, bias: str) -> list[str]:
    """[N, C, ...] -> [N, G, -1] -> InstanceNormalization -> [N, C, ...] * scale + bias: the
    export opset's GroupNormalization takes a scale per group, the dialect one per channel."""
    shape, groups = shape_of(op.input.type), op.groups()
    ones = np.ones(groups, dtype=np_dtype(op.input.type.get_element_type()))
    grouped = g.node("Reshape", [x, g.ints([shape[0], groups, -1])])
    normed = g.node("InstanceNormalization", [*grouped, g.const(ones), g.const(ones * 0)],
                    epsilon=get_float(op.epsilon, 1e-5))
    y = g.node("Reshape", [*normed, g.ints(shape)])
    per_channel = g.ints([-1] + [1] * (len(shape) - 2))
    scaled = g.node("Mul", [*y, *g.node("Reshape", [scale, per_channel])])
    return g.node("Add", [*scaled, *g.node("Reshape", [bias, per_channel])])


def _qdq_axis(op: C.QdqOp) -> dict[str, int]:
    """QuantizeLinear's / DequantizeLinear's `axis`, for a per-channel scale only."""
    axis = op.channel_axis()
    return {} if axis is None else {"axis": axis}


def _reshape(g: _Graph, op: C.ReshapeOp, x: str) -> list[str]:
    shape = shape_of(op.output.type)
    return g.node("Reshape", [x, g.ints(shape)], allowzero=int(0 in shape))


_SIMPLE: dict[type[Operation], str] = {
    C.ReluOp: "Relu", C.SigmoidOp: "Sigmoid", C.TanhOp: "Tanh", C.ErfOp: "Erf",
    C.ExpOp: "Exp", C.LogOp: "Log", C.SqrtOp: "Sqrt", C.ReciprocalOp: "Reciprocal",
    C.NegOp: "Neg", C.AbsOp: "Abs", C.NotOp: "Not",
    C.HardSwishOp: "HardSwish", C.MishOp: "Mish", C.SoftplusOp: "Softplus", C.PReluOp: "PRelu",
    C.AddOp: "Add", C.SubOp: "Sub", C.MulOp: "Mul", C.DivOp: "Div", C.PowOp: "Pow",
    C.MaximumOp: "Max", C.MinimumOp: "Min", C.EqualOp: "Equal", C.LessOp: "Less",
    C.GreaterOp: "Greater", C.WhereOp: "Where", C.MatmulOp: "MatMul",
    C.GlobalAvgPool2dOp: "GlobalAveragePool",
}

_LOWER: dict[type[Operation], Callable[..., list[str]]] = {
    C.LeakyReluOp: lambda g, op, x: g.node("LeakyRelu", [x], alpha=get_float(op.alpha, 0.01)),
    C.HardSigmoidOp: lambda g, op, x: g.node(
        "HardSigmoid", [x], alpha=get_float(op.alpha, 0.2), beta=get_float(op.beta, 0.5)),
    C.EluOp: lambda g, op, x: g.node("Elu", [x], alpha=get_float(op.alpha, 1.0)),
    C.SeluOp: lambda g, op, x: g.node(
        "Selu", [x], alpha=get_float(op.alpha, 1.6733), gamma=get_float(op.gamma, 1.0507)),
    C.ClipOp: _clip,
    C.GeluOp: lambda g, op, x: g.node(
        "Gelu", [x], approximate=op.approximate.data if op.approximate else "none"),
    C.CastOp: lambda g, op, x: g.node("Cast", [x], to=onnx_dtype(op.output.type)),
    C.QuantizeLinearOp: lambda g, op, *xs: g.node("QuantizeLinear", xs, **_qdq_axis(op)),
    C.DequantizeLinearOp: lambda g, op, *xs: g.node("DequantizeLinear", xs, **_qdq_axis(op)),
    C.BatchNormOp: lambda g, op, *xs: g.node(
        "BatchNormalization", xs, epsilon=get_float(op.epsilon, 1e-5)),
    C.ExpandOp: lambda g, op, x: g.node("Expand", [x, g.ints(shape_of(op.output.type))]),
    C.ReshapeOp: _reshape,
    C.TransposeOp: lambda g, op, x: g.node("Transpose", [x], perm=list(get_ints(op.perm))),
    C.ConcatOp: lambda g, op, *xs: g.node(
        "Concat", [n for x in xs for n in (x if isinstance(x, tuple) else (x,))],
        axis=get_int(op.axis, 0)),
    C.SplitOp: lambda g, op, x: g.node(
        "Split", [x, g.ints(get_ints(op.sizes))], outputs=len(op.results),
        axis=get_int(op.axis, 0)),
    C.SliceOp: lambda g, op, x: g.node("Slice", [x] + [
        g.ints(get_ints(a)) for a in (op.starts, op.ends, op.axes, op.steps)]),
    C.GatherOp: lambda g, op, d, i: g.node("Gather", [d, i], axis=get_int(op.axis, 0)),
    C.PadOp: lambda g, op, x: g.node("Pad", [
        x, g.ints(get_ints(op.pads)), g.const(_scalar_like(op, get_float(op.value, 0.0)))],
        mode="constant"),
    C.TileOp: lambda g, op, x: g.node("Tile", [x, g.ints(get_ints(op.repeats))]),
    C.ResizeOp: _resize,
    C.GatherElementsOp: lambda g, op, d, i: g.node(
        "GatherElements", [d, i], axis=get_int(op.axis, 0)),
    C.GatherNdOp: lambda g, op, d, i: g.node(
        "GatherND", [d, i], batch_dims=get_int(op.batch_dims, 0)),
    C.ScatterNdOp: lambda g, op, *xs: g.node("ScatterND", xs, reduction=op.reduction_name()),
    C.TopKOp: lambda g, op, x: g.node(
        "TopK", [x, g.ints([get_int(op.k, 1)])], outputs=2, axis=get_int(op.axis, -1),
        largest=int(get_bool(op.largest, True)), sorted=1),
    C.CumSumOp: lambda g, op, x: g.node(
        "CumSum", [x, g.const(np.array(get_int(op.axis, 0), np.int64))],
        exclusive=int(get_bool(op.exclusive, False)), reverse=int(get_bool(op.reverse, False))),
    C.ReduceSumOp: _reduce("ReduceSum"),
    C.ReduceMeanOp: _reduce("ReduceMean"),
    C.ReduceMaxOp: _reduce("ReduceMax"),
    C.ReduceMinOp: _reduce("ReduceMin"),
    C.ReduceL2Op: _reduce("ReduceL2"),
    C.ArgMaxOp: lambda g, op, x: g.node(
        "ArgMax", [x], axis=get_int(op.axis, 0), keepdims=int(get_bool(op.keepdims, True))),
    C.Conv2dOp: lambda g, op, x, w: g.node(
        "Conv", [x, w], kernel_shape=list(shape_of(op.weight.type)[2:]),
        strides=list(get_ints(op.strides)), pads=list(get_ints(op.pads)),
        dilations=list(get_ints(op.dilations)), group=get_int(op.group, 1)),
    C.ConvTranspose2dOp: lambda g, op, x, w: g.node(
        "ConvTranspose", [x, w], kernel_shape=list(shape_of(op.weight.type)[2:]),
        strides=list(get_ints(op.strides)), pads=list(get_ints(op.pads)),
        dilations=list(get_ints(op.dilations)),
        output_padding=list(get_ints(op.output_padding)), group=get_int(op.group, 1)),
    C.MaxPool2dOp: _pool,
    C.EinsumOp: lambda g, op, *xs: g.node("Einsum", xs, equation=op.equation.data),
    C.AvgPool2dOp: _pool,
    C.SoftmaxOp: lambda g, op, x: g.node("Softmax", [x], axis=get_int(op.axis, -1)),
    C.LrnOp: lambda g, op, x: g.node(
        "LRN", [x], size=get_int(op.size, 1), alpha=get_float(op.alpha, 1e-4),
        beta=get_float(op.beta, 0.75), bias=get_float(op.bias, 1.0)),
    C.LayerNormOp: lambda g, op, *xs: g.node(
        "LayerNormalization", xs, axis=get_int(op.axis, -1),
        epsilon=get_float(op.epsilon, 1e-5)),
    C.InstanceNormOp: lambda g, op, *xs: g.node(
        "InstanceNormalization", xs, epsilon=get_float(op.epsilon, 1e-5)),
    C.GroupNormOp: _group_norm,
    C.ConstantOp: lambda g, op: [g.const(constant_array(op))],
}


def _value_info(name: str, t: TensorType) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, onnx_dtype(t), list(shape_of(t)))


def export_onnx(func: FuncOp, backend: str = "onnx") -> onnx.ModelProto:
    """The ONNX model computing ``func`` (a kernel of collage ops).

    ``backend`` names the hook in error messages; an op without an ONNX lowering
    raises `KernelCompileError`."""
    g = _Graph()

    def emit(op: Operation, operands: list) -> list:
        if type(op) in _SIMPLE:
            return g.node(_SIMPLE[type(op)], operands)
        lower = _LOWER.get(type(op))
        if lower is None:
            raise KernelCompileError(
                f"{backend}: {op.name} has no ONNX lowering (kernel @{func.sym_name.data})"
            )
        return lower(g, op, *operands)

    in_types = flat_types(func.function_type.inputs.data)
    out_types = flat_types(func.function_type.outputs.data)
    inputs = [f"in{i}" for i in range(len(in_types))]
    results = lower_function(func, inputs, emit)
    outputs: list[str] = []
    for i, name in enumerate(results):
        if name not in g.produced or name in outputs:
            name = g.node("Identity", [name])[0]
        outputs.append(name)
    graph = helper.make_graph(
        g.nodes, func.sym_name.data,
        [_value_info(n, t) for n, t in zip(inputs, in_types)],
        [_value_info(n, t) for n, t in zip(outputs, out_types)],
        initializer=g.initializers,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="collage-xdsl"
    )
    model.ir_version = 10
    return model


_PROTOBUF_LIMIT = 2**31 - 1
_GRAPH_ROOM = 64 << 20
"""Room left under protobuf's limit for everything but the initializers' data."""


def too_large(model: onnx.ModelProto) -> bool:
    """Whether `model` cannot be serialized as one protobuf (over 2 GB): its hook must hand
    the weights over beside it (`detach_initializers`)."""
    data = sum(len(t.raw_data) for t in model.graph.initializer)
    return data > _PROTOBUF_LIMIT - _GRAPH_ROOM


def detach_initializers(model: onnx.ModelProto, location: str) -> dict[str, np.ndarray]:
    """Takes the data of every initializer of at least 1 KiB out of `model`: each becomes
    an external-data reference into `location` (laid out one after another) and its array
    is returned by name. Small ones (shapes, scalars) stay inline for shape inference.

        weights = detach_initializers(model, "weights.bin")   # model now serializes"""
    detached, offset = {}, 0
    for tensor in model.graph.initializer:
        if len(tensor.raw_data) < 1024:
            continue
        detached[tensor.name] = numpy_helper.to_array(tensor)
        length = len(tensor.raw_data)
        external_data_helper.set_external_data(tensor, location, offset, length)
        tensor.ClearField("raw_data")
        tensor.data_location = TensorProto.EXTERNAL
        offset += length
    return detached

