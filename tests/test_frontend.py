"""The ONNX frontend: light model-zoo models, example models, folding, opset variants, errors."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from collage_xdsl.dialects import ir_context
from collage_xdsl.dialects.collage import get_ints
from example_models import MODELS, duplicate_computation_model, f32, make, make_models
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer

from collage_xdsl.frontend import FrontendError, import_onnx
from collage_xdsl.ir.interpreter import run_module

LIGHT_DIR = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
LIGHT = sorted(p.name for p in LIGHT_DIR.glob("light_*.onnx"))

def ops(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("collage.")]


def reparse(text: str) -> ModuleOp:
    return Parser(ir_context(), text).parse_module()


def printed(module: ModuleOp, generic: bool) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    return out.getvalue()


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def random_feeds(model: onnx.ModelProto) -> list[np.ndarray]:
    """Seeded inputs for the example models: 0/1 integers (token ids, masks), else floats."""
    rng = np.random.default_rng(0)
    return [
        rng.integers(0, 2, [d.dim_value for d in i.type.tensor_type.shape.dim])
        if i.type.tensor_type.elem_type == TensorProto.INT64
        else rng.random([d.dim_value for d in i.type.tensor_type.shape.dim], dtype=np.float32)
        for i in model.graph.input
    ]


def check_against_onnxruntime(model: onnx.ModelProto, *inputs: np.ndarray) -> ModuleOp:
    """Import, verify, and compare the interpreter's outputs with ONNX Runtime's."""
    module = import_onnx(model)
    module.verify()
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    want = session.run(None, dict(zip(names, inputs)))
    got = run_module(module, list(inputs))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    return module


# ---------------------------------------------------------------------------
# Whole models
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", LIGHT)
def test_light_model_imports_prints_and_reparses(name):
    module = import_onnx(LIGHT_DIR / name)
    module.verify()
    func = module.body.block.first_op
    assert func.sym_name.data == "main" and len(func.args) == 1
    assert "collage.conv2d" in ops(module)
    for generic in (False, True):
        again = reparse(printed(module, generic))
        again.verify()
        assert again.is_structurally_equivalent(module)


def test_light_model_count():
    assert len(LIGHT) == 9


@pytest.mark.parametrize("name", MODELS)
def test_example_model_imports_and_matches_onnxruntime(name, tmp_path):
    path = make_models.ensure_model(name, tmp_path)
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    assert model == make_models.make_model(name), "models must be deterministic"
    module = check_against_onnxruntime(model, *random_feeds(model))
    assert "collage.matmul" in ops(module)


def test_transformer_encoder_lowering(example_module):
    names = ops(example_module("transformer_encoder"))
    assert names.count("collage.layer_norm") == 5
    assert names.count("collage.softmax") == 2
    assert names.count("collage.erf") == 2
    assert "collage.gather" in names and "collage.cast" in names


def test_make_models_cli(tmp_path):
    make_models.main(["--out", str(tmp_path), "--only", "mlp"])
    assert [p.name for p in tmp_path.iterdir()] == ["mlp.onnx"]


# ---------------------------------------------------------------------------
# Constants and folding
# ---------------------------------------------------------------------------


def test_shape_chain_folds_into_one_reshape():
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape: only the reshape remains."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"]),
    ]
    inits = [i64("zero", 0), i64("axes", [0]), i64("minus1", [-1])]
    model = make(nodes, [f32("x", [2, 3, 4])], [f32("y", [2, 12])], 13, inits)
    module = check_against_onnxruntime(model, np.ones((2, 3, 4), np.float32))
    assert ops(module) == ["collage.reshape"]


def test_constant_nodes_fold_and_dropout_is_identity():
    nodes = [
        helper.make_node("ConstantOfShape", ["shape"], ["c"],
                         value=helper.make_tensor("v", TensorProto.FLOAT, [1], [2.0])),
        helper.make_node("Constant", [], ["k"], value_float=3.0),
        helper.make_node("Mul", ["c", "k"], ["ck"]),
        helper.make_node("Identity", ["x"], ["xi"]),
        helper.make_node("Dropout", ["xi", "ratio"], ["xd", "mask"]),
        helper.make_node("Add", ["xd", "ck"], ["y"]),
        helper.make_node("Cast", ["mask"], ["m"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["y", "m"], ["z"]),
    ]
    ratio = numpy_helper.from_array(np.array(0.3, np.float32), "ratio")
    model = make(nodes, [f32("x", [2, 3])], [f32("z", [2, 3])], 12, [i64("shape", [2, 3]), ratio])
    module = check_against_onnxruntime(model, np.arange(6, dtype=np.float32).reshape(2, 3))
    assert ops(module) == ["collage.constant", "collage.add", "collage.constant", "collage.mul"]


def test_duplicate_computation_is_merged():
    """Equal weights become one constant, and the ops that read them one op each; the
    function returns the one ReLU of x twice."""
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    module = check_against_onnxruntime(duplicate_computation_model(), x)
    assert sorted(ops(module)) == sorted(
        ["collage.constant", "collage.conv2d"] * 2 + ["collage.relu"] * 3 + ["collage.add"])
    ret = module.body.block.first_op.body.block.last_op
    assert ret.operands[2] is ret.operands[3]
    (add,) = [op for op in module.walk() if op.name == "collage.add"]
    assert add.operands[0] is add.operands[1]


def test_initializer_listed_as_input_is_a_constant():
    w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(3, 2), "w")
    model = make([helper.make_node("MatMul", ["x", "w"], ["y"])],
                 [f32("x", [4, 3]), f32("w", [3, 2])], [f32("y", [4, 2])], 9, [w])
    module = check_against_onnxruntime(model, np.ones((4, 3), np.float32))
    func = module.body.block.first_op
    assert [a.name_hint for a in func.args] == ["x"]
    assert ops(module) == ["collage.constant", "collage.matmul"]


def test_argument_names_are_sanitized():
    model = make([helper.make_node("Relu", ["0/data:x"], ["y"])],
                 [f32("0/data:x", [2])], [f32("y", [2])], 13)
    func = import_onnx(model).body.block.first_op
    assert func.args[0].name_hint == "_0_data_x"


def test_external_data_model_loads(tmp_path):
    w = numpy_helper.from_array(np.ones((64, 64), np.float32), "w")
    model = make([helper.make_node("MatMul", ["x", "w"], ["y"])],
                 [f32("x", [1, 64])], [f32("y", [1, 64])], 13, [w])
    path = tmp_path / "ext.onnx"
    onnx.save_model(model, path, save_as_external_data=True, location="ext.bin",
                    size_threshold=0)
    assert (tmp_path / "ext.bin").exists()
    (y,) = run_module(import_onnx(path), [np.ones((1, 64), np.float32)])
    np.testing.assert_allclose(y, np.full((1, 64), 64.0))


# ---------------------------------------------------------------------------
# Opset variants and lowering choices
# ---------------------------------------------------------------------------

X = np.arange(2 * 6 * 4, dtype=np.float32).reshape(2, 6, 4) / 10 - 2


@pytest.mark.parametrize("opset, split_attr, split_input, num_outputs, outs, dim", [
    (11, [2, 4], None, None, 2, 6),
    (11, None, None, None, 3, 6),
    (13, None, [1, 2, 3], None, 3, 6),
    (18, None, None, 4, 4, 7),  # ceil-sized chunks, the last one smaller: 2, 2, 2, 1
])
def test_split_variants(opset, split_attr, split_input, num_outputs, outs, dim):
    attrs = {"axis": 1}
    inputs, inits = ["x"], []
    if split_attr:
        attrs["split"] = split_attr
    if split_input:
        inputs.append("split")
        inits.append(i64("split", split_input))
    if num_outputs:
        attrs["num_outputs"] = num_outputs
    names = [f"y{i}" for i in range(outs)]
    node = helper.make_node("Split", inputs, names, **attrs)
    model = make([node], [f32("x", [2, dim, 4])], [f32(n, None) for n in names], opset, inits)
    x = np.arange(2 * dim * 4, dtype=np.float32).reshape(2, dim, 4)
    module = check_against_onnxruntime(model, x)
    assert ops(module) == ["collage.split"]


BIG = 2**63 - 1


@pytest.mark.parametrize("opset, starts, ends, axes, steps", [
    (9, [1, -1], [5, 0], [1, 2], None),
    (9, [1, 0], [BIG, -1], None, None),
    (13, [5, -1], [0, -100], [1, -1], [-2, -1]),
    (13, [BIG, 1], [-BIG - 1, BIG], [1, 2], [-1, 2]),
])
def test_slice_variants(opset, starts, ends, axes, steps):
    if opset == 9:
        attrs = {"starts": starts, "ends": ends, **({"axes": axes} if axes else {})}
        node, inits = helper.make_node("Slice", ["x"], ["y"], **attrs), []
    else:
        node = helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"])
        inits = [i64("s", starts), i64("e", ends), i64("a", axes), i64("st", steps)]
    model = make([node], [f32("x", [2, 6, 4])], [f32("y", None)], opset, inits)
    module = check_against_onnxruntime(model, X)
    assert ops(module) == ["collage.slice"]
    (op,) = [op for op in module.walk() if op.name == "collage.slice"]
    assert all(abs(v) <= 7 for v in get_ints(op.starts) + get_ints(op.ends))  # dims <= 6


@pytest.mark.parametrize("opset, shape, allowzero, expected", [
    (9, [0, -1], 0, [2, 24]),
    (14, [4, 0, -1], 0, [4, 6, 2]),
    (14, [3, -1, 8], 1, [3, 2, 8]),
])
def test_reshape_variants(opset, shape, allowzero, expected):
    attrs = {"allowzero": allowzero} if opset >= 14 else {}
    node = helper.make_node("Reshape", ["x", "shape"], ["y"], **attrs)
    model = make([node], [f32("x", [2, 6, 4])], [f32("y", None)], opset, [i64("shape", shape)])
    module = check_against_onnxruntime(model, X)
    assert ops(module) == ["collage.reshape"]
    assert list(module.body.block.first_op.function_type.outputs.data[0].get_shape()) == expected


@pytest.mark.parametrize("opset, axis, expected_ops", [
    (11, 1, ["collage.reshape", "collage.softmax", "collage.reshape"]),  # coerced to 2-D
    (11, 2, ["collage.softmax"]),
    (13, 1, ["collage.softmax"]),
])
def test_softmax_variants(opset, axis, expected_ops):
    node = helper.make_node("Softmax", ["x"], ["y"], axis=axis)
    model = make([node], [f32("x", [2, 6, 4])], [f32("y", [2, 6, 4])], opset)
    assert ops(check_against_onnxruntime(model, X)) == expected_ops


def test_softmax_before_opset_13_with_only_ones_after_the_axis_is_along_the_axis():
    """SqueezeNet 1.0's Softmax (opset 8) over N x 1000 x 1 x 1: no Reshape pair."""
    node = helper.make_node("Softmax", ["x"], ["y"], axis=1)
    model = make([node], [f32("x", [2, 6, 1, 1])], [f32("y", [2, 6, 1, 1])], 11)
    module = check_against_onnxruntime(model, X.reshape(2, 24, 1, 1)[:, :6].copy())
    (softmax,) = [op for op in module.walk() if op.name == "collage.softmax"]
    assert ops(module) == ["collage.softmax"]
    assert softmax.attributes["axis"].value.data == -3


