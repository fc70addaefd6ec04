"""The Relax lowerings of the indexing ops (merged into `collage_xdsl.backends.tvm.lowering`'s
table): gather_elements, gather_nd, scatter_nd, top_k and cumsum.

    %v, %i = collage.top_k %x {k = 2, axis = 1, largest = true}
        ->  t = R.topk(x, 2, 1, "both", True, "int64"); (t[0], t[1])

Relax's gathers and scatters read indices in [0, d): negative ones are wrapped first, as
ONNX counts them from the end. Relax's cumsum has no `reverse`: it runs between two flips.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from tvm import relax
from xdsl.ir import Operation

from collage_xdsl.dialects import collage as C
from collage_xdsl.dialects.collage import get_bool, get_int
from collage_xdsl.ir.tensors import np_dtype, shape_of

R = relax.op


def _bind(expr: relax.Expr) -> relax.Var:
    """Bind an intermediate (Relax infers types binding by binding)."""
    return relax.BlockBuilder.current().emit(expr)


def _wrapped(indices, index_type, dims: Sequence[int]):
    """`indices + dims` where an index is negative; `dims` broadcast along the last axis."""
    dtype = str(np_dtype(index_type.get_element_type()))
    negative = _bind(R.less(indices, relax.const(0, dtype)))
    shifted = _bind(R.add(indices, relax.const(np.array(dims, dtype=dtype), dtype)))
    return _bind(R.where(negative, shifted, indices))


def _gather_elements(op: C.GatherElementsOp, data, indices):
    shape = shape_of(op.data.type)
    axis = get_int(op.axis, 0) % len(shape)
    return R.gather_elements(data, _wrapped(indices, op.indices.type, shape[axis]), axis)


def _gather_nd(op: C.GatherNdOp, data, indices):
    b, m = get_int(op.batch_dims, 0), shape_of(op.indices.type)[-1]
    dims = shape_of(op.data.type)[b:b + m]
    return R.gather_nd(data, _wrapped(indices, op.indices.type, dims), b)


def _scatter_nd(op: C.ScatterNdOp, data, indices, updates):
    dims = shape_of(op.data.type)[:shape_of(op.indices.type)[-1]]
    reduction = op.reduction_name()
    return R.scatter_nd(data, _wrapped(indices, op.indices.type, dims), updates,
                        "update" if reduction == "none" else reduction)


def _top_k(op: C.TopKOp, x) -> list:
    both = _bind(R.topk(x, get_int(op.k, 1), get_int(op.axis, -1), "both",
                        get_bool(op.largest, True), "int64"))
    return [relax.TupleGetItem(both, 0), relax.TupleGetItem(both, 1)]


def _cumsum(op: C.CumSumOp, x):
    axis, reverse = get_int(op.axis, 0), get_bool(op.reverse, False)
    if reverse:
        x = _bind(R.flip(x, axis))
    total = R.cumsum(x, axis, exclusive=get_bool(op.exclusive, False))  # in x's dtype
    return R.flip(_bind(total), axis) if reverse else total


LOWER: dict[type[Operation], Callable] = {
    C.GatherElementsOp: _gather_elements,
    C.GatherNdOp: _gather_nd,
    C.ScatterNdOp: _scatter_nd,
    C.TopKOp: _top_k,
    C.CumSumOp: _cumsum,
}
"""Op class -> (op, *operand expressions) -> its Relax expression(s)."""
