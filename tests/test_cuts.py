"""What the cost database says a cut gains (`collage_xdsl.refine.cuts`), and the cuts
refinement therefore tries first."""

from __future__ import annotations

import json
import random
from statistics import median

import pytest
from collage_xdsl.passes.partition import CollagePartitionPass
from collage_xdsl.passes.refine import CollageRefinePass
from ir_helpers import main_of, parse
from refine_helpers import CONFIGS, MLP_CHAIN, kernels, named
from xdsl.context import Context

from collage_xdsl.backends import gather_specs, get_backend
from collage_xdsl.core.candidates import generate_candidates
from collage_xdsl.core.cost import Cost
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import count, first
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.cost_db import CostDatabase
from collage_xdsl.measure.estimator import Measurement, kernel_request
from collage_xdsl.measure.pool import MeasureSettings
from collage_xdsl.planner.costing import cost_db_versions, evicts
from collage_xdsl.refine.cuts import CutPoints, cut_gains
from collage_xdsl.refine.driver import refine
from collage_xdsl.refine.moves import MoveSpace, make_plan
from collage_xdsl.refine.report import RefineOptions, format_trials


def penalised(graph: DataflowGraph, pair: int, penalty: float):
    """A cost per kernel op, `penalty` more for a sub-graph holding both nodes of `pair`."""

    def cost_of(sub: SubGraph, backend: str) -> float:
        ops = sub.inside & graph.kernel_nodes
        return count(ops) + penalty * (ops & pair == pair)

    return cost_of


def test_a_cuts_gain_is_the_median_share_of_a_fused_kernels_time_it_saves():
    """matmul %a, relu %b, matmul %c, ...: every ONNX Runtime candidate holding %a and %b
    costs 3 more than its ops, so cut after %a it saves 3 of its ops + 3 (the halves cost
    their ops); no other cut saves anything. The whole chain, which does all the work,
    is left out."""
    graph = DataflowGraph(main_of(parse(MLP_CHAIN)))
    candidates = generate_candidates(graph, gather_specs(["onnxruntime"]))
    ab = named(graph, "a", "b")
    gains = cut_gains(graph, candidates, penalised(graph, ab, 3.0))
    sizes = [count(c.inside & graph.kernel_nodes) for c in candidates
             if c.inside & ab == ab and not graph.does_all_work(c.inside)]
    assert sorted(sizes) == [2, 3, 4]
    assert gains == {(first(named(graph, "a")), "onnxruntime"): median(3 / (n + 3)
                                                                       for n in sizes)}


def test_a_cut_whose_half_the_database_lacks_gains_nothing():
    graph = DataflowGraph(main_of(parse(MLP_CHAIN)))
    candidates = generate_candidates(graph, gather_specs(["onnxruntime"]))
    costs = penalised(graph, named(graph, "a", "b"), 3.0)
    a = named(graph, "a")
    assert cut_gains(graph, candidates,
                     lambda sub, backend: None if sub.inside == a else costs(sub, backend)) == {}


def test_cuts_the_database_says_gain_come_first_the_most_first():
    """tvm alone cut: the cost database's cuts (after %c gaining 2, after %a gaining 1)
    before the start plan's kernel ends (%b), whatever the shuffle."""
    graph = DataflowGraph(main_of(parse(MLP_CHAIN)))
    space = MoveSpace(graph, [get_backend("tvm")], {"tvm": CONFIGS["tvm"]})
    a, b, c = (first(named(graph, x)) for x in "abc")
    start = kernels(graph, ("ab", "tvm"), ("cde", "tvm"))
    cuts = CutPoints.of(start, {(a, "tvm"): 1.0, (c, "tvm"): 2.0, (b, "onnxruntime"): 5.0})
    whole = make_plan(kernels(graph, ("abcde", "tvm")), "tvm alone")
    for seed in range(4):
        found = space.mutations(whole, random.Random(seed), cuts, cuts_only=True)
        assert [int(m.origin.rsplit("#", 1)[1]) for m in found] == [c, a, b]


def refine_report(tmp_path, cost_db: str | None) -> dict:
    """The report of refining MLP_CHAIN's one tvm kernel with the mock scorer."""
    module = parse(MLP_CHAIN)
    CollagePartitionPass(backends=("tvm",), estimator="mock", mock_costs="tvm:1",
                         cost_db=cost_db).apply(Context(), module)
    report = tmp_path / "refine.json"
    CollageRefinePass(backends=("tvm",), scorer="mock", mock_costs="tvm:1", budget=10,
                      cost_db=cost_db, report=str(report)).apply(Context(), module)
    (function,) = json.loads(report.read_text())["functions"]
    return function


