"""`collage compile`, and `collage run` on artifacts or with `--backends`.

    collage compile model.onnx --backends tvm,onnxruntime,openvino -o model.collage
    collage run model.collage --check             # the artifact, through the runtime
    collage run model.onnx --backends tvm,openvino --profile

`compile` partitions the model (measured estimator by default, its costs kept in the
cost database: `--cost-db`, default under the user's cache directory), refines the
partition by measured whole-model latency (`--refine-budget`: seconds, or auto, the
default with the measured estimator: 30 s, more for a model whose plans take long to build
and load, up to 600 s; 0 with mock; `collage-refine`), outlines the
kernels and saves an artifact (`collage_xdsl.runtime.artifact`). `run` on an artifact loads it
without measuring anything and compiles its kernels again; `run --backends` partitions
first. Both execute through `collage_xdsl.runtime.executable`.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from collage_xdsl.core.outline import kernel_calls
from collage_xdsl.errors import CollageError
from collage_xdsl.planner.pipeline import (
    DEFAULT_BACKENDS,
    DEFAULT_ESTIMATOR,
    DEFAULT_REFINE_BUDGET,
    Partitioned,
    PartitionOptions,
    parse_backends,
    partition_module,
)

# ---------------------------------------------------------------------------
# Options shared by compile, run, explain and bench
# ---------------------------------------------------------------------------


def add_partition_options(p: argparse.ArgumentParser, *, backends_default: str | None) -> None:
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
    p.add_argument("--mock-costs", default="", metavar="B:SECONDS,...",
                   help="per-op base cost of each backend for --estimator mock")
    p.add_argument("--max-depth", type=int, default=8, metavar="N",
                   help="max depth of candidate kernels (default 8; 0: unbounded)")
    p.add_argument("--no-max-regions", dest="max_regions", action="store_false",
                   help="no candidates deeper than --max-depth: without each backend's "
                        "maximal supported regions")
    p.add_argument("--launch-penalty", type=float, default=0.0, metavar="SECONDS",
                   help="cost added per kernel launch (default 0)")
    p.add_argument("--refine-budget", metavar="SECONDS|auto",
                   help="wall seconds for refining the partition by measured whole-model "
                        "latency, or auto (30 s, extended for a model whose plans take long "
                        "to build and load so that every seed is compared, up to 600 s); "
                        f"never returns a slower one (default {DEFAULT_REFINE_BUDGET} with "
                        "--estimator measured, 0 with mock; 0 = off)")
    p.add_argument("--alternatives", type=int, default=2, metavar="N",
                   help="near-tied plans refinement keeps, within 15%% of its result, for "
                        "the runtime to choose between by measured latency (default 2; "
                        "0 = off)")
    p.add_argument("--tvm-tune", choices=("none", "metaschedule"), default="none",
                   help="TVM schedule tuning (default none: the loop-nest schedule)")
    p.add_argument("--tvm-tune-trials", type=int, default=16, metavar="N",
                   help="schedule samples per TVM task for --tvm-tune (default 16)")
    p.add_argument("--tvm-tune-db", metavar="DIR",
                   help="tuning database directory (default: the user's cache directory)")


def partition_options(args: argparse.Namespace) -> PartitionOptions:
    """The partition options of the command line (`--backends` must be set)."""
    from collage_xdsl.measure.cost_db import default_path

    if args.estimator == "mock":
        if args.cost_db:
            raise CollageError("--cost-db keeps measured costs; it needs --estimator measured")
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
    return PartitionOptions(backends=parse_backends(args.backends), estimator=args.estimator,
                            cost_db=cost_db, mock_costs=args.mock_costs,
                            launch_penalty=args.launch_penalty, max_depth=args.max_depth,
                            max_regions=args.max_regions, refine_budget=refine,
                            alternatives=args.alternatives)


def kernel_summary(partitioned: Partitioned) -> str:
    """`N kernels (tvm 2, openvino 1), estimated 1.2 ms, partitioned in 0.4 s` (kernel
    calls; `, M distinct` when calls share a kernel), with `, refined @main to 0.84x of the
    search's plan` when refinement changed the plan (the estimate, the search's, then says
    `for the search's plan`) and `, 1 alternative plan(s) of @main kept` when it kept
    near-tied plans."""
    calls = kernel_calls(partitioned.module)
    per_backend = Counter(f.attributes["collage.backend"].data for f in calls)
    distinct = len({f.sym_name.data for f in calls})
    shared = f", {distinct} distinct" if distinct < len(calls) else ""
    estimates = [r["estimated_seconds"] for r in partitioned.report["functions"]]
    total = math.nan if None in estimates else sum(estimates)
    backends = ", ".join(f"{b} {n}" for b, n in sorted(per_backend.items()))
    refined = "".join(
        f", refined @{r['function']} to {r['ratio']:.2f}x of the search's plan"
        for r in (partitioned.refinement or {}).get("functions", []) if r["changed"])
    kept = "".join(
        f", {len(r['alternatives'])} alternative plan(s) of @{r['function']} kept"
        for r in (partitioned.refinement or {}).get("functions", []) if r.get("alternatives"))
    whose = " for the search's plan" if refined else ""
    kernels = f"{len(calls)} kernel{'s' * (len(calls) != 1)}"
    return (f"{kernels} ({backends}){shared}, estimated {duration(total)}{whose}"
            f"{refined}{kept}, partitioned in {partitioned.seconds:.2f} s")


def duration(seconds: float) -> str:
    """`1.23 s`, `4.56 ms` or `7.89 us` (`unknown` for NaN)."""
    if math.isnan(seconds):
        return "unknown"
    for unit, scale in (("s", 1.0), ("ms", 1e-3)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-6:.3g} us"


# ---------------------------------------------------------------------------
# compile
# ---------------------------------------------------------------------------


def cmd_compile(args: argparse.Namespace) -> int:
    """Partition a model over the backends and save it as an artifact directory."""
    from collage_xdsl.runtime.artifact import save_artifact
    from collage_xdsl.tools.collage import load_model

    options = partition_options(args)
    model = load_model(args.model, args.input_shape)
    partitioned = partition_module(model.module, options)
    out = save_artifact(args.output, partitioned.module, backends=list(options.backends),
                        estimator=options.estimator, inputs=model.input_names,
                        outputs=model.output_names, source=model.onnx_path,
                        explain=partitioned.report)
    print(f"compiled {args.model}: {kernel_summary(partitioned)} -> {out}")
    return 0


def add_compile(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compile", help="partition a model and save it as an artifact",
                       description=__doc__)
    p.add_argument("model", help="an .onnx model or an .mlir module with func.func @main")
    add_partition_options(p, backends_default=",".join(DEFAULT_BACKENDS))
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="the artifact directory to write")
    p.set_defaults(handler=cmd_compile)


# ---------------------------------------------------------------------------
# run through the runtime
# ---------------------------------------------------------------------------


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The options `collage run` takes for the runtime (partitioning, profiling)."""
    add_partition_options(p, backends_default=None)
    p.add_argument("--profile", action="store_true",
                   help="print each kernel's time: the median of --profile-runs runs after "
                        "a first call (artifacts and --backends only)")
    p.add_argument("--profile-runs", type=int, default=20, metavar="N",
                   help="runs a profile takes the median of (default 20)")


