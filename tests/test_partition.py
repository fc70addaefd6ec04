"""Phase 4 rewriting (`collage_xdsl.core.regions`) and `collage-outline`: semantics kept,
regions well formed, MaxCoalesce only when valid, outlined kernels deduplicated."""

from __future__ import annotations

import numpy as np
import pytest
from collage_xdsl.dialects.collage import CompositeOp, ConstantOp, KernelOp
from ir_helpers import main_of, parse
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import CallOp

from collage_xdsl.core.coalesce import coalesce, coalesce_costed
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import of
from collage_xdsl.core.outline import outline_kernels
from collage_xdsl.core.regions import Kernel, PartitionError, form_regions
from collage_xdsl.core.subgraph import SubGraph, SubGraphConfig
from collage_xdsl.ir.interpreter import run_function, run_module
from collage_xdsl.measure.estimator import random_inputs

T = "tensor<2x3xf32>"
BIN = f"({T}, {T}) -> {T}"

# %x -> add(c) -> relu -> sigmoid -> add -> mul(c) -> concat(tuple(.., %y)) ; a diamond,
# a constant read twice, a tuple feeding concatenate and two results.
DIAMOND = f"""
func.func @main(%x: {T}, %y: {T}) -> (tensor<4x3xf32>, {T}) {{
  %c = collage.constant dense<1.5> : {T}
  %a = collage.add %x, %c : {BIN}
  %r = collage.relu %a : {T}
  %s = collage.sigmoid %a : {T}
  %e = collage.add %r, %s : {BIN}
  %m = collage.mul %e, %c : {BIN}
  %t = collage.tuple %m, %y : ({T}, {T}) -> tuple<{T}, {T}>
  %k = collage.concat %t {{axis = 0 : i64}} : (tuple<{T}, {T}>) -> tensor<4x3xf32>
  func.return %k, %r : tensor<4x3xf32>, {T}
}}
"""


def nodes(graph: DataflowGraph, *names: str) -> int:
    """The nodes defining the values named `names` (by SSA name hint)."""
    wanted = set(names)
    return of(
        n.index for n in graph.nodes if n.op is not None and n.op.results
        and n.op.results[0].name_hint in wanted
    )


def check_semantics(src: str, rewrite) -> ModuleOp:
    """Run `rewrite(graph)` on a fresh module; before and after (and after outlining)
    compute the same values on random inputs."""
    before = parse(src)
    inputs = random_inputs(before)
    expected = run_function(main_of(before), inputs)
    after = parse(src)
    rewrite(DataflowGraph(main_of(after)))
    after.verify()
    for got, want in zip(run_function(main_of(after), inputs), expected):
        np.testing.assert_array_equal(got, want)
    outlined = after.clone()
    outline_kernels(outlined)
    outlined.verify()
    for got, want in zip(run_module(outlined, inputs), expected):
        np.testing.assert_array_equal(got, want)
    return after


def kernels_of(module: ModuleOp) -> list[KernelOp]:
    return [op for op in module.walk() if isinstance(op, KernelOp)]


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


RELU_SIGMOID_MUL = f"""
func.func @main(%x: {T}) -> {T} {{
  %a = collage.relu %x : {T}
  %s = collage.sigmoid %a : {T}
  %m = collage.mul %a, %s : {BIN}
  func.return %m : {T}
}}"""
"""{a, m} with s between them: a path leaves {a, m} and re-enters it."""


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


def _valid(config: SubGraphConfig):
    return lambda sub, backend: sub.is_valid(config)


def test_coalesce_merges_touching_kernels_of_one_backend():
    g = DataflowGraph(main_of(parse(DIAMOND)))
    kernels = [Kernel(SubGraph(g, nodes(g, n)), "tvm", 1.0) for n in ("a", "r", "s", "e")]
    kernels.append(Kernel(SubGraph(g, nodes(g, "m")), "onnxruntime", 1.0))
    merged = coalesce(g, kernels, _valid(SubGraphConfig(max_exits=0, allow_taps=True)))
    assert sorted((k.backend, k.inside, k.cost) for k in merged) == sorted([
        ("tvm", nodes(g, "a", "r", "s", "e"), 4.0), ("onnxruntime", nodes(g, "m"), 1.0)])
    # a depth limit stops the merge early
    limited = coalesce(g, kernels, _valid(SubGraphConfig(max_exits=0, allow_taps=True,
                                                         max_depth=2)))
    assert all(k.sub_graph.depth <= 2 for k in limited) and len(limited) > 2


