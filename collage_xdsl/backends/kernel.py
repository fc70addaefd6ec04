"""Codegen hooks: lower one kernel function to a backend and get a callable back.

    kernel = compile_kernel("onnxruntime", kernel_func, threads=2)
    (y,) = kernel([x])           # numpy in, numpy out
    kernel.backend, kernel.version

A kernel is a `func.func` of collage ops (collage.composite regions are inlined);
tuple-typed parameters and results are flattened, so a kernel always takes and
returns a flat list of arrays in signature order. Backends:

- ``tvm``: collage ops -> Relax (BlockBuilder) -> `tvm.compile` for the host CPU,
- ``onnxruntime``: collage ops -> ONNX -> InferenceSession (CPU EP),
- ``openvino``: collage ops -> ONNX -> compiled model on CPU in f32.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib import import_module
from typing import Protocol

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from collage_xdsl.backends.threads import ThreadPolicy
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


BACKENDS: dict[str, str] = {
    "tvm": "collage_xdsl.backends.tvm.lowering",
    "onnxruntime": "collage_xdsl.backends.onnxruntime.lowering",
    "openvino": "collage_xdsl.backends.openvino.lowering",
}
"""Backend name -> module whose ``compile(func, policy) -> CompiledKernel`` lowers a kernel."""


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


def compile_kernel(
    backend_name: str,
    module_or_func: ModuleOp | FuncOp,
    threads: ThreadPolicy | int | None = None,
) -> CompiledKernel:
    """Lower and compile a kernel function for ``backend_name`` (tvm, onnxruntime, openvino).

    ``threads`` is a `ThreadPolicy`, a thread count, or None for the process default."""
    module = BACKENDS.get(backend_name)
    if module is None:
        raise KernelCompileError(
            f"unknown backend '{backend_name}' (known: {', '.join(sorted(BACKENDS))})"
        )
    policy = ThreadPolicy.resolve(threads)
    compile_fn: Callable[[FuncOp, ThreadPolicy], CompiledKernel] = import_module(module).compile
    try:
        return compile_fn(kernel_function(module_or_func), policy)
    except KernelCompileError:
        raise
    except CollageError as e:  # e.g. an element type numpy and the backends lack
        raise KernelCompileError(f"{backend_name}: {e}") from None
