"""`collage compile`: partition a model and save it as an artifact directory.

    collage compile model.onnx --backends tvm,onnxruntime,openvino -o model.collage

The model is partitioned (measured estimator by default, its costs kept in the cost
database), refined by measured whole-model latency (`--refine-budget`, auto by default),
outlined, and saved (`collage_xdsl.runtime.artifact`); `collage run DIR` runs it.
"""

from __future__ import annotations

import argparse

from collage_xdsl.runtime.artifact import check_artifact_place, save_artifact
from collage_xdsl.tools.options import (
    kernel_summary,
    load_and_partition,
    model_command,
    partition_options,
    plan_summary,
)
from collage_xdsl.tools.progress import Progress


def cmd_compile(args: argparse.Namespace) -> int:
    """Partition a model over the backends and save it as an artifact directory."""
    options = partition_options(args)
    check_artifact_place(args.output)
    with Progress(quiet=args.quiet) as progress:
        model, partitioned = load_and_partition(args, options, progress)
        progress(f"saving {args.output}")
        out = save_artifact(args.output, partitioned.module, backends=list(options.backends),
                            estimator=options.estimator, inputs=model.input_names,
                            outputs=model.output_names, source=model.onnx_path,
                            explain=partitioned.report,
                            backend_options=options.backend_map())
    print(f"compiled {args.model}: {kernel_summary(partitioned)} -> {out}")
    print(plan_summary(partitioned), end="")
    return 0


def add_compile(sub: argparse._SubParsersAction) -> None:
    p = model_command(sub, "compile", "partition a model and save it as an artifact", __doc__)
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="the artifact directory to write")
    p.set_defaults(handler=cmd_compile)
