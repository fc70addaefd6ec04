"""Graph rewrites before partitioning (`collage_xdsl.rewrite`): batch-norm and constant
folding keep every light model-zoo model's outputs; composites of named op chains are one
node each that partitioning keeps whole, that backends export and run, and whose kernel
is named after them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from collage_xdsl.dialects import collage as C
from ir_helpers import main_of, parse
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from collage_xdsl.backends import compile_kernel
from collage_xdsl.backends.test import make_test_backend
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.regions import Kernel, form_regions, kernel_label
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.errors import CollageError
from collage_xdsl.frontend import import_onnx
from collage_xdsl.ir.inputs import random_arguments
from collage_xdsl.ir.interpreter import run_module
from collage_xdsl.ir.tensors import constant_array, constant_op
from collage_xdsl.rewrite.batch_norm import fold_batch_norms, foldable
from collage_xdsl.rewrite.composites import form_pattern_composites, parse_patterns
from collage_xdsl.rewrite.constants import constant_of, fold_constants

ZOO = Path(onnx.__file__).parent / "backend/test/data/light"
FAST = {"inception_v2", "resnet50", "shufflenet", "squeezenet"}
"""Models in the default run; the others are marked `full` (a few seconds each)."""
BATCH_NORMS_LEFT = {"densenet121": 62, "inception_v2": 6, "resnet50": 0, "shufflenet": 0}
"""The models with BatchNormalization, and how many cannot fold (after a concat or pool)."""
MULS_LEFT = {"densenet121": 62, "inception_v2": 6}
"""Muls by a constant that fold into no weight (after an unfoldable batch norm)."""
PERTURBED_MAX = 1 << 20
"""Constants up to this many elements get random factors (bigger ones stay: the store)."""


def zoo_names() -> list[str]:
    return sorted(p.stem.removeprefix("light_") for p in ZOO.glob("light_*.onnx"))


def zoo_params(names) -> list:
    return [pytest.param(n, marks=() if n in FAST else pytest.mark.full) for n in names]


def perturb(module: ModuleOp, seed: int = 0) -> None:
    """Multiply each float constant by random factors in [0.5, 1.5] (signs kept, so
    variances stay positive): the light models' weights are splats, which hide errors."""
    rng = np.random.default_rng(seed)
    for op in list(module.walk()):
        if not isinstance(op, C.ConstantOp):
            continue
        array = constant_array(op)
        if array.dtype.kind != "f" or array.size > PERTURBED_MAX:
            continue
        new = constant_op((array * rng.uniform(0.5, 1.5, array.shape)).astype(array.dtype))
        Rewriter.replace_op(op, new)


def returning_logits(module: ModuleOp) -> None:
    """Return a final softmax's input instead: a saturated softmax hides differences."""
    ret = main_of(module).body.block.last_op
    softmax = ret.operands[0].owner
    if isinstance(softmax, C.SoftmaxOp):
        ret.operands = [softmax.input, *ret.operands[1:]]
        Rewriter.erase_op(softmax)


def zoo_model(name: str) -> tuple[ModuleOp, list[np.ndarray]]:
    """The light model, perturbed and returning logits, and seeded random arguments."""
    module = import_onnx(ZOO / f"light_{name}.onnx")
    perturb(module)
    returning_logits(module)
    return module, random_arguments(main_of(module), 0, 2)


def assert_close(after: list[np.ndarray], before: list[np.ndarray]) -> None:
    """Equal within 1e-5 relative (against the largest magnitude for entries near 0)."""
    for a, b in zip(after, before, strict=True):
        scale = float(np.abs(b.astype(np.float64)).max())
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * scale)


def ops_of(module: ModuleOp, cls) -> list:
    return [op for op in module.walk() if isinstance(op, cls)]


# ---------------------------------------------------------------------------
# Batch-norm and constant folding on the light model zoo
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", zoo_params(sorted(BATCH_NORMS_LEFT)))
def test_batch_norm_folding_keeps_zoo_outputs(name):
    module, args = zoo_model(name)
    before = run_module(module, args)
    norms = ops_of(module, C.BatchNormOp)
    folds = [bn for bn in norms if foldable(bn) is not None]
    assert folds
    fold_batch_norms(module)
    module.verify()
    left = ops_of(module, C.BatchNormOp)
    assert len(left) == len(norms) - len(folds) == BATCH_NORMS_LEFT[name]
    assert not any(foldable(bn) for bn in left)
    assert_close(run_module(module, args), before)


@pytest.mark.parametrize("name", zoo_params(zoo_names()))
def test_constant_folding_keeps_zoo_outputs(name):
    module, args = zoo_model(name)
    fold_batch_norms(module)
    before = run_module(module, args)
    fold_constants(module)
    module.verify()
    assert len(ops_of(module, C.MulOp)) == MULS_LEFT.get(name, 0)
    assert not [op for op in module.walk() if isinstance(op, C.GraphOp) and op.operands
                and all(constant_of(v) is not None for v in op.operands)]
    assert_close(run_module(module, args), before)


# ---------------------------------------------------------------------------
# Composites: the option, the rewrite, one node of the graph, partitioning
# ---------------------------------------------------------------------------

_T = "tensor<3x4xf32>"
SEED_004 = f"""
func.func @main(%x: {_T}, %y: {_T}) -> {_T} {{
  %lv0 = collage.mul %x, %y : ({_T}, {_T}) -> {_T}
  %gv0 = collage.add %lv0, %y : ({_T}, {_T}) -> {_T}
  %r = collage.relu %gv0 : {_T}
  func.return %r : {_T}
}}
"""
"""Seed 004's fma (a multiply feeding an add), and a relu after it."""


