"""Transformer and recurrent models of the modern zoo (`modern_zoo.py`), in the layout the
Hugging Face and torchvision ONNX exports have; seeded weights (BERT's 0.02 embeddings,
1/sqrt(fan-in) elsewhere), GELU written with Erf.

- vit_tiny: ViT-Ti/16 (DeiT-tiny): 16x16 patch Conv, class token, 12 pre-norm layers,
  hidden 192, 3 heads, MLP 768, a 1000-class head on the class token.
- bert_base: BERT-base: word, position and token-type embeddings, 12 post-norm layers,
  hidden 768, 12 heads, FFN 3072, sequence 128; last hidden state and tanh pooler.
- gpt2_decoder_step: GPT-2 small decoding one token after 127: fused QKV projection split in
  three, the 12 layers' past keys and values as inputs, their presents and the logits over
  50257 tokens (tied embedding) as outputs.
- whisper_tiny_encoder: two Conv1D + GELU (the second stride 2) over 80x3000 log-mel frames,
  sinusoidal positions, 4 pre-norm layers of hidden 384, 6 heads.
- lstm_seq: two stacked LSTMs (hidden 256) over 128 steps of 64 features, a per-step
  10-class linear head.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx_builder import Builder


def _io(name: str, shape: list[int], elem_type: int = TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem_type, shape)


def _pre_norm_layer(b: Builder, h: str, hidden: int, heads: int, ffn: int,
                    epsilon: float = 1e-5) -> str:
    """h + attention(LN(h)), then h + FFN(LN(h))."""
    h = b.op("Add", h, b.attention(b.layer_norm(h, hidden, epsilon), hidden, heads, None))
    ff = b.gelu(b.dense(b.layer_norm(h, hidden, epsilon), hidden, ffn))
    return b.op("Add", h, b.dense(ff, ffn, hidden))


def vit_tiny(name: str, batch: int = 1, layers: int = 12, hidden: int = 192,
             heads: int = 3) -> onnx.ModelProto:
    b = Builder(seed=31)
    patches = b.op("Conv", "image", b.weight(hidden, 3, 16, 16), b.weight(hidden, scale=0.02),
                   kernel_shape=[16, 16], strides=[16, 16])
    tokens = b.op("Transpose", b.op("Reshape", patches, b.i64(0, hidden, -1)), perm=[0, 2, 1])
    cls = b.op("Expand", b.weight(1, 1, hidden, scale=0.02), b.i64(batch, 1, hidden))
    h = b.op("Add", b.op("Concat", cls, tokens, axis=1), b.weight(1, 197, hidden, scale=0.02))
    for _ in range(layers):
        h = _pre_norm_layer(b, h, hidden, heads, 4 * hidden, 1e-6)
    h = b.layer_norm(h, hidden, 1e-6)
    first = b.op("Gather", h, b.const(np.array(0, np.int64), "index"), axis=1)
    logits = b.rename(b.dense(first, hidden, 1000), "logits")
    return b.model(name, [_io("image", [batch, 3, 224, 224])], [_io(logits, [batch, 1000])],
                   opset=17)


def bert_base(name: str, batch: int = 1, seq: int = 128, layers: int = 12, hidden: int = 768,
              heads: int = 12, vocab: int = 30522) -> onnx.ModelProto:
    b = Builder(seed=32)
    emb = b.op("Gather", b.weight(vocab, hidden, scale=0.02), "input_ids", axis=0)
    emb = b.op("Add", emb, b.weight(seq, hidden, scale=0.02))
    types = b.op("Gather", b.weight(2, hidden, scale=0.02), "token_type_ids", axis=0)
    h = b.layer_norm(b.op("Add", emb, types), hidden, 1e-12)
    mask = b.op("Cast", b.op("Unsqueeze", "attention_mask", b.i64(1, 2)), to=TensorProto.FLOAT)
    mask = b.op("Mul", b.op("Sub", b.f32(1.0), mask), b.f32(-10000.0))
    for _ in range(layers):
        h = b.layer_norm(b.op("Add", b.attention(h, hidden, heads, mask), h), hidden, 1e-12)
        ff = b.gelu(b.dense(h, hidden, 4 * hidden))
        h = b.layer_norm(b.op("Add", b.dense(ff, 4 * hidden, hidden), h), hidden, 1e-12)
    first = b.op("Gather", h, b.const(np.array(0, np.int64), "index"), axis=1)
    pooled = b.rename(b.op("Tanh", b.dense(first, hidden, hidden)), "pooler_output")
    h = b.rename(h, "last_hidden_state")
    ids = [_io(n, [batch, seq], TensorProto.INT64)
           for n in ("input_ids", "attention_mask", "token_type_ids")]
    return b.model(name, ids, [_io(h, [batch, seq, hidden]), _io(pooled, [batch, hidden])],
                   opset=17)


def _cached_attention(b: Builder, h: str, past_k: str, past_v: str, hidden: int,
                      heads: int) -> tuple[str, str, str]:
    """GPT-2 attention of one new token h [1, 1, hidden] over the past keys and values
    [1, heads, P, head]: (output, present key, present value)."""
    head = hidden // heads
    qkv = b.ops("Split", b.dense(h, hidden, 3 * hidden), b.i64(hidden, hidden, hidden),
                outputs=3, axis=2)
    q, k, v = (b.split_heads(x, heads, head, [0, 2, 1, 3]) for x in qkv)
    present_k = b.op("Concat", past_k, k, axis=2)
    present_v = b.op("Concat", past_v, v, axis=2)
    scores = b.op("MatMul", q, b.op("Transpose", present_k, perm=[0, 1, 3, 2]))
    scores = b.op("Div", scores, b.f32(math.sqrt(head)))
    ctx = b.op("MatMul", b.op("Softmax", scores, axis=-1), present_v)
    return b.dense(b.merge_heads(ctx, hidden), hidden, hidden), present_k, present_v


def gpt2_decoder_step(name: str, past: int = 127, layers: int = 12, hidden: int = 768,
                      heads: int = 12, vocab: int = 50257) -> onnx.ModelProto:
    b = Builder(seed=33)
    wte = b.weight(vocab, hidden, scale=0.02)
    position = b.const(np.array([[past]], np.int64), "position")
    h = b.op("Add", b.op("Gather", wte, "input_ids", axis=0),
             b.op("Gather", b.weight(1024, hidden, scale=0.01), position, axis=0))
    cache_in, cache_out = [], []
    kv_shape = [1, heads, past, hidden // heads]
    for i in range(layers):
        past_k, past_v = f"past_key_values.{i}.key", f"past_key_values.{i}.value"
        cache_in += [_io(past_k, kv_shape), _io(past_v, kv_shape)]
        attn, k, v = _cached_attention(b, b.layer_norm(h, hidden), past_k, past_v, hidden, heads)
        h = b.op("Add", h, attn)
        ff = b.gelu(b.dense(b.layer_norm(h, hidden), hidden, 4 * hidden))
        h = b.op("Add", h, b.dense(ff, 4 * hidden, hidden))
        present = [kv_shape[:2] + [past + 1] + kv_shape[3:]] * 2
        cache_out += [_io(b.rename(x, f"present.{i}.{kind}"), shape)
                      for x, kind, shape in zip((k, v), ("key", "value"), present)]
    h = b.layer_norm(h, hidden)
    logits = b.rename(b.op("MatMul", h, b.op("Transpose", wte, perm=[1, 0])), "logits")
    return b.model(name, [_io("input_ids", [1, 1], TensorProto.INT64), *cache_in],
                   [_io(logits, [1, 1, vocab]), *cache_out], opset=17)


def _sinusoids(length: int, channels: int) -> np.ndarray:
    """Whisper's positional embedding: sin and cos of positions over log-spaced periods."""
    increment = math.log(10000) / (channels // 2 - 1)
    inv = np.exp(-increment * np.arange(channels // 2))
    scaled = np.arange(length)[:, None] * inv[None, :]
    return np.concatenate([np.sin(scaled), np.cos(scaled)], axis=1).astype(np.float32)


def whisper_tiny_encoder(name: str, frames: int = 3000, mels: int = 80, layers: int = 4,
                         hidden: int = 384, heads: int = 6) -> onnx.ModelProto:
    b = Builder(seed=34)
    h = b.gelu(b.op("Conv", "input_features", b.weight(hidden, mels, 3),
                    b.weight(hidden, scale=0.02), kernel_shape=[3], pads=[1, 1]))
    h = b.gelu(b.op("Conv", h, b.weight(hidden, hidden, 3), b.weight(hidden, scale=0.02),
                    kernel_shape=[3], pads=[1, 1], strides=[2]))
    h = b.op("Transpose", h, perm=[0, 2, 1])
    h = b.op("Add", h, b.const(_sinusoids(frames // 2, hidden), "positions"))
    for _ in range(layers):
        h = _pre_norm_layer(b, h, hidden, heads, 4 * hidden)
    h = b.rename(b.layer_norm(h, hidden), "last_hidden_state")
    return b.model(name, [_io("input_features", [1, mels, frames])],
                   [_io(h, [1, frames // 2, hidden])], opset=17)


def lstm_seq(name: str, steps: int = 128, features: int = 64, hidden: int = 256,
             classes: int = 10) -> onnx.ModelProto:
    b = Builder(seed=35)
    h = b.op("Transpose", "sequence", perm=[1, 0, 2])
    for n_in in (features, hidden):
        w = b.weight(1, 4 * hidden, n_in, scale=1.0 / math.sqrt(n_in))
        r = b.weight(1, 4 * hidden, hidden, scale=1.0 / math.sqrt(hidden))
        bias = b.weight(1, 8 * hidden, scale=0.1)
        y = b.op("LSTM", h, w, r, bias, hidden_size=hidden)
        h = b.op("Squeeze", y, b.i64(1))
    h = b.op("Transpose", h, perm=[1, 0, 2])
    logits = b.rename(b.dense(h, hidden, classes), "logits")
    return b.model(name, [_io("sequence", [1, steps, features])],
                   [_io(logits, [1, steps, classes])], opset=17)
