"""The `openvino` BYOC backend: kernels become ONNX models compiled by OpenVINO for the CPU
(at f32 precision, `lowering`). A graph compiler in the role TensorRT plays on GPUs: predicate-based
(every dialect op on f32 tensors), no named patterns, arbitrary fusion.
"""

from collage_xdsl.backends.base import Backend, FusionStyle, f32_only, kernel_op_names

BACKEND = Backend(
    name="openvino",
    supported_ops={name: f32_only for name in kernel_op_names()},
    fusion=FusionStyle.ARBITRARY,
    max_depth=8,
    package="openvino",
    lowering="collage_xdsl.backends.openvino.lowering",
)
