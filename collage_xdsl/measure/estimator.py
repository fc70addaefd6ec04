"""Cost estimators: what one candidate kernel (sub-graph x backend) costs.

An estimator is asked about a :class:`KernelRequest`: the backend, the kernel's
structural key (equal for structurally equal sub-graphs anywhere in the model), how
many of its nodes need a kernel, a way to build the standalone kernel module, and
whether it does all its function's work (``alone``: it is then a plan's only kernel, and
is timed as one). Every estimator memoises by ``(key, backend, alone)``, so structurally
equal candidates are costed once per estimator.

* :class:`MockCostEstimator` -- deterministic, for tests and the ``mock`` pass option.
* :class:`MeasuredCostEstimator` -- compiles through a backend hook, warms up, repeats
  until the statistic is stable or a budget is spent, and keeps the spread. A compile or
  run failure is an Invalid cost that keeps its reason; it never escapes as an exception.
"""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from itertools import groupby
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from collage_xdsl.core.cost import Cost
from collage_xdsl.core.index_set import count
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.inputs import random_arguments

MIN_SEQUENCE_SAMPLES = 3
"""Calls right after another kernel (and right after its own) a sequence cost needs."""
ALONE_ROUND_S = 0.02
"""A timing round of a kernel that does all the work lasts at least this long (with
``alone_span_s``): mostly calls right after its own, as when it runs as the plan."""
FUSION_DISCOUNT = 0.9
"""Mock model: the i-th op (from 0) of a kernel costs ``base * FUSION_DISCOUNT**i``."""


@dataclass(frozen=True)
class KernelRequest:
    """One candidate kernel to cost."""

    backend: str
    key: str
    """Structural hash of the sub-graph: equal for structurally equal kernels."""
    num_ops: int
    """Nodes of the kernel that need a kernel (constants and arguments do not count)."""
    build: Callable[[], ModuleOp]
    """Extracts the standalone kernel module (only called by estimators that compile)."""
    nbytes: Callable[[], int] = lambda: 0
    """Bytes of the tensors the kernel holds and defines (`SubGraph.nbytes`): what keeping
    it compiled while others are timed costs, roughly. Only called for kernels to measure:
    a warm partition costs thousands of requests from the database."""
    alone: bool = False
    """The kernel does all its function's work (`DataflowGraph.does_all_work`): a plan's
    only kernel, which the runtime calls again and again. Measured estimators time such
    kernels as the plan runs (`MeasuredCostEstimator`'s ``alone_span_s``)."""

    @property
    def ident(self) -> tuple[str, str, bool]:
        """What an estimator memoises by: structurally equal kernels on one backend, timed
        the same way, cost the same."""
        return self.key, self.backend, self.alone


def kernel_request(sub_graph: SubGraph, backend: str) -> KernelRequest:
    """The request for running ``sub_graph`` as one kernel on ``backend``."""
    return KernelRequest(
        backend,
        sub_graph.structural_hash(),
        count(sub_graph.inside & sub_graph.graph.kernel_nodes),
        sub_graph.extract,
        lambda: sub_graph.nbytes,
        sub_graph.graph.does_all_work(sub_graph.inside),
    )


def measurement_order(requests: Iterable[KernelRequest]) -> list[KernelRequest]:
    """`requests` with the backends of one sub-graph (one `key`) next to each other, in
    the order each key and each backend first appears.

    Candidates come backend by backend (every TVM kernel, then every ONNX Runtime one...),
    and measured in that order each backend's kernels fell into a window of their own, a
    minute apart on a big model. This machine's speed moves by a third between seconds
    (ONNX Runtime on the MNIST CNN: 66-95 us in consecutive half seconds), so the windows
    decided which backend looked faster: light ShuffleNet's whole model measured 3.4 ms on
    OpenVINO and 6.6 ms on ONNX Runtime, 28 s apart, and the search chose OpenVINO; in
    the benchmark's interleaved rounds the two plans ran 6.7 and 5.6 ms. Measured next to
    each other, a sub-graph's backends see much the same machine.

    Kernels that do all the work (`KernelRequest.alone`) come last, all together, so
    that they fill batches of their own (`measurement_batches`)."""
    groups: dict[tuple[str, bool], list[KernelRequest]] = {}
    for r in requests:
        groups.setdefault((r.key, r.alone), []).append(r)
    ordered = sorted(groups.items(), key=lambda item: item[0][1])  # stable: parts first
    return [r for _, group in ordered for r in group]


