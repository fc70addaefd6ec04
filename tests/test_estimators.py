"""Cost estimators (`collage_xdsl.measure.estimator`, `collage_xdsl.measure.measured`,
`collage_xdsl.measure.evict`): the mock formula and option, kernel requests, their order
and batches, the measured estimator's rounds, alternation, stable statistics, sequence
costs, kernels that do all the work, failures and options; L2 eviction and when a run
needs it; how measured costs are keyed in the cost database."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest
from collage_xdsl.dialects import collage as C
from collage_xdsl.passes.partition import CollagePartitionPass
from ir_helpers import RELU_ADD_RELU, parse
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region

from collage_xdsl.backends import get_backend
from collage_xdsl.core.cost import Cost
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.interpreter import run_module
from collage_xdsl.ir.tensors import constant_op, tensor_type
from collage_xdsl.measure.estimator import (
    KernelRequest,
    Measurement,
    MockCostEstimator,
    in_plan,
    invalid_measurement,
    kernel_request,
    measurement_batches,
    measurement_order,
    parse_mock_costs,
    random_inputs,
)
from collage_xdsl.measure.evict import (
    DEFAULT_L2,
    LINE,
    Evictor,
    footprint,
    l2_bytes,
    needs_eviction,
)
from collage_xdsl.measure.measured import (
    MeasuredCostEstimator,
    alone_measurement,
    measurement,
)
from collage_xdsl.measure.pool import MeasureSettings
from collage_xdsl.planner import plan as planner
from collage_xdsl.planner.costing import make_estimator
from collage_xdsl.planner.options import PartitionOptions

# ---------------------------------------------------------------- mock estimator


def _request(backend: str, n: int, key: str = "k", build=None) -> KernelRequest:
    def no_build() -> ModuleOp:
        raise AssertionError("the mock estimator must not build kernels")

    return KernelRequest(backend, f"{key}{n}", n, build or no_build)


def test_mock_formula():
    est = MockCostEstimator({"tvm": 2.0, "example": 1.0}, default=10.0)
    assert est.estimate(_request("tvm", 1)).seconds == pytest.approx(2.0)
    assert est.estimate(_request("tvm", 3)).seconds == pytest.approx(2.0 * (1 + 0.9 + 0.81))
    assert est.estimate(_request("example", 2)).seconds == pytest.approx(1.9)
    assert est.estimate(_request("other", 1)).seconds == pytest.approx(10.0)
    assert est.estimate(_request("tvm", 0)) == Cost.zero()
    # fusing is cheaper than separate kernels
    assert est.estimate(_request("tvm", 4)) < est.estimate(_request("tvm", 1)) + est.estimate(
        _request("tvm", 3)
    )
    assert est.estimate_all([_request("tvm", 1), _request("example", 1)]) == [Cost(2.0), Cost(1.0)]


class DriftingEstimator(MockCostEstimator):
    """ONNX Runtime 1.0 s and TVM 1.2 s per kernel, on a machine that slows down by a
    tenth with every kernel measured."""

    def __init__(self):
        super().__init__({"tvm": 1.2, "ort": 1.0})
        self.order: list[tuple[str, str]] = []

    def _measure(self, request):
        slowdown = 1 + 0.1 * len(self.order)
        self.order.append((request.key, request.backend))
        return Measurement(Cost(super()._measure(request).cost.seconds * slowdown))


def test_backends_of_one_sub_graph_are_measured_next_to_each_other():
    # candidates come backend by backend; "a" twice (a repeated block) is measured once
    keys = ("a", "b", "a", "c")
    requests = [_request(b, 1, key) for b in ("tvm", "ort") for key in keys]
    est = DriftingEstimator()
    costs = est.estimate_all(requests)
    assert est.order == [(k, b) for k in ("a1", "b1", "c1") for b in ("tvm", "ort")]
    # the costs answer the requests in their order
    assert costs[:4] == [Cost(1.2), Cost(1.2 * 1.2), Cost(1.2), Cost(1.2 * 1.4)]
    # ONNX Runtime is cheaper on every sub-graph, as on the machine; measured backend by
    # backend (every tvm kernel first) the drift would have made tvm look cheaper on all
    tvm, ort = costs[:4], costs[4:]
    assert all(o < t for o, t in zip(ort, tvm))


def test_parse_mock_costs():
    assert parse_mock_costs("tvm:2,example:1") == {"tvm": 2.0, "example": 1.0}
    assert parse_mock_costs(" tvm : 0.5 ,") == {"tvm": 0.5}
    assert parse_mock_costs("") == {}
    for bad in ["tvm", "tvm:x", ":1", "tvm:-1", "tvm:nan", "tvm:1,tvm:2"]:
        with pytest.raises(CollageError, match="mock-costs"):
            parse_mock_costs(bad)


# ---------------------------------------------------------------- measured estimator


def _empty_module() -> ModuleOp:
    return ModuleOp([])


class FakeClock:
    """A clock that only the fake kernel moves: exact, load-independent timings."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _fake_compile(clock: FakeClock, durations, calls: list):
    """A compile hook whose kernels 'take' the given durations, in turn."""

    def compile(module, backend):
        calls.append(backend)
        it = iter(durations)

        def kernel(*inputs):
            clock.now += next(it)

        return kernel

    return compile


