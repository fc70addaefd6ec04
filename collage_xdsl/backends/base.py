"""Backend: what a backend declares, and the PartitionSpec derived from it (Phase 1).

A backend declares its name, the ops it supports (each with an optional predicate on the
op, e.g. "f32 only"; `None` for every op), named patterns (lowered as composites labelled
`<backend>.<name>`), a fusion style and a maximum kernel depth. Its partition spec is
derived, never written by hand:

    seeds  = Union(Composite(<backend>.<name>, DFPattern(pattern)) for each pattern,
                   singletons of the supported ops)
    none:      seeds
    tvm:       Combine(seeds, [by-kind FuseOps rules, tuple args, tuple projections])
    arbitrary: Combine(seeds, [join anything, tuple args, tuple projections],
                       pruned to valid unions, which loses none: see CombinePartitionRule)
    rule   = Primitive(OnlyValid(<that>, max_exits=1, no taps, max_depth))
    with max_regions, BYOC backends and fusing native ones:
           Union(rule, MaxCoalesce(supported singletons)) — the maximal supported regions
           at any depth, as `partition_for_<backend>` would offload them, or as MaxCoalesce
           merges a native backend's touching kernels after the search (so the search
           prices that one merged kernel, not its parts with a launch each).

Constants need no combiner: `SubGraph.extract` clones the constants a kernel reads into it.

Lowering is not declared here: `compile` hands the kernel function to `collage_xdsl.backends.kernel`
(another module), which lowers it by the backend's `name`; `version` identifies the toolchain
build and the codegen's schedule (it is part of the cost-database key). A subclass for a
toolchain of its own overrides `compile` and `version`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, get_type_hints

from xdsl.dialects.builtin import AnyFloat, TensorType
from xdsl.ir import Operation

from collage_xdsl.core.candidates import PartitionSpec
from collage_xdsl.core.combiners import (
    JOIN_ANYTHING,
    TVM_SIMPLE_RULES,
    AllSimpleCombinerRule,
    TupleArgCombinerRule,
    TupleProjCombinerRule,
)
from collage_xdsl.core.patterns import Match, Pattern
from collage_xdsl.core.rules import (
    HOST_OPS,
    CombinePartitionRule,
    CompositePartitionRule,
    DFPatternPartitionRule,
    MaxCoalescePartitionRule,
    OnlyValidPartitionRule,
    OpCallByKindPartitionRule,
    OpPredicatePartitionRule,
    PartitionRule,
    PrimitivePartitionRule,
    UnionPartitionRule,
)
from collage_xdsl.core.subgraph import SubGraphConfig
from collage_xdsl.dialects.collage import Collage, ConstantOp, GraphOp

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.dialects.func import FuncOp

    from collage_xdsl.backends.kernel import CompiledKernel
    from collage_xdsl.backends.threads import ThreadPolicy

OpPredicate = Callable[[Operation], bool]

REGION_CONFIG = SubGraphConfig(max_exits=0, allow_taps=True, max_depth=0)

MAX_CANDIDATES_PER_NODE = 64
"""Default cap on fused candidates sharing a lowest node (see `CombinePartitionRule`)."""
"""Maximal regions: any number of exits, taps allowed, unbounded depth."""


class FusionStyle(str, Enum):
    NONE = "none"
    """Singletons and pattern matches only."""
    TVM = "tvm"
    """FuseOps-like: by op kind, plus tuples."""
    ARBITRARY = "arbitrary"
    """Any connected set of supported ops (BYOC graph compilers)."""


@dataclass(frozen=True)
class NamedPattern:
    """A pattern the backend lowers as one composite, `<backend>.<name>`."""

    name: str
    pattern: Pattern
    check: Callable[[Match], bool] | None = None


def kernel_op_names() -> tuple[str, ...]:
    """The dialect's graph ops that need a kernel (not constants, tuples or projections)."""
    return tuple(
        op.name for op in Collage.operations
        if issubclass(op, GraphOp) and op is not ConstantOp and op.name not in HOST_OPS
    )


def f32_only(op: Operation) -> bool:
    """Every floating-point operand and result of `op` is f32."""
    for v in (*op.operands, *op.results):
        t = v.type
        if isinstance(t, TensorType) and isinstance(t.get_element_type(), AnyFloat):
            if t.get_element_type().bitwidth != 32:
                return False
    return True


