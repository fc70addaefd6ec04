"""The `iree` backend: kernels lowered to upstream MLIR by `collage-lower-linalg`, compiled
by IREE's compiler for the host CPU (`llvm-cpu`) and run by IREE's runtime (`lowering`).
The MLIR-native peer of the BYOC graph compilers: its spec is exactly the ops the lowering
handles, on f32 tensors, and it fuses arbitrarily,
as IREE forms its own dispatch regions inside a kernel.
"""

from collage_xdsl.backends.base import Backend, FusionStyle, f32_only
from collage_xdsl.linalg import lowered_op_names

BACKEND = Backend(
    name="iree",
    supported_ops={name: f32_only for name in sorted(lowered_op_names())},
    fusion=FusionStyle.ARBITRARY,
    max_depth=8,
    package="iree-base-compiler",
    lowering="collage_xdsl.backends.iree.lowering",
)
