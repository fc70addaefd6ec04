"""The `iree` backend: kernels lowered to upstream MLIR by `collage-lower-linalg`, compiled
by IREE's compiler for the host CPU (`llvm-cpu`) and run by IREE's runtime (`lowering`).
The MLIR-native peer of the BYOC graph compilers: its spec is exactly the ops the lowering
handles (on tensors of the element types numpy and IREE share), and it fuses arbitrarily,
as IREE forms its own dispatch regions inside a kernel.
"""

from xdsl.ir import Operation

from collage_xdsl.backends.base import Backend, FusionStyle, f32_only
from collage_xdsl.linalg import lowered_op_names


def _supported(op: Operation) -> bool:
    return f32_only(op)


BACKEND = Backend(
    name="iree",
    supported_ops={name: _supported for name in sorted(lowered_op_names())},
    fusion=FusionStyle.ARBITRARY,
    max_depth=8,
    package="iree-base-compiler",
    lowering="collage_xdsl.backends.iree.lowering",
)
