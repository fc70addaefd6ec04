"""The modern model zoo (`examples/modern_zoo.py`): its CLI and names, deterministic
generation, the benchmark's `--models modern`; with `--full`, every model is generated,
passes onnx's full check and ONNX Runtime reproduces its stored reference."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from example_models import onnxruntime_outputs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_models  # noqa: E402
import modern_zoo  # noqa: E402
import run as bench_run  # noqa: E402

NAMES = ["mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0", "resnet18", "vit_tiny",
         "bert_base", "gpt2_decoder_step", "yolo_small", "unet", "whisper_tiny_encoder",
         "lstm_seq", "resnet18_int8", "bert_base_int8", "resnet18_b8", "mobilenet_v2_b8",
         "bert_base_b8"]


def _zoo(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "examples" / "modern_zoo.py"), *argv],
                          capture_output=True, text=True)


def test_the_zoo_has_the_models_of_the_issue():
    assert list(modern_zoo.MODELS) == NAMES


def test_help_names_every_model():
    done = _zoo("--help")
    assert done.returncode == 0
    assert all(name in done.stdout for name in NAMES)


def test_an_unknown_model_is_one_error_line():
    done = _zoo("--out", "unused", "--only", "lstm_seq,resnet9000")
    assert done.returncode == 2
    assert "unknown model 'resnet9000'" in done.stderr.splitlines()[-1]


@pytest.mark.parametrize("name", ["lstm_seq", "mobilenet_v3_small"])
def test_generation_is_deterministic(tmp_path, name):
    first, second = (modern_zoo.write_model(name, tmp_path / d) for d in ("a", "b"))
    assert first.read_bytes() == second.read_bytes()
    with np.load(first.with_suffix(".ref.npz")) as a, np.load(second.with_suffix(".ref.npz")) as b:
        assert a.files == b.files
        assert all(np.array_equal(a[k], b[k]) for k in a.files)


def test_the_reference_holds_the_inputs_by_name_and_the_outputs():
    model = modern_zoo.make_model("lstm_seq")
    ref = modern_zoo.reference(model)
    assert sorted(ref) == ["output:logits", "sequence"]
    assert ref["sequence"].shape == (1, 128, 64)
    assert ref["output:logits"].shape == (1, 128, 10)


def test_models_modern_and_all_parse(tmp_path):
    args = bench_run.build_parser().parse_args(["--models", "modern", "--work", str(tmp_path)])
    bench_run._validate(args)
    assert args.models == NAMES
    assert bench_models.parse_models("all") == [*bench_models.MODELS, *NAMES]
    assert bench_models.parse_models("mlp,lstm_seq") == ["mlp", "lstm_seq"]
    assert bench_run.main(["--models", "modern,resnet18", "--work", str(tmp_path)]) == 2


def test_the_benchmark_generates_a_modern_model_on_demand(tmp_path):
    path = bench_models.model_file("lstm_seq", tmp_path)
    assert path == tmp_path / "models" / "lstm_seq.onnx"
    assert path.with_suffix(".ref.npz").exists()
    assert onnx.load(path).graph.name == "lstm_seq"


@pytest.fixture
def zoo_dir(tmp_path):
    yield tmp_path
    shutil.rmtree(tmp_path)  # up to 440 MB a model


def _quantized_inputs(model: onnx.ModelProto) -> list[str]:
    """The inputs of Conv, MatMul and Gemm nodes that no DequantizeLinear produces."""
    dequantized = {o for n in model.graph.node if n.op_type == "DequantizeLinear"
                   for o in n.output}
    return [f"{n.name}:{x}" for n in model.graph.node if n.op_type in ("Conv", "MatMul", "Gemm")
            for x in n.input if x and x not in dequantized]


@pytest.mark.full
@pytest.mark.parametrize("name", NAMES)
def test_each_model_checks_and_reproduces_its_reference(zoo_dir, name):
    path = modern_zoo.write_model(name, zoo_dir)
    onnx.checker.check_model(str(path), full_check=True)
    model = onnx.load(path)
    assert model.opset_import[0].version == 17
    with np.load(path.with_suffix(".ref.npz")) as ref:
        feeds = [ref[x.name] for x in model.graph.input]
        want = {k.removeprefix("output:"): ref[k] for k in ref.files if k.startswith("output:")}
    got = onnxruntime_outputs(model, feeds)
    assert [o.name for o in model.graph.output] == list(want)
    for (key, expected), actual in zip(want.items(), got):
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4, err_msg=key)
    if name.endswith("_int8"):
        assert _quantized_inputs(model) == []
