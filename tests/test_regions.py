"""Phase 4 rewriting (`collage_xdsl.core.regions`) and outlining (`collage_xdsl.core.outline`):
kernel regions keep the semantics, clone constants, are ordered by dataflow and convex,
nest composites; overlapping kernels are errors; outlined kernels are deduplicated; and
kernels recovered from the regions partition back to the same IR."""

from __future__ import annotations

import pytest
from collage_xdsl.dialects.collage import CompositeOp, ConstantOp, KernelOp
from collage_xdsl.passes.partition import CollagePartitionPass
from ir_helpers import main_of, parse
from region_helpers import (
    DIAMOND,
    RELU_SIGMOID_MUL,
    T,
    check_semantics,
    kernels_of,
    nodes,
)
from xdsl.context import Context
from xdsl.dialects.func import CallOp

from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.outline import outline_kernels
from collage_xdsl.core.regions import (
    Kernel,
    PartitionError,
    form_regions,
    recover_kernels,
)
from collage_xdsl.core.subgraph import SubGraph


def test_partition_keeps_semantics_and_clones_constants():
    def rewrite(g: DataflowGraph):
        form_regions(g, [
            Kernel(SubGraph(g, nodes(g, "a", "r")), "tvm", 1e-6),
            Kernel(SubGraph(g, nodes(g, "s", "e", "m")), "onnxruntime", 2e-6),
            Kernel(SubGraph(g, nodes(g, "k")), "tvm"),
        ])

    after = check_semantics(DIAMOND, rewrite)
    first, second, third = kernels_of(after)
    assert [k.backend.data for k in (first, second, third)] == ["tvm", "onnxruntime", "tvm"]
    # a and r both leave the first kernel (r is also a graph output)
    assert len(first.outputs) == 2 and len(first.inputs) == 1
    # the constant is cloned into both kernels that read it; none is left outside
    assert all(any(isinstance(o, ConstantOp) for o in k.body.block.ops) for k in (first, second))
    assert not any(isinstance(o, ConstantOp) for o in main_of(after).body.block.ops)
    # the tuple is a host node: it stays outside, between the kernels
    assert [o.name for o in main_of(after).body.block.ops] == [
        "collage.kernel", "collage.kernel", "collage.tuple", "collage.kernel", "func.return"]
    assert first.cost is not None and first.cost.value.data == 1e-6 and third.cost is None


def test_kernels_are_ordered_by_dataflow_and_must_be_convex():
    # {a, m} with s between them leaves and re-enters: rejected
    g = DataflowGraph(main_of(parse(RELU_SIGMOID_MUL)))
    with pytest.raises(PartitionError, match="re-enters"):
        form_regions(g, [Kernel(SubGraph(g, nodes(g, "a", "m")), "tvm")])

    src2 = f"""
    func.func @main(%x: {T}, %y: {T}) -> ({T}, {T}) {{
      %a = collage.relu %x : {T}
      %s = collage.sigmoid %a : {T}
      %m = collage.exp %y : {T}
      func.return %s, %m : {T}, {T}
    }}"""

    # {a, m} is convex but s (in block order before m) reads a: the block is re-sorted
    def rewrite2(g: DataflowGraph):
        form_regions(g, [Kernel(SubGraph(g, nodes(g, "a", "m")), "tvm"),
                      Kernel(SubGraph(g, nodes(g, "s")), "onnxruntime")])

    after = check_semantics(src2, rewrite2)
    assert [k.backend.data for k in kernels_of(after)] == ["tvm", "onnxruntime"]


def test_composites_become_nested_regions():
    def rewrite(g: DataflowGraph):
        sub = SubGraph(g, nodes(g, "a", "r")).with_label("add_relu")
        form_regions(g, [Kernel(sub, "onnxruntime")])

    after = check_semantics(DIAMOND, rewrite)
    (kernel,) = kernels_of(after)
    assert kernel.label is not None and kernel.label.data == "add_relu"
    (composite,) = [o for o in kernel.body.block.ops if isinstance(o, CompositeOp)]
    assert composite.label.data == "add_relu"
    assert [o.name for o in composite.body.block.ops] == [
        "collage.constant", "collage.add", "collage.relu", "collage.yield"]


