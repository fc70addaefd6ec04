"""The converters of LSTM and GRU (registered in `collage_xdsl.frontend.converters.CONVERTERS`):
each unrolled over its static sequence length, as TVM's ONNX frontend does, with the
weights pre-transposed and the biases pre-summed into constants.

    LSTM(X [T,B,I], W, R, B) forward, gates i o f c, T = 2:
        %x  = collage.reshape %X                     -> [T*B, I]
        %xw = collage.matmul %x, %Wt ; collage.add %xw, %b     (Wt = W^T, b = Wb + Rb)
        %x0, %x1 = collage.split %xw {axis = 0}      -> [B, 4H] per step
        per step: %gates = collage.add %xt, (collage.matmul %h, %Rt)
                  %i, %o, %f, %g = collage.split %gates {axis = 1}
                  c' = sigmoid(f) * c + sigmoid(i) * tanh(g) ; h' = sigmoid(o) * tanh(c')
        Y = the h' of every step (time order) concatenated, Y_h = the last h', Y_c = the last c'

GRU is the same with gates z r h (`_gru_step`). A missing or zero initial state drops the
first step's terms it would multiply. An unsupported variant is one `FrontendError` naming
the node and the attribute or input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue

from collage_xdsl.dialects import collage as C
from collage_xdsl.frontend.context import NodeContext
from collage_xdsl.frontend.converters import _constant, _reshape, converter

_GATES = {"LSTM": 4, "GRU": 3}
_ACTIVATIONS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"]}
"""The default activations, the only ones supported (per direction)."""
_DIRECTIONS = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}
"""Each direction's `reversed` flag."""
_UNSUPPORTED_INPUTS = {4: "sequence_lens", 7: "P"}

State = SSAValue | None
"""A hidden or cell state; None is the all-zero initial state."""


@dataclass
class Recurrence:
    """An LSTM or GRU node's sizes and, per direction, its weights W [G*H, I], R [G*H, H] and
    biases Wb, Rb [G*H] (G gates, H hidden)."""

    ctx: NodeContext
    steps: int
    batch: int
    hidden: int
    reverse: list[bool]
    w: np.ndarray
    r: np.ndarray
    wb: np.ndarray
    rb: np.ndarray

    def emit(self, build, *args) -> SSAValue:
        return self.ctx.emit(build, *args)

    def const(self, array: np.ndarray) -> SSAValue:
        return _constant(self.ctx, np.ascontiguousarray(array))

    def add(self, a: SSAValue, b: SSAValue | None) -> SSAValue:
        return a if b is None else self.emit(C.AddOp, a, b)

    def split(self, value: SSAValue, axis: int, sizes: Sequence[int]) -> list[SSAValue]:
        return list(self.ctx.emit_op(C.SplitOp, value, axis, list(sizes)).results)

    def inputs_by_step(self, x: SSAValue, d: int, bias: np.ndarray) -> list[SSAValue]:
        """x W^T + bias of direction `d` (x: X as [T*B, I]), one [B, G*H] value per step."""
        xw = self.emit(C.MatmulOp, x, self.const(self.w[d].T))
        if bias.any():
            xw = self.emit(C.AddOp, xw, self.const(bias))
        return self.split(xw, 0, [self.batch] * self.steps) if self.steps > 1 else [xw]

    def initial(self, i: int) -> list[State]:
        """Input `i` (initial_h or initial_c, [D, B, H]) per direction; None where absent
        or zero."""
        count = len(self.reverse)
        if not self.ctx.has(i):
            return [None] * count
        if self.ctx.is_const(i):
            value = self.ctx.const(i, "")
            return [self.const(v) if v.any() else None for v in value]
        value = self.ctx.value(i)
        parts = self.split(value, 0, [1] * count) if count > 1 else [value]
        return [_reshape(self.ctx, p, [self.batch, self.hidden]) for p in parts]

    def order(self, d: int, xs: list[SSAValue]) -> list[SSAValue]:
        return xs[::-1] if self.reverse[d] else xs


