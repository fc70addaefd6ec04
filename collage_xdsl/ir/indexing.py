"""Reference semantics of the indexing ops in numpy, as ONNX defines them, for the
interpreter (`collage_xdsl.ir.interpreter`):

    gather_elements(op, data, indices)      scatter_nd(op, data, indices, updates)
    gather_nd(op, data, indices)            top_k(op, x) -> [values, indices]
    cumsum(op, x)

Negative indices count from the end; an index outside [-d, d) is a ValueError.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from collage_xdsl.dialects import collage as C
from collage_xdsl.dialects.collage import get_bool, get_int


def _wrapped(indices: np.ndarray, dims: Sequence[int] | int, what: str) -> np.ndarray:
    """`indices` with negative values counted from the end of `dims` (broadcast against
    them); one outside [-d, d) is a ValueError naming `what`."""
    dims = np.asarray(dims, dtype=np.int64)
    if indices.size and ((indices < -dims).any() or (indices >= dims).any()):
        raise ValueError(f"indices out of range of {what}")
    return np.where(indices < 0, indices + dims, indices).astype(np.int64)


def gather_elements(op: C.GatherElementsOp, data: np.ndarray, indices: np.ndarray
                    ) -> np.ndarray:
    axis = get_int(op.axis, 0) % data.ndim
    index = _wrapped(indices, data.shape[axis], f"axis {axis} (size {data.shape[axis]})")
    window = tuple(slice(None) if a == axis else slice(0, n) for a, n in enumerate(index.shape))
    return np.take_along_axis(data[window], index, axis)


def _tuples(data_shape: Sequence[int], indices: np.ndarray, batch_dims: int) -> np.ndarray:
    """The index tuples of GatherND / ScatterND wrapped into the dimensions they address."""
    dims = data_shape[batch_dims:batch_dims + indices.shape[-1]]
    return _wrapped(indices, dims, f"dimensions {list(dims)}")


def gather_nd(op: C.GatherNdOp, data: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Batches flattened into one leading dimension, then one fancy index per batch."""
    b = get_int(op.batch_dims, 0)
    m = indices.shape[-1]
    batches = math.prod(data.shape[:b])
    flat = data.reshape((batches, *data.shape[b:]))
    per_batch = math.prod(indices.shape[b:-1])
    tuples = _tuples(data.shape, indices, b).reshape(batches, per_batch, m)
    picked = flat[(np.arange(batches)[:, None], *np.moveaxis(tuples, -1, 0))]
    return picked.reshape((*indices.shape[:-1], *data.shape[b + m:]))


_SCATTER = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def scatter_nd(op: C.ScatterNdOp, data: np.ndarray, indices: np.ndarray,
               updates: np.ndarray) -> np.ndarray:
    """With reduction none, a slice addressed twice gets one of its updates (which one,
    ONNX leaves undefined); a reduction combines every update into it."""
    m = indices.shape[-1]
    where = tuple(np.moveaxis(_tuples(data.shape, indices, 0).reshape(-1, m), -1, 0))
    values = updates.reshape((-1, *data.shape[m:]))
    out = data.copy()
    reduction = op.reduction_name()
    if reduction == "none":
        out[where] = values
    else:
        _SCATTER[reduction].at(out, where, values)
    return out


def top_k(op: C.TopKOp, x: np.ndarray) -> list[np.ndarray]:
    """A stable sort of the values (negated, or bit-inverted for integers, for the
    largest), so that equal values keep the lower index first."""
    axis, k = get_int(op.axis, -1) % x.ndim, get_int(op.k, 1)
    key = x
    if get_bool(op.largest, True):
        key = np.negative(x) if x.dtype.kind == "f" else np.invert(x)
    order = np.take(np.argsort(key, axis=axis, kind="stable"), np.arange(k), axis=axis)
    return [np.take_along_axis(x, order, axis), order.astype(np.int64)]


def cumsum(op: C.CumSumOp, x: np.ndarray) -> np.ndarray:
    axis = get_int(op.axis, 0) % x.ndim
    reverse = get_bool(op.reverse, False)
    if reverse:
        x = np.flip(x, axis)
    total = np.cumsum(x, axis=axis, dtype=x.dtype)
    if get_bool(op.exclusive, False):
        shifted = np.zeros_like(total)
        body = [slice(None)] * x.ndim
        head = list(body)
        body[axis], head[axis] = slice(1, None), slice(None, -1)
        shifted[tuple(body)] = total[tuple(head)]
        total = shifted
    return np.flip(total, axis) if reverse else total
