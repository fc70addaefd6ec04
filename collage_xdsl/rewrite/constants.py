"""Constant folding: ops on constants become constants (evaluated by the reference
interpreter), and chains of constant Mul / Add fold into each other and into the weights
of the convolution or matmul they scale.

    %c = collage.conv2d %x, %w                        %c = collage.conv2d %x, %w2
    %m = collage.mul %c, %s      (%s: [4,1,1])  ==>   %b = collage.add %c, %b3
    %a = collage.add %m, %b1                          (%w2 = %w * %s per output channel,
    %b = collage.add %a, %b2                           %b3 = %b1 + %b2)

The rewrites, applied until none applies (an inner op must have no other user):

- `op(c1, c2, ...)` -> `constant`, for any graph op whose operands are all constants
  except `dequantize_linear` (a quantized weight keeps the QDQ form backends fuse);
- `add(add(x, c1), c2)` -> `add(x, c1 + c2)`, and likewise for `mul`;
- `mul(conv2d(x, W), c)` -> `conv2d(x, W * c)` for a scalar or per-output-channel `c`;
  `mul(matmul(x, W), c)` -> `matmul(x, W * c)` for a 2-D `W` and a scalar or per-column `c`;
- `mul(add(y, c1), c2)` -> `add(mul(y, c2), c1 * c2)` when `mul(y, c2)` folds further.

Each is exact up to float rounding, and only taken when the result keeps its type
(broadcast shapes are checked). New constant expressions are built as ops and folded by the
first rewrite, so the interpreter is the one implementation of every op's numbers.
Constants left without users are erased.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from collage_xdsl.dialects.collage import (
    AddOp,
    ConstantOp,
    Conv2dOp,
    DequantizeLinearOp,
    GraphOp,
    MatmulOp,
    MulOp,
    ReshapeOp,
)
from collage_xdsl.ir.interpreter import evaluate_op
from collage_xdsl.ir.tensors import constant_array, constant_op, shape_of


def constant_of(value: SSAValue) -> ConstantOp | None:
    """The `collage.constant` that defines `value`, or None."""
    return value.owner if isinstance(value.owner, ConstantOp) else None


def erase_unused_constants(module: ModuleOp) -> None:
    """Erase every `collage.constant` whose result nothing reads."""
    dead = [op for op in module.walk() if isinstance(op, ConstantOp) and not op.output.uses]
    for op in dead:
        Rewriter.erase_op(op)


def with_operand(op: Operation, index: int, value: SSAValue) -> Operation:
    """A new op like `op` (attributes, result types) reading `value` as operand `index`."""
    operands = list(op.operands)
    operands[index] = value
    new = type(op).create(operands=operands, result_types=[r.type for r in op.results],
                          attributes=dict(op.attributes), properties=dict(op.properties))
    for old, result in zip(op.results, new.results):
        result.name_hint = old.name_hint
    return new


def split_constant(op: Operation) -> tuple[SSAValue, SSAValue] | None:
    """(the other operand, the constant operand) of a binary op with exactly one constant
    operand; None otherwise."""
    lhs, rhs = op.operands
    if constant_of(rhs) is not None and constant_of(lhs) is None:
        return lhs, rhs
    if constant_of(lhs) is not None and constant_of(rhs) is None:
        return rhs, lhs
    return None


def replace_absorbing(rewriter: PatternRewriter, op: Operation, before: list[Operation],
                      new: Operation, *absorbed: Operation) -> None:
    """Insert `before` (constants and constant expressions, unnamed) before `op`, replace
    `op` by `new` (which takes `op`'s name, if it has one), then erase `absorbed`: the ops
    feeding `op` that the rewrite folded in, each one's user first."""
    rewriter.insert(before, InsertPoint.before(op))
    new.results[0].name_hint = op.results[0].name_hint or new.results[0].name_hint
    rewriter.replace(op, new)
    for dead in absorbed:
        rewriter.erase(dead)


class FoldConstantOps(RewritePattern):
    """A graph op whose operands are all constants becomes one constant per result (a
    `dequantize_linear` excepted)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if (not isinstance(op, GraphOp) or isinstance(op, ConstantOp | DequantizeLinearOp)
                or not op.operands
                or any(constant_of(v) is None for v in op.operands)
                or not all(isinstance(r.type, TensorType) for r in op.results)):
            return
        values = evaluate_op(op, [constant_array(constant_of(v)) for v in op.operands])
        constants = [constant_op(v) for v in values]
        for c, r in zip(constants, op.results):
            c.output.name_hint = r.name_hint
        rewriter.replace(op, constants, [c.output for c in constants])


class Reassociate(RewritePattern):
    """`add(add(x, c1), c2)` -> `add(x, add(c1, c2))`, and likewise for `mul`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, AddOp | MulOp) or (outer := split_constant(op)) is None:
            return
        inner_value, c2 = outer
        inner = inner_value.owner
        if type(inner) is not type(op) or not inner_value.has_one_use():
            return
        if (split := split_constant(inner)) is None:  # type: ignore[arg-type]
            return
        x, c1 = split
        combined = type(op)(c1, c2)
        new = type(op)(x, combined.output)
        if new.output.type == op.output.type:
            replace_absorbing(rewriter, op, [combined], new, inner)  # type: ignore


