"""User-named op chains become `collage.composite` regions: primitive functions (seed
004's fused sub-functions) that partitioning treats as one node, so the chosen kernel
holds each whole and names itself after it.

    %m = collage.mul %x, %y : ...            %a = collage.composite "fma"(%x, %y, %z)
    %a = collage.add %m, %z : ...     ==>           {collage.primitive} : ... {
                                             ^bb0(%x_1: ..., %y_1: ..., %z_1: ...):
    (patterns = "fma=mul+add")                 %m = collage.mul %x_1, %y_1 : ...
                                               %a_1 = collage.add %m, %z_1 : ...
                                               collage.yield %a_1 : ...
                                             }

`patterns` is `label=op+op+...` entries joined by `;`; each chain is a
`collage_xdsl.core.patterns.chain_pattern`. Every match is a candidate; one is taken
when it is a valid primitive (one exit, no intermediate value used outside, no path out
and back in) and shares no op with one taken before. Earlier patterns come first, a
pattern's matches in dataflow order. Taken matches never form a cycle between them: a
path from one into another leaves at the first one's exit, which each of its ops reaches.
The `collage.primitive` attribute (`collage_xdsl.core.regions.PRIMITIVE`) tells these
composites from those partitioning makes of backend patterns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.patterns import (
    Pattern,
    chain_pattern,
    find_matches,
    full_op_name,
)
from collage_xdsl.core.regions import form_composites
from collage_xdsl.core.subgraph import SubGraph, SubGraphConfig
from collage_xdsl.dialects.collage import CompositeOp, KernelOp
from collage_xdsl.errors import CollageError

PRIMITIVE_SHAPE = SubGraphConfig(max_exits=1, allow_taps=False, max_depth=0)
"""A primitive function: one exit whose value only the outside reads, convex."""

LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


class CompositePatternError(CollageError):
    """The patterns option cannot be read, or a function cannot take composites."""


@dataclass(frozen=True)
class NamedChain:
    """A label and the chain of ops it names (full op names)."""

    label: str
    ops: tuple[str, ...]

    @property
    def pattern(self) -> Pattern:
        """The chain as a dataflow pattern (`chain_pattern`)."""
        return chain_pattern(list(self.ops))


def parse_patterns(text: str) -> list[NamedChain]:
    """The `patterns` option, `fma=mul+add;conv_relu=conv2d+relu`, as named chains; a
    `CompositePatternError` naming the option and the bad entry or op otherwise."""
    where = "collage-composite-patterns: patterns"
    entries = [e.strip() for e in text.split(";") if e.strip()]
    if not entries:
        raise CompositePatternError(f"{where} is empty; give label=op+op;... "
                                    "(e.g. fma=mul+add)")
    chains: list[NamedChain] = []
    for entry in entries:
        label, eq, chain = (part.strip() for part in entry.partition("="))
        names = [n.strip() for n in chain.split("+")]
        if not eq or not LABEL.fullmatch(label) or not all(names):
            raise CompositePatternError(f"{where}: {entry!r} is not label=op+op+... "
                                        "(a label of letters, digits, _ and .)")
        if any(c.label == label for c in chains):
            raise CompositePatternError(f"{where}: label {label!r} is given twice")
        chains.append(NamedChain(label, tuple(_op(n, label, where) for n in names)))
    return chains


def _op(name: str, label: str, where: str) -> str:
    """The full name of the op `name` in pattern `label`; an error naming it if unknown."""
    full = full_op_name(name)
    if full is None:
        raise CompositePatternError(f"{where}: pattern {label!r} names unknown op {name!r}")
    return full


def choose(graph: DataflowGraph, chains: list[NamedChain]) -> list[SubGraph]:
    """The labelled sub-graphs to wrap (see the module docstring for the order)."""
    chosen: list[SubGraph] = []
    for chain in chains:
        matches = find_matches(chain.pattern, graph)
        for sub in sorted({SubGraph(graph, m.inside, chain.label) for m in matches}):
            if sub.is_valid(PRIMITIVE_SHAPE) and not any(sub.overlaps(c) for c in chosen):
                chosen.append(sub)
    return chosen


def form_pattern_composites(module: ModuleOp, chains: list[NamedChain]) -> list[CompositeOp]:
    """Wrap the chosen matches of `chains` in every function of `module` that is not a
    kernel function; a function holding kernels is an error (run before partitioning)."""
    made: list[CompositeOp] = []
    for func in module.ops:
        if not isinstance(func, FuncOp) or func.is_declaration:
            continue
        if "collage.kernel" in func.attributes:
            continue
        if any(isinstance(op, KernelOp) for op in func.body.walk()):
            raise CompositePatternError(
                f"collage-composite-patterns: @{func.sym_name.data} holds collage.kernel "
                "regions; form composites before partitioning")
        graph = DataflowGraph(func)
        made += form_composites(graph, choose(graph, chains))
    return made
