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

import onnx
from onnx import TensorProto, helper
from onnx_builder import Builder


def _mnist_cnn() -> onnx.ModelProto:
    b = Builder(seed=1)
    h = x = "input"
    for cin, cout, pool in ((1, 8, 2), (8, 16, 3)):
        h = b.op("Conv", h, b.weight(cout, cin, 5, 5), kernel_shape=[5, 5],
                 strides=[1, 1], auto_pad="SAME_UPPER")
        h = b.op("Add", h, b.weight(cout, 1, 1, scale=0.1))
        h = b.op("Relu", h)
        h = b.op("MaxPool", h, kernel_shape=[pool, pool], strides=[pool, pool])
    h = b.op("Reshape", h, b.i64(1, 256))
    h = b.op("MatMul", h, b.weight(256, 10))
    out = b.op("Add", h, b.weight(1, 10, scale=0.1))
    return b.model(
        "mnist_cnn",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 1, 28, 28])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 10])],
        opset=13,
    )


def _mlp() -> onnx.ModelProto:
    b = Builder(seed=2)
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
    b = Builder(seed=3)
    emb = b.op("Gather", b.weight(vocab, hidden, scale=0.02), "input_ids", axis=0)
    h = b.layer_norm(b.op("Add", emb, b.weight(seq, hidden, scale=0.02)), hidden)
    mask = b.op("Cast", b.op("Unsqueeze", "attention_mask", b.i64(1, 2)), to=TensorProto.FLOAT)
    mask = b.op("Mul", b.op("Sub", b.f32(1.0), mask), b.f32(-10000.0))
    for _ in range(layers):
        h = b.layer_norm(b.op("Add", b.attention(h, hidden, heads, mask), h), hidden)
        ff = b.gelu(b.dense(h, hidden, 4 * hidden))
        h = b.layer_norm(b.op("Add", b.dense(ff, 4 * hidden, hidden), h), hidden)
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
