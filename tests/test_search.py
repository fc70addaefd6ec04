"""Dijkstra search over covered sets: optimality against brute force, ties, errors."""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import pytest
from collage_xdsl.dialects import collage as C
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region

from collage_xdsl.core.cost import Cost
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import of
from collage_xdsl.core.search import search
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.tensors import constant_op, tensor_type
from collage_xdsl.measure.estimator import Measurement, MockCostEstimator
from collage_xdsl.planner.costing import kernel_cost
from collage_xdsl.planner.plan import search_candidates


@dataclass(frozen=True)
class Cand:
    inside: int
    cost: Cost
    name: str = ""
    host: bool = False

    def __str__(self) -> str:
        return self.name


def run(size, cands, penalty=0.0, needs_kernel=None):
    return search(size, cands, lambda c: c.cost, needs_kernel=needs_kernel,
                  launch_penalty=penalty, is_host=lambda c: c.host)


# ---------------------------------------------------------------- brute force


def random_problem(rng: random.Random):
    """A random DAG (edges i -> j only for i < j), nodes needing kernels, and convex
    candidates with random costs (multiples of 1/4, so sums are exact)."""
    n = rng.randint(3, 9)
    preds = [[i for i in range(j) if rng.random() < 0.35] for j in range(n)]
    down = [1 << i for i in range(n)]  # nodes reachable from i, i included
    for i in reversed(range(n)):
        for j in range(i + 1, n):
            if i in preds[j]:
                down[i] |= down[j]

    def convex(s: int) -> bool:
        reach = 0
        for i in range(n):
            if s >> i & 1:
                reach |= down[i]
        for o in range(n):  # o outside, reached from inside, reaching inside
            if not s >> o & 1 and reach >> o & 1 and down[o] & s & ~(1 << o):
                return False
        return True

    needs = sum(1 << i for i in range(n) if rng.random() < 0.8) or 1
    cands = []
    for i in range(n):
        if rng.random() < 0.9:
            cands.append(1 << i)
    for _ in range(rng.randint(0, 2 * n)):
        s = of(rng.sample(range(n), rng.randint(2, min(4, n))))
        if convex(s):
            cands.append(s)
    out = []
    for k, s in enumerate(cands):
        for backend in range(rng.randint(1, 2)):
            r = rng.random()
            if r < 0.1:
                cost = Cost.invalid(f"reason{k}")
            elif r < 0.13:
                cost = Cost.unknown()
            else:
                cost = Cost(rng.randint(0, 12) / 4)
            out.append(Cand(s, cost, f"c{k}b{backend}", host=rng.random() < 0.1))
    rng.shuffle(out)
    return n, needs, out, rng.choice([0.0, 0.5])


def brute_force(needs: int, cands, penalty: float) -> Cost | None:
    """The cheapest exact cover of ``needs`` over all subsets of the valid candidates."""
    usable = [(c.inside & needs, c.cost if c.host else c.cost + Cost(penalty))
              for c in cands if c.inside & needs and not c.cost.is_invalid]
    best = None

    def go(k: int, covered: int, total: Cost):
        nonlocal best
        if covered == needs:
            if best is None or total < best:
                best = total
            return
        if k == len(usable):
            return
        go(k + 1, covered, total)
        work, edge = usable[k]
        if not work & covered:
            go(k + 1, covered | work, total + edge)

    go(0, 0, Cost.zero())
    return best


def check_cover(n, needs, cands, result, penalty):
    covered = 0
    total = Cost.zero()
    for c in result.chosen:
        assert c in cands and not c.cost.is_invalid
        assert not (c.inside & needs & covered)
        covered |= c.inside & needs
        total = total + (c.cost if c.host else c.cost + Cost(penalty))
    assert covered == needs
    assert total == result.total


