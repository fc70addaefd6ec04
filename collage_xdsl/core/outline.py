"""Outlining: every `collage.kernel` region becomes a private kernel function, and what an
outlined module says (its kernel functions and calls, a direct whole-model call).

    %r = collage.kernel "tvm"(%x) {label = "relu"} ... { collage.relu ... }
      ->  %r = func.call @collage_tvm_relu(%x)
          func.func private @collage_tvm_relu(...) attributes {collage.backend = "tvm",
              collage.kernel} { collage.relu ...; func.return ... }

A function is named `collage_<backend>_<label>` (unique by a numeric suffix); kernels of
one backend with structurally equal bodies share one function; composites stay inside;
`collage.cost` is copied when the partitioner estimated one (`passes/outline.py` shows
the whole IR before and after).
"""
from __future__ import annotations

import math
import re

from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, TensorType, UnitAttr
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Region
from xdsl.rewriter import Rewriter
from xdsl.traits import SymbolTable

from collage_xdsl.core.boundaries import PlanEstimate, TransitionCosts
from collage_xdsl.dialects.collage import KernelOp, YieldOp
from collage_xdsl.ir.tensors import tensor_bytes


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


def direct_kernel_call(main: FuncOp) -> CallOp | None:
    """The call when ``main`` is one call of a ``collage.kernel`` function on its
    arguments, in order, returning its results, all tensors: `collage_xdsl.runtime.executable`
    then calls the kernel directly (no step loop), and the run costs the kernel alone."""
    block = main.body.block
    ops = list(block.ops)
    if len(ops) != 2 or not isinstance(ops[0], CallOp) or not isinstance(ops[1], ReturnOp):
        return None
    call, ret = ops
    callee = SymbolTable.lookup_symbol(call, call.callee)
    same = (len(call.operands) == len(block.args)
            and all(a is b for a, b in zip(call.operands, block.args))
            and len(ret.operands) == len(call.results)
            and all(a is b for a, b in zip(ret.operands, call.results)))
    if not (same and isinstance(callee, FuncOp) and "collage.kernel" in callee.attributes
            and all(isinstance(v.type, TensorType) for v in (*call.operands, *call.results))):
        return None
    return call


def outlined_estimate(main, costs: TransitionCosts) -> PlanEstimate:
    """:func:`plan_estimate` of an outlined ``@main`` (a `func.FuncOp` calling
    ``collage.kernel`` functions, as `collage_xdsl.runtime.executable` runs it): kernels are the
    called functions' ``collage.cost`` (NaN when one has none), one launch per call, a
    crossing per operand a call of another backend produced; a direct kernel call
    (`direct_kernel_call`) is its kernel's cost alone."""
    kernels = launches = crossings = 0.0
    calls = 0
    producer: dict = {}
    for op in main.body.block.ops:
        callee = SymbolTable.lookup_symbol(op, op.callee) if isinstance(op, CallOp) else None
        if not isinstance(callee, FuncOp) or "collage.kernel" not in callee.attributes:
            continue
        backend = callee.attributes["collage.backend"].data  # type: ignore[attr-defined]
        cost = callee.attributes.get("collage.cost")
        kernels += cost.value.data if cost is not None else math.nan  # type: ignore
        launches += costs.kernel(backend)
        crossings += sum(costs.edge(producer.get(v), backend, tensor_bytes(v.type))
                         for v in op.operands)
        producer.update((r, backend) for r in op.results)
        calls += 1
    if direct_kernel_call(main) is not None:
        return PlanEstimate(kernels, 0.0, 0.0, 0.0)
    return PlanEstimate(kernels, launches, crossings, costs.base if calls else 0.0)


def _alternative_plans(funcs) -> set[str]:
    """The names of the functions some function lists in `collage.alternatives`."""
    return {ref.string_value() for f in funcs
            for ref in f.attributes.get("collage.alternatives", ArrayAttr([])).data}


def kernel_functions(module: ModuleOp) -> list[FuncOp]:
    """The outlined kernel functions of `module`, those only the alternative plans
    (`collage.alternatives`) call aside."""
    funcs = [op for op in module.ops if isinstance(op, FuncOp)]
    alternative = _alternative_plans(funcs)

    def callees(fs: list[FuncOp]) -> set[str]:
        return {op.callee.string_value() for f in fs for op in f.walk()
                if isinstance(op, CallOp)}

    only = callees([f for f in funcs if f.sym_name.data in alternative]) - callees(
        [f for f in funcs if f.sym_name.data not in alternative])
    return [f for f in funcs if "collage.kernel" in f.attributes and f.sym_name.data not in only]


def kernel_calls(module: ModuleOp) -> list[FuncOp]:
    """The kernel function of each kernel call the plans of `module` make (the functions
    that are neither kernels nor alternative plans; a shared kernel once per call)."""
    funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp)}
    alternative = _alternative_plans(funcs.values())
    return [callee for f in funcs.values()
            if "collage.kernel" not in f.attributes and f.sym_name.data not in alternative
            for op in f.walk() if isinstance(op, CallOp)
            and "collage.kernel" in (callee := funcs[op.callee.string_value()]).attributes]
