"""The native `tvm` backend: every dialect op, fused like TVM's FuseOps, lowered to Relax and
compiled for the host CPU (`lowering`), with an optional schedule tuner (`tuning`).

    get_backend("tvm")                                   # the loop-nest schedule
    get_backend("tvm", tune="metaschedule", trials=16)   # tuned schedules, kept in a database
"""

from dataclasses import dataclass, field

from collage_xdsl.backends.base import Backend, FusionStyle
from collage_xdsl.backends.kernel import CompiledKernel
from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.backends.tvm.options import TuningOptions, default_db_dir


@dataclass(frozen=True)
class TvmBackend(Backend):
    """The tvm backend with its schedule tuning; tuned and untuned costs never share a
    cost-database entry (the version names the tuning)."""

    tuning: TuningOptions = field(default_factory=TuningOptions)

    @property
    def version(self) -> str:
        return super().version + self.tuning.version_tag

    def lower(self, func, policy: ThreadPolicy) -> CompiledKernel:
        from collage_xdsl.backends.tvm.lowering import compile

        return compile(func, policy, self.tuning)


def make_backend(tune: str = "none", trials: int = 16, db: str = "") -> TvmBackend:
    """The tvm backend; `tune`: none or metaschedule, `trials` per task, `db` the tuning
    database directory (default under the user's cache directory)."""
    return TvmBackend(name="tvm", supported_ops=None, fusion=FusionStyle.TVM, max_depth=8,
                      byoc=False, package="apache-tvm",
                      lowering="collage_xdsl.backends.tvm.lowering",
                      tuning=TuningOptions(tune, trials, db or str(default_db_dir())))