def test_optimal_against_brute_force():
    rng = random.Random(1234)
    solved = failed = 0
    for _ in range(400):
        n, needs, cands, penalty = random_problem(rng)
        expected = brute_force(needs, cands, penalty)
        if expected is None:
            with pytest.raises(CollageError, match="search: "):
                run(n, cands, penalty, needs)
            failed += 1
            continue
        result = run(n, cands, penalty, needs)
        assert result.total == expected
        check_cover(n, needs, cands, result, penalty)
        solved += 1
    assert solved > 250 and failed > 10  # both outcomes are exercised


def test_deterministic_across_runs():
    rng = random.Random(99)
    for _ in range(50):
        n, needs, cands, penalty = random_problem(rng)
        try:
            first = run(n, cands, penalty, needs)
        except CollageError as e:
            with pytest.raises(CollageError, match=str(e)[:20]):
                run(n, cands, penalty, needs)
            continue
        again = run(n, cands, penalty, needs)
        assert first.chosen == again.chosen and first.states_expanded == again.states_expanded


# ---------------------------------------------------------------- tie breaking


def test_ties_break_by_covered_set_not_input_order():
    # Two equal-cost covers of {0,1,2,3}: P+Q (via state {0,1}) and R+S (via {0,2}).
    # State {0,1} = 0b0011 sorts before {0,2} = 0b0101, so P+Q wins whatever the order.
    p, q = Cand(0b0011, Cost(1), "P"), Cand(0b1100, Cost(1), "Q")
    r, s = Cand(0b0101, Cost(1), "R"), Cand(0b1010, Cost(1), "S")
    for order in ([p, q, r, s], [r, s, p, q], [s, r, q, p]):
        assert run(4, order).chosen == [p, q]


def test_equal_candidates_first_in_input_order_wins():
    a, b = Cand(0b11, Cost(2), "A"), Cand(0b11, Cost(2), "B")
    assert run(2, [a, b]).chosen == [a]
    assert run(2, [b, a]).chosen == [b]
    cheaper = Cand(0b11, Cost(1.5), "cheaper")
    assert run(2, [a, b, cheaper]).chosen == [cheaper]


# ---------------------------------------------------------------- penalty, host, pruning


def test_launch_penalty_prefers_fewer_kernels():
    fused = Cand(0b111, Cost(3.25), "fused")
    singles = [Cand(1 << i, Cost(1), f"s{i}") for i in range(3)]
    assert run(3, singles + [fused]).chosen == singles
    assert run(3, singles + [fused], penalty=0.25).chosen == [fused]
    assert run(3, singles + [fused], penalty=0.25).total == Cost(3.5)


def test_host_candidates_pay_no_penalty():
    host = Cand(0b010, Cost.zero(), "host", host=True)
    fused = Cand(0b011, Cost(1.0), "fused")
    k0, k2 = Cand(0b001, Cost(1.0), "k0"), Cand(0b100, Cost(1.0), "k2")
    result = run(3, [fused, k0, host, k2], penalty=0.5)
    assert result.chosen == [k0, host, k2] and result.total == Cost(3.0)


def test_nodes_without_kernel_are_covered_from_the_start():
    # node 0 is an argument, node 2 a constant that a candidate may include or not
    with_const = Cand(0b0110, Cost(1), "with_const")
    other = Cand(0b1100, Cost(5), "other")
    last = Cand(0b1000, Cost(1), "last")
    result = run(4, [with_const, other, last], needs_kernel=0b1010)
    assert result.chosen == [with_const, last] and result.total == Cost(2)
    assert run(4, [], needs_kernel=0).chosen == []


def test_dominated_candidates_are_pruned_without_changing_the_optimum():
    singles = [Cand(1 << i, Cost(1), f"s{i}") for i in range(6)]
    dominated = [Cand(0b11 << i, Cost(2.5), f"d{i}") for i in range(5)]
    result = run(6, singles + dominated)
    assert result.chosen == singles and result.total == Cost(6)
    # without dominated pairs the search only walks the chain of singletons
    assert result.states_expanded == 7


# ---------------------------------------------------------------- invalid and errors


