"""Measuring candidate kernels in worker processes: a crashing toolchain costs one Invalid
kernel, never the compiler.

    with WorkerCostEstimator(workers=1, timeout_s=120) as estimator:
        costs = estimator.estimate_all(requests)   # KernelRequests; new kernels go to the pool

New kernels go as IR text to a worker (large weights by reference into the weight store),
in batches of whole sub-graphs (`MeasureSettings`); the worker compiles a batch, then
times it in alternating rounds (`collage_xdsl.measure.measured`). A compile or run error
is Invalid with its reason; a worker that dies, or falls silent for `timeout_s`, costs
the batch a retry one kernel at a time, so that only the kernel at fault is Invalid.
Workers start lazily and share out the process's threads (`docs/measurement.md`). A
cluster node measures the batches it is sent with a pool of its own (`measure_jobs`,
`collage_xdsl.measure.cluster`).
"""
from __future__ import annotations

import pickle
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import asdict, dataclass
from functools import partial
from multiprocessing.connection import Connection, wait
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from collage_xdsl.backends import BackendOptions, backend_for
from collage_xdsl.backends.kernel import CompiledKernel
from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.dialects import ir_context
from collage_xdsl.dialects.collage import ConstantOp, WeightAttr
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.estimator import (
    CostEstimator,
    KernelRequest,
    Measurement,
    invalid_measurement,
    measurement_batches,
)
from collage_xdsl.measure.evict import Evictor
from collage_xdsl.measure.measured import MeasuredCostEstimator
from collage_xdsl.measure.workers import WorkerProcess, incoming

WorkerCompileHook = Callable[[ModuleOp, str, ThreadPolicy], CompiledKernel]
"""``compile(kernel_module, backend, policy) -> CompiledKernel``; runs in the worker, so it
must be picklable (a module-level function)."""

PROGRESS_DELAY_S = 2.0
"""A measurement run shorter than this shows no progress bar."""


def compile_with_backend(module: ModuleOp, backend: str, policy: ThreadPolicy,
                         options: BackendOptions | None = None) -> CompiledKernel:
    """The default hook: the registered backend's codegen with its `options`
    (`Backend.compile`; a backend registered in the parent's memory only is unknown here)."""
    return backend_for(backend, options).compile(module, policy)


@dataclass(frozen=True)
class MeasureSettings:
    """The timing statistics of `MeasuredCostEstimator`, applied in the worker, and the
    batches the pool sends (`measurement_batches`; why batches of 48 over 1 s:
    `docs/measurement.md`)."""

    warmup: int = 2
    round_runs: int = 5
    max_runs: int = 200
    budget_s: float = 1.0
    tolerance: float = 0.02
    percentile: float = 50.0
    min_span_s: float = 1.0
    """A kernel's samples span at least this much wall time before they count as stable
    (unless ``max_runs`` or ``budget_s`` stop it first)."""
    alone_span_s: float = 4.0
    """A kernel that does all the work (`KernelRequest.alone`) is timed over this much
    wall time, in alternation with the other whole-model kernels only."""
    batch_kernels: int = 48
    batch_bytes: int = 1 << 30
    """A batch holds at most this many kernels, and bytes of their tensors, compiled at once."""
    evict: bool = True
    """Evict the L2 caches before each timed run (`collage_xdsl.measure.evict`)."""


@dataclass(frozen=True)
class _WorkerConfig:
    compile: WorkerCompileHook
    policy: ThreadPolicy
    settings: MeasureSettings


_ALIVE = "alive"
"""What a worker sends while it measures a batch: a kernel compiled, a pass of rounds done."""


@dataclass
class _Busy:
    """What a busy worker measures: indices into the requests and their jobs, and until
    when it must report progress."""

    indices: list[int]
    jobs: list[Job]
    deadline: float


@dataclass(frozen=True)
class Job:
    """A kernel as a worker receives it: its module as IR text, large weights by reference
    (their keys in the weight store: `weights`)."""

    backend: str
    key: str
    num_ops: int
    text: str
    alone: bool
    weights: tuple[str, ...] = ()


