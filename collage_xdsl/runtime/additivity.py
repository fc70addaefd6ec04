"""Is the additive cost model right for this plan? The plan's kernels timed alone plus its
boundary costs, against the plan run end to end, side by side in rounds.

    check = check_additivity(Executable(outlined_module), inputs, transition_costs)
    check.ratio.median        # (kernels alone + boundaries) / run, median over rounds
    print(check.format())

Per round each kernel call of one run is repeated alone on the operands it got (after
L2 eviction when the run does not fit in the caches, as the estimator times kernels),
then the whole run; a plan of one kernel call is timed back to back on both sides
(`docs/measurement.md`, "The additivity check").
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from collage_xdsl.core.boundaries import NONE, PlanEstimate, TransitionCosts
from collage_xdsl.core.outline import outlined_estimate
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.evict import Evictor, needs_eviction
from collage_xdsl.measure.stats import MedianCI, median, median_ci
from collage_xdsl.measure.timing import repeat
from collage_xdsl.runtime.executable import Executable


@dataclass(frozen=True)
class AdditivityCheck:
    """The additive estimate of one plan against its measured run."""

    calls: int
    """Kernel calls per run."""
    kernels_s: float
    """Median over rounds of the sum of the kernel calls timed alone."""
    estimate: PlanEstimate
    """`outlined_estimate` of the plan: the kernels' costs from the cost database (NaN
    when one has none) and the boundary model's launches, crossings and base."""
    run_s: float
    """Median over rounds of the run."""
    ratio: MedianCI
    """Per round: (kernels alone + boundaries) / run."""

    @property
    def boundary_s(self) -> float:
        e = self.estimate
        return e.launches + e.crossings + e.base

    @property
    def error(self) -> float:
        """The estimate's relative error (negative: the run is slower than estimated)."""
        return self.ratio.median - 1.0

    def to_json(self) -> dict:
        return {"calls": self.calls, "kernels_ms": self.kernels_s * 1e3,
                "boundaries_ms": self.boundary_s * 1e3, "run_ms": self.run_s * 1e3,
                "error": self.error, "low": self.ratio.low - 1.0,
                "high": self.ratio.high - 1.0, "coverage": self.ratio.coverage,
                "rounds": self.ratio.n}

    def format(self) -> str:
        return (f"additive model: {(self.kernels_s + self.boundary_s) * 1e3:.3g} ms "
                f"(kernels alone {self.kernels_s * 1e3:.3g} ms + boundaries "
                f"{self.boundary_s * 1e3:.3g} ms, {self.calls} calls) vs run "
                f"{self.run_s * 1e3:.3g} ms: error {self.error:+.1%} "
                f"[{self.ratio.low - 1:+.1%}, {self.ratio.high - 1:+.1%}]")


def _steady(call: Callable[[], object], calls: int, evict: Callable[[], None] | None = None
            ) -> float:
    """Median seconds of ``calls`` timed calls after one untimed call, each after
    ``evict()`` when given."""
    return median(repeat(call, calls, warm=1, evict=evict))


def check_additivity(exe: Executable, inputs: Sequence[np.ndarray],
                     costs: TransitionCosts = NONE, *, rounds: int = 15,
                     calls: int = 5) -> AdditivityCheck:
    """Time `exe`'s kernel calls alone and its whole run, side by side for `rounds`."""
    if rounds < 1 or calls < 1:
        raise CollageError(f"additivity check: rounds and calls must be at least 1, got "
                           f"{rounds} and {calls}")
    if exe.selector is not None:
        raise CollageError(f"additivity check: @{exe.main.sym_name.data} has alternative plans; "
                           "time its own plan (Executable(..., adapt=False))")
    kernel_calls = exe.kernel_calls(inputs)
    if not kernel_calls:
        raise CollageError(f"additivity check: @{exe.main.sym_name.data} calls no kernels")
    estimate = outlined_estimate(exe.main, costs)
    threads = exe.policy.threads
    evict = (Evictor(threads) if len(kernel_calls) > 1 and needs_eviction(exe.module, threads)
             else None)
    extra = estimate.launches + estimate.crossings + estimate.base
    sums, runs, ratios = [], [], []
    for _ in range(rounds):
        alone = sum(_steady(lambda k=k: k.kernel(k.operands), calls, evict)
                    for k in kernel_calls)
        run = _steady(lambda: exe.run(inputs), calls)
        sums.append(alone)
        runs.append(run)
        ratios.append((alone + extra) / run)
    return AdditivityCheck(len(kernel_calls), median(sums), estimate, median(runs),
                           median_ci(ratios))
