"""Compiled-model artifacts: what `collage compile` saves and `collage run` loads.

    out = save_artifact("model.collage", module, backends=[...], ...)
    artifact = load_artifact("model.collage")      # checked, weights restored

A directory of `module.mlir` (the outlined module), `weights.npz` (every weight by its
store key), `manifest.json` (format, backends and versions, costs, input and output
names, the source model's path and SHA-256) and `explain.json`. Loading checks every
manifest field and the module and restores the weights, so an artifact runs on a machine
that never saw the model; the runtime compiles its kernels again.
"""
from __future__ import annotations

import hashlib
import json
import os
import reprlib
import shutil
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import DiagnosticException, ParseError

from collage_xdsl.backends import BackendOptions, backend_for
from collage_xdsl.dialects import ir_context
from collage_xdsl.dialects.collage import ConstantOp, WeightAttr
from collage_xdsl.errors import CollageError, not_utf8
from collage_xdsl.ir.tensors import WeightStore, constant_array, is_splat, weight_store

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


def backend_versions(backends: list[str], options: BackendOptions | None = None
                     ) -> dict[str, str]:
    """The version string of each backend's codegen made with its `options` (part of what
    a cost means: tuned TVM is another version)."""
    return {b: backend_for(b, options).version for b in backends}


def _weights(module: ModuleOp) -> dict[str, np.ndarray]:
    weights = {}
    for op in module.walk():
        if isinstance(op, ConstantOp) and isinstance(op.value, WeightAttr):
            weights[op.value.key.data] = constant_array(op)
    return weights