def load_for_runtime(args: argparse.Namespace):
    """The model `collage run` executes through the runtime (an artifact directory, or a
    model partitioned over `--backends`), and `execute(inputs) -> outputs`."""
    from collage_xdsl.runtime.executable import Executable
    from collage_xdsl.tools.collage import LoadedModel, load_model

    path = Path(args.model)
    if not path.is_dir():
        model = load_model(path, args.input_shape)
        executable = Executable(partition_module(model.module, partition_options(args)).module)
        return model, _executor(executable, args.profile and args.profile_runs)
    from collage_xdsl.runtime.artifact import backend_versions, load_artifact

    if args.backends:
        raise CollageError(f"{path}: an artifact is already partitioned; drop --backends")
    artifact = load_artifact(path)
    saved = artifact.manifest.get("backend_versions", {})
    for backend, now in backend_versions(list(saved)).items():
        if saved[backend] != now:
            print(f"warning: {path}: compiled with {saved[backend]}, running with {now}",
                  file=sys.stderr)
    executable = Executable(artifact.module)
    model = LoadedModel(artifact.module, executable.main, artifact.input_names,
                        artifact.output_names, artifact.source_model())
    if args.check and model.onnx_path is None:
        raise CollageError(f"{path}: --check needs the artifact's source model, which is "
                           "missing or changed")
    return model, _executor(executable, args.profile and args.profile_runs)


def _executor(executable, profile_runs: int) -> Callable[[Sequence[np.ndarray]], list]:
    """`execute(inputs) -> outputs`; with ``profile_runs``, also prints the profile."""
    def execute(inputs: Sequence[np.ndarray]) -> list:
        if not profile_runs:
            return executable.run(inputs)
        outputs, report = executable.profile(inputs, runs=profile_runs)
        print(report.format(), end="")
        return outputs

    return execute