@pytest.mark.parametrize("opset, bounds", [
    (9, {"min": -1.0, "max": 0.5}),
    (9, {"max": 0.5}),
    (13, {"min": -1.0, "max": 0.5}),
    (13, {"min": -1.0}),
])
def test_clip_variants(opset, bounds):
    if opset < 11:
        node, inits = helper.make_node("Clip", ["x"], ["y"], **bounds), []
    else:
        names = [n if n in bounds else "" for n in ("min", "max")]
        node = helper.make_node("Clip", ["x", *names], ["y"])
        inits = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in bounds.items()]
    model = make([node], [f32("x", [2, 6, 4])], [f32("y", [2, 6, 4])], opset, inits)
    module = check_against_onnxruntime(model, X)
    clip = next(op for op in module.walk() if op.name == "collage.clip")
    assert set(clip.attributes) == set(bounds)


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
def test_conv_auto_pad_and_bias(auto_pad):
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 2)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], strides=[2, 1], auto_pad=auto_pad)
    model = make([node], [f32("x", [1, 3, 7, 6])], [f32("y", None)], 11, [w, b])
    module = check_against_onnxruntime(model, rng.random((1, 3, 7, 6), dtype=np.float32))
    assert ops(module) == ["collage.constant", "collage.conv2d", "collage.constant", "collage.add"]


