"""Calibrating boundary costs (`collage_xdsl.core.boundaries.TransitionCosts`): chains of
one-op kernels run end to end by the runtime, against their kernels timed alone.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence

import numpy as np

from collage_xdsl.backends import BackendOptions
from collage_xdsl.core.boundaries import NONE, TransitionCosts
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.inputs import random_array
from collage_xdsl.ir.tensors import weight_store
from collage_xdsl.measure.timing import interleave, repeat, rounds_within
from collage_xdsl.measure.workers import enter_worker

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


def transition_costs(backends: Sequence[str], versions: Mapping[str, str], policy,
                     db=None, options: BackendOptions | None = None) -> TransitionCosts:
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
        costs = calibrate(backends, policy, options)
    except CollageError as e:
        print(f"collage: {e}; boundary costs are left out of the search", file=sys.stderr)
        return NONE
    if db is not None:
        db.put_transitions(key, costs.to_json())
    return costs


def calibrate(backends: Sequence[str], policy, options: BackendOptions | None = None
              ) -> TransitionCosts:
    """Measure :class:`TransitionCosts` for ``backends`` (with their `options`) in a fresh
    worker process."""
    import concurrent.futures
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    try:
        with concurrent.futures.ProcessPoolExecutor(
                1, mp_context=context, initializer=enter_worker,
                initargs=(policy.threads, str(weight_store().root))) as pool:
            return pool.submit(_calibrate, tuple(backends), policy, dict(options or {})).result()
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


def _chain(backends: Sequence[str], shape: tuple[int, int, int, int], policy,
           options: BackendOptions | None = None):
    """An Executable running kernel i (op ``KINDS[i % 8]``, its weights seeded by i) on
    ``backends[i]``, one after another, on an NCHW tensor of ``shape`` (H = W). Kernel i
    is the same in every chain, so its isolated cost is timed once."""
    from onnx import TensorProto, helper
    from xdsl.dialects.func import FuncOp

    from collage_xdsl.core.regions import Kernel, form_regions
    from collage_xdsl.core.subgraph import SubGraph
    from collage_xdsl.frontend.onnx_import import import_onnx
    from collage_xdsl.runtime.executable import Executable

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
    form_regions(graph, [Kernel(SubGraph(graph, 1 << v), b) for v, b in zip(ops, backends)])
    return Executable(module, threads=policy, backend_options=options)


def _timed(runs: dict, x: np.ndarray, budget_s: float, evicted: set[str], evict
           ) -> dict[str, float]:
    """Median seconds per call of each runner in its steady state: in rounds
    (`balanced_order`), each runner is called ``STEADY`` times in a row and the last call is
    timed, right after ``evict()`` for the runners in ``evicted`` (a kernel timed alone then
    runs as the measured estimator times it, a chain as in back-to-back runs of a model)."""
    def sample(name: str) -> float:
        (seconds,) = repeat(lambda: runs[name]([x]), 1, warm=STEADY - 1,
                            evict=evict if name in evicted else None)
        return seconds

    samples = interleave(list(runs), rounds_within(20, budget_s, 2000), sample)
    return {n: float(np.median(s)) for n, s in samples.items()}


def _calibrate(backends: tuple[str, ...], policy, options: BackendOptions | None = None
               ) -> TransitionCosts:
    from collage_xdsl.measure.evict import Evictor
    from collage_xdsl.runtime.executable import release_cached_kernels

    fits: list[tuple[int, dict, dict, dict]] = []  # (bytes, launch, base, crossing)
    rng = np.random.default_rng(0)
    for shape in SHAPES:
        runs: dict[str, object] = {}
        iso: dict[str, list[str]] = {}
        """Runner names of each chain's kernels, timed alone."""

        def add_chain(name: str, on: list[str]) -> None:
            exe = _chain(on, shape, policy, options)
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
        t = _timed(runs, random_array(rng, shape, np.float32), CALIBRATION_BUDGET_S,
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
