"""Cost estimators: what one candidate kernel (sub-graph x backend) costs.

An estimator is asked about a :class:`KernelRequest`: the backend, the kernel's
structural key (equal for structurally equal sub-graphs anywhere in the model), how
many of its nodes need a kernel, and a way to build the standalone kernel module.
Every estimator memoises by ``(key, backend)``, so structurally equal candidates are
costed once per estimator.

* :class:`MockCostEstimator` -- deterministic, for tests and the ``mock`` pass option.
* :class:`MeasuredCostEstimator` -- compiles through a backend hook, warms up, repeats
  until the statistic is stable or a budget is spent, and keeps the spread. A compile or
  run failure is an Invalid cost that keeps its reason; it never escapes as an exception.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from collage_xdsl.cost import Cost
from collage_xdsl.errors import CollageError
from collage_xdsl.index_set import count
from collage_xdsl.inputs import random_arguments
from collage_xdsl.subgraph import SubGraph

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


def kernel_request(sub_graph: SubGraph, backend: str) -> KernelRequest:
    """The request for running ``sub_graph`` as one kernel on ``backend``."""
    return KernelRequest(
        backend,
        sub_graph.structural_hash(),
        count(sub_graph.inside & sub_graph.graph.kernel_nodes),
        sub_graph.extract,
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
    each other, a sub-graph's backends see much the same machine."""
    groups: dict[str, list[KernelRequest]] = {}
    for r in requests:
        groups.setdefault(r.key, []).append(r)
    return [r for group in groups.values() for r in group]


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


class CostEstimator(ABC):
    """Estimates candidate kernel costs, each distinct ``(key, backend)`` once."""

    def __init__(self) -> None:
        self._memo: dict[tuple[str, str], Measurement] = {}

    @abstractmethod
    def _measure(self, request: KernelRequest) -> Measurement:
        """Cost one kernel not seen before."""

    def _measure_many(self, requests: Sequence[KernelRequest]) -> Iterator[Measurement]:
        """Cost distinct kernels not seen before, yielding in order; estimators that
        measure several at once (or look them up together) override this."""
        return map(self._measure, requests)

    def measure(self, request: KernelRequest) -> Measurement:
        memo_key = (request.key, request.backend)
        found = self._memo.get(memo_key)
        if found is None:
            found = self._memo[memo_key] = self._measure(request)
        return found

    def measure_many(self, requests: Iterable[KernelRequest]) -> Iterator[Measurement]:
        """Batch API: every request's measurement, in order, each as soon as it is known;
        the kernels not seen before go to `_measure_many` together, each once, grouped by
        sub-graph (`measurement_order`)."""
        requests = list(requests)
        new: dict[tuple[str, str], KernelRequest] = {}
        for r in requests:
            memo_key = (r.key, r.backend)
            if memo_key not in self._memo:
                new.setdefault(memo_key, r)
        ordered = measurement_order(new.values())
        fresh = zip(ordered, self._measure_many(ordered))
        for r in requests:
            memo_key = (r.key, r.backend)
            while memo_key not in self._memo:
                done, m = next(fresh)
                self._memo[(done.key, done.backend)] = m
            yield self._memo[memo_key]

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
        if not seconds >= 0:  # also rejects nan
            raise CollageError(
                f"mock-costs: bad entry {entry!r}: expected BACKEND:SECONDS with "
                "SECONDS a non-negative number"
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


def measurement(evict: bool) -> str:
    """How kernel costs are measured, after eviction or back to back
    (`collage_xdsl.evict.needs_eviction`): part of a cost's key in the cost database, so
    that costs measured another way are measured again."""
    return "L2 evicted before each run" if evict else "back to back (the run fits in L2)"


class MeasuredCostEstimator(CostEstimator):
    """Times compiled kernels.

    Per kernel: build it, ``compile(module, backend)``, make inputs, run ``warmup`` times
    untimed, then time runs in rounds of ``round_runs``, each run right after ``evict()``
    when given (`collage_xdsl.evict`: the kernel's cost as in a whole run). After each round
    the statistic (the ``percentile`` of all samples, the median by default) is compared
    with the previous round's: it stops once they differ by at most ``tolerance``
    (relative), or when ``max_runs`` samples or ``budget_s`` seconds of its rounds are
    spent. The cost is the statistic; the spread is the interquartile range. The backends
    of one sub-graph are compiled first and then timed round by round in alternation
    (`measure_group`).
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
        self.compile = compile
        self.make_inputs = make_inputs
        self.warmup = warmup
        self.round_runs = round_runs
        self.max_runs = max_runs
        self.budget_s = budget_s
        self.tolerance = tolerance
        self.percentile = percentile
        self.clock = clock
        self.evict = evict

    def _measure(self, request: KernelRequest) -> Measurement:
        (measured,) = self.measure_group([request])
        return measured

    def _measure_many(self, requests: Sequence[KernelRequest]) -> Iterator[Measurement]:
        """One sub-graph at a time (`measurement_order` put its backends next to each
        other), its backends timed in alternation (`measure_group`)."""
        for _, group in groupby(requests, key=lambda r: r.key):
            yield from self.measure_group(list(group))

    def measure_group(self, requests: Sequence[KernelRequest]) -> list[Measurement]:
        """Kernels of one sub-graph on several backends: each one built, compiled and
        warmed up, then all timed in alternating rounds (a round of the first, a round of
        the next, ...), each until its own statistic is stable. Timed one after another,
        the second backend's compile (a second for TVM) sat between the timings, and this
        machine's speed moves by a third between half seconds; in alternation each
        backend is timed in the same moments."""
        results: dict[int, Measurement] = {}
        timing: dict[int, _Timing] = {}
        for i, request in enumerate(requests):
            ready = self._prepare(request)
            if isinstance(ready, Measurement):
                results[i] = ready
            else:
                timing[i] = ready
        while timing:
            for i, t in list(timing.items()):
                done = self._round(t)
                if done is not None:
                    results[i] = done
                    del timing[i]
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
        return _Timing(where, kernel, inputs)

    def _round(self, t: _Timing) -> Measurement | None:
        """Time one round of `t`'s kernel; its measurement once it is done."""
        started = self.clock()
        try:
            for _ in range(self.round_runs):
                if self.evict is not None:
                    self.evict()
                t0 = self.clock()
                t.kernel(*t.inputs)
                t.samples.append(self.clock() - t0)
        except Exception as e:
            return invalid_measurement(f"{t.where}: run failed after {len(t.samples)} timed "
                                       f"runs: {type(e).__name__}: {e}")
        t.spent += self.clock() - started
        stat = float(np.percentile(t.samples, self.percentile))
        stable = t.previous is not None and abs(stat - t.previous) <= self.tolerance * stat
        if not (stable or len(t.samples) + self.round_runs > self.max_runs
                or t.spent >= self.budget_s):
            t.previous = stat
            return None
        q25, q75 = np.percentile(t.samples, [25, 75])
        return Measurement(Cost(max(stat, 0.0)), float(q75 - q25), len(t.samples))


@dataclass
class _Timing:
    """A kernel being timed by `MeasuredCostEstimator.measure_group`."""

    where: str
    kernel: Callable[..., Any]
    inputs: list
    samples: list[float] = field(default_factory=list)
    previous: float | None = None
    """The statistic after the previous round."""
    spent: float = 0.0
    """Seconds its rounds took so far (evictions included)."""


def invalid_measurement(reason: str) -> Measurement:
    """An Invalid measurement keeping its reason."""
    return Measurement(Cost.invalid(reason), reason=reason)
