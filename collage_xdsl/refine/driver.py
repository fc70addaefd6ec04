"""End-to-end refinement: the Collage paper's graph-level search, scored by whole-function
latency, starting from the search's plan and never returning one measured slower.

    space = MoveSpace(graph, backends, configs)       # what each kernel may become
    result = refine(space, start_kernels, scorer, RefineOptions(budget_s="auto"))
    result.plan.kernels                               # the start plan unless one beat it

Steps: load the start plan; compare the seeds (each backend alone, each greedy BYOC plan)
with it; climb by first-improvement mutations (`collage_xdsl.refine.moves`) from the best
seed's cuts, the best plan and the start plan, giving up a kind of mutation at a plan after
`fruitless_limit` fruitless ones in a row; confirm a new result against the start plan;
keep near-tied measured plans as alternatives. The budget, its auto sizing, when the
search stops and why each step is there: `docs/refinement.md`.
"""
from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from collage_xdsl.core.regions import Kernel
from collage_xdsl.refine.cuts import CutPoints
from collage_xdsl.refine.moves import MoveSpace, Plan, make_plan
from collage_xdsl.refine.report import AUTO, Refinement, RefineOptions, Trial, to_ms
from collage_xdsl.refine.scoring import LatencyScorer, Scorer

CONFIRM_SHARE = 0.1
"""The share of the budget the search leaves for the final confirmation at least."""

SEED_SHARE = 2.0
"""A seed's comparison may take this many times its share of the budget,
budget / (seeds + 2), so that one slow seed cannot starve the others."""
AUTO_MIN_S = 1.0
"""The auto budget at least: room for the driver's own work (making mutations), which the
cost of a variant leaves out and which is all a latency model's refinement costs."""
AUTO_CAP_S = 600.0
"""The auto budget at most."""
FRUITLESS_MIN = 4
"""Fruitless mutations of one kind in a row that end the kind at a plan, at least."""
FRUITLESS_SHARE = 0.5
"""... or this share of the kind's untried mutations there, when more
(`docs/refinement.md`, "When it stops")."""
TIE = 0.15
"""A plan other than the start plan measured at most this much slower than the result
may be kept as an alternative (`docs/refinement.md`)."""


def fruitless_limit(moves: int) -> int:
    """How many fruitless mutations of one kind in a row end that kind at a plan where it
    has `moves` untried: 4 of up to 8 (all of 4 or fewer), 5 of 9 or 10, 50 of 100."""
    return max(FRUITLESS_MIN, math.ceil(FRUITLESS_SHARE * moves))