def with_composites(src: str, patterns: str) -> ModuleOp:
    module = parse(src)
    form_pattern_composites(module, parse_patterns(patterns))
    module.verify()
    return module


def test_seed_004_fma_becomes_one_primitive_that_computes_the_same():
    args = random_arguments(main_of(parse(SEED_004)), 0, 2)
    module = with_composites(SEED_004, "fma=mul+add")
    (fma,) = ops_of(module, C.CompositeOp)
    assert fma.label.data == "fma"
    assert [op.name for op in fma.body.block.ops] == [
        "collage.mul", "collage.add", "collage.yield"]
    assert [op.name for op in main_of(module).body.block.ops] == [
        "collage.composite", "collage.relu", "func.return"]
    assert_close(run_module(module, args), run_module(parse(SEED_004), args))


@pytest.mark.parametrize("text, message", [
    ("fma", r"^collage-composite-patterns: patterns: 'fma' is not label=op\+op"),
    ("fma=mul+", r"patterns: 'fma=mul\+' is not label=op\+op"),
    ("=mul+add", r"patterns: '=mul\+add' is not label=op\+op"),
    ("fma=mul+frobnicate", r"patterns: pattern 'fma' names unknown op 'frobnicate'$"),
    ("fma=mul+add; ;", None),
    (" ; ", r"patterns is empty"),
    ("f=mul+add;f=add", r"label 'f' is given twice"),
])
def test_bad_patterns_are_one_clear_error(text, message):
    if message is None:
        assert [c.label for c in parse_patterns(text)] == ["fma"]
        return
    with pytest.raises(CollageError, match=message) as error:
        parse_patterns(text)
    assert "\n" not in str(error.value)


def test_a_composite_is_one_node_of_its_ops_kind_a_backend_supports_iff_all_ops():
    module = with_composites(SEED_004, "fma=mul+add")
    graph = DataflowGraph(main_of(module))
    (fma,) = [n for n in graph.nodes if isinstance(n.op, C.CompositeOp)]
    assert fma.needs_kernel and fma.kind == C.OpPatternKind.BROADCAST
    assert make_test_backend(ops=["mul", "add"]).supports(fma.op)
    assert not make_test_backend(ops=["mul", "relu"]).supports(fma.op)
    kernel = Kernel(SubGraph(graph, 1 << fma.index), "test")
    assert kernel_label(graph, kernel) == "fma"
    assert kernel_label(graph, Kernel(SubGraph(graph, fma.downstream), "test")) == "fma_relu"


def test_composites_of_other_ops_hash_apart():
    """The kernel's structural hash (the cost-database key) sees inside a composite."""
    sub = SEED_004.replace("collage.add %lv0", "collage.sub %lv0")

    def composite_hash(src: str, patterns: str) -> str:
        graph = DataflowGraph(main_of(with_composites(src, patterns)))
        (node,) = [n for n in graph.nodes if isinstance(n.op, C.CompositeOp)]
        return SubGraph(graph, 1 << node.index).structural_hash()

    assert composite_hash(SEED_004, "f=mul+add") == composite_hash(SEED_004, "f=mul+add")
    assert composite_hash(SEED_004, "f=mul+add") != composite_hash(sub, "f=mul+sub")


def test_a_composite_kernel_exports_to_onnx_and_runs_on_onnxruntime():
    module = with_composites(SEED_004, "fma=mul+add")
    graph = DataflowGraph(main_of(module))
    (node,) = [n for n in graph.nodes if isinstance(n.op, C.CompositeOp)]
    extracted = SubGraph(graph, node.downstream).extract()
    assert [op.name for op in main_of(extracted).body.block.ops] == [
        "collage.composite", "collage.relu", "func.return"]
    args = random_arguments(main_of(extracted), 0, 2)
    kernel = compile_kernel("onnxruntime", extracted)
    try:
        assert_close(kernel(args), run_module(extracted, args, entry="kernel"))
    finally:
        kernel.release()


def test_a_composite_beside_a_kernel_does_not_verify():
    module = with_composites(SEED_004, "fma=mul+add")
    graph = DataflowGraph(main_of(module))
    (relu,) = [n for n in graph.nodes if isinstance(n.op, C.ReluOp)]
    form_regions(graph, [Kernel(SubGraph(graph, 1 << relu.index), "tvm")])
    with pytest.raises(VerifyException, match="collage.composite must be inside a "
                                              "collage.kernel when its function holds kernels"):
        module.verify()


def test_partition_keeps_each_composite_whole_in_one_kernel():
    from collage_xdsl.passes.outline import CollageOutlinePass
    from collage_xdsl.passes.partition import CollagePartitionPass

    module, args = zoo_model("squeezenet")
    before = run_module(module, args)
    form_pattern_composites(module, parse_patterns("conv_bias_relu=conv2d+add+relu"))
    composites = ops_of(module, C.CompositeOp)
    assert len(composites) == 26
    CollagePartitionPass(backends=("tvm", "onnxruntime"),
                         mock_costs="tvm:2,onnxruntime:1").apply(Context(), module)
    module.verify()
    assert ops_of(module, C.CompositeOp) == composites
    for composite in composites:
        assert isinstance(composite.parent_op(), C.KernelOp)
        assert [op.name for op in composite.body.block.ops if op.name != "collage.constant"] == [
            "collage.conv2d", "collage.add", "collage.relu", "collage.yield"]
    assert_close(run_module(module, args), before)
    CollageOutlinePass().apply(Context(), module)
    assert_close(run_module(module, args), before)
