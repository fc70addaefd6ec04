"""The thread-pool policy every backend runs with: an explicit, equal share of the machine.

    policy = ThreadPolicy(threads=2, spinning="run")
    policy.onnxruntime_config(); policy.openvino_config(); policy.configure_tvm()
    alone = ThreadPolicy.library_defaults(2)    # one library in a process, as users run it

Threads: ``COLLAGE_THREADS`` or the CPUs this process may run on. ONNX Runtime: that many
intra-op threads, one inter-op, its workers pinned, spinning only while a run is under way
(``"run"``: threads left spinning slow whatever the process runs next). OpenVINO: one
stream, that many threads pinned, the latency hint, f32 (its CPU default here is bf16).
TVM: its pool sized before it exists. `library_defaults` keeps only the thread count, f32
and the latency hint, and leaves the rest to each library (ONNX Runtime's threads spin on
after a run). Why each setting: `docs/measurement.md`, "Backends and their threads".
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
    own_defaults: bool = False
    """Each library's own settings but the thread count, f32 and OpenVINO's latency hint
    (`library_defaults`)."""

    def __post_init__(self) -> None:
        if self.threads < 1:
            raise CollageError(f"thread count must be positive, got {self.threads}")
        if self.spinning not in SPINNING:
            raise CollageError(f"spinning must be one of {', '.join(SPINNING)}, "
                               f"got '{self.spinning}'")
        if self.own_defaults and self.spinning != "on":
            raise CollageError(f"a library's own defaults spin on after a run, not "
                               f"'{self.spinning}'")

    @staticmethod
    def library_defaults(threads: int | None = None) -> ThreadPolicy:
        """A library as its users run it, alone in a process: its own defaults but an
        explicit thread count (ONNX Runtime's intra-op threads, OpenVINO's inference
        threads), f32 and OpenVINO's latency hint; ONNX Runtime's threads spin on after a
        run, as they do by default."""
        return ThreadPolicy(_default_threads() if threads is None else threads, "on",
                            own_defaults=True)

    @staticmethod
    def resolve(threads: ThreadPolicy | int | None) -> ThreadPolicy:
        """A policy from a policy, a thread count or None (the process default)."""
        if isinstance(threads, ThreadPolicy):
            return threads
        return ThreadPolicy() if threads is None else ThreadPolicy(threads)

    def onnxruntime_config(self) -> tuple[int, int, dict[str, str]]:
        """(intra-op threads, inter-op threads, session config entries) for ONNX Runtime;
        0 inter-op threads is ONNX Runtime's default."""
        if self.own_defaults:
            return self.threads, 0, {}
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
        if self.own_defaults:
            return {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": self.threads,
                    "PERFORMANCE_HINT": "LATENCY"}
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
