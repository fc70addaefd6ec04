"""Compiled-model artifacts: what `collage compile` saves and `collage run` loads.

An artifact is a directory:

    module.mlir      the partitioned, outlined module (kernel functions with backend and cost)
    weights.npz      every weight the module references, keyed by its weight-store key
    manifest.json    format, backends and their versions, estimated costs, inputs/outputs,
                     the source model's path and SHA-256
    explain.json     the partition's explain report

Loading restores the weights into the process's weight store (checking that each array
still hashes to its key), so an artifact runs on a machine that never saw the model.
The artifact holds the partitioning, not machine code: loading does not measure
anything, but the runtime compiles the kernels again (seconds, see `runtime`).
"""

from __future__ import annotations

import hashlib
import json
import zipfile
import zlib
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

from collage_xdsl.dialects import ir_context
from collage_xdsl.dialects.collage import ConstantOp, WeightAttr
from collage_xdsl.errors import CollageError
from collage_xdsl.tensors import WeightStore, constant_array, is_splat, weight_store

FORMAT = "collage-artifact"
FORMAT_VERSION = 1
MODULE, WEIGHTS, MANIFEST, EXPLAIN = "module.mlir", "weights.npz", "manifest.json", "explain.json"


class ArtifactError(CollageError):
    """An artifact directory that is missing, incomplete, foreign or corrupt."""


@dataclass
class Artifact:
    """A loaded artifact: the outlined module and its manifest."""

    path: Path
    module: ModuleOp
    manifest: dict

    @property
    def input_names(self) -> list[str]:
        return self.manifest["inputs"]

    @property
    def output_names(self) -> list[str]:
        return self.manifest["outputs"]

    def source_model(self) -> Path | None:
        """The source model, when it is still where it was and unchanged."""
        source = self.manifest.get("source") or {}
        path = Path(source.get("path", ""))
        if path.is_file() and file_sha256(path) == source.get("sha256"):
            return path
        return None


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def backend_versions(backends: list[str]) -> dict[str, str]:
    """The version string of each backend's codegen (part of what a cost means)."""
    from collage_xdsl.backends import get_backend

    return {b: get_backend(b).version for b in backends}


def _weights(module: ModuleOp) -> dict[str, np.ndarray]:
    weights = {}
    for op in module.walk():
        if isinstance(op, ConstantOp) and isinstance(op.value, WeightAttr):
            weights[op.value.key.data] = constant_array(op)
    return weights


def save_artifact(out: str | Path, module: ModuleOp, *, backends: list[str], estimator: str,
                  inputs: list[str], outputs: list[str], source: Path | None,
                  explain: dict) -> Path:
    """Write `module` (partitioned and outlined) and its weights and manifest to `out`."""
    from collage_xdsl.pipeline import kernel_functions

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ArtifactError(f"{out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise ArtifactError(f"{out}: a non-empty directory that is not a collage artifact "
                            "(refusing to write into it)")
    kernels = [
        {"function": f.sym_name.data, "backend": f.attributes["collage.backend"].data,
         "cost": f.attributes["collage.cost"].value.data
         if "collage.cost" in f.attributes else None}
        for f in kernel_functions(module)
    ]
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "collage_xdsl": version("collage-xdsl"),
        "backends": backends,
        "backend_versions": backend_versions(backends),
        "estimator": estimator,
        "estimated_cost": sum(k["cost"] for k in kernels if k["cost"] is not None),
        "kernels": kernels,
        "inputs": inputs,
        "outputs": outputs,
        "source": None if source is None else {"path": str(source.resolve()),
                                              "sha256": file_sha256(source)},
    }
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / MODULE).write_text(str(module) + "\n")
        with open(out / WEIGHTS, "wb") as f:
            np.savez(f, **_weights(module))
        (out / EXPLAIN).write_text(json.dumps(explain, indent=2) + "\n")
        (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    except OSError as e:
        raise ArtifactError(f"{out}: cannot write the artifact: {e.strerror}") from None
    return out


def _restore_weights(path: Path, store: WeightStore) -> None:
    try:
        data = np.load(path / WEIGHTS, allow_pickle=False)
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise ValueError("a single .npy array, not an .npz archive")
        with data:
            arrays = {key: data[key] for key in data.files}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, zlib.error) as e:
        raise ArtifactError(f"{path / WEIGHTS}: cannot read the weights: {e}") from None
    for key, array in arrays.items():
        stored = array.reshape(-1)[:1] if is_splat(array) else array
        if WeightStore.key(array, np.ascontiguousarray(stored)) != key:
            raise ArtifactError(f"{path / WEIGHTS}: weight {key} does not match its key "
                                "(the file is corrupt)")
        store.put(array)


def load_artifact(path: str | Path) -> Artifact:
    """Read an artifact directory; its weights go into the process's weight store."""
    path = Path(path)
    if not path.is_dir():
        raise ArtifactError(f"{path}: no such artifact directory")
    missing = [n for n in (MANIFEST, MODULE, WEIGHTS) if not (path / n).is_file()]
    if missing:
        raise ArtifactError(f"{path}: not a collage artifact (missing {', '.join(missing)})")
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except (OSError, ValueError) as e:
        raise ArtifactError(f"{path / MANIFEST}: cannot read the manifest: {e}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ArtifactError(f"{path / MANIFEST}: not a collage artifact manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise ArtifactError(f"{path / MANIFEST}: artifact format version "
                            f"{manifest.get('format_version')}, this collage reads "
                            f"{FORMAT_VERSION}")
    _restore_weights(path, weight_store())
    ctx = ir_context()
    text = (path / MODULE).read_text()
    try:
        module = Parser(ctx, text, str(path / MODULE)).parse_module()
    except ParseError as e:
        raise ArtifactError(f"{path / MODULE}: {str(e).strip()}") from None
    return Artifact(path, module, manifest)