def measurement_batches(requests: Sequence[KernelRequest], kernels: int, nbytes: int
                        ) -> Iterator[list[KernelRequest]]:
    """Consecutive sub-graphs of `requests` (runs of one `key`, `measurement_order`) packed
    into batches of at most `kernels` requests and `nbytes` bytes (`KernelRequest.nbytes`);
    a sub-graph over either limit is a batch of its own, never split. Kernels that do all
    the work (`KernelRequest.alone`) are batched only with each other: timed in
    alternation with the other backends' whole-model kernels alone, as the benchmark
    and refinement compare plans.

    A batch is compiled and then timed in alternation (`MeasuredCostEstimator.measure_group`),
    so each kernel's samples spread over the time the whole batch takes, and the limits
    bound what it keeps compiled at once."""
    batch: list[KernelRequest] = []
    size = 0
    for _, grouped in groupby(requests, key=lambda r: (r.key, r.alone)):
        group = list(grouped)
        group_size = sum(r.nbytes() for r in group)
        if batch and (len(batch) + len(group) > kernels or size + group_size > nbytes
                      or batch[0].alone != group[0].alone):
            yield batch
            batch, size = [], 0
        batch += group
        size += group_size
    if batch:
        yield batch


@dataclass(frozen=True)
class Measurement:
    """The outcome of costing one kernel."""

    cost: Cost
    spread: float = 0.0
    """Interquartile range of the timed runs, in seconds (0 when not measured)."""
    runs: int = 0
    """Timed runs behind ``cost`` (warm-up runs excluded)."""
    reason: str = ""
    """Why the cost is Invalid; empty otherwise."""
    sequence: float = 0.0
    """Seconds a call costs beyond ``cost`` right after a call of another kernel of the
    same backend, as in a run of several kernels (the median of those calls less the
    median of calls right after its own): the sequence cost, `measure_group`. Signed
    (a call may also gain from what ran before); 0 when not measured."""


class CostEstimator(ABC):
    """Estimates candidate kernel costs, each distinct `KernelRequest.ident` once."""

    def __init__(self) -> None:
        self._memo: dict[tuple[str, str, bool], Measurement] = {}

    @abstractmethod
    def _measure(self, request: KernelRequest) -> Measurement:
        """Cost one kernel not seen before."""

    def _measure_many(self, requests: Sequence[KernelRequest]) -> Iterator[Measurement]:
        """Cost distinct kernels not seen before, yielding in order; estimators that
        measure several at once (or look them up together) override this."""
        return map(self._measure, requests)

    def measure(self, request: KernelRequest) -> Measurement:
        found = self._memo.get(request.ident)
        if found is None:
            found = self._memo[request.ident] = self._measure(request)
        return found

    def measure_many(self, requests: Iterable[KernelRequest]) -> Iterator[Measurement]:
        """Batch API: every request's measurement, in order, each as soon as it is known;
        the kernels not seen before go to `_measure_many` together, each once, grouped by
        sub-graph (`measurement_order`)."""
        requests = list(requests)
        new: dict[tuple[str, str, bool], KernelRequest] = {}
        for r in requests:
            if r.ident not in self._memo:
                new.setdefault(r.ident, r)
        ordered = measurement_order(new.values())
        fresh = zip(ordered, self._measure_many(ordered))
        for r in requests:
            while r.ident not in self._memo:
                done, m = next(fresh)
                self._memo[done.ident] = m
            yield self._memo[r.ident]

    def estimate(self, request: KernelRequest) -> Cost:
        return self.measure(request).cost

    def estimate_all(self, requests: Iterable[KernelRequest]) -> list[Cost]:
        """Batch API: the cost of every request, in order (see `measure_many`)."""
        return [m.cost for m in self.measure_many(requests)]

    def close(self) -> None:
        """Release what the estimator holds (worker processes, ...); nothing by default."""


def parse_mock_costs(text: str) -> dict[str, float]:
    """Parse the ``mock-costs`` option, e.g. ``"tvm:2,example:1"`` (seconds per op)."""
    costs: dict[str, float] = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        name, sep, value = entry.partition(":")
        name = name.strip()
        try:
            seconds = float(value) if sep and name else -1.0
        except ValueError:
            seconds = -1.0
        if not 0 <= seconds < math.inf:  # also rejects nan
            raise CollageError(
                f"mock-costs: bad entry {entry!r}: expected BACKEND:SECONDS with "
                "SECONDS a finite number >= 0"
            )
        if name in costs:
            raise CollageError(f"mock-costs: backend {name!r} given twice")
        costs[name] = seconds
    return costs


