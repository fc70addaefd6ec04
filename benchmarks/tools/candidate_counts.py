"""Candidate counts per backend and generation time, per model.

    python benchmarks/tools/candidate_counts.py [--backends tvm,onnxruntime,openvino] [--depth 8]

Models: the benchmark's model set (`benchmarks/bench_models.py`: every model of
`examples/make_models.py` and the nine light model-zoo architectures shipped inside the
onnx package, `onnx/backend/test/data/light/`), all imported through the ONNX frontend.
Prints one row per model: node count, candidates per backend (host included), total, and
the seconds building the dataflow graph and `generate_candidates` took.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from collage_xdsl.backends import gather_specs
from collage_xdsl.core.candidates import CandidateKernel, generate_candidates
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.regions import partitionable_functions
from collage_xdsl.frontend import import_onnx
from collage_xdsl.measure.timing import clocked

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_models import MODELS, display_name, model_file  # noqa: E402  (not a package)


def count(module: ModuleOp, backends: list[str], depth: int) -> tuple[int, Counter, float]:
    """Nodes of the module's function, its candidates per backend, and the seconds it
    took to build its graph and generate them."""
    (func,) = partitionable_functions(module)
    specs = gather_specs(backends, native_max_depth=depth, byoc_max_depth=depth)

    def generate() -> tuple[DataflowGraph, list[CandidateKernel]]:
        graph = DataflowGraph(func)
        return graph, generate_candidates(graph, specs)

    (graph, candidates), _, seconds = clocked(generate)
    return len(graph), Counter(c.spec.name for c in candidates), seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="tvm,onnxruntime,openvino")
    parser.add_argument("--depth", type=int, default=8)
    args = parser.parse_args(argv)
    backends = args.backends.split(",")
    columns = [*backends, "host"]
    print(f"{'model':<20} {'nodes':>5} " + " ".join(f"{c:>11}" for c in columns)
          + f" {'total':>7} {'seconds':>8}")
    with tempfile.TemporaryDirectory() as work:
        for name in MODELS:
            module = import_onnx(model_file(name, Path(work)))
            nodes, counts, seconds = count(module, backends, args.depth)
            print(f"{display_name(name):<20} {nodes:>5} "
                  + " ".join(f"{counts[c]:>11}" for c in columns)
                  + f" {sum(counts.values()):>7} {seconds:>8.2f}")


if __name__ == "__main__":
    main()