def test_refinement_first_cuts_where_the_cost_database_measured_a_fused_kernel_slow(tmp_path):
    """The partition pass filled the database with mock costs; then the kernel of matmul %a
    and relu %b (and so of %c and %d, the same structure) measured 10 s there:
    refinement's first trial is a cut after %a or %c, where no kernel of the start plan
    (the whole chain on tvm) ends."""
    db_path = str(tmp_path / "costs.sqlite")
    without = refine_report(tmp_path, None)
    assert without["cut_gains"] == []
    assert not any(t["origin"].startswith("cut ") for t in without["trials"])
    refine_report(tmp_path, db_path)  # fills the database
    module = parse(MLP_CHAIN)
    graph = DataflowGraph(main_of(module))
    specs = CollagePartitionPass(backends=("tvm",)).specs()
    (ab,) = [c.sub_graph for c in generate_candidates(graph, specs)
             if c.sub_graph.inside & graph.kernel_nodes == named(graph, "a", "b")]
    request = kernel_request(ab, "tvm")
    version = cost_db_versions(specs, MeasureSettings(evict=evicts(module)))(request)
    with CostDatabase(db_path) as db:
        assert db.get(request.key, "tvm", version) is not None
        db.put(request.key, "tvm", version, Measurement(Cost(10.0)))
    function = refine_report(tmp_path, db_path)
    a, c = (f"matmul#{first(named(graph, x))}" for x in "ac")
    assert sorted((g["after"], g["backend"]) for g in function["cut_gains"]) == [
        (a, "tvm"), (c, "tvm")]  # %c and %d are %a and %b's structure: one key
    assert function["cut_gains"][0] == {"after": a, "backend": "tvm", "gain": round(
        1 - (1 + 1) / 10, 4)}  # the matmul alone 1 s, the relu 1 s (mock), fused 10 s
    trials = [t for t in function["trials"] if t["kind"] == "mutation"]
    assert trials[0]["origin"].rsplit(" ", 1)[1] in (a, c)
    assert f"cuts the cost database says gain: tvm after {a} (" in format_trials(function)


def test_a_cost_database_that_is_not_there_is_an_error_naming_it(tmp_path):
    module = parse(MLP_CHAIN)
    CollagePartitionPass(backends=("tvm",), estimator="mock", mock_costs="tvm:1").apply(
        Context(), module)
    missing = tmp_path / "nowhere.sqlite"
    with pytest.raises(CollageError, match=f"cost database {missing} does not exist"):
        CollageRefinePass(backends=("tvm",), scorer="mock", mock_costs="tvm:1", budget=10,
                          cost_db=str(missing)).apply(Context(), module)
    assert not missing.exists()


def test_a_corrupt_cost_database_is_an_error_naming_it(tmp_path):
    module = parse(MLP_CHAIN)
    CollagePartitionPass(backends=("tvm",), estimator="mock", mock_costs="tvm:1").apply(
        Context(), module)
    corrupt = tmp_path / "costs.sqlite"
    corrupt.write_bytes(b"not a database" * 100)
    with pytest.raises(CollageError, match=str(corrupt)):
        CollageRefinePass(backends=("tvm",), scorer="mock", mock_costs="tvm:1", budget=10,
                          cost_db=str(corrupt)).apply(Context(), module)
    assert corrupt.read_bytes() == b"not a database" * 100


def test_a_cut_the_database_says_gains_less_than_min_gain_is_not_offered_first():
    """The chain on tvm alone, every kernel costing its ops: no cut pays. The database
    says the cut after %a gains 0.05 and after %c 0.01; with min_gain 0.03 only the first
    is offered first (the second is no end of a start-plan kernel, so never offered)."""
    graph = DataflowGraph(main_of(parse(MLP_CHAIN)))
    space = MoveSpace(graph, [get_backend("tvm")], {"tvm": CONFIGS["tvm"]})
    a, c = (first(named(graph, x)) for x in "ac")
    start = kernels(graph, ("abcde", "tvm"))
    result = refine(space, start, lambda plan: float(len(plan.kernels)),
                    RefineOptions(budget_s=60, min_gain=0.03),
                    gains={(a, "tvm"): 0.05, (c, "tvm"): 0.01})
    assert result.cut_gains == [(f"matmul#{a}", "tvm", 0.05)]
    cuts = [t.origin for t in result.trials if t.origin.startswith("cut ")]
    assert cuts == [f"cut {space.describe(start[0])} after matmul#{a}"]
