"""`collage-fold-constants`: ops on constants become constants, and chains of constant
Mul / Add fold into each other and into convolution and matmul weights
(`collage_xdsl.rewrite.constants`).

    %c = collage.conv2d %x, %w ...                   %c = collage.conv2d %x, %w2 ...
    %m = collage.mul %c, %s ...               ==>    %b = collage.add %c, %b3 ...
    %a = collage.add %m, %b1 ...
    %b = collage.add %a, %b2 ...
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from collage_xdsl.rewrite.constants import fold_constants


@dataclass(frozen=True)
class CollageFoldConstantsPass(ModulePass):
    """Fold constant expressions and constant scales into weights."""

    name = "collage-fold-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fold_constants(op)
