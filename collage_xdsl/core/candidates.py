"""Candidate kernels (Collage Phase 1 and 2): partition specs and their candidates.

A `PartitionSpec` pairs a backend with the partition rule that finds its candidate
kernels; `gather_specs` builds the specs of the enabled backends (each derived from the
backend's declarations, see `collage_xdsl.backends.base`) plus the `host` spec, whose
zero-cost singletons cover the nodes that need no backend kernel (`collage.tuple`,
`collage.get_item`). `generate_candidates` runs every spec's rule over the dataflow
graph of a function and returns the deduplicated candidates; every node that needs a
kernel must be covered by at least one, otherwise it raises a `CollageError` naming the op.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects.func import FuncOp

from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, first, single
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.errors import CollageError


@dataclass(frozen=True)
class PartitionSpec:
    """A backend (by name) and the rule that finds its candidates; equal by name."""

    name: str
    rule: PartitionRule = field(compare=False)
    backend: object | None = field(default=None, compare=False)
    """The backend (a `collage_xdsl.backends.Backend`); None for the `host` spec, whose
    candidates run on the host, not in a kernel."""


class PartitionRule:
    """Finds candidate kernels for a spec over a dataflow graph (see `collage_xdsl.core.rules`)."""

    name: str

    def all_candidates(self, graph: DataflowGraph, spec: PartitionSpec) -> list[CandidateKernel]:
        raise NotImplementedError


@dataclass(frozen=True)
class CandidateKernel:
    """A sub-graph a spec's backend could run as one kernel; equal by (sub-graph, spec).

    `rule_name` records how the rules built it (ops joined by `+`, rule names nested with
    `.`); `cost` is set once estimated (host candidates cost 0 from the start).
    """

    sub_graph: SubGraph
    spec: PartitionSpec
    rule_name: str = field(compare=False)
    cost: float | None = field(default=None, compare=False)

    @property
    def inside(self) -> int:
        return self.sub_graph.inside

    def describe(self, graph: DataflowGraph) -> str:
        """`<spec> <rule> [nodes] kind=<kind> label=<label>`: one stable, readable line."""
        nodes = ", ".join(node_name(graph, i) for i in bits(self.inside))
        return (
            f"{self.spec.name} {self.rule_name} [{nodes}] kind={self.sub_graph.kind.name.lower()}"
            f" label={self.sub_graph.label or '-'}"
        )


HOST_OPS = frozenset({"collage.tuple", "collage.get_item"})
"""Ops the host runs without a kernel: building a tuple and projecting from one."""


def nest(outer: str, inner: str) -> str:
    return f"{outer}.{inner}" if outer and inner else outer or inner


def short_name(graph: DataflowGraph, index: int) -> str:
    op = graph.nodes[index].op
    return op.name.removeprefix("collage.") if op is not None else "arg"


def singleton(graph: DataflowGraph, index: int, spec: PartitionSpec, rule_name: str,
              cost: float | None = None) -> CandidateKernel:
    return CandidateKernel(
        SubGraph(graph, single(index)), spec, rule_name or short_name(graph, index), cost
    )


def node_name(graph: DataflowGraph, index: int) -> str:
    """`%name` when the node's (first) value has a name in the IR, else `#index`."""
    node = graph.nodes[index]
    values = node.values
    hint = values[0].name_hint if values else None
    return f"%{hint}" if hint else f"#{index}"


def generate_candidates(
    func: FuncOp | DataflowGraph, specs: Sequence[PartitionSpec]
) -> list[CandidateKernel]:
    """Every spec's candidates over `func`, deduplicated, in spec order then rule order."""
    graph = func if isinstance(func, DataflowGraph) else DataflowGraph(func)
    seen: set[CandidateKernel] = set()
    result: list[CandidateKernel] = []
    covered = 0
    for spec in specs:
        for candidate in spec.rule.all_candidates(graph, spec):
            if candidate not in seen:
                seen.add(candidate)
                result.append(candidate)
                covered |= candidate.inside
    missing = graph.kernel_nodes & ~covered
    if missing:
        node = graph.nodes[first(missing)]
        names = ", ".join(s.name for s in specs if s.backend is not None) or "none"
        raise CollageError(
            f"no enabled backend supports {node.op.name} (node {node_name(graph, node.index)} "
            f"in @{graph.func.sym_name.data}); enabled backends: {names}"
        )
    return result
