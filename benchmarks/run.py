"""The benchmark suite: every model in every configuration, in one interleaved run.

    python benchmarks/run.py [--models mnist_cnn,mlp,...] [--rounds 30] [--work DIR]
                             [--timing-s S] [--out DIR] [--refine-budget S|auto]
                             [--additivity-rounds N]
                             [--threads N] [--max-depth N]
                             [--warmup N] [--sample-ms MS] [--slow-factor F]
                             [--slow-rounds N] [--seed N]
                             [--tvm-tune none|metaschedule]

Models (`benchmarks/bench_models.py`; default all twelve): `mnist_cnn`, `mlp`, `transformer_encoder`
and the nine light model-zoo models of the onnx package; `modern`: those of examples/modern_zoo.py;
`all`: both. Written to `WORK/models/<name>.onnx` (default WORK: `benchmarks/work`).

Per model:

1. Cost database `WORK/costs/<name>.sqlite` (measured estimator, all three backends).
   When it does not exist, the model is partitioned once cold and the time is recorded
   in `WORK/costs/<name>.cold.json` (`{"seconds": ...}`); a later run reads it from there
   ("n/a" when a database exists without it). Then it is partitioned again, warm: the
   search and measurement time with a warm database. Every partition here searches
   (`replan`): the plan the database keeps for the model is not followed.
2. Configurations (`benchmarks/bench_configs.py`), each built and run in a process of
   its own (`collage_xdsl.runtime.configurations`), all with `--threads` threads, each
   as its users run it (a library alone with its own defaults, ONNX Runtime's threads
   spinning on; a plan with `policy_for_plan`: one library's defaults, or the shared
   policy when it mixes libraries): `onnxruntime`, `openvino`, `tvm` and `iree` alone
   (TVM tuned when `--tvm-tune metaschedule`), the greedy BYOC baselines
   `pf-onnxruntime` and `pf-openvino`, `collage-search` (the Dijkstra plan from the warm
   database) and `collage` (the same plus `--refine-budget` of end-to-end refinement,
   default auto; skipped when that is 0; near-tied plans refinement kept are chosen
   between at run time, `collage_xdsl.runtime.selector`, and the choices are noted), and
   `collage-tvm+onnxruntime` /
   `collage-tvm+openvino` (Collage, refined, with tvm and one BYOC backend, compared
   with that backend's greedy baseline; `--no-pairs` skips them). Each configuration's
   outputs are checked against ONNX Runtime's before timing; a configuration that fails
   to build, disagrees or crashes is reported as failed with the reason, and the others
   go on.
3. Timing (`collage_xdsl.measure.side_by_side`): warm-up, then at least `--rounds`
   rounds, more while they fit in `--timing-s` seconds (default 60: a round's ratio
   scatters by 5-28% here, so fast models, whose rounds are short, get hundreds), one
   block of each configuration per round in a balanced order: its steady-state
   latency (a first call, then the mean of enough calls to last `--sample-ms`, default
   50 ms: a 5 ms sample of a millisecond model is one or two calls right after the other
   configurations ran), after which its process waits until its threads are quiet, so
   that the next block starts on idle cores; the first call is kept as well ("first
   call" ratios). Configurations more than `--slow-factor` times slower than the fastest
   single backend in warm-up are timed in `--slow-rounds` rounds only (marked `*`).
4. Statistics (`benchmarks/bench_stats.py`): the best single backend is the single
   backend with the lowest median; every configuration's per-round ratio to it
   (t_config[r] / t_best[r], two blocks of one round), their median and its 95%
   order-statistic confidence interval (binomial, distribution-free, deterministic).
5. Additive error of the `collage-search` and `collage` plans, two ways
   (`_additivity`): the search's view, the estimate from the cost database (the called
   kernels' `collage.cost` plus the boundary model the partition used,
   `collage_xdsl.core.outline.outlined_estimate`) against the plan's run measured now; and
   side by side (`collage_xdsl.runtime.additivity`, `--additivity-rounds`): every kernel call
   of the run timed alone now plus the same boundary model, against the run, in the
   same rounds. The first mixes the model's error with the machine's drift since the
   database was filled (tens of percent here); the second is the model's own error.

Output: the tables on stdout (latency medians; ratios with CIs, partition times and
additive errors; the geomean of each non-single configuration's ratio over the models
and how many models are above 1.02x), and in `--out` (default `WORK/results`):
`results.json` (everything, with threads, rounds, host, library versions, date, the
command line and the commit; each refined configuration's partition record carries
refinement's report, every trial in order: `collage_xdsl.refine.driver.Refinement.to_json`),
`table.md` (the same tables in Markdown) and `ratios.png`. Runs of a few models each
make one table with `benchmarks/merge.py`.

Bad options (an unknown model, a work directory that cannot be written) are one
`error:` line and exit status 2.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from dataclasses import asdict, replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.backends.tvm.options import MODES, tuning_backend_options
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.side_by_side import time_side_by_side

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_models import (  # noqa: E402  (benchmarks/ is not a package)
    MODELS,
    cost_db_files,
    display_name,
    model_file,
    parse_models,
)
from bench_stats import median, median_ci, per_round_ratios  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_WORK = ROOT / "benchmarks" / "work"
PACKAGES = ("collage-xdsl", "xdsl", "apache-tvm", "onnxruntime", "openvino", "onnx", "numpy")
TIMING = ("a process per configuration, each as its users run it; one block of each per "
          "round, in a balanced order, each process quiet before the next block")
"""How configurations are timed (`results.json`'s `timing`: runs timed otherwise do not
merge)."""


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# One model
# ---------------------------------------------------------------------------


def _cold_seconds(cold_json: Path) -> float | None:
    try:
        return float(json.loads(cold_json.read_text())["seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _partition_record(partitioned) -> dict:
    from collage_xdsl.tools.options import kernel_summary

    functions = partitioned.report["functions"]
    return {
        "seconds": partitioned.seconds,
        "search_seconds": sum(f["search_seconds"] for f in functions),
        "estimates": sum(f["estimates"] for f in functions),
        "cost_db_hits": sum(f["cost_db_hits"] for f in functions),
        "kernels": kernel_summary(partitioned),
        "mixing_ratio": _mixing_ratio(functions),
        "refinement": partitioned.refinement and partitioned.refinement["functions"],
    }


def _mixing_ratio(functions: list[dict]) -> float | None:
    """The search's mixed totals over the cheapest one-backend totals (the explain
    report's `alone`), summed over the functions; None when one is not known."""
    mixed, alone = 0.0, 0.0
    for f in functions:
        known = [a["total_cost"] for a in f["alone"] if a["total_cost"] is not None]
        if f["total_cost"] is None or not known:
            return None
        mixed, alone = mixed + f["total_cost"], alone + min(known)
    return mixed / alone if alone > 0 else None


