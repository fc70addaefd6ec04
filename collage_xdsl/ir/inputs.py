"""Seeded random arguments for a function: what kernels are measured on and what
`collage run` feeds a model when no inputs are given.

Floats ~ N(0, 1), random bools, and integers in [0, int_high); an argument that reaches a
`collage.gather` as its indices (directly or through layout ops) draws from [0, axis length)
instead — capped at int_high with ``cap_indices`` — so that random indices are in range.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import SSAValue

from collage_xdsl.dialects import collage as C
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.tensors import np_dtype, shape_of

_LAYOUT = C.ReshapeOp | C.CastOp | C.ExpandOp | C.TransposeOp | C.SliceOp


def gather_bound(value: SSAValue) -> int | None:
    """The size of the axis ``value`` indexes when it reaches a `collage.gather` as indices
    (directly or through layout ops); None when it indexes none."""
    bounds = []
    for use in value.uses:
        op = use.operation
        if isinstance(op, C.GatherOp) and use.index == 1:
            shape = shape_of(op.data.type)
            bounds.append(shape[C.get_int(op.axis, 0) % len(shape)])
        elif isinstance(op, _LAYOUT):
            if (b := gather_bound(op.results[0])) is not None:
                bounds.append(b)
    return min(bounds) if bounds else None


def check_static(func: FuncOp) -> None:
    """Every tensor argument of ``func`` has a static shape, else a CollageError naming it."""
    for arg in func.body.block.args:
        if isinstance(arg.type, TensorType) and any(d < 0 for d in arg.type.get_shape()):
            raise CollageError(f"@{func.sym_name.data} argument %{arg.name_hint or arg.index}: "
                               f"{arg.type} has a dynamic dimension; collage needs static shapes")


def random_array(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype,
                 high: int = 2) -> np.ndarray:
    """Floats ~ N(0, 1), random bools, or integers in [0, high), of `shape`."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, high, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def random_arguments(func: FuncOp, seed: int, int_high: int,
                     cap_indices: bool = False) -> list[np.ndarray]:
    """Seeded arrays matching ``func``'s arguments (see the module docstring)."""
    check_static(func)
    rng = np.random.default_rng(seed)
    arrays = []
    for arg in func.body.block.args:
        if not isinstance(arg.type, TensorType):
            raise CollageError(
                f"@{func.sym_name.data} argument %{arg.name_hint}: {arg.type} is not a tensor"
            )
        shape, dtype = shape_of(arg.type), np_dtype(arg.type.get_element_type())
        high = int_high
        if np.issubdtype(dtype, np.integer):  # indices: in range of the axis they index
            bound = gather_bound(arg)
            high = int_high if bound is None else bound
            if cap_indices:
                high = max(min(high, int_high), 1)
        try:
            arrays.append(random_array(rng, shape, dtype, high))
        except MemoryError as e:
            raise CollageError(f"@{func.sym_name.data} argument %{arg.name_hint}: {e}") from None
    return arrays
