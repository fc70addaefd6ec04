"""Write one small ONNX model for the frontend lit tests: `python make_tiny.py NAME OUT.onnx`.

- cnn: Conv(+bias, SAME_UPPER) -> Relu -> MaxPool -> a Shape/Gather/Unsqueeze/Concat chain
  feeding Reshape -> Gemm(transB) -> Softmax (opset 11, coerced to 2-D).
- unsupported: Relu between two ops the frontend does not know (Hardmax, NonZero).
- symbolic: Relu over an input with a symbolic batch dimension.
- duplicates: Conv -> Relu twice over the same input, with equal weights under two names,
  and the two ReLUs added.
- activations: PRelu (per-channel slope) -> Elu -> Selu (defaults) -> HardSwish -> Mish
  -> Softplus -> HardSigmoid (opset 18).
- convtranspose: ConvTranspose(+bias, group 2, output_shape) -> Relu -> ConvTranspose
  (SAME_UPPER, stride 2).
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def cnn():
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3],
                         auto_pad="SAME_UPPER", name="conv"),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Shape", ["p"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n"], ["n1"], axes=[0]),
        helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
        helper.make_node("Reshape", ["p", "shape"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc", "fcb"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["y"], axis=1),
    ]
    inits = [
        const("w", rng.standard_normal((4, 3, 3, 3)).astype(np.float32)),
        const("b", rng.standard_normal(4).astype(np.float32)),
        const("zero", np.array(0, np.int64)),
        const("minus1", np.array([-1], np.int64)),
        const("fc", rng.standard_normal((10, 64)).astype(np.float32)),
        const("fcb", rng.standard_normal(10).astype(np.float32)),
    ]
    return nodes, [f32("x", [1, 3, 8, 8])], [f32("y", [1, 10])], 11, inits


def unsupported():
    nodes = [
        helper.make_node("Hardmax", ["x"], ["h"], name="hard"),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("NonZero", ["r"], ["y"], name="nonzero"),
    ]
    return nodes, [f32("x", [2, 4])], [helper.make_tensor_value_info("y", TensorProto.INT64,
                                                                       [2, "n"])], 13, []


def symbolic():
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    return nodes, [f32("x", ["batch", 4])], [f32("y", ["batch", 4])], 13, []


def duplicates():
    w = np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", f"w{i}"], [f"c{i}"], pads=[1, 1, 1, 1])
             for i in (1, 2)]
    nodes += [helper.make_node("Relu", [f"c{i}"], [f"r{i}"]) for i in (1, 2)]
    nodes.append(helper.make_node("Add", ["r1", "r2"], ["y"]))
    inits = [const("w1", w), const("w2", w.copy())]
    return nodes, [f32("x", [1, 3, 8, 8])], [f32("y", [1, 4, 8, 8])], 13, inits


def activations():
    chain = [("PRelu", {}), ("Elu", {"alpha": 0.5}), ("Selu", {}), ("HardSwish", {}),
             ("Mish", {}), ("Softplus", {}), ("HardSigmoid", {"alpha": 0.25})]
    names = ["x"] + [f"a{i}" for i in range(len(chain) - 1)] + ["y"]
    nodes = [helper.make_node(op, [names[i]] + (["slope"] if op == "PRelu" else []),
                              [names[i + 1]], **attrs) for i, (op, attrs) in enumerate(chain)]
    slope = const("slope", np.array([0.5, -1.0, 2.0], np.float32).reshape(3, 1, 1))
    return nodes, [f32("x", [1, 3, 4, 4])], [f32("y", [1, 3, 4, 4])], 18, [slope]


def convtranspose():
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("ConvTranspose", ["x", "w1", "b1"], ["c1"], strides=[2, 2],
                         output_shape=[8, 8], group=2, name="up1"),
        helper.make_node("Relu", ["c1"], ["r"]),
        helper.make_node("ConvTranspose", ["r", "w2"], ["y"], strides=[2, 2],
                         auto_pad="SAME_UPPER", name="up2"),
    ]
    inits = [
        const("w1", rng.standard_normal((4, 3, 3, 3)).astype(np.float32)),
        const("b1", rng.standard_normal(6).astype(np.float32)),
        const("w2", rng.standard_normal((6, 2, 3, 3)).astype(np.float32)),
    ]
    return nodes, [f32("x", [1, 4, 4, 4])], [f32("y", [1, 2, 16, 16])], 17, inits


nodes, inputs, outputs, opset, inits = {"cnn": cnn, "unsupported": unsupported,
                                        "symbolic": symbolic,
                                        "activations": activations,
                                        "duplicates": duplicates,
                                        "convtranspose": convtranspose}[sys.argv[1]]()
model = helper.make_model(helper.make_graph(nodes, sys.argv[1], inputs, outputs, inits),
                          opset_imports=[helper.make_opsetid("", opset)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[2])
