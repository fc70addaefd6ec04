"""The refinement driver's budget (`collage_xdsl.refine.driver`) on a simulated clock: the
budget bounds the search, the auto budget grows with the start plan's load and timing,
a seed's share, an explicit budget kept, and the confirmation's reserve: a cut found as
the budget runs out is still compared with the start plan and kept."""

from __future__ import annotations

import pytest
from refine_helpers import BAD_START, chain_space, fused_bc_case, kernels, op_latency

from collage_xdsl.refine.driver import AUTO_CAP_S, AUTO_MIN_S, CUT_TRIALS, refine
from collage_xdsl.refine.moves import MoveSpace, make_plan
from collage_xdsl.refine.report import RefineOptions
from collage_xdsl.refine.scoring import Comparison, LatencyScorer, Scorer


def test_budget_bounds_the_search_and_zero_tries_nothing():
    now = [0.0]

    def latency(plan):
        now[0] += 1.0  # every measurement takes a second
        return op_latency(plan)

    space = chain_space()
    start = kernels(space.graph, *BAD_START)
    result = refine(space, start, latency, RefineOptions(budget_s=5, min_gain=0.0),
                    clock=lambda: now[0])
    assert result.stopped == "budget"
    assert len(result.tried()) <= 5 and result.seconds <= 6
    assert op_latency(result.plan) <= op_latency(make_plan(start, ""))
    nothing = refine(space, start, latency, RefineOptions(budget_s=0))
    assert nothing.trials == [] and not nothing.changed


def distinct_seeds(space: MoveSpace, start) -> int:
    return len({s.key for s in space.seeds() if not isinstance(s, str)} - {start.key})


@pytest.mark.parametrize("load_s, budget_s", [
    (20.0, None),        # (seeds + 3 + CUT_TRIALS) x 20 s
    (1.0, AUTO_MIN_S),   # quick plans keep the 30 s
    (200.0, AUTO_CAP_S),
])
def test_the_auto_budget_grows_with_the_start_plans_load(load_s, budget_s):
    now = [0.0]

    def latency(plan):
        now[0] += load_s  # each plan takes load_s to build, load and time
        return op_latency(plan)

    space = chain_space()
    start = kernels(space.graph, *BAD_START)
    seeds = distinct_seeds(space, make_plan(start, ""))
    assert seeds == 2
    result = refine(space, start, latency, RefineOptions(budget_s="auto", min_gain=0.0),
                    clock=lambda: now[0])
    assert result.load_s == load_s
    assert result.budget_s == (budget_s or (seeds + 3 + CUT_TRIALS) * load_s)
    assert result.to_json()["budget"] == "auto" and result.to_json()["load_s"] == load_s
    assert result.summary("main").endswith(f" s of an auto budget of {result.budget_s:.0f} s")
    compared = [t for t in result.trials if t.kind == "seed"]
    assert len(compared) == seeds  # every seed compared, however slow the plans
    assert all(t.status in ("accepted", "rejected") for t in compared)


def test_the_auto_budget_counts_the_timing_rounds_of_each_comparison():
    """Plans that compile fast but run slowly: the load alone would keep 30 s."""
    now = [0.0]

    class SlowRuns(LatencyScorer):
        def timing_seconds(self, run_s):
            return 100 * run_s

    def latency(plan):
        now[0] += 2.0  # a 2 s load
        return 0.5     # of a plan that runs 0.5 s: 50 s of timing per comparison

    space = chain_space()
    start = kernels(space.graph, *BAD_START)
    result = refine(space, start, SlowRuns(latency), RefineOptions(budget_s="auto"),
                    clock=lambda: now[0])
    assert result.budget_s == (2 + 3 + CUT_TRIALS) * (2.0 + 50.0)


def test_an_explicit_budget_is_not_extended():
    now = [0.0]

    def latency(plan):
        now[0] += 20.0
        return op_latency(plan)

    space = chain_space()
    start = kernels(space.graph, *BAD_START)
    result = refine(space, start, latency, RefineOptions(budget_s=30, min_gain=0.0),
                    clock=lambda: now[0])
    assert result.budget_s == 30 and result.load_s == 20 and result.stopped == "budget"
    assert [t.origin for t in result.tried()] == ["tvm alone"]  # the second seed is too late
    assert "auto" not in result.summary("main") and result.to_json()["budget"] == 30


def test_a_seed_over_its_share_of_the_budget_does_not_starve_the_others():
    now = [0.0]

    class Clocked(Scorer):
        """Compares by op_latency; the tvm-alone seed takes 1000 s (cut at the deadline)."""

        def compare(self, incumbent, challenger, deadline):
            takes = 1000.0 if challenger.origin == "tvm alone" else 1.0
            if now[0] + takes > deadline:
                now[0] = deadline
                return Comparison.failed("the budget ran out", unfinished=True)
            now[0] += takes
            a, b = op_latency(incumbent), op_latency(challenger)
            return Comparison(b / a, a, b)

    space = chain_space()
    start = kernels(space.graph, *BAD_START)
    result = refine(space, start, Clocked(), RefineOptions(budget_s=100),
                    clock=lambda: now[0])
    seeds = [t for t in result.trials if t.kind == "seed"]
    assert [t.origin for t in seeds][:2] == ["tvm alone", "test alone"]
    share = 2.0 * 100 / (2 + 2)  # SEED_SHARE x budget / (seeds + 2)
    assert seeds[0].status == "unfinished"
    assert seeds[0].reason == f"over its share of the budget ({share:.0f} s)"
    assert seeds[1].status in ("accepted", "rejected")  # the next seed is still compared
    assert all(t.status in ("accepted", "rejected", "skipped") for t in seeds[1:])


