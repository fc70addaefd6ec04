"""Reference semantics of the sliding-window ops: convolution (im2col + matmul), transposed
convolution (a scatter per kernel tap) and pooling, in numpy with ONNX semantics, for the
interpreter (`collage_xdsl.ir.interpreter`).

    y = conv2d(op, x, w)          # op: the collage.conv2d, for its attributes
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from collage_xdsl.dialects import collage as C
from collage_xdsl.dialects.collage import get_bool, get_int, get_ints
from collage_xdsl.ir.tensors import shape_of


def _windows(x: np.ndarray, kernel, strides, dilations, out_hw) -> np.ndarray:
    """Sliding windows of a padded NCHW tensor: (N, C, OH, OW, KH, KW), a strided view."""
    span = [d * (k - 1) + 1 for k, d in zip(kernel, dilations)]
    view = sliding_window_view(x, span, axis=(2, 3))
    view = view[:, :, :: strides[0], :: strides[1], :: dilations[0], :: dilations[1]]
    return view[:, :, : out_hw[0], : out_hw[1]]


def _pad_hw(x: np.ndarray, pads, kernel, strides, dilations, out_hw, value) -> np.ndarray:
    """Pad H and W by ``pads`` (top, left, bottom, right) and by what ceil mode's last
    window needs."""
    extra = [
        max(0, (o - 1) * s + d * (k - 1) + 1 - (n + p0 + p1))
        for o, s, d, k, n, p0, p1 in zip(out_hw, strides, dilations, kernel, x.shape[2:],
                                         pads[:2], pads[2:])
    ]
    widths = ((0, 0), (0, 0), (pads[0], pads[2] + extra[0]), (pads[1], pads[3] + extra[1]))
    if not any(pads) and not any(extra):
        return x
    return np.pad(x, widths, constant_values=value)


def conv2d(op: C.Conv2dOp, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """im2col over sliding windows, then one batched matmul per group."""
    strides, pads, dilations = get_ints(op.strides), get_ints(op.pads), get_ints(op.dilations)
    group = get_int(op.group, 1)
    n, c = x.shape[:2]
    o, ci, kh, kw = w.shape
    out_hw = shape_of(op.output.type)[2:]
    padded = _pad_hw(x, pads, (kh, kw), strides, dilations, out_hw, 0)
    win = _windows(padded, (kh, kw), strides, dilations, out_hw)
    # (N, G, Ci, OH, OW, KH, KW) -> columns (N, G, Ci*KH*KW, OH*OW)
    win = win.reshape(n, group, ci, *out_hw, kh, kw).transpose(0, 1, 2, 5, 6, 3, 4)
    cols = win.reshape(n, group, ci * kh * kw, out_hw[0] * out_hw[1])
    weights = w.reshape(group, o // group, ci * kh * kw)
    return np.matmul(weights, cols).reshape(n, o, *out_hw)


def conv_transpose2d(op: C.ConvTranspose2dOp, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Scatter: tap (a, b) adds `w[:, :, a, b]^T @ x` (per group) at rows `a * dh + i * sh`,
    columns `b * dw + j * sw` of the uncropped output, which `pads` then crops."""
    strides, dils, pads = get_ints(op.strides), get_ints(op.dilations), get_ints(op.pads)
    (n, c, *hw), g, out_hw = x.shape, get_int(op.group, 1), shape_of(op.output.type)[2:]
    taps = w.reshape(g, c // g, -1, *w.shape[2:]).swapaxes(1, 2)  # (G, O/G, C/G, KH, KW)
    full = np.zeros((n, g, taps.shape[1], *np.add(out_hw, np.add(pads[:2], pads[2:]))), x.dtype)
    cols = x.reshape(n, g, c // g, -1)
    for a, b in np.ndindex(*w.shape[2:]):
        at = [slice(k * dil, k * dil + (m - 1) * st + 1, st)
              for k, dil, m, st in zip((a, b), dils, hw, strides)]
        full[..., at[0], at[1]] += np.matmul(taps[..., a, b], cols).reshape(n, g, -1, *hw)
    return full[..., pads[0] : pads[0] + out_hw[0], pads[1] : pads[1] + out_hw[1]].reshape(
        n, -1, *out_hw)


def _pool_geometry(op: C.Pool2dOp):
    return get_ints(op.kernel), get_ints(op.strides), get_ints(op.pads), (
        shape_of(op.output.type)[2:])


def max_pool(op: C.MaxPool2dOp, x: np.ndarray) -> np.ndarray:
    kernel, strides, pads, out_hw = _pool_geometry(op)
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    padded = _pad_hw(x, pads, kernel, strides, (1, 1), out_hw, lowest)
    return _windows(padded, kernel, strides, (1, 1), out_hw).max(axis=(-2, -1))


def _window_counts(k: int, s: int, lo: int, hi: int, out: int, pad0: int) -> np.ndarray:
    """Per output position along one axis: how many window cells fall in [lo, hi)
    (coordinates of the unpadded input; the window of output i starts at i*s - pad0)."""
    starts = np.arange(out) * s - pad0
    return np.clip(np.minimum(starts + k, hi) - np.maximum(starts, lo), 0, None)


def avg_pool(op: C.AvgPool2dOp, x: np.ndarray) -> np.ndarray:
    """ONNX AveragePool: the divisor counts the explicit padding only with count_include_pad;
    cells past it (added by ceil mode) never count."""
    kernel, strides, pads, out_hw = _pool_geometry(op)
    padded = _pad_hw(x, pads, kernel, strides, (1, 1), out_hw, 0)
    sums = _windows(padded, kernel, strides, (1, 1), out_hw).sum(axis=(-2, -1), dtype=x.dtype)
    include = get_bool(op.count_include_pad, False)
    counts = [
        _window_counts(k, s, -p0 if include else 0, n + p1 if include else n, o, p0)
        for n, k, s, p0, p1, o in zip(x.shape[2:], kernel, strides, pads[:2], pads[2:], out_hw)
    ]
    return sums / np.outer(*counts).astype(x.dtype)


