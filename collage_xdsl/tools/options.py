"""The options the `collage` commands share: how to partition (`--backends`, the
estimator and its cost database, refinement, TVM tuning), and the plan's summary line.

    add_partition_options(parser, backends_default="tvm,onnxruntime,openvino")
    options = partition_options(args)       # a planner.options.PartitionOptions
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter

from collage_xdsl.backends.tvm.options import (
    MODES,
    TuningOptions,
    tuning_backend_options,
)
from collage_xdsl.core.outline import kernel_calls
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.cluster import LOCAL, check_measure_on
from collage_xdsl.measure.cost_db import default_path
from collage_xdsl.planner.options import (
    DEFAULT_BACKENDS,
    PartitionOptions,
    parse_backends,
)
from collage_xdsl.planner.pipeline import Partitioned, partition_module
from collage_xdsl.planner.plan import print_refinements
from collage_xdsl.rewrite.batch_norm import fold_batch_norms
from collage_xdsl.rewrite.composites import form_pattern_composites, parse_patterns
from collage_xdsl.rewrite.constants import fold_constants
from collage_xdsl.tools.model import LoadedModel, load_model
from collage_xdsl.tools.progress import Progress

DEFAULT_ESTIMATOR = "measured"
"""Kernels compiled and timed in worker processes (`collage_xdsl.measure.pool`)."""
DEFAULT_REFINE_BUDGET = "auto"
"""The refinement budget with the measured estimator unless told otherwise."""
BACKENDS_DEFAULT = ",".join(DEFAULT_BACKENDS)


def add_partition_options(p: argparse.ArgumentParser, *, backends_default: str | None) -> None:
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress lines on stderr while partitioning")
    p.add_argument("--input-shape", action="append", metavar="NAME:D1,D2,...",
                   help="fix the symbolic dimensions of an .onnx model's input (repeatable)")
    p.add_argument("--backends", default=backends_default, metavar="B1,B2,...",
                   help="backends to partition over (" + (
                       f"default {backends_default}" if backends_default else
                       "when given, the model is partitioned and run on them") + ")")
    p.add_argument("--estimator", choices=("mock", "measured"), default=DEFAULT_ESTIMATOR,
                   help=f"how kernels are costed (default {DEFAULT_ESTIMATOR})")
    p.add_argument("--cost-db", metavar="PATH",
                   help="SQLite cost database of measured costs (default: the user's cache "
                        "directory); only with --estimator measured")
    p.add_argument("--measure-on", default=LOCAL, metavar="local|ray:auto|ray://HOST:PORT",
                   help="where kernels are measured: worker processes here (local, the "
                        "default) or a Ray cluster (ray:auto: the one `ray start` runs here; "
                        "needs the cluster extra; docs/measurement.md)")
    p.add_argument("--mock-costs", default="", metavar="B:SECONDS,...",
                   help="per-op base cost of each backend for --estimator mock")
    p.add_argument("--max-depth", type=int, default=8, metavar="N",
                   help="max depth of candidate kernels (default 8; 0: unbounded)")
    p.add_argument("--no-max-regions", dest="max_regions", action="store_false",
                   help="no candidates deeper than --max-depth: without each backend's "
                        "maximal supported regions")
    p.add_argument("--fusion-spec", default="", metavar="FILE",
                   help="TOML file extending or replacing the backends' candidate rules "
                        "(docs/fusion_spec.md)")
    p.add_argument("--launch-penalty", type=float, default=0.0, metavar="SECONDS",
                   help="cost added per kernel launch (default 0)")
    p.add_argument("--refine-budget", metavar="SECONDS|auto",
                   help="wall seconds for refining the partition by measured whole-model "
                        "latency, or auto (room to compare each move worth trying once at "
                        "what the start plan took to load and time, 1 s to 600 s; it stops "
                        "earlier when nothing pays, docs/refinement.md); "
                        f"never returns a slower one (default {DEFAULT_REFINE_BUDGET} with "
                        "--estimator measured, 0 with mock; 0 = off)")
    p.add_argument("--alternatives", type=int, default=2, metavar="N",
                   help="near-tied plans refinement keeps, within 15%% of its result, for "
                        "the runtime to choose between by measured latency (default 2; "
                        "0 = off)")
    p.add_argument("--pin", action="append", default=[], metavar="SELECTOR=BACKEND",
                   help="run the matching ops on BACKEND; SELECTOR is op:KIND (op:softmax) "
                        "or a glob over node names (conv.*) (repeatable)")
    p.add_argument("--forbid", action="append", default=[], metavar="SELECTOR=B1,B2",
                   help="never run the matching ops on these backends (repeatable)")
    p.add_argument("--min-kernel-ops", type=int, default=0, metavar="N",
                   help="offer no BYOC kernel of fewer than N ops (default 0: any)")
    p.add_argument("--min-kernel-seconds", type=float, default=0.0, metavar="SECONDS",
                   help="offer no BYOC kernel estimated faster than this (default 0: any)")
    p.add_argument("--no-fallback", action="store_true",
                   help="fail, listing them, when ops no enabled BYOC backend accepts would "
                        "fall back to the native backend (tvm)")
    p.add_argument("--fold", action="store_true",
                   help="before partitioning, fold batch norms and constant Mul/Add chains "
                        "into the weights (collage-fold-batch-norm, collage-fold-constants)")
    p.add_argument("--composite", action="append", default=[], metavar="LABEL=OP+OP",
                   help="before partitioning, make each match of this op chain one "
                        "primitive function that kernels keep whole (repeatable; "
                        "collage-composite-patterns)")
    p.add_argument("--plan", metavar="PLAN.json",
                   help="follow this saved plan instead of searching (docs/control.md)")
    p.add_argument("--measure-all", dest="prune", action="store_false",
                   help="measure every candidate kernel, not only those predicted to "
                        "possibly be on a plan within 2%% of the best")
    p.add_argument("--replan", action="store_true",
                   help="search again even when the cost database keeps a plan for this "
                        "model and these options")
    p.add_argument("--save-plan", metavar="PLAN.json",
                   help="write the final plan, one entry per node, to this file")
    p.add_argument("--tvm-tune", choices=MODES, default="none",
                   help="TVM schedule tuning (default none: the loop-nest schedule)")
    p.add_argument("--tvm-tune-trials", type=int, default=TuningOptions.trials, metavar="N",
                   help="schedule samples per TVM task for --tvm-tune (default %(default)s)")
    p.add_argument("--tvm-tune-db", metavar="DIR",
                   help="tuning database directory (default: the user's cache directory)")


def partition_options(args: argparse.Namespace) -> PartitionOptions:
    """The partition options of the command line (`--backends` must be set)."""
    if args.estimator == "mock":
        if args.cost_db:
            raise CollageError("--cost-db keeps measured costs; it needs --estimator measured")
        if args.measure_on != LOCAL:
            raise CollageError("--measure-on measures kernels; it needs --estimator measured")
        cost_db = None
    else:
        cost_db = args.cost_db or str(default_path())
    text = args.refine_budget
    if text is None:
        refine: float | str = DEFAULT_REFINE_BUDGET if args.estimator == "measured" else 0.0
    elif text == "auto":
        refine = "auto"
    else:
        try:
            refine = float(text)
        except ValueError:
            refine = math.nan
        if not 0 <= refine < math.inf:
            raise CollageError(f"--refine-budget must be auto or a number of seconds >= 0, "
                               f"got {text}")
    if args.alternatives < 0:
        raise CollageError(f"--alternatives must be >= 0, got {args.alternatives}")
    if args.max_depth < 0:
        raise CollageError(f"--max-depth must be >= 0 (0: unbounded), got {args.max_depth}")
    backends = parse_backends(args.backends)
    check_measure_on(args.measure_on, "--measure-on")
    return PartitionOptions(backends=backends, estimator=args.estimator, cost_db=cost_db,
                            measure_on=args.measure_on,
                            mock_costs=args.mock_costs, launch_penalty=args.launch_penalty,
                            tvm_max_depth=args.max_depth, byoc_max_depth=args.max_depth,
                            tvm_max_regions=args.max_regions,
                            fusion_spec=args.fusion_spec,
                            byoc_max_regions=args.max_regions, refine_budget=refine,
                            refine_alternatives=args.alternatives,
                            backend_options=backend_options(args, backends),
                            pin=";".join(args.pin), forbid=";".join(args.forbid),
                            min_kernel_ops=args.min_kernel_ops,
                            min_kernel_seconds=args.min_kernel_seconds,
                            no_fallback=args.no_fallback, plan_file=args.plan,
                            save_plan=args.save_plan, replan=args.replan, prune=args.prune)


def backend_options(args: argparse.Namespace, backends: tuple[str, ...]) -> str:
    """The `backend-options` the flags ask for: TVM's schedule tuning (`--tvm-tune`)."""
    if "tvm" not in backends:
        return ""
    return tuning_backend_options(args.tvm_tune, args.tvm_tune_trials, args.tvm_tune_db)