@pytest.mark.parametrize("merged_cost, launch, expect_merged", [
    (3.5, 0.0, True),             # cheaper as one kernel: kept, with its own cost
    (4.5, 0.0, False),            # dearer than its parts: the parts stay apart
    (4.5, 0.25, True),            # ... unless the launches it saves pay for it (4.75 < 5)
    (float("inf"), 0.0, False),   # Invalid as one kernel
    (None, 0.0, False),           # not known
])
def test_coalesce_costed_keeps_a_merge_only_when_it_is_no_dearer(merged_cost, launch,
                                                                 expect_merged):
    g = DataflowGraph(main_of(parse(DIAMOND)))
    kernels = [Kernel(SubGraph(g, nodes(g, n)), "tvm", 1.0) for n in ("a", "r", "s", "e")]
    kernels.append(Kernel(SubGraph(g, nodes(g, "m")), "onnxruntime", 1.0))
    asked = []

    def cost_of(merged):
        asked.extend(k.inside for k in merged)
        return [merged_cost for _ in merged]

    result = coalesce_costed(g, kernels, _valid(SubGraphConfig(max_exits=0, allow_taps=True)),
                             cost_of, lambda backend: launch)
    assert asked == [nodes(g, "a", "r", "s", "e")]  # only the merged kernel is costed
    got = sorted((k.backend, k.inside, k.cost) for k in result)
    if expect_merged:
        assert got == sorted([("tvm", nodes(g, "a", "r", "s", "e"), merged_cost),
                              ("onnxruntime", nodes(g, "m"), 1.0)])
    else:
        assert got == sorted((k.backend, k.inside, k.cost) for k in kernels)


@pytest.mark.parametrize("merged_cost", [3.5, 4.5])
def test_coalesce_costed_with_a_shared_constant_keeps_each_kernel_once(merged_cost):
    """The tvm kernels merge; the onnxruntime one shares only %c with them and is neither
    a part of the merge nor repeated when the merge is dearer than its parts."""
    g = DataflowGraph(main_of(parse(DIAMOND)))
    c = nodes(g, "c")
    kernels = [Kernel(SubGraph(g, nodes(g, "a") | c), "tvm", 1.0)]
    kernels += [Kernel(SubGraph(g, nodes(g, n)), "tvm", 1.0) for n in ("r", "s", "e")]
    kernels.append(Kernel(SubGraph(g, nodes(g, "m") | c), "onnxruntime", 1.0))
    result = coalesce_costed(g, kernels, _valid(SubGraphConfig(max_exits=0, allow_taps=True)),
                             lambda merged: [merged_cost for _ in merged], lambda backend: 0.0)
    got = sorted((k.backend, k.inside) for k in result)
    if merged_cost < 4:
        assert got == sorted([("tvm", nodes(g, "a", "r", "s", "e") | c),
                              ("onnxruntime", nodes(g, "m") | c)])
    else:
        assert got == sorted((k.backend, k.inside) for k in kernels)
    form_regions(g, result)


def test_coalesce_never_creates_a_cycle():
    # a and m on tvm with s on onnxruntime between them: {a, m} would leave and re-enter
    g = DataflowGraph(main_of(parse(RELU_SIGMOID_MUL)))
    kernels = [Kernel(SubGraph(g, nodes(g, "a")), "tvm"),
               Kernel(SubGraph(g, nodes(g, "s")), "onnxruntime"),
               Kernel(SubGraph(g, nodes(g, "m")), "tvm")]
    merged = coalesce(g, kernels, _valid(SubGraphConfig(max_exits=0, allow_taps=True)))
    assert sorted(k.inside for k in merged) == sorted(k.inside for k in kernels)


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


