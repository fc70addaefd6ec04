"""`collage run`: execute a model's `@main` with the reference interpreter, or an artifact
or a model partitioned over `--backends` with the runtime, and summarize its outputs.

    collage run model.onnx --check                  # reference interpreter vs onnxruntime
    collage run model.onnx --backends tvm,openvino --profile
    collage run model.collage --check               # an artifact of `collage compile`
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import numpy as np

from collage_xdsl.backends import parse_backend_options
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.interpreter import run_module
from collage_xdsl.runtime.agreement import tolerances
from collage_xdsl.runtime.artifact import backend_versions, load_artifact
from collage_xdsl.runtime.executable import Executable, policy_for_plan
from collage_xdsl.tools.model import (
    LoadedModel,
    check_input_options,
    compare,
    load_inputs,
    load_model,
    onnxruntime_outputs,
    random_inputs,
    summary,
)
from collage_xdsl.tools.options import (
    backend_options,
    kernel_summary,
    load_and_partition,
    model_command,
    partition_options,
)
from collage_xdsl.tools.progress import Progress


def cmd_run(args: argparse.Namespace) -> int:
    """Execute @main of a model (reference interpreter) or of an artifact or a model
    partitioned over --backends (runtime) and summarize its outputs."""
    runtime = Path(args.model).is_dir() or bool(args.backends)
    if args.profile and not runtime:
        raise CollageError("--profile times kernels: run an artifact or give --backends")
    check_input_options(args)
    cpus = os.cpu_count() or 1
    if not 1 <= args.threads <= cpus:
        raise CollageError(f"--threads must be between 1 and the {cpus} CPUs, got {args.threads}")
    if args.profile_runs < 1:
        raise CollageError(f"--profile-runs: need at least 1 run, not {args.profile_runs}")
    if runtime:
        model, execute = load_for_runtime(args)
    else:
        model = load_model(args.model, args.input_shape)
        execute = partial(run_module, model.module)
    if args.check and model.onnx_path is None:
        raise CollageError(f"{args.model}: --check compares with onnxruntime, it needs an "
                           ".onnx model")
    inputs = load_inputs(model, args.inputs) if args.inputs else random_inputs(model, args.seed)
    outputs = [np.asarray(o) for o in execute(inputs)]
    for name, value in zip(model.output_names, outputs):
        print(summary(name, value))
    if args.output:
        try:
            with open(args.output, "wb") as f:  # np.savez(path) would append .npz to it
                np.savez(f, **dict(zip(model.output_names, outputs)))
        except OSError as e:
            raise CollageError(f"--output {args.output}: cannot write it: {e.strerror}") from None
    if args.check:
        reference = onnxruntime_outputs(model.onnx_path, model.input_names, inputs, args.threads)
        rtol, atol = tolerances(model.module, args.rtol, args.atol)
        problems = [p for name, got, want in zip(model.output_names, outputs, reference)
                    if (p := compare(name, got, want, rtol, atol)) is not None]
        if problems:
            for p in problems:
                print(f"error: mismatch: {p}", file=sys.stderr)
            return 1
        print(f"check: {len(outputs)} output(s) match onnxruntime "
              f"(rtol={rtol}, atol={atol})")
    return 0


def add_run(sub: argparse._SubParsersAction) -> None:
    p = model_command(sub, "run", "execute @main with the reference interpreter, or an "
                      "artifact / a model partitioned over --backends with the runtime",
                      cmd_run.__doc__, backends_default=None)
    p.add_argument("--inputs", metavar="FILE.npz",
                   help="inputs keyed by input name, or positional arr_0, arr_1, ...")
    p.add_argument("--seed", type=int, default=0, help="seed for random inputs (default 0)")
    p.add_argument("--check", action="store_true",
                   help="compare with onnxruntime (CPU); exit 1 on a mismatch")
    p.add_argument("--rtol", type=float, default=1e-4,
                   help="relative tolerance of --check (at least 1e-2 for a float16 model)")
    p.add_argument("--atol", type=float, default=1e-5,
                   help="absolute tolerance of --check (at least 1e-2 for a float16 model)")
    p.add_argument("--threads", type=int, default=1,
                   help="onnxruntime intra-op threads for --check (default 1)")
    p.add_argument("--output", metavar="FILE.npz", help="save the outputs, keyed by name")
    p.add_argument("--profile", action="store_true",
                   help="print each kernel's time: the median of --profile-runs runs after "
                        "a first call (artifacts and --backends only)")
    p.add_argument("--profile-runs", type=int, default=20, metavar="N",
                   help="runs a profile takes the median of (default 20)")
    p.set_defaults(handler=cmd_run)


def load_for_runtime(args: argparse.Namespace):
    """The model `collage run` executes through the runtime (an artifact directory, or a
    model partitioned over `--backends`), and `execute(inputs) -> outputs`."""
    path = Path(args.model)
    if not path.is_dir():
        options = partition_options(args)
        with Progress(quiet=args.quiet) as progress:
            model, partitioned = load_and_partition(args, options, progress)
            progress("compiling the kernels")
            executable = partitioned.executable(threads=policy_for_plan(partitioned.module))
        print(f"{args.model}: {kernel_summary(partitioned)}", file=sys.stderr)
        return model, _executor(executable, args.profile and args.profile_runs)
    if args.backends:
        raise CollageError(f"{path}: an artifact is already partitioned; drop --backends")
    artifact = load_artifact(path)
    saved = artifact.manifest.get("backend_versions", {})
    options = parse_backend_options(backend_options(args, tuple(saved)))
    for backend, now in backend_versions(list(saved), options).items():
        if saved[backend] != now:
            print(f"warning: {path}: compiled with {saved[backend]}, running with {now}",
                  file=sys.stderr)
    executable = Executable(artifact.module, threads=policy_for_plan(artifact.module),
                            backend_options=options)
    model = LoadedModel(artifact.module, executable.main, artifact.input_names,
                        artifact.output_names, artifact.source_model())
    if args.check and model.onnx_path is None:
        raise CollageError(f"{path}: --check needs the artifact's source model, which is "
                           "missing or changed")
    return model, _executor(executable, args.profile and args.profile_runs)


def _executor(executable, profile_runs: int) -> Callable[[Sequence[np.ndarray]], list]:
    """`execute(inputs) -> outputs`; with ``profile_runs``, also prints the profile."""
    def execute(inputs: Sequence[np.ndarray]) -> list:
        if not profile_runs:
            return executable.run(inputs)
        outputs, report = executable.profile(inputs, runs=profile_runs)
        print(report.format(), end="")
        return outputs

    return execute