def test_gemm_transposes_and_scales():
    rng = np.random.default_rng(2)
    b = numpy_helper.from_array(rng.standard_normal((5, 4)).astype(np.float32), "b")
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, transB=1,
                            alpha=0.5, beta=2.0)
    model = make([node], [f32("a", [4, 3]), f32("c", [3, 5])], [f32("y", [3, 5])], 13, [b])
    module = check_against_onnxruntime(
        model, rng.random((4, 3), dtype=np.float32), rng.random((3, 5), dtype=np.float32)
    )
    assert ops(module) == [
        "collage.transpose", "collage.constant", "collage.matmul", "collage.constant",
        "collage.mul", "collage.constant", "collage.mul", "collage.add",
    ]


@pytest.mark.parametrize("node, opset", [
    (helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                      pads=[1, 1, 1, 1], ceil_mode=1), 12),
    (helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 3], strides=[2, 2],
                      pads=[1, 0, 1, 1], count_include_pad=1), 11),
    (helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], auto_pad="SAME_UPPER",
                      strides=[2, 2]), 11),
    (helper.make_node("GlobalAveragePool", ["x"], ["y"]), 11),
    (helper.make_node("LRN", ["x"], ["y"], size=3, alpha=0.001), 11),
    (helper.make_node("Flatten", ["x"], ["y"], axis=2), 11),
    (helper.make_node("Flatten", ["x"], ["y"], axis=-1), 13),
    (helper.make_node("Flatten", ["x"], ["y"], axis=4), 13),
    (helper.make_node("Transpose", ["x"], ["y"]), 11),
    (helper.make_node("LeakyRelu", ["x"], ["y"], alpha=0.2), 11),
    (helper.make_node("HardSigmoid", ["x"], ["y"], alpha=0.3), 9),
    (helper.make_node("HardSwish", ["x"], ["y"]), 14),
    (helper.make_node("Mish", ["x"], ["y"]), 18),
    (helper.make_node("Elu", ["x"], ["y"], alpha=0.5), 11),
    (helper.make_node("Softplus", ["x"], ["y"]), 13),
    (helper.make_node("Selu", ["x"], ["y"]), 9),
    (helper.make_node("PRelu", ["x", "slope"], ["y"]), 16),
    (helper.make_node("Gelu", ["x"], ["y"], approximate="tanh"), 20),
    (helper.make_node("ReduceMean", ["x"], ["y"], axes=[2, 3], keepdims=0), 13),
    (helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=1), 13),
    (helper.make_node("ReduceMax", ["x", "axes"], ["y"]), 18),
    (helper.make_node("Pad", ["x", "pads", "val"], ["y"]), 13),
    (helper.make_node("Pad", ["x"], ["y"], pads=[0, 0, 1, 0, 0, 2, 0, 1], value=1.5), 9),
    (helper.make_node("Squeeze", ["x", "axes"], ["y"]), 13),
    (helper.make_node("Unsqueeze", ["x"], ["y"], axes=[0, -1]), 11),
    (helper.make_node("Gather", ["x", "idx"], ["y"], axis=1), 13),
    (helper.make_node("Expand", ["x", "shape"], ["y"]), 13),
    (helper.make_node("Sum", ["x", "x", "x"], ["y"]), 13),
    (helper.make_node("Max", ["x", "x"], ["y"]), 13),
])
def test_single_node_matches_onnxruntime(node, opset):
    rng = np.random.default_rng(3)
    consts = {
        "axes": i64("axes", [1] if node.op_type == "Squeeze" else [1, 3]),
        "pads": i64("pads", [0, 1, 0, 2, 0, 0, 1, 1]),
        "val": numpy_helper.from_array(np.array(0.5, np.float32), "val"),
        "idx": i64("idx", [[2, 0], [1, 1]]),
        "shape": i64("shape", [2, 1, 3, 4, 5]),
        "slope": numpy_helper.from_array(np.array([[[0.1]], [[-0.5]], [[2.0]]], np.float32),
                                         "slope"),
    }
    shape = [2, 1, 4, 5] if node.op_type == "Squeeze" else [1, 3, 4, 5]
    inits = [consts[n] for n in node.input if n in consts]
    model = make([node], [f32("x", shape)], [f32("y", None)], opset, inits)
    check_against_onnxruntime(model, rng.standard_normal(shape).astype(np.float32))


