"""The measuring scripts under scripts/ run on a real model and print what they promise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _matmul_relu(path: Path) -> Path:
    weight = numpy_helper.from_array(
        np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Relu", ["m"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


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


def test_selector_cost_needs_alternatives(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPTS / "selector_cost.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: {tmp_path}: not a collage artifact")