@cache
def codegen_version(name: str) -> str:
    """The `version` of the kernels `collage_xdsl.backends.kernel` compiles for backend `name`."""
    from collage_xdsl.backends.kernel import BACKENDS

    hook = import_module(BACKENDS[name]).compile
    return get_type_hints(hook)["return"].version


@dataclass(frozen=True)
class Backend:
    """A backend's declarations; `partition_spec` derives its spec from them."""

    name: str
    supported_ops: Mapping[str, OpPredicate | None] | None = None
    """Op name -> predicate (None: always); None for every op of the dialect."""
    patterns: tuple[NamedPattern, ...] = ()
    fusion: FusionStyle = FusionStyle.ARBITRARY
    max_depth: int = 8
    byoc: bool = True
    """Lowered by an external toolchain (offers maximal regions) rather than natively."""
    package: str | None = field(default=None, compare=False)
    """The Python distribution of the toolchain, for `version`."""
    rule: PartitionRule | None = field(default=None, compare=False)
    """A hand-written partition rule used instead of the derived one (the design doc's
    `fusion_spec` target attribute), e.g. a `DataflowTemplatePartitionRule`."""

    @property
    def version(self) -> str:
        """The toolchain's version (`<package>==<version>`), part of the cost-database key.
        For a backend `collage_xdsl.backends.kernel` lowers, the version its compiled kernels report
        (the library's own, plus the schedule for tvm; importing the library)."""
        if self.package is None:
            return "0"
        from collage_xdsl.backends.kernel import BACKENDS

        if self.name in BACKENDS:
            return f"{self.package}=={codegen_version(self.name)}"
        try:
            return f"{self.package}=={version(self.package)}"
        except PackageNotFoundError:
            return f"{self.package}==missing"

    def compile(
        self, kernel: ModuleOp | FuncOp, threads: ThreadPolicy | int | None = None
    ) -> CompiledKernel:
        """The codegen hook: lower and compile a kernel function (or its module) for this
        backend (`collage_xdsl.backends.kernel.compile_kernel`); a kernel it cannot compile raises
        `KernelCompileError`, which the measured estimator turns into an Invalid cost."""
        from collage_xdsl.backends.kernel import compile_kernel

        return compile_kernel(self.name, kernel, threads)

    def supports(self, op: Operation) -> bool:
        if self.supported_ops is None:
            return True
        if op.name not in self.supported_ops:
            return False
        predicate = self.supported_ops[op.name]
        return predicate is None or predicate(op)

    def partition_spec(
        self, max_depth: int | None = None, max_regions: bool = True,
        max_per_node: int = MAX_CANDIDATES_PER_NODE,
    ) -> PartitionSpec:
        """The spec derived from the declarations (`max_depth` overrides the declared one;
        `max_per_node` caps the fused candidates per lowest node, 0 = no cap), or the
        backend's own `rule` when it has one."""
        if self.rule is not None:
            return PartitionSpec(self.name, self.rule, self)
        depth = self.max_depth if max_depth is None else max_depth
        if self.supported_ops is None:
            ops: PartitionRule = OpCallByKindPartitionRule("")
        else:
            ops = OpPredicatePartitionRule("", self.supports)
        seeds = UnionPartitionRule("", (
            *(CompositePartitionRule(f"{self.name}.{p.name}",
                                     DFPatternPartitionRule("", p.pattern, p.check))
              for p in self.patterns),
            ops,
        ))
        config = SubGraphConfig(max_exits=1, allow_taps=False, max_depth=depth)
        combiners = (TupleArgCombinerRule(), TupleProjCombinerRule())
        if self.fusion is FusionStyle.NONE:
            combined: PartitionRule = seeds
        elif self.fusion is FusionStyle.TVM:
            combined = CombinePartitionRule(
                "", seeds, (AllSimpleCombinerRule("", TVM_SIMPLE_RULES), *combiners), depth,
                config, max_per_node
            )
        else:
            combined = CombinePartitionRule(
                "", seeds, (AllSimpleCombinerRule("", JOIN_ANYTHING, grow=True), *combiners),
                depth, config, max_per_node
            )
        rule: PartitionRule = OnlyValidPartitionRule("", combined, config)
        if max_regions and (self.byoc or self.fusion is not FusionStyle.NONE):
            regions = MaxCoalescePartitionRule("max", ops, REGION_CONFIG)
            rule = UnionPartitionRule("", (rule, regions))
        return PartitionSpec(self.name, PrimitivePartitionRule("", rule), self)