def bench_model(name: str, args: argparse.Namespace, policy: ThreadPolicy) -> dict:
    """The JSON record of one model; a failure is recorded in it, never raised."""
    from collage_xdsl.measure.side_by_side import failure_reason
    from collage_xdsl.runtime.executable import release_cached_kernels

    entry: dict = {"model": name, "display": display_name(name), "status": "ok",
                   "reason": None, "notes": [], "configs": {}, "partition": {},
                   "additive_error": {}, "vs_greedy": {}}
    try:
        _bench_model(name, args, policy, entry)
    except Exception as e:  # one model failing must not end the run
        entry["status"], entry["reason"] = "failed", failure_reason(e)
        progress(f"{name}: failed: {entry['reason']}")
    finally:
        release_cached_kernels()
    return entry


def _bench_model(name: str, args: argparse.Namespace, policy: ThreadPolicy,
                 entry: dict) -> None:
    from bench_configs import (
        BASELINES,
        PAIRS,
        SINGLES,
        partition_for,
        plan,
        whole_model,
    )

    from collage_xdsl.planner.options import PartitionOptions
    from collage_xdsl.planner.pipeline import partition_module
    from collage_xdsl.runtime.configurations import Configurations
    from collage_xdsl.tools.model import load_model, random_inputs

    path = model_file(name, args.work)
    model = load_model(path)
    inputs = random_inputs(model, args.seed)
    db, cold_json = cost_db_files(name, args.work)
    tuning = tuning_backend_options(args.tvm_tune or "none")
    options = PartitionOptions(estimator="measured", cost_db=str(db),
                               tvm_max_depth=args.max_depth, byoc_max_depth=args.max_depth,
                               refine_alternatives=2, backend_options=tuning, replan=True)
    backend_options = options.backend_map()
    partition = entry["partition"]
    plans = {}

    def collage_search():
        if not db.exists():
            progress(f"{name}: partitioning cold into {db}")
            db.parent.mkdir(parents=True, exist_ok=True)
            cold = partition_module(model.module, options)
            cold_json.write_text(json.dumps({"seconds": cold.seconds}) + "\n")
        partition["cold_seconds"] = _cold_seconds(cold_json)
        plans["collage-search"] = partition_module(model.module, options)
        partition["warm"] = _partition_record(plans["collage-search"])
        return plan(plans["collage-search"].module, backend_options)

    def collage():
        plans["collage"] = partition_module(model.module,
                                            replace(options, refine_budget=args.refine_budget))
        partition["refined"] = _partition_record(plans["collage"])
        return plan(plans["collage"].module, backend_options)  # alternatives chosen at run time

    def pair(config: str):
        backends = ("tvm", PAIRS[config].removeprefix("pf-"))
        plans[config] = partition_module(model.module, replace(
            options, backends=backends, refine_budget=args.refine_budget))
        partition[config] = _partition_record(plans[config])
        return plan(plans[config].module, backend_options)

    builders = {
        **{b: (lambda b=b: whole_model(b, model, backend_options)) for b in SINGLES},
        **{b: (lambda b=b: plan(partition_for(model.module, b.removeprefix("pf-")),
                                backend_options)) for b in BASELINES},
        "collage-search": collage_search,
        "collage": collage,
        **{c: (lambda c=c: pair(c)) for c in PAIRS},
    }
    with Configurations(inputs, policy.threads) as processes:
        _start(name, args, builders, processes, entry["configs"])
        _check_outputs(model, inputs, policy, processes, entry["notes"])
        progress(f"{name}: timing {', '.join(processes.running)} (at least {args.rounds} "
                 f"rounds, {args.timing_s:g} s)")
        timing = time_side_by_side(processes.running, SINGLES, args.rounds, args.warmup,
                                   args.slow_factor, args.slow_rounds, args.sample_ms / 1e3,
                                   args.timing_s)
        for config, reason in timing.failures.items():
            processes.fail(config, reason)
        stats = {c: p.selector_stats() for c, p in processes.running.items()}
        policies = {c: p.policy for c, p in processes.running.items()}
    _timing_record(entry, timing, policies, processes.failures)
    for config, selector in stats.items():
        if selector is not None:
            entry["configs"][config]["alternatives"] = selector
            entry["notes"].append(selector_note(config, selector))
    for config, greedy in PAIRS.items():
        if config in policies and greedy in policies:
            ci = median_ci(per_round_ratios(timing.samples[config], timing.samples[greedy]))
            entry["vs_greedy"][config] = {"greedy": greedy, "median": ci.median, "low": ci.low,
                                          "high": ci.high, "coverage": ci.coverage}
    for config in ("collage-search", "collage"):
        if config in policies and config not in timing.slow:
            progress(f"{name}: checking the additive model of {config}")
            entry["additive_error"][config] = _additivity(plans[config], inputs, policy,
                                                          args.additivity_rounds)


