"""`collage-outline`: every `collage.kernel` region becomes a private kernel function.

Before:

    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %r = collage.kernel "tvm"(%x) {label = "relu", cost = 1.0e-06 : f64}
               : (tensor<4xf32>) -> tensor<4xf32> {
      ^bb0(%a: tensor<4xf32>):
        %b = collage.relu %a : tensor<4xf32>
        collage.yield %b : tensor<4xf32>
      }
      func.return %r : tensor<4xf32>
    }

After:

    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %r = func.call @collage_tvm_relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
      func.return %r : tensor<4xf32>
    }
    func.func private @collage_tvm_relu(%a: tensor<4xf32>) -> tensor<4xf32>
        attributes {collage.backend = "tvm", collage.cost = 1.0e-06 : f64, collage.kernel} {
      %b = collage.relu %a : tensor<4xf32>
      func.return %b : tensor<4xf32>
    }

The function is named `collage_<backend>_<label>` (the kernel's index in the module when
it has no label; a numeric suffix keeps names unique). Kernels with the same backend and
structurally equal bodies (same ops, attributes, constants and types) share one function.
Nested `collage.composite` regions stay inside the kernel function. A kernel without a
cost gets none (`collage.cost` is only written when the partitioner estimated it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, UnitAttr
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Region
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from collage_xdsl.dialects.collage import KernelOp, YieldOp


def _symbol_part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


def _signature(kernel: KernelOp) -> tuple:
    """A cheap key that structurally equal kernels share (checked exactly afterwards)."""
    return (
        kernel.backend.data,
        tuple(v.type for v in kernel.inputs),
        tuple(r.type for r in kernel.outputs),
        tuple(op.name for op in kernel.body.walk()),
    )


def outline_kernels(module: ModuleOp) -> list[FuncOp]:
    """Outline every `collage.kernel` in `module`; returns the new kernel functions.
    A kernel that does not verify (one nested in another, say) raises VerifyException."""
    kernels = [op for op in module.walk() if isinstance(op, KernelOp)]
    for kernel in kernels:  # on an unverified module, before any rewrite
        kernel.verify_()
    taken = {op.sym_name.data for op in module.ops if isinstance(op, FuncOp)}
    buckets: dict[tuple, list[tuple[KernelOp, str]]] = {}
    functions: list[FuncOp] = []
    callees: list[str] = []
    for index, kernel in enumerate(kernels):
        bucket = buckets.setdefault(_signature(kernel), [])
        name = next(
            (n for other, n in bucket if other.body.is_structurally_equivalent(kernel.body)),
            None,
        )
        if name is None:
            label = kernel.label.data if kernel.label is not None else str(index)
            name = f"collage_{_symbol_part(kernel.backend.data)}_{_symbol_part(label)}"
            base, n = name, 1
            while name in taken:
                name, n = f"{base}_{n}", n + 1
            taken.add(name)
            bucket.append((kernel, name))
            functions.append(_kernel_function(kernel, name))
        callees.append(name)
    for kernel, name in zip(kernels, callees):
        call = CallOp(name, list(kernel.inputs), [r.type for r in kernel.outputs])
        Rewriter.replace_op(kernel, call)
    for func in functions:
        module.body.block.add_op(func)
    return functions


def _kernel_function(kernel: KernelOp, name: str) -> FuncOp:
    body = kernel.body.clone()
    block = body.block
    yield_op = block.last_op
    assert isinstance(yield_op, YieldOp)
    Rewriter.replace_op(yield_op, ReturnOp(*yield_op.values))
    func = FuncOp(
        name,
        ([a.type for a in block.args], [r.type for r in kernel.outputs]),
        Region(body.detach_block(block)),
        visibility="private",
    )
    func.attributes["collage.backend"] = StringAttr(kernel.backend.data)
    if kernel.cost is not None:
        func.attributes["collage.cost"] = kernel.cost
    func.attributes["collage.kernel"] = UnitAttr()
    return func


@dataclass(frozen=True)
class CollageOutlinePass(ModulePass):
    """Outline `collage.kernel` regions into `func.func private @collage_<backend>_<label>`."""

    name = "collage-outline"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        outline_kernels(op)
