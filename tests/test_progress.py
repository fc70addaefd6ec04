"""What the commands show while they work (`collage_xdsl.tools.progress`)."""

from __future__ import annotations

import io
import re

from collage_xdsl.tools import collage
from collage_xdsl.tools.progress import Progress


def test_a_line_per_phase_with_the_time_so_far():
    stream = io.StringIO()
    with Progress(stream, tty=False) as progress:
        progress("importing m.onnx")
        progress("search @main")
    lines = stream.getvalue().splitlines()
    assert [re.sub(r"\(\d+\.\d s\)", "(T)", line) for line in lines] == [
        "collage: importing m.onnx (T)", "collage: search @main (T)"]


def test_a_status_bar_on_a_terminal_and_nothing_when_quiet():
    stream = io.StringIO()
    with Progress(stream, tty=True) as progress:
        progress("costs @main: 12 candidates")
    assert "collage: costs @main: 12 candidates" in stream.getvalue()
    assert "\n" not in stream.getvalue().rstrip("\n")  # one line, redrawn in place
    quiet = io.StringIO()
    with Progress(quiet, tty=False, quiet=True) as progress:
        progress("search @main")
    assert quiet.getvalue() == ""


def test_compile_reports_each_phase_and_ends_with_the_plan(example_file, tmp_path, capsys):
    model = example_file("mlp")
    assert collage.main(["compile", str(model), "--backends", "tvm,onnxruntime", "--estimator",
                         "mock", "--mock-costs", "tvm:1,onnxruntime:2", "--refine-budget", "0",
                         "-o", str(tmp_path / "art")]) == 0
    out, err = capsys.readouterr()
    phases = [line.split(" (")[0] for line in err.splitlines()]
    assert phases == ["collage: importing " + str(model), "collage: boundary costs",
                      "collage: candidates @main", phases[3], "collage: search @main",
                      "collage: outline", f"collage: saving {tmp_path / 'art'}"]
    assert phases[3].startswith("collage: costs @main: ") and phases[3].endswith(" candidates")
    first, *plan = out.splitlines()
    assert first.startswith(f"compiled {model}: ") and first.endswith(str(tmp_path / "art"))
    assert plan[0].startswith("  @main: tvm ") and "alone, tvm is estimated at" in plan[1]
    assert collage.main(["compile", str(model), "--estimator", "mock", "-q",
                         "-o", str(tmp_path / "art2")]) == 0
    assert capsys.readouterr().err == ""
