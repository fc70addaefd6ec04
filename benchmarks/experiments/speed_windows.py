"""How long must a kernel be timed for its median to stop depending on when it was timed?

    python benchmarks/experiments/speed_windows.py MODEL.onnx [--backend onnxruntime] [--seconds 30]

Compiles the whole model as one kernel on `--backend` (as the measured estimator builds
and compiles candidates, with the process's thread policy), calls it back to back for
`--seconds`, cuts the calls into windows of 10 ms to 3 s and prints the coefficient of
variation of the windows' medians, and the autocorrelation of 50 ms windows' medians.
On this 2-core VM (ONNX Runtime, 30 s each): the MNIST CNN's 50 ms windows varied by 17%,
its 1 s windows by 6%; light ShuffleNet's by 22% and 11%; neighbouring 50 ms windows
correlated (+0.42, +0.50), windows 0.25 s apart hardly at all on the MNIST CNN. A kernel
measured in a few milliseconds to 0.1 s gets whatever window it falls into, hence
`MeasureSettings.min_span_s` and measuring in batches (`collage_xdsl.measure.pool`).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from collage_xdsl.backends import compile_kernel
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.estimator import kernel_request, random_inputs
from collage_xdsl.measure.timing import timed
from collage_xdsl.tools.model import load_model

WINDOWS_S = (0.01, 0.05, 0.2, 1.0, 3.0)


def calls(model_path: str, backend: str, seconds: float) -> tuple[np.ndarray, np.ndarray]:
    """Start times and durations (s) of back-to-back calls of the whole-model kernel."""
    graph = DataflowGraph(load_model(model_path).main)
    module = kernel_request(SubGraph(graph, graph.kernel_nodes), backend).build()
    kernel = compile_kernel(backend, module)
    inputs = random_inputs(module)
    for _ in range(5):
        kernel(inputs)
    starts, durations = [], []
    end = time.perf_counter() + seconds
    while (t0 := time.perf_counter()) < end:
        starts.append(t0)
        durations.append(timed(lambda: kernel(inputs)))
    kernel.release()
    return np.array(starts) - starts[0], np.array(durations)


def window_medians(starts: np.ndarray, durations: np.ndarray, window_s: float) -> np.ndarray:
    """The median call of each full window of `window_s` with at least 3 calls."""
    index = (starts // window_s).astype(int)
    medians = [np.median(durations[index == i]) for i in range(index.max())
               if np.count_nonzero(index == i) >= 3]
    return np.array(medians)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--backend", default="onnxruntime")
    p.add_argument("--seconds", type=float, default=30.0)
    args = p.parse_args()
    starts, durations = calls(args.model, args.backend, args.seconds)
    print(f"{args.model} on {args.backend}: {len(durations)} calls, median "
          f"{np.median(durations) * 1e3:.4g} ms")
    for window in WINDOWS_S:
        m = window_medians(starts, durations, window)
        if len(m) >= 2:
            print(f"  windows of {window:g} s: {len(m)}, medians' coefficient of variation "
                  f"{m.std() / m.mean():.3f}, 10th-90th percentile "
                  f"{np.percentile(m, 10) * 1e3:.4g}-{np.percentile(m, 90) * 1e3:.4g} ms")
    m = window_medians(starts, durations, 0.05)
    for lag in (1, 2, 5, 20):
        if len(m) > lag + 2:
            print(f"  50 ms windows {lag} apart: autocorrelation "
                  f"{np.corrcoef(m[:-lag], m[lag:])[0, 1]:+.2f}")


if __name__ == "__main__":
    try:
        main()
    except CollageError as e:
        sys.exit(f"error: {e}")
