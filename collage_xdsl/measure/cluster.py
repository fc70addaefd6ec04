"""Measuring candidate kernels on a Ray cluster: each batch a Ray task, measured on one
node by that node's own worker pool (`collage_xdsl.measure.pool`).

    with RayCostEstimator("auto") as estimator:        # ray:auto; or "ray://HOST:PORT"
        costs = estimator.estimate_all(requests)        # as WorkerCostEstimator's

A task asks for ``threads`` CPUs (by default the smallest node's), so that two batches are
never timed on one node at once; the batch's weights travel with it. On the node a compile
error, a crash or a hang costs one Invalid kernel, as locally; the task returns the node's
`host_description` with the measurements, and the cost database keeps each under that
host. A task whose node or Ray worker dies is run again elsewhere (Ray's ``max_retries``),
then its batch one kernel at a time, and a kernel whose task still dies is Invalid. Ray
is imported only when asked for (`docs/measurement.md`, "Measuring on a cluster").
"""
from __future__ import annotations

import logging
import os
import pickle
import re
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, replace
from functools import partial
from types import ModuleType
from typing import Any

from collage_xdsl.backends import BackendOptions
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.tensors import weight_store
from collage_xdsl.measure.cost_db import host_description
from collage_xdsl.measure.estimator import (
    CostEstimator,
    KernelRequest,
    Measurement,
    invalid_measurement,
)
from collage_xdsl.measure.pool import (
    Job,
    MeasureSettings,
    WorkerCompileHook,
    WorkerCostEstimator,
    check_sendable,
    compile_with_backend,
    index_batches,
    job_of,
    progress_bar,
)

LOCAL = "local"
"""`measure-on` for the worker pool of this machine."""
CLUSTER_EXTRA = "pip install 'collage-xdsl[cluster]'"


def ray_address(measure_on: str, option: str) -> str | None:
    """The Ray address `measure_on` names: None for ``local``, ``auto`` for ``ray:auto`` (the
    cluster ``ray start`` runs on this machine, or ``RAY_ADDRESS``), a ``ray://HOST:PORT``
    (Ray Client) address as it is. Anything else is an error naming `option`."""
    if measure_on == LOCAL:
        return None
    if measure_on == "ray:auto":
        return "auto"
    if re.fullmatch(r"ray://[^\s/:]+:\d+", measure_on):
        return measure_on
    raise CollageError(f"{option} {measure_on}: expected local, ray:auto or ray://HOST:PORT")


