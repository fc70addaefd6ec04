"""Scoring plans for refinement: a challenger compared with the incumbent by latency.

    scorer = LatencyScorer(ModelLatency({"tvm": 1.0, "onnxruntime": 2.0}, transfer=3.0))
    comparison = scorer.compare(incumbent, challenger, deadline)
    comparison.ratio             # challenger latency / incumbent latency

`collage_xdsl.refine.measured.MeasuredScorer` times real plans in a worker process.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from collage_xdsl.core.index_set import bits, count
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.estimator import FUSION_DISCOUNT
from collage_xdsl.refine.moves import Plan


@dataclass(frozen=True)
class Comparison:
    """A challenger against the incumbent."""

    ratio: float
    """Challenger latency / incumbent latency; inf when the challenger failed."""
    incumbent_s: float | None = None
    challenger_s: float | None = None
    ratio_high: float | None = None
    """The upper end of the ratio's 95% confidence interval (None: the ratio is exact)."""
    reason: str = ""
    """Why the comparison failed; empty when it did not."""
    note: str = ""
    """Why the challenger's outputs that differ from the start plan's still agree
    (rounding); empty when they do not differ."""
    incumbent_failed: bool = False
    """The incumbent itself could not be measured."""
    unfinished: bool = False
    """The budget ran out before the comparison finished (no fault of the challenger)."""

    @staticmethod
    def failed(reason: str, *, incumbent: bool = False, unfinished: bool = False
               ) -> Comparison:
        return Comparison(math.inf, reason=reason, incumbent_failed=incumbent,
                          unfinished=unfinished)


class Scorer(ABC):
    """Compares plans of one function by latency."""

    precision: float = 0.0
    """The relative difference within which a ratio is noise (0: ratios are exact)."""

    @abstractmethod
    def compare(self, incumbent: Plan, challenger: Plan, deadline: float) -> Comparison:
        """How fast `challenger` runs relative to `incumbent`; give up at `deadline`
        (`time.monotonic()` seconds) with an unfinished comparison."""

    def load(self, plan: Plan, deadline: float) -> Comparison:
        """Get `plan` ready to be compared (built, compiled, run once) before any
        comparison: `plan` against itself by default. A failure is `plan`'s, as the
        incumbent's."""
        return self.compare(plan, plan, deadline)

    def timing_seconds(self, run_s: float) -> float:
        """Most seconds the timing part of one comparison of plans that run about `run_s`
        takes (what the auto budget adds to a load per variant); 0 by default."""
        return 0.0

    def close(self) -> None:
        """Release what the scorer holds (worker processes); nothing by default."""


class LatencyScorer(Scorer):
    """Compares by `latency(plan) -> seconds`, each plan's latency computed once; a
    `CollageError` from it fails that plan with its message."""

    def __init__(self, latency: Callable[[Plan], float]):
        self.latency = latency
        self._known: dict[frozenset, float | str] = {}

    def _latency(self, plan: Plan) -> float | str:
        if plan.key not in self._known:
            try:
                self._known[plan.key] = float(self.latency(plan))
            except CollageError as e:
                self._known[plan.key] = str(e)
        return self._known[plan.key]

    def compare(self, incumbent: Plan, challenger: Plan, deadline: float) -> Comparison:
        a = self._latency(incumbent)
        if isinstance(a, str):
            return Comparison.failed(a, incumbent=True)
        b = self._latency(challenger)
        if isinstance(b, str):
            return Comparison.failed(b)
        return Comparison(b / a if a > 0 else math.inf if b > 0 else 1.0, a, b)


@dataclass(frozen=True)
class ModelLatency:
    """A deterministic latency model (`collage-refine{scorer=mock}`): each kernel costs what
    the mock estimator says (`base[backend]` per op, each further op 0.9 times the last:
    `collage_xdsl.measure.estimator.MockCostEstimator`), plus `transfer` seconds for every
    dataflow edge from a kernel into a kernel of another backend."""

    base: Mapping[str, float]
    transfer: float = 0.0
    default: float = 1.0

    def __call__(self, plan: Plan) -> float:
        total = 0.0
        backend_of: dict[int, str] = {}
        for k in plan.kernels:
            graph = k.sub_graph.graph
            ops = count(k.inside & graph.kernel_nodes)
            base = self.base.get(k.backend, self.default)
            total += sum(base * FUSION_DISCOUNT**n for n in range(ops))
            for i in bits(k.inside & graph.kernel_nodes):
                backend_of[i] = k.backend
        for k in plan.kernels:
            nodes = k.sub_graph.graph.nodes
            for i in bits(k.sub_graph.entry):
                total += self.transfer * sum(
                    1 for p in nodes[i].inputs
                    if p in backend_of and backend_of[p] != k.backend)
        return total
