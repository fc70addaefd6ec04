"""Write malformed inputs for the tool tests: an unsupported op, and bytes that are no model."""

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