class MockCostEstimator(CostEstimator):
    """``base * (1 + 0.9 + 0.9**2 + ...)``, one term per op: fusing is cheaper per op."""

    def __init__(self, base_costs: dict[str, float], default: float = 1.0):
        super().__init__()
        self.base_costs = dict(base_costs)
        self.default = default

    def _measure(self, request: KernelRequest) -> Measurement:
        base = self.base_costs.get(request.backend, self.default)
        total = sum(base * FUSION_DISCOUNT**i for i in range(request.num_ops))
        return Measurement(Cost(total))


CompileHook = Callable[[ModuleOp, str], Callable[..., Any]]
"""``compile(kernel_module, backend) -> callable`` taking the kernel's inputs."""


def random_inputs(module: ModuleOp, seed: int = 0) -> list[np.ndarray]:
    """Random arguments for the (first) function of a kernel module: floats ~ N(0, 1),
    random bools, integers in [0, 4) (within the axis when they index a gather)."""
    func = next((op for op in module.body.ops if isinstance(op, FuncOp)), None)
    if func is None:
        raise CollageError("kernel module has no func.func to run")
    return random_arguments(func, seed, int_high=4, cap_indices=True)


def measurement(evict: bool, min_span_s: float) -> str:
    """How kernel costs are measured: after eviction or back to back
    (`collage_xdsl.measure.evict.needs_eviction`), over how long a span of time
    (`MeasuredCostEstimator`'s ``min_span_s``), and with sequence costs
    (`Measurement.sequence`). Part of a cost's key in the cost database, so that costs
    measured another way are measured again."""
    how = "L2 evicted before each run" if evict else "back to back (the run fits in L2)"
    if min_span_s > 0:
        how += f"; samples over {min_span_s:g} s"
    return f"{how}; with sequence costs"


def alone_measurement(alone_span_s: float) -> str:
    """How kernels that do all the work (`KernelRequest.alone`) are measured besides
    `measurement`: part of their costs' key in the cost database."""
    return (f"alone: in alternation with other whole-model kernels only, for {alone_span_s:g} s, "
            "calls right after its own, never after eviction")