def kernel_summary(partitioned: Partitioned) -> str:
    """`plan_line` of a partition."""
    return plan_line(partitioned.module, partitioned.report, partitioned.refinement,
                     partitioned.seconds)


def plan_line(module, report: dict, refinement: dict | None, seconds: float) -> str:
    """`N kernels (tvm 2, openvino 1), estimated 1.2 ms, partitioned in 0.4 s` (kernel
    calls of the outlined `module`; `, M distinct` when calls share a kernel), with
    `, refined @main to 0.84x of the search's plan` when refinement changed the plan (the
    estimate, from the explain `report`, then says `for the search's plan`) and `, 1
    alternative plan(s) of @main kept` when it kept near-tied plans."""
    calls = kernel_calls(module)
    per_backend = Counter(f.attributes["collage.backend"].data for f in calls)
    distinct = len({f.sym_name.data for f in calls})
    shared = f", {distinct} distinct" if distinct < len(calls) else ""
    estimates = [r["estimated_seconds"] for r in report["functions"]]
    total = math.nan if None in estimates else sum(estimates)
    backends = ", ".join(f"{b} {n}" for b, n in sorted(per_backend.items()))
    functions = (refinement or {}).get("functions", [])
    refined = "".join(f", refined @{r['function']} to {r['ratio']:.2f}x of the search's plan"
                      for r in functions if r["changed"])
    kept = "".join(f", {len(r['alternatives'])} alternative plan(s) of @{r['function']} kept"
                   for r in functions if r.get("alternatives"))
    whose = " for the search's plan" if refined else ""
    kernels = f"{len(calls)} kernel{'s' * (len(calls) != 1)}"
    return (f"{kernels} ({backends}){shared}, estimated {duration(total)}{whose}"
            f"{refined}{kept}, partitioned in {seconds:.2f} s")


