"""Partition rules (Collage Phase 2): composable producers of candidate kernels.

    OnlyValidPartitionRule("", CombinePartitionRule("", OpCallByKindPartitionRule(""),
        (AllSimpleCombinerRule("", TVM_SIMPLE_RULES), TupleArgCombinerRule(),
         TupleProjCombinerRule()), max_depth=8), SubGraphConfig(max_exits=1, max_depth=8))

Base rules find candidates in the graph (patterns, op predicates, op kinds, a hardware
dataflow template); combinators transform their sub-rules' candidates (composite,
primitive, union, combine by `collage_xdsl.core.combiners`, only-valid, host, MaxCoalesce).
Candidates may overlap; no rule builds IR. A candidate is named after its rule, or its op
(`conv2d`); unions join names with `+`, wrapping rules prefix theirs with `.`.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from xdsl.ir import Operation

from collage_xdsl.core.candidates import (
    HOST_OPS,
    CandidateKernel,
    PartitionRule,
    nest,
    short_name,
    singleton,
)
from collage_xdsl.core.combiners import (
    CandidateSet,
    CombineContext,
    CombinerRule,
    is_valid,
)
from collage_xdsl.core.index_set import bits, single
from collage_xdsl.core.patterns import Match, Pattern, find_matches
from collage_xdsl.core.subgraph import SubGraph, SubGraphConfig
from collage_xdsl.dialects.collage import CompositeOp, GraphOp, OpPatternKind


@dataclass(frozen=True)
class DFPatternPartitionRule(PartitionRule):
    """A candidate for every match of `pattern` (overlapping ones included) that `check` accepts."""

    name: str
    pattern: Pattern
    check: Callable[[Match], bool] | None = None

    def all_candidates(self, graph, spec):
        return [
            CandidateKernel(SubGraph(graph, m.inside), spec,
                            self.name or short_name(graph, m.root))
            for m in find_matches(self.pattern, graph, self.check)
        ]


@dataclass(frozen=True)
class OpPredicatePartitionRule(PartitionRule):
    """A singleton candidate for every op that needs a kernel and satisfies `predicate`."""

    name: str
    predicate: Callable[[Operation], bool]

    def all_candidates(self, graph, spec):
        return [
            singleton(graph, i, spec, self.name)
            for i in bits(graph.kernel_nodes)
            if graph.nodes[i].op.name not in HOST_OPS and self.predicate(graph.nodes[i].op)
        ]


@dataclass(frozen=True)
class OpCallByKindPartitionRule(PartitionRule):
    """A singleton candidate for every `collage` op call of kind <= `max_kind` (tuples and
    projections are not calls: `HostPartitionRule` covers them and the tuple combiners pull
    them in; ops of other dialects, e.g. `func.call`, are no graph operators; a top-level
    composite is one call)."""

    name: str
    max_kind: OpPatternKind = OpPatternKind.OPAQUE

    def all_candidates(self, graph, spec):
        return [
            singleton(graph, i, spec, self.name)
            for i in bits(graph.kernel_nodes)
            if isinstance(op := graph.nodes[i].op, GraphOp | CompositeOp)
            and op.name not in HOST_OPS
            and graph.nodes[i].kind <= self.max_kind
        ]


@dataclass(frozen=True)
class CompositePartitionRule(PartitionRule):
    """Wraps each sub-rule candidate as a composite labelled `name` (lowered as one unit);
    the candidates are named by the label."""

    name: str
    sub_rule: PartitionRule

    def all_candidates(self, graph, spec):
        return [
            CandidateKernel(c.sub_graph.with_label(self.name), spec, self.name)
            for c in self.sub_rule.all_candidates(graph, spec)
        ]


@dataclass(frozen=True)
class PrimitivePartitionRule(PartitionRule):
    """Marks the sub-rule's candidates as kernels: keeps those holding a node that needs one
    (a sub-graph of constants alone is left to the host) and prefixes the rule name."""

    name: str
    sub_rule: PartitionRule

    def all_candidates(self, graph, spec):
        return [
            replace(c, rule_name=nest(self.name, c.rule_name))
            for c in self.sub_rule.all_candidates(graph, spec)
            if c.inside & graph.kernel_nodes
        ]


@dataclass(frozen=True)
class UnionPartitionRule(PartitionRule):
    """The candidates of all sub-rules, in order, without duplicates."""

    name: str
    sub_rules: tuple[PartitionRule, ...]

    def all_candidates(self, graph, spec):
        seen: set[CandidateKernel] = set()
        result = []
        for rule in self.sub_rules:
            for c in rule.all_candidates(graph, spec):
                if c not in seen:
                    seen.add(c)
                    result.append(replace(c, rule_name=nest(self.name, c.rule_name)))
        return result


@dataclass(frozen=True)
class CombinePartitionRule(PartitionRule):
    """The sub-rule's candidates and every union the combiners can build from them, to a
    fixpoint: each round tries every combination with at least one candidate found in the
    previous round, so an older upstream candidate still meets a newer downstream one.
    Unions deeper than `max_depth` (0: unbounded) are never formed.

    With `prune`, only unions valid under that config are kept. For a config with one
    exit and no taps this loses nothing when any touching pair may combine (join anything):
    removing a source node from a valid sub-graph leaves a valid one (same single exit,
    still convex, every node still reaches the exit), so every valid sub-graph grows from
    a singleton through valid sub-graphs, one sub-rule candidate at a time (which is why
    `AllSimpleCombinerRule(grow=True)` may union only with those). It turns the
    enumeration of arbitrary connected sets, exponential in fan-out, into one of valid
    kernels only.

    With `max_per_node` > 0, at most that many candidates share a lowest node (the node the
    search expands them from). Unions are formed round by round, smallest first, so the cap
    keeps every small kernel and only stops the growth of large ones where the number of
    valid kernels explodes (inception-style branches joined by a concat: exponential in the
    number of branches); maximal regions are offered separately at any size."""

    name: str
    sub_rule: PartitionRule
    combiners: tuple[CombinerRule, ...]
    max_depth: int = 0
    prune: SubGraphConfig | None = None
    max_per_node: int = 0

    def all_candidates(self, graph, spec):
        cands = CandidateSet(self.sub_rule.all_candidates(graph, spec))
        while cands.first_new < len(cands):
            ctx = CombineContext(graph, cands, len(cands), self.max_depth, self.prune,
                                 self.max_per_node)
            for combiner in self.combiners:
                combiner.append_all(ctx)
            cands.first_new = ctx.end
        return [replace(c, rule_name=nest(self.name, c.rule_name)) for c in cands.items]


@dataclass(frozen=True)
class OnlyValidPartitionRule(PartitionRule):
    """The sub-rule's candidates whose sub-graphs are valid under `config`."""

    name: str
    sub_rule: PartitionRule
    config: SubGraphConfig = field(default_factory=SubGraphConfig)

    def all_candidates(self, graph, spec):
        return [
            replace(c, rule_name=nest(self.name, c.rule_name))
            for c in self.sub_rule.all_candidates(graph, spec)
            if is_valid(graph, c.sub_graph, self.config)
        ]


