"""Boundary-aware costs: what a whole-model run pays beyond its kernels' isolated costs.

A kernel's measured cost is the time of calling it alone on the same inputs, each call
right after the L2 caches were evicted (`collage_xdsl.measure.evict`). A partitioned model run by
`collage_xdsl.runtime.executable` pays more than the sum:

* ``base``: the runtime's own cost per run (input checks, the step loop, the outputs);
* ``launch[b]``: per kernel call on backend ``b``, what a call costs in a whole-model run
  beyond its cost alone (the runtime's dispatch, a thread pool that went to sleep while
  another library ran, library state the other kernels displaced);
* ``crossing[(a, b)]``: per tensor handed from a kernel on backend ``a`` to one on ``b``
  (``a != b``): fixed seconds + seconds per byte (DLPack / alignment copies, wrapping the
  buffer for the other library, the other library's threads waking up).

    estimate(plan) = base + sum_k (cost_k + launch[b_k]) + sum_{a -> b, a != b} crossing

with ``cost_k`` the kernel's cost in a plan of several kernels: its cost plus its own
sequence cost, measured with it (`collage_xdsl.measure.estimator.Measurement.sequence`: what a
call right after other kernels of its backend costs beyond a call right after its own).
It over-states what a plan pays: on plans of 5-65 kernels of five models
(`scripts/sequence_penalty.py --max-depth`) the database's sequence costs summed to
2.4-3.1x the run's excess over its calls timed alone on three, 0.87x on one, and the
fifth ran faster than its calls alone. So it is an upper bound that makes the search
prefer fewer kernels; refinement times what it cannot see. A plan of one kernel doing
all the work is that kernel's cost alone.

Host ops (tuples) count as no backend: nothing is charged for tensors to or from them.
:func:`calibrate` measures the figures in a worker process on chains of distinct kernels,
one op each (conv 3x3, batch norm, relu, conv 1x1, sigmoid, transpose, max pool, avg pool,
in turn; kernel i has its own weights), on NCHW tensors:

    T(b x n)    n kernels on b            = base + sum_i iso_i + n * launch_b
    T(a b a b)  8 kernels alternating a/b = base + sum_i iso_i + 4 launch_a + 4 launch_b
                                                 + 7 * crossing(a, b)

with ``iso_i`` kernel i timed alone, as the measured estimator times kernels (right after
the L2 caches were evicted, `collage_xdsl.measure.evict`: what a kernel finds out of the cache in
a run is already in its cost, not in ``launch``). Chains of 2
and 8 kernels give ``launch`` and ``base``; two tensor sizes (16 KiB, 512 KiB) give the
crossing's fixed and per-byte parts (clamped at zero; one figure for both directions).
Distinct kernels matter: a chain of one kernel called again and again (the first version
of this calibration, with ReLUs) keeps that kernel's code, weights and library state hot
and shows no launch cost at all.
:func:`transition_costs` keeps calibrations in the cost database, per backend versions,
host and thread policy, so a warm database calibrates nothing.

Option syntax (``collage-partition{transitions=...}``): ``none``; ``measured``;
``fixed:SECONDS`` (every crossing costs SECONDS, nothing else: for tests and toy backends);
``auto`` is ``measured`` with the measured estimator and ``none`` otherwise.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.traits import SymbolTable

from collage_xdsl.errors import CollageError
from collage_xdsl.core.graph import DataflowGraph, values_read
from collage_xdsl.core.index_set import bits
from collage_xdsl.measure.timing import balanced_order
from collage_xdsl.ir.tensors import tensor_bytes

SHAPES = ((1, 16, 16, 16), (1, 32, 64, 64))
"""Calibration tensor shapes (16 KiB and 512 KiB of float32)."""
SHORT, LONG = 2, 8
"""Chain lengths of the calibration."""
CALIBRATION_VERSION = 3
"""Bumped when the calibration's method changes: older figures in a cost database are
then calibrated again."""
STEADY = 3
"""Calls of a runner in a row, the last one timed."""
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
        """The inverse of `to_json`. Anything else raises ValueError (a figure that is not
        a finite number >= 0: ``fixed`` may be infinite, as `parse_transitions` allows),
        KeyError, TypeError or AttributeError."""
        if "fixed" in data:
            return FixedCrossing(seconds=_seconds(data["fixed"], "fixed", finite=False))
        return TransitionCosts(
            _seconds(data["base"], "base"),
            {b: _seconds(s, f"launch {b}") for b, s in data["launch"].items()},
            {(a, b): (_seconds(f, f"crossing {a}>{b}"), _seconds(p, f"crossing {a}>{b}/byte"))
             for a, b, f, p in data["crossing"]})

    def describe(self) -> str:
        """One line: base, launch per backend, fixed crossing per pair (microseconds)."""
        launch = ", ".join(f"{b} {s * 1e6:.1f}" for b, s in sorted(self.launch.items()))
        cross = ", ".join(f"{a}>{b} {f * 1e6:.1f} + {p * 1024e6:.3f}/KiB"
                          for (a, b), (f, p) in sorted(self.crossing.items()))
        return (f"transition costs (us): base {self.base * 1e6:.1f}; launch {launch or '-'}; "
                f"crossing {cross or '-'}")


NONE = TransitionCosts()


def _seconds(value: object, what: str, finite: bool = True) -> float:
    """``value`` (a JSON number >= 0, finite if ``finite``) as seconds, else ValueError."""
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0
            or finite and value == math.inf):
        raise ValueError(f"{what} {value!r} is not a {'finite ' * finite}number >= 0")
    return float(value)


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

    def to_json(self) -> dict:
        return {"fixed": self.seconds}


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
            self._bytes[key] = sum(tensor_bytes(v.type) for v in read)
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
    producer is a kernel of another backend, and the run's base cost. One kernel doing
    all of the function's work is all there is to a run (the runtime calls it directly,
    `direct_kernel_call`): its cost alone."""
    if len(kernels) == 1 and graph.does_all_work(kernels[0].inside):
        return PlanEstimate(kernels[0].cost if kernels[0].cost is not None else 0.0,
                            0.0, 0.0, 0.0)
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


