"""A kernel's flat signature: checks the arrays a compiled kernel is called with."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.func import FuncOp

from collage_xdsl.backends.kernel import KernelRunError
from collage_xdsl.backends.walk import flat_types
from collage_xdsl.ir.tensors import np_dtype, shape_of


@dataclass(frozen=True)
class Signature:
    """The flat input and output tensor types of a kernel, as (shape, dtype) pairs."""

    name: str
    backend: str
    inputs: tuple[tuple[tuple[int, ...], np.dtype], ...]
    outputs: tuple[tuple[tuple[int, ...], np.dtype], ...]

    @staticmethod
    def of(func: FuncOp, backend: str) -> Signature:
        def spec(types):
            return tuple((shape_of(t), np_dtype(t.get_element_type())) for t in flat_types(types))

        return Signature(func.sym_name.data, backend, spec(func.function_type.inputs.data),
                         spec(func.function_type.outputs.data))

    def check(self, inputs: Sequence[np.ndarray]) -> Sequence[np.ndarray]:
        """``inputs`` as C-contiguous arrays, or `KernelRunError` naming the misfit."""
        if len(inputs) == len(self.inputs):  # the common case: every array fits as it is
            for x, (shape, dtype) in zip(inputs, self.inputs):
                if not (type(x) is np.ndarray and x.shape == shape and x.dtype == dtype
                        and x.flags.c_contiguous):
                    break
            else:
                return inputs
        if len(inputs) != len(self.inputs):
            raise KernelRunError(
                f"{self.backend} kernel @{self.name}: expected {len(self.inputs)} inputs, "
                f"got {len(inputs)}"
            )
        checked = []
        for i, (x, (shape, dtype)) in enumerate(zip(inputs, self.inputs)):
            if not isinstance(x, np.ndarray) or x.shape != shape or x.dtype != dtype:
                got = (f"{x.dtype}{list(x.shape)}" if isinstance(x, np.ndarray)
                       else type(x).__name__)
                raise KernelRunError(
                    f"{self.backend} kernel @{self.name}: input {i} must be "
                    f"{dtype}{list(shape)}, got {got}"
                )
            checked.append(x if x.flags.c_contiguous else np.ascontiguousarray(x))
        return checked