def _start(name: str, args: argparse.Namespace, builders: dict, processes, configs: dict
           ) -> None:
    """Build each configuration (its plan here, the rest in a process of its own); record
    the skipped and the failed in `configs`. The reference failing fails the model."""
    from bench_configs import CONFIGS, PAIRS, REFERENCE

    from collage_xdsl.measure.side_by_side import failure_reason

    for config in CONFIGS:
        if config == "collage" and args.refine_budget == 0:
            configs[config] = {"status": "skipped", "reason": "refinement off (--refine-budget 0)"}
            continue
        if config in PAIRS and not args.pairs:
            configs[config] = {"status": "skipped", "reason": "--no-pairs"}
            continue
        progress(f"{name}: building {config}")
        try:
            spec = builders[config]()
        except Exception as e:  # a backend that cannot take the model fails its config only
            processes.failures[config] = failure_reason(e)
        else:
            processes.start(config, spec)
        if config == REFERENCE and config in processes.failures:
            raise CollageError(f"{REFERENCE} (the reference) failed: "
                               f"{processes.failures[config]}")


def _check_outputs(model, inputs, policy: ThreadPolicy, processes, notes: list[str]) -> None:
    """Each configuration's outputs against the reference's; one that disagrees or fails
    is stopped."""
    from bench_configs import REFERENCE, OutputCheck

    from collage_xdsl.measure.side_by_side import Failed

    try:
        reference = processes.running[REFERENCE].outputs()
    except Failed as e:
        raise CollageError(f"{REFERENCE} (the reference) failed: {e}") from None
    check = OutputCheck(model, inputs, reference, policy)
    for config in [c for c in processes.running if c != REFERENCE]:
        try:
            problem, config_notes = check.compare(processes.running[config].outputs())
        except Failed as e:
            problem, config_notes = str(e), []
        notes += [f"{config}: {note}" for note in config_notes]
        if problem is not None:
            processes.fail(config, problem)


