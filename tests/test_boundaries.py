"""Boundary costs (`collage_xdsl.core.boundaries`): plan estimates with launches and
crossings, the outlined module's estimate (`collage_xdsl.core.outline`) and a direct
kernel call, crossings in the search, the transitions option and its JSON."""

from __future__ import annotations

import numpy as np
import pytest
from collage_xdsl.dialects import collage as C
from xdsl.dialects.builtin import FunctionType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region

from collage_xdsl.core import boundaries as T
from collage_xdsl.core import outline as O
from collage_xdsl.core.cost import Cost
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.regions import Kernel
from collage_xdsl.core.search import search
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.tensors import tensor_type


def chain_graph(n: int = 3, size: int = 4) -> tuple[DataflowGraph, list[int]]:
    """x -> relu -> relu -> ... (n ops) -> return; the op node indices in order."""
    t = tensor_type((size,), np.float32)
    block = Block(arg_types=[t])
    value, ops = block.args[0], []
    for _ in range(n):
        ops.append(C.ReluOp(value))
        value = ops[-1].results[0]
    block.add_ops([*ops, ReturnOp(value)])
    graph = DataflowGraph(FuncOp("main", FunctionType.from_lists([t], [t]), Region(block)))
    return graph, [graph.node_of(op) for op in ops]


COSTS = T.TransitionCosts(
    base=1.0, launch={"x": 0.1, "y": 0.2},
    crossing={("x", "y"): (0.01, 0.001), ("y", "x"): (0.02, 0.0)})


def x_y_x(last_cost: float) -> tuple[DataflowGraph, list[Kernel]]:
    """Three relus on 32-byte tensors as kernels on x (cost 3), y (4) and x (last_cost)."""
    graph, (a, b, c) = chain_graph(size=8)
    return graph, [Kernel(SubGraph(graph, 1 << a), "x", 3.0),
                   Kernel(SubGraph(graph, 1 << b), "y", 4.0),
                   Kernel(SubGraph(graph, 1 << c), "x", last_cost)]


def test_plan_estimate_charges_launches_and_crossings_between_backends():
    graph, kernels = x_y_x(5.0)
    costs = COSTS
    e = T.plan_estimate(graph, kernels, costs)
    assert e.kernels == 12.0 and e.base == 1.0
    assert e.launches == pytest.approx(0.1 + 0.2 + 0.1)
    assert e.crossings == pytest.approx((0.01 + 0.001 * 32) + 0.02)
    assert e.total == pytest.approx(12.0 + 1.0 + 0.4 + 0.062)
    # one kernel doing all the work is called directly: its cost alone; no kernels at
    # all: nothing
    whole = T.plan_estimate(graph, [Kernel(SubGraph(graph, graph.kernel_nodes), "x", 6.0)],
                            costs)
    assert whole == T.PlanEstimate(6.0, 0.0, 0.0, 0.0)
    assert T.plan_estimate(graph, [], costs).total == 0.0
    # one kernel leaving an op to the host: launch and base
    part = T.plan_estimate(graph, kernels[:1], costs)
    assert part == T.PlanEstimate(3.0, 0.1, 0.0, 1.0)


@pytest.fixture
def toy_backends(monkeypatch):
    """Kernels of the toy backends x and y verify (`collage.kernel` names a known backend)."""
    monkeypatch.setattr(C, "RUNTIME_BACKENDS", {"x", "y"})


def test_outlined_estimate_agrees_with_the_plan_estimate(toy_backends):
    """The estimate of the outlined module (what the runtime runs) is the partition's."""
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.traits import SymbolTable

    from collage_xdsl.core.outline import outline_kernels
    from collage_xdsl.core.regions import form_regions

    # the two relus on x are alike, so outlined as one function called twice (costs are
    # per structure)
    graph, kernels = x_y_x(3.0)
    costs = COSTS
    want = T.plan_estimate(graph, kernels, costs)
    module = ModuleOp([graph.func])
    form_regions(graph, kernels)
    outline_kernels(module)
    main = SymbolTable.lookup_symbol(module, "main")
    got = O.outlined_estimate(main, costs)
    assert got == pytest.approx(want)
    assert O.outlined_estimate(main, T.NONE).total == pytest.approx(10.0)
    assert O.direct_kernel_call(main) is None


