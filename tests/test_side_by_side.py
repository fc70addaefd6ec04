"""Configurations timed side by side (`collage_xdsl.measure.side_by_side`) on contenders in
this process: warm-up, slow configurations, rounds in a balanced order, samples sized
after the warm-up, failures; and `settle`, which waits for a process's threads to go
quiet (`collage_xdsl.measure.timing`)."""

from __future__ import annotations

import time

import pytest

from collage_xdsl.measure.side_by_side import (
    MAX_ROUNDS_FACTOR,
    Failed,
    InProcess,
    failure_reason,
    slow_round_indices,
    time_side_by_side,
)
from collage_xdsl.measure.timing import balanced_order, settle


def in_process(runs: dict) -> dict[str, InProcess]:
    return {name: InProcess(run, []) for name, run in runs.items()}


def test_slow_rounds_are_spread_over_the_run():
    assert slow_round_indices(30, 3) == {0, 10, 20}
    assert slow_round_indices(2, 5) == {0, 1}


def test_rounds_rotate_and_slow_configurations_are_timed_rarely():
    calls = []

    def config(name, seconds=0.0, fail=False):
        def run(inputs):
            calls.append(name)
            if fail and len(calls) > 8:
                raise RuntimeError("backend crashed\nsecond line")
            time.sleep(seconds)
            return []
        return run

    # 5 ms against 200 ms: no scheduling noise makes a fast one look 10x slower than "fast"
    runs = {"fast": config("fast", 0.005), "slow": config("slow", 0.2),
            "other": config("other", 0.005), "flaky": config("flaky", 0.005, fail=True)}
    timing = time_side_by_side(in_process(runs), singles=["fast"], rounds=6, warmup=2,
                               slow_factor=10, slow_rounds=2, sample_s=0.0)
    assert timing.slow == {"slow"}
    assert timing.failures == {"flaky": "RuntimeError: backend crashed"}
    # warm-up: all four, then all but the slow one; a sizing call of each but the slow one;
    # rounds 0 and 1: rows of the balanced order of three, then of two configurations
    # (flaky failed while sizing, slow is timed in round 0 only); a sample: a first call,
    # then one timed call
    assert calls[:7] == ["fast", "slow", "other", "flaky", "fast", "other", "flaky"]
    assert calls[7:10] == ["fast", "other", "flaky"]  # one more call each sizes the samples
    assert calls[10:16] == [n for n in balanced_order(["fast", "slow", "other"], 0)
                            for _ in range(2)]
    assert calls[16:20] == [n for n in balanced_order(["fast", "other"], 1)  # flaky dropped
                            for _ in range(2)]
    assert [s is not None for s in timing.samples["slow"]] == [True, False, False,
                                                               True, False, False]
    assert all(s is not None for s in timing.samples["fast"])
    assert all(len(v) == 6 for v in (*timing.samples.values(), *timing.first.values()))


def test_rounds_are_added_while_they_fit_in_the_timing_time():
    def config(seconds):
        return lambda inputs: time.sleep(seconds) or []

    runs = in_process({"a": config(0.002), "b": config(0.002), "slow": config(0.25)})
    # slow even if a 2 ms sleep takes 20 ms on a loaded machine
    timing = time_side_by_side(runs, singles=["a"], rounds=3, warmup=1, slow_factor=10,
                               slow_rounds=2, sample_s=0.0, min_s=0.2)
    # a round: a first call and one timed call of a and b, 8 ms or more; slow not counted
    assert timing.slow == {"slow"}
    assert 3 < timing.rounds <= 0.2 / 0.008
    assert all(len(v) == timing.rounds for v in timing.samples.values())
    assert sum(s is not None for s in timing.samples["slow"]) == 2
    # bounded by MAX_ROUNDS_FACTOR x rounds; none added without min_s
    assert time_side_by_side(runs, ["a"], 1, 1, 10, 1, 0.0, 10.0).rounds == MAX_ROUNDS_FACTOR
    assert time_side_by_side(runs, ["a"], 3, 1, 10, 1, 0.0).rounds == 3


def test_a_sample_is_the_steady_state_after_a_first_call():
    calls = []

    def config(name, first_s):
        def run(inputs):
            if first_s and calls[-1:] != [name]:  # right after another configuration: slow
                time.sleep(first_s)  # (never sleep(0): under load it can take milliseconds)
            calls.append(name)
            return []
        return run

    runs = {"cold": config("cold", 0.03), "warm": config("warm", 0.0),
            "other": config("other", 0.0)}
    timing = time_side_by_side(in_process(runs), singles=["warm"], rounds=4, warmup=1,
                               slow_factor=1e9, slow_rounds=1, sample_s=0.004)
    assert timing.calls["cold"] == 1 and timing.calls["warm"] > 10  # from warm-up calls
    assert all(f > 0.025 for f in timing.first["cold"])
    assert all(s < 0.01 for s in timing.samples["cold"])  # the first call is not in it
    burst = calls[6:]  # after warm-up and sizing: per round, a first call, then the burst
    first_round = [n for n in balanced_order(list(runs), 0)
                   for _ in range(1 + timing.calls[n])]
    assert burst[:len(first_round)] == first_round


def test_without_warm_up_the_sizing_call_sizes_the_samples():
    timing = time_side_by_side(in_process({"a": lambda inputs: []}), ["a"], rounds=2,
                               warmup=0, slow_factor=10, slow_rounds=1, sample_s=0.001)
    assert timing.calls["a"] > 1 and timing.warmup_seconds == {}
    assert all(s is not None for s in timing.samples["a"])


def test_a_failure_is_one_line():
    assert failure_reason(RuntimeError("boom\nat line 3")) == "RuntimeError: boom"
    assert failure_reason(Failed("crashed: signal 11 (SIGSEGV)")) == \
        "crashed: signal 11 (SIGSEGV)"
    assert failure_reason(ValueError()) == "ValueError"
    assert len(failure_reason(RuntimeError("x" * 400))) == 300


class FakeClock:
    """A clock that advances 1 ms a reading, and the CPU time of threads that spin (one
    CPU second a second) until `stop`, then idle."""

    def __init__(self, stop: float):
        self.now, self.stop = 0.0, stop

    def clock(self) -> float:
        self.now += 0.001
        return self.now

    def cpu(self) -> float:
        return min(self.now, self.stop)


def test_settle_waits_until_the_other_threads_have_been_quiet():
    fake = FakeClock(stop=0.05)
    waited = settle(quiet_s=0.02, most_s=1.0, clock=fake.clock, cpu=fake.cpu)
    assert waited == pytest.approx(0.07, abs=0.002)  # spinning 50 ms, then quiet 20 ms
    fake = FakeClock(stop=10.0)  # spins on: waits at most most_s
    assert settle(quiet_s=0.02, most_s=0.1, clock=fake.clock, cpu=fake.cpu) == \
        pytest.approx(0.1, abs=0.002)
    fake = FakeClock(stop=0.0)  # quiet from the start
    assert settle(quiet_s=0.02, most_s=1.0, clock=fake.clock, cpu=fake.cpu) == \
        pytest.approx(0.02, abs=0.002)
