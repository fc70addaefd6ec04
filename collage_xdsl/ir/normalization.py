"""The reference semantics of the normalization ops (ONNX inference semantics, in the
input's dtype), registered in `collage_xdsl.ir.interpreter`.

    group_norm {num_groups = G}: x [N, C, ...] -> [N, G, C/G * ...], normalized over the
    last axis, back to [N, C, ...], then * scale[c] + bias[c]  (instance_norm: G = C)
"""

from __future__ import annotations

import numpy as np

from collage_xdsl.dialects import collage as C
from collage_xdsl.dialects.collage import get_float, get_int


def _eps(x: np.ndarray, op) -> np.generic:
    return x.dtype.type(get_float(op.epsilon, 1e-5))


def _normalized(x: np.ndarray, axes: tuple[int, ...], eps: np.generic) -> np.ndarray:
    centred = x - x.mean(axis=axes, keepdims=True)
    var = (centred * centred).mean(axis=axes, keepdims=True)
    return centred / np.sqrt(var + eps)


def batch_norm(op: C.BatchNormOp, x, scale, bias, mean, var) -> np.ndarray:
    shape = (-1,) + (1,) * (x.ndim - 2)
    inv = scale / np.sqrt(var + _eps(var, op))
    return x * inv.reshape(shape) + (bias - mean * inv).reshape(shape)


def layer_norm(op: C.LayerNormOp, x, scale, bias) -> np.ndarray:
    axis = get_int(op.axis, -1) % x.ndim
    return _normalized(x, tuple(range(axis, x.ndim)), _eps(x, op)) * scale + bias


def channel_norm(op: C.ChannelNormOp, x, scale, bias) -> np.ndarray:
    """group_norm and instance_norm: statistics per sample and group of channels."""
    grouped = x.reshape(x.shape[0], op.groups(), -1)
    y = _normalized(grouped, (2,), _eps(x, op)).reshape(x.shape)
    shape = (-1,) + (1,) * (x.ndim - 2)
    return y * scale.reshape(shape) + bias.reshape(shape)
