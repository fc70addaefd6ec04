"""`collage-composite-patterns{patterns="fma=mul+add;conv_relu=conv2d+relu"}`: each match of
a named op chain becomes a `collage.composite "<label>"` region in the function body, a
primitive function that partitioning keeps whole (`collage_xdsl.rewrite.composites`).

    %m = collage.mul %x, %y ...            %a = collage.composite "fma"(%x, %y, %z) ... {
    %a = collage.add %m, %z ...     ==>      ... collage.mul ...; collage.add ...; collage.yield
                                           }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from collage_xdsl.rewrite.composites import form_pattern_composites, parse_patterns


@dataclass(frozen=True)
class CollageCompositePatternsPass(ModulePass):
    """Wrap the matches of user-named op chains in `collage.composite` regions."""

    name = "collage-composite-patterns"

    patterns: str = ""
    """`label=op+op+...` entries joined by `;`, e.g. `fma=mul+add;conv_relu=conv2d+relu`."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        form_pattern_composites(op, parse_patterns(self.patterns))
