"""The modern model zoo: deterministic ONNX models of current architectures (onnx.helper and
seeded weights, nothing downloaded), each with ONNX Runtime's outputs as its reference.

    python examples/modern_zoo.py --out models/ [--only resnet18,lstm_seq]

writes `<name>.onnx` and `<name>.ref.npz` per model and prints its time, size and output
standard deviation. The `.ref.npz` holds the seeded inputs under their input names (it
serves as `collage run --inputs`) and ONNX Runtime's outputs (ORT_ENABLE_ALL, 2 threads)
as `output:<name>`.

- zoo_cnn: mobilenet_v2, mobilenet_v3_small, efficientnet_b0, resnet18 (1x3x224x224).
- zoo_dense: yolo_small (YOLOv5s, 640x640), unet (128x128).
- zoo_sequence: vit_tiny, bert_base (sequence 128), gpt2_decoder_step (KV cache of 127),
  whisper_tiny_encoder (80x3000 mel), lstm_seq.
- resnet18_int8, bert_base_int8: ONNX Runtime's static quantization of those, in QDQ
  format: int8 per-tensor activations calibrated (min-max) on seeded inputs, int8
  per-channel weights, around every Conv, MatMul and Gemm.
- resnet18_b8, mobilenet_v2_b8, bert_base_b8: batch 8, the batch-1 model's weights.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import zoo_cnn
import zoo_dense
import zoo_sequence
from onnxruntime.quantization import (
    CalibrationDataReader,
    QuantFormat,
    QuantType,
    quantize_static,
)

CALIBRATION_SAMPLES = 4
"""Seeded inputs the int8 models' activation ranges are calibrated on."""


def seeded_inputs(model: onnx.ModelProto, seed: int) -> dict[str, np.ndarray]:
    """Inputs by name: floats ~ N(0, 1); integers that index a Gather below its table's
    length, the others 0 or 1."""
    rng = np.random.default_rng(seed)
    tables = {i.name: i.dims[0] for i in model.graph.initializer if i.dims}
    high = {n.input[1]: tables[n.input[0]] for n in model.graph.node
            if n.op_type == "Gather" and n.input[0] in tables}
    feeds = {}
    for x in model.graph.input:
        shape = [d.dim_value for d in x.type.tensor_type.shape.dim]
        if x.type.tensor_type.elem_type == onnx.TensorProto.FLOAT:
            feeds[x.name] = rng.standard_normal(shape, dtype=np.float32)
        else:
            feeds[x.name] = rng.integers(0, high.get(x.name, 2), shape, dtype=np.int64)
    return feeds


def run_onnxruntime(model: onnx.ModelProto,
                    feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The model's outputs by name, by ONNX Runtime (CPU, ORT_ENABLE_ALL, 2 threads)."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = 2
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds)))


class _Calibration(CalibrationDataReader):
    def __init__(self, model: onnx.ModelProto):
        self.samples = iter([seeded_inputs(model, seed) for seed in
                             range(1, 1 + CALIBRATION_SAMPLES)])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.samples, None)


def quantized(build: Callable[[], onnx.ModelProto], name: str) -> onnx.ModelProto:
    """ONNX Runtime's static QDQ quantization of the model `build` makes (see the module
    docstring), named `name`."""
    model = build()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.onnx"
        quantize_static(model, path, _Calibration(model), quant_format=QuantFormat.QDQ,
                        op_types_to_quantize=["Conv", "MatMul", "Gemm"], per_channel=True,
                        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
        result = onnx.load(path)
    result.graph.name = name
    onnx.checker.check_model(result, full_check=True)
    return result


def _zoo() -> dict[str, Callable[[], onnx.ModelProto]]:
    builders = (zoo_cnn.mobilenet_v2, zoo_cnn.mobilenet_v3_small, zoo_cnn.efficientnet_b0,
                zoo_cnn.resnet18, zoo_sequence.vit_tiny, zoo_sequence.bert_base,
                zoo_sequence.gpt2_decoder_step, zoo_dense.yolo_small, zoo_dense.unet,
                zoo_sequence.whisper_tiny_encoder, zoo_sequence.lstm_seq)
    models = {f.__name__: partial(f, f.__name__) for f in builders}
    for base in ("resnet18", "bert_base"):
        models[f"{base}_int8"] = partial(quantized, models[base], f"{base}_int8")
    for f in (zoo_cnn.resnet18, zoo_cnn.mobilenet_v2, zoo_sequence.bert_base):
        models[f"{f.__name__}_b8"] = partial(f, f"{f.__name__}_b8", batch=8)
    return models


MODELS: dict[str, Callable[[], onnx.ModelProto]] = _zoo()
"""Every zoo model's name and the function that builds it."""


def make_model(name: str) -> onnx.ModelProto:
    """The zoo model `name` (one of `MODELS`), built deterministically."""
    if name not in MODELS:
        raise KeyError(f"unknown zoo model '{name}' (known: {', '.join(MODELS)})")
    return MODELS[name]()


def reference(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """The seeded inputs (seed 0) by input name and ONNX Runtime's outputs on them as
    `output:<name>`; every output must be finite and vary."""
    feeds = seeded_inputs(model, seed=0)
    outputs = run_onnxruntime(model, feeds)
    for name, value in outputs.items():
        if not np.isfinite(value).all() or value.std() == 0:
            raise ValueError(f"{model.graph.name}: output '{name}' is not finite or constant")
    return {**feeds, **{f"output:{k}": v for k, v in outputs.items()}}


def write_model(name: str, directory: str | Path) -> Path:
    """Writes `name`.onnx and `name`.ref.npz into `directory`; the .onnx path."""
    path = Path(directory) / f"{name}.onnx"
    path.parent.mkdir(parents=True, exist_ok=True)
    model = make_model(name)
    with open(path.with_suffix(".ref.npz.tmp"), "wb") as f:  # savez would append .npz
        np.savez(f, **reference(model))
    path.with_suffix(".ref.npz.tmp").replace(path.with_suffix(".ref.npz"))
    onnx.save(model, path.with_suffix(".onnx.tmp"))
    return path.with_suffix(".onnx.tmp").replace(path)


def ensure_model(name: str, directory: str | Path) -> Path:
    """The path of `name`.onnx in `directory`, writing it (and its reference) first if it is
    missing."""
    path = Path(directory) / f"{name}.onnx"
    return path if path.exists() else write_model(name, directory)


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",")]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown model {unknown[0]!r} (known: {', '.join(MODELS)})")
    return names


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="directory to write the files to")
    parser.add_argument("--only", type=_names, metavar="NAME,...",
                        help="write just these models (of: " + ", ".join(MODELS) + ")")
    args = parser.parse_args(argv)
    for name in args.only or MODELS:
        start = time.perf_counter()
        path = write_model(name, args.out)
        with np.load(path.with_suffix(".ref.npz")) as ref:
            std = min(float(ref[k].std()) for k in ref.files if k.startswith("output:"))
        print(f"{path}  {time.perf_counter() - start:.1f} s  "
              f"{path.stat().st_size / 1e6:.1f} MB  output std >= {std:.3g}", flush=True)


if __name__ == "__main__":
    main()
