"""The collage dialect: every op has its pattern kind, builds through its Python
constructor, verifies, and survives printing and re-parsing (custom and generic form)."""

from __future__ import annotations

from collections.abc import Callable
from io import StringIO

import numpy as np
import pytest
from collage_xdsl.dialects import collage as C
from collage_xdsl.dialects import ir_context
from collage_xdsl.dialects.collage import OpPatternKind as K
from xdsl.context import Context
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    f32,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from collage_xdsl.ir.tensors import constant_array, constant_op, tensor_type

ARGS = {  # name: (shape, dtype) of the function arguments the builders use
    "x": ((1, 4, 8, 8), np.float32),
    "w": ((6, 4, 3, 3), np.float32),
    "m": ((2, 3), np.float32),
    "n": ((3, 5), np.float32),
    "b": ((2, 3), np.bool_),
    "idx": ((2,), np.int64),
    "c3": ((3,), np.float32),
    "c4": ((4,), np.float32),
    "i": ((2, 3), np.int64),
}

V = dict[str, SSAValue]
Builder = Callable[[V], Operation]


def _f(v: float) -> FloatAttr:
    return FloatAttr(v, f32)


def _i(v: int) -> IntegerAttr:
    return IntegerAttr(v, i64)


def _kernel(v: V) -> C.KernelOp:
    block = Block(arg_types=[v["m"].type])
    relu = C.ReluOp(block.args[0])
    block.add_ops([relu, C.YieldOp([relu.output])])
    return C.KernelOp("tvm", [v["m"]], [v["m"].type], Region(block), label="relu", cost=1e-6)


def _composite(v: V) -> C.CompositeOp:
    """A composite inside its kernel (`_module` adds the kernel)."""
    outer = Block(arg_types=[v["m"].type, v["n"].type])
    block = Block(arg_types=[v["m"].type, v["n"].type])
    mm = C.MatmulOp(block.args[0], block.args[1])
    block.add_ops([mm, C.YieldOp([mm.output])])
    composite = C.CompositeOp("dense", list(outer.args), [mm.output.type], Region(block))
    outer.add_ops([composite, C.YieldOp(list(composite.outputs))])
    C.KernelOp("onnxruntime", [v["m"], v["n"]], [mm.output.type], Region(outer))
    return composite


