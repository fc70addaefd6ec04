"""`collage bench`: end-to-end latency of Collage against each backend alone.

    collage bench model.onnx --backends tvm,onnxruntime,openvino [--rounds 50] [--json]

Each backend alone runs in its best whole-model configuration (ONNX Runtime and OpenVINO
on the ONNX file, TVM on the whole model as one Relax module); `collage` is the model
partitioned over all of them. Outputs are checked to agree, then every configuration is
timed side by side in balanced rounds of steady-state samples; the figure is the median
and its ratio to the best single backend. `--additivity ROUNDS` also checks the additive
cost model on Collage's plan (`collage_xdsl.runtime.additivity`).
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from collage_xdsl.backends import BackendOptions
from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.timing import calls_per_sample, interleave, take_sample, timed
from collage_xdsl.planner.pipeline import Partitioned, assign_module
from collage_xdsl.runtime.additivity import AdditivityCheck, check_additivity
from collage_xdsl.runtime.agreement import tolerances
from collage_xdsl.runtime.executable import Executable
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

Run = Callable[[Sequence[np.ndarray]], list[np.ndarray]]


def onnxruntime_session(path: Path, names: list[str], policy: ThreadPolicy) -> Run:
    """The whole ONNX model in one ONNX Runtime session (as the codegen configures it)."""
    import onnxruntime as ort

    from collage_xdsl.backends.onnxruntime.lowering import session_options

    session = ort.InferenceSession(str(path), session_options(policy),
                                   providers=["CPUExecutionProvider"])
    return lambda inputs: session.run(None, dict(zip(names, inputs)))


def openvino_model(path: Path, policy: ThreadPolicy) -> Run:
    """The whole ONNX model compiled by OpenVINO's CPU plugin (as the codegen configures it)."""
    from collage_xdsl.backends.openvino.lowering import core

    return openvino_run(core().compile_model(core().read_model(str(path)), "CPU",
                                             policy.openvino_config()))


def openvino_run(compiled) -> Run:
    """Calls of an OpenVINO compiled model through one infer request."""
    import openvino as ov

    request = compiled.create_infer_request()
    outputs = len(compiled.outputs)

    def run(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        for i, x in enumerate(inputs):
            request.set_input_tensor(i, ov.Tensor(np.ascontiguousarray(x), shared_memory=True))
        request.infer()
        return [request.get_output_tensor(i).data.copy() for i in range(outputs)]

    return run


def whole_model(backend: str, model, policy: ThreadPolicy,
                backend_options: BackendOptions | None = None) -> Run:
    """`backend` alone on the whole of `model` (a `LoadedModel`), in its best
    configuration: ONNX Runtime and OpenVINO on the ONNX file itself when there is one,
    otherwise (and TVM always) our lowering of the whole model as one kernel."""
    if model.onnx_path is not None and backend == "onnxruntime":
        return onnxruntime_session(model.onnx_path, model.input_names, policy)
    if model.onnx_path is not None and backend == "openvino":
        return openvino_model(model.onnx_path, policy)
    return Executable(assign_module(model.module, backend, "whole", backend_options),
                      threads=policy, backend_options=backend_options).run


def configurations(model, partitioned: Partitioned, backends: Sequence[str],
                   policy: ThreadPolicy, progress: Progress) -> dict[str, Run]:
    """Each of `backends` alone, then `collage` (`partitioned`)."""
    progress("compiling each backend alone")
    configs: dict[str, Run] = {b: whole_model(b, model, policy, partitioned.backend_options)
                               for b in backends}
    progress("compiling collage's plan")
    configs["collage"] = partitioned.executable(threads=policy).run
    return configs


def additivity(partitioned: Partitioned, inputs: list[np.ndarray], policy: ThreadPolicy,
               rounds: int) -> AdditivityCheck:
    """`collage_xdsl.runtime.additivity`'s check of Collage's plan, with the boundary costs the
    partition used."""
    return check_additivity(partitioned.executable(threads=policy, adapt=False), inputs,
                            partitioned.transitions(), rounds=rounds)


def check_agreement(configs: dict[str, Run], inputs: list[np.ndarray], names: list[str],
                    rtol: float, atol: float) -> None:
    """Every configuration's outputs match the first one's within rtol/atol."""
    first, *others = configs
    want = configs[first](inputs)
    for name in others:
        got = configs[name](inputs)
        for output, g, w in zip(names, got, want):
            g, w = np.asarray(g), np.asarray(w)
            if g.shape != w.shape or not np.allclose(g, w, rtol=rtol, atol=atol,
                                                     equal_nan=True):
                raise CollageError(f"bench: {name} and {first} disagree on output {output}")


def measure(configs: dict[str, Run], inputs: list[np.ndarray], rounds: int,
            warmup: int, sample_s: float = 0.005) -> dict[str, list[float]]:
    """Steady seconds per call of each configuration (`collage_xdsl.measure.timing`: calls
    enough to last `sample_s` after a first call), interleaved: one sample each per
    round."""
    names = list(configs)
    for _ in range(warmup):
        for name in names:
            configs[name](inputs)
    calls = {name: calls_per_sample(sample_s, timed(lambda: configs[name](inputs)))
             for name in names}  # one timed call each sizes the samples
    return interleave(names, range(rounds), lambda name: take_sample(
        lambda: configs[name](inputs), calls[name]).steady)


def results(samples: dict[str, list[float]], singles: Sequence[str]) -> dict[str, dict]:
    medians = {name: float(np.median(s)) for name, s in samples.items()}
    best = min(medians[name] for name in singles)
    return {
        name: {
            "median_ms": medians[name] * 1e3,
            "p25_ms": float(np.percentile(s, 25)) * 1e3,
            "p75_ms": float(np.percentile(s, 75)) * 1e3,
            "ratio_to_best_single": medians[name] / best,
        }
        for name, s in samples.items()
    }


def cmd_bench(args: argparse.Namespace) -> int:
    """Time Collage and each backend alone on one model, side by side."""
    if args.rounds < 1 or args.warmup < 0 or args.additivity < 0:
        raise CollageError("bench: --rounds must be at least 1, --warmup and --additivity "
                           "not negative")
    check_input_options(args)
    options = partition_options(args)
    policy = ThreadPolicy()
    with Progress(quiet=args.quiet) as progress:
        model, partitioned = load_and_partition(args, options, progress)
        inputs = load_inputs(model, args.inputs) if args.inputs else \
            random_inputs(model, args.seed)
        configs = configurations(model, partitioned, options.backends, policy, progress)
        partition_line = kernel_summary(partitioned)
        progress("checking that the outputs agree")
        check_agreement(configs, inputs, model.output_names,
                        *tolerances(model.module, args.rtol, args.atol))
        singles = [name for name in configs if name != "collage"]
        progress(f"timing {len(configs)} configurations in {args.rounds} rounds")
        table = results(measure(configs, inputs, args.rounds, args.warmup), singles)
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
    if check:
        print(f"collage {check.format()}")
    return 0


def add_bench(sub: argparse._SubParsersAction) -> None:
    p = model_command(sub, "bench", "latency of Collage against each backend alone", __doc__)
    p.add_argument("--rounds", type=int, default=50, help="timed rounds (default 50)")
    p.add_argument("--warmup", type=int, default=3,
                   help="untimed calls each (default 3); one more sizes the samples")
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
