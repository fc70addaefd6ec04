"""Measuring less on a cold cost database: kernels that differ only in their weights share
one timing (`SubGraph.timing_hash`, `one_timing_each`), the cost predictor
(`collage_xdsl.measure.predict`) and the pruning of candidates that can be on no plan
within the noise of the best (`collage_xdsl.planner.promising`)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from graph_helpers import parse_graph

from collage_xdsl.core.candidates import generate_candidates
from collage_xdsl.core.index_set import bits, count
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.measure.cost_db import CachedCostEstimator, CostDatabase
from collage_xdsl.measure.estimator import (
    CostEstimator,
    KernelRequest,
    Measurement,
    kernel_request,
    one_timing_each,
)
from collage_xdsl.core.cost import Cost
from collage_xdsl.measure.predict import CostPredictor, KernelFeatures
from collage_xdsl.planner.options import PartitionOptions
from collage_xdsl.planner.plan import search_candidates
from collage_xdsl.planner.promising import NOISE, lowest_plan_through, measure_promising

T = "tensor<1x64xf32>"
W = "tensor<64x64xf32>"


def _layers(first: str, second: str, scale_a: str = "2.0", scale_b: str = "2.0"):
    """Two matmul + add + relu layers whose weights are filled with `first` / `second`,
    each followed by a multiplication by a one-element constant (`scale_a` / `scale_b`)."""
    def layer(i: int, x: str, fill: str, scale: str) -> str:
        return f"""
  %w{i} = collage.constant dense<{fill}> : {W}
  %m{i} = collage.matmul %{x}, %w{i} : ({T}, {W}) -> {T}
  %b{i} = collage.constant dense<{fill}> : {T}
  %a{i} = collage.add %m{i}, %b{i} : ({T}, {T}) -> {T}
  %r{i} = collage.relu %a{i} : {T}
  %s{i} = collage.constant dense<{scale}> : tensor<1xf32>
  %y{i} = collage.mul %r{i}, %s{i} : ({T}, tensor<1xf32>) -> {T}"""
    body = layer(0, "x", first, scale_a) + layer(1, "y0", second, scale_b)
    return parse_graph(body + f"\n  func.return %y1 : {T}", args=f"%x: {T}")


def _layer_sub_graphs(graph):
    """Each layer's matmul, add and relu as one sub-graph."""
    by_name = {graph.nodes[i].op.results[0].name_hint: i for i in bits(graph.kernel_nodes)}
    return [SubGraph(graph, sum(1 << by_name[f"{n}{i}"] for n in "mar")) for i in (0, 1)]


def test_layers_differing_in_weights_share_a_timing_hash_but_not_a_structural_hash():
    first, second = _layer_sub_graphs(_layers("0.5", "0.25"))
    assert first.structural_hash() != second.structural_hash()
    assert first.timing_hash == second.timing_hash
    same_first, _ = _layer_sub_graphs(_layers("0.5", "0.5"))
    assert same_first.timing_hash == first.timing_hash


def test_small_constants_still_tell_timings_apart():
    """A constant of at most TIMING_VALUE_ELEMENTS elements (a shape, an axis, a scale)
    is part of the timing hash: kernels reading other such values are timed apart."""
    graph = _layers("0.5", "0.5", scale_b="3.0")
    y0, y1 = (i for i in bits(graph.kernel_nodes)
              if graph.nodes[i].op.results[0].name_hint in ("y0", "y1"))
    assert SubGraph(graph, 1 << y0).timing_hash != SubGraph(graph, 1 << y1).timing_hash


class _Counting(CostEstimator):
    """Costs each kernel 1 ms; keeps the keys it was asked to measure."""

    def __init__(self):
        super().__init__()
        self.asked: list[str] = []

    def _measure(self, request: KernelRequest) -> Measurement:
        self.asked.append(request.key)
        return Measurement(Cost(1e-3), runs=5)


