"""Artifacts: `load_artifact` checks the manifest and the module once, and a broken one is
one `error: ARTIFACT/FILE: [field: ]reason` line from `collage run`, exit status 1."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from collage_xdsl.runtime.artifact import MANIFEST, MODULE, ArtifactError, load_artifact
from collage_xdsl.tools.collage import main

MODEL = """
func.func @main(%x: tensor<1x8xf32>, %y: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %a = collage.relu %x : tensor<1x8xf32>
  %b = collage.add %a, %y : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  func.return %b : tensor<1x8xf32>
}
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> Path:
    """An artifact of a two-input model: one tvm kernel, `inputs` ["x", "y"]."""
    directory = tmp_path_factory.mktemp("compiled")
    (directory / "model.mlir").write_text(MODEL)
    out = directory / "art"
    status = main(["compile", str(directory / "model.mlir"), "--backends", "tvm",
                   "--estimator", "mock", "-o", str(out)])
    assert status == 0
    return out


@pytest.fixture
def artifact(compiled, tmp_path) -> Path:
    """A copy of the compiled artifact to break."""
    return Path(shutil.copytree(compiled, tmp_path / "art"))


def edit_manifest(art: Path, edit: Callable[[dict], None]) -> None:
    manifest = json.loads((art / MANIFEST).read_text())
    edit(manifest)
    (art / MANIFEST).write_text(json.dumps(manifest))


def run_error(capsys, art: Path) -> str:
    """The one error line `collage run ART` prints (it must fail)."""
    status = main(["run", str(art)])
    err = capsys.readouterr().err
    assert status == 1 and "Traceback" not in err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err.removeprefix("error: ").rstrip("\n")


def test_a_sound_artifact_loads(artifact):
    loaded = load_artifact(artifact)
    assert loaded.input_names == ["x", "y"] and loaded.output_names == ["output0"]
    assert loaded.source_model() is None


def _set(key, value):
    return lambda m: m.__setitem__(key, value)


@pytest.mark.parametrize("edit, reason", [
    (lambda m: m.pop("inputs"), "inputs: missing"),
    (lambda m: m.pop("kernels"), "kernels: missing"),
    (_set("format_version", "1"), "format_version: expected an integer, got '1'"),
    (_set("format_version", True), "format_version: expected an integer, got True"),
    (_set("format_version", 2),
     "format_version: artifact format version 2, this collage reads 1"),
    (_set("source", {"path": 5}),
     'source: expected null or {"path": string, "sha256": string}, got {\'path\': 5}'),
    (_set("backends", "tvm"), "backends: expected a list of backend names, got 'tvm'"),
    (_set("backends", ["nosuch"]), "backends: unknown backend 'nosuch' (available: "),
    (_set("backend_versions", {"openvino": "openvino==1"}),
     "backend_versions: 'openvino' is not one of the backends"),
    (_set("backend_versions", ["tvm"]),
     "backend_versions: expected an object of version strings, got ['tvm']"),
    (_set("kernels", 5), 'kernels: expected a list of {"function": string, "backend": '
                         'string, "cost": number or null}, got 5'),
    (_set("kernels", [{"function": "f", "backend": "tvm", "cost": "1"}]), "kernels: expected"),
    (_set("estimated_cost", None), "estimated_cost: expected a number, got None"),
    (_set("inputs", "xy"), "inputs: expected a list of names, got 'xy'"),
    (_set("inputs", ["x"]), "inputs: 1 name, but @main has 2 arguments"),
    (_set("inputs", ["x", "y", "z"]), "inputs: 3 names, but @main has 2 arguments"),
    (_set("inputs", ["x", "x"]), "inputs: a name repeats in ['x', 'x']"),
    (_set("outputs", []), "outputs: 0 names, but @main has 1 result"),
    (_set("outputs", [1]), "outputs: expected a list of names, got [1]"),
])
def test_a_bad_manifest_field_is_an_error_naming_it(artifact, capsys, edit, reason):
    edit_manifest(artifact, edit)
    assert run_error(capsys, artifact).startswith(f"{artifact / MANIFEST}: {reason}")


def test_a_manifest_that_is_no_object_is_not_an_artifact(artifact):
    (artifact / MANIFEST).write_text("[]")
    with pytest.raises(ArtifactError, match="not a collage artifact manifest"):
        load_artifact(artifact)


@pytest.mark.parametrize("old, new, reason", [
    ("@main", "@start", "no function @main with a body"),
    ('collage.backend = "tvm"', 'collage.backend = "nosuch"',
     "@collage_tvm_relu_add: backend 'nosuch' is not one of the artifact's backends (tvm)"),
    ("collage.relu %x : tensor<1x8xf32>", "collage.softmax %x {axis = 5 : i64} : tensor<1x8xf32>",
     "axis 5 is out of range for rank 2"),
])
def test_a_bad_module_is_an_error_naming_it(artifact, capsys, old, new, reason):
    text = (artifact / MODULE).read_text()
    assert old in text
    (artifact / MODULE).write_text(text.replace(old, new))
    assert run_error(capsys, artifact) == f"{artifact / MODULE}: {reason}"


def test_a_module_that_is_no_text_is_an_error(artifact, capsys):
    (artifact / MODULE).write_bytes(b"\xff\xfe\x00abc")
    assert run_error(capsys, artifact) == (f"{artifact / MODULE}: not a UTF-8 text module "
                                           "(byte 0 is 0xff)")


def test_a_failed_write_leaves_the_earlier_artifact_as_it_was(artifact, monkeypatch, capsys):
    import errno

    from collage_xdsl.runtime import artifact as artifact_module

    before = {p.name: p.read_bytes() for p in artifact.iterdir()}
    (artifact.parent / "other.mlir").write_text(MODEL.replace("collage.relu", "collage.sigmoid"))

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(artifact_module.np, "savez", full_disk)  # numpy's own, for this test
    status = main(["compile", str(artifact.parent / "other.mlir"), "--backends", "tvm",
                   "--estimator", "mock", "-q", "-o", str(artifact)])
    err = capsys.readouterr().err
    assert status == 1
    assert err == f"error: {artifact}: cannot write the artifact: No space left on device\n"
    assert {p.name: p.read_bytes() for p in artifact.iterdir()} == before  # nothing staged left
    monkeypatch.undo()
    assert main(["compile", str(artifact.parent / "other.mlir"), "--backends", "tvm",
                 "--estimator", "mock", "-o", str(artifact)]) == 0
    assert "collage.sigmoid" in (artifact / MODULE).read_text()
    assert sorted(p.name for p in artifact.iterdir()) == sorted(before)


def test_the_manifest_names_the_tuned_tvm_and_a_run_without_the_tuning_says_so(tmp_path, capsys):
    (tmp_path / "model.mlir").write_text(MODEL)
    art = tmp_path / "tuned"
    assert main(["compile", str(tmp_path / "model.mlir"), "--backends", "tvm", "--estimator",
                 "mock", "-q", "--tvm-tune", "metaschedule", "--tvm-tune-trials", "2",
                 "--tvm-tune-db", str(tmp_path / "tuning db"), "-o", str(art)]) == 0
    tuned = json.loads((art / MANIFEST).read_text())["backend_versions"]["tvm"]
    assert tuned.endswith("+ms2")
    capsys.readouterr()
    assert main(["run", str(art)]) == 0
    assert f"warning: {art}: compiled with {tuned}, running with {tuned[:-4]}\n" in \
        capsys.readouterr().err