def _worker_main(conn: Connection, config: _WorkerConfig) -> None:
    """The worker process: measure each batch of jobs sent (`MeasuredCostEstimator.
    measure_group`) until ``None`` or the pipe closes."""
    ctx = ir_context()
    compiled: list[CompiledKernel] = []

    def compile(module: ModuleOp, backend: str) -> Callable[..., Any]:
        kernel = config.compile(module, backend, config.policy)
        compiled.append(kernel)
        return lambda *inputs: kernel(list(inputs))

    settings = asdict(config.settings)
    evict = Evictor(config.policy.threads) if settings.pop("evict") else None
    estimator = MeasuredCostEstimator(compile, **settings, evict=evict)
    for jobs in incoming(conn):
        requests = [KernelRequest(job.backend, job.key, job.num_ops,
                                  lambda text=job.text: Parser(ctx, text).parse_module(),
                                  alone=job.alone)
                    for job in jobs]
        measurements = estimator.measure_group(requests, progress=lambda: conn.send(_ALIVE))
        while compiled:
            compiled.pop().release()
        conn.send(measurements)


class _Worker(WorkerProcess):
    """A measurement worker: `_worker_main` in a `WorkerProcess`."""

    def __init__(self, config: _WorkerConfig, start_timeout_s: float):
        super().__init__(_worker_main, (config,), name="collage-measure",
                         threads=config.policy.threads,
                         what="measurement worker", start_timeout_s=start_timeout_s)

    def result(self) -> list[Measurement] | str | None:
        """The measurements sent back, None for a report of progress, or why the worker
        died instead."""
        message = self.receive()
        if message == _ALIVE:
            return None
        if isinstance(message, list):
            return message
        self.kill()
        return f"worker crashed: {self.exit_reason()}"


