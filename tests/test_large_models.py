"""Models over protobuf's 2 GB: the ONNX Runtime and OpenVINO hooks hand a kernel's weights
over beside its model (`onnx_export.detach_initializers`). By default the detaching path is
forced on a small kernel; with `--full` a 2.4 GB model (external data) is partitioned and run
on each backend by `collage run --check` (iree refuses kernels over its weight limit in one
line: it passes weights inline in MLIR text)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import numpy as np
import onnx
import pytest
from ir_helpers import main_of
from onnx import TensorProto, helper, numpy_helper

from collage_xdsl.backends import compile_kernel, onnx_export
from collage_xdsl.backends.kernel import KernelCompileError
from collage_xdsl.frontend import import_onnx
from collage_xdsl.ir.interpreter import run_function

RNG = np.random.default_rng(0)


def _matmul_chain(width: int, layers: int) -> onnx.ModelProto:
    """x @ w0, relu, x @ w1, relu, ...: `layers` square weights of `width`."""
    nodes, weights, h = [], [], "x"
    for i in range(layers):
        w = RNG.standard_normal((width, width), dtype=np.float32) / np.float32(np.sqrt(width))
        weights.append(numpy_helper.from_array(w, f"w{i}"))
        nodes += [helper.make_node("MatMul", [h, f"w{i}"], [f"m{i}"]),
                  helper.make_node("Relu", [f"m{i}"], [f"r{i}"])]
        h = f"r{i}"
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info(h, TensorProto.FLOAT, [1, width])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_detached_initializers_are_external_references_laid_out_in_order():
    model = _matmul_chain(32, 2)
    model.graph.initializer.append(numpy_helper.from_array(np.array([1, 32]), "shape"))
    weights = onnx_export.detach_initializers(model, "weights.bin")
    assert list(weights) == ["w0", "w1"]  # the 16-byte shape stays inline
    offsets = []
    for tensor in model.graph.initializer[:2]:
        info = onnx.external_data_helper.ExternalDataInfo(tensor)
        assert tensor.data_location == TensorProto.EXTERNAL and not tensor.raw_data
        assert info.location == "weights.bin" and info.length == 32 * 32 * 4
        offsets.append(info.offset)
    assert offsets == [0, 32 * 32 * 4]
    assert model.graph.initializer[2].raw_data


@pytest.mark.parametrize("backend", ["onnxruntime", "openvino"])
def test_a_kernel_too_large_for_protobuf_runs_with_its_weights_beside_it(
        backend, monkeypatch):
    monkeypatch.setattr(onnx_export, "_GRAPH_ROOM", onnx_export._PROTOBUF_LIMIT)  # all "too large"
    hook = importlib.import_module(f"collage_xdsl.backends.{backend}.lowering")
    detached: list[str] = []

    def detach(model, location):
        weights = onnx_export.detach_initializers(model, location)
        detached.extend(weights)
        return weights

    monkeypatch.setattr(hook, "detach_initializers", detach)
    module = import_onnx(_matmul_chain(64, 3))
    main = main_of(module)
    x = RNG.standard_normal((1, 64), dtype=np.float32)
    kernel = compile_kernel(backend, main, threads=1)
    try:
        (got,) = kernel([x])
    finally:
        kernel.release()
    (want,) = run_function(main, [x])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert len(detached) == 3  # the three weights went beside the model


@pytest.fixture(scope="module")
def model_over_2gb(tmp_path_factory):
    """A 2.4 GB MatMul chain saved with its weights in an external-data file."""
    path = tmp_path_factory.mktemp("large") / "chain.onnx"
    onnx.save(_matmul_chain(12288, 4), path, save_as_external_data=True,
              all_tensors_to_one_file=True, location="chain.data")
    return path


@pytest.mark.full
@pytest.mark.parametrize("backend", ["onnxruntime", "openvino", "tvm"])
def test_a_model_over_2gb_runs_on_each_backend(model_over_2gb, backend):
    run = subprocess.run(
        [sys.executable, "-m", "collage_xdsl.tools.collage", "run", str(model_over_2gb),
         "--backends", backend, "--estimator", "mock", "--check"],
        capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "1 output(s) match onnxruntime" in run.stdout


def test_iree_refuses_a_kernel_over_its_weight_limit_in_one_line(monkeypatch):
    from collage_xdsl.backends.iree import lowering

    monkeypatch.setattr(lowering, "MAX_WEIGHT_BYTES", 3 * 64 * 64 * 4 - 1)
    main = main_of(import_onnx(_matmul_chain(64, 3)))
    with pytest.raises(KernelCompileError, match=r"^iree: kernel @main holds 0\.00 GiB of "
                       r"weights; this hook passes them inline in MLIR text and takes at most"):
        compile_kernel("iree", main, threads=1)
