"""The modern zoo (`examples/modern_zoo.py`) through collage-xdsl, with `--full`: each model
imports, verifies, prints and re-parses; runs under the reference interpreter, under each
backend alone (iree where the whole model lowers to linalg) and partitioned over all
backends by `collage run`, matching ONNX Runtime.

The float models are compared with the generator's stored reference (ONNX Runtime, all
optimizations). The QDQ int8 models are compared with ONNX Runtime without graph
optimizations, which runs the QDQ ops as ONNX defines them, and with the stored reference
within one quantization step of the output: ONNX Runtime's optimizer replaces QDQ
Conv/MatMul by integer kernels that round differently.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from collage_xdsl.dialects.collage import Collage
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func, FuncOp
from xdsl.parser import Parser

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


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    """name -> (the model's path, its inputs, the outputs to match, atol of those outputs):
    generated once per test module."""
    directory = tmp_path_factory.mktemp("zoo")
    made: dict[str, tuple] = {}

    def get(name: str):
        if name not in made:
            path = modern_zoo.ensure_model(name, directory)
            model = onnx.load(path)
            with np.load(path.with_suffix(".ref.npz")) as ref:
                feeds = [ref[i.name] for i in model.graph.input]
                stored = [ref[f"output:{o.name}"] for o in model.graph.output]
            want = _unoptimized(path, model, feeds) if name.endswith("_int8") else stored
            made[name] = (path, model, feeds, want, stored)
        return made[name]

    return get


def _unoptimized(path: Path, model: onnx.ModelProto, feeds) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: x for i, x in zip(model.graph.input, feeds)})


def _output_steps(model: onnx.ModelProto) -> list[float | None]:
    """Per graph output, the scale of the DequantizeLinear that produces it (None if none)."""
    producers = {out: node for node in model.graph.node for out in node.output}
    scales = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    steps = []
    for output in model.graph.output:
        node = producers.get(output.name)
        scale = scales.get(node.input[1]) if node and node.op_type == "DequantizeLinear" else None
        steps.append(None if scale is None else float(np.max(scale)))
    return steps


def _close(got: list[np.ndarray], want: list[np.ndarray], model: onnx.ModelProto) -> None:
    """Equal up to float rounding, or (a dequantized output) up to one quantization step:
    an intermediate quantization may round a value near a half step either way."""
    assert len(got) == len(want)
    for g, w, step in zip(got, want, _output_steps(model)):
        assert g.shape == w.shape and g.dtype == w.dtype
        scale = max(1.0, float(np.abs(w).max())) if w.size else 1.0
        atol = 1e-3 * scale if step is None else step * 1.001
        np.testing.assert_allclose(g, w, rtol=1e-3, atol=atol)


def _main(module) -> FuncOp:
    return next(op for op in module.walk() if isinstance(op, FuncOp)
                and op.sym_name.data == "main")


@pytest.mark.parametrize("name", MODELS)
def test_imports_verifies_prints_and_reparses(zoo, name):
    _, model, _, _, _ = zoo(name)
    module = import_onnx(model)
    module.verify()
    text = str(module)
    ctx = Context()
    for dialect in (Builtin, Func, Collage):
        ctx.load_dialect(dialect)
    reparsed = Parser(ctx, text).parse_module()
    reparsed.verify()
    assert str(reparsed) == text


@pytest.mark.parametrize("name", MODELS)
def test_interpreter_matches_onnxruntime(zoo, name):
    _, model, feeds, want, _ = zoo(name)
    _close(run_function(_main(import_onnx(model)), feeds), want, model)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", MODELS)
def test_each_backend_alone_matches_onnxruntime(zoo, name, backend):
    _, model, feeds, want, stored = zoo(name)
    module = import_onnx(model)
    if backend == "iree" and not lower_to_linalg(module.clone()).complete:
        pytest.skip(f"{name} does not lower to linalg completely")
    kernel = compile_kernel(backend, _main(module), threads=2)
    try:
        got = kernel(feeds)
    finally:
        kernel.release()
    _close(got, want, model)
    _close(got, stored, model)


@pytest.mark.parametrize("name", MODELS)
def test_collage_run_over_all_backends_checks(zoo, name):
    path, model, _, _, _ = zoo(name)
    steps = [s for s in _output_steps(model) if s is not None]
    atol = max(steps) * 1.001 if steps else 1e-3  # as `_close`: one step, or float rounding
    run = subprocess.run(
        [sys.executable, "-m", "collage_xdsl.tools.collage", "run", str(path), "--backends",
         "tvm,onnxruntime,openvino,iree", "--estimator", "mock", "--check",
         "--inputs", str(path.with_suffix(".ref.npz")), "--rtol", "1e-3", "--atol", str(atol)],
        capture_output=True, text=True, timeout=3600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "match onnxruntime" in run.stdout, run.stdout[-2000:]
