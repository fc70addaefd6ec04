"""How long do a library's threads keep a CPU busy after its call has returned?

    python benchmarks/experiments/spin_after_run.py MODEL.onnx [--calls 200] [--trials 5]

Per ONNX Runtime spinning setting ("off", "run", "on", and its own defaults,
`ThreadPolicy.library_defaults`), a session of the whole model makes `--calls` calls back to
back; then, for 300 ms, the CPU time this process's other threads use
(`collage_xdsl.measure.timing.other_threads_cpu`) is read every 0.5 ms. Prints, per setting
and trial, the CPU milliseconds they used after the last call returned and when they last
used any; then how long `collage_xdsl.measure.timing.settle` waits after the same calls.
The quiet window and the bound of `settle` come from this script (`docs/measurement.md`,
"Configurations in processes of their own").

On the MLP (`--trials 4`, ONNX Runtime 1.31, 2 threads, a 2-core Intel Xeon VM with a
benchmark running beside it at a higher priority): with ONNX Runtime's default spinning
("on", and its own defaults) its threads used 36-51 ms of CPU after the last call returned,
the last of it 48-148 ms after; with "run" or "off", none. `settle` waited 63-111 ms after
spinning threads, 20-21 ms after the others.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

from collage_xdsl.backends.threads import SPINNING, ThreadPolicy
from collage_xdsl.measure.timing import other_threads_cpu, settle
from collage_xdsl.tools.bench import onnxruntime_session
from collage_xdsl.tools.model import load_model, random_inputs

WATCH_S = 0.3


def after_run(run, calls: int) -> tuple[float, float]:
    """(CPU seconds the other threads used after `calls` calls, seconds until they last
    used any)."""
    for _ in range(calls):
        run()
    started, used = time.perf_counter(), other_threads_cpu()
    last, now_used = 0.0, used
    while (now := time.perf_counter() - started) < WATCH_S:
        cpu = other_threads_cpu()
        if cpu > now_used + 1e-5:
            last = now
        now_used = cpu
        time.sleep(0.0005)
    return now_used - used, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    model = load_model(str(args.model))
    inputs = random_inputs(model, 0)
    policies = {s: replace(ThreadPolicy(), spinning=s) for s in SPINNING}
    policies["library defaults"] = ThreadPolicy.library_defaults()
    for name, policy in policies.items():
        session = onnxruntime_session(args.model, model.input_names, policy)

        def run(session=session):
            return session(inputs)

        for trial in range(args.trials):
            cpu, last = after_run(run, args.calls)
            for _ in range(args.calls):
                run()
            waited = settle()
            print(f"{name:>16} trial {trial}: {cpu * 1e3:6.1f} ms of CPU after the run, the "
                  f"last {last * 1e3:6.1f} ms after it; settle waited {waited * 1e3:6.1f} ms")
        del session
        time.sleep(WATCH_S)


if __name__ == "__main__":
    main()