def check_artifact_place(out: str | Path) -> Path:
    """`out` as a path an artifact can be written to, or an `ArtifactError` saying why not:
    a file, a directory holding something else, a place this process cannot write (checked
    before any measuring starts)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ArtifactError(f"{out}: exists and is not a directory")
    if (out.is_dir() and not (out / MANIFEST).is_file()
            and any(not p.name.startswith(".partial-") for p in out.iterdir())):
        raise ArtifactError(f"{out}: a non-empty directory that is not a collage artifact "
                            "(refusing to write into it)")
    existing = next(p for p in (out, *out.absolute().parents) if p.exists())
    if not existing.is_dir() or not os.access(existing, os.W_OK):
        raise ArtifactError(f"{out}: cannot write the artifact: {existing} is not a "
                            "writable directory")
    return out


def save_artifact(out: str | Path, module: ModuleOp, *, backends: list[str], estimator: str,
                  inputs: list[str], outputs: list[str], source: Path | None,
                  explain: dict, backend_options: BackendOptions | None = None) -> Path:
    """Write `module` (partitioned and outlined) and its weights and manifest to `out`:
    written in full into a staging directory first and then renamed into place, so that a
    failed or interrupted write leaves an earlier artifact at `out` as it was."""
    from collage_xdsl.core.outline import kernel_functions

    out = check_artifact_place(out)
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
        "backend_versions": backend_versions(backends, backend_options),
        "estimator": estimator,
        "estimated_cost": sum(k["cost"] for k in kernels if k["cost"] is not None),
        "kernels": kernels,
        "inputs": inputs,
        "outputs": outputs,
        "source": None if source is None else {"path": str(source.resolve()),
                                              "sha256": file_sha256(source)},
    }
    staging = out / f".partial-{os.getpid()}"
    try:
        staging.mkdir(parents=True)
        (staging / MODULE).write_text(str(module) + "\n")
        with open(staging / WEIGHTS, "wb") as f:
            np.savez(f, **_weights(module))
        (staging / EXPLAIN).write_text(json.dumps(explain, indent=2) + "\n")
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        for name in (MODULE, WEIGHTS, EXPLAIN, MANIFEST):  # renames: nothing left to write
            os.replace(staging / name, out / name)
    except OSError as e:
        raise ArtifactError(f"{out}: cannot write the artifact: {e.strerror}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
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


def _is_strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(s, str) for s in value)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_kernel(value: object) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("function"), str)
            and isinstance(value.get("backend"), str)
            and (value.get("cost") is None or _is_number(value["cost"])))


# Every manifest field but `format`: a check of its value and what the check wants.
_FIELDS: dict[str, tuple[Callable[[object], bool], str]] = {
    "format_version": (lambda v: type(v) is int, "an integer"),
    "collage_xdsl": (lambda v: isinstance(v, str), "a version string"),
    "backends": (_is_strings, "a list of backend names"),
    "backend_versions": (lambda v: isinstance(v, dict) and all(
        isinstance(s, str) for s in v.values()), "an object of version strings"),
    "estimator": (lambda v: isinstance(v, str), "a string"),
    "estimated_cost": (_is_number, "a number"),
    "kernels": (lambda v: isinstance(v, list) and all(map(_is_kernel, v)),
                'a list of {"function": string, "backend": string, "cost": number or null}'),
    "inputs": (_is_strings, "a list of names"),
    "outputs": (_is_strings, "a list of names"),
    "source": (lambda v: v is None or isinstance(v, dict) and isinstance(v.get("path"), str)
               and isinstance(v.get("sha256"), str),
               'null or {"path": string, "sha256": string}'),
}


def _check_manifest(manifest: object, where: Path) -> dict:
    """`manifest` when it is one this collage reads, every field there with a value of
    the right type and every backend known; else `ArtifactError("WHERE: field: reason")`."""
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ArtifactError(f"{where}: not a collage artifact manifest")
    for field, (ok, what) in _FIELDS.items():
        if field not in manifest:
            raise ArtifactError(f"{where}: {field}: missing")
        if not ok(manifest[field]):
            raise ArtifactError(f"{where}: {field}: expected {what}, got "
                                f"{reprlib.repr(manifest[field])}")
    if manifest["format_version"] != FORMAT_VERSION:
        raise ArtifactError(f"{where}: format_version: artifact format version "
                            f"{manifest['format_version']!r}, this collage reads "
                            f"{FORMAT_VERSION!r}")
    from collage_xdsl.backends import available_backends

    known = available_backends()
    for name in manifest["backends"]:
        if name not in known:
            raise ArtifactError(f"{where}: backends: unknown backend {name!r} "
                                f"(available: {', '.join(known)})")
    for name in manifest["backend_versions"]:
        if name not in manifest["backends"]:
            raise ArtifactError(f"{where}: backend_versions: {name!r} is not one of the "
                                "backends")
    return manifest


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _check_module(manifest: dict, module: ModuleOp, path: Path) -> None:
    """The module has a @main whose every argument and result the manifest names once,
    and its kernel functions run on the manifest's backends."""
    main = SymbolTable.lookup_symbol(module, "main")
    if not isinstance(main, FuncOp) or main.is_declaration:
        raise ArtifactError(f"{path / MODULE}: no function @main with a body")
    signature = main.function_type
    for field, values, what in (("inputs", signature.inputs, "argument"),
                                ("outputs", signature.outputs, "result")):
        names = manifest[field]
        if len(names) != len(values):
            raise ArtifactError(f"{path / MANIFEST}: {field}: {_count(len(names), 'name')}, "
                                f"but @main has {_count(len(values), what)}")
        if len(set(names)) != len(names):
            raise ArtifactError(f"{path / MANIFEST}: {field}: a name repeats in {names}")
    for func in (op for op in module.ops if isinstance(op, FuncOp)):
        backend = func.attributes.get("collage.backend")
        if isinstance(backend, StringAttr) and backend.data not in manifest["backends"]:
            raise ArtifactError(f"{path / MODULE}: @{func.sym_name.data}: backend "
                                f"{backend.data!r} is not one of the artifact's backends "
                                f"({', '.join(manifest['backends'])})")


def load_artifact(path: str | Path) -> Artifact:
    """Read and check an artifact directory; its weights go into the process's weight
    store. Anything missing, malformed or inconsistent is an `ArtifactError` naming the
    file (and the manifest field)."""
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
    manifest = _check_manifest(manifest, path / MANIFEST)
    _restore_weights(path, weight_store())
    try:
        text = (path / MODULE).read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ArtifactError(not_utf8(path / MODULE, e)) from None
    try:
        module = Parser(ir_context(), text, str(path / MODULE)).parse_module()
        module.verify()
    except ParseError as e:  # its message starts with the file's name
        raise ArtifactError(str(e).strip()) from None
    except DiagnosticException as e:
        raise ArtifactError(f"{path / MODULE}: {e}") from None
    _check_module(manifest, module, path)
    return Artifact(path, module, manifest)
