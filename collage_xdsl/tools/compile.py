"""`collage compile`: partition a model and save it as an artifact directory.

    collage compile model.onnx --backends tvm,onnxruntime,openvino -o model.collage

The model is partitioned (measured estimator by default, its costs kept in the cost
database), refined by measured whole-model latency (`--refine-budget`, auto by default),
outlined, and saved (`collage_xdsl.runtime.artifact`); `collage run DIR` runs it.
"""

from __future__ import annotations

import argparse

from collage_xdsl.runtime.artifact import save_artifact
from collage_xdsl.tools.model import load_model
from collage_xdsl.tools.options import (
    BACKENDS_DEFAULT,
    add_partition_options,
    kernel_summary,
    partition_model,
    partition_options,
    plan_summary,
)
from collage_xdsl.tools.progress import Progress


def cmd_compile(args: argparse.Namespace) -> int:
    """Partition a model over the backends and save it as an artifact directory."""
    options = partition_options(args)
    with Progress(quiet=args.quiet) as progress:
        progress(f"importing {args.model}")
        model = load_model(args.model, args.input_shape)
        partitioned = partition_model(model.module, options, progress)
        progress(f"saving {args.output}")
        out = save_artifact(args.output, partitioned.module, backends=list(options.backends),
                            estimator=options.estimator, inputs=model.input_names,
                            outputs=model.output_names, source=model.onnx_path,
                            explain=partitioned.report)
    print(f"compiled {args.model}: {kernel_summary(partitioned)} -> {out}")
    print(plan_summary(partitioned), end="")
    return 0


def add_compile(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compile", help="partition a model and save it as an artifact",
                       description=__doc__)
    p.add_argument("model", help="an .onnx model or an .mlir module with func.func @main")
    add_partition_options(p, backends_default=BACKENDS_DEFAULT)
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="the artifact directory to write")
    p.set_defaults(handler=cmd_compile)
