"""Whole models lowered to linalg and compiled by IREE: the nine light model-zoo models (with
their logits exposed, as `test_models.py` feeds them), the MNIST CNN, the MLP and the
transformer encoder match ONNX Runtime; and `collage run --check` with IREE among the
backends passes on the MLP and the transformer encoder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from example_models import (
    LIGHT,
    MODELS,
    onnxruntime_outputs,
    seeded_inputs,
    with_logits_output,
)
from ir_helpers import main_of
from onnx.backend.test.runner import Runner

from collage_xdsl.backends import compile_kernel
from collage_xdsl.frontend import import_onnx
from collage_xdsl.linalg import lower_to_linalg


def _through_iree(model: onnx.ModelProto, feeds: list[np.ndarray]) -> list[np.ndarray]:
    module = import_onnx(model)
    assert lower_to_linalg(module.clone()).complete  # the whole model lowers
    kernel = compile_kernel("iree", main_of(module), threads=2)
    try:
        return kernel(feeds)
    finally:
        kernel.release()


def _check(model: onnx.ModelProto, feeds: list[np.ndarray]) -> None:
    outputs = _through_iree(model, feeds)
    expected = onnxruntime_outputs(model, feeds)
    assert len(outputs) == len(expected)
    for ours, want in zip(outputs, expected):
        assert ours.dtype == want.dtype and ours.shape == want.shape
        np.testing.assert_allclose(ours, want, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", MODELS)
def test_example_model_through_iree_matches_onnxruntime(example_model, name):
    model = example_model(name)
    _check(model, seeded_inputs(model))


@pytest.mark.full
@pytest.mark.parametrize("case", LIGHT, ids=[case.model_name for case in LIGHT])
def test_light_model_through_iree_matches_onnxruntime(case):
    model = onnx.load(Path(onnx.__file__).parent.parent / case.url)
    initializers = {i.name for i in model.graph.initializer}
    feeds = [Runner.generate_dummy_data(x, seed=0, name=case.model_name, random=False)
             for x in model.graph.input if x.name not in initializers]
    _check(with_logits_output(model), feeds)


def _collage_run(path: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "collage_xdsl.tools.collage", "run", str(path), "--backends",
         "tvm,onnxruntime,openvino,iree", "--check", *options],
        capture_output=True, text=True, timeout=1800,
    )


@pytest.mark.parametrize("name", ["mlp", "transformer_encoder"])
def test_collage_run_on_iree_kernels_checks(example_model, tmp_path, name):
    """IREE the cheapest by mock costs: the plan's kernels are IREE's, compiled and run."""
    path = tmp_path / f"{name}.onnx"
    onnx.save(example_model(name), path)
    run = _collage_run(path, "--estimator", "mock", "--mock-costs",
                       "tvm:3e-5,onnxruntime:2e-5,openvino:2e-5,iree:1e-5")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "1 kernel (iree 1)" in run.stderr, run.stderr[-2000:]
    assert "match onnxruntime" in run.stdout, run.stdout[-2000:]


@pytest.mark.full
@pytest.mark.parametrize("name", ["mlp", "transformer_encoder"])
def test_collage_run_measured_with_iree_checks(example_model, tmp_path, name):
    path = tmp_path / f"{name}.onnx"
    onnx.save(example_model(name), path)
    run = _collage_run(path, "--cost-db", str(tmp_path / "costs.sqlite"))
    assert run.returncode == 0, run.stderr[-2000:]
    assert "match onnxruntime" in run.stdout, run.stdout[-2000:]