def test_a_direct_kernel_call_costs_its_kernel_alone(toy_backends):
    """One kernel on @main's arguments returning its results: the runtime calls it
    directly, so neither launch nor base is charged; a @main returning anything else is
    not a direct call."""
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.traits import SymbolTable

    from collage_xdsl.core.outline import outline_kernels
    from collage_xdsl.core.regions import form_regions

    graph, _ = chain_graph()
    module = ModuleOp([graph.func])
    form_regions(graph, [Kernel(SubGraph(graph, graph.kernel_nodes), "x", 6.0)])
    outline_kernels(module)
    main = SymbolTable.lookup_symbol(module, "main")
    call = O.direct_kernel_call(main)
    assert call is not None and call.callee.string_value().startswith("collage_x")
    assert O.outlined_estimate(main, COSTS) == T.PlanEstimate(6.0, 0.0, 0.0, 0.0)
    ret = main.body.block.last_op
    ret.operands = [main.body.block.args[0]]  # returns its argument: not one kernel call
    assert O.direct_kernel_call(main) is None


@pytest.mark.parametrize("crossing, expected", [
    (0.0, ["y", "x", "y"]),      # the cheap backend y wherever it runs
    (0.2, ["y", "x", "y"]),      # two crossings (0.4) cost less than y saves (2 x 0.5)
    (0.6, ["x"]),                # dearer crossings: everything on x, fused
])
def test_search_weighs_crossings_against_kernel_costs(crossing, expected):
    graph, (a, b, c) = chain_graph()

    class Cand:
        def __init__(self, inside, backend, cost):
            self.inside, self.backend, self.cost = inside, backend, cost

    cands = [Cand(1 << v, "x", 1.0) for v in (a, b, c)]
    cands += [Cand(1 << v, "y", 0.5) for v in (a, c)]  # y cannot run the middle op
    cands.append(Cand((1 << a) | (1 << b) | (1 << c), "x", 2.9))
    result = search(graph, cands, lambda k: k.cost, backend_of=lambda k: k.backend,
                    transitions=T.FixedCrossing(seconds=crossing))
    assert [k.backend for k in result.chosen] == expected
    kernels = [Kernel(SubGraph(graph, k.inside), k.backend, k.cost) for k in result.chosen]
    # the search charged each crossing of its cover once: its total is the plan estimate
    estimate = T.plan_estimate(graph, kernels, T.FixedCrossing(seconds=crossing))
    assert result.total.seconds == pytest.approx(estimate.total)


def test_search_needs_graph_and_backends_for_crossings():
    with pytest.raises(CollageError, match="transition costs need the graph"):
        search(2, [], lambda k: Cost(1.0), transitions=T.FixedCrossing(seconds=1.0))


@pytest.mark.parametrize("text", ["fixed", "fixed:", "fixed:x", "fixed:-1", "fixed:nan", "some"])
def test_bad_transition_options_are_named(text):
    with pytest.raises(CollageError, match="transitions: expected none, measured, auto"):
        T.parse_transitions(text)


def test_transition_option_values():
    assert T.parse_transitions(" measured ") == "measured"
    fixed = T.parse_transitions("fixed:0.5")
    assert isinstance(fixed, T.FixedCrossing) and fixed.edge("a", "b", 10) == 0.5
    assert fixed.edge("a", "a", 10) == 0.0 and fixed.edge(None, "b", 10) == 0.0


def test_json_round_trip():
    costs = T.TransitionCosts(1e-6, {"tvm": 2e-6}, {("tvm", "openvino"): (3e-6, 1e-12)})
    assert T.TransitionCosts.from_json(costs.to_json()) == costs
    fixed = T.FixedCrossing(seconds=0.5)
    assert T.TransitionCosts.from_json(fixed.to_json()) == fixed
    assert "tvm>openvino 3.0" in costs.describe()
