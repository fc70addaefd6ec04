"""The refinement driver's budget (`collage_xdsl.refine.driver`) on a simulated clock: the
budget bounds the search, the auto budget follows the start plan's load and timing and the
moves worth trying, the search stops before its budget when it converged, ran out of
moves or found only fruitless ones, a seed's share, an explicit budget kept, and the
confirmation's reserve: a cut found as the budget runs out is still compared with the
start plan and kept."""

from __future__ import annotations

import pytest
from ir_helpers import main_of, parse
from refine_helpers import (
    BAD_START,
    CONFIGS,
    chain_space,
    fused_bc_case,
    kernels,
    op_latency,
)

from collage_xdsl.backends import get_backend
from collage_xdsl.backends.test import make_test_backend
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.refine.driver import AUTO_CAP_S, AUTO_MIN_S, FRUITLESS_MIN, refine
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


BAD_START_MOVES = 2 + 8 + 6
"""The moves worth trying from BAD_START: 2 distinct seeds; of its 6 merges and 5
reassignments 4 each (`fruitless_limit`; its 8 moves of one-op kernels are merges); tvm
alone's 4 cuts (where BAD_START's kernels end) and 2 splits."""


class Timed(LatencyScorer):
    """A latency model whose timing rounds take `rounds` runs of a plan."""

    def __init__(self, latency, rounds: float):
        super().__init__(latency)
        self.rounds = rounds

    def timing_seconds(self, run_s):
        return self.rounds * run_s


def auto_refine(load_s: float, run_s: float, rounds: float = 100):
    """BAD_START refined with the auto budget, each plan taking `load_s` to load and running
    in about `run_s` (op_latency scaled)."""
    now = [0.0]

    def latency(plan):
        now[0] += load_s
        return run_s * op_latency(plan) / op_latency(make_plan(start, ""))

    space = chain_space()
    start = kernels(space.graph, *BAD_START)
    return refine(space, start, Timed(latency, rounds),
                  RefineOptions(budget_s="auto", min_gain=0.0), clock=lambda: now[0])


@pytest.mark.parametrize("load_s, run_s, budget_s", [
    (0.01, 20e-6, AUTO_MIN_S),   # a tiny model: its plans load in 10 ms and run in 20 us
    (1.0, 1e-3, None),           # (moves + 3) x (1 s + 100 x 1 ms)
    (20.0, 0.5, AUTO_CAP_S),     # a slow model
])
def test_the_auto_budget_follows_the_model(load_s, run_s, budget_s):
    result = auto_refine(load_s, run_s)
    assert result.load_s == load_s and result.moves == BAD_START_MOVES
    per_plan = load_s + 100 * run_s
    assert result.budget_s == pytest.approx(budget_s or (BAD_START_MOVES + 3) * per_plan)
    assert result.to_json()["budget"] == "auto" and result.to_json()["load_s"] == load_s
    assert result.to_json()["moves"] == BAD_START_MOVES
    assert result.summary("main").endswith(
        f" s of an auto budget of {result.budget_s:.0f} s for {BAD_START_MOVES} moves")
    compared = [t for t in result.trials if t.kind == "seed"]
    assert len(compared) == 2  # every seed compared, however slow the plans
    assert all(t.status in ("accepted", "rejected") for t in compared)


def test_a_tiny_models_auto_budget_is_far_below_a_slow_ones_and_both_stop_in_it():
    tiny, slow = auto_refine(0.01, 20e-6), auto_refine(20.0, 0.5)
    assert tiny.budget_s <= 1.0 < 20 * tiny.budget_s <= 30.0 < slow.budget_s == AUTO_CAP_S
    assert tiny.stopped != "budget" and tiny.seconds < tiny.budget_s
    assert tiny.plan.key == slow.plan.key  # the same search, however long it may take


def test_the_auto_budget_counts_the_timing_rounds_of_each_comparison():
    """Plans that compile fast but run slowly: 2 s loads, 5 s of timing per comparison."""
    timed = auto_refine(2.0, 0.05)
    assert timed.budget_s == pytest.approx((BAD_START_MOVES + 3) * (2.0 + 5.0))
    assert auto_refine(2.0, 0.05, rounds=0).budget_s == pytest.approx(
        (BAD_START_MOVES + 3) * 2.0)


