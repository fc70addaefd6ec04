"""How the tvm backend schedules its kernels: the loop-nest schedule, or MetaSchedule
tuning kept in a database (`collage_xdsl.backends.tvm.tuning`)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from collage_xdsl.cache import cache_dir
from collage_xdsl.errors import CollageError

MODES = ("none", "metaschedule")


def default_db_dir() -> Path:
    """``$XDG_CACHE_HOME`` (or ``~/.cache``) ``/collage-xdsl/tvm-tuning``."""
    return cache_dir() / "tvm-tuning"


def tuning_backend_options(mode: str, trials: int | None = None, db: str | None = None) -> str:
    """The `backend-options` text of schedule tuning `mode` (empty for none), e.g.
    ``tvm: tune=metaschedule trials=16 db='/my dir'``."""
    if mode == "none":
        return ""
    given = {"tune": mode, "trials": trials, "db": db}
    return "tvm: " + " ".join(f"{k}={shlex.quote(str(v))}" for k, v in given.items()
                              if v is not None)


@dataclass(frozen=True)
class TuningOptions:
    """``mode``: none (the loop-nest schedule) or metaschedule; ``trials``: design-space
    samples per task; ``db_dir``: the tuning database."""

    mode: str = "none"
    trials: int = 16
    db_dir: str = field(default_factory=lambda: str(default_db_dir()))

    def __post_init__(self):
        if self.mode not in MODES:
            raise CollageError(f"tvm tune: unknown mode {self.mode!r} (one of {', '.join(MODES)})")
        if self.trials < 1:
            raise CollageError(f"tvm trials must be at least 1, got {self.trials}")

    @property
    def version_tag(self) -> str:
        """Suffix of the TVM codegen version (part of the cost-database key)."""
        return "" if self.mode == "none" else f"+ms{self.trials}"
