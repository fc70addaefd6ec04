"""Write one small ONNX model for the Einsum and Conv1D lit tests:
`python make_einsum_conv1d.py NAME OUT.onnx`.

- einsum: attention scores and context as Einsum (bhid,bhjd->bhij, bhij,bhjd->bhid) and a
  transpose with an implicit output ("ji", which is "ji->ij").
- conv1d: Conv1D (k 3, pad 1, bias) -> Relu -> depthwise Conv1D (SAME_UPPER, stride 2)
  -> MaxPool1D (k 2) (opset 17).
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def einsum():
    nodes = [
        helper.make_node("Einsum", ["q", "k"], ["s"], equation="bhid,bhjd->bhij"),
        helper.make_node("Einsum", ["s", "v"], ["o"], equation="bhij,bhjd->bhid"),
        helper.make_node("Einsum", ["m"], ["t"], equation="ji"),
    ]
    inputs = [f32("q", [1, 2, 4, 8]), f32("k", [1, 2, 6, 8]), f32("v", [1, 2, 6, 8]),
              f32("m", [4, 3])]
    return nodes, inputs, [f32("o", [1, 2, 4, 8]), f32("t", [3, 4])], 12, []


def conv1d():
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3], pads=[1, 1],
                         name="conv1"),
        helper.make_node("Relu", ["c1"], ["r"]),
        helper.make_node("Conv", ["r", "w2"], ["c2"], group=4, strides=[2],
                         auto_pad="SAME_UPPER", name="dw"),
        helper.make_node("MaxPool", ["c2"], ["y"], kernel_shape=[2], strides=[2]),
    ]
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
             for n, s in [("w1", (4, 2, 3)), ("b1", (4,)), ("w2", (4, 1, 3))]]
    return nodes, [f32("x", [1, 2, 16])], [f32("y", [1, 4, 4])], 17, inits


nodes, inputs, outputs, opset, inits = {"einsum": einsum, "conv1d": conv1d}[sys.argv[1]]()
model = helper.make_model(helper.make_graph(nodes, sys.argv[1], inputs, outputs, inits),
                          opset_imports=[helper.make_opsetid("", opset)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[2])
