"""Write the float16 model of the frontend lit test: `python make_float16.py OUT.onnx`.

x (f32) -> Cast(f16) -> Conv(f16 weight and bias) -> Clip(f16 min and max) -> Pad(f16
value) -> Mul(f16 scalar) -> LeakyRelu -> Cast(f32) (opset 13).
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def half(name, values):
    return numpy_helper.from_array(np.asarray(values, np.float16), name)


def model() -> onnx.ModelProto:
    nodes = [
        helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
        helper.make_node("Conv", ["h", "w", "b"], ["c"], kernel_shape=[1, 1]),
        helper.make_node("Clip", ["c", "lo", "hi"], ["k"]),
        helper.make_node("Pad", ["k", "pads", "fill"], ["p"]),
        helper.make_node("Mul", ["p", "two"], ["m"]),
        helper.make_node("LeakyRelu", ["m"], ["l"], alpha=0.25),
        helper.make_node("Cast", ["l"], ["y"], to=TensorProto.FLOAT),
    ]
    inits = [half("w", [[[[0.5]], [[-1.5]]]]), half("b", [0.25]), half("lo", -1.0),
             half("hi", 6.0), numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1]), "pads"),
             half("fill", 0.5), half("two", 2.0)]
    graph = helper.make_graph(
        nodes, "float16", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 5, 5])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


if __name__ == "__main__":
    onnx.save(model(), sys.argv[1])