def _measured(compile, clock=None, **kw) -> MeasuredCostEstimator:
    kw.setdefault("make_inputs", lambda module: [])
    if clock is not None:
        kw["clock"] = clock
    return MeasuredCostEstimator(compile, **kw)


def test_measured_stable_timing_stops_after_two_rounds():
    clock, calls = FakeClock(), []
    durations = [9.0, 9.0] + [1.0, 2.0, 3.0, 2.0, 2.0] * 100  # 2 warm-ups, then steady
    est = _measured(
        _fake_compile(clock, durations, calls), clock, warmup=2, round_runs=5, budget_s=1e9
    )
    m = est.measure(_request("tvm", 1, build=_empty_module))
    assert m.cost == Cost(2.0)  # median; the warm-ups are not counted
    assert m.runs == 10
    assert m.spread == pytest.approx(0.0)  # IQR of [1,2,2,2,2,2,2,2,3,3] -> 2 - 2
    assert m.reason == ""
    # structurally equal kernel (same key, same backend): not compiled again
    assert est.measure(_request("tvm", 1, build=_empty_module)) is m
    assert calls == ["tvm"]
    est.measure(_request("ort", 1, build=_empty_module))
    assert calls == ["tvm", "ort"]


def test_measured_runs_are_each_timed_right_after_eviction():
    # eviction before every timed run, never inside the timed span, never for warm-ups
    clock, calls, events = FakeClock(), [], []
    compile = _fake_compile(clock, [1.0] * 100, calls)

    def traced(module, backend):
        kernel = compile(module, backend)

        def run(*inputs):
            events.append(("run", clock.now))
            kernel(*inputs)
        return run

    def evict():
        events.append(("evict", clock.now))
        clock.now += 5.0  # slow, and not part of the cost

    est = _measured(traced, clock, warmup=2, round_runs=3, budget_s=1e9, evict=evict)
    m = est.measure(_request("tvm", 1, build=_empty_module))
    assert m.cost == Cost(1.0) and m.runs == 6
    kinds = [kind for kind, _ in events]
    assert kinds == ["run", "run"] + ["evict", "run"] * 6


def test_backends_of_one_sub_graph_are_compiled_then_timed_in_alternation():
    clock, events = FakeClock(), []

    def compile(module, backend):
        events.append(f"compile {backend}")
        seconds = {"tvm": 2.0, "ort": 1.0, "ov": 3.0}[backend]

        def kernel(*inputs):
            events.append(backend)
            clock.now += seconds
        return kernel

    est = _measured(compile, clock, warmup=1, round_runs=2, budget_s=1e9)
    requests = [_request(b, 1, build=_empty_module) for b in ("tvm", "ort", "ov")]
    bad = _request("tvm", 1, key="bad", build=lambda: (_ for _ in ()).throw(
        CollageError("cannot extract")))
    costs = est.estimate_all([*requests, bad])
    assert costs[:3] == [Cost(2.0), Cost(1.0), Cost(3.0)] and costs[3].is_invalid
    # each compiled and warmed up, then rounds of two runs in turn, backend by backend
    # (stable after two each)
    assert events == ["compile tvm", "tvm", "compile ort", "ort", "compile ov", "ov",
                      *(["ort"] * 2 + ["ov"] * 2 + ["tvm"] * 2) * 2]


