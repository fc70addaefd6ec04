"""ONNX LSTM and GRU, unrolled at import: each variant (direction, bias, initial states as
inputs or constants, used outputs, linear_before_reset) interpreted against ONNX Runtime,
whole models run on each backend through `collage run --check`, and every unsupported
variant an import error naming the node and the attribute or input."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from example_models import f32, make, onnxruntime_outputs
from onnx import helper, numpy_helper

from collage_xdsl.frontend import FrontendError, import_onnx
from collage_xdsl.ir.interpreter import run_module
from collage_xdsl.tools import collage

STEPS, BATCH, INPUT, HIDDEN = 5, 2, 8, 6
GATES = {"LSTM": 4, "GRU": 3}
OUTPUTS = {"LSTM": ["y", "y_h", "y_c"], "GRU": ["y", "y_h"]}
UNROLLED_OPS = {"builtin.module", "func.func", "func.return", "collage.constant",
                "collage.matmul", "collage.add", "collage.mul", "collage.sub",
                "collage.sigmoid", "collage.tanh", "collage.split", "collage.concat",
                "collage.reshape"}


def recurrent(op: str, direction: str = "forward", bias: bool = True, states=(),
              constant_states: bool = False, used=None, steps: int = STEPS,
              **attrs) -> onnx.ModelProto:
    """One `op` node 'rnn' over x [steps, BATCH, INPUT] with seeded random W, R (and B)
    initializers; `states` names the initial states given ('h0', 'c0'): graph inputs, or
    initializers with `constant_states` (c0 then zero); `used` the graph outputs' indices."""
    rng = np.random.default_rng(7)
    dirs, size = 2 if direction == "bidirectional" else 1, GATES[op] * HIDDEN

    def weight(name, shape, scale=0.5):
        return numpy_helper.from_array((rng.normal(0, 1, shape) * scale).astype(np.float32), name)

    inits = [weight("W", (dirs, size, INPUT)), weight("R", (dirs, size, HIDDEN))]
    inits += [weight("B", (dirs, 2 * size))] if bias else []
    inputs = [f32("x", [steps, BATCH, INPUT])]
    for name in states:
        if constant_states:
            inits.append(weight(name, (dirs, BATCH, HIDDEN), 1.0 if name == "h0" else 0.0))
        else:
            inputs.append(f32(name, [dirs, BATCH, HIDDEN]))
    names = ["x", "W", "R", "B" if bias else "", "", "h0" if "h0" in states else "",
             "c0" if "c0" in states else ""]
    while not names[-1]:
        names.pop()
    used = range(len(OUTPUTS[op])) if used is None else used
    outputs = [o if i in used else "" for i, o in enumerate(OUTPUTS[op])]
    attrs = {"hidden_size": HIDDEN, **attrs}
    node = helper.make_node(op, names, outputs, name="rnn", direction=direction, **attrs)
    return make([node], inputs, [f32(o, None) for o in outputs if o], 14, inits)


VARIANTS = {
    "lstm_forward": dict(op="LSTM"),
    "lstm_reverse_states": dict(op="LSTM", direction="reverse", states=("h0", "c0")),
    "lstm_bidirectional_states": dict(op="LSTM", direction="bidirectional",
                                      states=("h0", "c0"),
                                      activations=["Sigmoid", "Tanh", "Tanh"] * 2),
    "lstm_no_bias_initial_c": dict(op="LSTM", bias=False, states=("c0",)),
    "lstm_constant_states_y_c": dict(op="LSTM", direction="bidirectional",
                                     states=("h0", "c0"), constant_states=True, used=[2]),
    "lstm_one_step_final_states": dict(op="LSTM", steps=1, states=("h0",), used=[1, 2]),
    "gru_forward": dict(op="GRU"),
    "gru_reverse_state": dict(op="GRU", direction="reverse", states=("h0",)),
    "gru_bidirectional_reset_after": dict(op="GRU", direction="bidirectional",
                                          states=("h0",), linear_before_reset=1),
    "gru_reset_after": dict(op="GRU", linear_before_reset=1),
    "gru_reset_after_no_bias_y_h": dict(op="GRU", direction="bidirectional", bias=False,
                                        linear_before_reset=1, states=("h0",), used=[1]),
    "gru_constant_state": dict(op="GRU", direction="reverse", states=("h0",),
                               constant_states=True),
}


