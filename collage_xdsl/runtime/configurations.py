"""Configurations of a model, each built and timed in a process of its own.

    with Configurations(inputs, threads=2) as configs:
        configs.start("onnxruntime", OnnxFile("onnxruntime", "m.onnx", ("x",)))
        configs.start("collage", Plan.of(outlined_module))   # failed: configs.failures
        outputs = configs.running["collage"].outputs()
        timing = time_side_by_side(configs.running, singles=["onnxruntime"], ...)
        configs.running["collage"].selector_stats()

Each process builds its configuration once, with the thread policy its users run it with
(`OnnxFile`: `ThreadPolicy.library_defaults`; `Plan`: `policy_for_plan`), then on request
runs it, times one call or takes one sample (a `collage_xdsl.measure.side_by_side`
contender), and after each waits until its threads are quiet
(`collage_xdsl.measure.timing.settle`), so that the next configuration starts on idle
cores. A configuration that fails to build, raises, crashes or hangs fails alone, with a
one-line reason (`Failed`). Why: `docs/measurement.md`, "Configurations in processes of
their own".
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from collage_xdsl.backends import BackendOptions
from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.side_by_side import Failed, failure_reason
from collage_xdsl.measure.timing import Sample, settle, take_sample, timed
from collage_xdsl.measure.workers import WorkerProcess, WorkerStartError, incoming
from collage_xdsl.runtime.executable import Executable, policy_for_plan
from collage_xdsl.runtime.selector import PlanSelector

Run = Callable[[Sequence[np.ndarray]], list[np.ndarray]]

REQUEST_TIMEOUT_S = 600.0
"""A process that does not answer a call, a sample or a run in this time has hung."""


# ---------------------------------------------------------------------------
# What a process builds
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Built:
    run: Run
    policy: ThreadPolicy
    selector: PlanSelector | None = None
    """The runtime's choice between a plan's alternatives, when it has any."""


class Configuration(Protocol):
    """What a process builds: picklable, built once with `threads` threads each."""

    def build(self, threads: int, policy: ThreadPolicy | None = None) -> Built:
        """Ready to run, with `policy` or (None) the one its users run it with."""
        ...


def onnxruntime_session(path: Path, names: Sequence[str], policy: ThreadPolicy) -> Run:
    """The whole ONNX model in one ONNX Runtime session (as the codegen configures it)."""
    import onnxruntime as ort

    from collage_xdsl.backends.onnxruntime.lowering import session_options

    session = ort.InferenceSession(str(path), session_options(policy),
                                   providers=["CPUExecutionProvider"])
    names = list(names)
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


@dataclass(frozen=True)
class OnnxFile:
    """ONNX Runtime or OpenVINO on a model's ONNX file, as their users run it."""

    backend: str
    path: str
    input_names: tuple[str, ...]

    def build(self, threads: int, policy: ThreadPolicy | None = None) -> Built:
        policy = policy or ThreadPolicy.library_defaults(threads)
        if self.backend == "onnxruntime":
            return Built(onnxruntime_session(Path(self.path), self.input_names, policy), policy)
        if self.backend == "openvino":
            return Built(openvino_model(Path(self.path), policy), policy)
        raise CollageError(f"{self.backend} does not run ONNX files (onnxruntime and "
                           "openvino do)")


@dataclass(frozen=True)
class Plan:
    """An outlined module through the runtime, as IR text (large weights by reference
    into the weight store), with the policy of `policy_for_plan`."""

    text: str
    backend_options: BackendOptions | None = None

    @staticmethod
    def of(module: ModuleOp, backend_options: BackendOptions | None = None) -> Plan:
        return Plan(str(module), backend_options)

    def build(self, threads: int, policy: ThreadPolicy | None = None) -> Built:
        from xdsl.parser import Parser

        from collage_xdsl.dialects import ir_context

        module = Parser(ir_context(), self.text).parse_module()
        policy = policy or policy_for_plan(module, threads)
        exe = Executable(module, threads=policy, backend_options=self.backend_options)
        return Built(exe.run, policy, exe.selector)


