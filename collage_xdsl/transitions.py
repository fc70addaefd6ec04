"""Boundary-aware costs: what a whole-model run pays beyond its kernels' isolated costs.

A kernel's measured cost is the time of calling it alone, again and again, on the same
inputs. A partitioned model run by `collage_xdsl.runtime` pays more than the sum:

* ``base``: the runtime's own cost per run (input checks, the step loop, the outputs);
* ``launch[b]``: per kernel call on backend ``b``, what a call costs in a whole-model run
  beyond its cost in a tight loop (the runtime's dispatch, a thread pool that went to
  sleep while another library ran, inputs that are not in the cache any more);
* ``crossing[(a, b)]``: per tensor handed from a kernel on backend ``a`` to one on ``b``
  (``a != b``): fixed seconds + seconds per byte (DLPack / alignment copies, wrapping the
  buffer for the other library, the other library's threads waking up).

    estimate(plan) = base + sum_k (cost_k + launch[b_k]) + sum_{a -> b, a != b} crossing

Host ops (tuples) count as no backend: nothing is charged for tensors to or from them.
:func:`calibrate` measures the figures on chains of ReLU kernels in a worker process:

    T(b x n)    n kernels on b            = base + n * (iso_b + launch_b)
    T(a b a b)  8 kernels alternating a/b = base + 4 (iso_a + launch_a)
                                                 + 4 (iso_b + launch_b) + 7 * crossing(a, b)

with ``iso_b`` the kernel timed alone, as the measured estimator times kernels. Chains of 2
and 8 kernels give the per-kernel slope and ``base``; two tensor sizes (1 KiB, 1 MiB) give
the crossing's fixed and per-byte parts (clamped at zero; one figure for both directions).
:func:`transition_costs` keeps calibrations in the cost database, per backend versions,
host and thread policy, so a warm database calibrates nothing.

Option syntax (``collage-partition{transitions=...}``): ``none``; ``measured``;
``fixed:SECONDS`` (every crossing costs SECONDS, nothing else: for tests and toy backends);
``auto`` is ``measured`` with the measured estimator and ``none`` otherwise.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute

from collage_xdsl.errors import CollageError
from collage_xdsl.graph import DataflowGraph, values_read
from collage_xdsl.index_set import bits
from collage_xdsl.tensors import np_dtype, shape_of

SIZES = (256, 262144)
"""Calibration tensor sizes in float32 elements (1 KiB and 1 MiB)."""
SHORT, LONG = 2, 8
"""Chain lengths of the calibration."""
CALIBRATION_BUDGET_S = 3.0
"""Timing time per tensor size."""


@dataclass(frozen=True)
class TransitionCosts:
    """Seconds a whole-model run pays beyond the kernels' isolated costs."""

    base: float = 0.0
    launch: Mapping[str, float] = field(default_factory=dict)
    crossing: Mapping[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    """(from backend, to backend) -> (fixed seconds, seconds per byte)."""

    @property
    def is_zero(self) -> bool:
        return not self.base and not any(self.launch.values()) and not any(
            f or p for f, p in self.crossing.values())

    def kernel(self, backend: str) -> float:
        """The extra seconds of one call of a kernel on ``backend``."""
        return self.launch.get(backend, 0.0)

    def edge(self, src: str | None, dst: str | None, nbytes: int) -> float:
        """Seconds to hand a tensor of ``nbytes`` from ``src`` to ``dst`` (None: host)."""
        if src is None or dst is None or src == dst:
            return 0.0
        fixed, per_byte = self.crossing.get((src, dst), (0.0, 0.0))
        return fixed + per_byte * nbytes

    def to_json(self) -> dict:
        return {"base": self.base, "launch": dict(self.launch),
                "crossing": [[a, b, f, p] for (a, b), (f, p) in self.crossing.items()]}

    @staticmethod
    def from_json(data: dict) -> TransitionCosts:
        return TransitionCosts(
            float(data["base"]), {k: float(v) for k, v in data["launch"].items()},
            {(a, b): (float(f), float(p)) for a, b, f, p in data["crossing"]})

    def describe(self) -> str:
        """One line: base, launch per backend, fixed crossing per pair (microseconds)."""
        launch = ", ".join(f"{b} {s * 1e6:.1f}" for b, s in sorted(self.launch.items()))
        cross = ", ".join(f"{a}>{b} {f * 1e6:.1f} + {p * 1024e6:.3f}/KiB"
                          for (a, b), (f, p) in sorted(self.crossing.items()))
        return (f"transition costs (us): base {self.base * 1e6:.1f}; launch {launch or '-'}; "
                f"crossing {cross or '-'}")


NONE = TransitionCosts()


def parse_transitions(text: str) -> str | TransitionCosts:
    """``none`` / ``measured`` / ``auto`` (returned as is) or ``fixed:SECONDS``."""
    text = text.strip()
    if text in ("none", "measured", "auto"):
        return text
    kind, sep, value = text.partition(":")
    try:
        seconds = float(value) if kind == "fixed" and sep else -1.0
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:
        raise CollageError(f"transitions: expected none, measured, auto or fixed:SECONDS "
                           f"(SECONDS >= 0), got {text!r}")
    return FixedCrossing(seconds=seconds)


@dataclass(frozen=True)
class FixedCrossing(TransitionCosts):
    """Every tensor between kernels of different backends costs ``seconds``."""

    seconds: float = 0.0

    @property
    def is_zero(self) -> bool:
        return not self.seconds

    def edge(self, src: str | None, dst: str | None, nbytes: int) -> float:
        return 0.0 if src is None or dst is None or src == dst else self.seconds


# ---------------------------------------------------------------------------
# Boundaries of kernels in a graph
# ---------------------------------------------------------------------------


class Boundaries:
    """The tensors crossing kernel boundaries of one graph, with their sizes in bytes."""

    def __init__(self, graph: DataflowGraph):
        self.graph = graph
        self._bytes: dict[tuple[int, int], int] = {}

    def edge_bytes(self, src: int, dst: int) -> int:
        """Bytes of node ``src``'s values that node ``dst`` reads."""
        key = (src, dst)
        if key not in self._bytes:
            produced = set(self.graph.nodes[src].values)
            read = {v for v in values_read(self.graph.nodes[dst].op) if v in produced}
            self._bytes[key] = sum(_nbytes(v.type) for v in read)
        return self._bytes[key]

    def crossings(self, inside: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """For a kernel of nodes ``inside``: (producer node, bytes) of each kernel node
        outside feeding it, and (consumer node, bytes) of each kernel node outside it
        reads its results."""
        nodes = self.graph.nodes
        ins: dict[int, int] = {}
        outs: list[tuple[int, int]] = []
        for u in bits(inside & self.graph.kernel_nodes):
            for p in nodes[u].inputs:
                if not inside >> p & 1 and nodes[p].needs_kernel:
                    ins[p] = ins.get(p, 0) + self.edge_bytes(p, u)
            for q in nodes[u].outputs:
                if not inside >> q & 1 and nodes[q].needs_kernel:
                    outs.append((q, self.edge_bytes(u, q)))
        return list(ins.items()), outs


def _nbytes(type_: Attribute) -> int:
    """The bytes of a tensor handed over (0 for tuples and other non-tensor values)."""
    if not isinstance(type_, TensorType):
        return 0
    return int(np.prod(shape_of(type_))) * np_dtype(type_.get_element_type()).itemsize


@dataclass(frozen=True)
class PlanEstimate:
    """An estimate of one function's whole-run time under a plan, by part."""

    kernels: float
    launches: float
    crossings: float
    base: float

    @property
    def total(self) -> float:
        return self.kernels + self.launches + self.crossings + self.base


def plan_estimate(graph: DataflowGraph, kernels: Sequence, costs: TransitionCosts
                  ) -> PlanEstimate:
    """Estimate running ``graph`` as ``kernels`` (``.inside``, ``.backend``, ``.cost``):
    their costs, a launch per kernel, a crossing per (tensor, consuming kernel) whose
    producer is a kernel of another backend, and the run's base cost."""
    owner: dict[int, str] = {}
    for k in kernels:
        for v in bits(k.inside):
            owner[v] = k.backend
    boundaries = Boundaries(graph)
    crossings = 0.0
    for k in kernels:
        ins, _ = boundaries.crossings(k.inside)
        crossings += sum(costs.edge(owner.get(p), k.backend, n) for p, n in ins)
    return PlanEstimate(
        sum(k.cost for k in kernels if k.cost is not None),
        sum(costs.kernel(k.backend) for k in kernels),
        crossings,
        costs.base if kernels else 0.0,
    )


# ---------------------------------------------------------------------------
# Calibration
# ---------------------------------------------------------------------------


def transition_costs(backends: Sequence[str], versions: Mapping[str, str], policy,
                     db=None) -> TransitionCosts:
    """The calibrated costs for ``backends`` under ``policy``: from ``db`` (a
    `collage_xdsl.cost_db.CostDatabase`) when it has them, else calibrated (and stored).
    A calibration that fails is reported on stderr and costs nothing (``NONE``)."""
    key = json.dumps({"backends": {b: versions[b] for b in sorted(backends)},
                      "threads": policy.threads, "spinning": policy.spinning},
                     sort_keys=True)
    if db is not None:
        found = db.get_transitions(key)
        if found is not None:
            return TransitionCosts.from_json(found)
    try:
        costs = calibrate(backends, policy)
    except CollageError as e:
        print(f"collage: {e}; boundary costs are left out of the search", file=sys.stderr)
        return NONE
    if db is not None:
        db.put_transitions(key, costs.to_json())
    return costs


def calibrate(backends: Sequence[str], policy) -> TransitionCosts:
    """Measure :class:`TransitionCosts` for ``backends`` in a fresh worker process."""
    import concurrent.futures
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    try:
        with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
            return pool.submit(_calibrate, tuple(backends), policy).result()
    except concurrent.futures.process.BrokenProcessPool:
        raise CollageError("transition calibration: the worker process crashed") from None
    except CollageError:
        raise
    except Exception as e:
        raise CollageError(f"transition calibration failed: {type(e).__name__}: {e}") from None


def _chain(backends: Sequence[str], size: int, policy):
    """An Executable running ReLU kernels one after another, kernel i on backends[i]."""
    from xdsl.dialects.builtin import FunctionType, ModuleOp
    from xdsl.dialects.func import FuncOp, ReturnOp
    from xdsl.ir import Block, Region

    from collage_xdsl.dialects import collage as C
    from collage_xdsl.partition import Kernel, partition
    from collage_xdsl.runtime import Executable
    from collage_xdsl.subgraph import SubGraph
    from collage_xdsl.tensors import tensor_type

    t = tensor_type((size,), np.float32)
    block = Block(arg_types=[t])
    value, relus = block.args[0], []
    for _ in backends:
        relus.append(C.ReluOp(value))
        value = relus[-1].results[0]
    block.add_ops([*relus, ReturnOp(value)])
    func = FuncOp("main", FunctionType.from_lists([t], [t]), Region(block))
    module = ModuleOp([func])
    graph = DataflowGraph(func)
    partition(graph, [Kernel(SubGraph(graph, 1 << graph.node_of(op)), b)
                      for op, b in zip(relus, backends)])
    return Executable(module, threads=policy)


def _timed(runs: dict, x: np.ndarray, budget_s: float) -> dict[str, float]:
    """Median seconds per call of each runner, interleaved in rotated rounds."""
    names = list(runs)
    for name in names:
        runs[name]([x])
    samples: dict[str, list[float]] = {n: [] for n in names}
    started, r = time.perf_counter(), 0
    while r < 20 or (time.perf_counter() - started < budget_s and r < 2000):
        for name in names[r % len(names):] + names[: r % len(names)]:
            t0 = time.perf_counter()
            runs[name]([x])
            samples[name].append(time.perf_counter() - t0)
        r += 1
    return {n: float(np.median(s)) for n, s in samples.items()}


def _calibrate(backends: tuple[str, ...], policy) -> TransitionCosts:
    from collage_xdsl.runtime import release_cached_kernels

    fits: list[tuple[int, dict, dict, dict]] = []  # (bytes, launch, base, crossing)
    rng = np.random.default_rng(0)
    for size in SIZES:
        runs: dict[str, object] = {}
        for b in backends:
            short = _chain([b] * SHORT, size, policy)
            runs[f"iso {b}"] = next(iter(short.kernels.values()))
            runs[f"{b} x{SHORT}"] = short.run
            runs[f"{b} x{LONG}"] = _chain([b] * LONG, size, policy).run
        pairs = [(a, b) for i, a in enumerate(backends) for b in backends[i + 1:]]
        for a, b in pairs:
            runs[f"{a}/{b}"] = _chain([a, b] * (LONG // 2), size, policy).run
        t = _timed(runs, rng.normal(size=size).astype(np.float32), CALIBRATION_BUDGET_S)
        per_kernel = {b: (t[f"{b} x{LONG}"] - t[f"{b} x{SHORT}"]) / (LONG - SHORT)
                      for b in backends}
        base = {b: t[f"{b} x{SHORT}"] - SHORT * per_kernel[b] for b in backends}
        launch = {b: per_kernel[b] - t[f"iso {b}"] for b in backends}
        crossing = {}
        for a, b in pairs:
            expected = ((base[a] + base[b]) / 2
                        + LONG // 2 * (per_kernel[a] + per_kernel[b]))
            crossing[(a, b)] = (t[f"{a}/{b}"] - expected) / (LONG - 1)
        fits.append((size * 4, launch, base, crossing))
        release_cached_kernels()
    (small, launch, base, cross_s), (large, _, _, cross_l) = fits
    result: dict[tuple[str, str], tuple[float, float]] = {}
    for pair, xs in cross_s.items():
        per_byte = max(0.0, (cross_l[pair] - xs) / (large - small))
        fixed = max(0.0, xs - per_byte * small)
        result[pair] = result[pair[::-1]] = (fixed, per_byte)
    return TransitionCosts(
        max(0.0, float(np.median(list(base.values())))),
        {b: max(0.0, s) for b, s in launch.items()},
        result,
    )
