"""The models the tests run (pytest puts this directory on sys.path): the examples of
`examples/make_models.py`, loaded once here, and the light model-zoo models of onnx's
backend test suite. `tests/conftest.py` builds its fixtures on this module.

    from example_models import MODELS, make_models   # for parametrisation, the generator
    feeds = seeded_inputs(model); want = onnxruntime_outputs(model, feeds)
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnx.backend.test.case.model import collect_testcases

MAKE_MODELS = Path(__file__).resolve().parent.parent / "examples" / "make_models.py"


def _load_make_models():
    sys.path.insert(0, str(MAKE_MODELS.parent))  # for its onnx_builder
    spec = importlib.util.spec_from_file_location("make_models", MAKE_MODELS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_models = _load_make_models()
MODELS = sorted(make_models.MODELS)
"""The example models' names: mnist_cnn, mlp, transformer_encoder."""

LIGHT = [case for case in collect_testcases() if case.kind == "real"]
"""The light model-zoo models of onnx's backend test suite (their test cases)."""


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


def onnxruntime_outputs(model: onnx.ModelProto, feeds: list[np.ndarray]) -> list[np.ndarray]:
    """The model's outputs on `feeds` by ONNX Runtime (CPU)."""
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, feeds)))


def with_logits_output(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with the input of the Softmax that produces its output as a second output."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    (output,) = model.graph.output
    last = next(n for n in model.graph.node if output.name in n.output)
    if last.op_type == "Softmax":
        elem_type = output.type.tensor_type.elem_type
        model.graph.output.append(helper.make_tensor_value_info(last.input[0], elem_type, None))
    return model


def make(nodes, inputs, outputs, opset, initializers=()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def duplicate_computation_model() -> onnx.ModelProto:
    """Two convolutions of x by equal weights under different names (and a third by other
    weights), each with its ReLU, and two ReLUs of x as separate outputs."""
    w = np.random.default_rng(0).standard_normal((8, 3, 3, 3)).astype(np.float32)
    weights = {"w1": w, "w2": w.copy(), "w3": 2 * w}
    nodes = [helper.make_node("Conv", ["x", k], [f"c{k}"], pads=[1] * 4) for k in weights]
    nodes += [helper.make_node("Relu", [f"c{k}"], [f"r{k}"]) for k in weights]
    nodes += [helper.make_node("Add", ["rw1", "rw2"], ["y"]),
              helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Relu", ["x"], ["b"])]
    outputs = [f32("y", [1, 8, 8, 8]), f32("rw3", [1, 8, 8, 8]),
               f32("a", [1, 3, 8, 8]), f32("b", [1, 3, 8, 8])]
    inits = [numpy_helper.from_array(v, k) for k, v in weights.items()]
    return make(nodes, [f32("x", [1, 3, 8, 8])], outputs, 13, inits)