def feeds(model: onnx.ModelProto) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    return [rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim],
                                dtype=np.float32) for i in model.graph.input]


@pytest.mark.parametrize("name", VARIANTS)
def test_interpreter_matches_onnxruntime(name):
    """Imported into existing ops only; every used output as ONNX Runtime computes it."""
    model = recurrent(**VARIANTS[name])
    module = import_onnx(model)
    assert {op.name for op in module.walk()} <= UNROLLED_OPS
    inputs = feeds(model)
    expected = onnxruntime_outputs(model, inputs)
    actual = run_module(module, inputs)
    assert len(actual) == len(expected) == len(model.graph.output)
    for got, want in zip(actual, expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def runs_on_and_matches_onnxruntime(backend: str, model: onnx.ModelProto, tmp_path, capsys):
    """`collage run --backends backend --check`: the whole model on `backend` gives ONNX
    Runtime's outputs."""
    path = tmp_path / "rnn.onnx"
    onnx.save(model, path)
    status = collage.main(["run", str(path), "-q", "--backends", backend, "--estimator",
                           "mock", "--check", "--rtol", "1e-4", "--atol", "1e-4"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert f"check: {len(model.graph.output)} output(s) match onnxruntime" in out


BACKENDS = ["tvm", "onnxruntime", "openvino"]
ON_EVERY_BACKEND = ["lstm_bidirectional_states", "gru_bidirectional_reset_after"]
"""The variants run on every backend by default; `--full` runs every variant."""


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=[] if name in ON_EVERY_BACKEND else pytest.mark.full)
    for name in VARIANTS])