# ---------------------------------------------------------------------------
# The process
# ---------------------------------------------------------------------------


def _worker_main(conn: Connection, spec: Configuration, inputs: list[np.ndarray],
                 threads: int) -> None:
    """Build `spec` when asked, then answer each request until ``None`` or EOF."""
    built: Built | None = None

    def answer(command: str, args: tuple) -> Any:
        nonlocal built
        if command == "build":
            built = spec.build(threads)
            return os.getpid(), built.policy
        assert built is not None, "build first"
        run = built.run
        if command == "outputs":
            outputs = run(inputs)
            settle()
            return outputs
        if command == "call":
            seconds = timed(lambda: run(inputs))
            settle()
            return seconds
        if command == "sample":
            sample = take_sample(lambda: run(inputs), *args)
            return replace(sample, settle=settle())
        if command == "stats":
            return None if built.selector is None else built.selector.stats()
        raise CollageError(f"unknown request {command!r}")

    for command, *args in incoming(conn):
        try:
            reply: tuple = ("ok", answer(command, tuple(args)))
        except Exception as e:  # a configuration failing is its answer, not the process's end
            reply = ("error", failure_reason(e))
        conn.send(reply)


class ConfigurationProcess:
    """One configuration built in a process of its own: a `time_side_by_side` contender."""

    def __init__(self, name: str, spec: Configuration, inputs: Sequence[np.ndarray],
                 threads: int, start_timeout_s: float = 120.0):
        """Start the process and build `spec` there; `Failed` when either fails."""
        self.name = name
        try:
            self.worker = WorkerProcess(
                _worker_main, (spec, [np.asarray(x) for x in inputs], threads),
                name=f"collage-{name}", what=f"the process of {name}",
                start_timeout_s=start_timeout_s, threads=threads)
        except WorkerStartError as e:
            raise Failed(str(e)) from None
        try:
            built = self._request(("build",), None)
        except Failed:
            self.worker.stop()
            raise
        self.pid: int = built[0]
        self.policy: ThreadPolicy = built[1]

    def _request(self, message: tuple, timeout_s: float | None = REQUEST_TIMEOUT_S) -> Any:
        worker = self.worker
        try:
            worker.send(message)
        except OSError:
            pass  # it died: the sentinel says so below
        ready = wait([worker.conn, worker.process.sentinel], timeout_s)
        reply = worker.receive() if worker.conn in ready else None
        if reply is None:
            worker.process.join(5)
            why = (f"timed out after {timeout_s:g} s" if not ready
                   else f"crashed: {worker.exit_reason()}")
            worker.kill()
            raise Failed(why)
        status, value = reply
        if status == "error":
            raise Failed(value)
        return value

    def outputs(self) -> list:
        """The configuration's outputs on the inputs."""
        return self._request(("outputs",))

    def call(self) -> float:
        return self._request(("call",))

    def sample(self, calls: int) -> Sample:
        return self._request(("sample", calls))

    def selector_stats(self) -> dict | None:
        """`PlanSelector.stats` of a plan with alternatives, None without."""
        return self._request(("stats",))

    def close(self) -> None:
        self.worker.stop()


class Configurations:
    """The processes of a model's configurations, all stopped on exit."""

    def __init__(self, inputs: Sequence[np.ndarray], threads: int):
        self.inputs, self.threads = inputs, threads
        self.running: dict[str, ConfigurationProcess] = {}
        self.failures: dict[str, str] = {}
        """Why each configuration that failed did."""

    def start(self, name: str, spec: Configuration) -> bool:
        """Start and build `name`; False (and the reason in `failures`) when it fails."""
        try:
            self.running[name] = ConfigurationProcess(name, spec, self.inputs, self.threads)
        except Failed as e:
            self.failures[name] = str(e)
            return False
        return True

    def fail(self, name: str, reason: str) -> None:
        """Stop `name` and keep why it failed."""
        self.failures[name] = reason
        self.running.pop(name).close()

    def close(self) -> None:
        for process in self.running.values():
            process.close()

    def __enter__(self) -> Configurations:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