def _timing_record(entry: dict, timing, policies: dict[str, ThreadPolicy],
                   failures: dict[str, str]) -> None:
    """Each configuration's figures (or failure) in `entry`, ratios against the best
    single backend, in the order of `CONFIGS`."""
    from bench_configs import CONFIGS, SINGLES

    configs = entry["configs"]
    entry["rounds"] = timing.rounds
    for config, reason in failures.items():
        configs[config] = {"status": "failed", "reason": reason}
    medians = {c: median([s for s in timing.samples[c] if s is not None]) for c in policies}
    best = min((c for c in SINGLES if c in policies and c not in timing.slow),
               key=medians.get)
    entry["best_single"] = best
    for config in policies:
        samples = timing.samples[config]
        timed = [s for s in samples if s is not None]
        ratios = per_round_ratios(samples, timing.samples[best])
        ci = median_ci(ratios)
        first = [s for s in timing.first[config] if s is not None]
        first_ci = median_ci(per_round_ratios(timing.first[config], timing.first[best]))
        configs[config] = {
            "status": "ok", "reason": None, "slow": config in timing.slow,
            "rounds": len(timed),
            "warmup_ms": timing.warmup_seconds[config] * 1e3,
            "median_ms": medians[config] * 1e3,
            "p25_ms": float(np.percentile(timed, 25)) * 1e3,
            "p75_ms": float(np.percentile(timed, 75)) * 1e3,
            "samples_ms": [None if s is None else s * 1e3 for s in samples],
            "ratio": {"median": ci.median, "low": ci.low, "high": ci.high,
                      "coverage": ci.coverage, "n": ci.n, "per_round": ratios},
            "calls": timing.calls[config],
            "first_median_ms": median(first) * 1e3,
            "first_ratio": {"median": first_ci.median, "low": first_ci.low,
                            "high": first_ci.high},
            "settle_ms": median([s for s in timing.settle[config] if s is not None]) * 1e3,
            "policy": asdict(policies[config]),
        }
    entry["configs"] = {c: configs[c] for c in CONFIGS if c in configs}


def selector_note(config: str, stats: dict) -> str:
    """The note on what the runtime's plan selector did (`PlanSelector.stats`)."""
    return (f"{config}: chose between {len(stats['calls'])} plans at run time "
            f"(calls {'/'.join(map(str, stats['calls']))}, {stats['probes']} probes, "
            f"{stats['switches']} switches)"
            + "".join(f"; {name} dropped at run time: {why}"
                      for name, why in stats["dropped"].items()))


def _additivity(plan, inputs: list[np.ndarray], policy: ThreadPolicy, rounds: int) -> dict:
    """The additive error of an outlined plan, twice: the search's view (its kernels'
    costs from the cost database plus the boundary model) against the run measured now,
    and `collage_xdsl.runtime.additivity`'s side-by-side check (the kernels timed alone now)."""
    from collage_xdsl.runtime.additivity import check_additivity

    check = check_additivity(plan.executable(threads=policy, adapt=False), inputs,
                             plan.transitions(), rounds=rounds)
    estimate = check.estimate.total
    known = bool(np.isfinite(estimate))
    return {
        "estimate_ms": estimate * 1e3 if known else None,
        "measured_ms": check.run_s * 1e3,
        "error": (estimate - check.run_s) / check.run_s if known else None,
        "estimate": "cost-database kernel costs + boundary model",
        "side_by_side": check.to_json(),
    }


# ---------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------


