"""Baseline passes (`collage-assign`, `collage-fuse-ops`, `collage-partition-for`) and
`collage-partition` on real example models: every kernel op ends up in a kernel region of
the expected backend and the rewritten model computes what the original did."""

from __future__ import annotations

import numpy as np
import pytest
from collage_xdsl.dialects.collage import ConstantOp, GetItemOp, KernelOp, TupleOp
from collage_xdsl.passes.assign import CollageAssignPass
from collage_xdsl.passes.fuse_ops import CollageFuseOpsPass
from collage_xdsl.passes.outline import CollageOutlinePass
from collage_xdsl.passes.partition import CollagePartitionPass
from collage_xdsl.passes.partition_for import CollagePartitionForPass
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.passes import ModulePass

from collage_xdsl.errors import CollageError
from collage_xdsl.ir.interpreter import run_module
from collage_xdsl.measure.estimator import random_inputs


@pytest.fixture(scope="module", params=["mnist_cnn", "mlp"])
def model(request, example_module) -> tuple[str, ModuleOp, list[np.ndarray], list[np.ndarray]]:
    module = example_module(request.param)
    inputs = random_inputs(module)
    return request.param, module, inputs, run_module(module, inputs)


PASSES: dict[str, tuple[ModulePass, set[str]]] = {
    "assign-tvm": (CollageAssignPass(backend="tvm"), {"tvm"}),
    "assign-ort": (CollageAssignPass(backend="onnxruntime"), {"onnxruntime"}),
    "assign-ort-per-op": (CollageAssignPass(backend="onnxruntime", fusion="none"),
                          {"onnxruntime"}),
    "fuse-ops": (CollageFuseOpsPass(), {"tvm"}),
    "partition-for": (CollagePartitionForPass(backend="test", backend_options="test: ops=conv2d,relu"),
                      {"test", "tvm"}),
    "partition": (CollagePartitionPass(backends=("tvm", "onnxruntime", "openvino"),
                                       mock_costs="tvm:1,onnxruntime:1.5,openvino:2"),
                  {"tvm", "onnxruntime", "openvino"}),
}


def kernels(module: ModuleOp) -> list[KernelOp]:
    return [op for op in module.walk() if isinstance(op, KernelOp)]


@pytest.mark.parametrize("name", PASSES)
def test_baseline_covers_every_op_and_keeps_semantics(model, name):
    model_name, original, inputs, expected = model
    pass_, backends = PASSES[name]
    module = original.clone()
    pass_.apply(Context(), module)
    module.verify()
    main = next(op for op in module.ops if isinstance(op, FuncOp))
    outside = {type(op) for op in main.body.block.ops} - {KernelOp}
    assert outside <= {TupleOp, GetItemOp, ConstantOp, ReturnOp}, (model_name, outside)
    assert {k.backend.data for k in kernels(module)} <= backends
    for got, want in zip(run_module(module, inputs), expected):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    CollageOutlinePass().apply(Context(), module)
    module.verify()
    for got, want in zip(run_module(module, inputs), expected):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_fuse_ops_groups_conv_bias_relu(example_module):
    module = example_module("mnist_cnn")
    CollageFuseOpsPass().apply(Context(), module)
    labels = [k.label.data for k in kernels(module) if k.label is not None]
    assert labels.count("conv2d_add_relu") == 2, labels


def test_assign_whole_graph_to_a_graph_compiler(example_module):
    module = example_module("mlp")
    CollageAssignPass(backend="openvino").apply(Context(), module)
    (kernel,) = kernels(module)
    assert kernel.backend.data == "openvino"


T = "tensor<2x3xf32>"
SOURCES = {
    # a concatenate of a tuple, and a function returning a tuple
    "concat": f"""
func.func @main(%x: {T}, %y: {T}) -> tensor<4x3xf32> {{
  %a = collage.relu %x : {T}
  %s = collage.sigmoid %y : {T}
  %t = collage.tuple %a, %s : ({T}, {T}) -> tuple<{T}, {T}>
  %k = collage.concat %t {{axis = 0 : i64}} : (tuple<{T}, {T}>) -> tensor<4x3xf32>
  func.return %k : tensor<4x3xf32>
}}
""",
    "tuple_result": f"""
func.func @main(%x: {T}, %y: {T}) -> tuple<{T}, {T}> {{
  %a = collage.relu %x : {T}
  %b = collage.add %a, %y : ({T}, {T}) -> {T}
  %t = collage.tuple %a, %b : ({T}, {T}) -> tuple<{T}, {T}>
  func.return %t : tuple<{T}, {T}>
}}
""",
}


@pytest.mark.parametrize("source", ["mnist_cnn", *SOURCES])
def test_whole_fusion_gives_tvm_one_kernel_that_runs(source, example_module):
    """`fusion=whole`: tvm gets the whole model as one kernel (tuples inside), as the
    benchmark runs tvm alone; compiled by TVM it matches the interpreter."""
    from ir_helpers import parse

    from collage_xdsl.core.outline import kernel_functions
    from collage_xdsl.planner.pipeline import assign_module
    from collage_xdsl.runtime.executable import Executable

    module = parse(SOURCES[source]) if source in SOURCES else example_module(source)
    (kernel,) = kernel_functions(assign_module(module, "tvm", "whole"))
    assert kernel.attributes["collage.backend"].data == "tvm"
    inputs = random_inputs(module)
    got = Executable(assign_module(module, "tvm", "whole")).run(inputs)
    for g, want in zip(got, run_module(module, inputs)):
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5)


def test_partition_for_offloads_regions_and_fuses_the_rest_for_tvm(example_module):
    module = example_module("mnist_cnn")
    CollagePartitionForPass(backend="test", backend_options="test: ops=conv2d,add,relu").apply(
        Context(), module)
    by_backend = {}
    for k in kernels(module):
        by_backend.setdefault(k.backend.data, []).append(
            [o.name.removeprefix("collage.") for o in k.body.block.ops][:-1])
    # the conv / bias / relu chains go to the backend; pooling and the rest to tvm
    assert all("max_pool2d" not in ops for ops in by_backend["test"])
    assert any("conv2d" in ops and "relu" in ops for ops in by_backend["test"])
    assert any("max_pool2d" in ops for ops in by_backend["tvm"])


def test_bad_options_are_errors(example_module):
    module = example_module("mlp")
    with pytest.raises(CollageError, match="unknown fusion"):
        CollageAssignPass(backend="tvm", fusion="maybe").apply(Context(), module)
    with pytest.raises(CollageError, match="unknown backend"):
        CollageAssignPass(backend="nope").apply(Context(), module)
    with pytest.raises(CollageError, match="not tvm"):
        CollagePartitionForPass(backend="tvm").apply(Context(), module)
    with pytest.raises(CollageError, match="max-fused-ops must be at least 1, got 0"):
        CollageFuseOpsPass(max_fused_ops=0).apply(Context(), module)
    with pytest.raises(CollageError, match="max-fused-ops must be at least 1, got 0"):
        CollageAssignPass(backend="tvm", max_fused_ops=0).apply(Context(), module)
    with pytest.raises(CollageError, match="max-fused-ops must be at least 1, got -1"):
        CollagePartitionForPass(max_fused_ops=-1).apply(Context(), module)
