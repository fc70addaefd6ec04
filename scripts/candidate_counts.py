"""Candidate counts per backend and generation time, per model.

    python scripts/candidate_counts.py [--backends tvm,onnxruntime,openvino] [--depth 8]

Models: the nine light model-zoo architectures shipped inside the onnx package
(`onnx/backend/test/data/light/`) and every model of `examples/make_models.py`, all
imported through the ONNX frontend. Prints one row per model: node count, candidates per
backend (host included), total, and the seconds `generate_candidates` took.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import onnx
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from collage_xdsl.backends import gather_specs
from collage_xdsl.core.candidates import generate_candidates
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.frontend import import_onnx

LIGHT = Path(onnx.__file__).parent / "backend/test/data/light"


def resnet50() -> ModuleOp:
    """The light model-zoo ResNet-50 (1x3x224x224), imported."""
    return import_onnx(LIGHT / "light_resnet50.onnx")


def models() -> dict[str, ModuleOp]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
    from make_models import MODELS, make_model

    light = {p.stem.removeprefix("light_"): import_onnx(p)
             for p in sorted(LIGHT.glob("light_*.onnx"))}
    return {**light, **{name: import_onnx(make_model(name)) for name in MODELS}}


def count(module: ModuleOp, backends: list[str], depth: int) -> tuple[int, Counter, float]:
    func = next(op for op in module.ops if isinstance(op, FuncOp))
    start = time.perf_counter()
    graph = DataflowGraph(func)
    specs = gather_specs(backends, native_max_depth=depth, byoc_max_depth=depth)
    candidates = generate_candidates(graph, specs)
    seconds = time.perf_counter() - start
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
    for name, module in models().items():
        nodes, counts, seconds = count(module, backends, args.depth)
        print(f"{name:<20} {nodes:>5} " + " ".join(f"{counts[c]:>11}" for c in columns)
              + f" {sum(counts.values()):>7} {seconds:>8.2f}")


if __name__ == "__main__":
    main()