def _commit() -> str | None:
    """The checkout's commit, `+` when tracked files have uncommitted changes; None
    outside a git checkout."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+" if dirty else "")


def _versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for package in PACKAGES:
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "not installed"
    return found


def _writable(directory: Path, what: str) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CollageError(f"{what} {directory}: cannot create it: {e.strerror}") from None
    if not os.access(directory, os.W_OK | os.X_OK):
        raise CollageError(f"{what} {directory}: not writable")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchmarks/run.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=",".join(MODELS), metavar="M1,M2,...",
                   help="models, `modern` or `all` (default the twelve: " + ", ".join(MODELS) + ")")
    p.add_argument("--rounds", type=int, default=30,
                   help="timed rounds at least (default 30)")
    p.add_argument("--timing-s", type=float, default=60.0, metavar="S",
                   help="more rounds while they fit in S seconds a model, by the warm-up "
                        "calls (default 60; at most 20x --rounds; 0: --rounds exactly)")
    p.add_argument("--warmup", type=int, default=2,
                   help="warm-up calls of each configuration (default 2, at least 1)")
    p.add_argument("--sample-ms", type=float, default=50.0, metavar="MS",
                   help="a sample is a first call, then the mean of enough calls to last "
                        "MS milliseconds (default 50; 0: one call after the first)")
    p.add_argument("--work", type=Path, default=DEFAULT_WORK, metavar="DIR",
                   help="models and cost databases (default benchmarks/work)")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help="results.json, table.md, ratios.png (default WORK/results)")
    p.add_argument("--refine-budget", default="auto", metavar="S|auto",
                   help="end-to-end refinement for `collage`: seconds or auto (default; "
                        "1 s to 600 s by the moves worth trying and the time a plan "
                        "takes to load and time, docs/refinement.md); 0 skips that "
                        "configuration")
    p.add_argument("--additivity-rounds", type=int, default=15, metavar="N",
                   help="rounds of the additive-model check of the collage plans "
                        "(default 15)")
    p.add_argument("--no-pairs", dest="pairs", action="store_false",
                   help="skip Collage with tvm + one BYOC backend against its greedy baseline")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="threads of every backend (default COLLAGE_THREADS or the CPUs "
                        "this process may use)")
    p.add_argument("--max-depth", type=int, default=8, metavar="N",
                   help="max depth of candidate kernels (default 8, as the cost databases "
                        "were populated)")
    p.add_argument("--slow-factor", type=float, default=10.0, metavar="F",
                   help="a configuration more than F times slower than the fastest single "
                        "backend in warm-up is timed in --slow-rounds rounds (default 10)")
    p.add_argument("--slow-rounds", type=int, default=3, metavar="N",
                   help="rounds a slow configuration is timed in (default 3)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--tvm-tune", choices=MODES,
                   help="TVM schedule tuning (default none: the loop-nest schedule)")
    return p


def _validate(args: argparse.Namespace) -> None:
    if args.rounds < 1 or args.warmup < 1 or args.slow_rounds < 1:
        raise CollageError("--rounds, --warmup and --slow-rounds must be at least 1")
    if not 0 <= args.timing_s < float("inf"):
        raise CollageError(f"--timing-s must be a number of seconds >= 0, got "
                           f"{args.timing_s}")
    if not 0 <= args.sample_ms < float("inf"):
        raise CollageError(f"--sample-ms must be a number of milliseconds >= 0, got "
                           f"{args.sample_ms}")
    if args.slow_factor <= 1:
        raise CollageError(f"--slow-factor must be above 1, got {args.slow_factor}")
    if args.additivity_rounds < 1:
        raise CollageError(f"--additivity-rounds must be at least 1, got "
                           f"{args.additivity_rounds}")
    if args.refine_budget != "auto":
        try:
            args.refine_budget = float(args.refine_budget)
        except ValueError:
            args.refine_budget = -1.0
        if not 0 <= args.refine_budget < float("inf"):
            raise CollageError("--refine-budget must be auto or a number of seconds >= 0")
    if args.max_depth < 1:
        raise CollageError(f"--max-depth must be at least 1, got {args.max_depth}")
    if args.threads is not None and args.threads < 1:
        raise CollageError(f"--threads must be at least 1, got {args.threads}")
    args.models = parse_models(args.models)
    args.out = args.out or args.work / "results"
    _writable(args.work, "--work")
    _writable(args.out, "--out")


def run(args: argparse.Namespace, argv: list[str]) -> dict:
    """Every model of `args.models`; the results JSON (also written to `args.out`)."""
    from bench_report import summarize, write_report

    from collage_xdsl.measure.cost_db import host_description

    policy = ThreadPolicy() if args.threads is None else ThreadPolicy(args.threads)
    os.environ["COLLAGE_THREADS"] = str(policy.threads)  # measurement and refinement workers
    results = {
        "command": ["python", "benchmarks/run.py", *argv],
        "commit": _commit(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "host": host_description(),
        "threads": policy.threads,
        "rounds": args.rounds,
        "timing_s": args.timing_s,
        "warmup": args.warmup,
        "sample_ms": args.sample_ms,
        "slow_factor": args.slow_factor,
        "slow_rounds": args.slow_rounds,
        "refine_budget": args.refine_budget,
        "max_depth": args.max_depth,
        "seed": args.seed,
        "tvm_tune": args.tvm_tune or "none",
        "versions": _versions(),
        "timing": TIMING,
        "confidence_interval": "95% order-statistic (binomial) interval of the median "
                               "of per-round ratios",
        "models": {},
    }
    for name in args.models:
        results["models"][name] = bench_model(name, args, policy)
    results["summary"] = summarize(results["models"])
    write_report(results, args.out)
    return results


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    try:
        _validate(args)
    except CollageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        run(args, argv)
    except CollageError as e:  # one model's failure is a note in the results, not this
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
