"""Why does ONNX Runtime run our export of a model faster or slower than the ONNX file?

    python scripts/ort_export_graphs.py MODEL.onnx [--rounds 15]

Imports MODEL, assigns the whole of it to one ONNX Runtime kernel
(`collage-assign{backend=onnxruntime fusion=whole}`) and exports that kernel to ONNX as
the codegen does. Both the file and the export get a session as the codegen configures it
(`session_options`: the process's threads, all graph optimisations) that saves ONNX
Runtime's optimised graph. Prints the node counts per op type of each optimised graph
where they differ, then both sessions' median latencies timed side by side in interleaved
rounds (`collage_xdsl.sampling`: one 50 ms sample each per round) and the median
per-round ratio of the export to the file. Outputs are checked to agree first.

On light ShuffleNet the file adds its residual branches with opset 9's `Sum`, which we
import as `add` and export as `Add`. ONNX Runtime fuses an `Add` and the ReLU after it
into the grouped convolution before it (`com.microsoft::FusedConv`), but not a `Sum`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx

from collage_xdsl.codegen.onnx_export import export_onnx
from collage_xdsl.codegen.threads import ThreadPolicy
from collage_xdsl.errors import CollageError
from collage_xdsl.pipeline import assign_module, kernel_functions
from collage_xdsl.tools.collage import load_model, random_inputs
from collage_xdsl.tools.collage_bench import measure

SAMPLE_S = 0.05


def optimised_session(path: Path, saved: Path, policy: ThreadPolicy):
    """An ONNX Runtime session over `path` that writes its optimised graph to `saved`."""
    import onnxruntime as ort

    from collage_xdsl.codegen.onnxruntime import session_options

    options = session_options(policy)
    options.optimized_model_filepath = str(saved)
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def run_of(session) -> Callable[[list[np.ndarray]], list[np.ndarray]]:
    names = [i.name for i in session.get_inputs()]
    return lambda inputs: session.run(None, dict(zip(names, inputs)))


def op_counts(path: Path) -> Counter[str]:
    """Nodes per op type (`domain::op` outside the default domain) of the model at `path`."""
    nodes = onnx.load(path).graph.node
    return Counter(f"{n.domain}::{n.op_type}" if n.domain else n.op_type for n in nodes)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", help="an .onnx model")
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args()
    if args.rounds < 1:
        raise CollageError("--rounds must be at least 1")
    model = load_model(args.model)
    if model.onnx_path is None:
        raise CollageError(f"{args.model}: not an .onnx model")
    (kernel,) = kernel_functions(assign_module(model.module, "onnxruntime", "whole"))
    policy = ThreadPolicy()
    inputs = random_inputs(model, 0)
    runs, counts = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "export.onnx"
        onnx.save(export_onnx(kernel, "onnxruntime"), export)
        for name, path in (("file", model.onnx_path), ("export", export)):
            saved = Path(tmp) / f"{name}.optimised.onnx"
            runs[name] = run_of(optimised_session(path, saved, policy))
            counts[name] = op_counts(saved)
    for got, want in zip(runs["export"](inputs), runs["file"](inputs)):
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-3, atol=1e-4):
            raise CollageError(f"{args.model}: the export's outputs differ from the file's")
    print(f"{args.model}: ONNX Runtime's optimised graphs, nodes per op type where they differ")
    print(f"  {'op':32} {'file':>6} {'export':>6}")
    for op in sorted(counts["file"].keys() | counts["export"].keys()):
        if counts["file"][op] != counts["export"][op]:
            print(f"  {op:32} {counts['file'][op]:6} {counts['export'][op]:6}")
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