# op class: (builder, expected pattern kind, or None for the structural region ops)
OPS: dict[type[Operation], tuple[Builder, K | None]] = {
    C.ConstantOp: (lambda v: constant_op(np.arange(6, dtype=np.float32).reshape(2, 3)), K.ELEMWISE),
    C.TupleOp: (lambda v: C.TupleOp([v["m"], v["n"]]), K.TUPLE),
    C.GetItemOp: (lambda v: C.GetItemOp(C.TupleOp([v["m"], v["n"]]).output, 1), K.INJECTIVE),
    C.ReluOp: (lambda v: C.ReluOp(v["m"]), K.ELEMWISE),
    C.SigmoidOp: (lambda v: C.SigmoidOp(v["m"]), K.ELEMWISE),
    C.TanhOp: (lambda v: C.TanhOp(v["m"]), K.ELEMWISE),
    C.ErfOp: (lambda v: C.ErfOp(v["m"]), K.ELEMWISE),
    C.ExpOp: (lambda v: C.ExpOp(v["m"]), K.ELEMWISE),
    C.LogOp: (lambda v: C.LogOp(v["m"]), K.ELEMWISE),
    C.SqrtOp: (lambda v: C.SqrtOp(v["m"]), K.ELEMWISE),
    C.ReciprocalOp: (lambda v: C.ReciprocalOp(v["m"]), K.ELEMWISE),
    C.NegOp: (lambda v: C.NegOp(v["m"]), K.ELEMWISE),
    C.AbsOp: (lambda v: C.AbsOp(v["m"]), K.ELEMWISE),
    C.NotOp: (lambda v: C.NotOp(v["b"]), K.ELEMWISE),
    C.LeakyReluOp: (lambda v: C.LeakyReluOp(v["m"], {"alpha": _f(0.1)}), K.ELEMWISE),
    C.HardSigmoidOp: (lambda v: C.HardSigmoidOp(v["m"], {"alpha": _f(0.2), "beta": _f(0.5)}),
                      K.ELEMWISE),
    C.HardSwishOp: (lambda v: C.HardSwishOp(v["m"]), K.ELEMWISE),
    C.MishOp: (lambda v: C.MishOp(v["m"]), K.ELEMWISE),
    C.EluOp: (lambda v: C.EluOp(v["m"], {"alpha": _f(1.0)}), K.ELEMWISE),
    C.SoftplusOp: (lambda v: C.SoftplusOp(v["m"]), K.ELEMWISE),
    C.SeluOp: (lambda v: C.SeluOp(v["m"], {"alpha": _f(1.6733), "gamma": _f(1.0507)}),
               K.ELEMWISE),
    C.PReluOp: (lambda v: C.PReluOp(v["m"], v["c3"]), K.BROADCAST),
    C.ClipOp: (lambda v: C.ClipOp(v["m"], {"min": _f(0.0), "max": _f(6.0)}), K.ELEMWISE),
    C.GeluOp: (lambda v: C.GeluOp(v["m"], {"approximate": StringAttr("tanh")}), K.ELEMWISE),
    C.CastOp: (lambda v: C.CastOp(v["i"], f32), K.ELEMWISE),
    C.QuantizeLinearOp: (lambda v: C.QuantizeLinearOp(
        v["m"], constant_op(np.full(3, 0.1, np.float32)).output,
        constant_op(np.arange(3, dtype=np.int8)).output, 1), K.ELEMWISE),
    C.DequantizeLinearOp: (lambda v: C.DequantizeLinearOp(
        constant_op(np.arange(6, dtype=np.uint8).reshape(2, 3)).output,
        constant_op(np.float32(0.5)).output, constant_op(np.uint8(3)).output), K.ELEMWISE),
    C.AddOp: (lambda v: C.AddOp(v["m"], v["c3"]), K.BROADCAST),
    C.SubOp: (lambda v: C.SubOp(v["m"], v["m"]), K.BROADCAST),
    C.MulOp: (lambda v: C.MulOp(v["m"], v["c3"]), K.BROADCAST),
    C.DivOp: (lambda v: C.DivOp(v["m"], v["m"]), K.BROADCAST),
    C.PowOp: (lambda v: C.PowOp(v["m"], v["m"]), K.BROADCAST),
    C.MaximumOp: (lambda v: C.MaximumOp(v["m"], v["m"]), K.BROADCAST),
    C.MinimumOp: (lambda v: C.MinimumOp(v["m"], v["m"]), K.BROADCAST),
    C.EqualOp: (lambda v: C.EqualOp(v["i"], v["i"]), K.BROADCAST),
    C.LessOp: (lambda v: C.LessOp(v["m"], v["c3"]), K.BROADCAST),
    C.GreaterOp: (lambda v: C.GreaterOp(v["m"], v["m"]), K.BROADCAST),
    C.WhereOp: (lambda v: C.WhereOp(v["b"], v["m"], v["c3"]), K.BROADCAST),
    C.BatchNormOp: (lambda v: C.BatchNormOp(v["x"], *[v["c4"]] * 4, 1e-5), K.BROADCAST),
    C.ExpandOp: (lambda v: C.ExpandOp(v["c3"], (4, 3)), K.BROADCAST),
    C.ReshapeOp: (lambda v: C.ReshapeOp(v["m"], (3, 2)), K.INJECTIVE),
    C.TransposeOp: (lambda v: C.TransposeOp(v["x"], (0, 2, 3, 1)), K.INJECTIVE),
    C.ConcatOp: (lambda v: C.ConcatOp([v["m"], v["m"]], 1), K.INJECTIVE),
    C.SplitOp: (lambda v: C.SplitOp(v["n"], 1, (1, 4)), K.INJECTIVE),
    C.SliceOp: (lambda v: C.SliceOp(v["n"], (0,), (5,), (1,), (2,)), K.INJECTIVE),
    C.GatherOp: (lambda v: C.GatherOp(v["n"], v["idx"], 0), K.INJECTIVE),
    C.PadOp: (lambda v: C.PadOp(v["m"], (1, 0, 0, 2), 0.5), K.INJECTIVE),
    C.TileOp: (lambda v: C.TileOp(v["m"], (2, 1)), K.INJECTIVE),
    C.ResizeOp: (lambda v: C.ResizeOp(v["x"], "nearest", "asymmetric", "floor",
                                      scales=(2.0, 1.5)), K.INJECTIVE),
    C.GatherElementsOp: (lambda v: C.GatherElementsOp(v["m"], v["i"], 1), K.INJECTIVE),
    C.GatherNdOp: (lambda v: C.GatherNdOp(v["n"], v["idx"], 0), K.INJECTIVE),
    C.ScatterNdOp: (lambda v: C.ScatterNdOp(
        v["n"], v["idx"], constant_op(np.array(1.5, np.float32)).output, "add"), K.OPAQUE),
    C.TopKOp: (lambda v: C.TopKOp(v["m"], 2, 1, True), K.OPAQUE),
    C.CumSumOp: (lambda v: C.CumSumOp(v["m"], 1, True, False), K.OPAQUE),
    C.ReduceSumOp: (lambda v: C.ReduceSumOp(v["m"], (1,), False), K.COMM_REDUCE),
    C.ReduceMeanOp: (lambda v: C.ReduceMeanOp(v["x"], (2, 3), True), K.COMM_REDUCE),
    C.ReduceMaxOp: (lambda v: C.ReduceMaxOp(v["m"], None, False), K.COMM_REDUCE),
    C.ReduceMinOp: (lambda v: C.ReduceMinOp(v["x"], (1,), True), K.COMM_REDUCE),
    C.ReduceL2Op: (lambda v: C.ReduceL2Op(v["m"], (-1,), False), K.COMM_REDUCE),
    C.ArgMaxOp: (lambda v: C.ArgMaxOp(v["m"], 1, False), K.COMM_REDUCE),
    C.Conv2dOp: (lambda v: C.Conv2dOp(v["x"], v["w"], (2, 2), (1, 1, 1, 1)),
                 K.OUT_EWISE_FUSABLE),
    C.ConvTranspose2dOp: (lambda v: C.ConvTranspose2dOp(  # the conv's [1, 6, 4, 4] back up
        C.Conv2dOp(v["x"], v["w"], (2, 2), (1, 1, 1, 1)).output, v["w"], (2, 2), (1, 1, 1, 1),
        output_padding=(1, 1)), K.OUT_EWISE_FUSABLE),
    C.MatmulOp: (lambda v: C.MatmulOp(v["m"], v["n"]), K.OUT_EWISE_FUSABLE),
    C.MaxPool2dOp: (lambda v: C.MaxPool2dOp(v["x"], (3, 3), (2, 2), (1, 1, 1, 1)),
                    K.OUT_EWISE_FUSABLE),
    C.AvgPool2dOp: (lambda v: C.AvgPool2dOp(v["x"], (2, 2), (2, 2), (0, 0, 0, 0), True),
                    K.OUT_EWISE_FUSABLE),
    C.GlobalAvgPool2dOp: (lambda v: C.GlobalAvgPool2dOp(v["x"]), K.OUT_EWISE_FUSABLE),
    C.EinsumOp: (lambda v: C.EinsumOp([v["m"], v["n"]], "ij, jk -> ik"), K.OUT_EWISE_FUSABLE),
    C.SoftmaxOp: (lambda v: C.SoftmaxOp(v["m"], {"axis": _i(-1)}), K.OPAQUE),
    C.LrnOp: (lambda v: C.LrnOp(v["x"], {"size": _i(3), "alpha": _f(1e-4), "beta": _f(0.75),
                                         "bias": _f(1.0)}), K.OPAQUE),
    C.LayerNormOp: (lambda v: C.LayerNormOp(v["m"], v["c3"], v["c3"], -1, 1e-5), K.OPAQUE),
    C.InstanceNormOp: (lambda v: C.InstanceNormOp(v["x"], v["c4"], v["c4"], 1e-5), K.OPAQUE),
    C.GroupNormOp: (lambda v: C.GroupNormOp(v["x"], v["c4"], v["c4"], 2, 1e-5), K.OPAQUE),
    C.KernelOp: (_kernel, None),
    C.CompositeOp: (_composite, None),
    C.YieldOp: (lambda v: _kernel(v).body.block.last_op, None),
}