def test_kernel_label_names_ops_when_a_composite_covers_only_part():
    def rewrite(g: DataflowGraph):
        sub = SubGraph(g, nodes(g, "a", "r")).with_label("add_relu")
        sub = sub.disjoint_union(SubGraph(g, nodes(g, "s")))
        form_regions(g, [Kernel(sub, "onnxruntime")])

    after = check_semantics(DIAMOND, rewrite)
    (kernel,) = kernels_of(after)
    assert kernel.label is not None and kernel.label.data == "add_relu_sigmoid"
    assert [o.name for o in kernel.body.block.ops if o.name != "collage.constant"] == [
        "collage.composite", "collage.sigmoid", "collage.yield"]


def test_overlapping_kernels_are_an_error():
    g = DataflowGraph(main_of(parse(DIAMOND)))
    with pytest.raises(PartitionError, match="overlap"):
        form_regions(g, [Kernel(SubGraph(g, nodes(g, "a", "r")), "tvm"),
                      Kernel(SubGraph(g, nodes(g, "r", "s")), "tvm")])


def test_kernels_may_share_a_constant():
    """%c is read by a (tvm) and by m (onnxruntime): both kernels hold it and each gets
    its own clone; sharing an op is still an error (above)."""
    def rewrite(g: DataflowGraph):
        form_regions(g, [Kernel(SubGraph(g, nodes(g, "c", "a", "r")), "tvm"),
                      Kernel(SubGraph(g, nodes(g, "c", "s", "e", "m")), "onnxruntime"),
                      Kernel(SubGraph(g, nodes(g, "k")), "tvm")])

    after = check_semantics(DIAMOND, rewrite)
    first, second, _ = kernels_of(after)
    assert all(any(isinstance(o, ConstantOp) for o in k.body.block.ops) for k in (first, second))
    assert not any(isinstance(o, ConstantOp) for o in main_of(after).body.block.ops)


def test_outline_shares_structurally_equal_kernels():
    src = f"""
    func.func @main(%x: {T}) -> {T} {{
      %a = collage.relu %x : {T}
      %b = collage.relu %a : {T}
      %c = collage.relu %b : {T}
      func.return %c : {T}
    }}"""

    def rewrite(g: DataflowGraph):
        form_regions(g, [Kernel(SubGraph(g, nodes(g, n)), b)
                      for n, b in (("a", "tvm"), ("b", "tvm"), ("c", "onnxruntime"))])

    module = check_semantics(src, rewrite)
    functions = outline_kernels(module)
    assert [f.sym_name.data for f in functions] == ["collage_tvm_relu", "collage_onnxruntime_relu"]
    calls = [o.callee.root_reference.data for o in main_of(module).walk()
             if isinstance(o, CallOp)]
    assert calls == ["collage_tvm_relu", "collage_tvm_relu", "collage_onnxruntime_relu"]
    assert all("collage.kernel" in f.attributes for f in functions)


def test_recovered_kernels_partition_back_to_the_same_ir(example_module):
    module = example_module("mnist_cnn")
    CollagePartitionPass(backends=("tvm", "test"), estimator="mock",
                         mock_costs="tvm:1,test:0.5", backend_options="test: ops=conv2d,add,relu patterns=conv2d+add+relu", tvm_max_regions=False
                         ).apply(Context(), module)
    before = str(module)
    assert "collage.composite" in before
    graph, recovered = recover_kernels(main_of(module))
    assert not any(isinstance(op, KernelOp) for op in main_of(module).walk())
    assert [k.backend for k in recovered] == ["test", "tvm", "test", "tvm", "test"]
    assert all(k.cost is not None for k in recovered)
    form_regions(graph, recovered)
    assert str(module) == before
