"""End-to-end refinement: the Collage paper's graph-level search, scored by whole-function
latency, starting from the Dijkstra plan and never returning one measured slower.

    space = MoveSpace(graph, backends, configs)       # what each kernel may become
    result = refine(space, start_kernels, scorer, RefineOptions(budget_s="auto", seed=0))
    result.plan.kernels                               # the start plan unless one beat it
    print(result.summary("main")); json.dumps(result.to_json())

Why: the Dijkstra search (`collage_xdsl.core.search`) adds up kernel costs measured one kernel
at a time, so what only shows end to end (tensors handed between libraries, caches, a
graph compiler optimising across what the search cut into pieces) is invisible to it, and
its plan can run slower than one backend alone. Refinement measures whole plans.

The search is a seeded, two-start, first-improvement local search: (1+1) evolutionary
search from two parents (the paper evolves a population, which would cost a population's
worth of whole-model measurements per generation):

0. **Load** the start plan alone (built, compiled, run once): the time that takes is
   the unit of the auto budget (below); when it fails, the search stops.
1. **Seeds** (the baselines Collage must never lose to) are compared with the start plan:
   each enabled backend alone (`collage-assign{fusion=whole}`: the whole model as one
   kernel, as the benchmark runs a backend alone; skipped, with the reason, when it lacks
   an op), then, with tvm enabled, each BYOC backend's greedy plan
   (`collage-partition-for`). The best plan so far is the incumbent of the next; a seed
   replaces it when faster with confidence (the ratio below 1 and the upper end of its
   confidence interval below 1; no minimum gain: a baseline measured faster, even by 2%,
   is one Collage must not lose to). Seeds are ordered by kind, not by estimated cost: the
   partition pass's estimator has no cost for their kernels (a backend alone is one
   whole-model kernel, never a candidate), and getting one costs as much as the
   comparison. Alone seeds go first: one backend alone, a graph compiler's whole-model
   fusion, is what the start plan most often loses to. Within each kind, the backends
   carrying the most of the start plan (its kernels' estimated seconds, then ops) go
   first: the ones the cost model found fastest where it counted. In declared order,
   ZFNet-512's refinement compared untuned TVM alone (5x slower) and ONNX Runtime alone
   before OpenVINO alone and had no budget left to confirm it; in one benchmark run the
   search's mixed plan stayed, 1.04x of OpenVINO alone. Each seed trial records its
   place in that order. A seed's comparison may take `SEED_SHARE` x budget / (seeds + 2)
   seconds; one that takes longer (untuned TVM alone compiling and running a big model)
   is left unfinished and the next seed is compared.
2. **Climbs**: first, when the best plan is not the backend alone measured fastest (or,
   within `TIE` of it, the one whose cuts the cost database says gain the most:
   `_Search.alone_to_cut`), a climb of cuts only (below) from that seed. Its result
   replaces the best plan when compared faster with it (with confidence, as a seed: no
   minimum gain; each step of the climb gained `min_gain`, and one comparison of its
   result is not a pick among many; ZFNet-512's and VGG-19's OpenVINO cuts measured
   0.979x and 0.980x of the search's plan, upper ends 0.987 and 0.994, and were lost to
   the 3% minimum in bench24), or, when the budget is spent before or during that
   comparison, when faster by the comparisons along the climb, and the confirmation
   decides (ZFNet-512's cut OpenVINO measured 0.95x of the start plan and was lost for
   want of that last comparison; VGG-19's, 0.974x, when it ran out half way).
   Then from the best plan, then from the start plan (a fused single-backend seed
   rarely has a one-step mutation other than a cut that beats it, while the mixed start
   plan often does), mutations of the current plan (`collage_xdsl.refine.moves`: merges,
   cuts, reassignments, moves, splits; cuts after nodes where the start plan's kernels
   end or where the cost database says a cut gains, those first) are compared with it,
   in that order, each class shuffled by the seeded RNG. A mutation faster by more than
   `min_gain` (the ratio of its latency to the current plan's below 1 - min_gain, and
   the upper end of the ratio's confidence interval, when measured, below 1) replaces
   the current plan and the climb goes on from it; the climb ends when none is. The
   second climb's result replaces the best plan as the first climb's does. Every plan
   is tried once.
3. **Stop** when the budget is spent or the climbs ended.
4. **Confirm**: a result other than the start plan is compared with the start plan once
   more, with what the search leaves of the budget for it: a tenth, or, where the budget
   has room for it after comparing each seed once, the time to load both plans afresh
   and time them (twice the start plan's load plus its timing rounds): a search that
   ends in a comparison cut short loses the worker and what it had loaded (ZFNet-512's
   result, OpenVINO alone, stayed unconfirmed with a tenth of 30 s). When it is
   not faster there, the start plan is kept. A challenger that fails (compile error,
   crash, timeout, outputs that disagree) is rejected with its reason; when the plan it
   is compared with cannot be measured, the search stops. Outputs that differ only by
   rounding (the scorer says why: an ill-conditioned softmax,
   `collage_xdsl.runtime.agreement`) agree; the trial keeps the scorer's note.
5. **Alternatives** (`RefineOptions.alternatives` = N > 0): N measured plans are kept for
   the runtime to choose between (`collage_xdsl.runtime.selector`): which library is faster can
   change with the machine's state after refinement decided. When the result replaced
   the start plan, the start plan comes first, however much slower it measured: one
   time window may rank it wrongly by far (the MLP's one ONNX Runtime kernel measured
   35 us in refinement, where TVM alone took 29 us, and ran in 22 us minutes later, TVM
   in 28 us), and the runtime's probes of a slower plan cost at most its exploration
   share. Then the plans within `TIE` of the result (by latency relative to the start
   plan along each plan's latest comparisons, `_Search.vs_start`): seeds first, the
   baselines Collage must not lose to, so that the runtime can fall back on one when
   the machine's state favours it (the transformer encoder with
   tvm and ONNX Runtime kept the search's 17 kernels, ONNX Runtime alone measured
   1.001x of them, and ran 6% slower than the greedy plan in the benchmark); then the
   others; fastest first within each. The same `TIE` holds for plans faster than a
   millisecond: a wider one for them (60%, kept while whole-model kernels were timed
   apart from how the plan runs) let the runtime switch on noise: in two benchmark
   runs the MNIST CNN's and the MLP's runtime, choosing between ONNX Runtime alone and
   the other backends alone 17-53% slower, ran 1.005-1.10x of the search's plan alone.

Budget: `budget_s` wall seconds bound the whole refinement, the start plan's load
included. `budget_s="auto"` grows with the model: the start plan may load for up to
`AUTO_CAP_S`; then the budget becomes `(seeds + 3 + CUT_TRIALS) x` (the load's seconds +
the most a comparison's timing rounds take for plans as fast as it,
`Scorer.timing_seconds`): the start plan's load, every seed compared at least once, a seed
costing about a load plus its timing rounds, a few cuts of the fastest backend alone, and
the confirmation, about two of those; at least
`AUTO_MIN_S` and at most `AUTO_CAP_S`. A model whose plans build and compile in seconds
keeps 30 s; one whose plans take long (VGG19: 548 MB of weights exported and compiled per
plan) gets more instead of running out before the start plan is measured.

Scorers: `LatencyScorer` wraps `latency(plan) -> seconds` (tests; `ModelLatency` is the
deterministic model behind `collage-refine{scorer=mock}`). The measured scorer,
`collage_xdsl.refine.measured.MeasuredScorer`, times the outlined modules in a worker process.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence

from collage_xdsl.core.regions import Kernel
from collage_xdsl.refine.moves import CutPoints, MoveSpace, Plan, make_plan
from collage_xdsl.refine.report import AUTO, Refinement, RefineOptions, Trial, to_ms
from collage_xdsl.refine.scoring import LatencyScorer, Scorer

CONFIRM_SHARE = 0.1
"""The share of the budget the search leaves for the final confirmation at least."""

SEED_SHARE = 2.0
"""A seed's comparison may take this many times its share of the budget,
budget / (seeds + 2), so that one slow seed (untuned TVM alone) cannot starve the others."""
AUTO_MIN_S = 30.0
AUTO_CAP_S = 600.0
CUT_TRIALS = 4
"""Comparisons the auto budget has room for after the seeds: cuts of the fastest backend
alone (ZFNet-512's took 2-3 of them to reach OpenVINO cut after its first Gemm)."""
TIE = 0.15
"""A plan other than the start plan measured at most this much slower than the result
may be kept as an alternative: the swing between ONNX Runtime and OpenVINO seen when the
machine changes state."""


def refine(space: MoveSpace, start: Sequence[Kernel], scorer: Scorer | Callable[[Plan], float],
           options: RefineOptions = RefineOptions(),
           clock: Callable[[], float] = time.monotonic,
           gains: Mapping[tuple[int, str], float] | None = None) -> Refinement:
    """Search from the `start` kernels for a faster plan (see the module docstring).
    `scorer` is a `Scorer` (closed at the end) or a latency function of a plan (wrapped
    in `LatencyScorer`); `gains`: what the cost database says cuts gain
    (`collage_xdsl.refine.cuts`), offered first where at least `options.min_gain` (a cut
    saving less of a kernel saves less of the plan, so could not be accepted)."""
    worth = {cut: g for cut, g in (gains or {}).items() if g >= options.min_gain}
    search = _Search(space, scorer if isinstance(scorer, Scorer) else LatencyScorer(scorer),
                     options, clock, make_plan(start, "start"), CutPoints.of(start, worth))
    try:
        search.run()
    finally:
        search.scorer.close()
    return search.finish()


class _Search:
    """The state of one `refine` call."""

    def __init__(self, space: MoveSpace, scorer: Scorer, options: RefineOptions,
                 clock: Callable[[], float], start: Plan, cuts: CutPoints):
        self.space, self.scorer, self.options, self.clock = space, scorer, options, clock
        self.began = clock()
        self.result = Refinement(start, start, options)
        self.set_budget(AUTO_CAP_S if options.budget_s == AUTO else float(options.budget_s))
        self.tried = {start.key}
        self.latest: dict[frozenset, float] = {}
        """The latest measured latency of each plan."""
        self.measured: dict[frozenset, tuple[Plan, float, frozenset | None]] = {
            start.key: (start, 1.0, None)}
        """Every plan measured: its latency relative to the plan it was last compared with,
        and that plan's key (None for the start plan); see `vs_start`."""
        self.rng = random.Random(options.seed)
        self.cuts = cuts
        """The cuts the cost database says gain and where the start plan's kernels end
        (the cuts the search found worth making), which a mutation may make inside one
        kernel of another plan."""
        self.result.cut_gains = sorted(
            ((space.describe_node(n), b, g) for (n, b), g in cuts.gains.items()),
            key=lambda c: -c[2])

    def set_budget(self, seconds: float, confirm_s: float = 0.0, seeds_s: float = 0.0
                   ) -> None:
        """The budget and the search's deadline, which leaves the confirmation a tenth of
        the budget, or `confirm_s` when more and what comparing each seed once
        (`seeds_s`, after the load) leaves room for."""
        self.result.budget_s = seconds
        room = seconds - (self.result.load_s or 0.0) - seeds_s
        reserve = max(CONFIRM_SHARE * seconds, min(confirm_s, room))
        self.deadline = self.began + seconds - reserve

    def out_of_budget(self) -> bool:
        if not self.result.stopped and self.clock() >= self.deadline:
            self.result.stopped = "budget"
        return bool(self.result.stopped)

    def compare(self, incumbent: Plan, challenger: Plan, kind: str,
                order: int | None = None, share: float | None = None) -> bool:
        """Whether `challenger` is faster than `incumbent` with confidence, by the minimum
        gain for a mutation (a seed or a climb's result needs none); a failure of the
        incumbent or the budget running out stops the search. `order`: a seed's
        place in the seed order; `share`: the most seconds this comparison may take (a
        comparison cut short by it is unfinished, and the search goes on)."""
        self.tried.add(challenger.key)
        deadline = self.deadline if share is None else min(self.deadline,
                                                           self.clock() + share)
        c = self.scorer.compare(incumbent, challenger, deadline)
        record = Trial(challenger.origin, kind, "failed", len(challenger.kernels), c.ratio,
                       c.ratio_high, incumbent_ms=to_ms(c.incumbent_s),
                       challenger_ms=to_ms(c.challenger_s), reason=c.reason, note=c.note,
                       order=order, at_s=self.clock() - self.began)
        self.result.trials.append(record)
        if c.incumbent_s is not None:
            self.latest[incumbent.key] = c.incumbent_s
        if c.incumbent_failed:
            record.status = "incumbent failed"
            self.result.stopped = f"{incumbent.origin} could not be measured: {c.reason}"
            return False
        if c.unfinished:
            record.status = "unfinished"
            if deadline < self.deadline:
                record.reason = f"over its share of the budget ({share:.0f} s)"
            else:
                self.result.stopped = "budget"
            return False
        if c.reason:
            return False
        assert c.challenger_s is not None
        self.latest[challenger.key] = c.challenger_s
        self.measured[challenger.key] = (challenger, c.ratio, incumbent.key)
        record.vs_start = self.vs_start(challenger.key)
        gain = self.options.min_gain if kind == "mutation" else 0.0
        if c.ratio < 1 - gain and (c.ratio_high is None or c.ratio_high < 1):
            record.status = "accepted"
            return True
        record.status = "rejected"
        return False

    def vs_start(self, key: frozenset) -> float:
        """A measured plan's latency relative to the start plan's: the product of the
        ratios of its latest comparison, that of the plan it was compared with, and so on
        back to the start plan. A plan compared again (a climb's result against the best
        plan, the confirmation against the start plan) takes the plans measured against
        it along: on ZFNet-512 (bench24) OpenVINO alone cut once measured 0.979x of the
        start plan directly; a further cut, 0.994x of it, was kept as an alternative at
        0.919x along the climb's comparisons, where the direct one gives 0.973x."""
        ratio = 1.0
        while key is not None:
            _, step, key = self.measured[key]
            ratio *= step
        return ratio

    def climb(self, point: Plan, cuts_only: bool = False) -> Plan:
        """First-improvement hill climbing from `point` until no mutation (no cut, with
        `cuts_only`) is faster."""
        current = point
        while not self.out_of_budget():
            for challenger in self.space.mutations(current, self.rng, self.cuts, cuts_only):
                if challenger.key in self.tried:
                    continue
                if self.out_of_budget():
                    return current
                if self.compare(current, challenger, "mutation"):
                    current = challenger
                    break
                if self.result.stopped:
                    return current
            else:
                return current
        return current

    def beats(self, top: Plan, best: Plan) -> bool:
        """Whether a climb's result `top` replaces the best plan: compared faster with it,
        or, when the budget runs out before or during that comparison, faster by the
        comparisons along the climbs (`vs_start`), and the confirmation's reserve decides.
        VGG-19's OpenVINO cut (0.974x of the start plan along its climb) was lost when its
        comparison with the start plan ran out of budget half way."""
        if not self.out_of_budget() and self.compare(best, top, "climb"):
            return True
        return (self.result.stopped == "budget"
                and self.vs_start(top.key) < self.vs_start(best.key))

    def alone_to_cut(self, seeds: Sequence[Plan]) -> Plan | None:
        """The backend alone the cut-only climb starts from: of those measured within
        `TIE` of the fastest, the one whose latency less its largest cut gain (`cuts`:
        the share of a kernel the database says a cut saves, an optimistic bound on the
        whole) is the least. On VGG-19 ONNX Runtime alone ran 3% ahead of OpenVINO alone
        (bench21) and its cuts gain nothing; OpenVINO's cut after fc6 ran 0.97x."""
        alone = [s for s in seeds if len(s.kernels) == 1 and s.key in self.measured]
        if not alone:
            return None
        fastest = min(self.vs_start(s.key) for s in alone)
        near = [s for s in alone if self.vs_start(s.key) <= fastest * (1 + TIE)]
        return min(near, key=lambda s: self.vs_start(s.key)
                   * (1 - self.cuts.largest_gain(s.kernels[0].backend)))

    def load_start(self, seeds: int) -> bool:
        """Load the start plan; with the auto budget, size the budget for `seeds` seeds by
        the time that took. False (the search stopped) when it failed."""
        start = self.result.start
        loading = self.clock()
        c = self.scorer.load(start, self.deadline)
        self.result.load_s = self.clock() - loading
        if c.reason:
            self.result.stopped = ("budget" if c.unfinished else
                                   f"{start.origin} could not be measured: {c.reason}")
            return False
        self.latest[start.key] = c.incumbent_s  # one run; comparisons replace it
        timing_s = self.scorer.timing_seconds(c.incumbent_s or 0.0)
        per_plan = self.result.load_s + timing_s
        budget = self.result.budget_s
        if self.options.budget_s == AUTO:
            budget = min(AUTO_CAP_S, max(AUTO_MIN_S, (seeds + 3 + CUT_TRIALS) * per_plan))
        self.set_budget(budget, 2 * self.result.load_s + timing_s, seeds * per_plan)
        return True

    def run(self) -> None:
        """The start plan's load, seeds against the start plan, then climbs from the best
        plan and from the start plan (mutations of one fused seed rarely reach a mixed plan
        that beats it, the start plan's often do); the best of the climbs wins."""
        start = self.result.start
        if not start.kernels or self.options.budget_s == 0:
            return
        seeds = self.space.seeds(start)
        plans = [s for s in seeds if not isinstance(s, str) and s.key != start.key
                 and self.space.acyclic(s.kernels)]
        distinct = len({s.key for s in plans})
        if not self.load_start(distinct):
            return
        best = start
        share = SEED_SHARE * self.result.budget_s / (distinct + 2)
        for order, seed in enumerate(seeds, 1):
            if isinstance(seed, str):
                origin, _, why = seed.partition(": ")
                self.result.trials.append(Trial(origin, "seed", "skipped", reason=why,
                                                order=order))
            elif seed.key not in self.tried and self.space.acyclic(seed.kernels):
                if self.out_of_budget():
                    break
                if self.compare(best, seed, "seed", order, share):
                    best = seed
        alone = self.alone_to_cut(plans)
        if alone is not None and alone.key != best.key and not self.out_of_budget():
            top = self.climb(alone, cuts_only=True)
            if top is not alone and self.beats(top, best):
                best = top
        for point in [best] if best is start else [best, start]:
            if self.out_of_budget():
                break
            top = self.climb(point)
            if point is best or top is not point and self.beats(top, best):
                best = top
        if not self.result.stopped:
            self.result.stopped = "exhausted"
        self.result.plan = best
        self.result.ratio = self.vs_start(best.key)
        if best is not start:
            self.confirm(best)

    def confirm(self, best: Plan) -> None:
        """Compare `best` with the start plan once more; keep the start plan unless faster."""
        start = self.result.start
        c = self.scorer.compare(start, best, max(self.clock(),
                                                 self.began + self.result.budget_s))
        record = Trial(f"{best.origin} against the start plan", "confirm", "confirmed",
                       len(best.kernels), c.ratio, c.ratio_high, c.ratio,
                       to_ms(c.incumbent_s), to_ms(c.challenger_s), c.reason, c.note)
        if c.reason:
            record.status = "unconfirmed"
        else:
            self.latest[start.key] = c.incumbent_s  # type: ignore[assignment]
            self.latest[best.key] = c.challenger_s  # type: ignore[assignment]
            self.measured[best.key] = (best, c.ratio, start.key)
            self.result.ratio = c.ratio
            if c.ratio >= 1.0:
                record.status = "not faster: kept the start plan"
                self.result.plan, self.result.ratio = start, 1.0
        record.at_s = self.clock() - self.began
        self.result.trials.append(record)

    def finish(self) -> Refinement:
        result = self.result
        seeds = {t.origin for t in result.trials if t.kind == "seed"}

        def kept(key: frozenset, ratio: float) -> bool:
            return key == result.start.key or ratio <= result.ratio * (1 + TIE)

        measured = ((plan, self.vs_start(key)) for key, (plan, _, _) in self.measured.items()
                    if key != result.plan.key)
        near = sorted((m for m in measured if kept(m[0].key, m[1])),
                      key=lambda m: (m[0].key != result.start.key, m[0].origin not in seeds,
                                     m[1]))
        if result.load_s is not None and self.latest:
            result.alternatives = near[:self.options.alternatives]
        result.start_ms = to_ms(self.latest.get(result.start.key))
        result.final_ms = to_ms(self.latest.get(result.plan.key))
        result.seconds = self.clock() - self.began
        return result
