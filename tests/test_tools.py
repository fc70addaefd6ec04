"""The command-line tools: `collage-opt` (xDSLOptMain with our dialects, passes and
`.onnx` frontend), `collage run` and the compile summary (`plan_line`); bad input is one
`error:` line and exit 1."""

from __future__ import annotations

import io
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.printer import Printer

from collage_xdsl.frontend import import_onnx
from collage_xdsl.ir.interpreter import run_module
from collage_xdsl.tools import collage, collage_opt
from collage_xdsl.tools import model as model_tools
from collage_xdsl.tools import run as run_tool

GOOD_MLIR = """
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = collage.relu %x : tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
"""

BAD_MLIR = """
func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %r = collage.transpose %x {perm = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %r : tensor<3x2xf32>
}
"""


def _tiny_model(path: Path) -> Path:
    """Gather(embedding, ids) -> MatMul -> Relu, plus an Equal of a bool input: one int,
    one float and one bool input, two outputs."""
    rng = np.random.default_rng(0)
    table = numpy_helper.from_array(rng.standard_normal((7, 4)).astype(np.float32), "table")
    weight = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "weight")
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["emb"], name="embed"),
        helper.make_node("Add", ["emb", "x"], ["sum"], name="add"),
        helper.make_node("MatMul", ["sum", "weight"], ["mm"], name="mm"),
        helper.make_node("Relu", ["mm"], ["y"], name="relu"),
        helper.make_node("Not", ["flag"], ["nflag"], name="not"),
    ]
    graph = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [5]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 4]),
         helper.make_tensor_value_info("flag", TensorProto.BOOL, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5, 3]),
         helper.make_tensor_value_info("nflag", TensorProto.BOOL, [2])],
        [table, weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


TWO_BLOCKS_MLIR = """
func.func @main(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %0 = collage.relu %x : tensor<1x8xf32>
  cf.br ^bb1
^bb1:
  func.return %0 : tensor<1x8xf32>
}
"""


@pytest.fixture
def tiny(tmp_path) -> Path:
    return _tiny_model(tmp_path / "tiny.onnx")


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    good, bad = tmp_path / "good.mlir", tmp_path / "bad.mlir"
    good.write_text(GOOD_MLIR)
    bad.write_text(BAD_MLIR)
    return {"good": good, "bad": bad}


def _no_traceback(err: str) -> None:
    assert err.startswith("error: ")
    assert "Traceback" not in err


# ---------------------------------------------------------------------------
# collage-opt
# ---------------------------------------------------------------------------


def test_opt_prints_mlir(files, capsys):
    assert collage_opt.main([str(files["good"])]) == 0
    assert "collage.relu %x : tensor<2x3xf32>" in capsys.readouterr().out


def test_opt_reads_onnx(tiny, capsys):
    assert collage_opt.main([str(tiny)]) == 0
    out = capsys.readouterr().out
    assert "func.func @main(%ids: tensor<5xi64>, %x: tensor<5x4xf32>, %flag: tensor<2xi1>)" in out
    assert "collage.gather" in out and "collage.matmul" in out and "collage.not" in out


def test_opt_registers_our_passes_and_xdsls(files, capsys):
    tool = collage_opt.CollageOptMain([str(files["good"])])
    assert "collage-outline" in tool.available_passes
    assert "canonicalize" in tool.available_passes
    assert {"collage", "func", "builtin", "arith"} <= set(tool.ctx.registered_dialect_names)


def test_opt_verifier_error_names_file_and_op(files, capsys):
    assert collage_opt.main([str(files["bad"])]) == 1
    err = capsys.readouterr().err
    _no_traceback(err)
    assert "bad.mlir: perm [1, 1] is not a permutation of rank 2" in err
    assert '%r = "collage.transpose"(%x)' in err


def test_opt_verify_diagnostics_exits_0(files, capsys):
    assert collage_opt.main([str(files["bad"]), "--verify-diagnostics"]) == 0
    assert "perm [1, 1] is not a permutation" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["{dir}/missing.mlir"], "No such file"),
    (["{dir}/good.mlir", "-p", "no-such-pass"], "Unrecognized passes: ['no-such-pass']"),
    (["{dir}/good.mlir", "-p", "collage-outline{"], "Error parsing pass pipeline"),
    (["{dir}/notes.txt"], "Unrecognized file extension 'txt'"),
    (["{dir}/binary.mlir"], "binary.mlir: not a UTF-8 text module (byte 1 is 0xff)"),
    (["{dir}/blocks.mlir", "-p", "collage-partition{estimator=mock}"],
     "function @main has 2 blocks; a dataflow graph needs exactly one"),
])
def test_opt_errors(files, capsys, argv, message):
    (files["good"].parent / "notes.txt").write_text("hello")
    (files["good"].parent / "binary.mlir").write_bytes(b"\x08\xff\x01")
    (files["good"].parent / "blocks.mlir").write_text(TWO_BLOCKS_MLIR)
    argv = [a.replace("{dir}", str(files["good"].parent)) for a in argv]
    assert collage_opt.main(argv) == 1
    err = capsys.readouterr().err
    _no_traceback(err)
    assert message in err


