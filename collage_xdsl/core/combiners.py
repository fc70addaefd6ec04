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
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from weakref import WeakKeyDictionary

from collage_xdsl.core.candidates import CandidateKernel, singleton
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, first
from collage_xdsl.core.subgraph import SubGraph, SubGraphConfig
from collage_xdsl.dialects.collage import OpPatternKind

_VALIDITY: WeakKeyDictionary[DataflowGraph, dict[tuple[SubGraph, SubGraphConfig], bool]] = (
    WeakKeyDictionary()
)


def is_valid(graph: DataflowGraph, sub_graph: SubGraph, config: SubGraphConfig) -> bool:
    """`sub_graph.is_valid(config)`, remembered per graph (specs share many sub-graphs)."""
    cache = _VALIDITY.setdefault(graph, {})
    key = (sub_graph, config)
    valid = cache.get(key)
    if valid is None:
        valid = cache[key] = sub_graph.is_valid(config)
    return valid


def fusion_kind(candidate: CandidateKernel) -> OpPatternKind:
    """The kind the by-kind combiners compare: the sub-graph's kind, except that a tuple
    inside counts as injective (as TVM's tuple combiners treat it), so a fused
    `concat((reshape(a), transpose(b)))` still fuses with a downstream injective op."""
    sub = candidate.sub_graph
    if sub.kind != OpPatternKind.TUPLE:
        return sub.kind
    nodes = sub.graph.nodes
    kinds = (nodes[i].kind for i in bits(sub.inside & sub.graph.kernel_nodes))
    return max((OpPatternKind.INJECTIVE if k == OpPatternKind.TUPLE else k for k in kinds))


def union(graph: DataflowGraph, parts: Sequence[CandidateKernel]) -> CandidateKernel:
    """The disjoint union of `parts`' sub-graphs, named by joining their rule names.

    Its label joins the distinct labels of its nested composites in node order, so the
    same nodes and composites get the same label whatever order they were united in
    (and deduplicate)."""
    sub = parts[0].sub_graph
    for p in parts[1:]:
        sub = sub.disjoint_union(p.sub_graph)
    label = "+".join(dict.fromkeys(n.label for n in sub.nested))
    if label != sub.label:
        sub = SubGraph(graph, sub.inside, label, sub.nested)
    return CandidateKernel(sub, parts[0].spec, "+".join(p.rule_name for p in parts))


class CandidateSet:
    """Candidates being combined: insertion order, dedup by (sub-graph, spec), and the
    boundary `first_new` between those already combined with each other and new ones."""

    def __init__(self, candidates: Sequence[CandidateKernel]):
        self.items: list[CandidateKernel] = []
        self._seen: set[CandidateKernel] = set()
        self.rejected: set[CandidateKernel] = set()
        self.per_first: dict[int, int] = {}
        """Candidates kept so far per lowest inside node (see `max_per_node`)."""
        self.first_new = 0
        for c in candidates:
            self.add(c)
        self.seeds = len(self.items)
        """The sub-rule's candidates come first: `items[:seeds]`."""

    def add(self, candidate: CandidateKernel) -> bool:
        if candidate in self._seen:
            return False
        self._seen.add(candidate)
        self.items.append(candidate)
        low = first(candidate.inside)
        self.per_first[low] = self.per_first.get(low, 0) + 1
        return True

    def __contains__(self, candidate: CandidateKernel) -> bool:
        return candidate in self._seen

    def __len__(self) -> int:
        return len(self.items)


@dataclass
class CombineContext:
    """What a combiner sees in one round: pairs among `candidates.items[:end]` with at least
    one member at or after `candidates.first_new` are the ones not yet tried."""

    graph: DataflowGraph
    candidates: CandidateSet
    end: int
    max_depth: int
    prune: SubGraphConfig | None = None
    max_per_node: int = 0

    def offer(self, candidate: CandidateKernel) -> None:
        """Add a union unless known, deeper than `max_depth`, past `max_per_node` for its
        lowest node or, when pruning, invalid."""
        cands = self.candidates
        if candidate in cands or candidate in cands.rejected:
            return
        sub = candidate.sub_graph
        if (self.max_per_node > 0
                and cands.per_first.get(first(candidate.inside), 0) >= self.max_per_node):
            return
        if (self.max_depth > 0 and sub.depth > self.max_depth) or (
            self.prune is not None and not is_valid(self.graph, sub, self.prune)
        ):
            cands.rejected.add(candidate)
        else:
            cands.add(candidate)


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
