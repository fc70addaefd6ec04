"""Outputs decided by rounding: the softmax of logits so large that one float32 ulp of the
largest logit moves a probability by at least the tolerance. Which backend is "right"
there is a matter of rounding, so such a disagreement is a note, not a failure
(`docs/runtime.md`, "Output agreement"); refinement and the benchmarks share this test.

    ill_conditioned(logits)                        # np.spacing(max |logit|) >= RTOL
    rounding = SoftmaxRounding(module, "main", inputs)
    rounding.note(0)   # why result 0 of @main may disagree, or None when it may not
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, f16
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.traits import SymbolTable

from collage_xdsl.dialects import collage as C
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.interpreter import run_function
from collage_xdsl.ir.tensors import constant_array

RTOL = 1e-3
"""The relative tolerance outputs are compared with (`collage-refine`, the benchmarks)."""

ATOL = 1e-4
"""The absolute tolerance outputs are compared with (`collage-refine`)."""

HALF_TOLERANCE = 1e-2
"""The least rtol and atol a float16 output is compared with: float16 keeps 11 significant
bits, and each op of a float16 model rounds (or, in another library, does not)."""


def tolerances(module: Operation, rtol: float, atol: float) -> tuple[float, float]:
    """The (rtol, atol) the outputs of `module` are compared with: the given ones, raised to
    `HALF_TOLERANCE` when any of its values is a float16 tensor, and atol to one quantization
    step when a function returns a `collage.dequantize_linear` of a constant scale (an
    intermediate quantization may round a value near a half step either way, and libraries
    that run QDQ Conv/MatMul as integer kernels round differently)."""
    steps = [0.0]
    for op in module.walk():
        for v in (*op.operands, *op.results):
            if isinstance(v.type, TensorType) and v.type.get_element_type() == f16:
                rtol, atol = max(rtol, HALF_TOLERANCE), max(atol, HALF_TOLERANCE)
        if isinstance(op, ReturnOp):
            steps += [_step(v) for v in op.operands]
    return rtol, max(atol, max(steps) * STEP_MARGIN)


STEP_MARGIN = 1.001
"""One quantization step, and a little more for the float rounding of the scale product."""


def _step(value: SSAValue) -> float:
    """The quantization step of `value` if a dequantize_linear of a constant scale computes
    it, else 0."""
    op = value.owner
    if isinstance(op, C.DequantizeLinearOp) and isinstance(op.scale.owner, C.ConstantOp):
        return float(np.max(constant_array(op.scale.owner)))
    return 0.0


def ill_conditioned(logits: np.ndarray, rtol: float = RTOL) -> bool:
    """One float32 ulp of the largest logit moves a softmax probability by >= `rtol`."""
    largest = np.float32(np.abs(logits).max()) if logits.size else np.float32(0)
    return logits.dtype == np.float32 and float(np.spacing(largest)) >= rtol


def softmax_logits(func: FuncOp) -> dict[int, SSAValue]:
    """For each result of `func` that a `collage.softmax` computes (directly or through
    reshapes), the softmax's input, by the result's position."""
    ret = func.body.block.last_op
    if not isinstance(ret, ReturnOp):
        raise CollageError(f"@{func.sym_name.data}: the body does not end in func.return")
    found: dict[int, SSAValue] = {}
    for i, value in enumerate(ret.operands):
        op = value.owner
        while isinstance(op, C.ReshapeOp):
            op = op.input.owner
        if isinstance(op, C.SoftmaxOp):
            found[i] = op.input
    return found


class SoftmaxRounding:
    """Which results of `@entry` in `module` (collage ops; kernel regions are run too) may
    disagree by rounding on `inputs` (see the module docstring). `module` is copied when
    the logits are computed: it must not change before."""

    def __init__(self, module: ModuleOp, entry: str, inputs: Sequence[np.ndarray],
                 rtol: float = RTOL):
        func = SymbolTable.lookup_symbol(module, entry)
        if not isinstance(func, FuncOp):
            raise CollageError(f"the module has no function @{entry}")
        self.module, self.entry, self.inputs, self.rtol = module, entry, list(inputs), rtol
        self.softmax_outputs = frozenset(softmax_logits(func))
        """The positions of the results a softmax computes."""
        self._logits: dict[int, np.ndarray] | None = None

    def note(self, output: int) -> str | None:
        """Why a disagreement on result `output` is a matter of rounding (it is the softmax
        of ill-conditioned logits); None when it is not. Interprets the function the first
        time it is asked about a softmax result; a `CollageError` when that fails."""
        if output not in self.softmax_outputs:
            return None
        logits = self.logits()[output]
        if not ill_conditioned(logits, self.rtol):
            return None
        largest = np.float32(np.abs(logits).max())
        return (f"output {output} is the softmax of logits up to {float(largest):.3g}, where "
                f"one float32 ulp is {float(np.spacing(largest)):.3g}: decided by rounding")

    def logits(self) -> dict[int, np.ndarray]:
        """The logits of each softmax result, by position (interpreted on the first call)."""
        if self._logits is None:
            module = self.module.clone()
            func = SymbolTable.lookup_symbol(module, self.entry)
            assert isinstance(func, FuncOp)
            found = softmax_logits(func)
            # the function returns its softmaxes' inputs instead of its results
            ret = func.body.block.last_op
            assert ret is not None
            Rewriter.replace_op(ret, ReturnOp(*found.values()))
            func.function_type = FunctionType.from_lists(
                func.function_type.inputs.data, [v.type for v in found.values()])
            self._logits = dict(zip(found, run_function(func, self.inputs)))
        return self._logits
