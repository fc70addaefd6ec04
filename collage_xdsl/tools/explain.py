"""`collage explain`: why the partition looks the way it does.

    collage explain model.onnx --backends tvm,onnxruntime,openvino [--json]

Partitions the model (as `collage compile` does, nothing is saved) and prints the
explain report of `collage_xdsl.planner.explain`: per kernel its backend, ops, estimated cost
and the best other backend for the same nodes; the total, the number of candidates,
estimates run, cost-database hits and search time. When the partition was refined
(`--refine-budget`, `collage-refine`), what refinement tried follows: each seed and
mutation, its status, its latency ratio and the reason it failed or differs. `--json`
prints the JSON report, with `partition_seconds` (partitioning and outlining, estimates
included) and `refinement` (the refinement report) added.
"""

from __future__ import annotations

import argparse
import json

from collage_xdsl.refine.report import format_trials
from collage_xdsl.tools.model import load_model
from collage_xdsl.tools.options import (
    BACKENDS_DEFAULT,
    add_partition_options,
    kernel_summary,
    partition_model,
    partition_options,
)
from collage_xdsl.tools.progress import Progress


def cmd_explain(args: argparse.Namespace) -> int:
    """Partition a model and print the explain report (a table, or JSON with --json)."""
    options = partition_options(args)
    with Progress(quiet=args.quiet) as progress:
        progress(f"importing {args.model}")
        module = load_model(args.model, args.input_shape).module
        partitioned = partition_model(module, options, progress)
    refinement = (partitioned.refinement or {}).get("functions", [])
    if args.json:
        report = {**partitioned.report, "partition_seconds": partitioned.seconds}
        if partitioned.refinement is not None:
            report["refinement"] = partitioned.refinement
        print(json.dumps(report, indent=2))
    else:
        print(partitioned.table, end="")
        for function in refinement:
            print(format_trials(function), end="")
        print(f"{args.model}: {kernel_summary(partitioned)}")
    return 0


def add_explain(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("explain", help="partition a model and print the explain report",
                       description=__doc__)
    p.add_argument("model", help="an .onnx model or an .mlir module with func.func @main")
    add_partition_options(p, backends_default=BACKENDS_DEFAULT)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=cmd_explain)
