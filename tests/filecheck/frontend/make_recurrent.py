"""Write the tiny recurrent model of the lit import test: `python make_recurrent.py OUT.onnx`.

An LSTM (forward, hidden 2, with B and initial_h) over x [2 steps, 1, 3], using Y and Y_h.
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
weights = {"W": (1, 8, 3), "R": (1, 8, 2), "B": (1, 16)}
inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
         for n, s in weights.items()]
node = helper.make_node("LSTM", ["x", "W", "R", "B", "", "h0"], ["y", "y_h"], hidden_size=2,
                        name="lstm")
inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 1, 3]),
          helper.make_tensor_value_info("h0", TensorProto.FLOAT, [1, 1, 2])]
outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1, 1, 2]),
           helper.make_tensor_value_info("y_h", TensorProto.FLOAT, [1, 1, 2])]
model = helper.make_model(helper.make_graph([node], "lstm", inputs, outputs, inits),
                          opset_imports=[helper.make_opsetid("", 14)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
