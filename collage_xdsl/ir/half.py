"""float16 in the reference interpreter: an op computes on float16 operands in float32 and
rounds each float16 result, as ONNX Runtime's CPU provider runs float16 ops through the
float32 kernels it casts around them (`collage_xdsl.ir.interpreter`, `evaluate_op`).

    %s = collage.reduce_sum %x : tensor<8192xf16> -> tensor<f16>
    widen(x) -> float32[8192] -> sum in float32 -> narrow(s, tensor<f16>) -> float16[]
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType, TupleType
from xdsl.ir import Attribute

from collage_xdsl.ir.tensors import np_dtype

Value = np.ndarray | tuple


def widen(value: Value) -> Value:
    """``value`` with its float16 arrays (in tuples too) as float32."""
    if isinstance(value, tuple):
        return tuple(widen(v) for v in value)
    return value.astype(np.float32) if value.dtype == np.float16 else value


def narrow(value: Value, t: Attribute) -> Value:
    """``value`` with its float32 arrays (in tuples too) that IR type ``t`` types as float16
    rounded to float16; any other value unchanged (a mismatch is left to the type check)."""
    if isinstance(value, tuple) and isinstance(t, TupleType):
        return tuple(narrow(v, et) for v, et in zip(value, t.types.data))
    if (isinstance(value, np.ndarray) and value.dtype == np.float32
            and isinstance(t, TensorType) and np_dtype(t.get_element_type()) == np.float16):
        return value.astype(np.float16)
    return value
