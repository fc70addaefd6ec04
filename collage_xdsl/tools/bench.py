"""`collage bench`: end-to-end latency of Collage against each backend alone.

    collage bench model.onnx --backends tvm,onnxruntime,openvino [--rounds 50] [--json]

Each backend alone runs in its best whole-model configuration, as its users run it (ONNX
Runtime and OpenVINO on the ONNX file with their own defaults but the thread count, TVM on
the whole model as one Relax module); `collage` is the model partitioned over all of them.
Every configuration is built in a process of its own
(`collage_xdsl.runtime.configurations`); outputs are checked to agree, then the
configurations are timed side by side, a block of each per round in a balanced order
(`collage_xdsl.measure.side_by_side`); the figure is the median and its ratio to the best
single backend. `--additivity ROUNDS` also checks the additive cost model on Collage's
plan (`collage_xdsl.runtime.additivity`).
"""
from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from dataclasses import asdict

import numpy as np

from collage_xdsl.backends import BackendOptions
from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.side_by_side import InProcess, time_side_by_side
from collage_xdsl.measure.stats import median_ci, per_round_ratios
from collage_xdsl.planner.pipeline import Partitioned, assign_module
from collage_xdsl.runtime.additivity import AdditivityCheck, check_additivity
from collage_xdsl.runtime.agreement import tolerances
from collage_xdsl.runtime.configurations import (
    Configuration,
    Configurations,
    Failed,
    OnnxFile,
    Plan,
    Run,
    onnxruntime_session,
    openvino_model,
    openvino_run,
)
from collage_xdsl.tools.model import (
    check_input_options,
    load_inputs,
    random_inputs,
)
from collage_xdsl.tools.options import (
    kernel_summary,
    load_and_partition,
    model_command,
    partition_options,
)
from collage_xdsl.tools.progress import Progress

__all__ = ["Run", "check_agreement", "configurations", "measure", "onnxruntime_session",
           "openvino_model", "openvino_run", "whole_model", "whole_model_config"]


def whole_model_config(backend: str, model, backend_options: BackendOptions | None = None
                       ) -> Configuration:
    """`backend` alone on the whole of `model` (a `LoadedModel`), in its best
    configuration: ONNX Runtime and OpenVINO on the ONNX file itself when there is one,
    otherwise (and TVM always) our lowering of the whole model as one kernel."""
    if model.onnx_path is not None and backend in ("onnxruntime", "openvino"):
        return OnnxFile(backend, str(model.onnx_path), tuple(model.input_names))
    return Plan.of(assign_module(model.module, backend, "whole", backend_options),
                   backend_options)


def whole_model(backend: str, model, policy: ThreadPolicy,
                backend_options: BackendOptions | None = None) -> Run:
    """`whole_model_config` built in this process with `policy`."""
    return whole_model_config(backend, model, backend_options).build(policy.threads,
                                                                     policy).run


def configurations(model, partitioned: Partitioned, backends: Sequence[str]
                   ) -> dict[str, Configuration]:
    """Each of `backends` alone, then `collage` (`partitioned`)."""
    configs = {b: whole_model_config(b, model, partitioned.backend_options) for b in backends}
    configs["collage"] = Plan.of(partitioned.module, partitioned.backend_options)
    return configs


def additivity(partitioned: Partitioned, inputs: list[np.ndarray], policy: ThreadPolicy,
               rounds: int) -> AdditivityCheck:
    """`collage_xdsl.runtime.additivity`'s check of Collage's plan, with the boundary costs the
    partition used."""
    return check_additivity(partitioned.executable(threads=policy, adapt=False), inputs,
                            partitioned.transitions(), rounds=rounds)


def disagreement(outputs: dict[str, Sequence], names: list[str], rtol: float,
                 atol: float) -> str | None:
    """Why a configuration's outputs do not match the first one's within rtol/atol, or
    None when all agree."""
    (first, want), *others = outputs.items()
    for name, got in others:
        for output, g, w in zip(names, got, want):
            g, w = np.asarray(g), np.asarray(w)
            if g.shape != w.shape or not np.allclose(g, w, rtol=rtol, atol=atol,
                                                     equal_nan=True):
                return f"bench: {name} and {first} disagree on output {output}"
    return None


def check_agreement(configs: dict[str, Run], inputs: list[np.ndarray], names: list[str],
                    rtol: float, atol: float) -> None:
    """Every configuration's outputs match the first one's within rtol/atol."""
    problem = disagreement({n: run(inputs) for n, run in configs.items()}, names, rtol, atol)
    if problem is not None:
        raise CollageError(problem)


def measure(configs: dict[str, Run], inputs: list[np.ndarray], rounds: int,
            warmup: int, sample_s: float = 0.005) -> dict[str, list[float]]:
    """Steady seconds per call of each configuration, in this process, side by side
    (`time_side_by_side`: calls enough to last `sample_s` after a first call, one sample
    each per round)."""
    timing = time_side_by_side({n: InProcess(run, inputs) for n, run in configs.items()},
                               (), rounds, warmup, math.inf, rounds, sample_s)
    if timing.failures:
        name, reason = next(iter(timing.failures.items()))
        raise CollageError(f"bench: {name} failed: {reason}")
    return {n: [s for s in samples if s is not None] for n, samples in timing.samples.items()}


