"""How much does ONNX Runtime's thread spinning change a whole model's latency here?

    python benchmarks/experiments/ort_spinning.py MODEL.onnx [MODEL.onnx ...] [--rounds 14]

Per model: three ONNX Runtime sessions of the whole model, one per `ThreadPolicy`
spinning setting ("off", "run", "on"; threads and pinning as the process's policy), and
OpenVINO on the file for reference, timed side by side in balanced interleaved rounds
(`collage_xdsl.measure.timing`: one 50 ms sample each per round). Prints each one's median
per-round ratio to spinning "off". Then what each setting leaves behind: a 50 ms
OpenVINO sample right after a 50 ms sample of each session, and after a 20 ms pause,
as a ratio to OpenVINO right after "off". `ThreadPolicy`'s default, "run", comes from
this script.

Median per-round ratio to "off" (`--rounds 14`, two processes; the "on" column also
slows the sessions timed after it, so it flatters ONNX Runtime):

| model | "run" | "on" |
|---|---:|---:|
| MLP | 0.91, 0.94 | 0.66, 0.70 |
| MNIST CNN | 0.84, 0.97 | 0.66, 1.15 |
| ShuffleNet | 0.82, 0.82 | 0.82, 0.82 |
| SqueezeNet | 0.95, 0.92 | 0.89, 0.90 |
| DenseNet-121 | 0.91, 0.92 | 0.89, 0.90 |
| transformer encoder | 0.95, 1.01 | 0.94, 0.92 |
| ResNet-50 | 1.04, 1.02 | 0.99, 0.97 |

Left behind: OpenVINO's next 50 ms of the MLP, light SqueezeNet or the transformer
encoder ran 1.18-1.31x slower right after "on", 1.08-1.11x after a 20 ms pause, and as
fast as after "off" right after "run".
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from collage_xdsl.backends.threads import SPINNING, ThreadPolicy
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.timing import calls_per_sample, interleave, take_sample
from collage_xdsl.tools.bench import onnxruntime_session, openvino_model
from collage_xdsl.tools.model import load_model, random_inputs

SAMPLE_S = 0.05
PAUSE_S = 0.02


def sessions(path: Path) -> dict[str, Callable[[], object]]:
    """A call of the whole model per ONNX Runtime spinning setting, and on OpenVINO."""
    model = load_model(str(path))
    inputs = random_inputs(model, 0)
    policy = ThreadPolicy()
    runs = {}
    for spinning in SPINNING:
        session = onnxruntime_session(path, model.input_names,
                                      replace(policy, spinning=spinning))
        runs[f"onnxruntime {spinning}"] = (lambda run: lambda: run(inputs))(session)
    ov = openvino_model(path, policy)
    runs["openvino"] = lambda: ov(inputs)
    return runs


def ratios(runs: dict[str, Callable[[], object]], calls: dict[str, int], rounds: int
           ) -> dict[str, float]:
    """Median per-round ratio to ONNX Runtime with spinning "off", per configuration."""
    samples = interleave(list(runs), range(rounds),
                         lambda k: take_sample(runs[k], calls[k]).steady)
    base = samples["onnxruntime off"]
    return {k: statistics.median(a / b for a, b in zip(v, base)) for k, v in samples.items()}


def left_behind(runs: dict[str, Callable[[], object]], calls: dict[str, int], rounds: int
                ) -> dict[tuple[str, float], float]:
    """OpenVINO's median right after each ONNX Runtime setting (pause 0 or `PAUSE_S`), as
    a ratio to its median right after spinning "off"."""
    samples: dict[tuple[str, float], list[float]] = {}
    for _ in range(rounds):
        for spinning in SPINNING:
            for pause in (0.0, PAUSE_S):
                take_sample(runs[f"onnxruntime {spinning}"], calls[f"onnxruntime {spinning}"])
                time.sleep(pause)
                samples.setdefault((spinning, pause), []).append(
                    take_sample(runs["openvino"], calls["openvino"]).steady)
    base = statistics.median(samples[("off", 0.0)])
    return {k: statistics.median(v) / base for k, v in samples.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", type=Path, nargs="+")
    p.add_argument("--rounds", type=int, default=14)
    args = p.parse_args()
    for path in args.models:
        runs = sessions(path)
        calls = {k: calls_per_sample(SAMPLE_S, take_sample(run, 3).steady)
                 for k, run in runs.items()}
        found = ratios(runs, calls, args.rounds)
        print(f"{path.stem}: " + ", ".join(f"{k} {v:.3f}x" for k, v in found.items()),
              flush=True)
        after = left_behind(runs, calls, args.rounds)
        print(f"{path.stem}: openvino right after onnxruntime " + ", ".join(
            f"{spinning}{f' + {pause * 1e3:.0f} ms' if pause else ''} {v:.3f}x"
            for (spinning, pause), v in after.items()), flush=True)


if __name__ == "__main__":
    try:
        main()
    except CollageError as e:
        sys.exit(f"error: {e}")
