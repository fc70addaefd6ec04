"""Does one library run a model faster cut into pieces at given tensors than whole?

    python scripts/onnx_cuts.py MODEL.onnx TENSOR[,TENSOR...] [--backend openvino]
                                [--rounds 16]

Cuts the ONNX file at the named tensors, in order: piece i is every node the next cut
tensor (the last piece: the model's outputs) depends on, back to the graph inputs and the
cut tensors before it. Each piece and the whole model are compiled by `--backend`
(OpenVINO or ONNX Runtime, as `collage bench` runs them: the process's threads, f32) and,
after a check that the chained pieces give the whole model's outputs, timed side by side
in balanced interleaved rounds (`collage bench`'s `measure`: one 50 ms sample each per
round). Prints both medians and the median per-round ratio of the pieces to the whole
with its 95% confidence interval.

Collage's plans that beat OpenVINO alone (AlexNet, ZFNet-512) are OpenVINO's graph cut
so that no batch-1 fully connected layer keeps its ReLU (`openvino_fc_relu.py`); this
asks whether a given cut pays on its own, e.g. VGG-19 cut after its first Gemm:
`python scripts/onnx_cuts.py light_vgg19.onnx r38`.
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

from collage_xdsl.codegen.threads import ThreadPolicy
from collage_xdsl.errors import CollageError
from collage_xdsl.stats import median_ci
from collage_xdsl.tools.collage_bench import (check_agreement, measure, onnxruntime_session,
                                              openvino_model)

SAMPLE_S = 0.05
IR_VERSION = 7
"""At least this IR version for a piece: initializers need not be graph inputs (the light
model zoo's files are version 3), and ONNX Runtime 1.2x reads it."""
TYPES = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.INT64: np.int64,
         onnx.TensorProto.INT32: np.int32}


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


def runner(path: Path, model: onnx.ModelProto, backend: str, policy: ThreadPolicy):
    """A call `inputs -> outputs` of `model` (saved at `path`) on `backend`."""
    onnx.save(model, path)
    if backend == "openvino":
        return openvino_model(path, policy)
    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    return onnxruntime_session(path, names, policy)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", help="an .onnx model")
    p.add_argument("cuts", help="tensor names to cut at, comma-separated, in order")
    p.add_argument("--backend", choices=("openvino", "onnxruntime"), default="openvino")
    p.add_argument("--rounds", type=int, default=16)
    args = p.parse_args()
    if args.rounds < 1:
        raise CollageError("--rounds must be at least 1")
    if not Path(args.model).is_file():
        raise CollageError(f"{args.model}: no such file")
    model = onnx.load(args.model)
    parts = pieces(model, [c for c in args.cuts.split(",") if c])
    policy = ThreadPolicy()
    with tempfile.TemporaryDirectory() as tmp:
        whole = runner(Path(tmp) / "whole.onnx", model, args.backend, policy)
        calls = [(runner(Path(tmp) / f"piece{i}.onnx", part, args.backend, policy),
                  [v.name for v in part.graph.input], [v.name for v in part.graph.output])
                 for i, part in enumerate(parts)]
    initializers = {t.name for t in model.graph.initializer}
    graph_inputs = [v for v in model.graph.input if v.name not in initializers]
    outputs = [o.name for o in model.graph.output]

    def chain(xs: list[np.ndarray]) -> list[np.ndarray]:
        tensors = {v.name: x for v, x in zip(graph_inputs, xs)}
        for call, names, ends in calls:
            tensors.update(zip(ends, call([tensors[n] for n in names])))
        return [tensors[o] for o in outputs]

    rng = np.random.default_rng(0)
    inputs = []
    for v in graph_inputs:
        t = v.type.tensor_type
        dtype = TYPES.get(t.elem_type)
        if dtype is None or any(not d.dim_value for d in t.shape.dim):
            raise CollageError(f"input {v.name!r}: only static float32/int32/int64 inputs")
        shape = [d.dim_value for d in t.shape.dim]
        inputs.append(rng.standard_normal(shape).astype(dtype) if dtype == np.float32
                      else rng.integers(0, 2, shape).astype(dtype))
    configs = {"whole": whole, f"{len(parts)} pieces": chain}
    check_agreement(configs, inputs, outputs, rtol=1e-3, atol=1e-4)
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