@pytest.mark.parametrize("backend", BACKENDS)
def test_backend_runs_the_unrolled_model(backend, name, tmp_path, capsys, monkeypatch):
    """The whole imported model on one backend, against ONNX Runtime."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    runs_on_and_matches_onnxruntime(backend, recurrent(**VARIANTS[name]), tmp_path, capsys)


@pytest.mark.full
def test_stacked_recurrent_model_partitioned_over_the_backends(tmp_path, capsys, monkeypatch):
    """A bidirectional LSTM whose Y, as [T, B, 2H], feeds a GRU (linear_before_reset),
    partitioned over tvm, onnxruntime and openvino."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    model = recurrent("LSTM", "bidirectional", states=("h0",), used=[0])
    rng = np.random.default_rng(1)
    shapes = {"W2": (1, 3 * HIDDEN, 2 * HIDDEN), "R2": (1, 3 * HIDDEN, HIDDEN),
              "B2": (1, 6 * HIDDEN)}
    model.graph.initializer.extend(
        [numpy_helper.from_array(rng.normal(0, 0.5, s).astype(np.float32), n)
         for n, s in shapes.items()]
        + [numpy_helper.from_array(np.array([STEPS, BATCH, 2 * HIDDEN], np.int64), "shape")])
    model.graph.node.extend([
        helper.make_node("Transpose", ["y"], ["t"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["t", "shape"], ["x2"]),
        helper.make_node("GRU", ["x2", *shapes], ["z", "z_h"], name="gru",
                         hidden_size=HIDDEN, linear_before_reset=1),
    ])
    del model.graph.output[:]
    model.graph.output.extend([f32("z", None), f32("z_h", None)])
    runs_on_and_matches_onnxruntime("tvm,onnxruntime,openvino", model, tmp_path, capsys)


# ---------------------------------------------------------------------------
# Variants the unrolling does not support, and invalid nodes: one import error each
# ---------------------------------------------------------------------------


def with_input(model: onnx.ModelProto, index: int, name: str,
               value: np.ndarray) -> onnx.ModelProto:
    """`model` with its node's input `index` an initializer `name` holding `value`."""
    node = model.graph.node[0]
    node.input.extend([""] * (index + 1 - len(node.input)))
    node.input[index] = name
    model.graph.initializer.append(numpy_helper.from_array(value, name))
    return model


def graph_input(model: onnx.ModelProto, name: str, shape) -> onnx.ModelProto:
    """`model` with initializer `name` turned into a graph input of `shape`."""
    kept = [t for t in model.graph.initializer if t.name != name]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    model.graph.input.append(f32(name, shape))
    return model


def symbolic_steps(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` with x's sequence length the symbolic dimension 'T'."""
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "T"
    return model


IMPORT_ERRORS = {
    "sequence_lens": (lambda: with_input(recurrent("LSTM"), 4, "lens",
                                         np.full(BATCH, STEPS, np.int32)),
                      r"node 'rnn' \(LSTM\): input 'sequence_lens' is not supported"),
    "gru_sequence_lens": (lambda: with_input(recurrent("GRU"), 4, "lens",
                                             np.full(BATCH, STEPS, np.int32)),
                          r"node 'rnn' \(GRU\): input 'sequence_lens' is not supported"),
    "peepholes": (lambda: with_input(recurrent("LSTM"), 7, "P",
                                     np.ones((1, 3 * HIDDEN), np.float32)),
                  r"node 'rnn' \(LSTM\): input 'P' is not supported"),
    "activations": (lambda: recurrent("LSTM", activations=["Sigmoid", "Relu", "Tanh"]),
                    r"node 'rnn' \(LSTM\): activations \['Sigmoid', 'Relu', 'Tanh'\] are not "
                    r"supported, only the defaults \['Sigmoid', 'Tanh', 'Tanh'\]"),
    "gru_activations": (lambda: recurrent("GRU", activations=["HardSigmoid", "Tanh"]),
                        r"node 'rnn' \(GRU\): activations \['HardSigmoid', 'Tanh'\] are not"),
    "clip": (lambda: recurrent("GRU", clip=3.0), r"node 'rnn' \(GRU\): clip is not supported"),
    "input_forget": (lambda: recurrent("LSTM", input_forget=1),
                     r"node 'rnn' \(LSTM\): input_forget 1 is not supported"),
    "layout": (lambda: recurrent("LSTM", layout=1),
               r"node 'rnn' \(LSTM\): layout 1 is not supported, only 0"),
    "weights_not_initializers": (
        lambda: graph_input(recurrent("GRU"), "R", [1, 3 * HIDDEN, HIDDEN]),
        r"node 'rnn' \(GRU\): input 'R' must be a constant"),
    "direction": (lambda: recurrent("GRU", direction="sideways"),
                  r"node 'rnn' \(GRU\): direction 'sideways' is not one of forward, reverse"),
    "hidden_size": (lambda: recurrent("LSTM", hidden_size=5),
                    r"node 'rnn' \(LSTM\): input 'W' has shape \[1, 24, 8\], expected "
                    r"\[1, 20, 8\] \(forward, hidden_size 5\)"),
    "dynamic_sequence_length": (
        lambda: symbolic_steps(recurrent("LSTM")),
        r"input 'x' has symbolic dimension 'T'; fix it with input_shapes"),
}


@pytest.mark.parametrize("name", IMPORT_ERRORS)
def test_unsupported_or_invalid_variant_is_an_import_error(name):
    build, error = IMPORT_ERRORS[name]
    with pytest.raises(FrontendError, match=error):
        import_onnx(build())


def test_a_dynamic_sequence_length_fixed_by_input_shapes_imports():
    """Unrolled over the length `input_shapes` gives: two tanh per LSTM step."""
    model = symbolic_steps(recurrent("LSTM", used=[1], steps=3))
    module = import_onnx(model, input_shapes={"x": [3, BATCH, INPUT]})
    assert sum(op.name == "collage.tanh" for op in module.walk()) == 2 * 3