def import_ray(measure_on: str, option: str) -> ModuleType:
    """The `ray` module, or one error line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise CollageError(f"{option} {measure_on}: needs the cluster extra: {CLUSTER_EXTRA}"
                           ) from None
    return ray


def check_measure_on(measure_on: str, option: str) -> None:
    """`measure_on` names this machine, or a Ray cluster and Ray is installed."""
    if ray_address(measure_on, option) is not None:
        import_ray(measure_on, option)


@dataclass(frozen=True)
class _NodePool:
    """How a node's worker pool measures (`WorkerCostEstimator`'s arguments)."""

    compile: WorkerCompileHook
    threads: int
    timeout_s: float
    settings: MeasureSettings


_POOL: tuple[bytes, WorkerCostEstimator] | None = None
"""The worker pool of this Ray worker process, and the pickled `_NodePool` it was made for:
kept between tasks, so its measurement worker starts once."""


def _node_pool(setup: _NodePool) -> WorkerCostEstimator:
    global _POOL
    key = pickle.dumps(setup)
    if _POOL is None or _POOL[0] != key:
        if _POOL is not None:
            _POOL[1].close()
        _POOL = key, WorkerCostEstimator(workers=1, threads=setup.threads,
                                         timeout_s=setup.timeout_s, compile=setup.compile,
                                         settings=setup.settings, progress=False)
    return _POOL[1]


def _measure_on_node(setup: _NodePool, jobs: list[Job], keys: list[str], *weights: bytes
                     ) -> tuple[str, list[Measurement]]:
    """The Ray task: keep the batch's `weights` (the ``.npy`` files of `keys`) in this
    node's weight store, measure `jobs` with this node's pool, and return the node's
    `host_description` with the measurements."""
    store = weight_store()
    for key, data in zip(keys, weights):
        path = store.path(key)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)
    return host_description(), _node_pool(setup).measure_jobs(jobs)


@dataclass
class _Task:
    """A batch sent to the cluster: indices into the requests, and their jobs."""

    indices: list[int]
    jobs: list[Job]


class RayCostEstimator(CostEstimator):
    """Measures kernels on a Ray cluster (see the module docstring). `address` is Ray's
    (``auto``, ``ray://HOST:PORT``; `ray_address`); an application that has connected to
    Ray already is measured on its cluster. The other arguments are `WorkerCostEstimator`'s,
    ``timeout_s`` applied on the nodes; ``threads`` is each task's CPUs and its pool's
    threads (default: the smallest node's CPUs); ``retries`` is Ray's ``max_retries``."""

    def __init__(
        self,
        address: str,
        *,
        measure_on: str | None = None,
        option: str = "measure-on",
        timeout_s: float = 120.0,
        threads: int | None = None,
        compile: WorkerCompileHook | None = None,
        backend_options: BackendOptions | None = None,
        settings: MeasureSettings = MeasureSettings(),
        retries: int = 1,
        progress: bool | None = None,
    ):
        super().__init__()
        self._what = f"{option} {measure_on or address}"
        self._ray = import_ray(measure_on or address, option)
        if compile is None:  # the backends' own codegen, with their options
            compile = partial(compile_with_backend, options=dict(backend_options or {}))
        check_sendable(compile)
        if not timeout_s > 0:
            raise CollageError(f"measurement: timeout must be positive, not {timeout_s}")
        if threads is not None and threads < 1:
            raise CollageError(f"measurement: need at least one thread, not {threads}")
        self.address = address
        self.timeout_s = timeout_s
        self.threads = threads
        self.retries = retries
        self.progress = progress
        self.settings = settings
        self._compile = compile
        self._remote: Any = None
        """The Ray remote function, once connected."""
        self._shutdown = False
        """Whether this estimator connected to Ray (and disconnects on `close`)."""
        self._slots = 1
        """Batches the cluster's nodes time at once (`threads` CPUs each)."""
        self._weights: dict[str, Any] = {}
        """The weights sent so far: their keys and object references."""
        self.tasks = 0
        """Ray tasks submitted so far (Ray's own retries not included)."""

    def _connect(self) -> Any:
        """The remote task, sized to the cluster's nodes now (connecting on first use: a
        run whose kernels are all in the cost database never connects)."""
        ray = self._ray
        if self._remote is None:
            if not ray.is_initialized():
                try:
                    ray.init(address=self.address, logging_level=logging.WARNING,
                             log_to_driver=False)
                except (ConnectionError, ValueError, RuntimeError) as e:
                    raise CollageError(f"{self._what}: cannot connect to the Ray cluster: "
                                       f"{e}") from None
                self._shutdown = True
            self._remote = ray.remote(_measure_on_node)
        cpus = [int(n["Resources"].get("CPU", 0)) for n in ray.nodes() if n["Alive"]]
        cpus = [c for c in cpus if c > 0]
        if not cpus:
            raise CollageError(f"{self._what}: the Ray cluster has no node with CPUs")
        threads = self.threads or min(cpus)
        self._slots = max(1, sum(c // threads for c in cpus))
        setup = _NodePool(self._compile, threads, self.timeout_s, self.settings)
        return partial(self._remote.options(num_cpus=threads, max_retries=self.retries,
                                            name="collage-measure").remote, setup)

    def _measure(self, request: KernelRequest) -> Measurement:
        (measurement,) = self._measure_many([request])
        return measurement

    def _measure_many(self, requests: Sequence[KernelRequest]) -> Iterator[Measurement]:
        """Batches of whole sub-graphs (`measurement_batches`) as Ray tasks, two per node
        slot at a time; results in request order, each as soon as it and all before it
        are done."""
        if not requests:
            return
        measured = self._dispatch(requests, self._connect())
        with progress_bar(len(requests), self.progress) as bar, closing(measured):
            for measurement in measured:
                bar.update()
                yield measurement

    def _dispatch(self, requests: Sequence[KernelRequest], submit: Any
                  ) -> Iterator[Measurement]:
        """The measurements of `requests`, in order: each batch's jobs made when it is
        sent (`submit`, the sized remote task), its results collected as tasks finish."""
        ray = self._ray
        pending = deque(index_batches(requests, self.settings))
        running: dict[Any, _Task] = {}
        done: dict[int, Measurement] = {}
        next_out = 0
        try:
            while next_out < len(requests):
                while pending and len(running) < 2 * self._slots:
                    task = _Task([], [])
                    for i in pending.popleft():
                        job = job_of(requests[i])
                        if isinstance(job, Measurement):
                            done[i] = job
                        else:
                            task.indices.append(i)
                            task.jobs.append(job)
                    if task.jobs:
                        running[self._submit(submit, task.jobs)] = task
                if running:
                    (ref,), _ = ray.wait(list(running), num_returns=1)
                    self._collect(ref, running.pop(ref), done, pending)
                while next_out in done:
                    yield done.pop(next_out)
                    next_out += 1
        finally:
            for ref in running:  # abandoned mid-way: their results would be stale
                ray.cancel(ref, force=True)

    def _submit(self, submit: Any, jobs: list[Job]) -> Any:
        """Send a batch with the weights it needs (each put into Ray's object store once)."""
        keys = [k for k in dict.fromkeys(k for job in jobs for k in job.weights)
                if k in self._weights or weight_store().path(k).is_file()]
        for key in keys:
            if key not in self._weights:
                self._weights[key] = self._ray.put(weight_store().path(key).read_bytes())
        self.tasks += 1
        return submit(jobs, keys, *(self._weights[k] for k in keys))

    def _collect(self, ref: Any, task: _Task, done: dict[int, Measurement],
                 pending: deque[list[int]]) -> None:
        """The measurements of a finished task, under its node's host; a task that was lost
        (its worker or node died, Ray's retries too) goes back to `pending` one kernel at a
        time, and a lost single kernel is Invalid."""
        exceptions = self._ray.exceptions
        try:
            host, measurements = self._ray.get(ref)
        except exceptions.RayTaskError as e:  # our code failed on the node: not the kernel's
            raise CollageError(f"{self._what}: measurement failed on a node: "
                               f"{type(e.cause).__name__}: {e.cause}") from None
        except exceptions.RayError as e:
            if len(task.indices) > 1:
                pending.extendleft([i] for i in reversed(task.indices))
            else:
                (i,), (job,) = task.indices, task.jobs
                reason = str(e).strip().splitlines()[0] if str(e).strip() else ""
                done[i] = invalid_measurement(f"kernel {job.key} on {job.backend}: lost on "
                                              f"the cluster: {type(e).__name__}: {reason}")
            return
        done.update((i, replace(m, host=host)) for i, m in zip(task.indices, measurements))

    def close(self) -> None:
        """Disconnect from the cluster if this estimator connected."""
        if self._shutdown:
            self._ray.shutdown()
            self._shutdown = False
        self._remote = None

    def __enter__(self) -> RayCostEstimator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
