"""The native `tvm` backend: every dialect op, fused like TVM's FuseOps.

Kernels are lowered to TVM Relax and compiled for the host CPU (see `collage_xdsl.codegen`).
Fusion follows FuseOps: out_ewise_fusable -> broadcast, broadcast -> comm_reduce,
injective -> injective, plus tuple arguments and projections; opaque ops stay singletons.
"""

from collage_xdsl.backends.base import Backend, FusionStyle

TVM = Backend(
    name="tvm",
    supported_ops=None,
    fusion=FusionStyle.TVM,
    max_depth=8,
    byoc=False,
    package="apache-tvm",
)