def test_elementwise_and_comparison_ops():
    chain = ["Abs", "Sqrt", "Reciprocal", "Log", "Exp", "Sigmoid", "Tanh", "Erf", "Neg"]
    nodes = [helper.make_node(op, [f"u{i}" if i else "x"], [f"u{i + 1}"])
             for i, op in enumerate(chain)]
    u = f"u{len(chain)}"
    nodes += [
        helper.make_node("Pow", [u, "two"], ["sq"]),
        helper.make_node("Less", ["x", "zero"], ["neg"]),
        helper.make_node("Greater", ["x", "zero"], ["pos"]),
        helper.make_node("Equal", ["neg", "pos"], ["zero_mask"]),
        helper.make_node("Not", ["zero_mask"], ["nonzero"]),
        helper.make_node("Where", ["nonzero", "sq", "x"], ["w"]),
        helper.make_node("Sub", ["w", "x"], ["d"]),
        helper.make_node("Div", ["d", "three"], ["y"]),
    ]
    inits = [i64("two", 2), numpy_helper.from_array(np.zeros(1, np.float32), "zero"),
             numpy_helper.from_array(np.full(4, 3.0, np.float32), "three")]
    model = make(nodes, [f32("x", [3, 4])], [f32("y", [3, 4])], 13, inits)
    x = np.array([[0.5, -1.0, 0.0, 2.0]] * 3, np.float32)
    names = ops(check_against_onnxruntime(model, x))
    for op in ("pow", "less", "greater", "equal", "not", "where", "sub", "div", "erf"):
        assert f"collage.{op}" in names


