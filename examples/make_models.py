"""Deterministic example ONNX models (onnx.helper + a seeded numpy RNG).

    python examples/make_models.py --out models/ [--only mnist_cnn]

- mnist_cnn: the Collage design doc's MNIST CNN (SAME_UPPER conv + bias add + relu +
  max-pool, twice; reshape; matmul + add), input 1x1x28x28.
- mlp: 784-512-256-10 Gemm + Relu layers, input 1x784.
- transformer_encoder: a 2-layer BERT-style encoder (hidden 256, 4 heads, sequence 128)
  over int64 token ids [1,128] and an int64 attention mask [1,128]; Gelu written with Erf,
  LayerNormalization (opset 17).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class _Builder:
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

    def model(self, name: str, inputs, outputs, opset: int) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.initializers)
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="collage-xdsl"
        )
        model.ir_version = 8
        onnx.checker.check_model(model, full_check=True)
        return model


def _mnist_cnn() -> onnx.ModelProto:
    b = _Builder(seed=1)
    h = x = "input"
    for cin, cout, pool in ((1, 8, 2), (8, 16, 3)):
        h = b.op("Conv", h, b.weight(cout, cin, 5, 5), kernel_shape=[5, 5],
                 strides=[1, 1], auto_pad="SAME_UPPER")
        h = b.op("Add", h, b.weight(cout, 1, 1, scale=0.1))
        h = b.op("Relu", h)
        h = b.op("MaxPool", h, kernel_shape=[pool, pool], strides=[pool, pool])
    h = b.op("Reshape", h, b.const(np.array([1, 256], dtype=np.int64), "shape"))
    h = b.op("MatMul", h, b.weight(256, 10))
    out = b.op("Add", h, b.weight(1, 10, scale=0.1))
    return b.model(
        "mnist_cnn",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 1, 28, 28])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 10])],
        opset=13,
    )


def _mlp() -> onnx.ModelProto:
    b = _Builder(seed=2)
    h = "input"
    sizes = (784, 512, 256, 10)
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        h = b.op("Gemm", h, b.weight(n_out, n_in, scale=1 / math.sqrt(n_in)),
                 b.weight(n_out, scale=0.1), transB=1)
        if i < len(sizes) - 2:
            h = b.op("Relu", h)
    return b.model(
        "mlp",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 784])],
        [helper.make_tensor_value_info(h, TensorProto.FLOAT, [1, 10])],
        opset=13,
    )


def _transformer_encoder(layers: int = 2, hidden: int = 256, heads: int = 4,
                         seq: int = 128, vocab: int = 1000) -> onnx.ModelProto:
    b = _Builder(seed=3)
    head = hidden // heads

    def i64(*values: int) -> str:
        return b.const(np.array(values, dtype=np.int64), "shape")

    def f32(value: float) -> str:
        return b.const(np.array(value, dtype=np.float32), "scalar")

    def dense(x: str, n_in: int, n_out: int) -> str:
        return b.op("Add", b.op("MatMul", x, b.weight(n_in, n_out)), b.weight(n_out, scale=0.02))

    def layer_norm(x: str) -> str:
        gamma = b.const(np.ones(hidden, np.float32) + b.rng.standard_normal(hidden)
                        .astype(np.float32) * 0.01)
        beta = b.weight(hidden, scale=0.01)
        return b.op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=1e-5)

    def heads_of(x: str, perm: list[int]) -> str:
        return b.op("Transpose", b.op("Reshape", x, i64(0, 0, heads, head)), perm=perm)

    emb = b.op("Gather", b.weight(vocab, hidden, scale=0.02), "input_ids", axis=0)
    h = layer_norm(b.op("Add", emb, b.weight(seq, hidden, scale=0.02)))
    mask = b.op("Cast", b.op("Unsqueeze", "attention_mask", i64(1, 2)), to=TensorProto.FLOAT)
    mask = b.op("Mul", b.op("Sub", f32(1.0), mask), f32(-10000.0))
    for _ in range(layers):
        q = heads_of(dense(h, hidden, hidden), [0, 2, 1, 3])
        k = heads_of(dense(h, hidden, hidden), [0, 2, 3, 1])
        v = heads_of(dense(h, hidden, hidden), [0, 2, 1, 3])
        scores = b.op("Add", b.op("Div", b.op("MatMul", q, k), f32(math.sqrt(head))), mask)
        ctx = b.op("MatMul", b.op("Softmax", scores, axis=-1), v)
        ctx = b.op("Reshape", b.op("Transpose", ctx, perm=[0, 2, 1, 3]), i64(0, 0, hidden))
        h = layer_norm(b.op("Add", dense(ctx, hidden, hidden), h))
        ff = dense(h, hidden, 4 * hidden)
        erf = b.op("Erf", b.op("Div", ff, f32(math.sqrt(2.0))))
        ff = b.op("Mul", b.op("Mul", ff, f32(0.5)), b.op("Add", erf, f32(1.0)))
        h = layer_norm(b.op("Add", dense(ff, 4 * hidden, hidden), h))
    return b.model(
        "transformer_encoder",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, seq]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, seq])],
        [helper.make_tensor_value_info(h, TensorProto.FLOAT, [1, seq, hidden])],
        opset=17,
    )


MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "mnist_cnn": _mnist_cnn,
    "mlp": _mlp,
    "transformer_encoder": _transformer_encoder,
}


def make_model(name: str) -> onnx.ModelProto:
    """The example model `name` (one of `MODELS`), built deterministically."""
    if name not in MODELS:
        raise KeyError(f"unknown example model '{name}' (known: {', '.join(MODELS)})")
    return MODELS[name]()


def ensure_model(name: str, directory: str | Path) -> Path:
    """The path of `name`.onnx in `directory`, writing it first if it is missing."""
    path = Path(directory) / f"{name}.onnx"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".onnx.tmp")
        onnx.save(make_model(name), tmp)
        tmp.replace(path)
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="directory to write the .onnx files to")
    parser.add_argument("--only", choices=sorted(MODELS), help="write just this model")
    args = parser.parse_args(argv)
    for name in [args.only] if args.only else MODELS:
        path = Path(args.out) / f"{name}.onnx"
        path.parent.mkdir(parents=True, exist_ok=True)
        onnx.save(make_model(name), path)
        print(path)


if __name__ == "__main__":
    main()
