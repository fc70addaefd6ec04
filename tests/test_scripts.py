"""The measuring scripts under scripts/ run on a real model and print what they promise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _save(path: Path, nodes, x, y, weights, opset: int, ir_version: int) -> Path:
    """A model of `nodes` from input `x` to output `y` (value infos) saved at `path`, with
    seeded normal weights of the (name, shape) pairs `weights`."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
             for name, shape in weights]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], inits),
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    onnx.save(model, path)
    return path


def _matmul_relu(path: Path, then_matmul: bool = False) -> Path:
    """x @ w1 -> %m1, ReLU -> %r (the output), and with `then_matmul` %r @ w2 -> %y (the
    output instead)."""
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["m1"]),
             helper.make_node("Relu", ["m1"], ["r"])]
    if then_matmul:
        nodes.append(helper.make_node("MatMul", ["r", "w2"], ["y"]))
    output = helper.make_tensor_value_info(*(("y", TensorProto.FLOAT, [4, 4]) if then_matmul
                                             else ("r", TensorProto.FLOAT, [4, 8])))
    return _save(path, nodes, helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16]),
                 output, (("w1", (16, 8)), ("w2", (8, 4)))[:1 + then_matmul], 17, 8)


def test_selector_cost_times_the_selector_beside_its_plan(tmp_path):
    model = _matmul_relu(tmp_path / "mm.onnx")
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "selector_cost.py"), str(model),
         "--backends", "tvm,onnxruntime", "--rounds", "2", "--instances"],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines[:3]] == ["plain", "selector", "other"]
    assert "1.000x of plain" in lines[0]
    stats = lines[3]
    assert stats.startswith("selector: {'calls': [") and "'probes': " in stats


def test_order_bias_compares_equal_configurations_in_both_orders(tmp_path):
    model = _matmul_relu(tmp_path / "mm.onnx")
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "order_bias.py"), str(model), "--backend",
         "onnxruntime", "--seconds", "0.2", "--runs", "1"],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["mm fixed", "mm per block"]
    for line in lines:
        ratios = [float(part.split()[1]) for part in line.split(", ")[1:]]
        assert all(part.endswith(")") and "(sd " in part for part in line.split(", ")[1:])
        assert [part.split()[0] for part in line.split(", ")[1:]] == ["A/B", "A/A2", "B/A2"]
        assert all(0.5 < r < 2 for r in ratios)


def test_selector_cost_needs_alternatives(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPTS / "selector_cost.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: {tmp_path}: not a collage artifact")


@pytest.mark.parametrize("script, message, more", [
    ("in_run_cost.py", "no such artifact directory", ()),
    ("onnx_cuts.py", "no such file", ("m1",)),
    ("order_bias.py", "no such file", ()),
    ("export_graphs.py", "no such file", ()),
    ("ort_spinning.py", "no such file", ()),
    ("process_spread.py", "no such file", ()),
    ("selector_cost.py", "no such file", ()),
    ("session_spread.py", "no such file", ()),
    ("speed_windows.py", "no such file", ()),
])
def test_a_missing_model_is_one_error_line(tmp_path, script, message, more):
    missing = tmp_path / "missing.onnx"
    done = subprocess.run([sys.executable, str(SCRIPTS / script), str(missing), *more],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr == f"error: {missing}: {message}\n"


def test_openvino_fc_relu_times_four_forms_of_one_layer():
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "openvino_fc_relu.py"), "--k", "64", "--n", "32",
         "--rounds", "2"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("fully connected 64 -> 32, batch 1, OpenVINO")
    assert [line.split()[0] for line in lines[1:]] == [
        "matmul", "matmul+add", "matmul+add+relu", "gemm+relu"]
    assert lines[1].endswith("1.000x of matmul")


def test_openvino_fc_relu_refuses_an_empty_layer():
    done = subprocess.run([sys.executable, str(SCRIPTS / "openvino_fc_relu.py"), "--n", "0"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: --k, --n and --rounds must be at least 1")


def test_same_cuts_times_the_plan_moved_to_one_backend(tmp_path):
    model = _matmul_relu(tmp_path / "mm.onnx")
    art = tmp_path / "art"
    subprocess.run(["collage", "compile", str(model), "--backends", "tvm", "--estimator", "mock",
                    "-o", str(art)], check=True, capture_output=True, timeout=300)
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "same_cuts.py"), str(art), str(model),
         "--backend", "onnxruntime", "--rounds", "2"], capture_output=True, text=True,
        timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split("  ")[0].strip() for line in lines] == [
        "plan", "plan on onnxruntime", "onnxruntime alone"]
    assert "1.000x (1.000-1.000) of onnxruntime alone" in lines[2]


