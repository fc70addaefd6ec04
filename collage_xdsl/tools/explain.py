"""`collage explain`: why the partition looks the way it does.

    collage explain model.onnx --backends tvm,onnxruntime,openvino [--format json|table|html]
        [--graph partition.svg [--expand]] [--save-plan plan.json]

Partitions the model (as `collage compile` does, nothing is compiled) and prints the
explain report of `collage_xdsl.planner.explain`: per kernel its backend, ops, estimated
cost, the cheapest other backend for the same ops and the next best cover of them (another
backend or a split); per function the estimate by part, each backend alone, the
boundaries crossed and their cost, candidates, estimates, cost-database hits and search
time. When the partition was refined, what refinement tried follows. `--format json`
prints the JSON report with `partition_seconds` and `refinement` added; `--format html` a
page with the picture of each function inline. `--graph FILE` draws the partition
(`collage_xdsl.planner.picture`: kernels as boxes coloured by backend, boundary edges
marked; `--expand` draws every op).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from collage_xdsl.planner.html import format_html
from collage_xdsl.planner.picture import (
    draw_partition,
    partition_svg,
    partitioned_functions,
)
from collage_xdsl.refine.report import format_trials
from collage_xdsl.tools.options import (
    kernel_summary,
    load_and_partition,
    model_command,
    partition_options,
)
from collage_xdsl.tools.progress import Progress


def cmd_explain(args: argparse.Namespace) -> int:
    """Partition a model and print the explain report as a table, JSON or HTML."""
    options = partition_options(args)
    with Progress(quiet=args.quiet) as progress:
        _, partitioned = load_and_partition(args, options, progress)
        if args.graph:
            progress(f"drawing {args.graph}")
            draw_partition(partitioned.module, args.graph, expand=args.expand)
    fmt = "json" if args.json else args.format
    refinement = (partitioned.refinement or {}).get("functions", [])
    if fmt == "json":
        report = {**partitioned.report, "partition_seconds": partitioned.seconds}
        if partitioned.refinement is not None:
            report["refinement"] = partitioned.refinement
        print(json.dumps(report, indent=2))
    elif fmt == "html":
        pictures = {f.sym_name.data: partition_svg(partitioned.module, expand=args.expand,
                                                   function=f.sym_name.data)
                    for f in partitioned_functions(partitioned.module)}
        print(format_html(partitioned.report, title=Path(args.model).name, pictures=pictures),
              end="")
    else:
        print(partitioned.table, end="")
        for function in refinement:
            print(format_trials(function), end="")
        print(f"{args.model}: {kernel_summary(partitioned)}")
    return 0


def add_explain(sub: argparse._SubParsersAction) -> None:
    p = model_command(sub, "explain", "partition a model and print the explain report",
                      __doc__)
    p.add_argument("--format", choices=("table", "json", "html"), default="table",
                   help="how to print the report (default table)")
    p.add_argument("--json", action="store_true", help="the same as --format json")
    p.add_argument("--graph", metavar="FILE.svg",
                   help="draw the partition to this file (.svg, .png or .pdf)")
    p.add_argument("--expand", action="store_true",
                   help="draw every op of every kernel, not one box per kernel")
    p.set_defaults(handler=cmd_explain)