def clocked(latency, now: list[float]):
    """`latency`, each plan measured taking a second of `now`."""
    def timed(plan):
        now[0] += 1.0
        return latency(plan)
    return timed


def test_a_converged_search_stops_before_its_budget_and_says_why():
    now = [0.0]
    space = chain_space()
    optimum = kernels(space.graph, ("a", "tvm"), ("bcd", "test"), ("e", "tvm"))
    result = refine(space, optimum, clocked(op_latency, now),
                    RefineOptions(budget_s=600, min_gain=0.0), clock=lambda: now[0])
    assert result.stopped == "converged" and not result.changed
    assert result.seconds == len(result.tried()) + 1 < 600  # the start plan's load, each plan
    assert result.summary("main").endswith(f"stopped: converged, {result.seconds:.1f} s")
    assert result.to_json()["stopped"] == "converged" and result.to_json()["untried"] == 0


def slower_than_the_start(start, merges: float = 1.2):
    """Every plan 1.2x the start plan, merges `merges`x."""
    key = make_plan(start, "").key

    def latency(plan):
        return 1.0 if plan.key == key else merges if plan.origin.startswith("merge ") \
            else 1.2
    return latency


def test_fruitless_moves_end_each_kind_and_the_search_before_its_budget():
    """Nothing beats BAD_START: the seeds and tvm alone's 4 cuts are compared, then 4 of
    its 6 merges and 4 of its 5 reassignments (its moves of one-op kernels are merges),
    and the search stops."""
    now = [0.0]
    space = chain_space()
    start = kernels(space.graph, *BAD_START)
    result = refine(space, start, clocked(slower_than_the_start(start), now),
                    RefineOptions(budget_s=600), clock=lambda: now[0])
    kinds = [t.origin.split()[0] for t in result.trials if t.kind == "mutation"]
    assert {k: kinds.count(k) for k in kinds} == {"cut": 4, "merge": FRUITLESS_MIN,
                                                   "reassign": FRUITLESS_MIN}
    assert result.stopped == "fruitless" and result.untried == 2 + 1
    assert result.seconds < 600 and not result.changed
    assert result.summary("main").endswith(
        f"stopped: fruitless moves (3 left untried), {result.seconds:.1f} s")
    assert result.to_json()["untried"] == 3


class Noisy(LatencyScorer):
    """A latency model whose ratios are noise within 0.5%."""

    precision = 0.005


@pytest.mark.parametrize("merges, tried", [(0.99, 6), (0.997, FRUITLESS_MIN)])
def test_a_mutation_faster_beyond_the_noise_keeps_its_kind_going(merges, tried):
    """BAD_START's merges measure 1% faster than it: short of the minimum gain (3%), but
    beyond the scorer's noise (0.5%), so all 6 are compared; within it (0.3%), 4."""
    space = chain_space()
    start = kernels(space.graph, *BAD_START)
    result = refine(space, start, Noisy(slower_than_the_start(start, merges)),
                    RefineOptions(budget_s=600, min_gain=0.03))
    compared = [t for t in result.trials if t.origin.startswith("merge ")]
    assert len(compared) == tried and all(t.status == "rejected" for t in compared)
    assert result.stopped == "fruitless"


def test_a_plan_with_nothing_left_to_try_stops_at_once():
    """One op on tvm: the test backend alone is the only other plan, seed and
    reassignment at once; the climbs find nothing untried."""
    graph = DataflowGraph(main_of(parse(
        "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %a = collage.relu %x : tensor<2xf32>\n"
        "  func.return %a : tensor<2xf32>\n}")))
    space = MoveSpace(graph, [get_backend("tvm"), make_test_backend(ops=("relu",))], CONFIGS)
    result = refine(space, [space.seeds()[0].kernels[0]], lambda p: 1.0,
                    RefineOptions(budget_s="auto"))
    assert [(t.origin, t.kind) for t in result.tried()] == [("test alone", "seed")]
    assert result.stopped == "no move left" and result.moves == 1
    assert "stopped: no move left, " in result.summary("main")


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
