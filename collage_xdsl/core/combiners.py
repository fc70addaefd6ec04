"""Combiner rules for `CombinePartitionRule`: how candidates union into larger ones.

Each combiner appends the unions it finds to the candidate set of the current round
(`CombineContext`), trying only combinations that include at least one candidate new
in this round, so every combination is tried once over the whole fixpoint.

- `AllSimpleCombinerRule`: an upstream candidate and a touching downstream one, when
  one of its `ByKindSimpleCombinerRule`s fires (TVM FuseOps: out_ewise_fusable->broadcast,
  broadcast->comm_reduce, injective->injective; BYOC: opaque->opaque joins anything).
- `TupleArgCombinerRule`: an injective consumer of a `collage.tuple`, the tuple, and one
  injective producer for every tuple field (e.g. `concat((reshape(a), transpose(b)))`).
- `TupleProjCombinerRule`: a candidate and a `collage.get_item` that reads it.
- `ConstantCombinerRule`: a candidate and all the constants it reads.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import product

from collage_xdsl.core.candidates import CandidateKernel
from collage_xdsl.dialects.collage import OpPatternKind
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits
from collage_xdsl.core.rules import CombineContext, fusion_kind, singleton, union


class CombinerRule:
    name: str

    def append_all(self, ctx: CombineContext) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class ByKindSimpleCombinerRule:
    """Fires when upstream's kind <= `upstream` and downstream's kind <= `downstream`."""

    upstream: OpPatternKind
    downstream: OpPatternKind

    @property
    def name(self) -> str:
        return f"{self.upstream.name.lower()}->{self.downstream.name.lower()}"

    def fires(self, up: CandidateKernel, down: CandidateKernel) -> bool:
        return fusion_kind(up) <= self.upstream and fusion_kind(down) <= self.downstream


TVM_SIMPLE_RULES = (
    ByKindSimpleCombinerRule(OpPatternKind.OUT_EWISE_FUSABLE, OpPatternKind.BROADCAST),
    ByKindSimpleCombinerRule(OpPatternKind.BROADCAST, OpPatternKind.COMM_REDUCE),
    ByKindSimpleCombinerRule(OpPatternKind.INJECTIVE, OpPatternKind.INJECTIVE),
)
"""The FuseOps fusion rules, as simple combiners."""

JOIN_ANYTHING = (ByKindSimpleCombinerRule(OpPatternKind.OPAQUE, OpPatternKind.OPAQUE),)
"""Arbitrary fusion of whatever a (BYOC) backend supports."""


@dataclass(frozen=True)
class AllSimpleCombinerRule(CombinerRule):
    """Unions every touching (upstream, downstream) pair on which a simple rule fires;
    with `grow`, only pairs where one side is a sub-rule candidate (a seed), which reaches
    every valid sub-graph when pruning to valid unions (see `CombinePartitionRule`)."""

    name: str
    simple_rules: tuple[ByKindSimpleCombinerRule, ...]
    grow: bool = False

    def append_all(self, ctx: CombineContext) -> None:
        items, end, first_new = ctx.candidates.items, ctx.end, ctx.candidates.first_new
        seeds = ctx.candidates.seeds if self.grow else end
        by_entry: dict[int, list[int]] = defaultdict(list)
        for j in range(end):
            for e in bits(items[j].sub_graph.entry):
                by_entry[e].append(j)
        for i in range(end):
            up = items[i]
            downs: set[int] = set()
            for o in bits(up.sub_graph.output):
                downs.update(by_entry.get(o, ()))
            for j in sorted(downs):
                if j == i or (i < first_new and j < first_new) or (i >= seeds and j >= seeds):
                    continue
                down = items[j]
                if not any(r.fires(up, down) for r in self.simple_rules):
                    continue
                if not up.sub_graph.are_touching(down.sub_graph):  # also: not overlapping
                    continue
                ctx.offer(union(ctx.graph, [up, down]))


@dataclass(frozen=True)
class TupleArgCombinerRule(CombinerRule):
    """Unions an injective tuple consumer, the tuple, and one injective producer per field,
    for every choice of producers."""

    name: str = "tuple"

    def append_all(self, ctx: CombineContext) -> None:
        graph, items = ctx.graph, ctx.candidates.items
        end, first_new = ctx.end, ctx.candidates.first_new
        by_exit: dict[int, list[int]] = defaultdict(list)
        for j in range(end):
            if fusion_kind(items[j]) <= OpPatternKind.INJECTIVE:
                for x in bits(items[j].sub_graph.exit):
                    by_exit[x].append(j)
        for i in range(end):
            consumer = items[i]
            if fusion_kind(consumer) > OpPatternKind.INJECTIVE:
                continue
            for t in bits(consumer.sub_graph.input):
                node = graph.nodes[t]
                if node.op is None or node.op.name != "collage.tuple":
                    continue
                tuple_part = singleton(graph, t, consumer.spec, "tuple")
                choices = [by_exit.get(f, []) for f in node.inputs]
                for combo in product(*choices):
                    if i in combo or max(i, *combo) < first_new:
                        continue
                    parts = [items[j] for j in combo]
                    united = [*parts, tuple_part, consumer]  # the tuple node is outside consumer
                    if _overlap(graph, united):
                        continue
                    ctx.offer(union(graph, united))


def _overlap(graph: DataflowGraph, parts: list[CandidateKernel]) -> bool:
    """Whether two of `parts` share a node other than a constant."""
    seen = 0
    for p in parts:
        ops = p.inside & ~graph.constants
        if ops & seen:
            return True
        seen |= ops
    return False


@dataclass(frozen=True)
class TupleProjCombinerRule(CombinerRule):
    """Unions a candidate with each `collage.get_item` that projects one of its outputs."""

    name: str = "proj"

    def append_all(self, ctx: CombineContext) -> None:
        graph, items = ctx.graph, ctx.candidates.items
        for i in range(ctx.candidates.first_new, ctx.end):
            base = items[i]
            for o in bits(base.sub_graph.output):
                op = graph.nodes[o].op
                if op is not None and op.name == "collage.get_item":
                    ctx.offer(union(graph, [base, singleton(graph, o, base.spec, "get_item")]))


@dataclass(frozen=True)
class ConstantCombinerRule(CombinerRule):
    """Unions a candidate with all the constants it reads.

    `SubGraph.extract` clones outside constants into a kernel anyway, so the union extracts
    to the same kernel; the rule is for specs that want weights explicitly inside.
    """

    name: str = "const"

    def append_all(self, ctx: CombineContext) -> None:
        graph, items = ctx.graph, ctx.candidates.items
        for i in range(ctx.candidates.first_new, ctx.end):
            base = items[i]
            reads = 0
            for n in bits(base.inside):
                reads |= graph.nodes[n].input_set
            constants = reads & graph.constants & ~base.inside
            if constants:
                parts = [singleton(graph, c, base.spec, "") for c in bits(constants)]
                new = union(graph, [base, *parts])
                ctx.offer(CandidateKernel(new.sub_graph, base.spec, f"{base.rule_name}+const"))
