"""Do a plan's kernels cost more called one after another than each called alone?

    python benchmarks/experiments/sequence_penalty.py MODEL.onnx --cost-db DB [--rounds 8]
                                                      [--max-depth N]

Partitions the model from a warm cost database (the search's plan, no refinement), then
per round times, side by side: the plan's run; a replay of its kernel calls in order on
the operands of one run (no runtime, no fresh tensors); each kernel call repeated alone
(after L2 eviction, as the measured estimator does, and without); and each call timed
once per pass over all the calls, after eviction (interleaved). Prints each round and
the medians (ms, summed over the calls). On light ShuffleNet's 16-kernel ONNX Runtime
search plan (37 calls; 2026-11-23, 2 threads, three runs of 6-8 rounds): run 8.3-9.4,
replay 7.7-9.3, alone after eviction 7.3-8.2, interleaved 8.7 (two runs): the kernels run
10-20% slower in sequence than each repeated alone, 25-50 us per call, which the
boundary model's launch costs (0.3 us per call, calibrated on chains of one-op kernels)
do not see; timed interleaved, they cost about what they cost in the run. With one
thread: run 9.4, replay 10.0, alone after eviction 8.2, so it is not ONNX Runtime's
worker threads waking up. Not every plan shows it: light SqueezeNet's 10-kernel ONNX
Runtime plan ran 6.87 ms, its calls alone after eviction 7.05 ms.

It also prints what the cost database predicts: the plan's kernels' costs alone and
their sequence costs (`collage_xdsl.measure.estimator.Measurement.sequence`), to set against
the run's excess over its calls alone. With `--max-depth N` the plan is made of
candidates of at most N nodes, not even the backends' maximal regions, nothing
merged: a plan of many kernels. Fresh databases (2e1401e), 6 rounds, 2026-11-23:

| model (`--max-depth`) | calls | database: alone + sequence (ms) | run | run - calls alone |
|---|---:|---:|---:|---:|
| MLP (2) | 5 | 0.203 + 0.191 | 0.218 | +0.061 (back to back) |
| MNIST CNN (2) | 6 | 0.226 + 0.185 | 0.318 | +0.078 (back to back) |
| light ShuffleNet (4) | 65 | 8.23 + 4.40 | 9.73 | +1.83 (after eviction) |
| light SqueezeNet (4) | 19 | 8.09 + 0.99 | 8.54 | -0.56 (after eviction) |
| transformer encoder (4) | 21 | 5.61 + 1.18 | 7.50 | +1.36 (after eviction) |

The sequence costs over-state the run's excess 2.4-3.1x on three plans and come near it
on the transformer encoder's (0.87x). The MLP and the MNIST CNN fit in L2 and are timed
back to back. A call right after one call of another kernel of the plan, its own data
fresh from its call before, costs only 0.6-2 us more than repeated (65 calls of light
ShuffleNet's plan: +0.04 to +0.14 ms in all, four rounds): what a run pays comes from
passing through many other kernels, as a pass over a measurement batch does, with more
kernels in it.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.evict import Evictor
from collage_xdsl.measure.stats import median
from collage_xdsl.measure.timing import interleave, repeat, timed
from collage_xdsl.planner.options import PartitionOptions
from collage_xdsl.planner.pipeline import partition_module
from collage_xdsl.runtime.executable import Executable
from collage_xdsl.tools.model import load_model, random_inputs

NAMES = ("run", "replay", "alone after eviction", "alone", "interleaved",
         "run - alone after eviction")


def plan_options(cost_db: str, max_depth: int | None) -> PartitionOptions:
    """The search's plan from the costs in `cost_db`; with `max_depth`, from candidates of
    at most that depth only, no maximal regions, nothing coalesced."""
    if max_depth is None:
        return PartitionOptions(estimator="measured", cost_db=cost_db)
    return PartitionOptions(estimator="measured", cost_db=cost_db, tvm_max_depth=max_depth,
                            byoc_max_depth=max_depth, tvm_max_regions=False,
                            byoc_max_regions=False, coalesce=False)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--cost-db", required=True)
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--max-depth", type=int, default=None,
                   help="candidate kernels of at most this depth only, not even the "
                   "backends' maximal regions, and nothing coalesced: a plan of many kernels")
    args = p.parse_args()
    model = load_model(args.model)
    plan = partition_module(model.module, plan_options(args.cost_db, args.max_depth))
    (function,) = plan.report["functions"]
    policy = ThreadPolicy.resolve(args.threads)
    exe = Executable(plan.module, threads=policy, adapt=False)
    inputs = random_inputs(model, 0)
    calls = exe.kernel_calls(inputs)
    print(f"{len(calls)} kernel calls on {', '.join(sorted({c.backend for c in calls}))}; "
          f"{policy.threads} threads")
    kernels = function["kernels"]
    sequence = sum(k["sequence"] for k in kernels)
    alone = sum(k["cost"] - k["sequence"] for k in kernels if k["cost"] is not None)
    print(f"cost database: {len(kernels)} kernels alone {alone * 1e3:.3f} ms, their sequence "
          f"costs {sequence * 1e3:+.3f} ms")
    evict = Evictor(policy.threads)
    call = [lambda c=c: c.kernel(c.operands) for c in calls]

    def steady(run, runs: int, evicted: bool = False) -> float:
        return median(repeat(run, runs, warm=1, evict=evict if evicted else None))

    def replay() -> None:
        for c in call:
            c()

    def interleaved(passes: int = 9) -> float:
        """Each call timed once per pass over all the calls, in plan order, after eviction."""
        samples = interleave(list(range(len(call))), range(passes),
                             lambda i: timed(call[i], evict=evict),
                             order=lambda names, r: list(names))
        return sum(median(s) for s in samples.values())

    rows = []
    for _ in range(args.rounds):
        row = (steady(lambda: exe.run(inputs), 9), steady(replay, 9),
               sum(steady(c, 5, True) for c in call), sum(steady(c, 5) for c in call),
               interleaved())
        row += (row[0] - row[2],)
        rows.append(row)
        print("  ".join(f"{n} {v * 1e3:.3f}" for n, v in zip(NAMES, row)), flush=True)
    medians = np.median(np.array(rows), axis=0)
    print("median  " + "  ".join(f"{n} {v * 1e3:.3f}" for n, v in zip(NAMES, medians)))


if __name__ == "__main__":
    try:
        main()
    except CollageError as e:
        sys.exit(f"error: {e}")