def test_a_kernel_stops_being_timed_when_its_statistic_is_stable():
    clock, events = FakeClock(), []

    def compile(module, backend):
        durations = iter([1.0] * 100 if backend == "steady" else range(1, 100))

        def kernel(*inputs):
            events.append(backend)
            clock.now += next(durations)
        return kernel

    est = _measured(compile, clock, warmup=0, round_runs=2, max_runs=8, budget_s=1e9)
    steady, drifting = est.measure_many(
        [_request(b, 1, build=_empty_module) for b in ("steady", "drifting")])
    assert steady.runs == 4 and drifting.runs == 8  # the drifting one runs to max_runs
    # backend by backend, in name order
    assert events == ["drifting"] * 2 + ["steady"] * 2 + ["drifting"] * 2 + ["steady"] * 2 \
        + ["drifting"] * 4


def _logged_compile(clock: FakeClock, events: list[str]):
    """A compile hook that logs "compile BACKEND" and each run (BACKEND), 1 s per run."""
    def compile(module, backend):
        events.append(f"compile {backend}")

        def kernel(*inputs):
            events.append(backend)
            clock.now += 1.0
        return kernel

    return compile


def test_sub_graphs_of_a_batch_are_compiled_then_timed_in_alternation():
    # two sub-graphs on two backends in one batch: all four compiled first, then rounds of
    # each in turn (backend by backend), so every kernel's rounds spread over the whole
    # batch's time
    clock, events = FakeClock(), []
    compile = _logged_compile(clock, events)
    est = _measured(compile, clock, warmup=0, round_runs=1, budget_s=1e9, batch_kernels=4)
    requests = [_request(b, 1, key=k, build=_empty_module) for k in "ab" for b in ("x", "y")]
    assert est.estimate_all(requests) == [Cost(1.0)] * 4
    assert events == ["compile x", "compile y"] * 2 + ["x", "x", "y", "y"] * 2
    events.clear()
    est = _measured(compile, clock, warmup=0, round_runs=1, budget_s=1e9, batch_kernels=3)
    est.estimate_all([_request(b, 1, key=k, build=_empty_module) for k in "ab" for b in "xy"])
    # a sub-graph is never split: 2 + 2 > 3, so two batches
    assert events == ["compile x", "compile y", "x", "y", "x", "y"] * 2


def test_the_sequence_cost_is_a_call_after_another_kernel_of_its_backend_less_its_own():
    # a call takes 1 s right after its own kernel's, 1.5 s right after another kernel of
    # its backend and 4 s right after another backend's (not counted either way)
    clock, last = FakeClock(), [None]

    def compile(module, backend):
        def kernel(*inputs):
            previous, last[0] = last[0], (kernel, backend)
            clock.now += (1.0 if previous is None or previous[0] is kernel else
                          1.5 if previous[1] == backend else 4.0)
        return kernel

    est = _measured(compile, clock, warmup=0, round_runs=3, budget_s=1e9, min_span_s=100.0,
                    batch_kernels=8)
    a, b, c = est.measure_many([_request("x", 1, key=k, build=_empty_module) for k in "ab"]
                               + [_request("y", 1, key="c", build=_empty_module)])
    assert a.cost == b.cost == c.cost == Cost(1.0)  # the median: one call in three follows
    assert a.sequence == b.sequence == 0.5          # another kernel's
    assert c.sequence == 0.0  # only ever after its own or another backend's: not measured
    assert in_plan(a, alone=True) == Cost(1.0) and in_plan(a, alone=False) == Cost(1.5)
    assert in_plan(Measurement(Cost(1.0), sequence=-2.0), alone=False) == Cost(0.0)
    assert in_plan(invalid_measurement("no"), alone=False).is_invalid


