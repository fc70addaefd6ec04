"""`collage explain`: why each kernel, the next best cover of its ops, the boundaries
crossed, and the report as a table, JSON and an HTML page with the picture inline."""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import onnx
import pytest

from collage_xdsl.planner.options import PartitionOptions
from collage_xdsl.planner.pipeline import partition_module
from collage_xdsl.tools import collage

MOCK = "tvm:1,onnxruntime:2,openvino:3"
STEER = ["--pin", "op:matmul=openvino", "--forbid", "relu*=tvm"]


def explain(args, capsys) -> str:
    assert collage.main(["explain", *args, "--estimator", "mock", "--mock-costs", MOCK,
                         "-q"]) == 0
    return capsys.readouterr().out


def test_each_kernel_names_its_next_best_cover_and_the_plan_its_crossings(example_module):
    partitioned = partition_module(example_module("mnist_cnn"), PartitionOptions(
        backends=("tvm", "onnxruntime", "openvino"), mock_costs=MOCK,
        pin="op:matmul=openvino", forbid="relu*=tvm"))
    report = partitioned.report["functions"][0]
    kernels = {k["label"]: k for k in report["kernels"]}
    # conv2d+add on tvm (1.9 s): split into two tvm kernels is the next best (1 s + 1 s)
    assert kernels["conv2d_add"]["alternative"] == {"cover": "tvm, 2 kernels", "cost": 2.0}
    assert kernels["relu"]["alternative"] == {"cover": "openvino", "cost": 3.0}
    assert kernels["matmul"]["alternative"] is None  # pinned: nothing else may run it
    crossings = {(c["from"], c["to"]): c["tensors"] for c in report["crossings"]}
    assert crossings == {("tvm", "onnxruntime"): 2, ("onnxruntime", "tvm"): 2,
                         ("tvm", "openvino"): 1, ("openvino", "tvm"): 1}
    alone = {a["backend"]: a["total_cost"] for a in report["alone"]}
    assert alone["tvm"] is None and alone["onnxruntime"] is None  # the constraints forbid it
    assert report["mixing_ratio"] == pytest.approx(report["total_cost"] / alone["openvino"])


def test_the_table_says_why(example_file, capsys):
    out = explain([str(example_file("mnist_cnn")), *STEER], capsys)
    assert "crossings: onnxruntime -> tvm 2 tensors" in out
    assert "conv2d_add: conv2d, add; next best cover: tvm, 2 kernels 2 s" in out
    assert "alone: tvm no cover" in out and "openvino 20.6 s; mixed total 0.719x" in out


def test_the_html_page_holds_the_kernel_table_and_the_picture(example_file, tmp_path, capsys):
    svg = tmp_path / "p.svg"
    out = explain([str(example_file("mnist_cnn")), *STEER, "--format", "html",
                   "--graph", str(svg)], capsys)
    assert out.startswith("<!DOCTYPE html>") and out.count("<tr><td class=num>") == 7
    assert "next best cover" in out and "Boundaries crossed: onnxruntime &rarr; tvm" in out
    page_svg = out[out.index("<svg"):out.index("</svg>") + 6]
    ET.fromstring(page_svg)  # well-formed
    assert ET.parse(svg).getroot().tag.endswith("svg")


def test_json_format_is_the_json_report(example_file, capsys):
    out = explain([str(example_file("mlp")), "--format", "json"], capsys)
    report = json.loads(out)
    assert {"crossings", "kernels"} <= set(report["functions"][0])
    assert all("alternative" in k for k in report["functions"][0]["kernels"])


def test_fold_and_composite_rewrite_the_model_before_partitioning(capsys):
    resnet50 = Path(onnx.__file__).parent / "backend/test/data/light/light_resnet50.onnx"
    out = explain([str(resnet50), "--backends", "tvm,onnxruntime", "--format", "json",
                   "--fold", "--composite", "cbr=conv2d+add+relu"], capsys)
    kernels = json.loads(out)["functions"][0]["kernels"]
    ops = [op for k in kernels for op in k["ops"]]
    assert "batch_norm" not in ops and "composite" in ops
    assert any(k["label"].startswith("cbr") for k in kernels)


def test_a_malformed_composite_flag_is_one_line(example_file, capsys):
    assert collage.main(["explain", str(example_file("mlp")), "--estimator", "mock",
                         "--composite", "fma=mul+frob", "-q"]) == 1
    assert "unknown op 'frob'" in capsys.readouterr().err
