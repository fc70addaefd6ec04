"""Batch-norm folding: an inference `collage.batch_norm` after a convolution or a matmul
with a constant weight (and, optionally, a constant bias add) becomes new constant
weights and a bias add.

    %c = collage.conv2d %x, %w                        %c = collage.conv2d %x, %w2
    %b = collage.add %c, %bias       (optional) ==>   %n = collage.add %c, %bias2
    %n = collage.batch_norm %b, %s, %t, %m, %v

with inv = s / sqrt(v + epsilon) per channel, w2 = w * inv per output channel and
bias2 = (bias - m) * inv + t (bias = 0 without the add), computed in float64 and stored in
the weight's type. Only when every batch-norm parameter and the weight are constants, the
bias is a scalar or per channel, and the convolution (and the add) have no other user. A
matmul folds when its result and weight are 2-D (axis 1, the batch norm's channels, is
then the weight's columns): ONNX Gemm, imported as matmul + add.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from collage_xdsl.dialects.collage import (
    AddOp,
    BatchNormOp,
    Conv2dOp,
    MatmulOp,
    get_float,
)
from collage_xdsl.ir.tensors import constant_array, constant_op, shape_of
from collage_xdsl.rewrite.constants import (
    channel_axis,
    constant_of,
    erase_unused_constants,
    replace_absorbing,
    split_constant,
    weight_scale_shape,
    with_operand,
)


@dataclass(frozen=True)
class Foldable:
    """What a batch norm folds into: the convolution or matmul, its bias add (if any) and
    the bias per channel (zeros without an add)."""

    core: Operation
    add: AddOp | None
    bias: np.ndarray


def foldable(bn: BatchNormOp) -> Foldable | None:
    """What `bn` folds into, or None when it cannot fold (see the module docstring)."""
    params = (bn.scale, bn.bias, bn.mean, bn.var)
    if any(constant_of(v) is None for v in params) or not bn.input.has_one_use():
        return None
    value, add, bias_value = bn.input, None, None
    if isinstance(value.owner, AddOp):
        add = value.owner
        if (split := split_constant(add)) is None:
            return None
        value, bias_value = split
    core = value.owner
    if not isinstance(core, Conv2dOp | MatmulOp) or not value.has_one_use():
        return None
    if core.output.type != bn.input.type:  # the add broadcasts nothing
        return None
    if (found := channel_axis(core)) is None or found[:2] != (len(shape_of(bn.input.type)), 1):
        return None
    bias = _channel_bias(core, bias_value, found[2])
    return None if bias is None else Foldable(core, add, bias)


def _channel_bias(core: Operation, bias: SSAValue | None, channels: int) -> np.ndarray | None:
    """The constant `bias` as one value per channel (zeros for None); None when it is not a
    scalar or per-channel constant of `core`'s output."""
    if bias is None:
        return np.zeros(channels)
    if weight_scale_shape(core, bias) is None:
        return None
    array = constant_array(constant_of(bias)).astype(np.float64).reshape(-1)
    return np.broadcast_to(array, (channels,))


def folded_arrays(bn: BatchNormOp, fold: Foldable) -> tuple[np.ndarray, np.ndarray]:
    """The new weight and the new bias (shaped to broadcast over the output) of `fold`."""
    scale, shift, mean, var = (constant_array(constant_of(v)).astype(np.float64)
                               for v in (bn.scale, bn.bias, bn.mean, bn.var))
    inv = scale / np.sqrt(var + get_float(bn.epsilon, 1e-5))
    weight_value = fold.core.operands[1]
    weight = constant_array(constant_of(weight_value))
    bias = (fold.bias - mean) * inv + shift
    if isinstance(fold.core, Conv2dOp):
        inv, bias = inv.reshape(-1, 1, 1, 1), bias.reshape(-1, 1, 1)
    return (weight * inv).astype(weight.dtype), bias.astype(weight.dtype)


class FoldBatchNorm(RewritePattern):
    """A foldable batch norm becomes the convolution or matmul with the folded weight,
    plus the folded bias add."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, BatchNormOp) or (fold := foldable(op)) is None:
            return
        weight, bias = folded_arrays(op, fold)
        new_weight, new_bias = constant_op(weight), constant_op(bias)
        new_core = with_operand(fold.core, 1, new_weight.output)
        add = AddOp(new_core.results[0], new_bias.output)
        absorbed = [fold.core] if fold.add is None else [fold.add, fold.core]
        replace_absorbing(rewriter, op, [new_weight, new_bias, new_core], add, *absorbed)


def fold_batch_norms(module: ModuleOp) -> None:
    """Fold every foldable batch norm of `module`, then erase the constants nothing reads."""
    PatternRewriteWalker(FoldBatchNorm()).rewrite_module(module)
    erase_unused_constants(module)
