"""Worker processes for running toolchains apart from the compiler: a crash, a hang or a
segfault ends the worker, never the parent.

    worker = WorkerProcess(worker_main, (config,), name="collage-measure",
                           what="measurement worker", start_timeout_s=120)
    worker.send(job); reply = worker.receive()      # None when it died: worker.exit_reason()

    def worker_main(conn, config):         # a module-level function, run in the worker
        for message in incoming(conn):     # ready; then each message until None or EOF
            conn.send(answer(message))

Workers are spawned (no inherited thread pools) and start with `enter_worker`.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection, wait
from typing import Any

from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.tensors import weight_store

_READY = "ready"


class WorkerStartError(CollageError):
    """A worker process did not start within its time or died while starting."""


def enter_worker(threads: int, weights_dir: str) -> None:
    """What every worker process does first: leave Ctrl-C to the parent, read weights from
    the parent's weight store, and use the parent's thread count."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ["COLLAGE_WEIGHTS_DIR"] = weights_dir
    os.environ["COLLAGE_THREADS"] = str(threads)


def _bootstrap(conn: Connection, target: Callable[..., None], args: tuple, threads: int,
               weights_dir: str) -> None:
    enter_worker(threads, weights_dir)
    target(conn, *args)


def incoming(conn: Connection) -> Iterator[Any]:
    """In the worker: tell the parent it is ready, then yield each message it sends until
    ``None`` or the pipe closes."""
    conn.send(_READY)
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        yield message


class WorkerProcess:
    """One worker process and its pipe (see the module docstring)."""

    def __init__(
        self,
        target: Callable[..., None],
        args: tuple,
        *,
        name: str,
        what: str,
        start_timeout_s: float,
        threads: int | None = None,
    ):
        """Start ``target(conn, *args)`` in a process called `name` (`enter_worker` with
        `threads`, default the process's, first) and wait until it is ready; `what` names
        it in `WorkerStartError`."""
        ctx = multiprocessing.get_context("spawn")  # no inherited library thread pools
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(
            target=_bootstrap, name=name, daemon=True,
            args=(child, target, args, threads or ThreadPolicy().threads,
                  str(weight_store().root)))
        self.process.start()
        child.close()
        ready = wait([self.conn, self.process.sentinel], start_timeout_s)
        if self.conn not in ready or self.receive() != _READY:
            if ready:
                self.process.join(5)  # it died: reap it so its exit code is known
            why = (f"did not start within {start_timeout_s:g} s" if not ready
                   else f"died while starting: {self.exit_reason()}")
            self.kill()
            raise WorkerStartError(f"{what} {why}")

    def send(self, message: Any) -> None:
        self.conn.send(message)

    def receive(self) -> Any:
        """The next message from the worker; ``None`` when the pipe broke (it died)."""
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            self.process.join(5)
            return None

    def exit_reason(self) -> str:
        """How the process ended: ``signal 11 (SIGSEGV)`` or ``exit code 1``."""
        exitcode = self.process.exitcode
        if exitcode is not None and exitcode < 0:
            try:
                return f"signal {-exitcode} ({signal.Signals(-exitcode).name})"
            except ValueError:
                return f"signal {-exitcode}"
        return f"exit code {exitcode}"

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.conn.close()

    def stop(self) -> None:
        """Ask the worker to finish (``None``), then kill it if it has not in 5 s."""
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.process.join(5)
        self.kill()
