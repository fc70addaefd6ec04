"""Time `collage-partition` (mock estimator) and `collage-outline` on ResNet-50 and the
transformer encoder.

    python scripts/partition_timing.py [--backends tvm,onnxruntime,openvino] [--depth 8]
                                       [--mock-costs tvm:1,onnxruntime:1.2] [--no-max-regions]

ResNet-50 is built directly in the dialect (`scripts/candidate_counts.py`), the encoder
comes from `examples/make_models.py` through the ONNX frontend. Per model one row: graph
nodes, candidates, kernels chosen, kernel functions after outlining, search seconds (as
the explain report gives them), then the wall-clock seconds of the
partition pass (candidates + costs + search + rewriting) and of the outline pass.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from collage_xdsl.dialects.collage import KernelOp
from collage_xdsl.passes.outline import CollageOutlinePass
from collage_xdsl.passes.partition import CollagePartitionPass
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from collage_xdsl.core.graph import DataflowGraph

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "examples")]


def models() -> dict[str, ModuleOp]:
    from candidate_counts import resnet50
    from make_models import make_model

    from collage_xdsl.frontend import import_onnx

    return {"resnet50": resnet50(), "transformer_encoder": import_onnx(
        make_model("transformer_encoder"))}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="tvm,onnxruntime,openvino")
    parser.add_argument("--depth", type=int, default=8, help="tvm and BYOC max depth")
    parser.add_argument("--mock-costs", default="tvm:1,onnxruntime:1.2,openvino:1.1",
                        help="seconds per op per backend for the mock estimator")
    parser.add_argument("--no-max-regions", action="store_true",
                        help="do not offer the backends their maximal regions")
    args = parser.parse_args(argv)
    print(f"{'model':<20} {'nodes':>6} {'cands':>7} {'kernels':>7} {'funcs':>6} "
          f"{'search s':>9} {'partition s':>11} {'outline s':>9}")
    for name, module in models().items():
        main_func = next(op for op in module.ops if isinstance(op, FuncOp))
        nodes = len(DataflowGraph(main_func))
        with tempfile.TemporaryDirectory() as tmp:
            report = os.path.join(tmp, "explain.json")
            partition = CollagePartitionPass(
                backends=tuple(args.backends.split(",")), estimator="mock",
                mock_costs=args.mock_costs, byoc_max_regions=not args.no_max_regions,
                tvm_max_regions=not args.no_max_regions,
                tvm_max_depth=args.depth, byoc_max_depth=args.depth,
                explain=report, explain_table=os.devnull,
            )
            t0 = time.perf_counter()
            partition.apply(Context(), module)
            t1 = time.perf_counter()
            (function,) = json.loads(Path(report).read_text())["functions"]
        kernels = sum(isinstance(op, KernelOp) for op in module.walk())
        CollageOutlinePass().apply(Context(), module)
        t2 = time.perf_counter()
        funcs = sum(isinstance(op, FuncOp) for op in module.ops) - 1
        print(f"{name:<20} {nodes:>6} {function['candidates']:>7} {kernels:>7} {funcs:>6} "
              f"{function['search_seconds']:>9.3f} {t1 - t0:>11.3f} {t2 - t1:>9.3f}")


if __name__ == "__main__":
    main()