class WorkerCostEstimator(CostEstimator):
    """Measures kernels in a pool of worker processes (see the module docstring)."""

    def __init__(
        self,
        *,
        workers: int = 1,
        timeout_s: float = 120.0,
        threads: ThreadPolicy | int | None = None,
        compile: WorkerCompileHook | None = None,
        backend_options: BackendOptions | None = None,
        settings: MeasureSettings = MeasureSettings(),
        progress: bool | None = None,
        start_timeout_s: float = 120.0,
    ):
        super().__init__()
        if compile is None:  # the backends' own codegen, with their options
            compile = partial(compile_with_backend, options=dict(backend_options or {}))
        if workers < 1:
            raise CollageError(f"measurement: need at least one worker, not {workers}")
        if not timeout_s > 0:
            raise CollageError(f"measurement: timeout must be positive, not {timeout_s}")
        check_sendable(compile)
        if threads is None:  # the process default (COLLAGE_THREADS or the CPUs), shared out
            threads = max(1, ThreadPolicy().threads // workers)
        self.workers = workers
        self.timeout_s = timeout_s
        self.start_timeout_s = start_timeout_s
        self.progress = progress
        self._config = _WorkerConfig(compile, ThreadPolicy.resolve(threads), settings)
        self._idle: list[_Worker] = []
        self.started = 0
        """Worker processes started so far (restarts included)."""

    def _measure(self, request: KernelRequest) -> Measurement:
        (measurement,) = self._measure_many([request])
        return measurement

    def _measure_many(self, requests: Sequence[KernelRequest]) -> Iterator[Measurement]:
        """Measure in the pool, a batch of whole sub-graphs (`measurement_batches`) in one
        worker, timed in alternation; results come back in request order, each as soon as
        it and all before it are done. A batch whose worker dies or times out is measured
        again one kernel at a time, so that only the kernel at fault is Invalid."""
        if not requests:
            return
        settings = self._config.settings
        batches = index_batches(requests, settings)
        measured = self._dispatch(len(requests), batches, lambda i: job_of(requests[i]))
        with progress_bar(len(requests), self.progress) as bar, closing(measured):
            for measurement in measured:
                bar.update()
                yield measurement

    def measure_jobs(self, jobs: Sequence[Job]) -> list[Measurement]:
        """One batch of jobs as a worker receives them, measured in this pool as
        `_measure_many` measures a batch (what a cluster node does with a batch it is sent)."""
        return list(self._dispatch(len(jobs), [list(range(len(jobs)))], jobs.__getitem__))

    def _dispatch(self, total: int, batches: list[list[int]],
                  job_at: Callable[[int], Job | Measurement]) -> Iterator[Measurement]:
        """The measurements of `total` jobs, in order, each as soon as it and all before it
        are done: `batches` of their indices go to the workers, each job made by `job_at`
        when its batch is sent (a `Measurement` when it cannot even be made)."""
        pending = deque(batches)
        busy: dict[_Worker, _Busy] = {}
        done: dict[int, Measurement] = {}
        next_out = 0
        try:
            while next_out < total:
                while pending and len(busy) < self.workers:
                    sent: list[int] = []
                    jobs: list[Job] = []
                    for i in pending.popleft():
                        job = job_at(i)
                        if isinstance(job, Measurement):
                            done[i] = job
                        else:
                            sent.append(i)
                            jobs.append(job)
                    if jobs:
                        worker = self._worker()
                        worker.send(jobs)
                        busy[worker] = _Busy(sent, jobs, time.monotonic() + self.timeout_s)
                if busy:
                    self._collect(busy, done, pending)
                while next_out in done:
                    yield done.pop(next_out)
                    next_out += 1
        finally:
            for worker in busy:  # abandoned mid-way: their results would be stale
                worker.kill()

    def _worker(self) -> _Worker:
        """An idle worker still alive, else a new one."""
        while self._idle:
            worker = self._idle.pop()
            if worker.process.is_alive():
                return worker
            worker.kill()
        worker = _Worker(self._config, self.start_timeout_s)
        self.started += 1
        return worker

    def _collect(self, busy: dict[_Worker, _Busy], done: dict[int, Measurement],
                 pending: deque[list[int]]) -> None:
        """Wait until a busy worker answers, reports progress (its deadline moves on by
        ``timeout_s``), dies or runs past its deadline; a batch of several kernels that did
        not come back goes back to the front of `pending`, one kernel at a time."""
        deadline = min(b.deadline for b in busy.values())
        handles = [h for w in busy for h in (w.conn, w.process.sentinel)]
        ready = set(wait(handles, max(0.0, deadline - time.monotonic())))
        now = time.monotonic()
        for worker, job in list(busy.items()):
            if worker.conn in ready or worker.process.sentinel in ready:
                outcome = worker.result()
                if outcome is None:
                    job.deadline = now + self.timeout_s
                    continue
                if isinstance(outcome, list):
                    done.update(zip(job.indices, outcome))
                    self._idle.append(worker)
                    del busy[worker]
                    continue
                failure = outcome
            elif now >= job.deadline:
                worker.kill()
                failure = f"timed out after {self.timeout_s:g} s (compile and measurement)"
            else:
                continue
            del busy[worker]
            if len(job.indices) > 1:
                pending.extendleft([i] for i in reversed(job.indices))
            else:
                (i,), (sent,) = job.indices, job.jobs
                done[i] = invalid_measurement(f"kernel {sent.key} on {sent.backend}: {failure}")

    def close(self) -> None:
        """Stop the idle workers."""
        while self._idle:
            self._idle.pop().stop()

    def __enter__(self) -> WorkerCostEstimator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def job_of(request: KernelRequest) -> Job | Measurement:
    """The job for a request, or Invalid when its kernel cannot even be built."""
    try:
        module = request.build()
        text = str(module)
    except Exception as e:  # extracting a candidate failing is that candidate's problem
        return invalid_measurement(
            f"kernel {request.key} on {request.backend}: could not build it: "
            f"{type(e).__name__}: {e}"
        )
    weights = {op.value.key.data: None for op in module.walk()
               if isinstance(op, ConstantOp) and isinstance(op.value, WeightAttr)}
    return Job(request.backend, request.key, request.num_ops, text, request.alone,
               tuple(weights))


def index_batches(requests: Sequence[KernelRequest], settings: MeasureSettings
                  ) -> list[list[int]]:
    """`measurement_batches` of `requests` under `settings`' limits, as lists of indices."""
    batches: list[list[int]] = []
    start = 0
    for batch in measurement_batches(requests, settings.batch_kernels, settings.batch_bytes):
        batches.append(list(range(start, start + len(batch))))
        start += len(batch)
    return batches


def progress_bar(total: int, progress: bool | None) -> Any:
    """A bar of kernels measured on stderr, shown after `PROGRESS_DELAY_S`: always with
    `progress`, never without, on a terminal only when None."""
    from tqdm import tqdm

    return tqdm(total=total, desc="measuring kernels", unit="kernel", file=sys.stderr,
                delay=PROGRESS_DELAY_S, leave=False,
                disable=not sys.stderr.isatty() if progress is None else not progress)


def check_sendable(compile: WorkerCompileHook) -> None:
    """A compile hook that cannot be pickled (to reach a worker process) is an error."""
    try:
        pickle.dumps(compile)
    except (pickle.PicklingError, AttributeError, TypeError) as e:
        raise CollageError(
            f"measurement: the compile hook {compile!r} cannot be sent to a worker "
            f"process ({e}); use a module-level function"
        ) from None
