"""What a kernel costs in a whole run beyond its cost called again and again.

    python benchmarks/experiments/in_run_cost.py ARTIFACT_DIR [--runs 30] [--top 10]

For an artifact of `collage compile`, times the whole run, then replays the run's kernel
calls in order (`Executable.kernel_calls`), calling each kernel twice in a row: the first
call comes right after the previous kernel of the plan, as in a run; the second repeats
it at once (how the estimator timed kernels before `collage_xdsl.measure.evict`); then each
kernel once more right after the L2 caches were evicted (how it times them now). Prints
the run and the sums of the per-call medians over `--runs` replays, and the calls that
lose most to being first. The thread count is the process's (`COLLAGE_THREADS`).

On artifacts of the light model-zoo models' search plans (2 threads, 2 cores with 1 MiB
of L2 each, 32 MiB of shared L3), a kernel repeated at once looked 6-22% faster than in
the run, and after eviction it cost what it costs in the run:

| plan | run | kernel calls in run order | each repeated at once | each after eviction |
|---|---:|---:|---:|---:|
| ResNet-50, 40 calls | 23.5 ms | 23.5 ms | 22.2 ms | 23.6 ms |
| Inception-v2, 56 calls | 12.5 ms | 12.8 ms | 9.9 ms | 12.8 ms |
| AlexNet, 6 calls | 8.6 ms | 8.5 ms | 7.6 ms | 8.5 ms |
"""

from __future__ import annotations

import argparse
import statistics
import sys

from collage_xdsl.errors import CollageError
from collage_xdsl.ir.inputs import random_arguments
from collage_xdsl.measure.evict import Evictor
from collage_xdsl.measure.timing import timed
from collage_xdsl.runtime.artifact import load_artifact
from collage_xdsl.runtime.executable import Executable


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("artifact")
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--top", type=int, default=10)
    args = p.parse_args()
    exe = Executable(load_artifact(args.artifact).module, adapt=False)
    inputs = random_arguments(exe.main, 0, int_high=2)
    calls = exe.kernel_calls(inputs)
    evict = Evictor(exe.policy.threads)
    first: list[list[float]] = [[] for _ in calls]
    second: list[list[float]] = [[] for _ in calls]
    evicted: list[list[float]] = [[] for _ in calls]
    runs = []
    for _ in range(args.runs):
        runs.append(timed(lambda: exe.run(inputs)))
        for i, c in enumerate(calls):
            first[i].append(timed(lambda c=c: c.kernel(c.operands)))
            second[i].append(timed(lambda c=c: c.kernel(c.operands)))
        for i, c in enumerate(calls):
            evicted[i].append(timed(lambda c=c: c.kernel(c.operands), evict=evict))
    firsts = [statistics.median(s) for s in first]
    seconds = [statistics.median(s) for s in second]
    print(f"run {statistics.median(runs) * 1e3:.3f} ms; {len(calls)} kernel calls: in run "
          f"order {sum(firsts) * 1e3:.3f} ms, each repeated at once {sum(seconds) * 1e3:.3f} "
          f"ms, each after L2 eviction "
          f"{sum(statistics.median(s) for s in evicted) * 1e3:.3f} ms")
    worst = sorted(range(len(calls)), key=lambda i: seconds[i] - firsts[i])[:args.top]
    for i in worst:
        print(f"  @{calls[i].function:<50} {calls[i].backend:<12} first "
              f"{firsts[i] * 1e6:8.1f} us  again {seconds[i] * 1e6:8.1f} us")


if __name__ == "__main__":
    try:
        main()
    except CollageError as e:
        sys.exit(f"error: {e}")