def test_one_timing_serves_every_kernel_of_its_class():
    requests = [KernelRequest("b", key, 1, lambda: None, timing_key=timing)
                for key, timing in [("k1", "t"), ("k2", "u"), ("k3", "t"), ("k4", "")]]
    inner = _Counting()
    measured = list(one_timing_each(requests, inner.measure_many))
    assert inner.asked == ["k1", "k2", "k4"]
    assert [m.cost.seconds for m in measured] == [1e-3] * 4


def test_the_cost_database_keeps_a_shared_timing_under_each_kernel(tmp_path):
    graph = _layers("0.5", "0.25")
    requests = [kernel_request(sub, "onnxruntime") for sub in _layer_sub_graphs(graph)]
    inner = _Counting()
    with CostDatabase(str(tmp_path / "costs.sqlite")) as db:
        cached = CachedCostEstimator(inner, db, lambda r: "v1")
        assert [c.seconds for c in cached.estimate_all(requests)] == [1e-3, 1e-3]
        assert len(inner.asked) == 1
        for r in requests:
            assert db.get(r.key, r.backend, "v1").cost.seconds == 1e-3
        fresh = CachedCostEstimator(_Counting(), db, lambda r: "v1")
        assert all(fresh.known(r) is not None for r in requests)


# -- the pruning rule -------------------------------------------------------------------


def _covers(insides: list[int], nodes: int):
    """Every exact cover of `nodes` by the sets `insides` (indices), by brute force."""
    def extend(left: int, chosen: list[int]):
        if not left:
            yield list(chosen)
            return
        lowest = left & -left
        for i, inside in enumerate(insides):
            if inside & lowest and inside & ~left == 0:
                yield from extend(left & ~inside, chosen + [i])
    yield from extend(nodes, [])


@pytest.mark.parametrize("seed", range(40))
def test_no_candidate_of_the_exhaustive_optimum_is_ever_pruned(seed):
    """Random DAGs, their real candidates, random true costs and bounds around them: the
    best cover by the upper bounds bounds the optimum from above, and every candidate of
    the true optimum (found by brute force over all covers) stays within it."""
    rng = random.Random(seed)
    graph = _random_dag(rng, nodes=rng.randint(4, 7))
    candidates = [c for c in generate_candidates(graph, PartitionOptions(
        backends=("tvm", "onnxruntime")).specs()) if c.spec.backend is not None]
    insides = [c.inside & graph.kernel_nodes for c in candidates]
    true = np.array([rng.uniform(1, 10) * count(i) ** rng.uniform(0.3, 1.2) for i in insides])
    band = rng.uniform(1.0, 4.0)
    lows = true / np.array([rng.uniform(1, band) for _ in true])
    highs = true * np.array([rng.uniform(1, band) for _ in true])
    covers = list(_covers(insides, graph.kernel_nodes))
    optimum = min(covers, key=lambda cover: true[cover].sum())
    upper = min(highs[cover].sum() for cover in covers)
    through = lowest_plan_through(insides, lows, graph.kernel_nodes)
    assert all(through[i] <= upper * (1 + NOISE) for i in optimum)
    assert all(through[i] <= true[cover].sum() + 1e-9 for cover in covers for i in cover)


def _random_dag(rng: random.Random, nodes: int):
    """A function of `nodes` element-wise ops, each reading one or two earlier values."""
    t = "tensor<2x4xf32>"
    lines, values = [], ["x"]
    for k in range(nodes):
        picked = rng.sample(values, min(len(values), rng.choice((1, 2))))
        if len(picked) == 1:
            lines.append(f"  %v{k} = collage.{rng.choice(('relu', 'tanh'))} %{picked[0]} : {t}")
        else:
            lines.append(f"  %v{k} = collage.{rng.choice(('add', 'mul'))} %{picked[0]}, "
                         f"%{picked[1]} : ({t}, {t}) -> {t}")
        values.append(f"v{k}")
    unused = [v for v in values[1:] if not any(f"%{v}," in ln or f"%{v} " in ln
                                               for ln in lines[int(v[1:]) + 1:])]
    lines.append(f"  func.return {', '.join('%' + v for v in unused)} : "
                 f"{', '.join([t] * len(unused))}")
    return parse_graph("\n".join(lines))


