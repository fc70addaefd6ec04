"""Whole models through the frontend and the reference interpreter.

The nine light model-zoo models of onnx's backend test suite are fed exactly as
that suite feeds them (`Runner.generate_dummy_data`, not random) and checked
against the stored `light_*_output_0.pb` within the tolerances the suite records.
Their weights are constants, so every channel carries the same values and the stored
outputs are uniform (a softmax of equal logits); the logits, the final Softmax's
input, are exposed as a second output and checked against ONNX Runtime, which is
what catches a wrong window, padding, stride or normalisation.

The examples of `examples/make_models.py` (MNIST CNN, MLP, transformer encoder)
match ONNX Runtime on seeded random inputs.
"""

from __future__ import annotations

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
from onnx import numpy_helper
from onnx.backend.test.runner import Runner

from collage_xdsl.frontend import import_onnx
from collage_xdsl.ir.interpreter import run_module


@pytest.mark.parametrize("case", LIGHT, ids=[case.model_name for case in LIGHT])
def test_light_model_matches_stored_output(case):
    path = Path(onnx.__file__).parent.parent / case.url
    model = onnx.load(path)
    initializers = {i.name for i in model.graph.initializer}
    feeds = [
        Runner.generate_dummy_data(x, seed=0, name=case.model_name, random=False)
        for x in model.graph.input
        if x.name not in initializers
    ]
    expected = [
        numpy_helper.to_array(onnx.load_tensor(str(path.with_suffix("")) + f"_output_{i}.pb"))
        for i in range(len(model.graph.output))
    ]
    model = with_logits_output(model)
    outputs = run_module(import_onnx(model), feeds)
    Runner.assert_similar_outputs(expected, outputs[:1], rtol=case.rtol, atol=case.atol)
    for ours, want in zip(outputs, onnxruntime_outputs(model, feeds)):
        np.testing.assert_allclose(ours, want, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", MODELS)
def test_example_model_matches_onnxruntime(example_model, name):
    model = example_model(name)
    feeds = seeded_inputs(model)
    outputs = run_module(import_onnx(model), feeds)
    expected = onnxruntime_outputs(model, feeds)
    assert len(outputs) == len(expected)
    for ours, want in zip(outputs, expected):
        assert ours.dtype == want.dtype and ours.shape == want.shape
        np.testing.assert_allclose(ours, want, rtol=1e-4, atol=1e-5)