def _recurrence(ctx: NodeContext) -> Recurrence:
    """The node's sizes and weights, or an error naming what is not supported."""
    op = ctx.node.op_type
    for i, name in _UNSUPPORTED_INPUTS.items():
        if ctx.has(i):
            raise ctx.error(f"input '{name}' is not supported")
    if ctx.attr("layout", 0) != 0:
        raise ctx.error(f"layout {ctx.attr('layout')} is not supported, only 0 ([T, B, I])")
    if "clip" in ctx.attrs:
        raise ctx.error("clip is not supported")
    if ctx.attr("input_forget", 0):
        raise ctx.error("input_forget 1 is not supported, only 0")
    direction = ctx.attr("direction", "forward")
    if direction not in _DIRECTIONS:
        raise ctx.error(f"direction '{direction}' is not one of {', '.join(_DIRECTIONS)}")
    reverse = _DIRECTIONS[direction]
    activations = [a.decode() for a in ctx.attrs.get("activations", [])]
    if activations and activations != _ACTIVATIONS[op] * len(reverse):
        raise ctx.error(f"activations {activations} are not supported, only the defaults "
                        f"{_ACTIVATIONS[op]}")
    w, r = ctx.const(1, "W"), ctx.const(2, "R")
    steps, batch, size = ctx.shape(0)
    gates, hidden = _GATES[op], ctx.attr("hidden_size", r.shape[-1] if r.ndim else 0)
    b = ctx.const(3, "B") if ctx.has(3) else np.zeros((len(reverse), 2 * gates * hidden), w.dtype)
    expected = {"W": (len(reverse), gates * hidden, size),
                "R": (len(reverse), gates * hidden, hidden),
                "B": (len(reverse), 2 * gates * hidden)}
    for name, value in zip(expected, (w, r, b)):
        if value.shape != expected[name]:
            raise ctx.error(f"input '{name}' has shape {list(value.shape)}, expected "
                            f"{list(expected[name])} ({direction}, hidden_size {hidden})")
    split = gates * hidden
    return Recurrence(ctx, steps, batch, hidden, reverse, w, r, b[:, :split], b[:, split:])


def _lstm_step(rnn: Recurrence, rt: SSAValue, x: SSAValue, h: State,
               c: State) -> tuple[SSAValue, SSAValue]:
    """One LSTM step: the new hidden and cell state."""
    gates = rnn.add(x, None if h is None else rnn.emit(C.MatmulOp, h, rt))
    i, o, f, g = rnn.split(gates, 1, [rnn.hidden] * 4)
    new_c = rnn.emit(C.MulOp, rnn.emit(C.SigmoidOp, i), rnn.emit(C.TanhOp, g))
    if c is not None:
        new_c = rnn.emit(C.AddOp, rnn.emit(C.MulOp, rnn.emit(C.SigmoidOp, f), c), new_c)
    return rnn.emit(C.MulOp, rnn.emit(C.SigmoidOp, o), rnn.emit(C.TanhOp, new_c)), new_c


def _gru_step(rnn: Recurrence, weights: tuple[SSAValue, SSAValue | None], x: SSAValue,
              h: State, reset_after: bool) -> SSAValue:
    """One GRU step: the new hidden state (1 - z) * h~ + z * h, as h~ + z * (h - h~).

    `x` holds X W^T + Wb + Rb (Rb's h part only without `reset_after`); `weights` are
    R^T and Rb's h part (None if zero) with `reset_after`, else R^T's z r and h columns."""
    size = rnn.hidden
    xzr, xh = rnn.split(x, 1, [2 * size, size])
    if not reset_after:
        hzr = None if h is None else rnn.emit(C.MatmulOp, h, weights[0])
    elif h is None:
        hzr, hh = None, weights[1]
    else:
        hzr, hh = rnn.split(rnn.emit(C.MatmulOp, h, weights[0]), 1, [2 * size, size])
        hh = rnn.add(hh, weights[1])
    z, reset = rnn.split(rnn.emit(C.SigmoidOp, rnn.add(xzr, hzr)), 1, [size, size])
    if not reset_after:
        hh = None if h is None else rnn.emit(C.MatmulOp, rnn.emit(C.MulOp, reset, h), weights[1])
    elif hh is not None:
        hh = rnn.emit(C.MulOp, reset, hh)
    candidate = rnn.emit(C.TanhOp, rnn.add(xh, hh))
    if h is None:
        return rnn.emit(C.SubOp, candidate, rnn.emit(C.MulOp, z, candidate))
    return rnn.emit(C.AddOp, candidate, rnn.emit(C.MulOp, z, rnn.emit(C.SubOp, h, candidate)))


