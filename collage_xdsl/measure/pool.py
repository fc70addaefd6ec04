"""Measuring candidate kernels in worker processes: a crashing toolchain costs one Invalid
kernel, never the compiler.

    estimator = WorkerCostEstimator(workers=1, timeout_s=120)
    costs = estimator.estimate_all(requests)   # KernelRequests; new kernels go to the pool
    estimator.close()                          # or use it as a context manager

Each new kernel (``KernelRequest.build()``) is printed and sent to a worker process
(`collage_xdsl.measure.workers`) as IR text, in a batch with the same sub-graph on the other
backends and the next sub-graphs (`measurement_batches`, `MeasureSettings`): the worker
compiles them all, then times them in alternation (`MeasuredCostEstimator.measure_group`),
so that the machine's changing speed does not decide which backend looks faster, and each
kernel's samples spread over the batch's time. Kernels that do all the work (one per
backend: the whole-model plans) are a batch of their own, timed for longer, as the plan
runs (`MeasureSettings.alone_span_s`). Large weights travel by reference
(``#collage.weight<"key">``): the worker reads them from the parent's on-disk WeightStore,
whose root it is given (``WeightStore.put`` writes every weight to disk, also those the
frontend creates in memory). The worker parses the module, compiles it through the compile
hook (default :func:`compile_with_backend`: the registry's ``Backend.compile``, i.e.
``collage_xdsl.backends.kernel.compile_kernel``), makes random inputs
(``estimators.random_inputs``: floats ~ N(0, 1), small non-negative integers), times it with
:class:`MeasuredCostEstimator`'s warm-up / repeat-until-stable statistics, each timed run
after the cores' L2 caches were evicted (`collage_xdsl.measure.evict`: a kernel's cost as in a whole
run, where the kernels before it displaced its data), and frees the compiled kernel. Workers
start lazily: a run whose kernels are all in the cost database starts none.

Failures are results, never exceptions: a compile or run error is Invalid with its
reason; a worker that dies (segfault, ``os._exit``) makes its kernel Invalid ("worker
crashed: signal 11 (SIGSEGV)") and a fresh worker takes the next one; a kernel that takes
longer than ``timeout_s`` (compile and measurement) is Invalid ("timed out ...") and its
worker is killed and replaced. A batch's worker reports progress (each kernel compiled,
each pass of timing rounds) and must do so every ``timeout_s``; a batch whose worker dies
or falls silent that long is measured again one kernel at a time, so that only the
kernel at fault is Invalid. A tqdm bar on stderr shows long runs (after 2 s, on a TTY
only, never with ``progress=False``).

Thread pools (the codegen :class:`ThreadPolicy`, applied in the worker):

* **One worker by default.** Two kernels timed at once on this 2-core machine share the
  cores and each looks slower than it is, by an amount that depends on the other one.
  With ``workers=n`` each worker gets ``threads // n`` of the process default
  (``COLLAGE_THREADS`` or the CPUs; at least 1) unless ``threads`` says otherwise, so the
  pools never oversubscribe the cores.
* **Explicit, equal thread counts** for every backend (ONNX Runtime intra-op = threads,
  inter-op 1; OpenVINO ``INFERENCE_NUM_THREADS`` = threads, one stream; TVM's pool sized
  to threads; ``COLLAGE_THREADS`` is set in the worker), so costs of different backends
  compare like with like and match what the runtime runs with (the same policy).
* **ONNX Runtime's threads stop spinning when a run returns** (`ThreadPolicy` spinning
  "run"). A worker measures kernels of all backends one after another; ORT threads left
  spinning would keep burning the cores during the next OpenVINO or TVM measurement
  (measured here: it flips which of ORT and OpenVINO looks faster).
* The parent runs no kernels while it waits for the workers.
"""

from __future__ import annotations

import pickle
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from multiprocessing.connection import Connection, wait
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from collage_xdsl.backends import BackendOptions, get_backend
from collage_xdsl.backends.kernel import CompiledKernel
from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.dialects import ir_context
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
    return get_backend(backend, **(options or {}).get(backend, {})).compile(module, policy)


@dataclass(frozen=True)
class MeasureSettings:
    """The timing statistics of :class:`MeasuredCostEstimator`, applied in the worker, and
    the batches the pool sends (`measurement_batches`). Batches of 48 kernels timed over
    1 s halved how much two fills of one cost database disagree on a sub-graph's ONNX
    Runtime / OpenVINO ratio, at about the same fill time (`scripts/cost_db_agreement.py`)."""

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
    """What a busy worker measures: indices into the requests, and until when it must
    report progress."""

    indices: list[int]
    deadline: float


@dataclass(frozen=True)
class _Job:
    backend: str
    key: str
    num_ops: int
    text: str
    alone: bool


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
        try:
            pickle.dumps(compile)
        except (pickle.PicklingError, AttributeError, TypeError) as e:
            raise CollageError(
                f"measurement: the compile hook {compile!r} cannot be sent to a worker "
                f"process ({e}); use a module-level function"
            ) from None
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
        from tqdm import tqdm

        bar = tqdm(
            total=len(requests), desc="measuring kernels", unit="kernel", file=sys.stderr,
            delay=PROGRESS_DELAY_S, leave=False,
            disable=not sys.stderr.isatty() if self.progress is None else not self.progress,
        )
        settings = self._config.settings
        pending: deque[list[int]] = deque()
        start = 0
        for batch in measurement_batches(requests, settings.batch_kernels, settings.batch_bytes):
            pending.append(list(range(start, start + len(batch))))
            start += len(batch)
        busy: dict[_Worker, _Busy] = {}
        done: dict[int, Measurement] = {}
        next_out = 0
        try:
            while next_out < len(requests):
                while pending and len(busy) < self.workers:
                    sent: list[int] = []
                    jobs: list[_Job] = []
                    for i in pending.popleft():
                        job = _job(requests[i])
                        if isinstance(job, Measurement):
                            done[i] = job
                        else:
                            sent.append(i)
                            jobs.append(job)
                    if jobs:
                        worker = self._worker()
                        worker.send(jobs)
                        busy[worker] = _Busy(sent, time.monotonic() + self.timeout_s)
                if busy:
                    self._collect(requests, busy, done, pending)
                while next_out in done:
                    bar.update()
                    yield done.pop(next_out)
                    next_out += 1
        finally:
            bar.close()
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

    def _collect(self, requests: Sequence[KernelRequest], busy: dict[_Worker, _Busy],
                 done: dict[int, Measurement], pending: deque[list[int]]) -> None:
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
                (i,) = job.indices
                request = requests[i]
                done[i] = invalid_measurement(
                    f"kernel {request.key} on {request.backend}: {failure}")

    def close(self) -> None:
        """Stop the idle workers."""
        while self._idle:
            self._idle.pop().stop()

    def __enter__(self) -> WorkerCostEstimator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _job(request: KernelRequest) -> _Job | Measurement:
    """The job for a request, or Invalid when its kernel cannot even be built."""
    try:
        text = str(request.build())
    except Exception as e:  # extracting a candidate failing is that candidate's problem
        return invalid_measurement(
            f"kernel {request.key} on {request.backend}: could not build it: "
            f"{type(e).__name__}: {e}"
        )
    return _Job(request.backend, request.key, request.num_ops, text, request.alone)