@dataclass(frozen=True)
class HostPartitionRule(PartitionRule):
    """A zero-cost singleton for every node that needs no backend kernel but must still be
    placed: `collage.tuple` and `collage.get_item` (the host builds and projects tuples).
    Arguments and constants need no placement at all."""

    name: str = "host"

    def all_candidates(self, graph, spec):
        return [
            singleton(graph, i, spec, nest(self.name, short_name(graph, i)), cost=0.0)
            for i in bits(graph.kernel_nodes)
            if graph.nodes[i].op.name in HOST_OPS
        ]


@dataclass(frozen=True)
class MaxCoalescePartitionRule(PartitionRule):
    """Eagerly unions touching sub-rule candidates while the union stays valid under
    `config`, giving the largest regions (e.g. the maximal supported regions of a BYOC
    backend, as `partition_for_<backend>` would offload them)."""

    name: str
    sub_rule: PartitionRule
    config: SubGraphConfig = field(default_factory=SubGraphConfig)

    def all_candidates(self, graph, spec):
        regions = sorted(self.sub_rule.all_candidates(graph, spec), key=lambda c: c.inside)
        changed = True
        while changed:
            changed = False
            merged: list[CandidateKernel] = []
            for c in regions:
                for k, r in enumerate(merged):
                    if not r.sub_graph.are_touching(c.sub_graph):
                        continue
                    u = CandidateKernel(r.sub_graph.disjoint_union(c.sub_graph), spec, r.rule_name)
                    if u.sub_graph.is_valid(self.config):
                        merged[k] = u
                        changed = True
                        break
                else:
                    merged.append(c)
            regions = merged
        return [replace(c, rule_name=nest(self.name, "region")) for c in regions]


@dataclass(frozen=True)
class DataflowTemplatePartitionRule(PartitionRule):
    """Candidates that follow an accelerator's hardware dataflow template (seeds/003, OPU).

    The template names the stages (op names) and the links `stage -> next stages` the
    hardware pipeline allows, e.g. `{"collage.pad": ("collage.conv2d",), "collage.conv2d":
    ("collage.add",), "collage.add": ("collage.relu", "collage.max_pool2d")}`. A candidate
    is every chain of ops `op1 -> op2 -> ...` along dataflow edges in which each step is
    a template link and no stage repeats (each hardware unit is used once per pass, e.g.
    one pad per group); singletons of template stages included. Named `name`.
    """

    name: str
    links: Mapping[str, tuple[str, ...]]

    def all_candidates(self, graph, spec):
        stages = set(self.links) | {s for nexts in self.links.values() for s in nexts}
        found: dict[int, None] = {}

        def grow(index: int, inside: int, used: frozenset[str]) -> None:
            found[inside] = None
            op_name = graph.nodes[index].op.name
            for out in graph.nodes[index].outputs:
                op = graph.nodes[out].op
                if op.name in self.links.get(op_name, ()) and op.name not in used:
                    grow(out, inside | single(out), used | {op.name})

        for i in bits(graph.kernel_nodes):
            op_name = graph.nodes[i].op.name
            if op_name in stages:
                grow(i, single(i), frozenset({op_name}))
        return [CandidateKernel(SubGraph(graph, inside), spec, self.name) for inside in found]
