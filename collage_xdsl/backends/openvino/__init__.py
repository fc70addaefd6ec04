"""The `openvino` BYOC backend: kernels become ONNX models compiled by OpenVINO for the CPU
(at f32 precision, `lowering`; an f16 kernel computes in f32 between f16 inputs and outputs).
A graph compiler in the role TensorRT plays on GPUs: predicate-based (every dialect op on f32
and f16 tensors), no named patterns, arbitrary fusion.
"""

from xdsl.ir import Operation

from collage_xdsl.backends.base import QDQ_OPS, Backend, FusionStyle, f32_or_f16, kernel_op_names
from collage_xdsl.dialects.collage import GatherElementsOp, get_int
from collage_xdsl.ir.tensors import shape_of


def gather_elements_fits(op: Operation) -> bool:
    """`f32_or_f16`, and indices of the data's shape off the axis: the CPU plugin rejects
    shorter ones (and drops a Slice that would cut the data to them)."""
    assert isinstance(op, GatherElementsOp)
    data, indices = shape_of(op.data.type), shape_of(op.indices.type)
    axis = get_int(op.axis, 0) % len(data)
    return f32_or_f16(op) and all(
        n == d for a, (n, d) in enumerate(zip(indices, data)) if a != axis)


BACKEND = Backend(
    name="openvino",
    supported_ops={name: f32_or_f16 for name in kernel_op_names()} | QDQ_OPS
    | {"collage.gather_elements": gather_elements_fits},
    fusion=FusionStyle.ARBITRARY,
    max_depth=8,
    package="openvino",
    lowering="collage_xdsl.backends.openvino.lowering",
)