def results(samples: dict[str, list[float | None]], singles: Sequence[str],
            policies: dict[str, ThreadPolicy]) -> dict[str, dict]:
    timed = {name: [x for x in s if x is not None] for name, s in samples.items()}
    medians = {name: float(np.median(s)) for name, s in timed.items()}
    best = min(singles, key=medians.__getitem__)
    table = {}
    for name, s in timed.items():
        ci = median_ci(per_round_ratios(samples[name], samples[best]))
        table[name] = {
            "median_ms": medians[name] * 1e3,
            "p25_ms": float(np.percentile(s, 25)) * 1e3,
            "p75_ms": float(np.percentile(s, 75)) * 1e3,
            "ratio_to_best_single": medians[name] / medians[best],
            "per_round_ratio": {"median": ci.median, "low": ci.low, "high": ci.high},
            "policy": asdict(policies[name]),
        }
    return table


def time_configurations(specs: dict[str, Configuration], inputs: list[np.ndarray],
                        args: argparse.Namespace, output_names: list[str], rtol: float,
                        atol: float, progress: Progress
                        ) -> tuple[dict[str, dict], dict[str, str]]:
    """Each configuration in its own process: outputs checked, then timed side by side;
    the table and the configurations that failed (name: why)."""
    threads = ThreadPolicy().threads
    with Configurations(inputs, threads) as configs:
        for name, spec in specs.items():
            progress(f"building {name} in a process of its own")
            configs.start(name, spec)
        progress("checking that the outputs agree")
        outputs = {}
        for name, process in list(configs.running.items()):
            try:
                outputs[name] = process.outputs()
            except Failed as e:
                configs.fail(name, str(e))
        problem = disagreement(outputs, output_names, rtol, atol) if outputs else None
        if problem is not None:
            raise CollageError(problem)
        singles = [name for name in configs.running if name != "collage"]
        progress(f"timing {len(configs.running)} configurations in {args.rounds} rounds")
        timing = time_side_by_side(configs.running, singles, args.rounds, args.warmup,
                                   math.inf, args.rounds, args.sample_ms / 1e3)
        for name, reason in timing.failures.items():
            configs.fail(name, reason)
        policies = {name: process.policy for name, process in configs.running.items()}
    failed = configs.failures
    singles = [name for name in policies if name != "collage"]
    if "collage" in failed or not singles:
        name = "collage" if "collage" in failed else next(iter(failed))
        raise CollageError(f"bench: {name} failed: {failed[name]}")
    return results({n: timing.samples[n] for n in policies}, singles, policies), failed


def cmd_bench(args: argparse.Namespace) -> int:
    """Time Collage and each backend alone on one model, side by side."""
    if args.rounds < 1 or args.warmup < 0 or args.additivity < 0:
        raise CollageError("bench: --rounds must be at least 1, --warmup and --additivity "
                           "not negative")
    if not 0 <= args.sample_ms < math.inf:
        raise CollageError(f"bench: --sample-ms must be a number of milliseconds >= 0, got "
                           f"{args.sample_ms}")
    check_input_options(args)
    options = partition_options(args)
    policy = ThreadPolicy()
    with Progress(quiet=args.quiet) as progress:
        model, partitioned = load_and_partition(args, options, progress)
        inputs = load_inputs(model, args.inputs) if args.inputs else \
            random_inputs(model, args.seed)
        partition_line = kernel_summary(partitioned)
        table, failed = time_configurations(
            configurations(model, partitioned, options.backends), inputs, args,
            model.output_names, *tolerances(model.module, args.rtol, args.atol), progress)
        singles = [name for name in table if name != "collage"]
        if args.additivity:
            progress("checking the additive cost model")
        check = additivity(partitioned, inputs, policy, args.additivity) \
            if args.additivity else None
    if args.json:
        print(json.dumps({
            "model": str(args.model),
            "backends": singles,
            "estimator": args.estimator,
            "threads": policy.threads,
            "rounds": args.rounds,
            "partition": partition_line,
            "configs": table,
            "failed": failed,
            **({"additivity": check.to_json()} if check else {}),
        }, indent=2))
        return 0
    print(f"{args.model}: collage: {partition_line}; {policy.threads} threads, "
          f"{args.rounds} rounds")
    print(f"  {'config':<12} {'median ms':>10} {'p25 ms':>10} {'p75 ms':>10} "
          f"{'x best single':>14}")
    for name, row in table.items():
        print(f"  {name:<12} {row['median_ms']:>10.3f} {row['p25_ms']:>10.3f} "
              f"{row['p75_ms']:>10.3f} {row['ratio_to_best_single']:>14.3f}")
    for name, reason in failed.items():
        print(f"  {name:<12} failed: {reason}")
    if check:
        print(f"collage {check.format()}")
    return 0


def add_bench(sub: argparse._SubParsersAction) -> None:
    p = model_command(sub, "bench", "latency of Collage against each backend alone", __doc__)
    p.add_argument("--rounds", type=int, default=50, help="timed rounds (default 50)")
    p.add_argument("--warmup", type=int, default=3,
                   help="untimed calls each (default 3); one more sizes the samples")
    p.add_argument("--sample-ms", type=float, default=20.0, metavar="MS",
                   help="a block is a first call, then the mean of enough calls to last MS "
                        "milliseconds (default 20)")
    p.add_argument("--inputs", metavar="FILE.npz", help="inputs (default: seeded random)")
    p.add_argument("--seed", type=int, default=0, help="seed for random inputs (default 0)")
    p.add_argument("--rtol", type=float, default=1e-3,
                   help="relative tolerance of the output agreement check (at least 1e-2 "
                        "for a float16 model)")
    p.add_argument("--atol", type=float, default=1e-4,
                   help="absolute tolerance of the output agreement check (at least 1e-2 "
                        "for a float16 model)")
    p.add_argument("--additivity", type=int, default=0, metavar="ROUNDS",
                   help="then check the additive cost model on Collage's plan: its kernel "
                        "calls timed alone plus boundary costs against the run, side by "
                        "side in ROUNDS rounds (default 0: no check)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=cmd_bench)
