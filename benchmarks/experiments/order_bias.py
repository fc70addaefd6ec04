"""Does the order of interleaved samples favour some configurations? Equal ones tell.

    python benchmarks/experiments/order_bias.py MODEL.onnx [--backend tvm] [--seconds 12]
                                                [--sample-ms 1] [--runs 3]

Five configurations, timed side by side in rounds for `--seconds` (one sample each per
round, `collage_xdsl.measure.timing`): three that run one function, `A` and `A2` the same
callable and `B` a second build of the model on `--backend` (the whole model, as the
benchmark's single backends), and ONNX Runtime and OpenVINO on the file. Prints the
medians of the per-round ratios A/B, A/A2 and B/A2, which only the order can move from
1 (and the standard deviation of their logs: how much one round's ratio scatters), for
two orders, `--runs` times each, alternating: "fixed", row r mod p of one Williams
square (`balanced_order(items, r % p)`: the first block's labelling throughout), and
"per block", `balanced_order(items, r)`, a labelling per block of p rounds.

On the MLP (`--runs 4`, 1 ms samples, 1800-2300 rounds, 2026-11-25): "fixed", equal
configurations measured 0.982-1.006 of each other, one pair 0.982-0.985 in all four
runs; "per block", 0.994-1.002, hence `balanced_order`'s labelling per block. One
round's ratio of equal configurations scattered with a standard deviation of its log of
0.11-0.17 (the MLP and SqueezeNet, 5 ms and 50 ms samples alike).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.timing import (
    balanced_order,
    calls_per_sample,
    interleave,
    rounds_within,
    square_rounds,
    take_sample,
)
from collage_xdsl.tools.bench import whole_model
from collage_xdsl.tools.model import load_model, random_inputs

EQUAL = (("A", "B"), ("A", "A2"), ("B", "A2"))


def configurations(path: Path, backend: str, policy: ThreadPolicy) -> dict:
    """name: a call of the whole model with fixed inputs."""
    model = load_model(str(path))
    inputs = random_inputs(model, 0)
    a, b = whole_model(backend, model, policy), whole_model(backend, model, policy)
    ort = whole_model("onnxruntime", model, policy)
    ov = whole_model("openvino", model, policy)
    return {"A": lambda: a(inputs), "B": lambda: b(inputs), "A2": lambda: a(inputs),
            "onnxruntime": lambda: ort(inputs), "openvino": lambda: ov(inputs)}


def equal_ratios(runs: dict, calls: int, seconds: float, per_block: bool
                 ) -> tuple[int, dict[tuple[str, str], tuple[float, float]]]:
    """Rounds for `seconds`; (rounds, per pair in EQUAL the median per-round ratio and the
    standard deviation of the per-round ratios' log)."""
    period = square_rounds(len(runs))

    def order(names: Sequence[str], r: int) -> list[str]:
        return balanced_order(names, r if per_block else r % period)

    samples = interleave(list(runs), rounds_within(1, seconds, sys.maxsize),
                         lambda k: take_sample(runs[k], calls).steady, order)
    logs = {(x, y): np.log(np.array(samples[x]) / np.array(samples[y])) for x, y in EQUAL}
    return len(samples["A"]), {pair: (float(np.exp(np.median(v))), float(v.std()))
                               for pair, v in logs.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", type=Path)
    p.add_argument("--backend", default="tvm", choices=("tvm", "onnxruntime", "openvino"))
    p.add_argument("--seconds", type=float, default=12.0)
    p.add_argument("--sample-ms", type=float, default=1.0)
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    if not args.model.is_file():
        raise CollageError(f"{args.model}: no such file")
    runs = configurations(args.model, args.backend, ThreadPolicy())
    for run in runs.values():
        for _ in range(5):
            run()
    calls = calls_per_sample(args.sample_ms / 1e3, take_sample(runs["A"], 20).steady)
    for _ in range(args.runs):
        for per_block in (False, True):
            rounds, found = equal_ratios(runs, calls, args.seconds, per_block)
            print(f"{args.model.stem} {'per block' if per_block else 'fixed'}: {rounds} rounds "
                  f"of {calls} calls, " + ", ".join(f"{x}/{y} {m:.4f} (sd {sd:.3f})"
                                                    for (x, y), (m, sd) in found.items()),
                  flush=True)


if __name__ == "__main__":
    try:
        main()
    except CollageError as e:
        sys.exit(f"error: {e}")
