"""The process's thread-pool policy for the three backends.

Kernels of different backends run one after another in one process (the measured
cost estimator even interleaves them), so each library gets an explicit, equal
share of the machine instead of its own default:

- threads: ``COLLAGE_THREADS`` or the CPUs this process may run on (2 here), for
  every backend, so that costs compare like with like;
- ONNX Runtime: ``intra_op_num_threads`` = threads, ``inter_op_num_threads`` = 1
  (sequential execution). Its worker threads spin while a run is under way and stop
  when it returns (``spinning="run"``: ``session.intra_op.allow_spinning`` = "1",
  ``session.force_spinning_stop`` = "1"). Spinning is ORT's default and makes most
  runs faster here. ORT's default also leaves them spinning after a run (``"on"``),
  faster still for a session called back to back, but they then burn the cores for
  more than 20 ms and slow down whatever else the process runs: OpenVINO's next 50 ms
  of the MLP, light SqueezeNet or the transformer encoder ran 1.18-1.31x slower right
  after ``"on"``, 1.08-1.11x after a 20 ms pause, and as fast as after ``"off"`` after
  ``"run"``. So ``"on"`` is for a process that runs one ORT session and nothing else;
  kernels of several libraries, the runtime's alternative plans, the benchmark's
  interleaved configurations and the measuring worker all need ``"run"``. ``"off"``:
  the threads block as soon as they find no work. Whole models in one session, against
  ``"off"`` (`scripts/ort_spinning.py`: median per-round ratio, 14 interleaved rounds
  of 50 ms samples, two processes; the ``"on"`` column also slows the other sessions
  timed after it, so it flatters ORT):

  | model | ``"run"`` | ``"on"`` |
  |---|---:|---:|
  | MLP | 0.91, 0.94 | 0.66, 0.70 |
  | MNIST CNN | 0.84, 0.97 | 0.66, 1.15 |
  | ShuffleNet | 0.82, 0.82 | 0.82, 0.82 |
  | SqueezeNet | 0.95, 0.92 | 0.89, 0.90 |
  | DenseNet-121 | 0.91, 0.92 | 0.89, 0.90 |
  | transformer encoder | 0.95, 1.01 | 0.94, 0.92 |
  | ResNet-50 | 1.04, 1.02 | 0.99, 0.97 |

  Worker i (the calling thread is worker 0) is pinned to the i-th CPU this process may
  use (``session.intra_op_thread_affinities``, 1-based ids, the calling thread
  unpinned): unpinned, one session in a process could run at 1.7x the others for its
  whole life, its worker sharing a CPU with the calling thread
  (`scripts/session_spread.py` on light SqueezeNet: six equal sessions, an outlier in 3
  of 5 processes; pinned, none in 6);
- OpenVINO: one stream, ``INFERENCE_NUM_THREADS`` = threads, latency hint, f32
  inference precision (the CPU plugin would pick bf16 here), its worker threads pinned
  (``ENABLE_CPU_PINNING``; the calling thread stays unpinned): unpinned, the same
  model's OpenVINO run took 4.0-4.3 ms in 3 of 6 processes and 2.3-2.4 ms in the others
  (`scripts/session_spread.py` on light SqueezeNet); pinned, 2.3-3.2 ms, following the
  machine's drift as ONNX Runtime's sessions in the same processes do;
- TVM: its pool sizes itself once, from ``TVM_NUM_THREADS`` (default: half the
  logical CPUs, i.e. 1 here), so `configure_tvm` sets that variable before the pool
  exists and then selects ``threads`` workers with ``runtime.config_threadpool``.
  A pool created earlier with fewer workers cannot grow.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

from collage_xdsl.errors import CollageError


def host_cpus() -> int:
    """The number of CPUs this process may run on."""
    return len(os.sched_getaffinity(0))


def _default_threads() -> int:
    env = os.environ.get("COLLAGE_THREADS")
    if env is None:
        return host_cpus()
    if not env.isdigit() or int(env) < 1:
        raise CollageError(f"COLLAGE_THREADS must be a positive integer, got '{env}'")
    return int(env)


SPINNING = ("off", "run", "on")
"""How ONNX Runtime's idle worker threads wait: block at once, spin while a run is under
way, or spin on after it returns as well (see the module docstring)."""
DEFAULT_SPINNING = "run"


@dataclass(frozen=True)
class ThreadPolicy:
    """Thread counts and spinning for every backend (see the module docstring)."""

    threads: int = field(default_factory=_default_threads)
    spinning: str = DEFAULT_SPINNING
    """One of `SPINNING`."""

    def __post_init__(self) -> None:
        if self.threads < 1:
            raise CollageError(f"thread count must be positive, got {self.threads}")
        if self.spinning not in SPINNING:
            raise CollageError(f"spinning must be one of {', '.join(SPINNING)}, "
                               f"got '{self.spinning}'")

    @staticmethod
    def resolve(threads: ThreadPolicy | int | None) -> ThreadPolicy:
        """A policy from a policy, a thread count or None (the process default)."""
        if isinstance(threads, ThreadPolicy):
            return threads
        return ThreadPolicy() if threads is None else ThreadPolicy(threads)

    def onnxruntime_config(self) -> tuple[int, int, dict[str, str]]:
        """(intra-op threads, inter-op threads, session config entries) for ONNX Runtime."""
        spin = "0" if self.spinning == "off" else "1"
        config = {
            "session.intra_op.allow_spinning": spin,
            "session.inter_op.allow_spinning": spin,
        }
        if self.spinning == "run":
            config["session.force_spinning_stop"] = "1"
        if self.threads > 1:
            cpus = sorted(os.sched_getaffinity(0))
            config["session.intra_op_thread_affinities"] = ";".join(
                str(cpus[i % len(cpus)] + 1) for i in range(1, self.threads))
        return self.threads, 1, config

    def openvino_config(self) -> dict[str, object]:
        """The `compile_model` properties for OpenVINO's CPU plugin."""
        return {
            "INFERENCE_PRECISION_HINT": "f32",
            "INFERENCE_NUM_THREADS": self.threads,
            "NUM_STREAMS": 1,
            "PERFORMANCE_HINT": "LATENCY",
            "ENABLE_CPU_PINNING": True,
        }

    def configure_tvm(self) -> None:
        """Size TVM's thread pool (thread-local to the calling thread) to ``threads``."""
        if getattr(_tvm_pool, "threads", None) == self.threads:
            return
        os.environ.setdefault("TVM_NUM_THREADS", str(max(self.threads, host_cpus())))
        import tvm

        tvm.get_global_func("runtime.config_threadpool")(1, self.threads)
        _tvm_pool.threads = self.threads


_tvm_pool = threading.local()
"""`threads`: the worker count last given to this thread's TVM pool."""
