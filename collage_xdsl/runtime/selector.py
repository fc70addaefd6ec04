"""The run-time plan selector: several plans of one function (the result of refinement and
the near-tied plans it kept), and each call runs the one measured fastest lately.

    selector = PlanSelector([plan_a.run, plan_b.run], names=["@main", "@main.alt1"])
    outputs = selector(inputs)
    selector.stats()          # calls per plan, probes, switches, estimates, dropped plans

Calls go to the current plan in cycles: a timed reference window of it, a timed probe of
another plan, then untimed calls until probing is `EXPLORE` of the cycle's time; a plan
that wins two cycles in a row becomes the current one, a plan that keeps losing is probed
less often. The first call runs every plan once; a plan other than the current one that
fails is dropped with its reason on stderr. The policy and its constants:
`docs/runtime.md`, "The plan selector".
"""
from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

from collage_xdsl.errors import CollageError
from collage_xdsl.measure.timing import clocked

EXPLORE = 0.03
"""The share of call time spent probing the other plans."""
PROBE_S = 1e-3
"""Seconds of timed calls per reference and per probe (at least `MIN_PROBE_CALLS` calls)."""
MIN_PROBE_CALLS = 3
"""Timed calls per reference and per probe at least."""
WARM_BELOW_S = 10e-3
"""A probe of a plan faster than this leaves its first call out (cold caches matter)."""
NEAR = 0.05
"""A probed plan that loses by at most this much (relative) keeps the full probing rate."""
MAX_BACKOFF = 4
"""The most a losing plan's probes are thinned out (a cycle as many times as long)."""
NEAR_EXPLORE = 0.15
"""The most share of call time probing a slow plan (`WARM_BELOW_S` and up) within `NEAR`
of the current one."""
SETTLE_S = 2e-3
"""A window of a plan faster than `WARM_BELOW_S` leaves out the calls in its first
`SETTLE_S` seconds."""


@dataclass
class _Window:
    """Timed calls of one plan."""

    plan: int
    skip: bool
    """Leave the next call out (a first call)."""
    settle_s: float = 0.0
    """Leave out the calls that start this many seconds into the window."""
    began: float | None = None
    """When the window's first call started."""
    calls: int = 0
    """Calls made, those left out included."""
    times: list[float] = field(default_factory=list)
    """Seconds of each timed call."""
    seconds: float = 0.0
    """Their sum."""
    left_out: float = 0.0
    """Seconds of the calls left out."""

    def add(self, started: float, seconds: float) -> None:
        self.calls += 1
        if self.began is None:
            self.began = started
        if self.skip or started - self.began < self.settle_s:
            self.skip = False
            self.left_out += seconds
        else:
            self.times.append(seconds)
            self.seconds += seconds

    def done(self, probe_s: float) -> bool:
        return len(self.times) >= MIN_PROBE_CALLS and self.seconds >= probe_s

    def mean(self) -> float:
        return self.seconds / len(self.times)


