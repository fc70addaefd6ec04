"""Boundary costs: what a whole-model run pays beyond its kernels' isolated costs.

    costs = TransitionCosts(base=5e-6, launch={"tvm": 1e-6},
                            crossing={("tvm", "onnxruntime"): (2e-6, 0)})
    plan_estimate(graph, kernels, costs).total

    estimate(plan) = base + sum_k (cost_k + launch[b_k]) + sum_{a -> b, a != b} crossing

`base` is the runtime's own cost per run, `launch[b]` what a call on backend b costs in a
run beyond its cost alone, `crossing[(a, b)]` a tensor handed from backend a to b (fixed
seconds + seconds per byte). A plan of one kernel doing all the work is that kernel's cost
alone. `runtime/calibration` measures the figures; the option syntax is `none`,
`measured`, `fixed:SECONDS` or `auto` (`docs/design.md`, "Boundary costs").
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from collage_xdsl.core.graph import DataflowGraph, values_read
from collage_xdsl.core.index_set import bits
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.tensors import tensor_bytes


@dataclass(frozen=True)
class TransitionCosts:
    """Seconds a whole-model run pays beyond the kernels' isolated costs."""

    base: float = 0.0
    launch: Mapping[str, float] = field(default_factory=dict)
    crossing: Mapping[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    """(from backend, to backend) -> (fixed seconds, seconds per byte)."""

    @property
    def is_zero(self) -> bool:
        return not self.base and not any(self.launch.values()) and not any(
            f or p for f, p in self.crossing.values())

    def kernel(self, backend: str) -> float:
        """The extra seconds of one call of a kernel on ``backend``."""
        return self.launch.get(backend, 0.0)

    def edge(self, src: str | None, dst: str | None, nbytes: int) -> float:
        """Seconds to hand a tensor of ``nbytes`` from ``src`` to ``dst`` (None: host)."""
        if src is None or dst is None or src == dst:
            return 0.0
        fixed, per_byte = self.crossing.get((src, dst), (0.0, 0.0))
        return fixed + per_byte * nbytes

    def to_json(self) -> dict:
        return {"base": self.base, "launch": dict(self.launch),
                "crossing": [[a, b, f, p] for (a, b), (f, p) in self.crossing.items()]}

    @staticmethod
    def from_json(data: dict) -> TransitionCosts:
        """The inverse of `to_json`. Anything else raises ValueError (a figure that is not
        a finite number >= 0: ``fixed`` may be infinite, as `parse_transitions` allows),
        KeyError, TypeError or AttributeError."""
        if "fixed" in data:
            return FixedCrossing(seconds=_seconds(data["fixed"], "fixed", finite=False))
        return TransitionCosts(
            _seconds(data["base"], "base"),
            {b: _seconds(s, f"launch {b}") for b, s in data["launch"].items()},
            {(a, b): (_seconds(f, f"crossing {a}>{b}"), _seconds(p, f"crossing {a}>{b}/byte"))
             for a, b, f, p in data["crossing"]})

    def describe(self) -> str:
        """One line: base, launch per backend, fixed crossing per pair (microseconds)."""
        launch = ", ".join(f"{b} {s * 1e6:.1f}" for b, s in sorted(self.launch.items()))
        cross = ", ".join(f"{a}>{b} {f * 1e6:.1f} + {p * 1024e6:.3f}/KiB"
                          for (a, b), (f, p) in sorted(self.crossing.items()))
        return (f"transition costs (us): base {self.base * 1e6:.1f}; launch {launch or '-'}; "
                f"crossing {cross or '-'}")


NONE = TransitionCosts()


def _seconds(value: object, what: str, finite: bool = True) -> float:
    """``value`` (a JSON number >= 0, finite if ``finite``) as seconds, else ValueError."""
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0
            or finite and value == math.inf):
        raise ValueError(f"{what} {value!r} is not a {'finite ' * finite}number >= 0")
    return float(value)


def parse_transitions(text: str) -> str | TransitionCosts:
    """``none`` / ``measured`` / ``auto`` (returned as is) or ``fixed:SECONDS``."""
    text = text.strip()
    if text in ("none", "measured", "auto"):
        return text
    kind, sep, value = text.partition(":")
    try:
        seconds = float(value) if kind == "fixed" and sep else -1.0
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:
        raise CollageError(f"transitions: expected none, measured, auto or fixed:SECONDS "
                           f"(SECONDS >= 0), got {text!r}")
    return FixedCrossing(seconds=seconds)