def channel_axis(core: Operation) -> tuple[int, int, int] | None:
    """(output rank, axis, count) of the channels a constant weight of `core` makes: the
    output channels of a convolution (axis 1), the columns of a matmul by a 2-D weight (the
    last axis); None for other ops and for weights that are no constant."""
    if isinstance(core, Conv2dOp) and constant_of(core.weight) is not None:
        return 4, 1, shape_of(core.weight.type)[0]
    if (isinstance(core, MatmulOp) and constant_of(core.rhs) is not None
            and len(shape_of(core.rhs.type)) == 2):
        rank = len(shape_of(core.output.type))
        return rank, rank - 1, shape_of(core.rhs.type)[1]
    return None


def weight_scale_shape(core: Operation, scale: SSAValue) -> tuple[int, ...] | None:
    """The shape to reshape the constant `scale` to so that `weight * scale` does what
    multiplying `core`'s result by `scale` does: `scale` must broadcast to the output as a
    scalar or one value per channel (`channel_axis`); None otherwise."""
    if (found := channel_axis(core)) is None:
        return None
    rank, axis, channels = found
    shape = shape_of(scale.type)
    if len(shape) > rank:
        return None
    padded = (1,) * (rank - len(shape)) + shape
    if any(d != 1 for i, d in enumerate(padded) if i != axis) or padded[axis] not in (1, channels):
        return None
    return (padded[axis], 1, 1, 1) if isinstance(core, Conv2dOp) else (padded[axis],)


class ScaleWeights(RewritePattern):
    """`mul(conv2d(x, W), c)` -> `conv2d(x, mul(W, reshape(c)))`, and likewise for a matmul
    (`weight_scale_shape` says when)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, MulOp) or (split := split_constant(op)) is None:
            return
        y, scale = split
        core = y.owner
        if not isinstance(core, Operation) or not y.has_one_use() or op.output.type != y.type:
            return
        if (shape := weight_scale_shape(core, scale)) is None:
            return
        weight = core.operands[1]
        reshaped = ReshapeOp(scale, shape)
        scaled = MulOp(weight, reshaped.output)
        if scaled.output.type != weight.type:
            return
        replace_absorbing(rewriter, op, [reshaped, scaled],
                          with_operand(core, 1, scaled.output), core)


class DistributeScale(RewritePattern):
    """`mul(add(y, c1), c2)` -> `add(mul(y, c2), mul(c1, c2))` when `mul(y, c2)` then folds
    into `y`'s producer (a scaled constant-weight convolution or matmul, or a `mul` by a
    constant)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, MulOp) or (outer := split_constant(op)) is None:
            return
        add_value, c2 = outer
        add = add_value.owner
        if not isinstance(add, AddOp) or not add_value.has_one_use():
            return
        if (split := split_constant(add)) is None:
            return
        y, c1 = split
        if not y.has_one_use() or not _absorbs_scale(y, c2):
            return
        scaled = MulOp(y, c2)
        bias = MulOp(c1, c2)
        new = AddOp(scaled.output, bias.output)
        if scaled.output.type == y.type and new.output.type == op.output.type:
            replace_absorbing(rewriter, op, [scaled, bias], new, add)


def _absorbs_scale(y: SSAValue, scale: SSAValue) -> bool:
    """Whether `mul(y, scale)` folds into `y`'s producer."""
    producer = y.owner
    if isinstance(producer, MulOp):
        return split_constant(producer) is not None
    return isinstance(producer, Operation) and weight_scale_shape(producer, scale) is not None


REWRITES = (FoldConstantOps(), Reassociate(), ScaleWeights(), DistributeScale())


def fold_constants(module: ModuleOp) -> None:
    """Apply the rewrites of this module everywhere in `module` until none applies, then
    erase the constants nothing reads any more."""
    walker = PatternRewriteWalker(GreedyRewritePatternApplier(list(REWRITES)))
    walker.rewrite_module(module)
    erase_unused_constants(module)
