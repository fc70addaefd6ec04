"""The modern zoo (`examples/modern_zoo.py`) through collage-xdsl, with `--full`: each model
imports, verifies, prints and re-parses; runs under the reference interpreter, under each
backend alone (iree where the whole model lowers to linalg) and partitioned over all
backends by `collage run`, matching ONNX Runtime.

The float models are compared with the generator's stored reference (ONNX Runtime, all
optimizations). The QDQ int8 models are compared with ONNX Runtime without graph
optimizations, which runs the QDQ ops as ONNX defines them, and with the stored reference:
within one quantization step where the output is dequantized, else within 1.5 times the
distance between those two ONNX Runtime runs (its optimizer replaces QDQ Conv/MatMul by
integer kernels that round differently, and a flipped rounding travels on).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from ir_helpers import main_of, parse

from collage_xdsl.backends import compile_kernel
from collage_xdsl.frontend import import_onnx
from collage_xdsl.ir.interpreter import run_function
from collage_xdsl.linalg import lower_to_linalg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
import modern_zoo  # noqa: E402

MODELS = list(modern_zoo.MODELS)
BACKENDS = ["onnxruntime", "openvino", "tvm", "iree"]

pytestmark = pytest.mark.full


@dataclass
class Case:
    """A generated zoo model with what its runs must match."""

    path: Path
    model: onnx.ModelProto
    feeds: list[np.ndarray]
    want: list[np.ndarray]
    """ONNX Runtime's outputs: the stored reference, or for an int8 model unoptimized."""
    stored: list[np.ndarray]
    atols: list[float]
    """Per output, the absolute tolerance (the relative one is 1e-3)."""


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    """name -> its `Case`, generated once per test module."""
    directory = tmp_path_factory.mktemp("zoo")
    made: dict[str, Case] = {}

    def get(name: str) -> Case:
        if name not in made:
            path = modern_zoo.ensure_model(name, directory)
            model = onnx.load(path)
            with np.load(path.with_suffix(".ref.npz")) as ref:
                feeds = [ref[i.name] for i in model.graph.input]
                stored = [ref[f"output:{o.name}"] for o in model.graph.output]
            want = _unoptimized(path, model, feeds) if name.endswith("_int8") else stored
            made[name] = Case(path, model, feeds, want, stored, _atols(model, want, stored))
        return made[name]

    return get


def _unoptimized(path: Path, model: onnx.ModelProto, feeds) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: x for i, x in zip(model.graph.input, feeds)})


def _atols(model: onnx.ModelProto, want, stored) -> list[float]:
    """Per output: one quantization step when a DequantizeLinear produces it (an intermediate
    quantization may round a value near a half step either way); for another output of an
    int8 model, 1.5 times the distance between ONNX Runtime's optimized and unoptimized runs
    (each flipped rounding travels through the layers after it); else float rounding."""
    producers = {out: node for node in model.graph.node for out in node.output}
    scales = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    atols = []
    for output, w, s in zip(model.graph.output, want, stored):
        node = producers.get(output.name)
        if node is not None and node.op_type == "DequantizeLinear":
            atols.append(float(np.max(scales[node.input[1]])) * 1.001)
        elif w is not s:
            atols.append(1.5 * float(np.abs(w - s).max()))
        else:
            atols.append(1e-3 * max(1.0, float(np.abs(w).max())) if w.size else 1e-3)
    return atols


def _close(got: list[np.ndarray], want: list[np.ndarray], case: Case) -> None:
    assert len(got) == len(want)
    for g, w, atol in zip(got, want, case.atols):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-3, atol=atol)


@pytest.mark.parametrize("name", MODELS)
def test_imports_verifies_prints_and_reparses(zoo, name):
    module = import_onnx(zoo(name).model)
    module.verify()
    text = str(module)
    reparsed = parse(text)
    reparsed.verify()
    assert str(reparsed) == text


@pytest.mark.parametrize("name", MODELS)
def test_interpreter_matches_onnxruntime(zoo, name):
    case = zoo(name)
    _close(run_function(main_of(import_onnx(case.model)), case.feeds), case.want, case)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", MODELS)
def test_each_backend_alone_matches_onnxruntime(zoo, name, backend):
    case = zoo(name)
    module = import_onnx(case.model)
    if backend == "iree" and not lower_to_linalg(module.clone()).complete:
        pytest.skip(f"{name} does not lower to linalg completely")
    kernel = compile_kernel(backend, main_of(module), threads=2)
    try:
        got = kernel(case.feeds)
    finally:
        kernel.release()
    _close(got, case.want, case)
    _close(got, case.stored, case)


@pytest.mark.parametrize("name", MODELS)
def test_collage_run_over_all_backends_checks(zoo, name):
    case = zoo(name)
    path = case.path
    run = subprocess.run(
        [sys.executable, "-m", "collage_xdsl.tools.collage", "run", str(path), "--backends",
         "tvm,onnxruntime,openvino,iree", "--estimator", "mock", "--check",
         "--inputs", str(path.with_suffix(".ref.npz")), "--rtol", "1e-3",
         "--atol", str(max(case.atols))],
        capture_output=True, text=True, timeout=3600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "match onnxruntime" in run.stdout, run.stdout[-2000:]
