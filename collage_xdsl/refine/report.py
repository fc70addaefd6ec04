"""What refinement did: each trial, the outcome, its one-line summary and its table.

    print(result.summary("main"))
    print(format_trials(result.to_json()))
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from collage_xdsl.errors import CollageError
from collage_xdsl.refine.moves import Plan

AUTO = "auto"
"""`RefineOptions.budget_s` that grows with the model (`collage_xdsl.refine.driver`)."""

STOPS = {"budget": "budget spent", "no move left": "no move left",
         "fruitless": "fruitless moves", "converged": "converged"}
"""`Refinement.stopped` when the search did not fail, and how the report says it: the
budget ran out; every seed and mutation offered had been compared before the climbs
measured one; the climbs ended with kinds of mutation given up after fruitless ones
(`collage_xdsl.refine.driver.fruitless_limit`); the climbs ended where every mutation
was compared and none was faster."""


class RefineError(CollageError):
    """Bad refinement options."""


@dataclass(frozen=True)
class RefineOptions:
    """`budget_s`: wall seconds for the whole refinement (0: nothing is tried), or
    `"auto"` (sized by the driver, `docs/refinement.md`, "Budget"); `seed`: the RNG seed
    ordering the mutations; `min_gain`: how much faster (relative) a mutation must be to
    replace the incumbent (a seed, a baseline Collage must not lose to, and a climb's
    result, each of whose steps gained that much, only need to be faster with
    confidence)."""

    budget_s: float | str = 30.0
    seed: int = 0
    min_gain: float = 0.03
    alternatives: int = 0
    """How many near-tied plans to keep besides the result (step 5)."""

    def __post_init__(self) -> None:
        b = self.budget_s
        if b != AUTO and (isinstance(b, str) or not b >= 0 or math.isinf(b)):
            raise RefineError(f"collage-refine: budget must be auto or a finite number of "
                              f"seconds >= 0, got {b!r}")
        if not 0 <= self.min_gain < 1:
            raise RefineError(f"collage-refine: min-gain must be in [0, 1), got {self.min_gain}")
        if self.alternatives < 0:
            raise RefineError(f"collage-refine: alternatives must be >= 0, got "
                              f"{self.alternatives}")


@dataclass
class Trial:
    """One challenger and what became of it: accepted, rejected (not faster by the
    minimum gain), failed (with the reason), unfinished (out of budget), or skipped (a seed
    that could not be made)."""

    origin: str
    kind: str
    """seed, mutation, climb (the second climb's result against the best plan) or confirm."""
    status: str
    kernels: int = 0
    ratio: float | None = None
    ratio_high: float | None = None
    vs_start: float | None = None
    """The challenger's latency relative to the start plan's when the trial ended: the
    product of the ratios along the comparisons that lead from the start plan to it
    (`_Search.vs_start`; a later comparison of a plan on that path can change it)."""
    incumbent_ms: float | None = None
    challenger_ms: float | None = None
    reason: str = ""
    note: str = ""
    """Why outputs that differ from the start plan's still agree (`Comparison.note`)."""
    order: int | None = None
    """A seed's place in the order seeds are compared in (1 first)."""
    at_s: float = 0.0
    """Seconds into the refinement when the trial ended."""

    def to_json(self) -> dict:
        return {
            "origin": self.origin, "kind": self.kind, "status": self.status,
            "kernels": self.kernels,
            "ratio": _finite(self.ratio), "ratio_high": _finite(self.ratio_high),
            "vs_start": _finite(self.vs_start),
            "incumbent_ms": self.incumbent_ms, "challenger_ms": self.challenger_ms,
            "reason": self.reason, "note": self.note, "order": self.order,
            "at_s": round(self.at_s, 3),
        }


@dataclass
class Refinement:
    """The outcome of `refine`."""

    start: Plan
    plan: Plan
    """The result: `start` unless a plan was measured faster."""
    options: RefineOptions
    trials: list[Trial] = field(default_factory=list)
    stopped: str = ""
    """Why the search ended (`STOPS`), or why the plan a challenger was compared with could
    not be measured."""
    untried: int = 0
    """Mutations left untried where the climbs ended, their kind given up after fruitless
    ones (`stopped` fruitless)."""
    seconds: float = 0.0
    budget_s: float = 0.0
    """The budget in seconds: `options.budget_s`, or what the auto budget came to."""
    moves: int = 0
    """The seeds and mutations the auto budget has room for (0 for a budget in seconds)."""
    load_s: float | None = None
    """Seconds the start plan took to load (build, compile, run once)."""
    start_ms: float | None = None
    final_ms: float | None = None
    ratio: float = 1.0
    """The result's latency relative to the start plan's (confirmed when measured)."""
    alternatives: list[tuple[Plan, float]] = field(default_factory=list)
    """Plans kept for the runtime, with their latency relative to the start plan's, in
    step 5's order."""
    cut_gains: list[tuple[str, str, float]] = field(default_factory=list)
    """The cuts the cost database says gain, as (node, backend, share), the most first."""

    def why(self) -> str:
        """Why the search ended, in words: `stopped`, with the mutations left untried."""
        return _why(self.stopped, self.untried)

    @property
    def changed(self) -> bool:
        return self.plan.key != self.start.key

    def tried(self) -> list[Trial]:
        """The challengers compared (seeds and mutations)."""
        return [t for t in self.trials if t.kind in ("seed", "mutation")
                and t.status not in ("skipped", "incumbent failed")]

    def best_seed(self) -> Trial | None:
        """The fastest seed measured (relative to the start plan)."""
        seeds = [t for t in self.trials if t.kind == "seed" and t.vs_start is not None]
        return min(seeds, key=lambda t: t.vs_start, default=None)  # type: ignore

    def summary(self, function: str) -> str:
        """One line: start, best seed, variants tried, final latency and ratio."""
        def ms(value: float | None) -> str:
            return "?" if value is None else f"{value:.3g} ms"

        tried = self.tried()
        counts = {s: sum(t.status == s for t in tried) for s in ("accepted", "failed")}
        rounding = sum(bool(t.note) for t in tried)
        seed = self.best_seed()
        best = f"{seed.origin} ({seed.vs_start:.3f}x)" if seed else "none measured"
        auto = (f" of an auto budget of {self.budget_s:.0f} s for {self.moves} moves"
                if self.options.budget_s == AUTO else "")
        return (f"collage-refine @{function}: start {ms(self.start_ms)}, best seed {best}, "
                f"{len(tried)} variants tried ({counts['accepted']} accepted, "
                f"{counts['failed']} failed"
                + (f", {rounding} differing only by rounding" if rounding else "")
                + f"), final {ms(self.final_ms)} "
                f"({self.ratio:.3f}x start, {len(self.plan.kernels)} kernel"
                f"{'s' * (len(self.plan.kernels) != 1)}), "
                + "".join(f"alternative {p.origin} ({r:.3f}x start), "
                          for p, r in self.alternatives)
                + f"stopped: {self.why()}, {self.seconds:.1f} s{auto}")

    def to_json(self) -> dict:
        def plan(p: Plan) -> dict:
            return {"origin": p.origin, "kernels": len(p.kernels), "backends": p.backends()}

        return {
            "budget": self.options.budget_s, "budget_s": round(self.budget_s, 3),
            "moves": self.moves,
            "load_s": None if self.load_s is None else round(self.load_s, 3),
            "seed": self.options.seed,
            "min_gain": self.options.min_gain, "seconds": round(self.seconds, 3),
            "stopped": self.stopped, "untried": self.untried,
            "start": plan(self.start), "final": plan(self.plan),
            "start_ms": self.start_ms, "final_ms": self.final_ms, "ratio": self.ratio,
            "changed": self.changed, "trials": [t.to_json() for t in self.trials],
            "alternatives": [{**plan(p), "vs_start": r} for p, r in self.alternatives],
            "cut_gains": [{"after": n, "backend": b, "gain": round(g, 4)}
                          for n, b, g in self.cut_gains],
        }


def format_trials(report: dict) -> str:
    """The trials of one function's refinement report (`Refinement.to_json` plus
    ``"function"``, as `collage-refine{report=...}` writes it) as a table: what was tried,
    in order, and what became of it."""
    def number(x: float | None, unit: str = "x") -> str:
        return "-" if x is None else f"{x:.3f}{unit}"

    final = report["final"]
    lines = [f"@{report['function']} refined: {report['start']['kernels']} kernels -> "
             f"{final['kernels']} ({', '.join(f'{b} {n}' for b, n in final['backends'].items())}"
             f"), {number(report['ratio'])} of the search's plan; stopped: "
             f"{_why(report['stopped'], report.get('untried', 0))} after "
             f"{report['seconds']:.1f} s of {report['budget_s']:.0f} s",
             f"  {'kind':<9} {'status':<17} {'kernels':>7} {'ratio':>8} {'vs start':>9}  "
             f"origin / reason"]
    if report.get("cut_gains"):
        lines.insert(1, "  cuts the cost database says gain: " + ", ".join(
            f"{c['backend']} after {c['after']} ({c['gain']:.2f})" for c in report["cut_gains"]))
    for t in report["trials"]:
        why = "; ".join(x for x in (t["reason"], t["note"]) if x)
        lines.append(f"  {t['kind']:<9} {t['status']:<17} {t['kernels']:>7} "
                     f"{number(t['ratio']):>8} {number(t['vs_start']):>9}  {t['origin']}"
                     + (f": {why}" if why else ""))
    return "\n".join(lines) + "\n"


def _why(stopped: str, untried: int) -> str:
    """`stopped` in words (`STOPS`), with the mutations given up when any."""
    return STOPS.get(stopped, stopped) + (f" ({untried} left untried)"
                                          if stopped == "fruitless" else "")


def _finite(value: float | None) -> float | None:
    """`value` for JSON: None for an infinite (failed) ratio."""
    return None if value is None or math.isinf(value) else value


def to_ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e3
