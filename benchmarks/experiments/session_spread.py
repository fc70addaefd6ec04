"""Do equal ONNX Runtime sessions of one model run equally fast in one process?

    python benchmarks/experiments/session_spread.py MODEL.onnx [--sessions 6] [--rounds 30]

Creates `--sessions` ONNX Runtime sessions of the whole model (as `collage bench` runs
ONNX Runtime alone), then OpenVINO on the file, ONNX Runtime on our export of the whole
model (`collage-assign{backend=onnxruntime fusion=whole}`, as Collage runs a plan of
ONNX Runtime alone) and `collage-assign{backend=tvm}` beside them, and times all of them
in interleaved rounds (one call each, in an order where each follows each other equally
often: `collage_xdsl.measure.timing.balanced_order`), with the process's thread policy.
Prints each one's median in ms. In `benchmarks/run.py`, two equal sessions of light
SqueezeNet ran 1.7x apart for a whole run; this is the smallest setting to look for that
in, and for a gap between the model's own session and our export's.

On light SqueezeNet, with the threads unpinned: one of six equal ONNX Runtime sessions
ran 1.7x the others, in 3 of 5 processes (its worker shared a CPU with the calling
thread), and OpenVINO took 4.0-4.3 ms in 3 of 6 processes against 2.3-2.4 ms in the
others; pinned (`ThreadPolicy`), no outlier in 6 processes, OpenVINO 2.3-3.2 ms. With
`--sessions 2 --rounds 600`, our export ran 1.1% and 1.8% above the model's own
sessions in two runs (0.1-0.8% per call over three sessions of each): a small real gap.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.timing import interleave, timed
from collage_xdsl.planner.pipeline import assign_module
from collage_xdsl.runtime.executable import Executable
from collage_xdsl.tools.bench import onnxruntime_session, openvino_model
from collage_xdsl.tools.model import load_model, random_inputs


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", type=Path)
    p.add_argument("--sessions", type=int, default=6)
    p.add_argument("--rounds", type=int, default=30)
    args = p.parse_args()
    model = load_model(str(args.model))
    inputs = random_inputs(model, 0)
    policy = ThreadPolicy()
    runs = {f"onnxruntime {i}": onnxruntime_session(args.model, model.input_names, policy)
            for i in range(args.sessions)}
    runs["openvino"] = openvino_model(args.model, policy)
    runs["onnxruntime, ours"] = Executable(
        assign_module(model.module, "onnxruntime", fusion="whole"), threads=policy).run
    runs["tvm"] = Executable(assign_module(model.module, "tvm"), threads=policy).run
    for run in runs.values():
        run(inputs)
    samples = interleave(list(runs), range(args.rounds),
                         lambda name: timed(lambda: runs[name](inputs)))
    for name, s in samples.items():
        print(f"{name:<18} {statistics.median(s) * 1e3:8.3f} ms")


if __name__ == "__main__":
    try:
        main()
    except CollageError as e:
        sys.exit(f"error: {e}")