def test_opt_empty_onnx_file_is_not_a_model(tmp_path, capsys):
    (tmp_path / "empty.onnx").write_bytes(b"")
    assert collage_opt.main([str(tmp_path / "empty.onnx")]) == 1
    err = capsys.readouterr().err
    _no_traceback(err)
    assert "empty.onnx: not an ONNX model: it has no graph (the file is empty)" in err


def test_opt_bad_onnx_names_file_and_node(tmp_path, capsys):
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x01\x12\x00nonsense")
    assert collage_opt.main([str(garbage)]) == 1
    err = capsys.readouterr().err
    _no_traceback(err)
    assert "garbage.onnx: not a readable ONNX model" in err

    node = helper.make_node("Frobnicate", ["a"], ["b"], name="frob")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])])
    onnx.save(helper.make_model(graph), tmp_path / "frob.onnx")
    assert collage_opt.main([str(tmp_path / "frob.onnx")]) == 1
    err = capsys.readouterr().err
    _no_traceback(err)
    assert "frob.onnx" in err and "node 'frob' (Frobnicate)" in err


def test_opt_loads_onnx_only_for_an_onnx_input(tmp_path):
    """collage-opt on .mlir (every lit test) does not pay for importing onnx."""
    (tmp_path / "m.mlir").write_text("func.func @f() {\n  func.return\n}\n")
    check = ("import sys; from collage_xdsl.tools.collage_opt import main; "
             f"assert main([{str(tmp_path / 'm.mlir')!r}]) == 0; "
             "assert 'onnx' not in sys.modules, 'onnx imported'")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_opt_help_lists_our_passes_and_their_options(capsys):
    with pytest.raises(SystemExit):
        collage_opt.main(["--help"])
    out = capsys.readouterr().out
    for name in ("collage-candidates", "collage-partition", "collage-outline", "collage-refine",
                 "collage-assign", "collage-fuse-ops", "collage-partition-for"):
        assert f"\n  {name}\n" in out
    assert "refine-budget=0.0" in out and "Orders refinement's mutations." in out
    assert "backend-options=" in out and "test: ops=relu,add" in out
    assert "convert-linalg-to-loops" not in out  # xDSL's passes: --list-passes
    assert "-v, --version         print the version and exit" in out


def test_opt_lists_every_pass(capsys):
    with pytest.raises(SystemExit):
        collage_opt.main(["--list-passes"])
    names = capsys.readouterr().out.split()
    assert {"collage-partition", "canonicalize", "convert-linalg-to-loops"} <= set(names)


def test_opt_version(capsys):
    with pytest.raises(SystemExit):
        collage_opt.main(["--version"])
    assert capsys.readouterr().out.startswith("collage-opt 0.")


# ---------------------------------------------------------------------------
# collage run
# ---------------------------------------------------------------------------


