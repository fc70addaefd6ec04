"""How much does ONNX Runtime's thread spinning change a whole model's latency here?

    python scripts/ort_spinning.py MODEL.onnx [MODEL.onnx ...] [--rounds 14]

Per model: three ONNX Runtime sessions of the whole model, one per `ThreadPolicy`
spinning setting ("off", "run", "on"; threads and pinning as the process's policy), and
OpenVINO on the file for reference, timed side by side in balanced interleaved rounds
(`collage_xdsl.sampling`: one 50 ms sample each per round). Prints each one's median
per-round ratio to spinning "off". The figures in `collage_xdsl.codegen.threads` come
from this script.
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import replace
from pathlib import Path

import onnxruntime as ort

from collage_xdsl.codegen.onnxruntime import session_options
from collage_xdsl.codegen.threads import SPINNING, ThreadPolicy
from collage_xdsl.sampling import balanced_order, calls_per_sample, take_sample
from collage_xdsl.tools.collage import load_model, random_inputs
from collage_xdsl.tools.collage_bench import openvino_model

SAMPLE_S = 0.05


def ratios(path: Path, rounds: int) -> tuple[dict[str, float], float]:
    """Median per-round ratio to spinning "off" per configuration, and "off"'s median s."""
    model = load_model(str(path))
    inputs = random_inputs(model, 0)
    policy = ThreadPolicy()
    runs = {}
    for spinning in SPINNING:
        session = ort.InferenceSession(str(path), session_options(replace(policy, spinning=spinning)),
                                       providers=["CPUExecutionProvider"])
        runs[f"onnxruntime {spinning}"] = (
            lambda s: lambda: s.run(None, dict(zip(model.input_names, inputs))))(session)
    ov = openvino_model(path, policy)
    runs["openvino"] = lambda: ov(inputs)
    calls = {k: calls_per_sample(SAMPLE_S, take_sample(run, 3).steady) for k, run in runs.items()}
    samples: dict[str, list[float]] = {k: [] for k in runs}
    for r in range(rounds):
        for k in balanced_order(list(runs), r):
            samples[k].append(take_sample(runs[k], calls[k]).steady)
    base = samples["onnxruntime off"]
    return ({k: statistics.median(a / b for a, b in zip(v, base)) for k, v in samples.items()},
            statistics.median(base))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", type=Path, nargs="+")
    p.add_argument("--rounds", type=int, default=14)
    args = p.parse_args()
    for path in args.models:
        found, off_s = ratios(path, args.rounds)
        print(f"{path.stem}: " + ", ".join(f"{k} {v:.3f}x" for k, v in found.items())
              + f" (onnxruntime off {off_s * 1e3:.3f} ms)", flush=True)


if __name__ == "__main__":
    main()