def test_same_cuts_names_an_unknown_backend(tmp_path):
    model = _matmul_relu(tmp_path / "mm.onnx")
    done = subprocess.run([sys.executable, str(SCRIPTS / "same_cuts.py"), str(tmp_path), str(model),
                           "--backend", "cuda"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: ") and "cuda" in done.stderr


@pytest.mark.parametrize("backend, cuts, pieces", [
    ("openvino", "m1", 2), ("onnxruntime", "m1,r", 3)])
def test_onnx_cuts_times_the_pieces_beside_the_whole_model(tmp_path, backend, cuts, pieces):
    model = _matmul_relu(tmp_path / "two.onnx", then_matmul=True)
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "onnx_cuts.py"), str(model), cuts, "--backend", backend,
         "--rounds", "2"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"two.onnx on {backend}, cut at {cuts}, ")
    assert lines[1].split()[0] == "whole" and "1.000x (1.000-1.000) of whole" in lines[1]
    assert lines[2].split()[:2] == [str(pieces), "pieces"]


@pytest.mark.parametrize("cuts, message", [
    ("nope", "error: no node computes tensor 'nope'\n"),
    ("r,m1", "error: tensor 'm1' is computed before cut 'r': give the cuts in dataflow order\n"),
    ("y", "error: nothing is left after cut 'y'\n"),
    ("x", "error: piece 1 (up to 'x') is empty\n"),
])
def test_onnx_cuts_names_a_cut_it_cannot_make(tmp_path, cuts, message):
    model = _matmul_relu(tmp_path / "two.onnx", then_matmul=True)
    done = subprocess.run([sys.executable, str(SCRIPTS / "onnx_cuts.py"), str(model), cuts],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr == message


def _conv_sum_relu(path: Path) -> Path:
    """A residual block as opset 9 writes it: relu(Sum(conv(x), x)), 8 channels, 8x8, a
    grouped 1x1 convolution (as ShuffleNet's; ONNX Runtime's NCHWc layout takes the others)."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], group=2),
             helper.make_node("Sum", ["c", "x"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    x, y = (helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 8, 8, 8])
            for name in "xy")
    return _save(path, nodes, x, y, (("w", (8, 4, 1, 1)), ("b", (8,))), 9, 4)


def test_export_graphs_shows_the_sum_our_export_writes_as_a_fused_add(tmp_path):
    model = _conv_sum_relu(tmp_path / "res.onnx")
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "export_graphs.py"), str(model), "--rounds", "2"],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{model} on onnxruntime: compiled graphs, op types where they differ"
    counts = {line.split()[0]: line.split()[1:] for line in lines[2:-1]}
    assert counts["Sum"] == ["1", "0"]
    assert counts["com.microsoft::FusedConv"] == ["0", "1"]
    assert " threads, 2 rounds: file " in lines[-1] and lines[-1].endswith("x of file")


def test_export_graphs_compares_openvinos_runtime_models(tmp_path):
    model = _conv_sum_relu(tmp_path / "res.onnx")
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "export_graphs.py"), str(model), "--backend", "openvino",
         "--rounds", "2"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{model} on openvino: compiled graphs, op types where they differ"
    assert lines[1].startswith("  none: ") and lines[1].endswith(" of the same op types in each")
    assert len(lines) == 3 and lines[2].endswith("x of file")


def test_export_graphs_refuses_a_module(tmp_path):
    module = tmp_path / "m.mlir"
    module.write_text("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                      "  %y = collage.relu %x : tensor<2xf32>\n"
                      "  func.return %y : tensor<2xf32>\n}\n")
    done = subprocess.run([sys.executable, str(SCRIPTS / "export_graphs.py"), str(module)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr == f"error: {module}: not an .onnx model\n"


def test_onnx_cuts_refuses_a_module(tmp_path):
    module = tmp_path / "m.mlir"
    module.write_text("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                      "  %y = collage.relu %x : tensor<2xf32>\n"
                      "  func.return %y : tensor<2xf32>\n}\n")
    done = subprocess.run([sys.executable, str(SCRIPTS / "onnx_cuts.py"), str(module), "y"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr == f"error: {module}: not an .onnx model\n"


def test_export_graphs_refuses_a_model_that_is_not_one_kernel(tmp_path):
    """relu(x) and neg(x), two outputs: two regions, which no one kernel covers."""
    x, y, z = (helper.make_tensor_value_info(name, TensorProto.FLOAT, [2]) for name in "xyz")
    nodes = [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["z"])]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y, z]),
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = tmp_path / "two.onnx"
    onnx.save(model, path)
    done = subprocess.run([sys.executable, str(SCRIPTS / "export_graphs.py"), str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr == (f"error: {path}: the whole model is 2 kernels of onnxruntime, not "
                           "one (its ops are not one connected region the backend takes)\n")
