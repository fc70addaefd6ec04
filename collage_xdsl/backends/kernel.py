"""Compiled kernels: what a backend's codegen hook returns, and its errors.

    kernel = get_backend("onnxruntime").compile(kernel_func, threads=2)
    (y,) = kernel([x])           # numpy in, numpy out

A kernel is a `func.func` of collage ops (collage.composite regions are inlined);
tuple-typed parameters and results are flattened, so a kernel always takes and returns
a flat list of arrays in signature order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from collage_xdsl.errors import CollageError


class KernelCompileError(CollageError):
    """A backend cannot compile a kernel: an op it has no lowering for, or its compiler failed."""


class KernelRunError(CollageError):
    """A compiled kernel was called with inputs that do not fit its signature, or failed."""


class CompiledKernel(Protocol):
    """A kernel compiled for one backend: ``kernel(inputs) -> outputs`` on numpy arrays.

    The outputs are new writeable arrays the caller may keep and modify."""

    backend: str
    version: str

    def __call__(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]: ...

    def release(self) -> None:
        """Free the backend's session / compiled model (the kernel is unusable afterwards)."""


def kernel_function(module_or_func: ModuleOp | FuncOp) -> FuncOp:
    """The kernel function: ``module_or_func`` itself, or the only function of a module."""
    if isinstance(module_or_func, FuncOp):
        func = module_or_func
    else:
        funcs = [op for op in module_or_func.ops if isinstance(op, FuncOp)]
        if len(funcs) != 1:
            raise KernelCompileError(
                f"a kernel module must hold exactly one func.func, found {len(funcs)}"
            )
        func = funcs[0]
    if func.is_declaration:
        raise KernelCompileError(f"@{func.sym_name.data}: is a declaration without a body")
    return func
