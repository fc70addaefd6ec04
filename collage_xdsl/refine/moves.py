"""What a plan may become: the seeds and mutations end-to-end refinement
(`collage_xdsl.refine.driver`) compares with the plan it has.

    space = MoveSpace(graph, backends, configs)   # configs: the partition's, per backend
    space.seeds(start)                            # each backend alone, then greedy plans
    space.mutations(plan, rng, CutPoints.of(start.kernels, gains))

Mutations, by class, each class shuffled by the caller's seeded RNG (cuts in their rank
order first): **merge** two touching kernels onto either one's backend; **cut** a kernel
in two after a node (what depends on the node, and the rest); **reassign** a kernel to
another backend; **move** one op across a boundary; **split** a kernel into its ops or
into TVM FuseOps groups. Every new kernel is supported by its backend and valid under the
partition's coalescing config, and the kernels stay acyclic.
"""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from collage_xdsl.backends.base import Backend
from collage_xdsl.baselines.assign import assign_kernels, supported
from collage_xdsl.baselines.fuse_ops import fuse_ops_kernels, host_only
from collage_xdsl.baselines.partition_for import partition_for_kernels
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, count, first, single
from collage_xdsl.core.regions import ANY_SHAPE, Kernel, kernel_label
from collage_xdsl.core.subgraph import SubGraph, SubGraphConfig
from collage_xdsl.errors import CollageError
from collage_xdsl.refine.cuts import CutPoints


@dataclass(frozen=True)
class Plan:
    """Kernels covering a function's kernel nodes (host ops aside), and how they came about."""

    kernels: tuple[Kernel, ...]
    origin: str = "start"

    @cached_property
    def key(self) -> frozenset[tuple[int, str]]:
        """The plan's identity: each kernel's ops and backend."""
        return frozenset((k.inside & k.sub_graph.graph.kernel_nodes, k.backend)
                         for k in self.kernels)

    def backends(self) -> dict[str, int]:
        """Kernels per backend."""
        found: dict[str, int] = {}
        for k in self.kernels:
            found[k.backend] = found.get(k.backend, 0) + 1
        return dict(sorted(found.items()))


def make_plan(kernels: Sequence[Kernel], origin: str) -> Plan:
    """A plan with its kernels in dataflow order (by lowest node)."""
    return Plan(tuple(sorted(kernels, key=lambda k: first(k.inside))), origin)


def unranked(plans: Sequence[Plan]) -> list[tuple[tuple[int, float], Plan]]:
    """Mutations of a class whose order is left to the shuffle alone."""
    return [((0, 0.0), p) for p in plans]


