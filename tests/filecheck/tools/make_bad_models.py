"""Write inputs the tools must handle with care: an unsupported op, bytes that are no model,
and a model whose input has a symbolic (batch) dimension."""

import sys
from pathlib import Path

import onnx
from onnx import TensorProto, helper

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
