"""Placement constraints: where the user lets each op run (the design doc's `on_device`).

    constraints = Constraints.parse(pin="op:softmax=onnxruntime;fc*=tvm", forbid="conv.2=openvino",
                                    min_kernel_ops=2, no_fallback=False)
    allowed = constraints.allowed(graph, specs)       # backend -> nodes it may run
    candidates = constraints.filter(graph, candidates, allowed)

A selector is `op:NAME` (every op of that kind, `collage.` optional) or a glob over node
names (an op's SSA name without `%`, which the ONNX importer takes from the node: `conv.2`;
`#12` for an unnamed node). An op carrying a `collage.backend = "NAME"` attribute is pinned
to that backend. A pinned op may only run on its backend; a forbidden backend never runs a
matching op; a BYOC kernel of fewer ops than `min_kernel_ops` (or, once estimated, faster
than `min_kernel_seconds`) is not offered; with `no_fallback`, every op must be accepted by
an enabled BYOC backend instead of falling back to the native one. A constraint that
cannot be met is a `ConstraintError` naming the op and the backend.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import StringAttr

from collage_xdsl.core.candidates import CandidateKernel, PartitionSpec, node_name
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, count, first, single
from collage_xdsl.errors import CollageError

BACKEND_ATTR = "collage.backend"
"""An op attribute pinning the op to a backend (`{collage.backend = "tvm"}`)."""


class ConstraintError(CollageError):
    """A placement constraint is malformed or cannot be met."""


@dataclass(frozen=True)
class Rule:
    """Ops matching `selector` and the backends the rule names for them."""

    selector: str
    backends: tuple[str, ...]

    def matches(self, graph: DataflowGraph, index: int) -> bool:
        op = graph.nodes[index].op
        if self.selector.startswith("op:"):
            kind = self.selector.removeprefix("op:")
            return op is not None and op.name.removeprefix("collage.") == \
                kind.removeprefix("collage.")
        return fnmatch.fnmatchcase(node_name(graph, index).removeprefix("%"), self.selector)


def parse_rules(text: str, option: str) -> tuple[Rule, ...]:
    """`SELECTOR=B1,B2;SELECTOR=B` as rules; a malformed entry names the option."""
    rules = []
    for entry in filter(None, (e.strip() for e in text.split(";"))):
        selector, eq, names = entry.rpartition("=")
        backends = tuple(n.strip() for n in names.split(",") if n.strip())
        if not eq or not selector.strip() or not backends:
            raise ConstraintError(f"{option}: expected SELECTOR=BACKEND[,BACKEND...] "
                                  f"separated by ';', got {entry!r}")
        rules.append(Rule(selector.strip(), backends))
    return tuple(rules)


@dataclass(frozen=True)
class Constraints:
    """The user's placement constraints for one partition (see the module docstring)."""

    pins: tuple[Rule, ...] = ()
    forbids: tuple[Rule, ...] = ()
    min_kernel_ops: int = 0
    min_kernel_seconds: float = 0.0
    no_fallback: bool = False

    @classmethod
    def parse(cls, pin: str = "", forbid: str = "", min_kernel_ops: int = 0,
              min_kernel_seconds: float = 0.0, no_fallback: bool = False) -> Constraints:
        pins = parse_rules(pin, "pin")
        for rule in pins:
            if len(rule.backends) != 1:
                raise ConstraintError(f"pin: {rule.selector!r} names {len(rule.backends)} "
                                      "backends; an op is pinned to one")
        if min_kernel_ops < 0 or not min_kernel_seconds >= 0:
            raise ConstraintError("min-kernel-ops and min-kernel-seconds must be >= 0")
        return cls(pins, parse_rules(forbid, "forbid"), min_kernel_ops,
                   float(min_kernel_seconds), no_fallback)

    def check_backends(self, enabled: Sequence[str]) -> None:
        """Every backend a rule names is enabled."""
        for option, rules in (("pin", self.pins), ("forbid", self.forbids)):
            for rule in rules:
                for name in rule.backends:
                    if name not in enabled:
                        raise ConstraintError(
                            f"{option}: {rule.selector!r} names backend {name!r}, which is "
                            f"not enabled (enabled: {', '.join(enabled)})")

    def pinned(self, graph: DataflowGraph, index: int, enabled: Sequence[str]) -> str | None:
        """The backend node `index` is pinned to, by its attribute or a pin rule."""
        op = graph.nodes[index].op
        found: dict[str, str] = {}
        attr = op.attributes.get(BACKEND_ATTR) if op is not None else None
        if isinstance(attr, StringAttr):
            if attr.data not in enabled:
                raise ConstraintError(
                    f"{describe(graph, index)} has {BACKEND_ATTR} = {attr.data!r}, which is "
                    f"not an enabled backend (enabled: {', '.join(enabled)})")
            found[attr.data] = BACKEND_ATTR
        for rule in self.pins:
            if rule.matches(graph, index):
                found.setdefault(rule.backends[0], f"pin {rule.selector!r}")
        if len(found) > 1:
            raise ConstraintError(f"{describe(graph, index)} is pinned to "
                                  f"{' and '.join(sorted(found))} ({', '.join(found.values())})")
        return next(iter(found), None)

    def allowed(self, graph: DataflowGraph, specs: Sequence[PartitionSpec]) -> dict[str, int]:
        """Per enabled backend, the kernel nodes it may run under the pins and forbids."""
        enabled = [s.name for s in specs if s.backend is not None]
        self.check_backends(enabled)
        allowed = {name: graph.kernel_nodes for name in enabled}
        for i in bits(graph.kernel_nodes):
            pin = self.pinned(graph, i, enabled)
            for name in enabled:
                if (pin is not None and name != pin) or any(
                        name in r.backends and r.matches(graph, i) for r in self.forbids):
                    allowed[name] &= ~single(i)
        return allowed

    def offered(self, graph: DataflowGraph, c: CandidateKernel, allowed: dict[str, int],
                cost: Callable[[CandidateKernel], float] | None = None) -> bool:
        """Whether candidate `c` may be in a plan: host candidates always; a kernel when its
        backend may run all its nodes and, for a BYOC backend, it is not too small."""
        if c.spec.backend is None:
            return True
        ops = c.inside & graph.kernel_nodes
        if ops & ~allowed[c.spec.name]:
            return False
        if not is_byoc(c):
            return True
        if count(ops) < self.min_kernel_ops:
            return False
        return cost is None or not cost(c) < self.min_kernel_seconds

    def filter(self, graph: DataflowGraph, candidates: Sequence[CandidateKernel],
               allowed: dict[str, int],
               cost: Callable[[CandidateKernel], float] | None = None) -> list[CandidateKernel]:
        """The candidates the constraints offer; every kernel node must keep one (else a
        `ConstraintError` names the op and why), and with `no_fallback` a BYOC one."""
        kept = [c for c in candidates if self.offered(graph, c, allowed, cost)]
        covered = byoc = host = 0
        for c in kept:
            covered |= c.inside
            if c.spec.backend is None:
                host |= c.inside
            elif is_byoc(c):
                byoc |= c.inside
        uncovered = graph.kernel_nodes & ~covered
        if uncovered:
            raise ConstraintError(self._why_uncovered(graph, first(uncovered), candidates,
                                                      allowed))
        if self.no_fallback and any(is_byoc(c) for c in candidates):
            missing = [describe(graph, i) for i in bits(graph.kernel_nodes & ~byoc & ~host)]
            if missing:
                raise ConstraintError(
                    f"no-fallback: {len(missing)} op(s) no enabled BYOC backend accepts: "
                    f"{', '.join(missing)}")
        return kept

    def _why_uncovered(self, graph: DataflowGraph, index: int,
                       candidates: Sequence[CandidateKernel], allowed: dict[str, int]) -> str:
        offered = sorted({c.spec.name for c in candidates
                          if c.spec.backend is not None and c.inside & single(index)})
        may = [name for name in offered if allowed[name] & single(index)]
        what = describe(graph, index)
        if not may:
            pinned = [name for name, mask in allowed.items() if mask & single(index)]
            if len(pinned) == 1 and pinned[0] not in offered:
                return f"{what} is pinned to {pinned[0]}, which cannot run it " \
                       f"(backends that can: {', '.join(offered) or 'none'})"
            return f"{what}: the constraints forbid every backend that can run it " \
                   f"({', '.join(offered) or 'none'})"
        return f"{what}: every kernel {', '.join(may)} offers for it is smaller than " \
               "the minimum kernel size"


def is_byoc(c: CandidateKernel) -> bool:
    """Whether `c` is a BYOC backend's candidate (not the native backend's or the host's)."""
    return bool(getattr(c.spec.backend, "byoc", False))


def describe(graph: DataflowGraph, index: int) -> str:
    """`op %conv.2 (conv2d)`."""
    op = graph.nodes[index].op
    kind = op.name.removeprefix("collage.") if op is not None else "arg"
    return f"op {node_name(graph, index)} ({kind})"
