"""The `onnxruntime` BYOC backend: kernels become ONNX models run by the CPU execution
provider (`lowering`). It supports every dialect op on f32 tensors, fuses arbitrarily, and names the
patterns its graph optimizer fuses into one kernel (Conv+Add+Relu, MatMul+Add, BiasGelu).
"""

from collage_xdsl.backends.base import (
    Backend,
    FusionStyle,
    NamedPattern,
    f32_only,
    kernel_op_names,
)
from collage_xdsl.core.patterns import Pattern, is_constant, is_op, wildcard


def bias_add(x: Pattern) -> Pattern:
    """`x + constant` with the constant on either side."""
    return is_op("collage.add")(x, is_constant()) | is_op("collage.add")(is_constant(), x)


_conv = is_op("collage.conv2d")(wildcard(), is_constant())
_matmul = is_op("collage.matmul")(wildcard(), is_constant())

PATTERNS = (
    NamedPattern("conv2d_bias_relu", is_op("collage.relu")(bias_add(_conv))),
    NamedPattern("conv2d_bias", bias_add(_conv)),
    NamedPattern("matmul_bias_gelu", is_op("collage.gelu")(bias_add(_matmul))),
    NamedPattern("matmul_bias", bias_add(_matmul)),
)

BACKEND = Backend(
    name="onnxruntime",
    supported_ops={name: f32_only for name in kernel_op_names()},
    patterns=PATTERNS,
    fusion=FusionStyle.ARBITRARY,
    max_depth=8,
    package="onnxruntime",
    lowering="collage_xdsl.backends.onnxruntime.lowering",
)
