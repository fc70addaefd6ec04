"""What a converter sees of one ONNX node (`NodeContext`), and the frontend's error."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from collage_xdsl.errors import CollageError

Value = SSAValue | np.ndarray
"""A node input or output: an SSA value, or a numpy array for a folded constant."""

class FrontendError(CollageError):
    """The model cannot be imported; the message names the file, node and reason."""


def onnx_dtype(elem_type: int) -> np.dtype:
    return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))


class NodeContext:
    """What a converter sees of one ONNX node: attributes, inputs, and a way to emit ops."""

    def __init__(self, importer, node: onnx.NodeProto, opset: int):
        self.importer = importer
        self.node = node
        self.opset = opset
        self.attrs: dict[str, Any] = {a.name: helper.get_attribute_value(a) for a in node.attribute}

    # -- naming and errors ---------------------------------------------------------

    @property
    def name(self) -> str:
        return self.node.name or (self.node.output[0] if self.node.output else "?")

    def error(self, reason: str) -> FrontendError:
        return self.importer.error(f"node '{self.name}' ({self.node.op_type}): {reason}")

    # -- attributes ------------------------------------------------------------------

    def attr(self, name: str, default: Any = None) -> Any:
        value = self.attrs.get(name, default)
        return value.decode() if isinstance(value, bytes) else value

    def ints_attr(self, name: str, default: Sequence[int] | None = None) -> list[int] | None:
        value = self.attrs.get(name, default)
        return None if value is None else [int(v) for v in value]

    # -- inputs ----------------------------------------------------------------------

    def has(self, i: int) -> bool:
        return i < len(self.node.input) and self.node.input[i] != ""

    def inputs(self) -> list[int]:
        return [i for i in range(len(self.node.input)) if self.has(i)]

    def raw(self, i: int) -> Value:
        return self.importer.values[self.node.input[i]]

    def is_const(self, i: int) -> bool:
        return isinstance(self.raw(i), np.ndarray)

    def const(self, i: int, what: str) -> np.ndarray:
        value = self.raw(i)
        if not isinstance(value, np.ndarray):
            raise self.error(f"input '{what}' must be a constant, it depends on the graph inputs")
        return value

    def value(self, i: int) -> SSAValue:
        return self.importer.ssa(self.node.input[i])

    def type(self, i: int) -> TensorType:
        value = self.raw(i)
        if isinstance(value, np.ndarray):
            return TensorType(self.element_type(value.dtype), value.shape)
        assert isinstance(value.type, TensorType)
        return value.type

    def shape(self, i: int) -> tuple[int, ...]:
        return tuple(self.type(i).get_shape())

    def output_used(self, i: int) -> bool:
        return i < len(self.node.output) and self.node.output[i] in self.importer.used

    # -- emitting ops ------------------------------------------------------------------

    def emit(self, build, *args, **kwargs) -> SSAValue:
        """Build an op (``build(*args, **kwargs)``), append it, verify it; its first result."""
        try:
            op: Operation = build(*args, **kwargs)
            op.verify()
        except VerifyException as e:
            raise self.error(str(e)) from None
        self.importer.block.add_op(op)
        return op.results[0]

    def emit_op(self, build, *args, **kwargs) -> Operation:
        """Like `emit`, for ops with several results."""
        return self.emit(build, *args, **kwargs).owner  # type: ignore[return-value]

    def element_type(self, dtype: np.dtype) -> Attribute:
        return self.importer.element_type(dtype, f"node '{self.name}' ({self.node.op_type})")