def test_explain_report_fields(tmp_path):
    import json

    from collage_xdsl.passes.partition import CollagePartitionPass

    module = parse(DIAMOND)
    report, table = tmp_path / "explain.json", tmp_path / "explain.txt"
    CollagePartitionPass(
        backends=("tvm", "test"), backend_options="test: ops=relu,add,mul", byoc_max_regions=False,
        mock_costs="tvm:2,test:1", launch_penalty=0.5, coalesce=False, explain=str(report),
        explain_table=str(table),
    ).apply(Context(), module)
    (function,) = json.loads(report.read_text())["functions"]
    assert function["function"] == "main"
    assert function["candidates"] > 0 and function["estimates"] > 0
    assert function["cost_db_hits"] == 0 and function["search_seconds"] >= 0
    chosen = function["kernels"]
    assert [k["backend"] for k in chosen] == [k.backend.data for k in kernels_of(module)]
    for k, op in zip(chosen, kernels_of(module)):
        assert k["cost"] == op.cost.value.data and k["cost_status"] == "known"
        assert k["ops"] and len(k["nodes"]) >= len(k["ops"])
    # the sigmoid only runs on tvm: no other backend had a candidate for it
    (sigmoid,) = [k for k in chosen if "sigmoid" in k["ops"]]
    assert sigmoid["backend"] == "tvm" and sigmoid["best_other"] is None
    # add + mul: the test backend at half tvm's per-op cost
    (add_mul,) = [k for k in chosen if k["ops"] == ["add", "mul"]]
    assert add_mul["backend"] == "test" and add_mul["best_other"]["backend"] == "tvm"
    assert add_mul["best_other"]["cost"] == pytest.approx(2 * add_mul["cost"])
    # total: kernel costs plus one launch penalty per kernel (nothing coalesced here)
    assert function["total_cost"] == pytest.approx(
        sum(k["cost"] for k in chosen) + 0.5 * len(chosen))
    text = table.read_text()
    assert text.startswith("@main: ") and "best other" in text and "sigmoid" in text


def test_explain_report_weighs_the_mix_against_each_backend_alone(tmp_path):
    """`alone`: each backend's cheapest cover with only it enabled; the test backend
    cannot run the sigmoid, so it has no cover and the reason names the node."""
    import json
    from pathlib import Path

    from collage_xdsl.passes.partition import CollagePartitionPass

    def report(backends: tuple[str, ...]) -> dict:
        path = tmp_path / "_".join(backends)
        CollagePartitionPass(
            backends=backends, backend_options="test: ops=relu,add,mul", byoc_max_regions=False,
            mock_costs="tvm:2,test:1", launch_penalty=0.5, coalesce=False,
            explain=f"{path}.json", explain_table=f"{path}.txt",
        ).apply(Context(), parse(DIAMOND))
        (function,) = json.loads(Path(f"{path}.json").read_text())["functions"]
        return function

    mixed = report(("tvm", "test"))
    tvm_alone, test_alone = mixed["alone"]
    assert tvm_alone["backend"] == "tvm" and tvm_alone["total_status"] == "known"
    assert tvm_alone["total_cost"] == pytest.approx(report(("tvm",))["total_cost"])
    assert test_alone == {"backend": "test", "total_cost": None, "total_status": "no cover",
                          "reason": test_alone["reason"]}
    no_sigmoid = "search: cannot cover collage.sigmoid#4: no candidate contains it"
    assert test_alone["reason"] == no_sigmoid
    # the test backend runs add and mul at half tvm's cost: the mix is cheaper
    assert mixed["mixing_ratio"] == pytest.approx(mixed["total_cost"] / tvm_alone["total_cost"])
    assert mixed["mixing_ratio"] < 1
    alone_line = (tmp_path / "tvm_test.txt").read_text().splitlines()[2]
    assert alone_line == (f"  alone: tvm {tvm_alone['total_cost']:.3g} s, test no cover "
                          f"({no_sigmoid}); mixed total {mixed['mixing_ratio']:.3f}x of tvm's")


