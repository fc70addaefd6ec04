"""Does OpenVINO run a fully connected layer slower with its ReLU fused in?

    python benchmarks/experiments/openvino_fc_relu.py [--k 9216] [--n 4096] [--rounds 20]

Builds four one-layer ONNX models of a batch-1 fully connected layer K -> N (seeded
weights): MatMul; MatMul + Add (the bias); MatMul + Add + Relu; and Gemm (transB=1, as
the model zoo writes it) + Relu. Each is compiled by OpenVINO's CPU plugin as the codegen
configures it (`ThreadPolicy.openvino_config`: the process's threads, f32) and timed
side by side in balanced interleaved rounds (`collage_xdsl.measure.timing`: one 50 ms sample
each per round). Prints each one's median latency and median per-round ratio to MatMul
alone. The defaults are AlexNet's first fully connected layer: Collage's plans for AlexNet
and ZFNet-512 beat OpenVINO alone by leaving each ReLU out of its matmul's kernel.

It depends on the host: 9216 -> 4096 with its ReLU took 7.41 against 5.35 ms without on
one VM (1.54x per round; 4096 -> 4096 1.83x), 1.36-1.39x on two others (`--rounds 20`:
matmul 4.854 ms, with the add 0.996x, with add and ReLU 1.363x, as Gemm and ReLU
1.463x), and 1.03x on the bench25 VM (4.83 against 4.71 ms), where no cut gained.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.errors import CollageError
from collage_xdsl.tools.bench import measure, openvino_model

SAMPLE_S = 0.05
LAYERS = ("matmul", "matmul+add", "matmul+add+relu", "gemm+relu")


def layer(kind: str, k: int, n: int) -> onnx.ModelProto:
    """One fully connected layer `k` -> `n` written as `kind` (one of LAYERS)."""
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((k, n)) * 0.01).astype(np.float32)
    inits = [numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "b")]
    if kind == "gemm+relu":
        inits.append(numpy_helper.from_array(np.ascontiguousarray(w.T), "w"))
        nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["g"], transB=1),
                 helper.make_node("Relu", ["g"], ["y"])]
    else:
        inits.append(numpy_helper.from_array(w, "w"))
        nodes = [helper.make_node("MatMul", ["x", "w"], ["t0"])]
        if "add" in kind:
            nodes.append(helper.make_node("Add", ["t0", "b"], ["t1"]))
        if "relu" in kind:
            nodes.append(helper.make_node("Relu", ["t1"], ["t2"]))
        nodes[-1].output[0] = "y"
    graph = helper.make_graph(
        nodes, kind, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--k", type=int, default=9216, help="input features (default 9216)")
    p.add_argument("--n", type=int, default=4096, help="output features (default 4096)")
    p.add_argument("--rounds", type=int, default=20)
    args = p.parse_args()
    if args.k < 1 or args.n < 1 or args.rounds < 1:
        raise CollageError("--k, --n and --rounds must be at least 1")
    policy = ThreadPolicy()
    x = [np.random.default_rng(1).standard_normal((1, args.k)).astype(np.float32)]
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in LAYERS:
            path = Path(tmp) / f"{kind}.onnx"
            onnx.save(layer(kind, args.k, args.n), path)
            runs[kind] = openvino_model(path, policy)
    outputs = {kind: run(x)[0] for kind, run in runs.items()}
    relu = np.maximum(outputs["matmul+add"], 0)
    for kind in ("matmul+add+relu", "gemm+relu"):
        if not np.allclose(outputs[kind], relu, rtol=1e-4, atol=1e-4):
            raise CollageError(f"{kind} differs from relu(matmul+add)")
    samples = measure(runs, x, args.rounds, warmup=0, sample_s=SAMPLE_S)
    print(f"fully connected {args.k} -> {args.n}, batch 1, OpenVINO, {policy.threads} threads, "
          f"{args.rounds} rounds")
    for kind, values in samples.items():
        ratio = statistics.median(a / b for a, b in zip(values, samples["matmul"]))
        print(f"  {kind:16} {statistics.median(values) * 1e3:8.3f} ms  {ratio:.3f}x of matmul")


if __name__ == "__main__":
    try:
        main()
    except CollageError as e:
        sys.exit(f"error: {e}")