def _context() -> Context:
    return ir_context()


def _module(builders: list[Builder]) -> ModuleOp:
    """A verified-able module whose @main applies each builder to the arguments."""
    block = Block(arg_types=[tensor_type(s, d) for s, d in ARGS.values()])
    values = dict(zip(ARGS, block.args))
    for build in builders:
        op = build(values)
        top = op if op.parent is None else op.parent_op()  # a yield: add its kernel
        for operand in top.operands:  # producers built on the fly (the tuple of get_item)
            if isinstance(operand.owner, Operation) and operand.owner.parent is None:
                block.add_op(operand.owner)
        block.add_op(top)
    block.add_op(ReturnOp())
    func = FuncOp("main", ([a.type for a in block.args], []), Region(block))
    return ModuleOp([func])


def _print(op: Operation, generic: bool = False) -> str:
    out = StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(op)
    return out.getvalue()


def test_every_op_is_covered():
    assert set(OPS) == set(C.Collage.operations)


@pytest.mark.parametrize("cls", list(OPS), ids=lambda c: c.name)
def test_pattern_kind(cls):
    kind = OPS[cls][1]
    if kind is None:
        assert not issubclass(cls, C.GraphOp)
    else:
        assert issubclass(cls, C.GraphOp)
        assert cls.PATTERN_KIND is kind