def distinct(plans: Iterable[Plan]) -> list[Plan]:
    """`plans` without repeats: the first plan of each key."""
    found: dict[frozenset, Plan] = {}
    for plan in plans:
        found.setdefault(plan.key, plan)
    return list(found.values())


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
        self.given_up: dict[tuple[frozenset, str], set[frozenset]] = {}
        """(plan, kind of mutation) given up after fruitless ones: the plans left untried."""
        self.ends: set[tuple[frozenset, str]] = set()
        """Those of `given_up` at a plan where a climb ended."""
        self.climbed = 0
        """Mutations compared in climbs."""

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
        back to the start plan (a plan compared again takes the plans measured against it
        along)."""
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
            better = self.improve(current, cuts_only)
            if better is None:
                return current
            current = better
        return current

    def improve(self, plan: Plan, cuts_only: bool) -> Plan | None:
        """The first mutation of `plan` faster by the minimum gain, kind by kind (merges,
        cuts, ...; a plan two kinds make is the first's); a kind is given up after
        `fruitless_limit` of its untried mutations in a row gained nothing beyond the
        scorer's noise. None when none is faster (the kinds given up go to `ends`) or the
        search stopped."""
        ends: set[tuple[frozenset, str]] = set()
        offered: set[frozenset] = set()
        for kind, moves in self.space.mutation_kinds(plan, self.rng, self.cuts, cuts_only):
            untried = distinct(m for m in moves if m.key not in self.tried
                               and m.key not in offered)
            offered |= {m.key for m in untried}
            if (plan.key, kind) in self.given_up:
                ends.add((plan.key, kind))
                continue
            limit, fruitless = fruitless_limit(len(untried)), 0
            for n, challenger in enumerate(untried):
                if fruitless == limit:
                    self.given_up[plan.key, kind] = {m.key for m in untried[n:]}
                    ends.add((plan.key, kind))
                    break
                if self.out_of_budget():
                    return None
                self.climbed += 1
                if self.compare(plan, challenger, "mutation"):
                    return challenger
                if self.result.stopped:
                    return None
                fruitless = 0 if self.gained(self.result.trials[-1]) else fruitless + 1
        self.ends |= ends
        return None

    def gained(self, trial: Trial) -> bool:
        """Whether a compared plan was accepted or measured faster beyond the scorer's noise
        (a failure gained nothing)."""
        return trial.status == "accepted" or (
            trial.ratio is not None and trial.ratio < 1 - self.scorer.precision)

    def moves_worth_trying(self, start: Plan, seeds: Sequence[Plan]) -> int:
        """The comparisons the auto budget has room for: each seed, and the mutations of
        the start plan and of the backend alone with the most that one fruitless step of a
        climb compares (each kind up to its `fruitless_limit`), seeds aside."""
        def worth(plan: Plan) -> int:
            total, known = 0, {start.key} | {s.key for s in seeds}
            for _, moves in self.space.mutation_kinds(plan, random.Random(0), self.cuts):
                untried = {m.key for m in moves} - known
                known |= untried
                total += min(len(untried), fruitless_limit(len(untried)))
            return total

        alone = [worth(s) for s in seeds if len(s.kernels) == 1]
        return len(seeds) + worth(start) + max(alone, default=0)

    def beats(self, top: Plan, best: Plan) -> bool:
        """Whether a climb's result `top` replaces the best plan: compared faster with it,
        or, when the budget runs out before or during that comparison, faster by the
        comparisons along the climbs (`vs_start`), and the confirmation's reserve decides."""
        if not self.out_of_budget() and self.compare(best, top, "climb"):
            return True
        return (self.result.stopped == "budget"
                and self.vs_start(top.key) < self.vs_start(best.key))

    def alone_to_cut(self, seeds: Sequence[Plan]) -> Plan | None:
        """The backend alone the cut-only climb starts from: of those measured within
        `TIE` of the fastest, the one whose latency less its largest cut gain (`cuts`:
        the share of a kernel the database says a cut saves, an optimistic bound on the
        whole) is the least."""
        alone = [s for s in seeds if len(s.kernels) == 1 and s.key in self.measured]
        if not alone:
            return None
        fastest = min(self.vs_start(s.key) for s in alone)
        near = [s for s in alone if self.vs_start(s.key) <= fastest * (1 + TIE)]
        return min(near, key=lambda s: self.vs_start(s.key)
                   * (1 - self.cuts.largest_gain(s.kernels[0].backend)))

    def load_start(self, seeds: Sequence[Plan]) -> bool:
        """Load the start plan; with the auto budget, size the budget by the time that took
        and the moves worth trying from it and the `seeds` (distinct, start aside). False
        (the search stopped) when it failed."""
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
            self.result.moves = self.moves_worth_trying(start, seeds)
            budget = min(AUTO_CAP_S, max(AUTO_MIN_S, (self.result.moves + 3) * per_plan))
        self.set_budget(budget, 2 * self.result.load_s + timing_s, len(seeds) * per_plan)
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
        if not self.load_start(distinct(plans)):
            return
        best = start
        share = SEED_SHARE * self.result.budget_s / (len(distinct(plans)) + 2)
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
        self.result.untried = len(set().union(*(self.given_up[e] for e in self.ends))
                                  - self.tried)
        if not self.result.stopped:
            self.result.stopped = ("fruitless" if self.result.untried else
                                   "converged" if self.climbed else "no move left")
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
