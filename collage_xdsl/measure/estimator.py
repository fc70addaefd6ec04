"""Cost estimators: what one candidate kernel (sub-graph x backend) costs.

An estimator is asked about a :class:`KernelRequest`: the backend, the kernel's
structural key (equal for structurally equal sub-graphs anywhere in the model), how
many of its nodes need a kernel, a way to build the standalone kernel module, and
whether it does all its function's work (``alone``: it is then a plan's only kernel, and
is timed as one). Every estimator memoises by ``(key, backend, alone)``, so structurally
equal candidates are costed once per estimator.

* :class:`MockCostEstimator` -- deterministic, for tests and the ``mock`` pass option.
* `collage_xdsl.measure.measured.MeasuredCostEstimator` -- compiles through a backend
  hook, warms up, repeats until the statistic is stable or a budget is spent, and keeps
  the spread. A compile or run failure is an Invalid cost that keeps its reason; it never
  escapes as an exception.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from collage_xdsl.core.cost import Cost
from collage_xdsl.core.index_set import count
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.inputs import random_arguments

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

    timing_key: str = ""
    """`SubGraph.timing_hash`: equal for kernels that differ only in their weights' values
    (empty: `key`). Such kernels run equally fast, so one of them is timed for all
    (`one_timing_each`)."""

    @property
    def ident(self) -> tuple[str, str, bool]:
        """What an estimator memoises by: structurally equal kernels on one backend, timed
        the same way, cost the same."""
        return self.key, self.backend, self.alone

    @property
    def timing_ident(self) -> tuple[str, str, bool]:
        """`ident` with the timing key: kernels that one timing serves."""
        return self.timing_key or self.key, self.backend, self.alone


def kernel_request(sub_graph: SubGraph, backend: str) -> KernelRequest:
    """The request for running ``sub_graph`` as one kernel on ``backend``."""
    return KernelRequest(
        backend,
        sub_graph.structural_hash(),
        count(sub_graph.inside & sub_graph.graph.kernel_nodes),
        sub_graph.extract,
        lambda: sub_graph.nbytes,
        sub_graph.graph.does_all_work(sub_graph.inside),
        sub_graph.timing_hash,
    )


def one_timing_each(requests: Sequence[KernelRequest],
                    measure_many: Callable[[Sequence[KernelRequest]], Iterable[Measurement]]
                    ) -> Iterator[Measurement]:
    """Every request's measurement, in order, with `measure_many` asked about the first
    request of each `KernelRequest.timing_ident` only: kernels that differ only in their
    weights share its timing. A twelve-layer encoder's layers are timed once, not twelve
    times."""
    timed: dict[tuple[str, str, bool], KernelRequest] = {}
    for r in requests:
        timed.setdefault(r.timing_ident, r)
    position = {ident: i for i, ident in enumerate(timed)}
    measured: list[Measurement] = []
    fresh = iter(measure_many(list(timed.values())))
    for r in requests:
        index = position[r.timing_ident]
        while len(measured) <= index:
            measured.append(next(fresh))
        yield measured[index]


def measurement_order(requests: Iterable[KernelRequest]) -> list[KernelRequest]:
    """`requests` with the backends of one sub-graph (one `key`) next to each other, in
    the order each key and each backend first appears, so that a sub-graph's backends are
    timed in the same moments of a machine whose speed drifts (`docs/measurement.md`).
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
    host: str = ""
    """The `host_description` of the machine that timed it when that is not this process's
    (a cluster node: `collage_xdsl.measure.cluster`); the cost database keeps it under
    that host. Empty: measured here, or read from the database."""


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

    def known(self, request: KernelRequest) -> Measurement | None:
        """The request's measurement if the estimator has it without measuring."""
        return self._memo.get(request.ident)

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


def random_inputs(module: ModuleOp, seed: int = 0) -> list[np.ndarray]:
    """Random arguments for the (first) function of a kernel module: floats ~ N(0, 1),
    random bools, integers in [0, 4) (within the axis when they index a gather)."""
    func = next((op for op in module.body.ops if isinstance(op, FuncOp)), None)
    if func is None:
        raise CollageError("kernel module has no func.func to run")
    return random_arguments(func, seed, int_high=4, cap_indices=True)


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
