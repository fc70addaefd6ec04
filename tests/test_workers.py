"""Worker processes: the ready handshake and how a worker that fails to start is named."""

from __future__ import annotations

import os
import time

import pytest

from collage_xdsl.measure.workers import WorkerProcess, WorkerStartError, incoming


def _dies(conn) -> None:
    os._exit(3)


def _hangs(conn) -> None:
    time.sleep(60)


def _echoes(conn) -> None:
    for message in incoming(conn):
        conn.send(("echo", message))


def test_a_worker_that_dies_while_starting_says_how():
    with pytest.raises(WorkerStartError, match="test worker died while starting: exit code 3"):
        WorkerProcess(_dies, (), name="t", what="test worker", start_timeout_s=60)


def test_a_worker_that_never_answers_times_out():
    with pytest.raises(WorkerStartError, match="test worker did not start within 1 s"):
        WorkerProcess(_hangs, (), name="t", what="test worker", start_timeout_s=1)


def test_round_trip_and_stop():
    worker = WorkerProcess(_echoes, (), name="t", what="test worker", start_timeout_s=60)
    worker.send(41)
    assert worker.receive() == ("echo", 41)
    worker.stop()
    assert not worker.process.is_alive()