def direct_kernel_call(main: FuncOp) -> CallOp | None:
    """The call when ``main`` is one call of a ``collage.kernel`` function on its
    arguments, in order, returning its results, all tensors: `collage_xdsl.runtime.executable`
    then calls the kernel directly (no step loop), and the run costs the kernel alone."""
    block = main.body.block
    ops = list(block.ops)
    if len(ops) != 2 or not isinstance(ops[0], CallOp) or not isinstance(ops[1], ReturnOp):
        return None
    call, ret = ops
    callee = SymbolTable.lookup_symbol(call, call.callee)
    same = (len(call.operands) == len(block.args)
            and all(a is b for a, b in zip(call.operands, block.args))
            and len(ret.operands) == len(call.results)
            and all(a is b for a, b in zip(ret.operands, call.results)))
    if not (same and isinstance(callee, FuncOp) and "collage.kernel" in callee.attributes
            and all(isinstance(v.type, TensorType) for v in (*call.operands, *call.results))):
        return None
    return call


def outlined_estimate(main, costs: TransitionCosts) -> PlanEstimate:
    """:func:`plan_estimate` of an outlined ``@main`` (a `func.FuncOp` calling
    ``collage.kernel`` functions, as `collage_xdsl.runtime.executable` runs it): kernels are the
    called functions' ``collage.cost`` (NaN when one has none), one launch per call, a
    crossing per operand a call of another backend produced; a direct kernel call
    (`direct_kernel_call`) is its kernel's cost alone."""
    kernels = launches = crossings = 0.0
    calls = 0
    producer: dict = {}
    for op in main.body.block.ops:
        callee = SymbolTable.lookup_symbol(op, op.callee) if isinstance(op, CallOp) else None
        if not isinstance(callee, FuncOp) or "collage.kernel" not in callee.attributes:
            continue
        backend = callee.attributes["collage.backend"].data  # type: ignore[attr-defined]
        cost = callee.attributes.get("collage.cost")
        kernels += cost.value.data if cost is not None else math.nan  # type: ignore
        launches += costs.kernel(backend)
        crossings += sum(costs.edge(producer.get(v), backend, tensor_bytes(v.type))
                         for v in op.operands)
        producer.update((r, backend) for r in op.results)
        calls += 1
    if direct_kernel_call(main) is not None:
        return PlanEstimate(kernels, 0.0, 0.0, 0.0)
    return PlanEstimate(kernels, launches, crossings, costs.base if calls else 0.0)