class MeasuredCostEstimator(CostEstimator):
    """Times compiled kernels.

    Per kernel: build it, ``compile(module, backend)``, make inputs, run ``warmup`` times
    untimed, then time runs in rounds of ``round_runs``, each run right after ``evict()``
    when given (`collage_xdsl.measure.evict`: the kernel's cost as in a whole run). After each round
    the statistic (the ``percentile`` of all samples, the median by default) is compared
    with the previous round's: it stops once they differ by at most ``tolerance``
    (relative) and its samples span ``min_span_s`` of wall time, or when ``max_runs``
    samples or ``budget_s`` seconds of its own rounds are spent. The cost is the statistic;
    the spread is the interquartile range.

    With ``alone_span_s`` > 0 a kernel that does all the work (`KernelRequest.alone`:
    the plan when it is chosen) is timed as the plan runs: in rounds of at least
    `ALONE_ROUND_S`, until its samples span ``alone_span_s`` of wall time and its rounds
    took ``budget_s`` (no ``max_runs``, no early stop), its cost the statistic of the
    calls right after its own, never after ``evict()``: in its plan nothing runs between
    its calls that could displace its data. (On whole-model kernels of the MLP and the
    MNIST CNN, each backend's, timed after eviction took 1.08-1.13x of the plan's run,
    back to back 0.97-1.00x: `collage_xdsl.runtime.additivity`.) Such kernels decide between
    whole-model plans that differ by 10-30%, and one batch's median at 1 s did not: it
    had the MLP's TVM kernel at 125 us against ONNX Runtime's 113 us, where the benchmark
    ran them at 80 and 112 us.

    Kernels are measured in batches (`measurement_batches`: whole sub-graphs, at most
    ``batch_kernels`` kernels and ``batch_bytes`` bytes): a batch is compiled first and
    then timed round by round in alternation (`measure_group`), so a kernel's rounds are
    spread over the time the batch takes, without costing more of it. This machine's
    speed wanders with a correlation time of a few hundred milliseconds: the medians of
    50 ms windows of one kernel's back-to-back runs varied by 17-22% (coefficient of
    variation, `scripts/speed_windows.py`), of 1 s windows by 6-11%, and a measurement
    that stopped after a few stable rounds (a few milliseconds to 0.1 s) got whatever
    window it fell into.
    """

    def __init__(
        self,
        compile: CompileHook,
        make_inputs: Callable[[ModuleOp], Sequence[np.ndarray]] = random_inputs,
        *,
        warmup: int = 2,
        round_runs: int = 5,
        max_runs: int = 200,
        budget_s: float = 1.0,
        tolerance: float = 0.02,
        percentile: float = 50.0,
        min_span_s: float = 0.0,
        alone_span_s: float = 0.0,
        batch_kernels: int = 1,
        batch_bytes: int = 1 << 30,
        clock: Callable[[], float] = time.perf_counter,
        evict: Callable[[], None] | None = None,
    ):
        super().__init__()
        if not 0 <= percentile <= 100:
            raise CollageError(f"measured estimator: percentile {percentile} not in [0, 100]")
        if round_runs < 1 or max_runs < round_runs:
            raise CollageError(
                f"measured estimator: need 1 <= round_runs ({round_runs}) <= max_runs ({max_runs})"
            )
        if min_span_s < 0 or alone_span_s < 0 or batch_kernels < 1 or batch_bytes < 0:
            raise CollageError(
                f"measured estimator: need min_span_s ({min_span_s}) >= 0, alone_span_s "
                f"({alone_span_s}) >= 0, batch_kernels ({batch_kernels}) >= 1 and "
                f"batch_bytes ({batch_bytes}) >= 0")
        self.compile = compile
        self.make_inputs = make_inputs
        self.warmup = warmup
        self.round_runs = round_runs
        self.max_runs = max_runs
        self.budget_s = budget_s
        self.tolerance = tolerance
        self.percentile = percentile
        self.min_span_s = min_span_s
        self.alone_span_s = alone_span_s
        self.batch_kernels = batch_kernels
        self.batch_bytes = batch_bytes
        self.clock = clock
        self.evict = evict

    def _measure(self, request: KernelRequest) -> Measurement:
        (measured,) = self.measure_group([request])
        return measured

    def _measure_many(self, requests: Sequence[KernelRequest]) -> Iterator[Measurement]:
        """One batch at a time (`measurement_batches`; `measurement_order` put each
        sub-graph's backends next to each other), timed in alternation (`measure_group`)."""
        for batch in measurement_batches(requests, self.batch_kernels, self.batch_bytes):
            yield from self.measure_group(batch)

    def measure_group(self, requests: Sequence[KernelRequest],
                      progress: Callable[[], None] = lambda: None) -> list[Measurement]:
        """Kernels measured together (a sub-graph's backends, or a batch of sub-graphs):
        each one built, compiled and warmed up, then all timed in alternating rounds (a
        round of the first, a round of the next, ...), each until its own statistic is
        stable over ``min_span_s``. Timed one after another, the second backend's compile
        (a second for TVM) sat between the timings, and this machine's speed moves by a
        third between half seconds; in alternation each backend is timed in the same
        moments. ``progress()`` is called after each kernel is prepared and after each
        pass of rounds (a worker tells its parent it is not hung).

        A pass takes the kernels backend by backend, each backend's from one further on
        than the pass before, so a round's first call mostly comes right after a call of
        another kernel of the same backend, as a kernel's calls do in a run of several
        kernels, and its other calls right after its own, as a one-kernel plan's calls
        do. The difference of the two medians is the kernel's sequence cost
        (`Measurement.sequence`): called one after another, the kernels of light
        ShuffleNet's 16-kernel ONNX Runtime plan took 25-50 us a call more than each
        called repeatedly (`scripts/sequence_penalty.py`), with the L2 caches evicted
        before every call either way. It over-states what a plan pays, 2.4-3.1x on three
        of five plans (`collage_xdsl.core.boundaries`; likely because a pass over a batch
        displaces more than a run of one plan does): an upper bound."""
        results: dict[int, Measurement] = {}
        timing: dict[int, _Timing] = {}
        for i, request in enumerate(requests):
            ready = self._prepare(request)
            if isinstance(ready, Measurement):
                results[i] = ready
            else:
                timing[i] = ready
            progress()
        backend_of = {i: requests[i].backend for i in timing}
        groups = [list(g) for _, g in groupby(sorted(timing, key=backend_of.get),
                                              key=backend_of.get)]
        last: _Timing | None = None
        passes = 0
        while timing:
            for i in _pass_order(groups, timing, passes):
                t = timing[i]
                done = self._round(t, after=_After.OWN if last is t else
                                   _After.SAME_BACKEND if last is not None
                                   and last.backend == t.backend else _After.OTHER)
                last = t
                if done is not None:
                    results[i] = done
                    del timing[i]
            passes += 1
            progress()
        return [results[i] for i in range(len(requests))]

    def _prepare(self, request: KernelRequest) -> _Timing | Measurement:
        """The kernel compiled, its inputs made and its warm-up runs done, or why not."""
        where = f"kernel {request.key} on {request.backend}"
        try:
            module = request.build()
            kernel = self.compile(module, request.backend)
        except Exception as e:  # a backend toolchain failing is a result, not a crash
            return invalid_measurement(f"{where}: compile failed: {type(e).__name__}: {e}")
        try:
            inputs = list(self.make_inputs(module))
        except Exception as e:
            return invalid_measurement(f"{where}: could not make inputs: {type(e).__name__}: {e}")
        try:
            for _ in range(self.warmup):
                kernel(*inputs)
        except Exception as e:
            return invalid_measurement(
                f"{where}: run failed after 0 timed runs: {type(e).__name__}: {e}")
        return _Timing(where, request.backend, kernel, inputs,
                       alone=request.alone and self.alone_span_s > 0)

    def _round(self, t: _Timing, after: _After) -> Measurement | None:
        """Time one round of `t`'s kernel, its first call right after `after`; its
        measurement once it is done."""
        started = self.clock()
        if t.first is None:
            t.first = started
        try:
            run = 0
            while run < self.round_runs or t.alone and self.clock() - started < ALONE_ROUND_S:
                if self.evict is not None and not t.alone:
                    self.evict()
                t0 = self.clock()
                t.kernel(*t.inputs)
                seconds = self.clock() - t0
                t.samples.append(seconds)
                if run > 0 or after is _After.OWN:
                    t.after_own.append(seconds)
                elif after is _After.SAME_BACKEND:
                    t.after_other.append(seconds)
                run += 1
        except Exception as e:
            return invalid_measurement(f"{t.where}: run failed after {len(t.samples)} timed "
                                       f"runs: {type(e).__name__}: {e}")
        ended = self.clock()
        t.spent += ended - started
        if t.alone:
            if ended - t.first < self.alone_span_s or t.spent < self.budget_s:
                return None
            timed = t.after_own if len(t.after_own) >= MIN_SEQUENCE_SAMPLES else t.samples
            stat = float(np.percentile(timed, self.percentile))
        else:
            stat = float(np.percentile(t.samples, self.percentile))
            stable = (t.previous is not None and abs(stat - t.previous) <= self.tolerance * stat
                      and ended - t.first >= self.min_span_s)
            if not (stable or len(t.samples) + self.round_runs > self.max_runs
                    or t.spent >= self.budget_s):
                t.previous = stat
                return None
        q25, q75 = np.percentile(t.samples, [25, 75])
        sequence = (float(np.median(t.after_other) - np.median(t.after_own))
                    if min(len(t.after_other), len(t.after_own)) >= MIN_SEQUENCE_SAMPLES
                    else 0.0)
        return Measurement(Cost(max(stat, 0.0)), float(q75 - q25), len(t.samples),
                           sequence=sequence)