def test_layer_norm_without_bias_and_batch_norm():
    rng = np.random.default_rng(4)
    arrays = {n: rng.random(3).astype(np.float32) + 0.5 for n in ("s", "b", "m", "v", "g")}
    inits = [numpy_helper.from_array(a, n) for n, a in arrays.items()]
    nodes = [
        helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["bn"], epsilon=1e-3),
        helper.make_node("Transpose", ["bn"], ["t"], perm=[0, 2, 3, 1]),
        helper.make_node("LayerNormalization", ["t", "g"], ["y"], axis=-1),
    ]
    model = make(nodes, [f32("x", [1, 3, 4, 5])], [f32("y", [1, 4, 5, 3])], 17, inits)
    module = check_against_onnxruntime(model, rng.random((1, 3, 4, 5), dtype=np.float32))
    assert "collage.batch_norm" in ops(module) and "collage.layer_norm" in ops(module)


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def test_unsupported_ops_are_all_listed():
    nodes = [
        helper.make_node("Hardmax", ["x"], ["h"], name="hm"),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Det", ["r"], ["y"]),
    ]
    model = make(nodes, [f32("x", [3, 3])], [f32("y", [])], 13)
    with pytest.raises(FrontendError) as e:
        import_onnx(model)
    assert "node 'hm' (Hardmax): unsupported ONNX op" in str(e.value)
    assert "node 'y' (Det): unsupported ONNX op" in str(e.value)


