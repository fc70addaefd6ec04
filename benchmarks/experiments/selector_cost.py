"""What does the run-time plan selector cost a plan it keeps choosing?

    collage compile MODEL.onnx -o ART --cost-db DB      # refinement keeps alternatives
    python benchmarks/experiments/selector_cost.py ART [--rounds 60] [--instances]
    python benchmarks/experiments/selector_cost.py MODEL.onnx --backends tvm,onnxruntime [...]

Times, side by side in balanced interleaved rounds (`collage_xdsl.measure.timing`: one 50 ms
sample each per round): `selector`, a `collage_xdsl.runtime.selector.PlanSelector` over the
plans, probing them, as the runtime runs a plan with alternatives; and `plain`, the
first plan called directly. The plans are a compiled artifact's `@main` and the
alternatives it lists, or, for a model, `--backends`' whole-model plans (the first one
is the selector's current plan). With `--instances`, also `other instance`: the first
plan compiled a second time in the same process, as the benchmark's `collage-search`
configuration is beside `collage`. Prints each one's median per-round ratio to `plain`
with its 95% confidence interval, and the selector's stats.

Less than 40-60 rounds resolve (bench15 VM): on the MLP (`--backends tvm,onnxruntime
--rounds 60 --instances`) the selector over TVM alone and ONNX Runtime alone ran 0.973x
of TVM alone called directly (CI 0.953-1.029; 210 of 42003 calls on ONNX Runtime), a
second compiled instance 0.998x (0.983-1.033); on a compiled artifact of the transformer
encoder (OpenVINO alone, ONNX Runtime alone kept at 1.111x) 1.008x (0.996-1.025) and
1.002x.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from collage_xdsl.errors import CollageError
from collage_xdsl.ir.inputs import random_arguments
from collage_xdsl.measure.stats import median_ci
from collage_xdsl.planner.pipeline import assign_module
from collage_xdsl.runtime.artifact import load_artifact
from collage_xdsl.runtime.executable import Executable
from collage_xdsl.runtime.selector import PlanSelector
from collage_xdsl.tools.bench import measure
from collage_xdsl.tools.model import load_model

SAMPLE_S = 0.05
WARMUP = 20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plans", help="a compiled artifact directory or an .onnx model")
    parser.add_argument("--backends", default="tvm,onnxruntime",
                        help="for a model: the whole-model plans (default tvm,onnxruntime)")
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--instances", action="store_true",
                        help="also time @main compiled a second time")
    args = parser.parse_args()
    if args.plans.endswith(".onnx"):
        module = load_model(args.plans).module
        modules = [assign_module(module, b, "whole") for b in args.backends.split(",")]
        plans = [Executable(m) for m in modules]
        selector = PlanSelector([p.run for p in plans])
    else:
        modules = [load_artifact(args.plans).module]
        exe = Executable(modules[0])
        if exe.selector is None:
            print(f"{args.plans}: @main keeps no alternatives: nothing to compare",
                  file=sys.stderr)
            return 1
        plans, selector = [exe], exe.selector
    first = plans[0]
    inputs = random_arguments(first.main, 0, int_high=2)
    runs = {"plain": first._run_plain, "selector": selector}
    if args.instances:
        runs["other instance"] = Executable(modules[0], adapt=False).run
    samples = measure(runs, inputs, args.rounds, WARMUP, SAMPLE_S)
    for name in runs:
        ratios = [s / p for s, p in zip(samples[name], samples["plain"])]
        ci = median_ci(ratios)
        print(f"{name:15s} {statistics.median(samples[name]) * 1e6:9.1f} us  "
              f"{ci.median:.3f}x of plain (95% CI {ci.low:.3f}-{ci.high:.3f})")
    print(f"selector: {selector.stats()}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CollageError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