def _pass_order(groups: Sequence[Sequence[int]], live: Container[int], n: int) -> list[int]:
    """Pass `n` of `measure_group`: the `live` kernels of each group (a backend's) in turn,
    each group's from its `n`-th on (so the first of a group, which follows another
    backend's, changes from pass to pass)."""
    order: list[int] = []
    for group in groups:
        left = [i for i in group if i in live]
        if left:
            start = n % len(left)
            order += left[start:] + left[:start]
    return order


class _After(Enum):
    """What a timed call came right after."""

    OWN = "a call of the same kernel"
    SAME_BACKEND = "a call of another kernel of the same backend"
    OTHER = "a call on another backend, or nothing timed yet"


@dataclass
class _Timing:
    """A kernel being timed by `MeasuredCostEstimator.measure_group`."""

    where: str
    backend: str
    kernel: Callable[..., Any]
    inputs: list
    alone: bool = False
    """Timed as a plan's only kernel (`MeasuredCostEstimator`'s ``alone_span_s``)."""
    samples: list[float] = field(default_factory=list)
    after_own: list[float] = field(default_factory=list)
    """The samples of calls right after a call of the same kernel."""
    after_other: list[float] = field(default_factory=list)
    """The samples of calls right after a call of another kernel of the same backend."""
    previous: float | None = None
    """The statistic after the previous round."""
    first: float | None = None
    """When its first timed round started."""
    spent: float = 0.0
    """Seconds its rounds took so far (evictions included)."""


def in_plan(m: Measurement, alone: bool) -> Cost:
    """What the kernel `m` measured costs as a call of a plan: its cost when it is the
    plan's only kernel (called again and again, as it was timed), else its cost plus its
    sequence cost (`Measurement.sequence`), at least zero."""
    if alone or not m.cost.is_known:
        return m.cost
    return Cost(max(m.cost.seconds + m.sequence, 0.0))


def invalid_measurement(reason: str) -> Measurement:
    """An Invalid measurement keeping its reason."""
    return Measurement(Cost.invalid(reason), reason=reason)
