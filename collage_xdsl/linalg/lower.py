"""`collage-lower-linalg`: collage ops become upstream MLIR on tensors (`linalg`, `tensor`,
`arith`, `math`), op by op, so that `mlir-opt`, `iree-opt` or IREE's compiler takes the
module (or the kernels of chosen backends) into its own flow.

    func.func @main(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
      %r = collage.relu %x : tensor<1x8xf32>
      func.return %r : tensor<1x8xf32>
    }
==>
    func.func @main(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
      %0 = tensor.empty() : tensor<1x8xf32>
      %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
             ins(%x : tensor<1x8xf32>) outs(%0 : tensor<1x8xf32>) {
      ^bb0(%a: f32, %o: f32):
        %z = arith.constant 0.0 : f32
        %m = arith.maximumf %a, %z : f32
        linalg.yield %m : f32
      } -> tensor<1x8xf32>
      func.return %r : tensor<1x8xf32>
    }

With ``backends``, only kernel functions (`collage.backend`) of those backends are lowered;
the other kernels become `func.func private` declarations that keep their attributes, so
the module's `func.call`s name them for the flow to resolve. Composite regions are inlined
and projections of tuples forwarded first. An op without a lowering (or with attributes
its lowering does not handle) stays as it is and is reported by name; with ``strict`` it
is an error.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import Builtin, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.printer import Printer
from xdsl.rewriter import Rewriter

import collage_xdsl.linalg.contraction  # noqa: F401 (registers its lowerings)
import collage_xdsl.linalg.elementwise  # noqa: F401
import collage_xdsl.linalg.normalization  # noqa: F401
import collage_xdsl.linalg.shapes  # noqa: F401
import collage_xdsl.linalg.windows  # noqa: F401
from collage_xdsl.dialects import collage as C
from collage_xdsl.dialects.collage import get_int
from collage_xdsl.linalg.emit import LOWERINGS, Emitter, LoweringError


@dataclass
class LoweringReport:
    """What a lowering left in the collage dialect, one line per op."""

    lowered: int = 0
    unlowered: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.unlowered


def lowered_op_names() -> frozenset[str]:
    """The collage ops `collage-lower-linalg` lowers (the `iree` backend's spec)."""
    return frozenset(kind.name for kind in LOWERINGS)


def _describe(op: Operation) -> str:
    name = op.results[0].name_hint if op.results and op.results[0].name_hint else None
    return f"%{name} ({op.name})" if name else op.name


def _inline_composites(func: FuncOp) -> None:
    """Each `collage.composite` replaced by the ops of its body."""
    for op in [o for o in func.walk() if isinstance(o, C.CompositeOp)]:
        op.inline()


def _forward_projections(func: FuncOp) -> None:
    """``get_item(tuple(a, b), 1)`` replaced by ``b``; tuples left without users erased."""
    for op in [o for o in func.walk() if isinstance(o, C.GetItemOp)]:
        source = op.operands[0].owner
        if isinstance(source, C.TupleOp):
            Rewriter.replace_op(op, [], [source.operands[get_int(op.index, 0)]])
    for op in [o for o in func.walk() if isinstance(o, C.TupleOp)]:
        if not op.results[0].uses:
            Rewriter.erase_op(op)


def lower_function(func: FuncOp, report: LoweringReport, strict: bool = False) -> None:
    """Lower every collage op of ``func`` that has a lowering, in order."""
    _inline_composites(func)
    _forward_projections(func)
    for op in [o for o in func.walk() if o.name.startswith("collage.")]:
        lower = LOWERINGS.get(type(op))
        try:
            if lower is None:
                raise LoweringError(f"{_describe(op)}: no lowering to linalg")
            results = lower(Emitter(op), op, *op.operands)
        except LoweringError as e:
            if strict:
                raise
            report.unlowered.append(str(e))
            continue
        for old, new in zip(op.results, results):
            if old.name_hint and new.name_hint is None:
                new.name_hint = old.name_hint
        Rewriter.replace_op(op, [], results)
        report.lowered += 1


def _declare(func: FuncOp) -> None:
    """``func`` as a `func.func private` declaration with the same signature and attributes."""
    for block in list(func.body.blocks):
        func.body.detach_block(block)
        for op in reversed(list(block.ops)):
            op.detach()
            op.drop_all_references()
    func.sym_visibility = StringAttr("private")


def lower_to_linalg(module: ModuleOp, backends: Sequence[str] | None = None,
                    strict: bool = False) -> LoweringReport:
    """Lower ``module`` in place: every function, or with ``backends`` only the kernel
    functions of those backends (other kernels become declarations)."""
    report = LoweringReport()
    for func in [op for op in module.ops if isinstance(op, FuncOp)]:
        backend = func.attributes.get("collage.backend")
        if backends is None or (isinstance(backend, StringAttr) and backend.data in backends):
            lower_function(func, report, strict)
        elif isinstance(backend, StringAttr) and not func.is_declaration:
            _declare(func)
    return report


def mlir_text(module: ModuleOp, generic: bool = True) -> str:
    """``module`` printed for an upstream MLIR tool: generic form by default, then the
    resource blobs its weights refer to."""
    out = io.StringIO()
    printer = Printer(out, print_generic_format=generic)
    printer.print_op(module)
    printer.print_metadata([Builtin])
    out.write("\n")
    return out.getvalue()

