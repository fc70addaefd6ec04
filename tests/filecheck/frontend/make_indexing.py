"""Write the tiny indexing model of the lit import test: `python make_indexing.py OUT.onnx`.

Softmax -> TopK (K = 2) -> its indices expanded -> GatherElements of the features ->
CumSum (reverse) -> ScatterND (add) into zeros at rows from a constant Range -> GatherND
(opset 17); outputs the top values and the gathered rows.
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

consts = {"k": np.array([2]), "last": np.array([2]), "col": np.array([1]),
          "shape": np.array([4, 2, 3]), "axis": np.array(1),
          "zeros": np.zeros((4, 2, 3), np.float32),
          "start": np.array(3), "limit": np.array(-1), "delta": np.array(-1),
          "pick": np.array([[0, 1], [3, 0]])}
nodes = [
    helper.make_node("Softmax", ["x"], ["p"], axis=1, name="p"),
    helper.make_node("TopK", ["p", "k"], ["v", "i"], axis=1, name="top"),
    helper.make_node("Unsqueeze", ["i", "last"], ["i3"], name="i3"),
    helper.make_node("Expand", ["i3", "shape"], ["ie"], name="ie"),
    helper.make_node("GatherElements", ["f", "ie"], ["g"], axis=1, name="g"),
    helper.make_node("CumSum", ["g", "axis"], ["c"], reverse=1, name="c"),
    helper.make_node("Range", ["start", "limit", "delta"], ["r"], name="r"),
    helper.make_node("Unsqueeze", ["r", "col"], ["rows"], name="rows"),
    helper.make_node("ScatterND", ["zeros", "rows", "c"], ["s"], reduction="add", name="s"),
    helper.make_node("GatherND", ["s", "pick"], ["y"], name="y"),
]
inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6]),
          helper.make_tensor_value_info("f", TensorProto.FLOAT, [4, 6, 3])]
outputs = [helper.make_tensor_value_info("v", TensorProto.FLOAT, [4, 2]),
           helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])]
inits = [numpy_helper.from_array(v, n) for n, v in consts.items()]
model = helper.make_model(helper.make_graph(nodes, "indexing", inputs, outputs, inits),
                          opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
