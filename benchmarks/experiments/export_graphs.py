"""Why does a library run our export of a model faster or slower than the ONNX file?

    python benchmarks/experiments/export_graphs.py MODEL.onnx [--backend onnxruntime|openvino]
                                                   [--rounds 15]

Imports MODEL, assigns the whole of it to one kernel of the backend
(`collage-assign{fusion=whole}`) and exports that kernel to ONNX as the codegen does. The
file and the export are each compiled as the codegen configures the backend (the
process's threads; ONNX Runtime with all graph optimisations, OpenVINO in f32). Prints
how the two compiled graphs differ, per op type: for ONNX Runtime the nodes of its
optimised graph (`domain::op` outside the default domain), for OpenVINO the layers of
the CPU plugin's runtime model (`layerType`, a fused layer counted once). Then both run
side by side in interleaved rounds (`collage_xdsl.measure.timing`: one 50 ms sample each per
round): their median latencies and the median per-round ratio of the export to the file.
Outputs are checked to agree first (`collage bench`'s `check_agreement`).

On light ShuffleNet the file adds its residual branches with opset 9's `Sum`, which we
import as `add` and export as `Add`. ONNX Runtime fuses an `Add` and the ReLU after it
into the grouped convolution before it (`com.microsoft::FusedConv`), but not a `Sum`:
on the bench25 VM 23 fused convolutions against 13, the export 0.919x of the file (4.40
against 4.86 ms). Light Inception-v2's export ran 1.040x of the file (`--rounds 10`)
until the importer ran xDSL's `cse` (de16fd3); then both compiled graphs had the same
129 nodes by op type and the export ran 1.008x (`--rounds 30`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import onnx
import onnxruntime as ort

from collage_xdsl.backends.onnx_export import export_onnx
from collage_xdsl.backends.onnxruntime.lowering import session_options
from collage_xdsl.backends.openvino.lowering import core
from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.core.outline import kernel_functions
from collage_xdsl.errors import CollageError
from collage_xdsl.planner.pipeline import assign_module
from collage_xdsl.tools.bench import Run, check_agreement, measure, openvino_run
from collage_xdsl.tools.model import load_model, random_inputs

SAMPLE_S = 0.05


def onnxruntime_graph(path: Path, policy: ThreadPolicy, scratch: Path
                      ) -> tuple[Run, Counter[str]]:
    """A session over `path` and the nodes per op type of its optimised graph (saved to
    `scratch`)."""
    options = session_options(policy)
    options.optimized_model_filepath = str(scratch)
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    nodes = onnx.load(scratch).graph.node
    names = [i.name for i in session.get_inputs()]
    return (lambda inputs: session.run(None, dict(zip(names, inputs))),
            Counter(f"{n.domain}::{n.op_type}" if n.domain else n.op_type for n in nodes))


def openvino_graph(path: Path, policy: ThreadPolicy, scratch: Path
                   ) -> tuple[Run, Counter[str]]:
    """`path` compiled for the CPU and the layers per `layerType` of its runtime model."""
    compiled = core().compile_model(core().read_model(str(path)), "CPU",
                                    policy.openvino_config())
    layers = compiled.get_runtime_model().get_ordered_ops()
    return (openvino_run(compiled),
            Counter(op.get_rt_info()["layerType"].astype(str) for op in layers))


GRAPHS: dict[str, Callable[[Path, ThreadPolicy, Path], tuple[Run, Counter[str]]]] = {
    "onnxruntime": onnxruntime_graph, "openvino": openvino_graph}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", help="an .onnx model")
    p.add_argument("--backend", choices=sorted(GRAPHS), default="onnxruntime")
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args()
    if args.rounds < 1:
        raise CollageError("--rounds must be at least 1")
    model = load_model(args.model)
    if model.onnx_path is None:
        raise CollageError(f"{args.model}: not an .onnx model")
    kernels = kernel_functions(assign_module(model.module, args.backend, "whole"))
    if len(kernels) != 1:
        raise CollageError(f"{args.model}: the whole model is {len(kernels)} kernels of "
                           f"{args.backend}, not one (its ops are not one connected region "
                           "the backend takes)")
    (kernel,) = kernels
    policy = ThreadPolicy()
    inputs = random_inputs(model, 0)
    runs: dict[str, Run] = {}
    counts: dict[str, Counter[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "export.onnx"
        onnx.save(export_onnx(kernel, args.backend), export)
        for name, path in (("file", model.onnx_path), ("export", export)):
            scratch = Path(tmp) / f"{name}.compiled.onnx"
            runs[name], counts[name] = GRAPHS[args.backend](path, policy, scratch)
    check_agreement(runs, inputs, model.output_names, rtol=1e-3, atol=1e-4)
    print(f"{args.model} on {args.backend}: compiled graphs, op types where they differ")
    differ = [op for op in sorted(counts["file"].keys() | counts["export"].keys())
              if counts["file"][op] != counts["export"][op]]
    if differ:
        print(f"  {'op':32} {'file':>6} {'export':>6}")
        for op in differ:
            print(f"  {op:32} {counts['file'][op]:6} {counts['export'][op]:6}")
    else:
        print(f"  none: {sum(counts['file'].values())} of the same op types in each")
    samples = measure(runs, inputs, args.rounds, warmup=0, sample_s=SAMPLE_S)
    ratio = statistics.median(a / b for a, b in zip(samples["export"], samples["file"]))
    print(f"{policy.threads} threads, {args.rounds} rounds: file "
          f"{statistics.median(samples['file']) * 1e3:.3f} ms, export "
          f"{statistics.median(samples['export']) * 1e3:.3f} ms, export {ratio:.3f}x of file")


if __name__ == "__main__":
    try:
        main()
    except CollageError as e:
        sys.exit(f"error: {e}")