def test_explain_report_with_cost_db_hits(tmp_path):
    import json

    from collage_xdsl.passes.partition import CollagePartitionPass

    options = dict(backends=("tvm",), mock_costs="tvm:1", cost_db=str(tmp_path / "c.sqlite"),
                   explain=str(tmp_path / "e.json"), explain_table=str(tmp_path / "e.txt"))
    CollagePartitionPass(**options).apply(Context(), parse(DIAMOND))
    first = json.loads((tmp_path / "e.json").read_text())["functions"][0]
    CollagePartitionPass(**options).apply(Context(), parse(DIAMOND))
    second = json.loads((tmp_path / "e.json").read_text())["functions"][0]
    assert first["estimates"] > 0 and first["cost_db_hits"] == 0
    assert second["estimates"] == 0 and second["cost_db_hits"] == first["estimates"]
    assert second["cost_db_other_hosts"] == 0
    assert "other hosts" not in (tmp_path / "e.txt").read_text()


def test_explain_report_says_a_database_from_another_host_is_not_used(tmp_path):
    """A cost database carried from another machine: its costs are kept and not read, so
    everything is measured again, and the report says why."""
    import json
    import sqlite3

    from collage_xdsl.passes.partition import CollagePartitionPass

    db = tmp_path / "c.sqlite"
    options = dict(backends=("tvm",), mock_costs="tvm:1", cost_db=str(db),
                   explain=str(tmp_path / "e.json"), explain_table=str(tmp_path / "e.txt"))
    CollagePartitionPass(**options).apply(Context(), parse(DIAMOND))
    first = json.loads((tmp_path / "e.json").read_text())["functions"][0]
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE collage_costs SET host = 'a-host-elsewhere'")
    CollagePartitionPass(**options).apply(Context(), parse(DIAMOND))
    second = json.loads((tmp_path / "e.json").read_text())["functions"][0]
    assert second["estimates"] == first["estimates"] > 0 and second["cost_db_hits"] == 0
    assert second["cost_db_other_hosts"] == first["estimates"]
    assert (tmp_path / "e.txt").read_text().splitlines()[1] == (
        f"  cost database: {first['estimates']} costs measured on other hosts (another CPU, "
        "core count or platform), not used here")
    with sqlite3.connect(db) as conn:  # nothing the file had is lost
        hosts = dict(conn.execute("SELECT host, COUNT(*) FROM collage_costs GROUP BY host"))
    assert hosts["a-host-elsewhere"] == first["estimates"]


def test_kernels_of_a_several_kernel_plan_pay_their_sequence_costs(tmp_path):
    """Costs from a database whose measurements carry sequence costs: each kernel of the
    plan pays its own, which the report gives apart, and enough of it makes a plan of
    fewer kernels the cheaper one."""
    import json
    import sqlite3

    from collage_xdsl.passes.partition import CollagePartitionPass

    db = tmp_path / "c.sqlite"

    def report(**options) -> tuple[dict, str]:
        CollagePartitionPass(
            backends=("tvm", "test"), backend_options="test: ops=relu,add,mul",
            mock_costs="tvm:2,test:1", coalesce=False, tvm_max_regions=False, cost_db=str(db),
            explain=str(tmp_path / "e.json"), explain_table=str(tmp_path / "e.txt"),
            **options).apply(Context(), parse(DIAMOND))
        (function,) = json.loads((tmp_path / "e.json").read_text())["functions"]
        return function, (tmp_path / "e.txt").read_text()

    before, _ = report()
    assert len(before["kernels"]) == 4 and all(k["sequence"] == 0 for k in before["kernels"])
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE collage_costs SET sequence = 0.25")
    same, table = report()
    assert [k["ops"] for k in same["kernels"]] == [k["ops"] for k in before["kernels"]]
    for k, was in zip(same["kernels"], before["kernels"]):
        assert k["sequence"] == 0.25 and k["cost"] == pytest.approx(was["cost"] + 0.25)
    assert same["total_cost"] == pytest.approx(before["total_cost"] + 4 * 0.25)
    assert "; sequence cost +250 ms" in table and "(sequence costs +1 s)" in table
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE collage_costs SET sequence = 100")
    fewer, _ = report()
    assert len(fewer["kernels"]) == 3 and all(k["sequence"] == 100 for k in fewer["kernels"])
