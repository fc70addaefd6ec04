"""What a kernel costs in a whole run beyond its cost called again and again.

    python scripts/in_run_cost.py ARTIFACT_DIR [--runs 30] [--top 10]

For an artifact of `collage compile`, replays the run's kernel calls in order
(`Executable.kernel_calls`), calling each kernel twice in a row: the first call comes
right after the previous kernel of the plan, as in a run; the second repeats it at once,
as the measured estimator times kernels. Prints the sums of the per-call medians over
`--runs` replays, their ratio, and the calls that lose most to being first. The thread
count is the process's (`COLLAGE_THREADS`).
"""

from __future__ import annotations

import argparse
import statistics
import time

from collage_xdsl.artifact import load_artifact
from collage_xdsl.inputs import random_arguments
from collage_xdsl.runtime import Executable


def timed(call) -> float:
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("artifact")
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--top", type=int, default=10)
    args = p.parse_args()
    exe = Executable(load_artifact(args.artifact).module)
    calls = exe.kernel_calls(random_arguments(exe.main, 0, int_high=2))
    first: list[list[float]] = [[] for _ in calls]
    second: list[list[float]] = [[] for _ in calls]
    for _ in range(args.runs):
        for i, c in enumerate(calls):
            first[i].append(timed(lambda c=c: c.kernel(c.operands)))
            second[i].append(timed(lambda c=c: c.kernel(c.operands)))
    firsts = [statistics.median(s) for s in first]
    seconds = [statistics.median(s) for s in second]
    print(f"{len(calls)} kernel calls: first calls {sum(firsts) * 1e3:.3f} ms, repeated "
          f"at once {sum(seconds) * 1e3:.3f} ms (ratio {sum(seconds) / sum(firsts):.3f})")
    worst = sorted(range(len(calls)), key=lambda i: seconds[i] - firsts[i])[:args.top]
    for i in worst:
        print(f"  @{calls[i].function:<50} {calls[i].backend:<12} first "
              f"{firsts[i] * 1e6:8.1f} us  again {seconds[i] * 1e6:8.1f} us")


if __name__ == "__main__":
    main()
