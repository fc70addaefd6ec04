"""Is a mixed plan's gain in its cuts or in its libraries?

    collage compile MODEL.onnx -o ART --cost-db DB
    python benchmarks/experiments/same_cuts.py ART MODEL.onnx [--backend openvino] [--rounds 24]

Times, side by side in balanced interleaved rounds (`collage_xdsl.measure.timing`: one 50 ms
sample each per round): `plan`, the artifact's `@main` as compiled; `plan on BACKEND`,
the same kernels (the same cuts) with every one of them compiled by `--backend`; and
`BACKEND alone`, the model as one `--backend` kernel (`collage-assign{fusion=whole}`).
All run through `collage_xdsl.runtime.executable` without its plan selector, on the same seeded
inputs, after a check that their outputs agree (`collage bench`'s `check_agreement` and
`measure`). Prints each one's median latency and
median per-round ratio to `BACKEND alone` with its 95% confidence interval.

The gain is in the cuts: ZFNet-512's plan (tvm and OpenVINO) ran 0.909x (CI
0.874-0.935) of OpenVINO alone, its kernels all on OpenVINO 0.906x (0.868-0.927);
AlexNet's 0.922x and 0.909x. VGG-19's search plan (14 pieces on ONNX Runtime and
OpenVINO) all on OpenVINO ran 1.006x of OpenVINO alone.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from xdsl.dialects.builtin import StringAttr

from collage_xdsl.core.outline import kernel_functions
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.stats import median_ci
from collage_xdsl.planner.options import parse_backends
from collage_xdsl.planner.pipeline import assign_module
from collage_xdsl.runtime.artifact import load_artifact
from collage_xdsl.runtime.executable import Executable
from collage_xdsl.tools.bench import check_agreement, measure
from collage_xdsl.tools.model import load_model, random_inputs

SAMPLE_S = 0.05


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("artifact", help="a compiled artifact directory (`collage compile -o`)")
    p.add_argument("model", help="the .onnx model it was compiled from")
    p.add_argument("--backend", default="openvino")
    p.add_argument("--rounds", type=int, default=24)
    args = p.parse_args()
    if args.rounds < 1:
        raise CollageError("--rounds must be at least 1")
    (backend,) = parse_backends([args.backend])
    plan = load_artifact(args.artifact).module
    moved = plan.clone()
    for func in kernel_functions(moved):
        func.attributes["collage.backend"] = StringAttr(backend)
    base = f"{backend} alone"
    model = load_model(args.model)
    modules = {"plan": plan, f"plan on {backend}": moved,
               base: assign_module(model.module, backend, "whole")}
    runs = {name: Executable(module, adapt=False).run for name, module in modules.items()}
    inputs = random_inputs(model, 0)
    check_agreement({base: runs[base]} | runs, inputs, model.output_names, rtol=1e-3, atol=1e-4)
    samples = measure(runs, inputs, args.rounds, warmup=0, sample_s=SAMPLE_S)
    for name, values in samples.items():
        ratio = median_ci([a / b for a, b in zip(values, samples[base])])
        print(f"{name:24} {statistics.median(values) * 1e3:9.3f} ms  {ratio.median:.3f}x "
              f"({ratio.low:.3f}-{ratio.high:.3f}) of {base}")


if __name__ == "__main__":
    try:
        main()
    except CollageError as e:
        sys.exit(f"error: {e}")
