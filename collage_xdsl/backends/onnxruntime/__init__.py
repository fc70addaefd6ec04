"""The `onnxruntime` BYOC backend: kernels become ONNX models run by the CPU execution
provider (`lowering`). It supports every dialect op on f32 and f16 tensors, fuses arbitrarily,
and names the patterns its graph optimizer fuses into one kernel (Conv+Add+Relu, MatMul+Add,
BiasGelu, and the QDQ Conv and MatMul its QDQ transformer makes QLinearConv / QLinearMatMul).
"""

from collage_xdsl.backends.base import (
    QDQ_OPS,
    Backend,
    FusionStyle,
    NamedPattern,
    f32_or_f16,
    kernel_op_names,
)
from collage_xdsl.core.patterns import Pattern, is_constant, is_op, wildcard


def bias_add(x: Pattern) -> Pattern:
    """`x + constant` with the constant on either side."""
    return is_op("collage.add")(x, is_constant()) | is_op("collage.add")(is_constant(), x)


_conv = is_op("collage.conv2d")(wildcard(), is_constant())
_matmul = is_op("collage.matmul")(wildcard(), is_constant())


def dequantized(x: Pattern) -> Pattern:
    """`collage.dequantize_linear` of `x` by a constant scale and zero point."""
    return is_op("collage.dequantize_linear")(x, is_constant(), is_constant())


def quantized(x: Pattern) -> Pattern:
    """`collage.quantize_linear` of `x` by a constant scale and zero point."""
    return is_op("collage.quantize_linear")(x, is_constant(), is_constant())


def qdq(op_name: str) -> Pattern:
    """Q(op(DQ(x), DQ(constant weight))): ONNX Runtime runs it on the quantized tensors
    (for uint8 activations on x86)."""
    return quantized(is_op(op_name)(dequantized(wildcard()), dequantized(is_constant())))

PATTERNS = (
    NamedPattern("conv2d_bias_relu", is_op("collage.relu")(bias_add(_conv))),
    NamedPattern("conv2d_bias", bias_add(_conv)),
    NamedPattern("matmul_bias_gelu", is_op("collage.gelu")(bias_add(_matmul))),
    NamedPattern("matmul_bias", bias_add(_matmul)),
    NamedPattern("qdq_conv2d", qdq("collage.conv2d")),
    NamedPattern("qdq_matmul", qdq("collage.matmul")),
)

BACKEND = Backend(
    name="onnxruntime",
    supported_ops={name: f32_or_f16 for name in kernel_op_names()} | QDQ_OPS,
    patterns=PATTERNS,
    fusion=FusionStyle.ARBITRARY,
    max_depth=8,
    package="onnxruntime",
    lowering="collage_xdsl.backends.onnxruntime.lowering",
)