def test_unsupported_op_in_foreign_domain():
    node = helper.make_node("Fancy", ["x"], ["y"], name="f", domain="com.example")
    graph = helper.make_graph([node], "g", [f32("x", [2])], [f32("y", [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                     helper.make_opsetid("com.example", 1)])
    with pytest.raises(FrontendError, match=r"node 'f' \(com.example.Fancy\): unsupported"):
        import_onnx(model)


def test_symbolic_input_needs_input_shapes():
    model = make([helper.make_node("Relu", ["x"], ["y"])],
                 [f32("x", ["N", 3])], [f32("y", ["N", 3])], 13)
    with pytest.raises(FrontendError, match="input 'x' has symbolic dimension 'N'.*input_shapes"):
        import_onnx(model)
    module = import_onnx(model, input_shapes={"x": [4, 3]})
    assert str(module.body.block.first_op.function_type) == (
        "(tensor<4x3xf32>) -> tensor<4x3xf32>"
    )
    with pytest.raises(FrontendError, match=r"input_shapes gives \[4, 2\], the model declares "
                                            r"\['N', 3\]"):
        import_onnx(model, input_shapes={"x": [4, 2]})


def test_a_value_defined_twice_is_an_error():
    twice = [helper.make_node("Relu", ["x"], ["a"], name="r1"),
             helper.make_node("Sigmoid", ["x"], ["a"], name="r2")]
    with pytest.raises(FrontendError, match="node 'r2' \\(Sigmoid\\) defines 'a', which is "
                                            "already defined"):
        import_onnx(make(twice, [f32("x", [2])], [f32("a", [2])], 13))
    over_input = [helper.make_node("Relu", ["x"], ["x"], name="r")]
    with pytest.raises(FrontendError, match="node 'r' \\(Relu\\) defines 'x'"):
        import_onnx(make(over_input, [f32("x", [2])], [f32("x", [2])], 13))


def test_a_graph_without_outputs_is_an_error():
    with pytest.raises(FrontendError, match="g: the graph has no outputs"):
        import_onnx(make([], [f32("x", [2])], [], 13))


def test_negative_input_dimension_is_an_error():
    model = make([helper.make_node("Relu", ["x"], ["y"])], [f32("x", [-3, 8])], [f32("y", None)],
                 13)
    with pytest.raises(FrontendError, match=r"input 'x' has a negative dimension: \[-3, 8\]"):
        import_onnx(model)


def test_unresolvable_shape_names_the_node():
    nodes = [
        helper.make_node("Cast", ["s"], ["shape"], to=TensorProto.INT64),
        helper.make_node("Reshape", ["x", "shape"], ["y"], name="dyn"),
    ]
    model = make(nodes, [f32("x", [2, 3]), f32("s", [2])], [f32("y", None)], 13)
    with pytest.raises(FrontendError,
                       match=r"node 'dyn' \(Reshape\): input 'shape' must be a constant"):
        import_onnx(model)


def test_shape_mismatch_names_the_node():
    model = make([helper.make_node("Relu", ["x"], ["y"], name="r")],
                 [f32("x", [2, 3])], [f32("y", [3, 2])], 13)
    with pytest.raises(FrontendError,
                       match=r"shape inference failed.*\nnode 'r' \(Relu\): .*differ"):
        import_onnx(model)
    # ONNX cannot see through Abs and takes the declared [3, 2]; the folded shape says [6]
    nodes = [helper.make_node("Abs", ["s"], ["s2"]),
             helper.make_node("Reshape", ["x", "s2"], ["y"], name="rs")]
    model = make(nodes, [f32("x", [2, 3])], [f32("y", [3, 2])], 13, [i64("s", [6])])
    with pytest.raises(FrontendError, match=r"node 'rs' \(Reshape\): output 'y' has shape "
                                            r"\[6\], ONNX infers \[3, 2\]"):
        import_onnx(model)


def test_layout_limits_are_clear_errors():
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2, 2], name="p1")
    model = make([node], [f32("x", [1, 2, 4, 4, 4])], [f32("y", None)], 13)
    with pytest.raises(FrontendError, match=r"node 'p1' \(MaxPool\): only 2-D windows"):
        import_onnx(model)
    node = helper.make_node("LayerNormalization", ["x", "g"], ["y", "mean"], name="ln")
    model = make([node], [f32("x", [2, 3])], [f32("y", None), f32("mean", None)], 17,
                 [numpy_helper.from_array(np.ones(3, np.float32), "g")])
    with pytest.raises(FrontendError, match=r"node 'ln' \(LayerNormalization\): output 1"):
        import_onnx(model)


