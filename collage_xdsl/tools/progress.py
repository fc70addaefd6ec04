"""What a command shows while it works: on a terminal one status line (a tqdm bar with the
phase and the time so far, the kernel-measuring bar below it); otherwise one line per
phase on stderr with the seconds since the command started.

    with Progress() as progress:
        progress("importing model.onnx")
        partition_module(module, options, progress=progress)
"""

from __future__ import annotations

import sys
import time
from typing import IO

from tqdm import tqdm


class Progress:
    """Reports each phase as it starts (a `collage_xdsl.planner.plan.Progress`); nothing
    when `quiet`."""

    def __init__(self, stream: IO[str] | None = None, tty: bool | None = None,
                 quiet: bool = False):
        stream = sys.stderr if stream is None else stream
        self.stream, self.quiet = stream, quiet
        self.started = time.perf_counter()
        self.tty = stream.isatty() if tty is None else tty
        self._bar = tqdm(total=None, bar_format="collage: {desc} [{elapsed}]", file=stream,
                         leave=False) if self.tty and not quiet else None

    def __call__(self, phase: str) -> None:
        if self.quiet:
            return
        if self._bar is not None:
            self._bar.set_description_str(phase)
        else:
            seconds = time.perf_counter() - self.started
            print(f"collage: {phase} ({seconds:.1f} s)", file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
