"""The graph builder of the example generators (`make_models.py`, `modern_zoo.py`): nodes and
seeded initializers with generated names, and the transformer layers they share.

    b = Builder(seed=3)
    h = b.layer_norm(b.op("Add", b.attention(x, 256, 4, mask), x), 256)
    model = b.model("encoder", inputs, outputs, opset=17)
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import helper, numpy_helper


class Builder:
    """Collects nodes and initializers with generated, unique names."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.count = 0

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}_{self.count}"

    def const(self, array: np.ndarray, prefix: str = "w") -> str:
        name = self.fresh(prefix)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def i64(self, *values: int) -> str:
        """An int64 vector constant (shapes, axes, indices)."""
        return self.const(np.array(values, dtype=np.int64), "shape")

    def f32(self, value: float) -> str:
        """A float32 scalar constant."""
        return self.const(np.array(value, dtype=np.float32), "scalar")

    def weight(self, *shape: int, scale: float | None = None) -> str:
        """Normal weights, by default scaled by 1/sqrt(fan-in) (rows of an [in, out] matrix,
        else the trailing dimensions)."""
        if scale is None:
            scale = 1.0 / math.sqrt(shape[0] if len(shape) == 2 else math.prod(shape[1:]))
        return self.const((self.rng.standard_normal(shape) * scale).astype(np.float32))

    def op(self, op_type: str, *inputs: str, **attrs) -> str:
        name = self.fresh(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [name], name=name, **attrs))
        return name

    def ops(self, op_type: str, *inputs: str, outputs: int, **attrs) -> list[str]:
        """A node with several outputs (Split, LSTM); their names."""
        name = self.fresh(op_type.lower())
        names = [f"{name}_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names, name=name, **attrs))
        return names

    def rename(self, value: str, name: str) -> str:
        """Gives the node output `value` the name `name` (a graph output's public name)."""
        for node in self.nodes:
            for io in (node.input, node.output):
                io[:] = [name if v == value else v for v in io]
        return name

    def dense(self, x: str, n_in: int, n_out: int) -> str:
        """x @ W + b over the last dimension."""
        return self.op("Add", self.op("MatMul", x, self.weight(n_in, n_out)),
                       self.weight(n_out, scale=0.02))

    def layer_norm(self, x: str, n: int, epsilon: float = 1e-5) -> str:
        gamma = self.const(np.ones(n, np.float32) + self.rng.standard_normal(n)
                           .astype(np.float32) * 0.01)
        beta = self.weight(n, scale=0.01)
        return self.op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=epsilon)

    def gelu(self, x: str) -> str:
        """x/2 (1 + erf(x/sqrt 2))."""
        erf = self.op("Erf", self.op("Div", x, self.f32(math.sqrt(2.0))))
        return self.op("Mul", self.op("Mul", x, self.f32(0.5)), self.op("Add", erf, self.f32(1.0)))

    def split_heads(self, x: str, heads: int, head: int, perm: list[int]) -> str:
        """[B, S, heads*head] -> [B, S, heads, head], transposed by `perm`."""
        return self.op("Transpose", self.op("Reshape", x, self.i64(0, 0, heads, head)), perm=perm)

    def merge_heads(self, x: str, hidden: int) -> str:
        """[B, heads, S, head] -> [B, S, hidden]."""
        return self.op("Reshape", self.op("Transpose", x, perm=[0, 2, 1, 3]),
                       self.i64(0, 0, hidden))

    def attention(self, h: str, hidden: int, heads: int, mask: str | None) -> str:
        """Multi-head self-attention of h [B, S, hidden] with its output projection; `mask`
        (broadcast to [B, heads, S, S]) is added to the scores."""
        head = hidden // heads
        q = self.split_heads(self.dense(h, hidden, hidden), heads, head, [0, 2, 1, 3])
        k = self.split_heads(self.dense(h, hidden, hidden), heads, head, [0, 2, 3, 1])
        v = self.split_heads(self.dense(h, hidden, hidden), heads, head, [0, 2, 1, 3])
        scores = self.op("Div", self.op("MatMul", q, k), self.f32(math.sqrt(head)))
        if mask is not None:
            scores = self.op("Add", scores, mask)
        ctx = self.op("MatMul", self.op("Softmax", scores, axis=-1), v)
        return self.dense(self.merge_heads(ctx, hidden), hidden, hidden)

    def model(self, name: str, inputs, outputs, opset: int) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.initializers)
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="collage-xdsl"
        )
        model.ir_version = 8
        onnx.checker.check_model(model, full_check=True)
        return model
