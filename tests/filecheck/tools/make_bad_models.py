"""Write inputs the tools must handle with care: an unsupported op, bytes that are no model,
a model whose input has a symbolic (batch) dimension, one with two inputs of symbolic
dimensions, a model whose weight lives in an external-data file (and one whose
external-data file is missing), and one with a zero-size input."""

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
node = helper.make_node("NoSuchOp", ["x"], ["y"], name="mystery")
onnx.save(helper.make_model(helper.make_graph([node], "g", [x], [y])), out / "unsupported.onnx")
(out / "garbage.onnx").write_bytes(b"this is not a protobuf")
n = helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3])
r = helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", 3])
relu = helper.make_node("Relu", ["input"], ["output"])
onnx.save(helper.make_model(helper.make_graph([relu], "dyn", [n], [r])), out / "symbolic.onnx")
m = helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "seq"])
s = helper.make_tensor_value_info("s", TensorProto.FLOAT, ["batch", "seq"])
add = helper.make_node("Add", ["mask", "mask"], ["s"])
onnx.save(helper.make_model(helper.make_graph([relu, add], "dyn2", [n, m], [r, s])),
          out / "symbolic2.onnx")
w = numpy_helper.from_array(np.eye(2, dtype=np.float32), "w")
x2 = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])
y2 = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])
mm = helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")
for stem in ("external", "external_missing"):
    model = helper.make_model(helper.make_graph([mm], "ext", [x2], [y2], [w]),
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.save_model(model, out / f"{stem}.onnx", save_as_external_data=True,
                    location=f"{stem}.bin", size_threshold=0)
(out / "external_missing.bin").unlink()
z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [0, 3])
t = helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, 3])
o = helper.make_tensor_value_info("o", TensorProto.FLOAT, [2, 3])
zero = [helper.make_node("Relu", ["z"], ["r"], name="r"),
        helper.make_node("Concat", ["r", "t"], ["c"], axis=0, name="c"),
        helper.make_node("Sigmoid", ["c"], ["o"], name="s")]
onnx.save(helper.make_model(helper.make_graph(zero, "zero", [z, t], [o]), ir_version=8,
                            opset_imports=[helper.make_opsetid("", 17)]), out / "zero_size.onnx")