@dataclass(frozen=True)
class FixedCrossing(TransitionCosts):
    """Every tensor between kernels of different backends costs ``seconds``."""

    seconds: float = 0.0

    @property
    def is_zero(self) -> bool:
        return not self.seconds

    def edge(self, src: str | None, dst: str | None, nbytes: int) -> float:
        return 0.0 if src is None or dst is None or src == dst else self.seconds

    def to_json(self) -> dict:
        return {"fixed": self.seconds}


# ---------------------------------------------------------------------------
# Boundaries of kernels in a graph
# ---------------------------------------------------------------------------


class Boundaries:
    """The tensors crossing kernel boundaries of one graph, with their sizes in bytes."""

    def __init__(self, graph: DataflowGraph):
        self.graph = graph
        self._bytes: dict[tuple[int, int], int] = {}

    def edge_bytes(self, src: int, dst: int) -> int:
        """Bytes of node ``src``'s values that node ``dst`` reads."""
        key = (src, dst)
        if key not in self._bytes:
            produced = set(self.graph.nodes[src].values)
            read = {v for v in values_read(self.graph.nodes[dst].op) if v in produced}
            self._bytes[key] = sum(tensor_bytes(v.type) for v in read)
        return self._bytes[key]

    def crossings(self, inside: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """For a kernel of nodes ``inside``: (producer node, bytes) of each kernel node
        outside feeding it, and (consumer node, bytes) of each kernel node outside it
        reads its results."""
        nodes = self.graph.nodes
        ins: dict[int, int] = {}
        outs: list[tuple[int, int]] = []
        for u in bits(inside & self.graph.kernel_nodes):
            for p in nodes[u].inputs:
                if not inside >> p & 1 and nodes[p].needs_kernel:
                    ins[p] = ins.get(p, 0) + self.edge_bytes(p, u)
            for q in nodes[u].outputs:
                if not inside >> q & 1 and nodes[q].needs_kernel:
                    outs.append((q, self.edge_bytes(u, q)))
        return list(ins.items()), outs


@dataclass(frozen=True)
class PlanEstimate:
    """An estimate of one function's whole-run time under a plan, by part."""

    kernels: float
    launches: float
    crossings: float
    base: float

    @property
    def total(self) -> float:
        return self.kernels + self.launches + self.crossings + self.base


def plan_estimate(graph: DataflowGraph, kernels: Sequence, costs: TransitionCosts
                  ) -> PlanEstimate:
    """Estimate running ``graph`` as ``kernels`` (``.inside``, ``.backend``, ``.cost``):
    their costs, a launch per kernel, a crossing per (tensor, consuming kernel) whose
    producer is a kernel of another backend, and the run's base cost. One kernel doing
    all of the function's work is all there is to a run (the runtime calls it directly,
    `direct_kernel_call`): its cost alone."""
    if len(kernels) == 1 and graph.does_all_work(kernels[0].inside):
        return PlanEstimate(kernels[0].cost if kernels[0].cost is not None else 0.0,
                            0.0, 0.0, 0.0)
    return PlanEstimate(
        sum(k.cost for k in kernels if k.cost is not None),
        sum(costs.kernel(k.backend) for k in kernels),
        sum(c.seconds for c in plan_crossings(graph, kernels, costs)),
        costs.base if kernels else 0.0,
    )


@dataclass(frozen=True)
class Crossing:
    """The tensors a plan passes from kernels of one backend to kernels of another."""

    source: str
    target: str
    tensors: int
    seconds: float


def plan_crossings(graph: DataflowGraph, kernels: Sequence, costs: TransitionCosts
                   ) -> tuple[Crossing, ...]:
    """Per (producing, consuming) backend pair of ``kernels`` (``.inside``, ``.backend``),
    the tensors crossing between their kernels and what ``costs`` say they cost."""
    owner = {i: k.backend for k in kernels for i in bits(k.inside)}
    boundaries = Boundaries(graph)
    found: dict[tuple[str, str], tuple[int, float]] = {}
    for k in kernels:
        ins, _ = boundaries.crossings(k.inside)
        for producer, nbytes in ins:
            source = owner.get(producer)
            if source is None or source == k.backend:
                continue
            tensors, seconds = found.get((source, k.backend), (0, 0.0))
            found[(source, k.backend)] = (tensors + 1,
                                          seconds + costs.edge(source, k.backend, nbytes))
    return tuple(Crossing(s, t, n, c) for (s, t), (n, c) in sorted(found.items()))


