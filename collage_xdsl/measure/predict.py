"""Predicted kernel costs: what a candidate kernel would cost on a backend before it is
timed, and how far off such a prediction may be.

    features = KernelFeatures(graph)
    x = features.of(sub_graph)                      # one row: FLOPs, bytes, op families
    predictor = CostPredictor.fit(rows, seconds)    # one backend's measured kernels
    low, high = predictor.bounds(rows_to_predict)   # seconds, each within the error band

A kernel's features are what its run time follows: the FLOPs of its ops (a convolution
or matmul by its multiply-adds, other ops by the elements they write), the bytes it reads
from outside, writes out and holds as weights, and how many ops of each family it has
(a per-op cost). The model is scikit-learn's non-negative linear regression on those
features, fitted to relative error: time is a per-call cost plus a cost per op, per FLOP
and per byte, so it extrapolates from small kernels to large ones. Its error band is
the largest relative error of its cross-validated predictions (`CostPredictor.band`),
widened by `BAND_MARGIN`; with fewer than `MIN_FIT` measured kernels there is no prediction and the
bounds are (0, inf). `collage_xdsl.planner.promising` uses the bounds to measure only the
candidates that can still be on the best plan.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ShapedType
from xdsl.ir import Operation

from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.ir.tensors import tensor_bytes

FAMILIES: dict[str, tuple[str, ...]] = {
    "conv": ("conv2d", "conv_transpose2d"),
    "contraction": ("matmul", "einsum"),
    "window": ("max_pool2d", "avg_pool2d", "global_avg_pool2d", "lrn"),
    "normalization": ("softmax", "layer_norm", "batch_norm", "instance_norm", "group_norm"),
    "reduction": ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_l2",
                  "argmax", "top_k", "cumsum"),
    "movement": ("reshape", "transpose", "concat", "split", "slice", "gather", "pad", "tile",
                 "expand", "resize", "gather_elements", "gather_nd", "scatter_nd", "tuple",
                 "get_item"),
    "quantization": ("quantize_linear", "dequantize_linear"),
}
"""Op families counted apart; every other op counts as element-wise."""
_FAMILY_OF = {f"collage.{op}": family for family, ops in FAMILIES.items() for op in ops}
FEATURES = ("flops", "bytes_in", "bytes_out", "weight_bytes",
            *FAMILIES, "elementwise", "call")
"""The columns of a feature row: amounts, then op counts per family, then 1 (a call)."""
_READS_ALL = ("window", "normalization", "reduction")
"""Families whose FLOPs follow the elements they read."""
MIN_FIT = 6
"""Measured kernels a backend needs before its costs are predicted."""
MAX_FIT = 1000
"""At most this many measured kernels (a seeded sample) are fitted."""
MIN_SECONDS = 1e-7
"""Costs are fitted in log seconds from this up."""
FOLDS = 5
"""Cross-validation folds of the error band."""
BAND_QUANTILE = 0.9
"""The error band covers this share of the cross-validated errors each way..."""
BAND_MARGIN = 1.25
"""... widened by this factor."""


def _elements(value_type) -> int:
    return math.prod(value_type.get_shape()) if isinstance(value_type, ShapedType) else 1


def op_flops(op: Operation) -> float:
    """Floating-point operations of one op: twice the multiply-adds of a convolution or a
    contraction, the elements it writes otherwise (its operands' for a reduction)."""
    name = op.name.removeprefix("collage.")
    out = sum(_elements(r.type) for r in op.results)
    if name == "conv2d" and len(op.operands) > 1:
        weight = op.operands[1].type.get_shape()  # (C_out, C_in / groups, kh, kw)
        return 2.0 * out * math.prod(weight[1:])
    if name == "conv_transpose2d" and len(op.operands) > 1:
        weight = op.operands[1].type.get_shape()  # (C_in, C_out / groups, kh, kw)
        return 2.0 * _elements(op.operands[0].type) * math.prod(weight[1:])
    if name == "matmul":
        return 2.0 * out * op.operands[0].type.get_shape()[-1]
    if name == "einsum":
        return 2.0 * max(out, *(_elements(v.type) for v in op.operands))
    if _FAMILY_OF.get(op.name) in _READS_ALL:
        return float(max(out, *(_elements(v.type) for v in op.operands)))
    return float(out)


class KernelFeatures:
    """The feature rows of a graph's sub-graphs (`FEATURES`), from per-node parts
    computed once."""

    def __init__(self, graph: DataflowGraph):
        self.graph = graph
        self.nodes = np.zeros((len(graph.nodes), len(FEATURES)))
        self.value_bytes = np.zeros(len(graph.nodes))
        for node in graph.nodes:
            self.value_bytes[node.index] = sum(tensor_bytes(v.type) for v in node.values)
            if not node.needs_kernel:
                continue
            row = self.nodes[node.index]
            row[0] = op_flops(node.op)
            row[3] = sum(tensor_bytes(v.type) for p in bits(node.input_set & graph.constants)
                         for v in graph.nodes[p].values)
            row[FEATURES.index(_FAMILY_OF.get(node.op.name, "elementwise"))] = 1.0

    def of(self, sub: SubGraph) -> np.ndarray:
        """The feature row of `sub` as one kernel."""
        graph = self.graph
        inside = [i for i in bits(sub.inside & graph.kernel_nodes)]
        row = self.nodes[inside].sum(axis=0)
        row[1] = self.value_bytes[list(bits(sub.input & ~graph.constants))].sum()
        row[2] = self.value_bytes[list(bits(sub.exit))].sum()
        row[-1] = 1.0
        return row


@dataclass(frozen=True)
class CostPredictor:
    """One backend's cost model (see the module docstring): a prediction may be up to
    `over` times too high and `under` times too low."""

    model: object | None
    over: float
    under: float

    @classmethod
    def fit(cls, rows: Sequence[np.ndarray], seconds: Sequence[float]) -> CostPredictor:
        """Fitted to measured kernels (`rows`, their `seconds`); with fewer than `MIN_FIT`
        of them, the predictor that knows nothing (bounds 0 and inf)."""
        x = _log_features(rows)
        y = np.log(np.maximum(np.asarray(seconds, dtype=float), MIN_SECONDS))
        if len(y) < MIN_FIT:
            return cls(None, math.inf, math.inf)
        if len(y) > MAX_FIT:  # a seeded sample: the fit's time grows with its rows
            keep = np.random.default_rng(0).choice(len(y), MAX_FIT, replace=False)
            x, y = x[keep], y[keep]
        from sklearn.model_selection import KFold

        held_out = np.empty(len(y))
        for fit, test in KFold(min(FOLDS, len(y)), shuffle=True, random_state=0).split(x):
            held_out[test] = _fitted(x[fit], y[fit]).predict(x[test])
        error = held_out - y
        over, under = np.quantile(error, BAND_QUANTILE), np.quantile(-error, BAND_QUANTILE)
        return cls(_fitted(x, y), math.exp(max(over, 0.0)) * BAND_MARGIN,
                   math.exp(max(under, 0.0)) * BAND_MARGIN)

    def predict(self, rows: Sequence[np.ndarray]) -> np.ndarray:
        """Predicted seconds of each row (nan when nothing is known)."""
        if self.model is None:
            return np.full(len(rows), math.nan)
        return np.exp(self.model.predict(_log_features(rows)))

    def bounds(self, rows: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of each row's seconds; 0 and inf when nothing is
        known."""
        if self.model is None:
            return np.zeros(len(rows)), np.full(len(rows), math.inf)
        predicted = self.predict(rows)
        return predicted / self.over, predicted * self.under


def _log_features(rows: Sequence[np.ndarray]) -> np.ndarray:
    return np.log1p(np.asarray(rows, dtype=float).reshape(len(rows), len(FEATURES)))


def _fitted(x: np.ndarray, y: np.ndarray):
    """Gradient-boosted trees on the log features, predicting log seconds."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(max_iter=40, min_samples_leaf=3,
                                         random_state=0).fit(x, y)
