"""Is the faster backend of a model the same in every process, minute after minute?

    python benchmarks/experiments/process_spread.py MODEL.onnx [--processes 4] [--rounds 30]

Starts `--processes` fresh Python processes one after another; each times ONNX Runtime
and OpenVINO on the whole ONNX file (as `collage bench` runs them alone) in interleaved
rounds of steady-state samples (`collage bench`'s `measure`: 5 ms each), with the
process's thread policy, and prints both medians and the median per-round ratio
ONNX Runtime / OpenVINO. On the MNIST CNN, five processes in a row gave 0.89-0.91
(ONNX Runtime 35-39 us) and six processes a few minutes later 1.16-1.18 (27 us): the
faster backend changes with the machine's state, so refinement (deciding at one time)
and the benchmark (timing at another) can disagree.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.errors import CollageError
from collage_xdsl.tools.bench import measure, onnxruntime_session, openvino_model
from collage_xdsl.tools.model import load_model, random_inputs


def one_process(model_path: Path, rounds: int) -> str:
    """Time both backends in this process; one line of results."""
    model = load_model(str(model_path))
    inputs = random_inputs(model, 0)
    policy = ThreadPolicy()
    runs = {"onnxruntime": onnxruntime_session(model_path, model.input_names, policy),
            "openvino": openvino_model(model_path, policy)}
    samples = measure(runs, inputs, rounds, warmup=1)
    ratio = statistics.median(a / b for a, b in zip(samples["onnxruntime"],
                                                    samples["openvino"]))
    medians = "  ".join(f"{name} {statistics.median(s) * 1e3:.4g} ms"
                        for name, s in samples.items())
    return f"{medians}  onnxruntime/openvino {ratio:.3f}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", type=Path)
    p.add_argument("--processes", type=int, default=4)
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if not args.model.is_file():
        raise CollageError(f"{args.model}: no such file")
    if args.one:
        print(one_process(args.model, args.rounds))
        return
    for i in range(args.processes):
        done = subprocess.run([sys.executable, __file__, str(args.model), "--one",
                               "--rounds", str(args.rounds)],
                              capture_output=True, text=True, check=False)
        line = done.stdout.strip() or f"failed: {done.stderr.strip().splitlines()[-1:]}"
        print(f"process {i + 1}: {line}", flush=True)


if __name__ == "__main__":
    try:
        main()
    except CollageError as e:
        sys.exit(f"error: {e}")
