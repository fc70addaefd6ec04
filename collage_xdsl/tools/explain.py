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
from collage_xdsl.tools.options import (
    kernel_summary,
    load_and_partition,
    model_command,
    partition_options,
)
from collage_xdsl.tools.progress import Progress


def cmd_explain(args: argparse.Namespace) -> int:
    """Partition a model and print the explain report (a table, or JSON with --json)."""
    options = partition_options(args)
    with Progress(quiet=args.quiet) as progress:
        _, partitioned = load_and_partition(args, options, progress)
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
    p = model_command(sub, "explain", "partition a model and print the explain report",
                      __doc__)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=cmd_explain)
