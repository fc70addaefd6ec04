"""IREE against the other backends, each alone: per model, the share of its ops the linalg
lowering covers, each backend's whole-model compile time and its latency measured side by
side; then per op kind, one single-op kernel of each kind the models use, timed on every
backend side by side.

    python benchmarks/tools/iree_alone.py --models mnist_cnn,mlp,transformer_encoder [--rounds 15]

Whole models run as `collage bench` and `benchmarks/run.py` run a single backend
(`collage_xdsl.tools.bench.whole_model`), here all in this process; latencies are the median
over interleaved rounds (`collage_xdsl.measure.side_by_side`) and are printed as ratios to
the fastest backend.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from xdsl.dialects.func import FuncOp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_models import model_file, parse_models  # noqa: E402
from collage_xdsl.dialects import collage as C  # noqa: E402

from collage_xdsl.backends import compile_kernel  # noqa: E402
from collage_xdsl.backends.kernel import kernel_function  # noqa: E402
from collage_xdsl.backends.threads import ThreadPolicy  # noqa: E402
from collage_xdsl.core.graph import DataflowGraph  # noqa: E402
from collage_xdsl.core.index_set import bits  # noqa: E402
from collage_xdsl.core.subgraph import SubGraph  # noqa: E402
from collage_xdsl.ir.inputs import random_arguments  # noqa: E402
from collage_xdsl.linalg import lower_to_linalg  # noqa: E402
from collage_xdsl.measure.side_by_side import InProcess, time_side_by_side  # noqa: E402
from collage_xdsl.tools.bench import whole_model  # noqa: E402
from collage_xdsl.tools.model import load_model, random_inputs  # noqa: E402

BACKENDS = ("onnxruntime", "openvino", "tvm", "iree")


def _medians(runs, inputs, rounds: int) -> dict[str, float]:
    timing = time_side_by_side({n: InProcess(run, inputs) for n, run in runs.items()},
                               list(runs), rounds, 2, 1e9, rounds, 0.02)
    for name, reason in timing.failures.items():
        print(f"  {name}: failed: {reason}")
    return {name: float(np.median([s for s in samples if s is not None]))
            for name, samples in timing.samples.items() if any(s is not None for s in samples)}


def _ratios(medians: dict[str, float]) -> str:
    best = min(medians.values())
    return "  ".join(f"{b} {medians[b] * 1e3:.3f} ms ({medians[b] / best:.2f}x)"
                     for b in BACKENDS if b in medians)


def bench_model(name: str, work: Path, policy: ThreadPolicy, rounds: int) -> None:
    model = load_model(model_file(name, work))
    ops = [op for op in model.module.walk()
           if op.name.startswith("collage.") and not isinstance(op, C.ConstantOp)]
    report = lower_to_linalg(model.module.clone())
    covered = len(ops) - len(report.unlowered)
    print(f"{name}: {len(ops)} ops, lowering covers {covered} ({covered / len(ops):.0%})")
    runs, compile_s = {}, {}
    for backend in BACKENDS:
        start = time.perf_counter()
        runs[backend] = whole_model(backend, model, policy)
        compile_s[backend] = time.perf_counter() - start
    print("  compile: " + "  ".join(f"{b} {s:.1f} s" for b, s in compile_s.items()))
    print("  latency: " + _ratios(_medians(runs, random_inputs(model, 0), rounds)))


def single_op_kernels(names: list[str], work: Path) -> dict[str, FuncOp]:
    """The first op of each kind in the models, as the kernel function its singleton
    candidate is (`SubGraph.extract`: weights cloned in)."""
    kernels = {}
    for name in names:
        module = load_model(model_file(name, work)).module
        graph = DataflowGraph(next(op for op in module.ops if isinstance(op, FuncOp)))
        for node in bits(graph.kernel_nodes):
            kind = graph.nodes[node].op.name
            if kind.startswith("collage.") and kind not in kernels:
                kernels[kind] = kernel_function(SubGraph(graph, 1 << node).extract())
    return kernels


def bench_op_kinds(names: list[str], work: Path, policy: ThreadPolicy, rounds: int) -> None:
    wins = Counter()
    for kind, func in sorted(single_op_kernels(names, work).items()):
        feeds = random_arguments(func, seed=0, int_high=5)
        runs = {}
        for backend in BACKENDS:
            try:
                runs[backend] = compile_kernel(backend, func, policy)
            except Exception as e:  # a backend that cannot compile the op is left out
                print(f"  {kind} {backend}: {str(e).splitlines()[0][:100]}")
        medians = _medians(runs, feeds, rounds)
        best = min(medians, key=medians.get)
        wins[best] += 1
        iree = f"iree {medians['iree'] / medians[best]:.2f}x of best" if "iree" in medians else ""
        print(f"{kind[8:]:>18}: best {best}; {iree}; {_ratios(medians)}")
    print("wins per backend: " + ", ".join(f"{b} {n}" for b, n in wins.most_common()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="mnist_cnn,mlp,transformer_encoder")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--work", type=Path, default=Path(__file__).parent.parent / "work")
    parser.add_argument("--no-op-kinds", action="store_true")
    args = parser.parse_args()
    policy = ThreadPolicy.resolve(args.threads)
    names = parse_models(args.models)
    for name in names:
        bench_model(name, args.work, policy, args.rounds)
    if not args.no_op_kinds:
        bench_op_kinds(names, args.work, policy, args.rounds)


if __name__ == "__main__":
    main()
