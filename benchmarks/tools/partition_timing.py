"""Time partitioning (mock estimator) and outlining on ResNet-50 and the transformer
encoder.

    python benchmarks/tools/partition_timing.py [--backends tvm,onnxruntime,openvino] [--depth 8]
                                                [--mock-costs tvm:1,onnxruntime:1.2]
                                                [--no-max-regions]

Both models come through the ONNX frontend: light ResNet-50 from the onnx package and
the encoder from `examples/make_models.py` (`benchmarks/bench_models.py`). Per model one
row: graph nodes, candidates, kernels chosen, kernel functions after outlining, search
seconds (as the explain report gives them), then the wall-clock seconds of partitioning
(`collage_xdsl.planner.plan.partition`: candidates + costs + search + regions, as
`collage-partition` runs it) and of outlining (`collage_xdsl.core.outline.outline_kernels`).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from collage_xdsl.dialects.collage import KernelOp
from xdsl.dialects.func import FuncOp

from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.outline import outline_kernels
from collage_xdsl.core.regions import partitionable_functions
from collage_xdsl.frontend import import_onnx
from collage_xdsl.measure.timing import clocked, timed
from collage_xdsl.planner.options import PartitionOptions
from collage_xdsl.planner.plan import partition

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_models import display_name, model_file  # noqa: E402  (not a package)

MODELS = ("light_resnet50", "transformer_encoder")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="tvm,onnxruntime,openvino")
    parser.add_argument("--depth", type=int, default=8, help="tvm and BYOC max depth")
    parser.add_argument("--mock-costs", default="tvm:1,onnxruntime:1.2,openvino:1.1",
                        help="seconds per op per backend for the mock estimator")
    parser.add_argument("--no-max-regions", action="store_true",
                        help="do not offer the backends their maximal regions")
    args = parser.parse_args(argv)
    options = PartitionOptions(
        backends=tuple(args.backends.split(",")), mock_costs=args.mock_costs,
        byoc_max_regions=not args.no_max_regions, tvm_max_regions=not args.no_max_regions,
        tvm_max_depth=args.depth, byoc_max_depth=args.depth)
    print(f"{'model':<20} {'nodes':>6} {'cands':>7} {'kernels':>7} {'funcs':>6} "
          f"{'search s':>9} {'partition s':>11} {'outline s':>9}")
    with tempfile.TemporaryDirectory() as work:
        for name in MODELS:
            module = import_onnx(model_file(name, Path(work)))
            (main_func,) = partitionable_functions(module)
            nodes = len(DataflowGraph(main_func))
            plans, _, partition_s = clocked(lambda: partition(module, options, explain=True))
            (report,) = [p.report for p in plans]
            kernels = sum(isinstance(op, KernelOp) for op in module.walk())
            outline_s = timed(lambda: outline_kernels(module))
            funcs = sum(isinstance(op, FuncOp) for op in module.ops) - 1
            print(f"{display_name(name):<20} {nodes:>6} {report.candidates:>7} {kernels:>7} "
                  f"{funcs:>6} {report.search_seconds:>9.3f} {partition_s:>11.3f} "
                  f"{outline_s:>9.3f}")


if __name__ == "__main__":
    main()