def duration(seconds: float) -> str:
    """`1.23 s`, `4.56 ms` or `7.89 us` (`unknown` for NaN)."""
    if math.isnan(seconds):
        return "unknown"
    for unit, scale in (("s", 1.0), ("ms", 1e-3)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-6:.3g} us"


SHOWN_KERNELS = 6
"""A plan of more kernels is summarized by backend."""


def plan_summary(partitioned: Partitioned) -> str:
    """A few indented lines per function: its kernels (or kernels per backend) and the
    cheapest backend alone by the same estimates."""
    lines = []
    for plan in partitioned.plans:
        report = plan.report
        kernels = report.kernels
        if len(kernels) <= SHOWN_KERNELS:
            shown = "; ".join(f"{k.backend} {k.label} ({len(k.ops)} ops, "
                              f"{duration(k.cost if k.cost is not None else math.nan)})"
                              for k in kernels)
        else:
            counts = Counter(k.backend for k in kernels)
            shown = ", ".join(f"{n} on {b}" for b, n in sorted(counts.items()))
        lines.append(f"  @{plan.function}: {shown or 'no kernels'}")
        best, ratio = report.cheapest_alone(), report.mixing_ratio()
        if best is not None and ratio is not None:
            lines.append(f"  @{plan.function}: alone, {best[0]} is estimated at "
                         f"{duration(best[1])}; the mix at {ratio:.3f}x of it")
    return "".join(line + "\n" for line in lines)


def model_command(sub: argparse._SubParsersAction, name: str, help: str, description: str,
                  *, backends_default: str | None = BACKENDS_DEFAULT) -> argparse.ArgumentParser:
    """A sub-command that takes a model and the partition options."""
    p = sub.add_parser(name, help=help, description=description)
    p.add_argument("model", help="an .onnx model or an .mlir module with func.func @main")
    add_partition_options(p, backends_default=backends_default)
    return p


def load_and_partition(args: argparse.Namespace, options: PartitionOptions, progress: Progress
                       ) -> tuple[LoadedModel, Partitioned]:
    """The model `args` name, imported, rewritten as `--fold` and `--composite` ask and
    partitioned (`partition_module`); what refinement did, one line per function on
    stderr."""
    chains = parse_patterns(";".join(args.composite)) if args.composite else []
    progress(f"importing {args.model}")
    model = load_model(args.model, args.input_shape)
    if args.fold:
        progress("folding batch norms and constants")
        fold_batch_norms(model.module)
        fold_constants(model.module)
    if chains:
        form_pattern_composites(model.module, chains)
    partitioned = partition_module(model.module, options, progress)
    print_refinements(partitioned.plans, sys.stderr)
    return model, partitioned