def test_measure_group_reports_progress_after_each_compile_and_each_pass():
    clock, events = FakeClock(), []
    compile = _logged_compile(clock, events)
    est = _measured(compile, clock, warmup=0, round_runs=1, budget_s=1e9)
    requests = [_request(b, 1, build=_empty_module) for b in ("x", "y")]
    est.measure_group(requests, progress=lambda: events.append("progress"))
    assert events == ["compile x", "progress", "compile y", "progress",
                      "x", "y", "progress", "x", "y", "progress"]  # stable after two passes


def test_a_statistic_counts_as_stable_once_its_samples_span_min_span():
    clock = FakeClock()
    steady = _fake_compile(clock, [1.0] * 1000, [])
    est = _measured(steady, clock, warmup=0, round_runs=2, budget_s=1e9, min_span_s=7.0)
    # stable after two rounds (4 s), but the samples must span 7 s: four rounds (8 s)
    assert est.measure(_request("tvm", 1, build=_empty_module)).runs == 8
    est = _measured(steady, clock, warmup=0, round_runs=2, max_runs=6, budget_s=1e9,
                    min_span_s=100.0)
    assert est.measure(_request("tvm", 1, build=_empty_module)).runs == 6  # max_runs first
    with pytest.raises(CollageError, match="min_span_s"):
        _measured(steady, min_span_s=-1.0)
    with pytest.raises(CollageError, match="batch_kernels"):
        _measured(steady, batch_kernels=0)


def test_measurement_batches_pack_whole_sub_graphs_within_both_limits():
    def req(key, backend, nbytes=10):
        return KernelRequest(backend, key, 1, _empty_module, lambda: nbytes)

    requests = [req("a", "x"), req("a", "y"), req("b", "x"), req("c", "x", 100),
                req("c", "y", 100), req("d", "x"), req("e", "x")]
    batches = [[f"{r.key}{r.backend}" for r in b] for b in measurement_batches(requests, 3, 150)]
    # "c" is over the byte limit with anything else, and alone over it: a batch of its own
    assert batches == [["ax", "ay", "bx"], ["cx", "cy"], ["dx", "ex"]]
    batches = [[r.key for r in b] for b in measurement_batches(requests, 1, 1 << 30)]
    assert batches == [["a", "a"], ["b"], ["c", "c"], ["d"], ["e"]]  # never split
    assert list(measurement_batches([], 3, 150)) == []


def test_a_kernel_request_counts_the_bytes_of_the_tensors_it_holds():
    from ir_helpers import parse

    t = "tensor<4x8xf32>"  # 128 bytes
    func = parse(f"""
func.func @main(%x: {t}) -> {t} {{
  %w = collage.constant dense<1.0> : {t}
  %a = collage.add %x, %w : ({t}, {t}) -> {t}
  %b = collage.relu %a : {t}
  %c = collage.sigmoid %b : {t}
  func.return %c : {t}
}}
""").ops.first
    graph = DataflowGraph(func)
    a, b, c = (graph.node_of(op) for op in list(func.body.block.ops)[1:4])
    # the add holds its result and the constant it reads (cloned in); relu only its result
    assert kernel_request(SubGraph(graph, 1 << a), "x").nbytes() == 2 * 128
    assert kernel_request(SubGraph(graph, 1 << b), "x").nbytes() == 128
    assert kernel_request(SubGraph(graph, 1 << a | 1 << b | 1 << c), "x").nbytes() == 4 * 128
    # only the kernel of every op does all the work: a plan's only kernel
    assert kernel_request(SubGraph(graph, 1 << a | 1 << b | 1 << c), "x").alone
    assert not kernel_request(SubGraph(graph, 1 << a | 1 << b), "x").alone


def _after_other_slow(clock: FakeClock):
    """A compile hook whose kernels take 1 ms right after their own call and 10 ms
    otherwise (after another kernel, or first)."""
    last = [None]

    def compile(module, backend):
        def kernel(*inputs):
            previous, last[0] = last[0], kernel
            clock.now += 0.001 if previous is kernel else 0.010
        return kernel

    return compile