def test_never_chooses_an_invalid_kernel():
    broken = Cand(0b111, Cost.invalid("compile failed"), "broken")
    singles = [Cand(1 << i, Cost(100), f"s{i}") for i in range(3)]
    result = run(3, [broken] + singles)
    assert result.chosen == singles and result.total == Cost(300)


def test_error_names_node_and_invalid_reasons():
    cands = [
        Cand(0b001, Cost(1), "ok0"),
        Cand(0b110, Cost.invalid("openvino: unsupported lrn"), "ov_fused"),
        Cand(0b100, Cost.invalid("tvm: crashed in run"), "tvm_single"),
        Cand(0b010, Cost(1), "ok1"),
    ]
    with pytest.raises(CollageError) as err:
        run(3, cands)
    message = str(err.value)
    assert "cannot cover node 2: every candidate containing it is Invalid" in message
    assert "ov_fused: openvino: unsupported lrn" in message
    assert "tvm_single: tvm: crashed in run" in message


def test_error_quotes_a_bounded_number_of_reasons():
    cands = [Cand(0b1, Cost.invalid(f"why{k}"), f"c{k}") for k in range(8)]
    with pytest.raises(CollageError) as err:
        run(1, cands)
    assert "c4: why4; and 3 more" in str(err.value) and "why5" not in str(err.value)


def test_error_when_no_candidate_contains_a_node():
    with pytest.raises(CollageError, match="cannot cover node 1: no candidate contains it"):
        run(2, [Cand(0b01, Cost(1), "a")])


def test_error_when_candidates_only_overlap():
    cands = [Cand(0b011, Cost(1), "a"), Cand(0b110, Cost(1), "b")]
    with pytest.raises(CollageError, match="no combination .* node 2 is only contained"):
        run(3, cands)


def test_bad_arguments():
    with pytest.raises(CollageError, match="penalty"):
        run(1, [Cand(1, Cost(1))], penalty=-1.0)
    with pytest.raises(CollageError, match="beyond the 2 nodes"):
        run(2, [Cand(0b100, Cost(1), "far")])
    with pytest.raises(CollageError, match="candidate neg: a cost cannot be negative"):
        search(1, [Cand(1, Cost(1), "neg")], lambda c: -1.0, describe=str)


# ---------------------------------------------------------------- real graph and sub-graphs

T = tensor_type((2, 3), np.float32)


def small_graph() -> DataflowGraph:
    """x -> relu -> add(., const) -> neg -> abs, returned."""
    block = Block(arg_types=[T])
    ops = [constant_op(np.ones((2, 3), np.float32))]
    ops.append(C.ReluOp(block.args[0]))
    ops.append(C.AddOp(ops[1].results[0], ops[0].results[0]))
    ops.append(C.NegOp(ops[2].results[0]))
    ops.append(C.AbsOp(ops[3].results[0]))
    for op in ops:
        block.add_op(op)
    block.add_op(ReturnOp(ops[-1].results[0]))
    func = FuncOp("main", ([T], [T]), Region(block))
    ModuleOp([func])
    return DataflowGraph(func)


@dataclass(frozen=True)
class Spec:
    name: str
    backend: object


@dataclass(frozen=True)
class Kernel:
    """The fields of a candidate kernel that :func:`search_candidates` reads."""

    sub_graph: SubGraph
    spec: Spec

    @property
    def inside(self) -> int:
        return self.sub_graph.inside

    def describe(self, graph) -> str:
        return f"{self.spec.name} {self.sub_graph!r}"