# ---------------------------------------------------------------------------
# Calibration
# ---------------------------------------------------------------------------


def transition_costs(backends: Sequence[str], versions: Mapping[str, str], policy,
                     db=None) -> TransitionCosts:
    """The calibrated costs for ``backends`` under ``policy``: from ``db`` (a
    `collage_xdsl.measure.cost_db.CostDatabase`) when it has them, else calibrated (and stored).
    A calibration that fails is reported on stderr and costs nothing (``NONE``)."""
    key = json.dumps({"calibration": CALIBRATION_VERSION,
                      "backends": {b: versions[b] for b in sorted(backends)},
                      "threads": policy.threads, "spinning": policy.spinning},
                     sort_keys=True)
    if db is not None:
        found = db.get_transitions(key)
        if found is not None:
            return found
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


KINDS = ("conv3x3", "batch_norm", "relu", "conv1x1", "sigmoid", "transpose", "max_pool",
         "avg_pool")
"""The op of each position of a calibration chain: unlike kernels, one after another, as
the kernels of a model are (a chain of one kernel called again and again would keep its
code, weights and library state hot, and show no cost beyond the kernel's own)."""


def _node(kind: str, i: int, x: str, channels: int, rng: np.random.Generator):
    """ONNX node ``kind`` at position ``i`` reading ``x`` (shape-preserving), with its
    initializers."""
    from onnx import helper, numpy_helper

    y = f"t{i}"

    def init(name: str, array: np.ndarray):
        return numpy_helper.from_array(array.astype(np.float32), f"{name}{i}")

    if kind.startswith("conv"):
        k = 3 if kind == "conv3x3" else 1
        w = init("w", rng.normal(size=(channels, channels, k, k)) / np.sqrt(channels * k * k))
        return helper.make_node("Conv", [x, w.name], [y], pads=[k // 2] * 4), [w]
    if kind == "batch_norm":
        inits = [init(n, rng.uniform(0.5, 1.5, channels)) for n in ("s", "b", "m", "v")]
        return helper.make_node("BatchNormalization", [x, *(t.name for t in inits)], [y]), inits
    if kind == "transpose":
        return helper.make_node("Transpose", [x], [y], perm=[0, 1, 3, 2]), []
    if kind.endswith("_pool"):
        op = "MaxPool" if kind == "max_pool" else "AveragePool"
        return helper.make_node(op, [x], [y], kernel_shape=[3, 3], pads=[1, 1, 1, 1]), []
    return helper.make_node({"relu": "Relu", "sigmoid": "Sigmoid"}[kind], [x], [y]), []


def _chain(backends: Sequence[str], shape: tuple[int, int, int, int], policy):
    """An Executable running kernel i (op ``KINDS[i % 8]``, its weights seeded by i) on
    ``backends[i]``, one after another, on an NCHW tensor of ``shape`` (H = W). Kernel i
    is the same in every chain, so its isolated cost is timed once."""
    from onnx import TensorProto, helper
    from xdsl.dialects.func import FuncOp

    from collage_xdsl.frontend.onnx_import import import_onnx
    from collage_xdsl.core.regions import Kernel, partition
    from collage_xdsl.runtime.executable import Executable
    from collage_xdsl.core.subgraph import SubGraph

    nodes, inits, x = [], [], "x"
    for i in range(len(backends)):
        node, weights = _node(KINDS[i % len(KINDS)], i, x, shape[1], np.random.default_rng(i))
        nodes.append(node)
        inits += weights
        x = node.output[0]
    graph_proto = helper.make_graph(
        nodes, "calibration", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, shape)], inits)
    module = import_onnx(helper.make_model(graph_proto,
                                           opset_imports=[helper.make_opsetid("", 17)]))
    func = next(op for op in module.ops if isinstance(op, FuncOp))
    graph = DataflowGraph(func)
    ops = [v for v in range(len(graph)) if graph.nodes[v].needs_kernel]
    partition(graph, [Kernel(SubGraph(graph, 1 << v), b) for v, b in zip(ops, backends)])
    return Executable(module, threads=policy)


