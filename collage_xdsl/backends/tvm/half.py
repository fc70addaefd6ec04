"""float16 in the TVM lowering: the ops that accumulate (contractions, einsum, reductions,
cumulative sums, pooling, softmax, normalizations) compute on float16 operands in float32
and round their result to float16, as ONNX Runtime and OpenVINO do on the CPU (Relax alone
would accumulate in float16). Other ops compute in float16.

    %r = collage.matmul %a, %b : (tensor<4x64xf16>, tensor<64x8xf16>) -> tensor<4x8xf16>
      ->  a32 = R.astype(a, "float32"); b32 = R.astype(b, "float32")
          r32 = R.matmul(a32, b32); R.astype(r32, "float16")
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from tvm import relax
from xdsl.ir import Operation

from collage_xdsl.dialects import collage as C
from collage_xdsl.ir.tensors import np_dtype

ACCUMULATING: tuple[type[Operation], ...] = (
    C.MatmulOp, C.Conv2dOp, C.ConvTranspose2dOp, C.EinsumOp, C.ReduceSumOp, C.ReduceMeanOp,
    C.ReduceL2Op, C.CumSumOp, C.AvgPool2dOp, C.GlobalAvgPool2dOp, C.SoftmaxOp, C.LayerNormOp,
    C.InstanceNormOp, C.GroupNormOp,
)
"""The ops `widened` lowers in float32 when their operands are float16."""


def _is_half(op: Operation, i: int) -> bool:
    return np_dtype(op.operands[i].type.get_element_type()) == np.float16


def widened(lower: Callable) -> Callable:
    """``lower`` (op, *operands -> expr), computing in float32 for a float16 op: its float16
    operands cast up, its result cast back to float16."""

    def lower_in_float32(op: Operation, *operands):
        if not _is_half(op, 0):
            return lower(op, *operands)
        emit = relax.BlockBuilder.current().emit
        wide = [emit(relax.op.astype(x, "float32")) if _is_half(op, i) else x
                for i, x in enumerate(operands)]
        return relax.op.astype(emit(lower(op, *wide)), "float16")

    return lower_in_float32
