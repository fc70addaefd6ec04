"""Candidate counts per backend and generation time, per example model.

    python scripts/candidate_counts.py [--backends tvm,onnxruntime,openvino] [--depth 8]

Models: every model of `examples/make_models.py` (imported through the ONNX frontend) and
ResNet-50, built here directly in the `collage` dialect (inference form: convolutions
with folded batch norm as conv2d + bias add, bottleneck blocks with residual adds) since
no model zoo is reachable offline. Prints one row per model: node count, candidates per
backend (host included), total, and the seconds `generate_candidates` took.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region, SSAValue

from collage_xdsl.backends import gather_specs
from collage_xdsl.candidates import generate_candidates
from collage_xdsl.dialects import collage as C
from collage_xdsl.graph import DataflowGraph
from collage_xdsl.tensors import constant_op


def resnet50() -> ModuleOp:
    """ResNet-50 v1 for a 1x3x224x224 input (weights are zero splats: only shapes matter)."""
    block = Block(arg_types=[TensorType(f32, [1, 3, 224, 224])])

    def add(op) -> SSAValue:
        block.add_op(op)
        return op.results[0]

    def conv(x: SSAValue, cout: int, k: int, stride: int, relu: bool = True) -> SSAValue:
        cin = x.type.get_shape()[1]
        w = add(constant_op(np.zeros((cout, cin, k, k), np.float32)))
        y = add(C.Conv2dOp(x, w, strides=(stride, stride), pads=(k // 2,) * 4))
        y = add(C.AddOp(y, add(constant_op(np.zeros((cout, 1, 1), np.float32)))))
        return add(C.ReluOp(y)) if relu else y

    x = conv(block.args[0], 64, 7, 2)
    x = add(C.MaxPool2dOp(x, (3, 3), (2, 2), (1, 1, 1, 1)))
    for stage, (width, blocks) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)]):
        for b in range(blocks):
            stride = 2 if stage > 0 and b == 0 else 1
            y = conv(conv(conv(x, width, 1, 1), width, 3, stride), width * 4, 1, 1, relu=False)
            if b == 0:
                x = conv(x, width * 4, 1, stride, relu=False)
            x = add(C.ReluOp(add(C.AddOp(y, x))))
    x = add(C.ReshapeOp(add(C.GlobalAvgPool2dOp(x)), (1, 2048)))
    x = add(C.MatmulOp(x, add(constant_op(np.zeros((2048, 1000), np.float32)))))
    x = add(C.AddOp(x, add(constant_op(np.zeros((1000,), np.float32)))))
    block.add_op(ReturnOp(x))
    return ModuleOp([FuncOp("main", ([block.args[0].type], [x.type]), Region(block))])


def models() -> dict[str, ModuleOp]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
    from make_models import MODELS, make_model

    from collage_xdsl.frontend import import_onnx

    return {**{name: import_onnx(make_model(name)) for name in MODELS}, "resnet50": resnet50()}


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
