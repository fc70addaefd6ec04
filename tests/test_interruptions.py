"""Interruptions and places that cannot be written: Ctrl-C is one line and exit status 130
with the cost database and artifacts intact; a read-only cost database is used without
keeping new costs; an artifact directory that cannot be written fails before measuring."""

import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from collage_xdsl.measure import cost_db
from collage_xdsl.planner.options import PartitionOptions
from collage_xdsl.planner.pipeline import partition_module
from collage_xdsl.runtime import artifact
from collage_xdsl.tools import collage
from collage_xdsl.tools import options as tool_options
from collage_xdsl.tools.collage import INTERRUPTED


def test_ctrl_c_is_one_line_and_exit_130(example_file, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tool_options, "partition_module", interrupted)
    assert collage.main(["explain", str(example_file("mlp")), "--estimator", "mock"]) == 130
    assert capsys.readouterr().err.splitlines()[-1] == INTERRUPTED


@pytest.mark.full
def test_ctrl_c_while_measuring_keeps_the_database_and_writes_no_artifact(example_file,
                                                                          tmp_path):
    """A real SIGINT to a compile measuring kernels: one line, status 130, the costs
    measured so far readable, no artifact (slow: boundary costs are calibrated first)."""
    db, out = tmp_path / "costs.sqlite", tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "collage_xdsl.tools.collage", "compile",
         str(example_file("mnist_cnn")), "--cost-db", str(db), "--refine-budget", "0",
         "-o", str(out)], stderr=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stderr:  # progress lines; measuring starts with "costs @main"
        lines.append(line)
        if "costs @main" in line:
            break
    time.sleep(2.0)
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 130, "".join(lines) + rest
    assert "Traceback" not in rest
    assert [line for line in rest.splitlines() if not line.startswith("collage: ")] == \
        [INTERRUPTED]
    with sqlite3.connect(db) as conn:  # intact and readable
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert not (out / artifact.MANIFEST).exists()


def test_a_read_only_cost_database_is_used_and_says_so_once(example_module, tmp_path,
                                                            monkeypatch):
    path = tmp_path / "costs.sqlite"
    options = PartitionOptions(backends=("tvm", "onnxruntime"), mock_costs="tvm:1,onnxruntime:2",
                               cost_db=str(path), replan=True)
    module = example_module("mlp")
    partition_module(module, options)
    with sqlite3.connect(path) as conn:
        costs = conn.execute("SELECT COUNT(*) FROM collage_costs").fetchone()[0]
        conn.execute("DELETE FROM collage_costs WHERE rowid IN "
                     "(SELECT rowid FROM collage_costs LIMIT 3)")
    monkeypatch.setattr(cost_db.os, "access", lambda path, mode: False)  # as on a RO mount
    phases = []
    partitioned = partition_module(module, options, progress=phases.append)
    report = partitioned.report["functions"][0]
    assert report["cost_db_hits"] == costs - 3 and report["estimates"] == 3
    notes = [p for p in phases if "read-only" in p]
    assert notes == [f"cost database {path} is read-only: its costs are used, what is "
                     "measured now is not kept"]
    monkeypatch.undo()
    with sqlite3.connect(path) as conn:  # nothing was written
        assert conn.execute("SELECT COUNT(*) FROM collage_costs").fetchone()[0] == costs - 3


def test_an_artifact_place_that_cannot_be_written_fails_before_measuring(
        example_file, tmp_path, capsys, monkeypatch):
    started = []
    monkeypatch.setattr(tool_options, "partition_module",
                        lambda *a, **k: started.append(1))
    monkeypatch.setattr(artifact.os, "access", lambda path, mode: False)
    assert collage.main(["compile", str(example_file("mlp")), "-o",
                         str(tmp_path / "out" / "model.collage")]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (f"error: {tmp_path / 'out' / 'model.collage'}: cannot write "
                                    f"the artifact: {tmp_path} is not a writable directory")
    assert started == []
