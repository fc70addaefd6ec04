"""Evicting the private caches before a kernel is timed alone: its cost as in a whole run.

    evict = Evictor(threads=2)
    evict(); t0 = clock(); kernel(inputs); cost = clock() - t0

A kernel in a whole run finds its weights and inputs out of the cores' L2 caches: the
kernels before it displaced them. Called again and again alone, it finds them in L2 and
looks faster. `scripts/in_run_cost.py` on artifacts of the light model-zoo models'
Dijkstra plans (as the cost databases chose them before eviction; 2 threads, 2 cores with
1 MiB of L2 each and 32 MiB of shared L3):

| plan | run | kernel calls in run order | each repeated at once | each after eviction |
|---|---:|---:|---:|---:|
| ResNet-50, 40 calls | 23.5 ms | 23.5 ms | 22.2 ms | 23.6 ms |
| Inception-v2, 56 calls | 12.5 ms | 12.8 ms | 9.9 ms | 12.8 ms |
| AlexNet, 6 calls | 8.6 ms | 8.5 ms | 7.6 ms | 8.5 ms |

So the estimator and the additivity check time a kernel alone right after writing a
buffer as large as the L2 caches of the cores it runs on (L2 size per core from sysfs x
threads; 1 MiB per thread where the system does not say) -- when the model's run does
not fit in them (`needs_eviction`). When it does (the MNIST CNN: 0.1 MiB), a kernel finds
its data in L2 in a run too, and eviction only adds a cold start: the MNIST CNN's one
OpenVINO kernel timed after eviction was 7% above its run, timed back to back 1% below.
A one-off variant that wrote 48 MiB, flushing the shared L3 too, overshot: 28.8 ms
against a 24.8 ms run for ResNet-50, 18.2 ms against 14.9 ms for Inception-v2.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import CallOp, FuncOp

from collage_xdsl.ir.tensors import tensor_bytes

LINE = 64
"""Bytes per cache line: one write per line evicts it."""
DEFAULT_L2 = 1 << 20
"""L2 bytes per core assumed where sysfs does not tell."""


def l2_bytes(cpu: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> int:
    """The L2 cache size of one core, from Linux's sysfs (`DEFAULT_L2` elsewhere)."""
    for index in sorted(cpu.glob("index*")):
        try:
            if (index / "level").read_text().strip() != "2":
                continue
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20}.get(size[-1:], 1)
        digits = size.rstrip("KM")
        if digits.isdigit() and int(digits) > 0:
            return int(digits) * scale
    return DEFAULT_L2


class Evictor:
    """Writes one byte per cache line of a buffer as large as `threads` cores' L2 caches."""

    def __init__(self, threads: int, nbytes: int | None = None):
        self.nbytes = max(1, threads) * l2_bytes() if nbytes is None else nbytes
        self._buffer = np.zeros(self.nbytes, np.uint8)

    def __call__(self) -> None:
        self._buffer[::LINE] += 1


def footprint(module: ModuleOp) -> int:
    """Bytes of the tensors a run of ``module`` touches: every function's tensor arguments
    and every tensor an op defines (constants included), `func.call` results left out
    (their callee defines them)."""
    values = [a for f in module.walk() if isinstance(f, FuncOp) and not f.is_declaration
              for block in f.body.blocks for a in block.args]
    values += [r for op in module.walk() if not isinstance(op, CallOp) for r in op.results]
    return sum(tensor_bytes(v.type) for v in values)


def needs_eviction(module: ModuleOp, threads: int) -> bool:
    """Whether kernels of ``module`` timed alone are timed after eviction: when a run
    touches more than the L2 caches of ``threads`` cores hold."""
    return footprint(module) > max(1, threads) * l2_bytes()