def _timed(runs: dict, x: np.ndarray, budget_s: float, evicted: set[str], evict
           ) -> dict[str, float]:
    """Median seconds per call of each runner in its steady state: in rounds
    (`balanced_order`), each runner is called ``STEADY`` times in a row and the last call is
    timed, right after ``evict()`` for the runners in ``evicted`` (a kernel timed alone then
    runs as the measured estimator times it, a chain as in back-to-back runs of a model)."""
    names = list(runs)
    samples: dict[str, list[float]] = {n: [] for n in names}
    started, r = time.perf_counter(), 0
    while r < 20 or (time.perf_counter() - started < budget_s and r < 2000):
        for name in balanced_order(names, r):
            for _ in range(STEADY - 1):
                runs[name]([x])
            if name in evicted:
                evict()
            t0 = time.perf_counter()
            runs[name]([x])
            samples[name].append(time.perf_counter() - t0)
        r += 1
    return {n: float(np.median(s)) for n, s in samples.items()}


def _calibrate(backends: tuple[str, ...], policy) -> TransitionCosts:
    from collage_xdsl.measure.evict import Evictor
    from collage_xdsl.runtime.executable import release_cached_kernels

    fits: list[tuple[int, dict, dict, dict]] = []  # (bytes, launch, base, crossing)
    rng = np.random.default_rng(0)
    for shape in SHAPES:
        runs: dict[str, object] = {}
        iso: dict[str, list[str]] = {}
        """Runner names of each chain's kernels, timed alone."""

        def add_chain(name: str, on: list[str]) -> None:
            exe = _chain(on, shape, policy)
            runs[name] = exe.run
            iso[name] = []
            for i, (b, kernel) in enumerate(zip(on, exe.kernels.values())):
                runs.setdefault(f"iso {b} {i}", kernel)
                iso[name].append(f"iso {b} {i}")

        for b in backends:
            add_chain(f"{b} x{SHORT}", [b] * SHORT)
            add_chain(f"{b} x{LONG}", [b] * LONG)
        pairs = [(a, b) for i, a in enumerate(backends) for b in backends[i + 1:]]
        for a, b in pairs:
            add_chain(f"{a}/{b}", [a, b] * (LONG // 2))
        alone = {k for kernels in iso.values() for k in kernels}
        t = _timed(runs, rng.normal(size=shape).astype(np.float32), CALIBRATION_BUDGET_S,
                   alone, Evictor(policy.threads))
        extra = {name: t[name] - sum(t[k] for k in kernels) for name, kernels in iso.items()}
        """What each chain costs beyond its kernels timed alone."""
        launch = {b: (extra[f"{b} x{LONG}"] - extra[f"{b} x{SHORT}"]) / (LONG - SHORT)
                  for b in backends}
        base = {b: extra[f"{b} x{SHORT}"] - SHORT * launch[b] for b in backends}
        crossing = {}
        for a, b in pairs:
            expected = (base[a] + base[b]) / 2 + LONG // 2 * (launch[a] + launch[b])
            crossing[(a, b)] = (extra[f"{a}/{b}"] - expected) / (LONG - 1)
        fits.append((int(np.prod(shape)) * 4, launch, base, crossing))
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