def test_the_search_leaves_the_confirmation_time_to_load_both_plans_again():
    # a comparison cut short at the search's deadline loses the worker: the confirmation
    # must load both plans again (2 x 12 s) and time them (5 s). A tenth of the budget
    # (10 s) left it unconfirmed; the search now stops at 100 - 29 = 71 s
    now = [0.0]

    class Reloading(Scorer):
        fresh = False

        def load(self, plan, deadline):
            now[0] += 12.0
            return Comparison(1.0, 1.0, 1.0)

        def timing_seconds(self, run_s):
            return 5.0

        def compare(self, incumbent, challenger, deadline):
            takes = 5.0 + (24.0 if self.fresh else 0.0)
            if now[0] + takes > deadline:
                now[0], self.fresh = deadline, True
                return Comparison.failed("the budget ran out", unfinished=True)
            now[0] += takes
            self.fresh = False
            a, b = op_latency(incumbent), op_latency(challenger)
            return Comparison(b / a, a, b)

    space = chain_space()
    start = kernels(space.graph, *BAD_START)
    result = refine(space, start, Reloading(), RefineOptions(budget_s=100, min_gain=0.0),
                    clock=lambda: now[0])
    assert result.stopped == "budget" and result.changed
    assert result.trials[-2].status == "unfinished" and result.trials[-2].at_s == 71
    confirm = result.trials[-1]
    assert confirm.kind == "confirm" and confirm.status == "confirmed"
    assert result.seconds == 100


def test_the_start_plans_load_gives_its_latency_when_no_comparison_finishes():
    class Unfinished(Scorer):
        def load(self, plan, deadline):
            return Comparison(1.0, 0.004, 0.004)

        def compare(self, incumbent, challenger, deadline):
            return Comparison.failed("the budget ran out", unfinished=True)

    space = chain_space()
    result = refine(space, kernels(space.graph, *BAD_START), Unfinished(),
                    RefineOptions(budget_s=10))
    assert result.plan is result.start and result.start_ms == result.final_ms == 4.0
    assert result.summary("main").startswith("collage-refine @main: start 4 ms,")


def test_a_cut_found_as_the_budget_runs_out_goes_to_the_confirmation():
    """As above, each new plan taking 1 s of an 8 s budget: the cut-only climb accepts
    the cut, the budget is spent before it is compared with the start plan in a climb,
    and the confirmation (its reserve) compares it and keeps it."""
    now = [0.0]
    _, space, start, latency = fused_bc_case(9.0, now)
    result = refine(space, start, latency, RefineOptions(budget_s=8, min_gain=0.0),
                    clock=lambda: now[0])
    kinds = [(t.kind, t.status) for t in result.trials]
    assert ("mutation", "accepted") in kinds and ("climb", "accepted") not in kinds
    assert kinds[-1] == ("confirm", "confirmed") and result.stopped == "budget"
    assert result.ratio == pytest.approx(9.0 / 15.0) and latency(result.plan) == 9.0


class SlowLatencyScorer(LatencyScorer):
    """A LatencyScorer whose every comparison takes 1 s of `now`; one that ends past its
    deadline is unfinished."""

    def __init__(self, latency, now: list[float]):
        super().__init__(latency)
        self.now = now

    def compare(self, incumbent, challenger, deadline):
        self.now[0] += 1.0
        if self.now[0] > deadline:
            return Comparison.failed("the budget ran out", unfinished=True)
        return super().compare(incumbent, challenger, deadline)


@pytest.mark.parametrize("budget_s", [b / 4 for b in range(29, 49)])
def test_a_cut_the_climbs_found_is_kept_wherever_the_budget_runs_out(budget_s):
    """The cut-only climb from tvm alone finds the cut (9 against the start plan's 15) in
    its third comparison; wherever the budget runs out after that, the confirmation
    compares the cut with the start plan and keeps it."""
    now = [0.0]
    _, space, start, latency = fused_bc_case(9.0)
    result = refine(space, start, SlowLatencyScorer(latency, now),
                    RefineOptions(budget_s=budget_s, min_gain=0.0), clock=lambda: now[0])
    kinds = [(t.kind, t.status) for t in result.trials]
    assert kinds[3] == ("mutation", "accepted") and kinds[-1] == ("confirm", "confirmed")
    assert result.ratio == pytest.approx(9.0 / 15.0) and latency(result.plan) == 9.0


def test_a_climb_whose_comparison_runs_out_of_budget_goes_to_the_confirmation():
    """VGG-19's case: the budget runs out half way through comparing the cut-only climb's
    result with the start plan; the climb's own comparisons say it is faster, so the
    confirmation decides, and keeps it."""
    now = [0.0]
    _, space, start, latency = fused_bc_case(9.0)
    result = refine(space, start, SlowLatencyScorer(latency, now),
                    RefineOptions(budget_s=10.5, min_gain=0.0), clock=lambda: now[0])
    kinds = [(t.kind, t.status) for t in result.trials]
    assert kinds[-2:] == [("climb", "unfinished"), ("confirm", "confirmed")]
    assert result.ratio == pytest.approx(9.0 / 15.0) and latency(result.plan) == 9.0