def _join(rnn: Recurrence, values: list[SSAValue], axis: int) -> SSAValue:
    return values[0] if len(values) == 1 else rnn.emit(C.ConcatOp, values, axis)


def _outputs(rnn: Recurrence, ys: list[list[SSAValue]],
             finals: list[list[SSAValue]]) -> list[SSAValue | None]:
    """Y [T, D, B, H] from each direction's hidden states in time order, then Y_h (and Y_c)
    [D, B, H] from the final states; None for an output the graph does not use."""
    ctx, count = rnn.ctx, len(rnn.reverse)
    shape = [rnn.batch, rnn.hidden]
    y = None
    if ctx.output_used(0):
        y = _join(rnn, [_reshape(ctx, _join(rnn, hs, 0), [rnn.steps, 1, *shape])
                        for hs in ys], 1)
    results: list[SSAValue | None] = [y]
    for i, states in enumerate(finals, start=1):
        used = ctx.output_used(i)
        results.append(_reshape(ctx, _join(rnn, states, 0), [count, *shape]) if used else None)
    return results


def _unroll(rnn: Recurrence, biases: list[np.ndarray],
            step: Callable[[int, SSAValue, list[State]], list[SSAValue]],
            initial: list[list[State]]) -> list[SSAValue | None]:
    """Every direction's steps: `step(d, x_t, states) -> new states` (hidden first)."""
    ys, finals = [], [[] for _ in initial]
    x = _reshape(rnn.ctx, rnn.ctx.value(0), [rnn.steps * rnn.batch, rnn.w.shape[2]])
    for d in range(len(rnn.reverse)):
        states = [init[d] for init in initial]
        hs = []
        for xt in rnn.order(d, rnn.inputs_by_step(x, d, biases[d])):
            states = step(d, xt, states)
            hs.append(states[0])
        ys.append(rnn.order(d, hs))
        for final, state in zip(finals, states):
            final.append(state)
    return _outputs(rnn, ys, finals)


@converter("LSTM")
def convert_lstm(ctx: NodeContext):
    rnn = _recurrence(ctx)
    rts = [rnn.const(r.T) for r in rnn.r]
    return _unroll(rnn, list(rnn.wb + rnn.rb),
                   lambda d, x, s: list(_lstm_step(rnn, rts[d], x, *s)),
                   [rnn.initial(5), rnn.initial(6)])


@converter("GRU")
def convert_gru(ctx: NodeContext):
    rnn = _recurrence(ctx)
    reset_after = bool(ctx.attr("linear_before_reset", 0))
    size = rnn.hidden
    rb = rnn.rb.copy()
    if reset_after:  # Rb's h part is added to R h, before the reset gate scales it
        rb[:, 2 * size:] = 0
        weights = [(rnn.const(r.T), rnn.const(b[2 * size:]) if b[2 * size:].any() else None)
                   for r, b in zip(rnn.r, rnn.rb)]
    else:
        weights = [(rnn.const(r[:2 * size].T), rnn.const(r[2 * size:].T)) for r in rnn.r]
    return _unroll(rnn, list(rnn.wb + rb),
                   lambda d, x, s: [_gru_step(rnn, weights[d], x, s[0], reset_after)],
                   [rnn.initial(5)])
