"""The scripts under benchmarks/experiments/ and benchmarks/tools/ still run against the library:
each imports and prints its --help; two run on a real model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
EXPERIMENTS = BENCHMARKS / "experiments"
SCRIPTS = sorted([*EXPERIMENTS.glob("*.py"), *(BENCHMARKS / "tools").glob("*.py")])


def _run(script: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_script_imports_and_prints_its_help(script):
    done = _run(script, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: ")


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


def test_onnx_cuts_times_the_pieces_beside_the_whole_model(tmp_path):
    """x @ w1 -> %m1, ReLU -> %r, %r @ w2 -> %y, cut at %m1 and %r: three pieces."""
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["m1"]),
             helper.make_node("Relu", ["m1"], ["r"]),
             helper.make_node("MatMul", ["r", "w2"], ["y"])]
    model = _save(tmp_path / "two.onnx", nodes,
                  helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16]),
                  helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4]),
                  (("w1", (16, 8)), ("w2", (8, 4))), 17, 8)
    done = _run(EXPERIMENTS / "onnx_cuts.py", str(model), "m1,r", "--backend", "onnxruntime",
                "--rounds", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("two.onnx on onnxruntime, cut at m1,r, ")
    assert lines[1].split()[0] == "whole" and "1.000x (1.000-1.000) of whole" in lines[1]
    assert lines[2].split()[:2] == ["3", "pieces"]


def test_export_graphs_shows_the_sum_our_export_writes_as_a_fused_add(tmp_path):
    """A residual block as opset 9 writes it: relu(Sum(conv(x), x)), 8 channels, 8x8, a
    grouped 1x1 convolution (as ShuffleNet's; ONNX Runtime's NCHWc layout takes the others)."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], group=2),
             helper.make_node("Sum", ["c", "x"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    x, y = (helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 8, 8, 8])
            for name in "xy")
    model = _save(tmp_path / "res.onnx", nodes, x, y, (("w", (8, 4, 1, 1)), ("b", (8,))), 9, 4)
    done = _run(EXPERIMENTS / "export_graphs.py", str(model), "--rounds", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{model} on onnxruntime: compiled graphs, op types where they differ"
    counts = {line.split()[0]: line.split()[1:] for line in lines[2:-1]}
    assert counts["Sum"] == ["1", "0"]
    assert counts["com.microsoft::FusedConv"] == ["0", "1"]
    assert " threads, 2 rounds: file " in lines[-1] and lines[-1].endswith("x of file")
