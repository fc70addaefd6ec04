"""The reference interpreter, op by op, against onnx's ReferenceEvaluator and ONNX Runtime.

Each case builds a one-node ONNX model and the matching `collage` op directly
(no frontend), runs both on the same seeded inputs and compares.
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import onnxruntime as ort
import pytest
from collage_xdsl.dialects import collage as C
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects.builtin import (
    FloatAttr,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    f32,
    i1,
    i64,
)
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.dialects.test import TestOp as UnknownOp
from xdsl.ir import Block, Region

from collage_xdsl.errors import CollageError
from collage_xdsl.ir.interpreter import evaluate_op, run_function, run_module
from collage_xdsl.ir.tensors import constant_op, ir_dtype, tensor_type

OPSET = 20
RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float32, low=-2.0, high=2.0) -> np.ndarray:
    return RNG.uniform(low, high, shape).astype(dtype)


def make_func(inputs: list[np.ndarray], build, name: str = "main") -> FuncOp:
    """A func.func taking ``inputs``' types; ``build(*args)`` gives its ops, the last one's
    results are returned."""
    types = [tensor_type(a.shape, a.dtype) for a in inputs]
    block = Block(arg_types=types)
    ops = build(*block.args)
    block.add_ops(ops)
    results = list(ops[-1].results)
    block.add_op(ReturnOp(*results))
    return FuncOp(name, FunctionType.from_lists(types, [r.type for r in results]), Region(block))


def run_collage(inputs: list[np.ndarray], build) -> list[np.ndarray]:
    func = make_func(inputs, build)
    ModuleOp([func]).verify()
    return run_function(func, inputs)


def run_onnx(op_type: str, inputs: list[np.ndarray], out_dtypes: list, consts=(), **attrs):
    """Run a one-node ONNX model with both references; ``consts`` become initializers."""
    names = [f"x{i}" for i in range(len(inputs))]
    const_names = [f"c{i}" if c is not None else "" for i, c in enumerate(consts)]
    outs = [f"y{i}" for i in range(len(out_dtypes))]
    node = helper.make_node(op_type, names + const_names, outs, **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
         for n, a in zip(names, inputs)],
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.dtype(d)), None)
         for n, d in zip(outs, out_dtypes)],
        [numpy_helper.from_array(np.asarray(c), n)
         for n, c in zip(const_names, consts) if c is not None],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=10)
    feeds = dict(zip(names, inputs))
    reference = ReferenceEvaluator(model).run(None, feeds)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    runtime = session.run(None, feeds)
    return reference, runtime


def check(ours, onnx_op: str, inputs, consts=(), rtol=1e-5, atol=1e-6, evaluator=True, **attrs):
    """Our results equal both references' (only ONNX Runtime's without ``evaluator``)
    in dtype, shape and value."""
    reference, runtime = run_onnx(onnx_op, inputs, [o.dtype for o in ours], consts, **attrs)
    for expected in (reference, runtime) if evaluator else (runtime,):
        assert len(ours) == len(expected)
        for got, want in zip(ours, expected):
            want = np.asarray(want)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def fattr(v: float) -> FloatAttr:
    return FloatAttr(v, f32)


# ---------------------------------------------------------------------------
# Element-wise
# ---------------------------------------------------------------------------

UNARY = [
    (C.ReluOp, "Relu", {}, {}, {}),
    (C.SigmoidOp, "Sigmoid", {}, {}, {}),
    (C.TanhOp, "Tanh", {}, {}, {}),
    (C.ErfOp, "Erf", {}, {}, {}),
    (C.ExpOp, "Exp", {}, {}, {}),
    (C.LogOp, "Log", {"low": 0.01}, {}, {}),
    (C.SqrtOp, "Sqrt", {"low": 0.0}, {}, {}),
    (C.ReciprocalOp, "Reciprocal", {"low": 0.5}, {}, {}),
    (C.NegOp, "Neg", {}, {}, {}),
    (C.AbsOp, "Abs", {}, {}, {}),
    (C.LeakyReluOp, "LeakyRelu", {}, {"alpha": fattr(0.2)}, {"alpha": 0.2}),
    (C.HardSigmoidOp, "HardSigmoid", {"low": -5.0, "high": 5.0},
     {"alpha": fattr(0.3), "beta": fattr(0.4)}, {"alpha": 0.3, "beta": 0.4}),
    (C.HardSwishOp, "HardSwish", {"low": -5.0, "high": 5.0}, {}, {}),
    (C.MishOp, "Mish", {"low": -5.0, "high": 5.0}, {}, {}),
    (C.EluOp, "Elu", {}, {"alpha": fattr(0.7)}, {"alpha": 0.7}),
    (C.SoftplusOp, "Softplus", {"low": -5.0, "high": 5.0}, {}, {}),
    (C.SeluOp, "Selu", {}, {"alpha": fattr(1.5), "gamma": fattr(1.1)},
     {"alpha": 1.5, "gamma": 1.1}),
    (C.GeluOp, "Gelu", {}, {}, {}),
    (C.GeluOp, "Gelu", {}, {"approximate": StringAttr("tanh")}, {"approximate": "tanh"}),
    (C.SoftmaxOp, "Softmax", {}, {"axis": IntegerAttr(1, i64)}, {"axis": 1}),
]


@pytest.mark.parametrize("cls, onnx_op, rng, attrs, onnx_attrs", UNARY,
                         ids=[f"{u[1]}{'_' + str(u[4]) if u[4] else ''}" for u in UNARY])
def test_unary(cls, onnx_op, rng, attrs, onnx_attrs):
    x = rand(2, 5, 7, **rng)
    ours = run_collage([x], lambda a: [cls(a, attrs)])
    check(ours, onnx_op, [x], **onnx_attrs)


def test_erf_tails_and_zero():
    x = np.array([0.0, 1e-6, -3e-4, 0.49, 0.51, -1.7, 3.2, -5.0, 9.0], np.float32)
    (y,) = run_collage([x], lambda a: [C.ErfOp(a)])
    np.testing.assert_allclose(y, [math.erf(v) for v in x.astype(float)], rtol=2e-7, atol=1e-9)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # onnx's evaluator overflows in exp
def test_sigmoid_saturates_without_overflow():
    x = np.array([-200.0, -30.0, 0.0, 30.0, 200.0], np.float32)
    (y,) = run_collage([x], lambda a: [C.SigmoidOp(a)])
    check([y], "Sigmoid", [x], rtol=1e-6, atol=1e-12)


def test_not():
    x = RNG.random((3, 4)) > 0.5
    check(run_collage([x], lambda a: [C.NotOp(a)]), "Not", [x])


@pytest.mark.parametrize("bounds", [(-0.5, 1.0), (0.0, None), (None, 0.3)])
def test_clip(bounds):
    x = rand(3, 8)
    attrs = {k: fattr(v) for k, v in zip(("min", "max"), bounds) if v is not None}
    consts = [np.float32(b) if b is not None else None for b in bounds]
    check(run_collage([x], lambda a: [C.ClipOp(a, attrs)]), "Clip", [x], consts=consts)


@pytest.mark.parametrize("src, dst", [(np.float32, np.int64), (np.int64, np.float32),
                                      (np.float32, np.bool_), (np.int32, np.int64)])
def test_cast(src, dst):
    x = (rand(4, 6) * 10).astype(src)
    ours = run_collage([x], lambda a: [C.CastOp(a, ir_dtype(dst))])
    check(ours, "Cast", [x], to=helper.np_dtype_to_tensor_dtype(np.dtype(dst)))


# ---------------------------------------------------------------------------
# Broadcasting binary ops, where
# ---------------------------------------------------------------------------

BINARY = [(C.AddOp, "Add"), (C.SubOp, "Sub"), (C.MulOp, "Mul"), (C.DivOp, "Div"),
          (C.PowOp, "Pow"), (C.MaximumOp, "Max"), (C.MinimumOp, "Min"),
          (C.EqualOp, "Equal"), (C.LessOp, "Less"), (C.GreaterOp, "Greater")]


@pytest.mark.parametrize("cls, onnx_op", BINARY, ids=[b[1] for b in BINARY])
@pytest.mark.parametrize("shapes", [((2, 3, 4), (3, 1)), ((1, 4), (5, 1)), ((), (2, 2))],
                         ids=["trailing", "both", "scalar"])
def test_binary_broadcast(cls, onnx_op, shapes):
    a = rand(*shapes[0], low=0.5) if onnx_op == "Pow" else rand(*shapes[0])
    b = rand(*shapes[1])
    if onnx_op == "Equal":
        b = np.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape)).copy()
        b.reshape(-1)[::2] += 1
    check(run_collage([a, b], lambda x, y: [cls(x, y)]), onnx_op, [a, b])


@pytest.mark.parametrize("slope_shape", [(3, 1, 1), (1,), (5,), (2, 3, 4, 5)],
                         ids=["per_channel", "shared", "last_axis", "full"])
def test_prelu_slope_broadcasts_to_x(slope_shape):
    x, slope = rand(2, 3, 4, 5), rand(*slope_shape)
    check(run_collage([x, slope], lambda a, s: [C.PReluOp(a, s)]), "PRelu", [x, slope])


def test_integer_div_truncates_toward_zero():
    a = np.array([7, -7, 7, -7, 0, 9], np.int64)
    b = np.array([2, 2, -2, -2, 3, 3], np.int64)
    check(run_collage([a, b], lambda x, y: [C.DivOp(x, y)]), "Div", [a, b])


def test_where():
    c = RNG.random((3, 1)) > 0.5
    a, b = rand(3, 4), rand(4)
    check(run_collage([c, a, b], lambda *v: [C.WhereOp(*v)]), "Where", [c, a, b])


# ---------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------


def test_batch_norm():
    x = rand(2, 3, 4, 5)
    scale, bias, mean = rand(3), rand(3), rand(3)
    var = rand(3, low=0.1, high=2.0)

    def build(xa):
        consts = [constant_op(v) for v in (scale, bias, mean, var)]
        return [*consts, C.BatchNormOp(xa, *(c.output for c in consts), 1e-3)]

    check(run_collage([x], build), "BatchNormalization", [x],
          consts=[scale, bias, mean, var], epsilon=1e-3)


@pytest.mark.parametrize("axis", [-1, 1])
def test_layer_norm(axis):
    x = rand(2, 3, 6)
    norm_shape = x.shape[axis % 3:]
    scale, bias = rand(*norm_shape), rand(*norm_shape)

    def build(xa):
        s, b = constant_op(scale), constant_op(bias)
        return [s, b, C.LayerNormOp(xa, s.output, b.output, axis, 1e-5)]

    check(run_collage([x], build), "LayerNormalization", [x], consts=[scale, bias],
          axis=axis, epsilon=1e-5)


def lrn_spec(x, size, alpha, beta, bias):
    """ONNX's LRN definition, channel by channel, in float64."""
    sq = x.astype(np.float64) ** 2
    out = np.empty_like(sq)
    for c in range(x.shape[1]):
        lo = max(0, c - (size - 1) // 2)
        hi = min(x.shape[1] - 1, c + math.ceil((size - 1) / 2))
        out[:, c] = x[:, c] / (bias + alpha / size * sq[:, lo : hi + 1].sum(axis=1)) ** beta
    return out


@pytest.mark.parametrize("size", [3, 4])
def test_lrn(size):
    x = rand(2, 7, 5, 5)
    attrs = {"size": IntegerAttr(size, i64), "alpha": fattr(1e-2), "beta": fattr(0.75),
             "bias": fattr(2.0)}
    ours = run_collage([x], lambda a: [C.LrnOp(a, attrs)])
    np.testing.assert_allclose(ours[0], lrn_spec(x, size, 1e-2, 0.75, 2.0), rtol=1e-6)
    if size % 2:  # ONNX Runtime takes odd sizes only; onnx's evaluator slides over the batch axis
        check(ours, "LRN", [x], evaluator=False, size=size, alpha=1e-2, beta=0.75, bias=2.0)


# ---------------------------------------------------------------------------
# Layout
# ---------------------------------------------------------------------------


def test_reshape_transpose_expand():
    x = rand(2, 12)
    check(run_collage([x], lambda a: [C.ReshapeOp(a, (3, 2, 4))]), "Reshape", [x],
          consts=[np.array([3, 2, 4], np.int64)])
    check(run_collage([x], lambda a: [C.TransposeOp(a, (1, 0))]), "Transpose", [x], perm=[1, 0])
    y = rand(3, 1)
    check(run_collage([y], lambda a: [C.ExpandOp(a, (2, 3, 4))]), "Expand", [y],
          consts=[np.array([2, 3, 4], np.int64)])


def test_concat_variadic_and_tuple():
    a, b = rand(2, 3), rand(2, 5)
    check(run_collage([a, b], lambda x, y: [C.ConcatOp([x, y], 1)]), "Concat", [a, b], axis=1)

    def via_tuple(x, y):
        t = C.TupleOp([x, y])
        return [t, C.ConcatOp([t.output], -1)]

    check(run_collage([a, b], via_tuple), "Concat", [a, b], axis=-1)


def test_split():
    x = rand(2, 9)
    ours = run_collage([x], lambda a: [C.SplitOp(a, 1, (2, 3, 4))])
    check(ours, "Split", [x], consts=[np.array([2, 3, 4], np.int64)], axis=1)


SLICES = [
    ((0, 1), (2, 5), (0, 1), (1, 2)),
    ((-1,), (-100,), (1,), (-1,)),
    ((5, -2), (0, 0), (1, 0), (-2, -1)),
    ((-3,), (1000,), (-1,), (1,)),
]


@pytest.mark.parametrize("starts, ends, axes, steps", SLICES)
def test_slice(starts, ends, axes, steps):
    x = rand(4, 6, 3)
    ours = run_collage([x], lambda a: [C.SliceOp(a, starts, ends, axes, steps)])
    consts = [np.array(v, np.int64) for v in (starts, ends, axes, steps)]
    check(ours, "Slice", [x], consts=consts)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_negative_indices(axis):
    x = rand(4, 5, 3)
    idx = np.array([[0, -1], [2, -3]], np.int64)

    def build(a):
        i = constant_op(idx)
        return [i, C.GatherOp(a, i.output, axis)]

    check(run_collage([x], build), "Gather", [x], consts=[idx], axis=axis)


def test_pad():
    x = rand(2, 3, 4)
    pads = (0, 1, 2, 1, 0, 3)
    check(run_collage([x], lambda a: [C.PadOp(a, pads, 1.5)]), "Pad", [x],
          consts=[np.array(pads, np.int64), np.float32(1.5)])


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------

REDUCE = [(C.ReduceSumOp, "ReduceSum"), (C.ReduceMeanOp, "ReduceMean"),
          (C.ReduceMaxOp, "ReduceMax")]


@pytest.mark.parametrize("cls, onnx_op", REDUCE, ids=[r[1] for r in REDUCE])
@pytest.mark.parametrize("axes", [(1,), (0, -1), None])
@pytest.mark.parametrize("keepdims", [True, False])
def test_reduce(cls, onnx_op, axes, keepdims):
    x = rand(3, 4, 5)
    consts = [np.array(axes, np.int64)] if axes is not None else []
    check(run_collage([x], lambda a: [cls(a, axes, keepdims)]), onnx_op, [x], consts=consts,
          keepdims=int(keepdims))


def test_reduce_sum_keeps_int32():
    x = (rand(3, 4) * 100).astype(np.int32)
    ours = run_collage([x], lambda a: [C.ReduceSumOp(a, (1,), False)])
    check(ours, "ReduceSum", [x], consts=[np.array([1], np.int64)], keepdims=0)


# ---------------------------------------------------------------------------
# Convolution, matmul, pooling
# ---------------------------------------------------------------------------

CONVS = [  # input shape, weight shape, strides, pads, dilations, group
    ((1, 3, 9, 9), (4, 3, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    ((2, 3, 11, 10), (5, 3, 3, 2), (2, 3), (1, 0, 2, 1), (1, 1), 1),
    ((1, 2, 12, 12), (3, 2, 3, 3), (1, 2), (2, 2, 2, 2), (2, 3), 1),
    ((1, 6, 8, 8), (4, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2),
    ((2, 4, 7, 7), (8, 1, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 4),
    ((1, 8, 5, 5), (6, 8, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
]


@pytest.mark.parametrize("xs, ws, strides, pads, dilations, group", CONVS,
                         ids=["plain", "strided_padded", "dilated", "grouped", "depthwise", "1x1"])
def test_conv2d(xs, ws, strides, pads, dilations, group):
    x, w = rand(*xs), rand(*ws)

    def build(a):
        wc = constant_op(w)
        return [wc, C.Conv2dOp(a, wc.output, strides, pads, dilations, group)]

    check(run_collage([x], build), "Conv", [x], consts=[w], rtol=1e-4, atol=1e-5,
          strides=list(strides), pads=list(pads), dilations=list(dilations), group=group)


@pytest.mark.parametrize("sa, sb", [((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (3, 4, 2)),
                                    ((4,), (4, 3)), ((3, 4), (4,))])
def test_matmul(sa, sb):
    a, b = rand(*sa), rand(*sb)
    check(run_collage([a, b], lambda x, y: [C.MatmulOp(x, y)]), "MatMul", [a, b], rtol=1e-5)


POOLS = [  # kernel, strides, pads, ceil_mode
    ((2, 2), (2, 2), (0, 0, 0, 0), False),
    ((3, 3), (2, 2), (1, 1, 1, 1), False),
    ((3, 3), (2, 2), (0, 0, 0, 0), True),
    ((3, 2), (2, 3), (1, 0, 1, 1), True),
]


@pytest.mark.parametrize("kernel, strides, pads, ceil", POOLS,
                         ids=["2x2", "padded", "ceil", "ceil_asymmetric"])
def test_max_pool(kernel, strides, pads, ceil):
    x = rand(2, 3, 8, 9)
    ours = run_collage([x], lambda a: [C.MaxPool2dOp(a, kernel, strides, pads, ceil)])
    check(ours, "MaxPool", [x], kernel_shape=list(kernel), strides=list(strides),
          pads=list(pads), ceil_mode=int(ceil))


@pytest.mark.parametrize("kernel, strides, pads, ceil", POOLS,
                         ids=["2x2", "padded", "ceil", "ceil_asymmetric"])
@pytest.mark.parametrize("include_pad", [False, True], ids=["exclude_pad", "include_pad"])
def test_avg_pool(kernel, strides, pads, ceil, include_pad):
    x = rand(2, 3, 8, 9)
    attrs = {"count_include_pad": IntegerAttr(int(include_pad), i1)}
    ours = run_collage([x], lambda a: [C.AvgPool2dOp(a, kernel, strides, pads, ceil, attrs)])
    check(ours, "AveragePool", [x], kernel_shape=list(kernel), strides=list(strides),
          pads=list(pads), ceil_mode=int(ceil), count_include_pad=int(include_pad))


def test_global_avg_pool():
    x = rand(2, 3, 5, 4)
    check(run_collage([x], lambda a: [C.GlobalAvgPool2dOp(a)]), "GlobalAveragePool", [x])


# ---------------------------------------------------------------------------
# Tuples, calls, regions
# ---------------------------------------------------------------------------


def test_tuple_and_get_item():
    a, b = rand(2), rand(3, 1)

    def build(x, y):
        t = C.TupleOp([x, y])
        return [t, C.GetItemOp(t.output, 1)]

    (got,) = run_collage([a, b], build)
    np.testing.assert_array_equal(got, b)
    t_op = C.TupleOp([make_func([a], lambda x: [C.ReluOp(x)]).args[0]])
    assert evaluate_op(t_op, [a])[0][0] is a


def test_func_call():
    x = rand(2, 3)
    callee = make_func([x], lambda a: [C.NegOp(a)], name="neg")
    main_block = Block(arg_types=[tensor_type(x.shape, x.dtype)])
    call = CallOp("neg", [main_block.args[0]], [tensor_type(x.shape, x.dtype)])
    relu = C.ReluOp(call.results[0])
    main_block.add_ops([call, relu, ReturnOp(relu.output)])
    main = FuncOp("main", FunctionType.from_lists([relu.output.type], [relu.output.type]),
                  Region(main_block))
    module = ModuleOp([callee, main])
    module.verify()
    (y,) = run_module(module, [x])
    np.testing.assert_array_equal(y, np.maximum(-x, 0))


def test_kernel_region_runs_its_body():
    x = rand(2, 3)
    t = tensor_type(x.shape, x.dtype)

    def build(a):
        body = Block(arg_types=[t])
        exp = C.ExpOp(body.args[0])
        body.add_ops([exp, C.YieldOp([exp.output])])
        return [C.KernelOp("onnxruntime", [a], [t], Region(body), label="exp")]

    (y,) = run_collage([x], build)
    np.testing.assert_allclose(y, np.exp(x))


def test_outputs_are_writable_copies_of_weights():
    w = rand(5, 5)

    def build(a):
        c = constant_op(w)
        return [c]

    (y,) = run_collage([rand(1)], build)
    y[0, 0] = 100.0
    (again,) = run_collage([rand(1)], build)
    np.testing.assert_array_equal(again, w)


def test_intermediates_are_freed_after_their_last_use():
    x = rand(1024, 1024)  # 4 MiB

    def chain(a):
        ops = [C.NegOp(a)]
        for _ in range(11):
            ops.append(C.NegOp(ops[-1].output))
        return ops

    func = make_func([x], chain)
    tracemalloc.start()
    try:
        (y,) = run_function(func, [x])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(y, x)
    assert peak < 3 * x.nbytes, f"peak {peak / x.nbytes:.1f}x the input for 12 negations"


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def test_unknown_op_is_named():
    x = rand(2)
    func = make_func([x], lambda a: [UnknownOp([a], result_types=[a.type])])
    with pytest.raises(CollageError, match=r"test\.op: the reference interpreter has no"):
        run_function(func, [x])


@pytest.mark.parametrize("inputs, message", [
    ([rand(2, 4)], r"argument 0 .*expected float32\[2, 3\], got float32\[2, 4\]"),
    ([rand(2, 3).astype(np.float64)], r"argument 0 .*got float64\[2, 3\]"),
    ([], r"expected 1 inputs, got 0"),
])
def test_inputs_must_match_signature(inputs, message):
    func = make_func([rand(2, 3)], lambda a: [C.ReluOp(a)])
    with pytest.raises(CollageError, match=r"@main: " + message):
        run_function(func, inputs)


def test_missing_entry():
    module = ModuleOp([make_func([rand(2)], lambda a: [C.ReluOp(a)])])
    with pytest.raises(CollageError, match="no function @forward"):
        run_module(module, [rand(2)], entry="forward")


def test_gather_out_of_range_names_the_node():
    x, idx = rand(4, 2), np.array([4], np.int64)

    def build(a, i):
        gather = C.GatherOp(a, i, 0)
        gather.output.name_hint = "picked"
        return [gather]

    func = make_func([x, idx], build)
    message = r"collage.gather %picked: indices out of range \[-4, 3\]"
    with pytest.raises(CollageError, match=message):
        run_function(func, [x, idx])


def test_integer_division_by_zero():
    a, b = np.array([1, 2], np.int32), np.array([1, 0], np.int32)
    func = make_func([a, b], lambda x, y: [C.DivOp(x, y)])
    with pytest.raises(CollageError, match="collage.div: integer division by zero"):
        run_function(func, [a, b])


def test_evaluate_op_checks_operands():
    func = make_func([rand(2, 3)], lambda a: [C.ReluOp(a)])
    relu = next(iter(func.body.block.ops))
    with pytest.raises(CollageError, match=r"collage.relu: operand 0: expected float32\[2, 3\]"):
        evaluate_op(relu, [rand(3, 2)])