class PlanSelector:
    """Calls one of several plans computing the same function, the one measured fastest."""

    def __init__(self, plans: Sequence[Callable], *, names: Sequence[str] | None = None,
                 explore: float = EXPLORE, probe_s: float = PROBE_S,
                 clock: Callable[[], float] = time.perf_counter):
        if len(plans) < 2:
            raise ValueError("PlanSelector needs at least two plans to choose between")
        if names is not None and len(names) != len(plans):
            raise ValueError(f"{len(names)} names for {len(plans)} plans")
        if not 0 < explore < 1:
            raise ValueError(f"explore must be in (0, 1), got {explore}")
        self.plans, self.explore, self.probe_s, self.clock = list(plans), explore, probe_s, clock
        self.names = list(names) if names is not None else [f"plan {i}"
                                                            for i in range(len(plans))]
        self.current = 0
        self._plan = self.plans[0]
        self._steady = 0
        """Untimed calls of the current plan left before the next reference."""
        self._window: _Window | None = None
        """The reference or probe being timed (None while steady)."""
        self._reference: _Window | None = None
        """The reference of the probe under way."""
        self.estimate: list[float | None] = [None] * len(self.plans)
        """Each plan's latest measured mean latency."""
        self.calls = [0] * len(self.plans)
        """Calls per plan, the steady calls counted when their run starts."""
        self.probes = self.switches = 0
        self.backoff = [1] * len(self.plans)
        """Per plan, how many times as long the cycles after its probes are."""
        self._turn = 0
        self._won: int | None = None
        """The plan that won the last cycle, to be confirmed by the next."""
        self._cold = True
        """No call yet: the first one runs the other plans once as well."""
        self._left: set[int] = set()
        """Plans the selector switched away from (never backed off)."""
        self.dropped: dict[int, str] = {}
        """Plans that failed at run time, and why: never called again."""

    def __call__(self, inputs):
        if self._steady:  # the steady path: count down, call, nothing else
            self._steady -= 1
            return self._plan(inputs)
        return self._call_timed(inputs)

    def _call_timed(self, inputs):
        """A call of a reference or a probe; it starts the window when none is open, and
        ends the cycle when the probe is done."""
        if self._cold:
            return self._first_call(inputs)
        if len(self.dropped) == len(self.plans) - 1:  # nothing left to choose between
            self.calls[self.current] += 1
            return self._plan(inputs)
        window = self._window
        if window is None:
            window = self._window = self._open(self.current, reference=True)
        plan, failure = self.plans[window.plan], None
        try:
            outputs, started, seconds = clocked(partial(plan, inputs), self.clock)
        except Exception as e:
            if window.plan == self.current:  # the plan in use fails: the caller's error
                raise
            failure = e
        if failure is not None:  # outside the handler: the current plan's error, if
            outputs = self._plan(inputs)  # it fails too, is not chained to this one
            self.calls[self.current] += 1
            self._drop(window.plan, failure)
            return outputs
        window.add(started, seconds)
        if window.done(self.probe_s):
            if self._reference is None:
                self._reference, self._window = window, self._start_probe()
            else:
                self._end_cycle(self._reference, window)
        return outputs

    def _first_call(self, inputs):
        """The current plan's outputs (it checks the inputs), then each other plan's
        first run, untimed; the first cycle starts at the next call."""
        self._cold = False
        outputs = self._plan(inputs)
        self.calls[self.current] += 1
        for i, plan in enumerate(self.plans[1:], 1):
            try:
                plan(inputs)
            except Exception as e:
                self._drop(i, e)
        return outputs

    def _drop(self, plan: int, error: Exception) -> None:
        """Never call `plan` again (it failed where the current plan did not), say so on
        stderr, and start the next cycle afresh."""
        reason = str(error) if isinstance(error, CollageError) else \
            f"{type(error).__name__}: {error}"
        self.dropped[plan] = reason
        for window in (self._reference, self._window):
            if window is not None:
                self.calls[window.plan] += window.calls
        print(f"collage: alternative plan {self.names[plan]} dropped at run time: {reason}",
              file=sys.stderr)
        self._window = self._reference = self._won = None

    def _start_probe(self) -> _Window:
        if self._won is not None:
            probed = self._won
        else:
            others = [i for i in range(len(self.plans))
                      if i != self.current and i not in self.dropped]
            probed = others[self._turn % len(others)]
            self._turn += 1
        return self._open(probed, reference=False)

    def _open(self, plan: int, reference: bool) -> _Window:
        """A window of `plan`: a reference leaves its first call out, and so does a plan
        that is fast or not measured yet, which also settles first."""
        guess = self.estimate[plan]
        fast = guess is None or guess < WARM_BELOW_S
        return _Window(plan, reference or fast, SETTLE_S if fast else 0.0)

    def _end_cycle(self, reference: _Window, probe: _Window) -> None:
        current, mean = reference.mean(), probe.mean()
        self.probes += 1
        self.estimate[reference.plan], self.estimate[probe.plan] = current, mean
        self.calls[reference.plan] += reference.calls
        self.calls[probe.plan] += probe.calls
        self._window = self._reference = None
        won = mean < current and statistics.median(probe.times) < current
        back_off = mean > current * (1 + NEAR) and probe.plan not in self._left
        self.backoff[probe.plan] = (min(2 * self.backoff[probe.plan], MAX_BACKOFF)
                                    if back_off else 1)
        if won and self._won is None:  # confirm at once
            self._won, self._steady = probe.plan, 0
            return
        if won:
            self._left.add(self.current)
            self.current, self.switches = probe.plan, self.switches + 1
            self._plan = self.plans[probe.plan]
        self._won = None
        latency = self.estimate[self.current]
        assert latency is not None
        probe_s = probe.seconds + probe.left_out
        cycle_s = (self.backoff[probe.plan] * probe_s / self._share(current, mean)
                   - reference.seconds - probe_s)
        self._steady = max(0, math.ceil(cycle_s / max(latency, 1e-9)))
        self.calls[self.current] += self._steady

    def _share(self, current: float, probed: float) -> float:
        """The share of call time for probing a plan measured at `probed` seconds against
        the current plan's `current`: `explore`, or for slow plans near each other, up to
        `NEAR_EXPLORE` while probing costs at most `explore` x `NEAR` of the calls' time."""
        slower = probed / current - 1
        if current < WARM_BELOW_S or slower > NEAR:
            return self.explore
        return max(self.explore, min(NEAR_EXPLORE, self.explore * NEAR / max(slower, 1e-9)))

    def stats(self) -> dict:
        """Calls per plan, probes, switches, the current plan, the latest estimates and the
        plans dropped (name: why)."""
        calls = list(self.calls)
        calls[self.current] -= self._steady
        for window in (self._reference, self._window):
            if window is not None:
                calls[window.plan] += window.calls
        return {"calls": calls, "probes": self.probes, "switches": self.switches,
                "current": self.current, "backoff": list(self.backoff),
                "estimate_ms": [None if e is None else e * 1e3 for e in self.estimate],
                "dropped": {self.names[i]: why for i, why in self.dropped.items()}}
