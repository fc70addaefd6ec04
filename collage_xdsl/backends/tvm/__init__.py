"""The native `tvm` backend: every dialect op, fused like TVM's FuseOps.

Kernels are lowered to TVM Relax and compiled for the host CPU (see `collage_xdsl.backends.kernel`).
Fusion follows FuseOps: out_ewise_fusable -> broadcast, broadcast -> comm_reduce,
injective -> injective, plus tuple arguments and projections; opaque ops stay singletons.
"""

from dataclasses import dataclass

from collage_xdsl.backends.base import Backend, FusionStyle


@dataclass(frozen=True)
class TvmBackend(Backend):
    """The version also names the process's schedule tuning (`tvm-tune`), so tuned and
    untuned costs never share a cost-database entry."""

    @property
    def version(self) -> str:
        from collage_xdsl.backends.tvm.tuning import TuningOptions

        return super().version + TuningOptions.from_env().version_tag


TVM = TvmBackend(
    name="tvm",
    supported_ops=None,
    fusion=FusionStyle.TVM,
    max_depth=8,
    byoc=False,
    package="apache-tvm",
)
