"""Evicting the cores' L2 caches before a kernel is timed alone: its cost as in a whole run,
where the kernels before it displaced its data.

    evict = Evictor(threads=2)
    evict(); seconds = timed(lambda: kernel(inputs))
    needs_eviction(module, threads=2)   # False when a whole run fits in the L2 caches

The evictor writes one byte per cache line of a buffer as large as the L2 caches of
`threads` cores (from sysfs). Measured effects: `docs/measurement.md`, "L2 eviction,
and when not".
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