def test_a_kernel_that_does_all_the_work_is_timed_as_the_plan_runs():
    # two whole-model kernels in alternation, one call a round: every call follows the
    # other kernel's and takes 10 ms. Timed alone, rounds last ALONE_ROUND_S and the
    # cost is that of the calls right after its own (1 ms), over alone_span_s.
    def whole(backend, alone):
        return replace(_request(backend, 1, key="model", build=_empty_module), alone=alone)

    clock = FakeClock()
    est = _measured(_after_other_slow(clock), clock, warmup=0, round_runs=1, max_runs=8,
                    budget_s=0.5, alone_span_s=2.0, batch_kernels=8)
    slow = est.measure_many([whole("x", False), whole("y", False)])
    assert [m.cost.seconds for m in slow] == [pytest.approx(0.010)] * 2
    started = clock.now
    fast = est.measure_many([whole("x", True), whole("y", True)])
    assert [m.cost.seconds for m in fast] == [pytest.approx(0.001)] * 2
    assert clock.now - started >= 2.0  # no max_runs, no early stop: the whole span
    assert all(m.runs > 8 for m in fast)
    # and each kernel's own rounds take budget_s, however long that makes the span
    started = clock.now
    est.budget_s = 1.5
    list(est.measure_many([whole("z", True), whole("w", True)]))
    assert clock.now - started >= 2 * 1.5
    # without alone_span_s a kernel that does all the work is timed like any other
    clock = FakeClock()
    plain = _measured(_after_other_slow(clock), clock, warmup=0, round_runs=1, max_runs=8,
                      budget_s=1e9, batch_kernels=8)
    assert [m.cost.seconds for m in plain.measure_many([whole("x", True), whole("y", True)])
            ] == [pytest.approx(0.010)] * 2
    with pytest.raises(CollageError, match="alone_span_s"):
        _measured(_after_other_slow(clock), alone_span_s=-1.0)


def test_a_kernel_that_does_all_the_work_is_never_timed_after_eviction():
    # in its plan nothing runs between its calls: eviction would time a cold start
    clock, events = FakeClock(), []

    def compile(module, backend):
        def kernel(*inputs):
            events.append(f"run {backend}")
            clock.now += 0.001
        return kernel

    def whole(backend, alone):
        return replace(_request(backend, 1, key="model", build=_empty_module), alone=alone)

    est = _measured(compile, clock, warmup=1, round_runs=2, max_runs=4, budget_s=0.1,
                    alone_span_s=0.1, evict=lambda: events.append("evict"))
    (m,) = est.measure_many([whole("x", True)])
    assert m.runs > 2 and events == ["run x"] * (1 + m.runs)
    events.clear()
    list(est.measure_many([whole("y", False)]))  # a kernel of a bigger plan still is
    assert events[:3] == ["run y", "evict", "run y"]


def test_kernels_that_do_all_the_work_are_batched_and_memoised_apart():
    def req(key, backend, alone=False):
        return KernelRequest(backend, key, 1, _empty_module, alone=alone)

    requests = [req("a", "x"), req("m", "x", True), req("a", "y"), req("m", "y", True),
                req("b", "x")]
    batches = [[f"{r.key}{r.backend}" for r in b]
               for b in measurement_batches(measurement_order(requests), 8, 1 << 30)]
    assert batches == [["ax", "ay", "bx"], ["mx", "my"]]  # whole-model kernels last
    # the same structure as part of a plan and as all of it: two costs
    est = DriftingEstimator()
    est.estimate_all([req("a", "x"), req("a", "x", True), req("a", "x")])
    assert est.order == [("a", "x"), ("a", "x")]