# -- the predictor and the measuring loop -----------------------------------------------


class _Formula(CostEstimator):
    """A synthetic cost database: a call costs `call` seconds and each op `per_op`
    (per backend), and nothing else; counts what it is asked to measure."""

    def __init__(self, call: dict[str, float], per_op: dict[str, float]):
        super().__init__()
        self.call, self.per_op = call, per_op
        self.measured = 0

    def _measure(self, request: KernelRequest) -> Measurement:
        self.measured += 1
        return Measurement(Cost(self.call[request.backend]
                                + self.per_op[request.backend] * request.num_ops))


def test_the_predictor_learns_a_backend_and_bounds_what_it_did_not_see():
    graph = _random_dag(random.Random(3), nodes=40)
    features = KernelFeatures(graph)
    subs = [c.sub_graph for c in generate_candidates(graph, PartitionOptions(
        backends=("tvm",)).specs()) if c.spec.backend is not None]
    seconds = [2e-5 + 3e-6 * count(s.inside & graph.kernel_nodes) for s in subs]
    rows = np.array([features.of(s) for s in subs])
    fitted = CostPredictor.fit(rows[::3], seconds[::3])
    low, high = fitted.bounds(rows)
    inside = (low <= np.array(seconds)) & (np.array(seconds) <= high)
    assert inside.mean() > 0.9
    assert fitted.over < 3 and fitted.under < 3
    nothing = CostPredictor.fit(rows[:3], seconds[:3])
    assert nothing.bounds(rows[:2])[0].tolist() == [0, 0]
    assert math.isinf(nothing.bounds(rows[:2])[1][0])


def test_pruning_measures_fewer_candidates_and_finds_the_exhaustive_plan():
    """On a synthetic database where tvm's calls cost ten times onnxruntime's, a third
    fewer kernels are measured than when every candidate is, and the plan of what was
    measured costs what the plan of every candidate measured costs."""
    graph = _random_dag(random.Random(7), nodes=60)
    candidates = generate_candidates(graph, PartitionOptions(
        backends=("tvm", "onnxruntime")).specs())
    costs = ({"tvm": 2e-4, "onnxruntime": 2e-5}, {"tvm": 4e-6, "onnxruntime": 2e-6})
    pruning, exhaustive = _Formula(*costs), _Formula(*costs)

    def cheapest(cost_of):
        return search_candidates(graph, candidates, pruning, cost_of=cost_of).total.seconds

    found = measure_promising(graph, candidates, pruning, cheapest)
    kernels = [c for c in candidates if c.spec.backend is not None]
    assert found.pruned > 0 and found.timed == len(kernels) - found.pruned
    best = search_candidates(graph, candidates, exhaustive).total.seconds
    assert pruning.measured < 0.7 * exhaustive.measured
    assert search_candidates(graph, found.candidates, pruning).total.seconds == \
        pytest.approx(best)


def test_a_second_partition_with_the_same_database_measures_nothing(tmp_path):
    """Each round decides from what is known, so the database a pruned partition left
    behind gives the next one the same decision, with nothing left to measure."""
    graph = _random_dag(random.Random(7), nodes=40)
    candidates = generate_candidates(graph, PartitionOptions(
        backends=("tvm", "onnxruntime")).specs())
    costs = ({"tvm": 2e-4, "onnxruntime": 2e-5}, {"tvm": 4e-6, "onnxruntime": 2e-6})
    found = []
    with CostDatabase(str(tmp_path / "costs.sqlite")) as db:
        for _ in range(2):
            inner = _Formula(*costs)
            estimator = CachedCostEstimator(inner, db, lambda r: "v1")
            found.append((measure_promising(
                graph, candidates, estimator, lambda cost_of: search_candidates(
                    graph, candidates, estimator, cost_of=cost_of).total.seconds), inner))
    (first, first_inner), (second, second_inner) = found
    assert first_inner.measured > 0 and first.pruned > 0
    assert second_inner.measured == 0 and second.timed == 0
    assert second.known == first.known + first.timed and second.pruned == first.pruned