@pytest.mark.parametrize("cls", list(OPS), ids=lambda c: c.name)
@pytest.mark.parametrize("generic", [False, True], ids=["custom", "generic"])
def test_build_verify_print_parse(cls, generic):
    module = _module([OPS[cls][0]])
    module.verify()
    assert any(isinstance(op, cls) for op in module.walk())
    text = _print(module, generic)
    reparsed = Parser(_context(), text).parse_module()
    reparsed.verify()
    assert _print(reparsed, generic) == text
    assert reparsed.is_structurally_equivalent(module)


def test_all_ops_in_one_module_round_trip():
    module = _module([build for build, _ in OPS.values()])
    module.verify()
    custom = _print(module)
    generic = _print(module, generic=True)
    assert _print(Parser(_context(), custom).parse_module()) == custom
    assert _print(Parser(_context(), generic).parse_module()) == custom


def test_infer_result_types_matches_the_built_result():
    module = _module([build for build, kind in OPS.values() if kind is not None])
    for op in module.walk():
        if isinstance(op, C.GraphOp):
            assert op.infer_result_types() == [r.type for r in op.results], op.name


def test_constructor_rejects_a_bad_shape():
    block = Block(arg_types=[tensor_type((2, 3), np.float32), tensor_type((4, 5), np.float32)])
    with pytest.raises(VerifyException, match="contracting dimensions differ"):
        C.MatmulOp(*block.args)


def test_large_constant_prints_by_reference(tmp_path, monkeypatch):
    monkeypatch.setenv("COLLAGE_WEIGHTS_DIR", str(tmp_path))
    weights = np.random.default_rng(0).standard_normal((512, 1024)).astype(np.float32)
    op = constant_op(weights)
    module = _module([lambda v: op])
    custom, generic = _print(module), _print(module, generic=True)
    assert "#collage.weight<" in custom
    assert len(custom) < 1000 and len(generic) < 1000
    for text in (custom, generic):
        reparsed = Parser(_context(), text).parse_module()
        const = next(o for o in reparsed.walk() if isinstance(o, C.ConstantOp))
        np.testing.assert_array_equal(constant_array(const), weights)


def test_small_constant_prints_inline():
    module = _module([lambda v: constant_op(np.array([1.5, -2.0], np.float32))])
    assert "dense<[1.500000e+00, -2.000000e+00]> : tensor<2xf32>" in _print(module)

