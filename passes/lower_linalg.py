"""`collage-lower-linalg{backends=iree strict=false}`: collage ops become upstream MLIR on
tensors (`linalg`, `tensor`, `arith`, `math`; `collage_xdsl.linalg`), in the whole module
or only in the kernel functions of ``backends`` (other kernels become declarations).

    func.func private @collage_iree_relu(%x: tensor<4xf32>) -> tensor<4xf32>
        attributes {collage.backend = "iree", collage.kernel} {
      %r = collage.relu %x : tensor<4xf32>
      func.return %r : tensor<4xf32>
    }
==>
    func.func private @collage_iree_relu(%x: tensor<4xf32>) -> tensor<4xf32>
        attributes {collage.backend = "iree", collage.kernel} {
      %0 = tensor.empty() : tensor<4xf32>
      %r = linalg.generic {...} ins(%x : tensor<4xf32>) outs(%0 : tensor<4xf32>) {
      ^bb0(%a: f32, %o: f32):
        %z = arith.constant 0.000000e+00 : f32
        %m = arith.maximumf %a, %z : f32
        linalg.yield %m : f32
      } -> tensor<4xf32>
      func.return %r : tensor<4xf32>
    }

An op it cannot lower stays and is named on stderr, one `warning:` line each; with
``strict=true`` the first one is an error.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.passes import ModulePass

from collage_xdsl.linalg import LoweringError, lower_to_linalg


@dataclass(frozen=True)
class CollageLowerLinalgPass(ModulePass):
    """Lower collage ops to linalg, tensor, arith and math on tensors."""

    name = "collage-lower-linalg"

    backends: str = ""
    """Lower only the kernel functions of these backends (comma-separated); empty: every
    function of the module."""
    strict: bool = False
    """An op that has no lowering is an error instead of a warning."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if Builtin not in ctx.loaded_dialects:  # its resources hold the weights' blobs
            ctx.load_registered_dialect(Builtin.name)
        backends = [b for b in self.backends.split(",") if b] or None
        try:
            report = lower_to_linalg(op, backends, self.strict)
        except LoweringError as e:
            raise LoweringError(f"{self.name}: {e}") from None
        for line in report.unlowered:
            print(f"warning: {self.name}: {line}", file=sys.stderr)
