"""Backend: what a backend declares, and the partition spec derived from it (Phase 1).

    Backend(name="mine", supported_ops={"collage.relu": None}, fusion=FusionStyle.ARBITRARY,
            lowering="mypackage.lowering")

A backend declares its supported ops (each with an optional predicate), named patterns
(composites `<backend>.<name>`), a fusion style (none, tvm, arbitrary), a maximum depth
and its codegen module (`lowering`: ``compile(func, policy)`` and ``VERSION``). Its
spec is derived: seeds (patterns, singletons) combined by the style's combiners, valid
sub-graphs only, plus the maximal supported regions (`docs/design.md`, "Partition specs").
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

from xdsl.dialects.builtin import AnyFloat, ModuleOp, TensorType, f16, f32
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation

from collage_xdsl.backends.kernel import (
    CompiledKernel,
    KernelCompileError,
    kernel_function,
)
from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.core.candidates import HOST_OPS, PartitionSpec
from collage_xdsl.core.combiners import (
    JOIN_ANYTHING,
    TVM_SIMPLE_RULES,
    AllSimpleCombinerRule,
    TupleArgCombinerRule,
    TupleProjCombinerRule,
)
from collage_xdsl.core.patterns import (  # noqa: F401 (re-exported)
    Match,
    Pattern,
    full_op_name,
    kernel_op_names,
)
from collage_xdsl.core.rules import (
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
from collage_xdsl.dialects.collage import (
    QUANTIZED_TYPES,
    CompositeOp,
    ConstantOp,
    QdqOp,
    QuantizeLinearOp,
    YieldOp,
)
from collage_xdsl.errors import CollageError

OpPredicate = Callable[[Operation], bool]

REGION_CONFIG = SubGraphConfig(max_exits=0, allow_taps=True, max_depth=0)
"""Maximal regions: any number of exits, taps allowed, unbounded depth."""

MAX_CANDIDATES_PER_NODE = 64
"""Default cap on fused candidates sharing a lowest node (see `CombinePartitionRule`)."""


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


@dataclass(frozen=True, init=False)
class FloatTypes:
    """An op predicate: every floating-point operand and result of the op has one of
    `types` as its element type.

        FloatTypes(f32, f16)(op)   # True for f32 and f16 ops, False for bf16 or f64 ones
    """

    types: tuple[Attribute, ...]

    def __init__(self, *types: Attribute):
        object.__setattr__(self, "types", types)

    def __call__(self, op: Operation) -> bool:
        for v in (*op.operands, *op.results):
            t = v.type
            if isinstance(t, TensorType) and isinstance(t.get_element_type(), AnyFloat):
                if t.get_element_type() not in self.types:
                    return False
        return True


f32_only = FloatTypes(f32)
"""Every floating-point operand and result of the op is f32."""

f32_or_f16 = FloatTypes(f32, f16)
"""Every floating-point operand and result of the op is f32 or f16."""


def qdq_types(op: Operation) -> bool:
    """`op` is a quantize_linear or dequantize_linear between f32 (the float side and the
    scale) and int8 or uint8: the QDQ form the BYOC backends accelerate."""
    if not isinstance(op, QdqOp):
        return False
    real, quantized, scale = (
        v.type.get_element_type() for v in  # type: ignore[attr-defined]
        ((op.input, op.output) if isinstance(op, QuantizeLinearOp) else (op.output, op.input))
        + (op.scale,))
    return real == scale == f32 and quantized in QUANTIZED_TYPES


QDQ_OPS: dict[str, OpPredicate] = {
    "collage.quantize_linear": qdq_types, "collage.dequantize_linear": qdq_types}
"""The QDQ ops with their predicate, for a BYOC backend's `supported_ops`."""


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

    lowering: str | None = field(default=None, compare=False)
    """The module of the codegen hook: its ``compile(func, policy)`` returns a
    `CompiledKernel` and its ``VERSION`` names the build and the schedule. None for a
    backend that only declares candidates (the toy `test` backend)."""

    @property
    def can_compile(self) -> bool:
        """Whether kernels of this backend can be compiled and run (not only estimated)."""
        return self.lowering is not None or type(self).lower is not Backend.lower

    @property
    def version(self) -> str:
        """``<package>==<version>``: the codegen hook's, else the installed distribution's;
        part of the cost-database key."""
        if self.package is None:
            return "0"
        if self.lowering is not None:
            return f"{self.package}=={import_module(self.lowering).VERSION}"
        try:
            return f"{self.package}=={version(self.package)}"
        except PackageNotFoundError:
            return f"{self.package}==missing"

    def lower(self, func: FuncOp, policy: ThreadPolicy) -> CompiledKernel:
        """Compile one kernel function (the codegen hook; `compile` wraps it)."""
        if self.lowering is None:
            raise KernelCompileError(f"backend {self.name!r} has no codegen: it only "
                                     "declares candidates (use estimator=mock)")
        return import_module(self.lowering).compile(func, policy)

    def compile(self, kernel: ModuleOp | FuncOp, threads: ThreadPolicy | int | None = None
                ) -> CompiledKernel:
        """Lower and compile a kernel function (or its one-function module) with ``threads``
        (a `ThreadPolicy`, a count, or None for the process default). A kernel it cannot
        compile raises `KernelCompileError`, which the measured estimator turns into an
        Invalid cost."""
        func = kernel_function(kernel)
        try:
            return self.lower(func, ThreadPolicy.resolve(threads))
        except KernelCompileError:
            raise
        except CollageError as e:  # e.g. an element type numpy and the backends lack
            raise KernelCompileError(f"{self.name}: {e}") from None

    def supports(self, op: Operation) -> bool:
        """Whether the backend runs `op`: a declared op whose predicate holds, or a
        top-level composite (a primitive function) whose every op it runs."""
        if isinstance(op, CompositeOp):
            return all(self.supports(inner) for inner in op.body.block.ops
                       if inner.name not in HOST_OPS and not isinstance(inner, ConstantOp)
                       and not isinstance(inner, YieldOp))
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