def test_run_and_check_onnx(tiny, capsys):
    assert collage.main(["run", str(tiny), "--check"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("y: shape=[5, 3] dtype=float32 min=")
    assert lines[1].startswith("nflag: shape=[2] dtype=bool")
    assert lines[2].startswith("check: 2 output(s) match onnxruntime")


def test_run_is_seeded(tiny, capsys):
    outs = []
    for seed in (1, 1, 2):
        assert collage.main(["run", str(tiny), "--seed", str(seed)]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] != outs[2]


def test_random_inputs_fit_their_uses(tiny):
    model = model_tools.load_model(tiny)
    ids, x, flag = model_tools.random_inputs(model, seed=0)
    assert ids.dtype == np.int64 and ids.min() >= 0 and ids.max() < 7
    assert x.dtype == np.float32 and x.shape == (5, 4)
    assert flag.dtype == np.bool_


def test_run_inputs_and_output_files(tiny, tmp_path, capsys):
    ids = np.array([6, 0, 1, 2, 6])
    x = np.ones((5, 4), np.float32)
    flag = np.array([True, False])
    np.savez(tmp_path / "named.npz", ids=ids, x=x, flag=flag)
    np.savez(tmp_path / "positional.npz", ids, x, flag)
    expected = run_module(import_onnx(tiny), [ids, x, flag])
    for inputs in ("named.npz", "positional.npz"):
        out = tmp_path / f"out_{inputs}"
        assert collage.main(["run", str(tiny), "--inputs", str(tmp_path / inputs),
                             "--output", str(out), "--check"]) == 0
        saved = np.load(out)
        assert saved.files == ["y", "nflag"]
        np.testing.assert_array_equal(saved["y"], expected[0])
        np.testing.assert_array_equal(saved["nflag"], ~flag)
    assert collage.main(["run", str(tiny), "--output", str(tmp_path / "outputs")]) == 0
    assert np.load(tmp_path / "outputs").files == ["y", "nflag"]  # the name as given
    capsys.readouterr()


def test_run_mlir(files, capsys):
    assert collage.main(["run", str(files["good"])]) == 0
    assert capsys.readouterr().out.startswith("output0: shape=[2, 3] dtype=float32 min=0 ")


def test_check_reports_a_mismatch(tiny, capsys, monkeypatch):
    real = model_tools.onnxruntime_outputs
    monkeypatch.setattr(run_tool, "onnxruntime_outputs",
                        lambda *a: [o + 1 if o.dtype == np.float32 else o for o in real(*a)])
    assert collage.main(["run", str(tiny), "--check"]) == 1
    err = capsys.readouterr().err
    assert "error: mismatch: y: 15 of 15 elements differ from onnxruntime" in err
    assert "nflag" not in err


def test_check_when_onnxruntime_cannot_load_the_model(tiny, capsys):
    """A model newer than this onnxruntime: our outputs print, the check fails clearly."""
    model = onnx.load(tiny)
    model.ir_version = 99
    onnx.save(model, tiny)
    assert collage.main(["run", str(tiny), "--check"]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("y: shape=[5, 3]")
    _no_traceback(err)
    assert f"{tiny}: --check: onnxruntime cannot run the model as the reference: " in err
    assert "IR version" in err


def test_summary_keeps_the_shape_of_scalars_and_strided_arrays():
    assert model_tools.summary("s", np.float32(2.5)).startswith("s: shape=[] dtype=float32 min=2.5")
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    line = model_tools.summary("t", a.T)
    assert line.startswith("t: shape=[3, 2] dtype=int64 min=0 max=5 mean=2.5")
    assert line.endswith(f"crc32={zlib.crc32(np.ascontiguousarray(a.T).tobytes()):08x}")


def test_compare():
    a = np.array([1.0, 2.0], np.float32)
    assert model_tools.compare("o", a, a + 1e-7, 1e-4, 1e-5) is None
    assert "1 of 2 elements differ" in model_tools.compare("o", a, np.array([1, 3], np.float32),
                                                       1e-4, 1e-5)
    assert "got float32[2], onnxruntime gives float32[1, 2]" in model_tools.compare(
        "o", a, a[None], 1e-4, 1e-5)
    assert model_tools.compare("o", np.array([1, 2]), np.array([1, 3]), 1, 1) is not None


@pytest.mark.parametrize("argv, message", [
    (["run", "{dir}/missing.onnx"], "missing.onnx: no such file"),
    (["run", "{dir}/bad.mlir"], "bad.mlir: perm [1, 1] is not a permutation of rank 2"),
    (["run", "{dir}/good.mlir", "--check"], "--check compares with onnxruntime"),
    (["run", "{dir}/good.mlir", "--inputs", "{dir}/none.npz"], "none.npz: cannot read inputs"),
    (["run", "{dir}/good.mlir", "--inputs", "{dir}/notes.txt"],
     "notes.txt: cannot read inputs: not a NumPy .npz archive"),
    (["run", "{dir}/good.mlir", "--inputs", "{dir}/one.npy"],
     "one.npy: cannot read inputs: a single .npy array; inputs come in an .npz archive"),
    (["run", "{dir}/good.mlir", "--inputs", "{dir}/empty.npz"],
     "empty.npz: cannot read inputs: not a NumPy .npz archive"),
    (["run", "{dir}/good.mlir", "--inputs", "{dir}/objects.npz"],
     "objects.npz: cannot read input 'x' (x): Object arrays cannot be loaded"),
    (["run", "{dir}/good.mlir", "--seed", "-1"], "--seed must be >= 0, got -1"),
    (["run", "{dir}/good.mlir", "--threads", "0"], "--threads must be between 1 and the"),
    (["run", "{dir}/good.mlir", "--threads", "100000"], "--threads must be between 1 and the"),
    (["run", "{dir}/good.mlir", "--atol", "nan"], "--atol must be a number >= 0, got nan"),
    (["run", "{dir}/good.mlir", "--inputs", "{dir}/wrong.npz"], "no array for input 'x'"),
    (["run", "{dir}/good.mlir", "--inputs", "{dir}/shape.npz"], "expected float32[2, 3]"),
    (["run", "{dir}/notes.txt"], "expected an .onnx model or an .mlir module"),
    (["run", "{dir}/good.mlir", "--input-shape", "x:2,3"],
     "good.mlir: --input-shape fixes an ONNX model's symbolic dimensions"),
    (["run", "{dir}/good.mlir", "--output", "{dir}"], "cannot write it: Is a directory"),
    (["run", "{dir}/binary.mlir"], "binary.mlir: not a UTF-8 text module (byte 1 is 0xff)"),
    (["run", "{dir}/blocks.mlir"], "blocks.mlir: @main has 2 blocks; collage runs functions"),
    (["run", "{dir}/dynamic.mlir"],
     "dynamic.mlir: @main argument %x: tensor<?x3xf32> has a dynamic dimension"),
    (["run", "{dir}/huge.mlir"],
     "@main argument %x: Unable to allocate"),
])
def test_run_errors(files, capsys, argv, message):
    d = files["good"].parent
    (d / "notes.txt").write_text("hello")
    np.savez(d / "wrong.npz", y=np.zeros((2, 3), np.float32))
    np.save(d / "one.npy", np.zeros((2, 3), np.float32))
    (d / "empty.npz").write_bytes(b"")
    (d / "binary.mlir").write_bytes(b"\x08\xff\x01")
    (d / "blocks.mlir").write_text(TWO_BLOCKS_MLIR)
    (d / "dynamic.mlir").write_text(GOOD_MLIR.replace("2x3", "?x3"))
    (d / "huge.mlir").write_text(GOOD_MLIR.replace("2x3", "100000x100000x100000"))
    np.savez(d / "objects.npz", x=np.array([{"a": 1}], dtype=object))
    np.savez(d / "shape.npz", x=np.zeros((3, 2), np.float32))
    assert collage.main([a.replace("{dir}", str(d)) for a in argv]) == 1
    err = capsys.readouterr().err
    _no_traceback(err)
    assert message in err


def test_resnet50_prints_small():
    path = Path(onnx.__file__).parent / "backend/test/data/light/light_resnet50.onnx"
    module = import_onnx(path)
    for generic in (False, True):
        out = io.StringIO()
        Printer(stream=out, print_generic_format=generic).print_op(module)
        assert len(out.getvalue()) < 200_000


def test_compile_summary_says_when_refinement_changed_the_plan(example_module):
    from collage_xdsl.tools.options import plan_line

    module = example_module("mlp")
    report = {"functions": [{"total_cost": 1e-3, "estimated_seconds": 1e-3}]}
    changed = {"functions": [{"function": "main", "changed": True, "ratio": 0.84}]}
    same = {"functions": [{"function": "main", "changed": False, "ratio": 1.0}]}
    summary = plan_line(module, report, changed, 1.0)
    assert summary == ("0 kernels (), estimated 1 ms for the search's plan, refined @main to "
                       "0.84x of the search's plan, partitioned in 1.00 s")
    assert "refined" not in plan_line(module, report, same, 1.0)


def test_compile_summary_counts_kernel_calls_and_shared_kernels():
    from collage_xdsl.dialects import ir_context
    from xdsl.parser import Parser

    from collage_xdsl.tools.options import plan_line

    module = Parser(ir_context(), """
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %a = func.call @collage_tvm_relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
      %b = func.call @collage_tvm_relu(%a) : (tensor<4xf32>) -> tensor<4xf32>
      %c = func.call @collage_openvino_sigmoid(%b) : (tensor<4xf32>) -> tensor<4xf32>
      func.return %c : tensor<4xf32>
    }
    func.func private @collage_tvm_relu(%x: tensor<4xf32>) -> tensor<4xf32>
        attributes {collage.backend = "tvm", collage.kernel} {
      %r = collage.relu %x : tensor<4xf32>
      func.return %r : tensor<4xf32>
    }
    func.func private @collage_openvino_sigmoid(%x: tensor<4xf32>) -> tensor<4xf32>
        attributes {collage.backend = "openvino", collage.kernel} {
      %r = collage.sigmoid %x : tensor<4xf32>
      func.return %r : tensor<4xf32>
    }""").parse_module()
    unknown = {"functions": [{"total_cost": None, "estimated_seconds": None}]}
    assert plan_line(module, unknown, None, 1.0) == (
        "3 kernels (openvino 1, tvm 2), 2 distinct, estimated unknown, partitioned in 1.00 s")
