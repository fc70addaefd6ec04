"""Does one library run a model faster cut into pieces at given tensors than whole?

    python benchmarks/experiments/onnx_cuts.py MODEL.onnx TENSOR[,TENSOR...] [--backend openvino]
                                               [--rounds 16]

Cuts the ONNX file at the named tensors, in order: piece i is every node the next cut
tensor (the last piece: the model's outputs) depends on, back to the graph inputs and the
cut tensors before it. Each piece and the whole model are compiled by `--backend`
(OpenVINO or ONNX Runtime, as `collage bench` runs them: the process's threads, f32) and,
after a check that the chained pieces give the whole model's outputs on seeded inputs
(`collage`'s `random_inputs`), timed side by side
in balanced interleaved rounds (`collage bench`'s `measure`: one 50 ms sample each per
round). Prints both medians and the median per-round ratio of the pieces to the whole
with its 95% confidence interval.

Collage's plans that beat OpenVINO alone (AlexNet, ZFNet-512) are OpenVINO's graph cut
so that no batch-1 fully connected layer keeps its ReLU (`openvino_fc_relu.py`); this
asks whether a given cut pays on its own, e.g. VGG-19 cut after its first Gemm:
`python benchmarks/experiments/onnx_cuts.py light_vgg19.onnx r38`.

Cut after each fully connected layer's Gemm, before its ReLU (bench19-20 VM): OpenVINO
ran AlexNet (`r16,r20`) 0.896x (CI 0.867-0.908) of whole, ZFNet-512 (`r16,r18`) 0.849x
(0.826-0.867), VGG-19 (`r38,r42`) 0.967x (0.940-0.981); cut after fc6 alone, AlexNet
0.928x and VGG-19 0.961x. ONNX Runtime gained nothing that way (AlexNet 1.041x, CI
0.986-1.101). Every cut that paid breaks a fusion.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import helper

from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.stats import median_ci
from collage_xdsl.tools.bench import (
    check_agreement,
    measure,
    onnxruntime_session,
    openvino_model,
)
from collage_xdsl.tools.model import load_model, random_inputs

SAMPLE_S = 0.05
IR_VERSION = 7
"""At least this IR version for a piece: initializers need not be graph inputs (the light
model zoo's files are version 3), and ONNX Runtime 1.2x reads it."""


def pieces(model: onnx.ModelProto, cuts: list[str]) -> list[onnx.ModelProto]:
    """`model` cut at `cuts`, in order: one model per piece."""
    graph = onnx.shape_inference.infer_shapes(model).graph
    initializers = {t.name: t for t in graph.initializer}
    inputs = [v for v in graph.input if v.name not in initializers]
    values = {v.name: v for v in [*graph.value_info, *graph.input, *graph.output]}
    producer = {out: n for n in graph.node for out in n.output}
    outputs = [o.name for o in graph.output]
    available = {v.name for v in inputs}
    found, done = [], set()
    for number, ends in enumerate([[c] for c in cuts] + [outputs]):
        last = number == len(cuts)
        if last:  # outputs an earlier piece computed are taken from it
            ends = [o for o in ends if id(producer.get(o)) not in done and o not in available]
            if not ends:
                raise CollageError(f"nothing is left after cut {cuts[-1]!r}")
        for end in ends:
            if end not in producer and end not in available:
                raise CollageError(f"no node computes tensor {end!r}")
            if id(producer.get(end)) in done:
                raise CollageError(f"tensor {end!r} is computed before cut {cuts[number - 1]!r}:"
                                   " give the cuts in dataflow order")
            if end not in values:
                raise CollageError(f"tensor {end!r} has no inferred type and shape")
        nodes, todo = set(), list(ends)
        while todo:
            name = todo.pop()
            node = producer.get(name)
            if name in available or node is None or id(node) in nodes:
                continue
            if id(node) in done:
                raise CollageError(f"piece {number + 1} (up to {ends[0]!r}) needs {name!r}, "
                                   f"which an earlier piece computes but does not hand on: "
                                   f"cut there too, or at a tensor everything after depends "
                                   f"on alone")
            nodes.add(id(node))
            todo += list(node.input)
        if not nodes:
            raise CollageError(f"piece {number + 1} (up to {ends[0]!r}) is empty")
        kept = [n for n in graph.node if id(n) in nodes]
        done |= nodes
        read = {name for n in kept for name in n.input}
        piece_inputs = [values[name] for name in sorted(read & available)]
        used = [initializers[name] for name in sorted(read & initializers.keys())]
        piece = helper.make_model(
            helper.make_graph(kept, f"piece{number + 1}", piece_inputs,
                              [values[e] for e in ends], used),
            opset_imports=model.opset_import)
        piece.ir_version = max(model.ir_version, IR_VERSION)
        found.append(piece)
        available |= set(ends)
    return found


def runner(path: Path, model: onnx.ModelProto, inputs: list[str], backend: str,
           policy: ThreadPolicy):
    """A call `inputs -> outputs` of `model` (saved at `path`) on `backend`."""
    onnx.save(model, path)
    if backend == "openvino":
        return openvino_model(path, policy)
    return onnxruntime_session(path, inputs, policy)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", help="an .onnx model")
    p.add_argument("cuts", help="tensor names to cut at, comma-separated, in order")
    p.add_argument("--backend", choices=("openvino", "onnxruntime"), default="openvino")
    p.add_argument("--rounds", type=int, default=16)
    args = p.parse_args()
    if args.rounds < 1:
        raise CollageError("--rounds must be at least 1")
    model = load_model(args.model)
    if model.onnx_path is None:
        raise CollageError(f"{args.model}: not an .onnx model")
    proto = onnx.load(model.onnx_path)
    parts = pieces(proto, [c for c in args.cuts.split(",") if c])
    policy = ThreadPolicy()
    with tempfile.TemporaryDirectory() as tmp:
        whole = runner(Path(tmp) / "whole.onnx", proto, model.input_names, args.backend,
                       policy)
        calls = []
        for i, part in enumerate(parts):
            names = [v.name for v in part.graph.input]
            calls.append((runner(Path(tmp) / f"piece{i}.onnx", part, names, args.backend,
                                 policy), names, [v.name for v in part.graph.output]))

    def chain(xs: list[np.ndarray]) -> list[np.ndarray]:
        tensors = dict(zip(model.input_names, xs))
        for call, names, ends in calls:
            tensors.update(zip(ends, call([tensors[n] for n in names])))
        return [tensors[o] for o in model.output_names]

    inputs = random_inputs(model, 0)
    configs = {"whole": whole, f"{len(parts)} pieces": chain}
    check_agreement(configs, inputs, model.output_names, rtol=1e-3, atol=1e-4)
    samples = measure(configs, inputs, args.rounds, warmup=1, sample_s=SAMPLE_S)
    print(f"{Path(args.model).name} on {args.backend}, cut at {args.cuts}, "
          f"{policy.threads} threads, {args.rounds} rounds")
    for name, values in samples.items():
        ratio = median_ci([a / b for a, b in zip(values, samples["whole"])])
        print(f"  {name:10} {statistics.median(values) * 1e3:9.3f} ms  {ratio.median:.3f}x "
              f"({ratio.low:.3f}-{ratio.high:.3f}) of whole")


if __name__ == "__main__":
    try:
        main()
    except CollageError as e:
        sys.exit(f"error: {e}")
