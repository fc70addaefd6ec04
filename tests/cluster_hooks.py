"""Compile hooks for the cluster tests (`test_cluster.py`): they run in a measurement
worker on a Ray node, which imports them from here (the test's cluster puts this
directory on its workers' PYTHONPATH)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from collage_xdsl.backends import compile_kernel


def exits_on_relu(module: ModuleOp, backend: str, policy):
    """relu: the measurement worker exits without a word; anything else compiles."""
    if "collage.relu" in str(module):
        os._exit(3)
    return compile_kernel(backend, module, policy)


def kills_the_ray_worker_on_neg(module: ModuleOp, backend: str, policy, marker: str = ""):
    """neg: kills the Ray worker running the task (the measurement worker's parent), as a
    node that dies does; only the first time when `marker` names a file (made then)."""
    if "collage.neg" in str(module) and not (marker and Path(marker).exists()):
        if marker:
            Path(marker).touch()
        os.kill(os.getppid(), signal.SIGKILL)
        os._exit(9)
    return compile_kernel(backend, module, policy)
