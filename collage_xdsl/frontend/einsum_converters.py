"""The converter of Einsum (registered in `collage_xdsl.frontend.converters.CONVERTERS`).

    Einsum(q, k) equation = "bhid,bhjd->bhij" -> collage.einsum %q, %k {equation = "..."}
    Einsum(a, b) equation = "ij,jk"           -> collage.einsum %a, %b {equation = "ij,jk->ik"}

An implicit output (no "->") is made explicit as ONNX defines it: the letters that occur
once, in alphabetical (character code) order. An ellipsis is an import error.
"""

from __future__ import annotations

from collections import Counter

from collage_xdsl.dialects import collage as C
from collage_xdsl.frontend.context import NodeContext
from collage_xdsl.frontend.converters import converter


def explicit(equation: str) -> str:
    """``equation`` without whitespace and with its output: "ij, jk" -> "ij,jk->ik"."""
    equation = "".join(equation.split())
    if "->" in equation or "..." in equation:
        return equation
    counts = Counter(c for c in equation if c != ",")
    return equation + "->" + "".join(sorted(c for c, n in counts.items() if n == 1))


@converter("Einsum")
def convert_einsum(ctx: NodeContext):
    inputs = [ctx.value(i) for i in ctx.inputs()]
    return [ctx.emit(C.EinsumOp, inputs, explicit(ctx.attr("equation", "")))]
