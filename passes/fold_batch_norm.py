"""`collage-fold-batch-norm`: inference batch norms after a constant-weight convolution or
matmul (and bias add) fold into new weights and a bias add
(`collage_xdsl.rewrite.batch_norm`).

    %c = collage.conv2d %x, %w ...                         %c = collage.conv2d %x, %w2 ...
    %n = collage.batch_norm %c, %s, %t, %m, %v ...   ==>   %n = collage.add %c, %bias2 ...
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from collage_xdsl.rewrite.batch_norm import fold_batch_norms


@dataclass(frozen=True)
class CollageFoldBatchNormPass(ModulePass):
    """Fold batch norms into the convolution or matmul before them."""

    name = "collage-fold-batch-norm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fold_batch_norms(op)
