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

import importlib.util
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.backend.test.case.model import collect_testcases
from onnx.backend.test.runner import Runner

from collage_xdsl.frontend import import_onnx
from collage_xdsl.ir.interpreter import run_module

LIGHT = [case for case in collect_testcases() if case.kind == "real"]

_spec = importlib.util.spec_from_file_location(
    "make_models", Path(__file__).parent.parent / "examples" / "make_models.py"
)
make_models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_models)


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
    for ours, want in zip(outputs, run_onnxruntime(model, feeds)):
        np.testing.assert_allclose(ours, want, rtol=1e-4, atol=1e-6)


def with_logits_output(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with the input of the Softmax that produces its output as a second output."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    (output,) = model.graph.output
    last = next(n for n in model.graph.node if output.name in n.output)
    if last.op_type == "Softmax":
        elem_type = output.type.tensor_type.elem_type
        model.graph.output.append(helper.make_tensor_value_info(last.input[0], elem_type, None))
    return model


def run_onnxruntime(model: onnx.ModelProto, feeds: list[np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, feeds)))


def seeded_inputs(model: onnx.ModelProto, seed: int = 0) -> list[np.ndarray]:
    """Standard-normal floats; token ids below the examples' vocabulary (1000); 0/1 masks."""
    rng = np.random.default_rng(seed)
    feeds = []
    for x in model.graph.input:
        shape = [d.dim_value for d in x.type.tensor_type.shape.dim]
        if x.type.tensor_type.elem_type == TensorProto.FLOAT:
            feeds.append(rng.standard_normal(shape, dtype=np.float32))
        else:
            high = 1000 if x.name == "input_ids" else 2
            feeds.append(rng.integers(0, high, shape, dtype=np.int64))
    return feeds


@pytest.mark.parametrize("name", sorted(make_models.MODELS))
def test_example_model_matches_onnxruntime(name):
    model = make_models.make_model(name)
    feeds = seeded_inputs(model)
    outputs = run_module(import_onnx(model), feeds)
    expected = run_onnxruntime(model, feeds)
    assert len(outputs) == len(expected)
    for ours, want in zip(outputs, expected):
        assert ours.dtype == want.dtype and ours.shape == want.shape
        np.testing.assert_allclose(ours, want, rtol=1e-4, atol=1e-5)
