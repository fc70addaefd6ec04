"""`collage run` of a small model over the three backends, as the op tests use it (pytest
puts this directory on sys.path)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import onnx

from collage_xdsl.tools import collage


def runs_and_matches_onnxruntime(model: onnx.ModelProto, path: Path, pinned: Sequence[str],
                                 backend: str | None, capsys, *options: str) -> str:
    """`model` saved at `path` runs through `collage run --check` partitioned over tvm,
    onnxruntime and openvino (mock estimator), as the search places it (`backend` None) or
    with every op kind of `pinned` pinned to `backend`, and matches ONNX Runtime (within
    the tolerances `options` may give: more `collage run` flags, e.g. `--atol 0.05`).
    Returns its stderr: the plan's summary line, `block.onnx: 2 kernels (onnxruntime 1, ...`."""
    onnx.save(model, path)
    pins = [a for op in pinned for a in ("--pin", f"op:{op}={backend}")] if backend else []
    status = collage.main(["run", str(path), "-q", "--backends", "tvm,onnxruntime,openvino",
                           "--estimator", "mock", *pins, "--check", *options])
    out, err = capsys.readouterr()
    assert status == 0, out
    assert "check: 1 output(s) match onnxruntime" in out
    return err
