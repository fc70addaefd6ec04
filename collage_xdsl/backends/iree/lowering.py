"""The IREE hook: kernel -> `collage-lower-linalg` (strict) -> `iree.compiler` for the host
CPU -> a function of an `iree.runtime` context on a `local-task` device.

The device's worker count is the policy's thread count (IREE reads its task topology
from process flags when a device is made, so one device is kept per count). Inputs are
handed to the runtime as numpy arrays, which it copies into device buffers (the Python
runtime has no way to import host memory on the CPU device); outputs are copied back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache

import iree.compiler
import iree.compiler.version
import iree.runtime as rt
import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr, TupleType
from xdsl.dialects.func import FuncOp

from collage_xdsl.backends.kernel import KernelCompileError
from collage_xdsl.backends.signature import Signature
from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.dialects.collage import ConstantOp
from collage_xdsl.ir.tensors import np_dtype, shape_of
from collage_xdsl.linalg import LoweringError, lower_to_linalg, mlir_text

FLAGS = (
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
)
"""The compiler's flags: the host CPU through LLVM, its default optimisation level."""

VERSION = f"{iree.compiler.version.VERSION}[{' '.join(FLAGS)}]"

MAX_WEIGHT_BYTES = 1 << 30
"""The most weight data a kernel may hold: the module goes to the compiler as text, its
weights hex-encoded resource blobs, which costs several times their size in memory."""


@cache
def device(threads: int) -> rt.HalDevice:
    """The `local-task` device with ``threads`` workers (one per thread count)."""
    rt.flags.parse_flags(f"--task_topology_group_count={threads}")
    return rt.get_driver("local-task").create_default_device()


def kernel_module(func: FuncOp) -> ModuleOp:
    """A module holding a copy of ``func`` as the public function ``@kernel``, lowered to
    linalg; an op the lowering cannot take or a tuple-typed value is a `KernelCompileError`."""
    types = (*func.function_type.inputs.data, *func.function_type.outputs.data)
    if any(isinstance(t, TupleType) for t in types):
        raise KernelCompileError(f"iree: kernel @{func.sym_name.data} passes tuples "
                                 "(its lowering takes tensors only)")
    weights = sum(math.prod(shape_of(op.output.type)) * np_dtype(
        op.output.type.get_element_type()).itemsize for op in func.walk()
        if isinstance(op, ConstantOp))
    if weights > MAX_WEIGHT_BYTES:
        raise KernelCompileError(
            f"iree: kernel @{func.sym_name.data} holds {weights / 2**30:.2f} GiB of weights; "
            f"this hook passes them inline in MLIR text and takes at most "
            f"{MAX_WEIGHT_BYTES / 2**30:.2f} GiB")
    copy = func.clone()
    copy.sym_name = StringAttr("kernel")
    copy.sym_visibility = None
    copy.attributes.clear()
    module = ModuleOp([copy])
    try:
        lower_to_linalg(module, strict=True)
    except LoweringError as e:
        raise KernelCompileError(f"iree: cannot lower kernel @{func.sym_name.data}: {e}"
                                 ) from None
    return module


def _reason(e: Exception) -> str:
    """The compiler's first diagnostic, on one line."""
    lines = [ln.strip() for ln in str(e).splitlines() if "error:" in ln]
    return (lines[0] if lines else str(e).strip().splitlines()[0])[:300]


class IreeKernel:
    """A kernel compiled by IREE for the host CPU, called through the runtime."""

    backend = "iree"
    version = VERSION

    def __init__(self, func: FuncOp, policy: ThreadPolicy):
        self.signature = Signature.of(func, self.backend)
        text = mlir_text(kernel_module(func))
        try:
            binary = iree.compiler.compile_str(text, extra_args=list(FLAGS))
        except iree.compiler.CompilerToolError as e:
            raise KernelCompileError(
                f"iree: cannot compile kernel @{func.sym_name.data}: {_reason(e)}") from None
        config = rt.Config(device=device(policy.threads))
        self.context: rt.SystemContext | None = rt.SystemContext(config=config)
        self.context.add_vm_module(rt.VmModule.copy_buffer(self.context.instance, binary))
        self.function = self.context.modules.module["kernel"]

    def __call__(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        assert self.context is not None, "the kernel was released"
        arrays = self.signature.check(inputs)  # raises KernelRunError naming a misfit
        results = self.function(*arrays)
        if not isinstance(results, tuple | list):
            results = (results,)
        return [np.array(r.to_host()) for r in results]

    def release(self) -> None:
        self.function = None
        self.context = None


def compile(func: FuncOp, policy: ThreadPolicy) -> IreeKernel:
    return IreeKernel(func, policy)
