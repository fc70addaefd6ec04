"""Run-time choice between near-tied plans of one function.

    selector = PlanSelector([primary.run, alternative.run])
    outputs = selector(inputs)          # on the plan currently measured fastest
    selector.stats()                    # calls, probes and switches per plan

Why: refinement decides from one time window, and on this 2-core machine which library is
faster can flip within minutes, even within one process (ONNX Runtime / OpenVINO on the
MNIST CNN moved between 0.89 and 1.17: README "Benchmarks"). When refinement measured
another plan within `collage_xdsl.refine.TIE` of its result, `collage-refine{alternatives=N}`
keeps it as `@main.alt1` and the runtime (`collage_xdsl.runtime.Executable`) lets this
selector pick at run time.

Policy (every call returns the outputs of the plan that ran it; refinement checked that the
alternatives agree with the result):

- Calls go to the current plan (the refined result first). Its latency is the mean of its
  calls since the last probe, the first call after a probe left out (caches the probe
  cooled).
- A **probe** runs the next other plan (round robin) on the next calls: a first call left
  out when the plan is faster than `WARM_BELOW_S` (cold caches matter there), then calls
  until `probe_s` seconds and at least `MIN_PROBE_CALLS` calls: one call of a 90 ms
  plan is too noisy to switch on (a one-call probe of VGG19 once moved to a plan 5%
  slower). A probe starts once the
  current plan has run `probe length / explore` seconds since the last one, so probing
  takes at most about `explore` of the time spent in calls: when the probed plan is x%
  slower, that costs at most explore * x%.
- After a probe, the probed plan becomes the current plan when both the mean and the
  median of its calls are below the current plan's mean: a mean alone follows one lucky
  call (a probe of 3 calls, one of them 20% fast, on a plan 5% slower).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

EXPLORE = 0.03
"""The largest share of call time spent probing the other plans."""
PROBE_S = 1e-3
"""Seconds of steady calls per probe (at least `MIN_PROBE_CALLS` calls)."""
MIN_PROBE_CALLS = 3
"""Timed calls per probe at least."""
WARM_BELOW_S = 1e-3
"""A probe of a plan faster than this leaves its first call out."""


@dataclass
class _Window:
    """Timed calls of one plan: their number and total seconds."""

    calls: int = 0
    seconds: float = 0.0
    skip: bool = True
    """Leave the next call out (the first after a switch or a probe)."""

    times: list[float] | None = None
    """Each timed call's seconds, when kept (probes)."""

    def add(self, seconds: float) -> None:
        if self.skip:
            self.skip = False
        else:
            self.calls += 1
            self.seconds += seconds
            if self.times is not None:
                self.times.append(seconds)

    def mean(self) -> float | None:
        return self.seconds / self.calls if self.calls else None

    def total_calls(self) -> int:
        """Calls made, the one left out included."""
        return self.calls + (not self.skip)


class PlanSelector:
    """Calls one of several plans computing the same function, the one measured fastest."""

    def __init__(self, plans: Sequence[Callable], *, explore: float = EXPLORE,
                 probe_s: float = PROBE_S, clock: Callable[[], float] = time.perf_counter):
        if len(plans) < 1:
            raise ValueError("PlanSelector needs at least one plan")
        if not 0 < explore < 1:
            raise ValueError(f"explore must be in (0, 1), got {explore}")
        self.plans, self.explore, self.probe_s, self.clock = list(plans), explore, probe_s, clock
        self.current = 0
        self._plan = self.plans[0]
        self.window = _Window()
        """The current plan's calls since the last probe."""
        self._due = 0.0 if len(self.plans) > 1 else math.inf
        """The window's seconds at which the next probe starts (0: not known yet)."""
        self.estimate: list[float | None] = [None] * len(self.plans)
        """Each plan's latest measured mean latency."""
        self.calls = [0] * len(self.plans)
        self.probes = self.switches = 0
        self._probe: int | None = None
        self._probe_window = _Window()
        self._turn = 0

    def __call__(self, inputs):
        window = self.window
        if self._probe is not None or window.seconds >= self._due:
            return self._call_slow(inputs)
        clock = self.clock  # the steady path: time the current plan, nothing else
        started = clock()
        outputs = self._plan(inputs)
        window.seconds += clock() - started
        window.calls += 1
        return outputs

    def _call_slow(self, inputs):
        """A call that starts, continues or ends a probe, or sets when the next is due."""
        if self._probe is None and 0 < self._due <= self.window.seconds:
            self._start_probe()
        index = self.current if self._probe is None else self._probe
        started = self.clock()
        outputs = self.plans[index](inputs)
        seconds = self.clock() - started
        if self._probe is None:
            self.window.add(seconds)
            self._set_due()
        else:
            self.calls[index] += 1
            self._probe_window.add(seconds)
            window = self._probe_window
            if window.seconds >= self.probe_s and window.calls >= MIN_PROBE_CALLS:
                self._end_probe()
        return outputs

    def _to_probe(self) -> int:
        """The plan the next probe runs: the plans other than the current one in turn."""
        others = [i for i in range(len(self.plans)) if i != self.current]
        return others[self._turn % len(others)]

    def _set_due(self) -> None:
        """Once the window has a mean: the probe starts after length / explore seconds."""
        current = self.window.mean()
        if current is not None:
            other = self.estimate[self._to_probe()] or current
            length = (max(self.probe_s, MIN_PROBE_CALLS * other)
                      + (other if other < WARM_BELOW_S else 0.0))
            self._due = length / self.explore

    def _start_probe(self) -> None:
        self._probe = self._to_probe()
        self._turn += 1
        guess = self.estimate[self._probe]
        self._probe_window = _Window(skip=guess is None or guess < WARM_BELOW_S, times=[])

    def _end_probe(self) -> None:
        probed, mean, current = self._probe, self._probe_window.mean(), self.window.mean()
        assert probed is not None and mean is not None and current is not None
        self.probes += 1
        self.estimate[probed], self.estimate[self.current] = mean, current
        self.calls[self.current] += self.window.total_calls()
        self._probe = None
        if mean < current and statistics.median(self._probe_window.times) < current:
            self.current, self.switches = probed, self.switches + 1
            self._plan = self.plans[probed]
        self.window, self._due = _Window(), 0.0

    def stats(self) -> dict:
        """Calls per plan, probes, switches, the current plan and the latest estimates."""
        calls = list(self.calls)
        calls[self.current] += self.window.total_calls()
        return {"calls": calls, "probes": self.probes, "switches": self.switches,
                "current": self.current,
                "estimate_ms": [None if e is None else e * 1e3 for e in self.estimate]}