def test_dead_nodes_are_dropped():
    nodes = [helper.make_node("Hardmax", ["x"], ["dead"]), helper.make_node("Relu", ["x"], ["y"])]
    model = make(nodes, [f32("x", [2])], [f32("y", [2])], 13)
    assert ops(import_onnx(model)) == ["collage.relu"]


def test_unsupported_element_type_and_opset():
    x = helper.make_tensor_value_info("x", TensorProto.UINT16, [2])
    model = make([helper.make_node("Identity", ["x"], ["y"])], [x], [x], 13)
    model.graph.output[0].name = "y"
    with pytest.raises(FrontendError, match="input 'x': unsupported element type uint16"):
        import_onnx(model)
    model = make([helper.make_node("Relu", ["x"], ["y"])], [f32("x", [2])], [f32("y", [2])], 8)
    with pytest.raises(FrontendError, match=r"opset 8 is not supported \(need >= 9\)"):
        import_onnx(model)


def test_missing_file_is_a_frontend_error(tmp_path):
    with pytest.raises(FrontendError, match="no such file"):
        import_onnx(tmp_path / "missing.onnx")


def test_ops_are_named_after_their_onnx_node():
    """A node's ops take its name (or its first output's), `_N` written `.N`; the names
    survive printing and parsing."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="block_1/relu_2"),
             helper.make_node("Sigmoid", ["r"], ["y"])]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 17)])
    module = import_onnx(model)
    text = str(module)
    assert "%block_1_relu.2 = collage.relu %x" in text
    assert "%y = collage.sigmoid %block_1_relu.2" in text
    reparsed = Parser(ir_context(), text).parse_module()
    assert str(reparsed) == text


def external_data_model(folder: Path) -> Path:
    """A MatMul whose weight lives in `weights.bin` beside the model file."""
    w = numpy_helper.from_array(np.arange(16, dtype=np.float32).reshape(4, 4), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                              "g", [x], [y], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = folder / "model.onnx"
    onnx.save_model(model, path, save_as_external_data=True, location="weights.bin",
                    size_threshold=0)
    return path


def test_external_data_is_read_beside_the_model_whatever_the_working_directory(
        tmp_path, monkeypatch):
    from collage_xdsl.frontend import read_onnx
    from collage_xdsl.ir.interpreter import run_module

    path = external_data_model(tmp_path)
    monkeypatch.chdir("/")
    module, _ = read_onnx(path.read_bytes(), str(path))
    x = np.ones((1, 4), np.float32)
    (y,) = run_module(module, [x])
    np.testing.assert_allclose(y, x @ np.arange(16, dtype=np.float32).reshape(4, 4))


def test_a_missing_external_data_file_is_one_line_naming_it(tmp_path):
    from collage_xdsl.frontend import read_onnx

    path = external_data_model(tmp_path)
    (tmp_path / "weights.bin").unlink()
    with pytest.raises(FrontendError) as e:
        read_onnx(path.read_bytes(), str(path))
    assert str(e.value) == (f"{path}: tensor 'w' is stored in external-data file "
                            f"{tmp_path / 'weights.bin'}, which does not exist")


@pytest.mark.parametrize("opset", [17, 20, 22])
@pytest.mark.parametrize("name", MODELS)
def test_example_model_at_newer_opsets_matches_onnxruntime(name, opset, example_model):
    """The examples converted up to opset 22 by onnx's version converter (the light zoo
    is opset 9, the examples 13 and 17) import and compute what ONNX Runtime does."""
    from onnx import version_converter

    model = version_converter.convert_version(example_model(name), opset)
    model.ir_version = min(model.ir_version, 10)  # what onnxruntime 1.31 reads
    check_against_onnxruntime(model, *random_feeds(model))
