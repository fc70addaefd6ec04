"""`collage-outline`: every `collage.kernel` region becomes a private kernel function
(`collage_xdsl.core.outline`).

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
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from collage_xdsl.core.outline import outline_kernels


@dataclass(frozen=True)
class CollageOutlinePass(ModulePass):
    """Outline `collage.kernel` regions into `func.func private @collage_<backend>_<label>`."""

    name = "collage-outline"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        outline_kernels(op)