def test_evictor_sizes_its_buffer_by_the_l2_of_each_thread(tmp_path):
    for index, level, size in (("index0", "1", "48K"), ("index2", "2", "512K"),
                               ("index3", "3", "32768K")):
        (tmp_path / index).mkdir()
        (tmp_path / index / "level").write_text(level + "\n")
        (tmp_path / index / "size").write_text(size + "\n")
    assert l2_bytes(tmp_path) == 512 << 10
    assert l2_bytes(tmp_path / "missing") == DEFAULT_L2
    assert Evictor(2).nbytes == 2 * l2_bytes()
    evict = Evictor(1, nbytes=4096)
    evict()
    evict()
    assert evict._buffer[::LINE].tolist() == [2] * (4096 // LINE)
    assert evict._buffer.sum() == 2 * (4096 // LINE)  # one write per cache line


def test_footprint_counts_each_tensor_a_run_touches_once(monkeypatch):
    from ir_helpers import parse

    import collage_xdsl.measure.evict as evict_module

    t = "tensor<4x8xf32>"  # 128 bytes
    module = parse(f"""
func.func @main(%x: {t}) -> {t} {{
  %r = func.call @k(%x) : ({t}) -> {t}
  func.return %r : {t}
}}
func.func private @k(%a: {t}) -> {t} {{
  %b = collage.relu %a : {t}
  %c = collage.relu %b : {t}
  func.return %c : {t}
}}
""")
    # @main's argument, @k's argument and its two relus; the call's result is @k's
    assert footprint(module) == 4 * 128
    monkeypatch.setattr(evict_module, "l2_bytes", lambda: 256)
    assert needs_eviction(module, threads=1) and not needs_eviction(module, threads=2)


def test_kernels_are_timed_after_eviction_only_when_the_run_does_not_fit_in_l2(monkeypatch):
    import collage_xdsl.measure.evict as evict_module

    asked = []

    def make_estimator(specs, options, evict):
        asked.append(evict)
        return MockCostEstimator({}), None

    monkeypatch.setattr(planner, "make_estimator", make_estimator)
    for l2, evicts in ((1 << 20, False), (16, True)):  # 5 tensors of 128 bytes
        monkeypatch.setattr(evict_module, "l2_bytes", lambda l2=l2: l2)
        CollagePartitionPass(backends=("tvm",)).apply(Context(), parse(RELU_ADD_RELU))
        assert asked[-1] is evicts


def test_measured_percentile_and_budget():
    clock, calls = FakeClock(), []
    drifting = [float(i) for i in range(1, 1000)]  # never stable: stops on max_runs
    est = _measured(
        _fake_compile(clock, drifting, calls), clock, warmup=0, round_runs=4, max_runs=12,
        budget_s=1e9, percentile=90,
    )
    m = est.measure(_request("tvm", 1, build=_empty_module))
    assert m.runs == 12
    assert m.cost.seconds == pytest.approx(10.9)  # 90th percentile of 1..12
    assert m.spread == pytest.approx(5.5)
    clock2 = FakeClock()
    est = _measured(
        _fake_compile(clock2, drifting, []), clock2, warmup=0, round_runs=4, max_runs=1000,
        budget_s=20.0,
    )
    assert est.measure(_request("tvm", 1, build=_empty_module)).runs == 8  # 1+..+8 = 36 > 20 s


def test_measured_real_sleep():
    def compile(module, backend):
        return lambda: time.sleep(0.002)

    est = _measured(compile, warmup=1, round_runs=3, max_runs=30, tolerance=0.2)
    m = est.measure(_request("tvm", 1, build=_empty_module))
    assert m.cost.seconds >= 0.002
    assert 6 <= m.runs <= 30 and m.spread >= 0


def test_measured_compile_failure_is_invalid_with_reason():
    def compile(module, backend):
        raise RuntimeError("unsupported op collage.lrn")

    m = _measured(compile).measure(_request("openvino", 2, key="conv", build=_empty_module))
    assert m.cost.is_invalid and m.runs == 0
    assert "compile failed" in m.reason and "unsupported op collage.lrn" in m.reason
    assert "openvino" in m.reason and m.cost.reason == m.reason


def test_measured_build_failure_is_invalid():
    def build():
        raise CollageError("cannot extract")

    m = _measured(lambda mod, b: (lambda: None)).measure(_request("tvm", 1, build=build))
    assert m.cost.is_invalid and "cannot extract" in m.reason


def test_measured_run_crash_is_invalid():
    clock = FakeClock()
    state = {"n": 0}

    def compile(module, backend):
        def kernel():
            state["n"] += 1
            clock.now += 1.0
            if state["n"] == 5:
                raise FloatingPointError("boom")

        return kernel

    m = _measured(compile, clock, warmup=2).measure(_request("tvm", 1, build=_empty_module))
    assert m.cost.is_invalid
    assert "run failed after 2 timed runs" in m.reason and "boom" in m.reason


def test_measured_bad_options():
    with pytest.raises(CollageError, match="percentile"):
        MeasuredCostEstimator(lambda m, b: None, percentile=120)
    with pytest.raises(CollageError, match="round_runs"):
        MeasuredCostEstimator(lambda m, b: None, round_runs=10, max_runs=5)


def test_random_inputs_follow_the_signature():
    types = [tensor_type((2, 3), np.float32), tensor_type((4,), np.int64),
             tensor_type((1, 2), np.bool_)]
    block = Block(arg_types=types)
    block.add_op(ReturnOp())
    module = ModuleOp([FuncOp("kernel", (types, []), Region(block))])
    arrays = random_inputs(module)
    assert [(a.shape, a.dtype) for a in arrays] == [
        ((2, 3), np.float32), ((4,), np.int64), ((1, 2), np.bool_)
    ]
    np.testing.assert_array_equal(random_inputs(module)[0], arrays[0])  # seeded
    with pytest.raises(CollageError, match="no func.func"):
        random_inputs(ModuleOp([]))


def _twin_relus() -> DataflowGraph:
    """relu(x) + const and relu(y) + const: two structurally equal kernels."""
    t = tensor_type((2, 3), np.float32)
    block = Block(arg_types=[t, t])
    ops = []
    for arg in block.args:
        ops.append(C.ReluOp(arg))
        ops.append(constant_op(np.full((2, 3), 0.5, np.float32)))
        ops.append(C.AddOp(ops[-2].results[0], ops[-1].results[0]))
    ops.append(C.MulOp(ops[2].results[0], ops[5].results[0]))
    for op in ops:
        block.add_op(op)
    block.add_op(ReturnOp(ops[-1].results[0]))
    func = FuncOp("main", ([t, t], [t]), Region(block))
    ModuleOp([func])
    return DataflowGraph(func)


def test_structurally_equal_kernels_are_measured_once():
    graph = _twin_relus()
    relu_add = [
        SubGraph(graph, (1 << graph.node_of(op)) | (1 << graph.node_of(op.next_op.next_op)))
        for op in graph.func.body.block.ops if isinstance(op, C.ReluOp)
    ]
    requests = [kernel_request(s, "interp") for s in relu_add]
    assert requests[0].key == requests[1].key and requests[0].num_ops == 2
    compiled = []

    def compile(module, backend):  # the reference interpreter as a "backend"
        compiled.append(module)
        return lambda *xs: run_module(module, xs, entry="kernel")

    est = MeasuredCostEstimator(compile, warmup=1, round_runs=3, max_runs=9)
    costs = est.estimate_all(requests)
    assert len(compiled) == 1 and costs[0] == costs[1]
    assert costs[0].is_known and costs[0].seconds > 0
    whole = SubGraph(graph, graph.kernel_nodes | graph.constants)
    assert kernel_request(whole, "interp").key != requests[0].key
    assert est.estimate(kernel_request(whole, "interp")).is_known and len(compiled) == 2


def test_cost_database_keys_say_how_costs_were_measured(tmp_path):
    # costs measured another way (before L2 eviction, over a shorter span of time, or
    # without sequence costs) are not reused: they are measured again; so are kernels
    # that do all the work, timed as a plan's only kernel
    specs = CollagePartitionPass(backends=("tvm",)).specs()
    span = MeasureSettings().min_span_s
    for evict in (True, False):
        options = PartitionOptions(estimator="measured", cost_db=str(tmp_path / "c.db"))
        estimator, db = make_estimator(specs, options, evict=evict)
        version = f"{get_backend('tvm').version}; {measurement(evict, span)}"
        assert estimator.version_of(KernelRequest("tvm", "relu", 1, _empty_module)) == version
        alone = replace(KernelRequest("tvm", "relu", 1, _empty_module), alone=True)
        assert estimator.version_of(alone) == \
            f"{version}; {alone_measurement(MeasureSettings().alone_span_s)}"
        estimator.close()
        db.close()
    assert len({measurement(True, span), measurement(False, span), measurement(True, 0)}) == 3
    assert measurement(True, span).endswith(f"samples over {span:g} s; with sequence costs")