def test_search_candidates_on_a_real_graph():
    graph = small_graph()
    ops = [i for i in range(len(graph)) if graph.nodes[i].needs_kernel]
    assert len(ops) == 4
    const = graph.constants
    cands = [Kernel(SubGraph(graph, 1 << i), Spec(b, b)) for i in ops for b in ("tvm", "ort")]
    # fused relu+add with the constant inside, on ort; neg+abs on tvm
    cands.append(Kernel(SubGraph(graph, (1 << ops[0]) | (1 << ops[1]) | const), Spec("ort", "ort")))
    cands.append(Kernel(SubGraph(graph, (1 << ops[2]) | (1 << ops[3])), Spec("tvm", "tvm")))
    estimator = MockCostEstimator({"tvm": 2.0, "ort": 1.0})
    result = search_candidates(graph, cands, estimator, launch_penalty=0.1)
    assert [c.spec.name for c in result.chosen] == ["ort", "ort", "ort"]
    assert result.total.seconds == pytest.approx(1.9 + 1.0 + 1.0 + 0.3)
    host = Kernel(SubGraph(graph, 1 << ops[3]), Spec("host", None))
    result = search_candidates(graph, cands + [host], estimator, launch_penalty=0.1)
    assert result.chosen[-1] is host
    assert result.total.seconds == pytest.approx(1.9 + 1.0 + 0.2)


class SequencedEstimator(MockCostEstimator):
    """The mock costs (tvm 1 s, ort 0.8 s per op), each kernel with a sequence cost of
    `sequence` seconds."""

    def __init__(self, sequence: float):
        super().__init__({"tvm": 1.0, "ort": 0.8})
        self.sequence = sequence

    def _measure(self, request):
        return Measurement(super()._measure(request).cost, sequence=self.sequence)


def test_kernels_pay_their_sequence_costs_unless_one_does_all_the_work():
    graph = small_graph()
    ops = [i for i in range(len(graph)) if graph.nodes[i].needs_kernel]
    whole = Kernel(SubGraph(graph, graph.kernel_nodes | graph.constants), Spec("tvm", "tvm"))
    pairs = [Kernel(SubGraph(graph, (1 << ops[0]) | (1 << ops[1]) | graph.constants),
                    Spec("ort", "ort")),
             Kernel(SubGraph(graph, (1 << ops[2]) | (1 << ops[3])), Spec("ort", "ort"))]
    # the whole kernel on tvm: 1 + 0.9 + 0.81 + 0.729 = 3.439, alone; two pairs on ort:
    # 0.8 x 1.9 = 1.52 each, 3.04, plus each pair's sequence cost
    result = search_candidates(graph, [whole, *pairs], SequencedEstimator(0.0))
    assert result.chosen == pairs and result.total.seconds == pytest.approx(3.04)
    result = search_candidates(graph, [whole, *pairs], SequencedEstimator(0.3))
    assert result.chosen == [whole] and result.total.seconds == pytest.approx(3.439)
    assert kernel_cost(SequencedEstimator(0.3), whole.sub_graph, "tvm").seconds \
        == pytest.approx(3.439)
    assert kernel_cost(SequencedEstimator(0.3), pairs[1].sub_graph, "ort").seconds \
        == pytest.approx(1.82)


def test_error_names_the_op_of_a_real_graph():
    graph = small_graph()
    with pytest.raises(CollageError, match=r"cannot cover collage\.relu#\d"):
        search(graph, [], lambda c: Cost(1))


# ---------------------------------------------------------------- scale


def chain_problem(n: int, seed: int = 0):
    """~10 candidates per node on a chain: windows of 1..5 nodes on two backends, and
    'skip' pairs {i, i+2}, so covered sets are not all prefixes."""
    rng = random.Random(seed)
    cands = []
    for i in range(n):
        for width in range(1, min(5, n - i) + 1):
            for b in range(2):
                cost = Cost(rng.uniform(0.5, 1.0) * width * 0.85 ** (width - 1))
                cands.append(Cand(((1 << width) - 1) << i, cost, f"{i}:{width}:{b}"))
        if i + 2 < n:
            cands.append(Cand((1 << i) | (1 << (i + 2)), Cost(rng.uniform(0.5, 1.5)), f"{i}:skip"))
    return cands


def test_700_node_chain_is_covered_exactly():
    cands = chain_problem(700)
    assert len(cands) / 700 > 10
    result = search(700, cands, lambda c: c.cost, launch_penalty=0.01)
    assert sum(c.inside.bit_count() for c in result.chosen) == 700