class MoveSpace:
    """What the kernels of one function may become: the enabled backends, the ops each
    supports, and the shape a fused kernel of each must keep (`configs`: the partition
    pass's coalescing config per backend; None for a backend that does not fuse)."""

    def __init__(self, graph: DataflowGraph, backends: Sequence[Backend],
                 configs: Mapping[str, SubGraphConfig | None],
                 allowed: Mapping[str, int] | None = None, min_byoc_ops: int = 0):
        self.graph = graph
        self.backends = {b.name: b for b in backends}
        self.configs = dict(configs)
        self.supported = {b.name: supported(graph, b) & (allowed or {}).get(b.name, -1)
                          for b in backends}
        """The nodes each backend supports and the placement constraints let it run."""
        self.min_byoc_ops = min_byoc_ops
        """BYOC kernels of fewer ops are not offered (`Constraints.min_kernel_ops`)."""
        self.host = 0
        """Kernel nodes the host runs (tuples, projections)."""
        for i in bits(graph.kernel_nodes):
            if host_only(graph, single(i)):
                self.host |= single(i)

    def ops(self, inside: int) -> int:
        """The nodes of `inside` a backend must run (kernel nodes, host ops aside)."""
        return inside & self.graph.kernel_nodes & ~self.host

    def fits(self, sub: SubGraph, backend: str) -> bool:
        """Whether `backend` supports every op of `sub` and `sub` has a kernel's shape."""
        ops = self.ops(sub.inside)
        if not ops or ops & ~self.supported[backend]:
            return False
        if self.backends[backend].byoc and count(ops) < self.min_byoc_ops:
            return False
        config = self.configs.get(backend)
        if config is None:
            return count(ops) == 1 and sub.is_valid(ANY_SHAPE)
        return sub.is_valid(config)

    def respects(self, plan: Plan) -> bool:
        """Whether every kernel of `plan` runs only ops its backend supports and may run,
        at the minimum size (a seed or split built without `fits`)."""
        for k in plan.kernels:
            ops = self.ops(k.inside)
            if ops & ~self.supported[k.backend] or (
                    self.backends[k.backend].byoc and count(ops) < self.min_byoc_ops):
                return False
        return True

    def acyclic(self, kernels: Sequence[Kernel]) -> bool:
        """Whether the kernels (and host ops) can run in some order: no kernel depends on
        itself through others, which convex kernels alone do not rule out."""
        nodes = self.graph.nodes
        unit = {i: u for u, k in enumerate(kernels)
                for i in bits(k.inside & self.graph.kernel_nodes)}
        for i in bits(self.graph.kernel_nodes):
            unit.setdefault(i, len(kernels) + i)
        deps: dict[int, set[int]] = {u: set() for u in unit.values()}
        for i, u in unit.items():
            for p in nodes[i].inputs:
                if p in unit and unit[p] != u:
                    deps[u].add(unit[p])
        users: dict[int, list[int]] = {u: [] for u in deps}
        for u, ds in deps.items():
            for d in ds:
                users[d].append(u)
        waiting = {u: len(ds) for u, ds in deps.items()}
        ready = [u for u, n in waiting.items() if n == 0]
        done = 0
        while ready:
            u = ready.pop()
            done += 1
            for w in users[u]:
                waiting[w] -= 1
                if waiting[w] == 0:
                    ready.append(w)
        return done == len(deps)

    def describe(self, kernel: Kernel) -> str:
        """`conv2d_add_relu@tvm`."""
        return f"{kernel_label(self.graph, kernel)}@{kernel.backend}"

    def describe_node(self, node: int) -> str:
        """`matmul#38`: the op's name and the node's index."""
        op = self.graph.nodes[node].op
        assert op is not None
        return f"{op.name.removeprefix('collage.')}#{node}"

    # -- seeds -------------------------------------------------------------------------

    def seeds(self, start: Plan | None = None) -> list[Plan | str]:
        """Each backend alone, then each BYOC backend's greedy plan (with tvm enabled);
        a seed that cannot be made is the reason why. Given the start plan, the backends
        carrying the most of it (estimated seconds, then ops) come first."""
        order = list(self.backends)
        if start is not None:
            share: dict[str, tuple[float, int]] = {}
            for k in start.kernels:
                seconds, ops = share.get(k.backend, (0.0, 0))
                share[k.backend] = (seconds + (k.cost or 0.0),
                                    ops + count(k.inside & k.sub_graph.graph.kernel_nodes))
            order.sort(key=lambda name: share.get(name, (0.0, 0)), reverse=True)
        found: list[Plan | str] = []
        for name in order:
            backend = self.backends[name]
            try:
                found.append(make_plan(assign_kernels(self.graph, backend, "whole"),
                                       f"{name} alone"))
            except CollageError as e:
                found.append(f"{name} alone: {e}")
        if "tvm" in self.backends:
            for name in order:
                backend = self.backends[name]
                if backend.byoc:
                    found.append(make_plan(partition_for_kernels(self.graph, backend),
                                           f"{name} greedy (partition-for), rest tvm"))
        return [seed if isinstance(seed, str) or self.respects(seed) else
                f"{seed.origin}: breaks the placement constraints" for seed in found]

    # -- mutations -----------------------------------------------------------------------

    def mutations(self, plan: Plan, rng: random.Random, cuts: CutPoints | None = None,
                  cuts_only: bool = False) -> list[Plan]:
        """Every valid mutation of `plan`: merges, cuts at `cuts` (by their rank),
        reassignments, moves, splits (each class shuffled by `rng`, in that order); only
        the cuts with `cuts_only`."""
        return [p for _, plans in self.mutation_kinds(plan, rng, cuts, cuts_only)
                for p in plans]

    def mutation_kinds(self, plan: Plan, rng: random.Random, cuts: CutPoints | None = None,
                       cuts_only: bool = False) -> list[tuple[str, list[Plan]]]:
        """`mutations` by kind, in their order: ``[("merge", [...]), ("cut", [...]),
        ("reassign", [...]), ("move", [...]), ("split", [...])]``."""
        kernels = plan.kernels
        ranked_cuts = self._cuts(kernels, cuts or CutPoints({}))
        classes = ((("cut", ranked_cuts),) if cuts_only else
                   (("merge", unranked(self._merges(kernels))), ("cut", ranked_cuts),
                    ("reassign", unranked(self._reassignments(kernels))),
                    ("move", unranked(self._moves(kernels))),
                    ("split", unranked(self._splits(kernels)))))
        found: list[tuple[str, list[Plan]]] = []
        for kind, cls in classes:
            valid = [(r, p) for r, p in cls if p.key != plan.key and self.respects(p)
                     and self.acyclic(p.kernels)]
            rng.shuffle(valid)
            found.append((kind, [p for _, p in sorted(valid, key=lambda rp: rp[0])]))
        return found

    def _replace(self, kernels: Sequence[Kernel], drop: Sequence[int], new: Sequence[Kernel],
                 origin: str) -> Plan:
        kept = [k for n, k in enumerate(kernels) if n not in drop]
        return make_plan(kept + list(new), origin)

    def _merges(self, kernels: Sequence[Kernel]) -> list[Plan]:
        found = []
        for i, a in enumerate(kernels):
            for j in range(i + 1, len(kernels)):
                b = kernels[j]
                if not a.sub_graph.are_touching(b.sub_graph):
                    continue
                for backend in dict.fromkeys((a.backend, b.backend)):
                    nested = tuple(s for k in (a, b) if k.backend == backend
                                   for s in k.sub_graph.nested)
                    union = SubGraph(self.graph, a.inside | b.inside, "", nested)
                    if self.fits(union, backend):
                        found.append(self._replace(
                            kernels, (i, j), [Kernel(union, backend)],
                            f"merge {self.describe(a)} + {self.describe(b)} on {backend}"))
        return found

    def _reassignments(self, kernels: Sequence[Kernel]) -> list[Plan]:
        found = []
        for i, a in enumerate(kernels):
            plain = SubGraph(self.graph, a.inside)
            for backend in self.backends:
                if backend != a.backend and self.fits(plain, backend):
                    found.append(self._replace(kernels, (i,), [Kernel(plain, backend)],
                                               f"reassign {self.describe(a)} to {backend}"))
        return found

    def _moves(self, kernels: Sequence[Kernel]) -> list[Plan]:
        found = []
        for i, a in enumerate(kernels):
            for j, b in enumerate(kernels):
                if i == j or not a.sub_graph.are_touching(b.sub_graph):
                    continue
                border = self.ops(a.inside) & (b.sub_graph.input | b.sub_graph.output)
                for n in bits(border):
                    grown = SubGraph(self.graph, b.inside | single(n), "", b.sub_graph.nested)
                    if not self.fits(grown, b.backend):
                        continue
                    new = [Kernel(grown, b.backend)]
                    rest = a.inside & ~single(n)
                    if self.ops(rest):
                        nested = tuple(s for s in a.sub_graph.nested if not s.inside >> n & 1)
                        shrunk = SubGraph(self.graph, rest, "", nested)
                        if not self.fits(shrunk, a.backend):
                            continue
                        new.append(Kernel(shrunk, a.backend))
                    found.append(self._replace(
                        kernels, (i, j), new, f"move {self.describe_node(n)} from "
                        f"{self.describe(a)} to {self.describe(b)}"))
        return found

    def _cuts(self, kernels: Sequence[Kernel], cuts: CutPoints
              ) -> list[tuple[tuple[int, float], Plan]]:
        """Each kernel cut in two after one of its nodes in `cuts`, with the cut's rank:
        the tail is what depends on that node, the head the rest (both convex when the
        kernel is, and the tail never feeds the head), both on the kernel's backend."""
        found = []
        nodes = self.graph.nodes
        for i, a in enumerate(kernels):
            for n in bits(self.ops(a.inside) & cuts.nodes(a.backend)):
                tail = a.inside & nodes[n].downstream & ~single(n)
                head = a.inside & ~tail
                if not self.ops(tail):
                    continue
                parts = []
                for inside in (head, tail):
                    nested = tuple(s for s in a.sub_graph.nested if s.inside & inside)
                    if any(s.inside & ~inside for s in nested):
                        break  # a composite straddles the cut
                    sub = SubGraph(self.graph, inside, "", nested)
                    if not self.fits(sub, a.backend):
                        break
                    parts.append(Kernel(sub, a.backend))
                else:
                    found.append((cuts.rank(n, a.backend), self._replace(
                        kernels, (i,), parts,
                        f"cut {self.describe(a)} after {self.describe_node(n)}")))
        return found

    def _splits(self, kernels: Sequence[Kernel]) -> list[Plan]:
        found = []
        for i, a in enumerate(kernels):
            ops = self.ops(a.inside)
            if count(ops) < 2:
                continue
            for backend in self.backends:
                if not ops & ~self.supported[backend]:
                    found.append(self._replace(
                        kernels, (i,),
                        [Kernel(SubGraph(self.graph, single(n)), backend) for n in bits(ops)],
                        f"split {self.describe(a)} into single ops on {backend}"))
            if "tvm" in self.backends:
                groups = fuse_ops_kernels(self.graph, 256, allowed=a.inside)
                if 1 < len(groups) < count(ops):
                    found.append(self._replace(kernels, (i,), groups,
                                               f"split {self.describe(a)} into FuseOps groups"))
        return found
