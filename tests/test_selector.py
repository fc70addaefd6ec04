"""The run-time choice between near-tied plans (`collage_xdsl.runtime.selector.PlanSelector`),
on a simulated clock: plans advance it by their latency."""

from __future__ import annotations

import pytest

from collage_xdsl.runtime.selector import (
    EXPLORE,
    MAX_BACKOFF,
    MIN_PROBE_CALLS,
    NEAR,
    WARM_BELOW_S,
    PlanSelector,
)


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class FakePlan:
    """Returns its name; takes `latency(n)` seconds on its n-th call (n from 0), plus `cold`
    seconds on a call right after another plan ran."""

    last: list = [None]

    def __init__(self, clock: Clock, name: str, latency, cold: float = 0.0):
        self.clock, self.name, self.latency, self.cold, self.n = clock, name, latency, cold, 0

    def __call__(self, inputs):
        self.clock.now += self.latency(self.n) + (self.cold if FakePlan.last[0] is not self
                                                  else 0.0)
        FakePlan.last[0] = self
        self.n += 1
        return [self.name, inputs]


def plans(clock, *specs, cold=0.0):
    FakePlan.last[0] = None
    return [FakePlan(clock, name, latency if callable(latency) else (lambda n, s=latency: s),
                     cold) for name, latency in specs]


def run(selector: PlanSelector, calls: int) -> list[str]:
    return [selector(i)[0] for i in range(calls)]


def run_until(selector: PlanSelector, clock: Clock, end: float) -> list[tuple[str, float]]:
    """Calls until the clock passes `end`: the plan that ran each and when it ended."""
    trace = []
    while clock.now < end:
        trace.append((selector(None)[0], clock.now))
    return trace


def test_each_call_returns_the_outputs_of_the_plan_that_ran_it():
    clock = Clock()
    selector = PlanSelector(plans(clock, ("a", 1e-4), ("b", 2e-4)), clock=clock)
    for i in range(3000):
        name, inputs = selector(i)
        assert inputs == i and name in ("a", "b")


class CountingClock(Clock):
    def __init__(self):
        super().__init__()
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.now


def test_steady_calls_do_not_read_the_clock_and_every_call_is_counted():
    clock = CountingClock()
    selector = PlanSelector(plans(clock, ("a", 25e-6), ("b", 30e-6)), clock=clock)
    run(selector, 100000)
    # a cycle times about 2 x 1 ms of calls out of 1 ms / EXPLORE
    assert clock.reads / 2 < 100000 * 3 * EXPLORE
    assert sum(selector.stats()["calls"]) == 100000


def test_switches_to_an_alternative_measured_faster():
    clock = Clock()
    selector = PlanSelector(plans(clock, ("refined", 30e-6), ("alternative", 25e-6)),
                            clock=clock)
    names = run(selector, 20000)
    assert selector.stats()["switches"] >= 1 and selector.current == 1
    assert names[-1000:].count("alternative") > 950


def test_keeps_the_faster_plan_and_probes_at_most_the_explore_share():
    clock = Clock()
    fast, slow = 25e-6, 40e-6
    selector = PlanSelector(plans(clock, ("fast", fast), ("slow", slow)), clock=clock)
    names = run(selector, 200000)
    stats = selector.stats()
    assert selector.current == 0 and stats["switches"] == 0 and stats["probes"] >= 10
    # a plan 60% slower loses by far every time: after the first probes, its cycles are
    # MAX_BACKOFF times as long, so it takes well under the explore share
    assert stats["backoff"] == [1, MAX_BACKOFF]
    probing = names.count("slow") * slow
    assert probing <= 0.5 * EXPLORE * clock.now
    assert stats["estimate_ms"] == pytest.approx([fast * 1e3, slow * 1e3])


def test_a_plan_near_the_current_one_is_probed_at_the_full_rate():
    clock = Clock()
    selector = PlanSelector(plans(clock, ("fast", 25e-6), ("near", 26e-6)), clock=clock)
    names = run(selector, 200000)
    stats = selector.stats()
    assert stats["switches"] == 0 and stats["backoff"] == [1, 1]
    assert names.count("near") * 26e-6 >= 0.8 * EXPLORE * clock.now


