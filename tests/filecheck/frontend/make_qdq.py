"""Write the tiny QDQ model of the lit import test: `python make_qdq.py OUT.onnx`.

x -> QuantizeLinear (no zero point: uint8) -> DequantizeLinear -> Conv, its weight a
DequantizeLinear of int8 per output channel and its bias one of int32, -> QuantizeLinear
by a one-value ([1]) int8 scale and zero point -> DequantizeLinear (opset 13).
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

tensors = {
    "xs": np.float32(0.05), "w": np.arange(-4, 4, dtype=np.int8).reshape(4, 2, 1, 1),
    "ws": np.array([0.1, 0.2, 0.3, 0.4], np.float32), "wz": np.zeros(4, np.int8),
    "b": np.array([-2, -1, 1, 2], np.int32), "bs": np.full(4, 0.005, np.float32),
    "ys": np.array([0.1], np.float32), "yz": np.array([-3], np.int8),
}
nodes = [
    helper.make_node("QuantizeLinear", ["x", "xs"], ["qx"], name="qx"),
    helper.make_node("DequantizeLinear", ["qx", "xs"], ["dx"], name="dx"),
    helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["dw"], axis=0, name="dw"),
    helper.make_node("DequantizeLinear", ["b", "bs"], ["db"], axis=0, name="db"),
    helper.make_node("Conv", ["dx", "dw", "db"], ["conv"], name="conv"),
    helper.make_node("QuantizeLinear", ["conv", "ys", "yz"], ["qy"], name="qy"),
    helper.make_node("DequantizeLinear", ["qy", "ys", "yz"], ["y"], name="y"),
]
inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])]
outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 3, 3])]
inits = [numpy_helper.from_array(np.asarray(v), n) for n, v in tensors.items()]
model = helper.make_model(helper.make_graph(nodes, "qdq", inputs, outputs, inits),
                          opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