def test_follows_the_machine_when_the_faster_plan_changes():
    # ONNX Runtime faster for the first 10000 calls, then OpenVINO (the flip in README)
    clock = Clock()
    ort = FakePlan(clock, "ort", lambda n: 0.0)
    ov = FakePlan(clock, "ov", lambda n: 0.0)
    ort.latency = lambda n: 25e-6 if clock.now < 0.3 else 35e-6
    ov.latency = lambda n: 30e-6 if clock.now < 0.3 else 26e-6
    FakePlan.last[0] = None
    selector = PlanSelector([ov, ort], clock=clock)
    names = run(selector, 30000)
    assert clock.now > 0.6
    before = names[: 30000 * 3 // 10]
    # probes (a 2 ms settle, then 1 ms timed) come every ~0.1 s: windows of 5000 calls
    assert before[-5000:].count("ort") > 4750
    assert names[-5000:].count("ov") > 4750
    assert selector.stats()["switches"] >= 2


@pytest.mark.parametrize("slow, fast, cold, calls", [
    # each plan's first call after the other ran pays 40 us of cold caches: counting it
    # would make the 20 us plan look like 60 us in a probe of one call
    (30e-6, 20e-6, 40e-6, 20000),
    # light ShuffleNet: ONNX Runtime 1.48 ms, OpenVINO 1.38 ms and 1.2 ms more on its
    # first call after the other ran: three timed calls with that one make it 1.78 ms
    (1.48e-3, 1.38e-3, 1.2e-3, 3000),
])
def test_a_cold_first_call_after_a_switch_is_left_out(slow, fast, cold, calls):
    clock = Clock()
    selector = PlanSelector(plans(clock, ("slow", slow), ("fast", fast), cold=cold),
                            clock=clock)
    run(selector, calls)
    assert selector.current == 1
    assert selector.stats()["estimate_ms"][1] == pytest.approx(fast * 1e3)


def test_a_fast_probe_settles_before_it_is_timed():
    # after the other plan ran, a plan's calls are slow for 1 ms (its worker threads
    # compete with the other's): the MLP's ONNX Runtime after OpenVINO. Timed from its
    # second call, a 1 ms probe of the faster plan would measure 33 us, not 25 us
    clock = Clock()

    class Carried(FakePlan):
        def __call__(self, inputs):
            if FakePlan.last[0] is not self:
                self.switched = clock.now
            carried = clock.now - self.switched < 1e-3
            self.clock.now += 10e-6 if carried else 0.0
            return super().__call__(inputs)

    ov, ort = (Carried(clock, name, lambda n, s=s: s) for name, s in (("ov", 28e-6),
                                                                      ("ort", 25e-6)))
    FakePlan.last[0] = None
    selector = PlanSelector([ov, ort], clock=clock)
    run(selector, 20000)
    assert selector.current == 1 and selector.stats()["switches"] == 1
    assert selector.stats()["estimate_ms"] == pytest.approx([0.028, 0.025])


def test_the_first_call_runs_every_plan_once_and_answers_with_the_current_one():
    # OpenVINO's first run of the MNIST CNN plan: 1.2 ms, then about 25 us. It belongs in
    # the first call (slow anyway), not in a later one that the caller times
    clock = Clock()
    a, b = plans(clock, ("a", 25e-6), ("b", lambda n: 1.2e-3 if n == 0 else 30e-6))
    selector = PlanSelector([a, b], clock=clock)
    assert selector("x") == ["a", "x"]
    assert (a.n, b.n) == (1, 1) and clock.now == pytest.approx(1.225e-3)
    first = clock.now
    names = run(selector, 20000)
    assert "b" in names  # probed, paying no first run any more
    assert clock.now - first == pytest.approx(25e-6 * names.count("a")
                                              + 30e-6 * names.count("b"))
    assert sum(selector.stats()["calls"]) == 20001


def test_a_slow_plan_is_probed_with_the_fewest_calls():
    clock = Clock()
    slow = 10 * WARM_BELOW_S
    selector = PlanSelector(plans(clock, ("a", slow), ("b", 1.1 * slow)), clock=clock)
    names = run(selector, 2000)
    # the first probe knows nothing of the plan and leaves a first call out; later ones
    # take MIN_PROBE_CALLS calls each
    assert selector.stats()["probes"] >= 3
    assert names.count("b") == MIN_PROBE_CALLS * selector.stats()["probes"] + 1


def test_slow_plans_near_each_other_are_probed_more_often_at_the_same_cost():
    # light ResNet-50 in the benchmark: ONNX Runtime 17.5 ms, OpenVINO 17.7 ms in the one
    # probe of the run's 124 calls, then 3% faster than ONNX Runtime; a 19 ms plan probed
    # with 3% of the time is probed every 1.9 s of calls
    clock = Clock()
    slow = 19e-3
    a = FakePlan(clock, "a", lambda n: slow)
    b = FakePlan(clock, "b", lambda n: 1.013 * slow if clock.now < 0.3 else 0.97 * slow)
    FakePlan.last[0] = None
    selector = PlanSelector([a, b], clock=clock)
    later = [n for n, t in run_until(selector, clock, 2.5) if 1.5 <= t]
    assert later.count("b") > 0.9 * len(later)
    # a steady near tie: probing the plan 1.3% slower costs at most EXPLORE x NEAR
    clock = Clock()
    a, b = plans(clock, ("a", slow), ("b", 1.013 * slow))
    selector = PlanSelector([a, b], clock=clock)
    names = run(selector, 2000)
    assert selector.current == 0 and selector.stats()["probes"] > 30
    assert names.count("b") * 0.013 * slow <= EXPLORE * NEAR * clock.now


def test_one_lucky_call_of_a_slower_plan_does_not_switch():
    # VGG19: a 90 ms alternative 5% slower, one of whose calls came out fast
    clock = Clock()
    slow = 10 * WARM_BELOW_S
    lucky = {2}  # b's first timed call is 20% faster than a (call 0 is the selector's
    # first call warming it, call 1 the probe's first call, left out)
    selector = PlanSelector(plans(clock, ("a", slow), (
        "b", lambda n: 0.8 * slow if n in lucky else 1.05 * slow)), clock=clock)
    run(selector, 2000)
    assert selector.stats()["probes"] >= 3 and selector.stats()["switches"] == 0


def test_a_win_is_confirmed_by_a_second_cycle_before_switching():
    # AlexNet in the benchmark: a slower alternative whose first probe came out fast
    clock = Clock()
    slow = 10 * WARM_BELOW_S
    selector = PlanSelector(plans(clock, ("a", slow), (
        "b", lambda n: 0.8 * slow if n < 4 else 1.05 * slow)), clock=clock)
    names = run(selector, 2000)
    # the first cycle's probe (calls 2-4 of b; call 0 warmed it in the selector's first
    # call, call 1 is left out) wins; the next cycle probes b at once (calls 5-7) and
    # it loses
    assert names[:16].count("b") == 7
    assert selector.stats()["switches"] == 0 and selector.current == 0


def test_more_than_two_plans_are_probed_in_turn():
    clock = Clock()
    selector = PlanSelector(plans(clock, ("a", 30e-6), ("b", 40e-6), ("c", 20e-6)),
                            clock=clock)
    names = run(selector, 100000)
    assert selector.current == 2 and {"a", "b"} <= set(names[-60000:])


class Failing(FakePlan):
    """Raises on its calls from `fails_from` on (n counted from 0)."""

    def __init__(self, clock, name, latency, fails_from):
        super().__init__(clock, name, lambda n: latency)
        self.fails_from = fails_from

    def __call__(self, inputs):
        if self.n >= self.fails_from:
            self.n += 1
            raise RuntimeError(f"{self.name} refused the inputs")
        return super().__call__(inputs)


@pytest.mark.parametrize("fails_from", [0, 5])  # its first run, a later probe
def test_an_alternative_failing_at_run_time_is_dropped(fails_from, capsys):
    clock = Clock()
    a = FakePlan(clock, "a", lambda n: 30e-6)
    b = Failing(clock, "b", 20e-6, fails_from)
    c = FakePlan(clock, "c", lambda n: 40e-6)
    FakePlan.last[0] = None
    selector = PlanSelector([a, b, c], names=["@main", "@main.alt1", "@main.alt2"],
                            clock=clock)
    names = run(selector, 20000)
    assert names.count("b") <= max(0, fails_from - 1)  # answered by "a" when "b" failed
    assert b.n == fails_from + 1  # never called after it failed
    assert "collage: alternative plan @main.alt1 dropped at run time: RuntimeError: b " \
           "refused the inputs" in capsys.readouterr().err
    stats = selector.stats()
    assert stats["dropped"] == {"@main.alt1": "RuntimeError: b refused the inputs"}
    assert sum(stats["calls"]) == 20000 and stats["calls"][2] > 0  # "c" still probed
    assert selector.current == 0


def test_the_last_alternative_dropped_leaves_the_current_plan_alone():
    clock = CountingClock()
    a = FakePlan(clock, "a", lambda n: 30e-6)
    b = Failing(clock, "b", 20e-6, 0)
    FakePlan.last[0] = None
    selector = PlanSelector([a, b], clock=clock)
    assert run(selector, 1000) == ["a"] * 1000
    assert clock.reads == 0 and selector.stats()["calls"] == [1000, 0]


def test_inputs_every_plan_refuses_are_the_callers_error():
    clock = Clock()

    class Picky(FakePlan):
        def __call__(self, inputs):
            if inputs == "bad":
                raise RuntimeError(f"{self.name} refused the inputs")
            return super().__call__(inputs)

    a, b = (Picky(clock, name, lambda n: 30e-6) for name in "ab")
    FakePlan.last[0] = None
    selector = PlanSelector([a, b], clock=clock)
    while selector._window is None or selector._window.plan != 1:  # until b is probed
        selector("good")
    with pytest.raises(RuntimeError, match="a refused the inputs") as error:
        selector("bad")
    assert error.value.__context__ is None  # not chained to b's failure
    assert selector.dropped == {}
    assert "b" in run(selector, 1000)  # b is still probed


@pytest.mark.parametrize("kwargs, message", [
    (dict(explore=0), "explore must be in"), (dict(explore=1), "explore must be in")])
def test_bad_options_are_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PlanSelector([lambda x: x, lambda x: x], **kwargs)
    with pytest.raises(ValueError, match="at least two plans"):
        PlanSelector([lambda x: x])


def test_a_plan_switched_away_from_is_probed_at_the_full_rate():
    # the MLP with tvm and ONNX Runtime in the benchmark: ONNX Runtime 22 us, TVM 31 us;
    # for a while the machine made ONNX Runtime 34 us and the runtime went to TVM. Back
    # at 22 us, ONNX Runtime had lost by far while it was slow, and probed at a quarter
    # of the rate, the runtime stayed on TVM for up to 400 ms of calls
    clock = Clock()
    ort = FakePlan(clock, "ort", lambda n: 34e-6 if 0.3 <= clock.now < 1.2 else 22e-6)
    tvm = FakePlan(clock, "tvm", lambda n: 31e-6)
    FakePlan.last[0] = None
    selector = PlanSelector([ort, tvm], clock=clock)
    trace = run_until(selector, clock, 1.6)
    slow = [n for n, t in trace if 0.95 <= t < 1.2]
    # TVM won at 0.9 s; ONNX Runtime is probed every 0.1 s of calls (not every 0.4 s)
    back = [n for n, t in trace if 1.35 <= t]
    assert slow.count("tvm") > 0.95 * len(slow)
    assert back.count("ort") > 0.95 * len(back)
    assert selector.stats()["switches"] == 2
