"""Loading what the `collage` commands are given: a model (`.onnx` or `.mlir`), its
inputs, and the reference its outputs are checked against.

    model = load_model("m.onnx", ["input:1,3,224,224"])
    inputs = load_inputs(model, "in.npz") or random_inputs(model, seed=0)
"""

from __future__ import annotations

import argparse
import math
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser
from xdsl.traits import SymbolTable
from xdsl.universe import Universe
from xdsl.utils.exceptions import DiagnosticException

from collage_xdsl.dialects import get_all_dialects
from collage_xdsl.errors import CollageError, diagnostic_message, not_utf8
from collage_xdsl.ir.inputs import check_static, random_arguments


@dataclass
class LoadedModel:
    """A module with `@main`, and the names of its inputs and outputs."""

    module: ModuleOp
    main: FuncOp
    input_names: list[str]
    output_names: list[str]
    onnx_path: Path | None


def _context() -> Context:
    ctx = Context()
    for name, factory in {**Universe.get_multiverse().all_dialects,
                          **get_all_dialects()}.items():
        if name not in ctx.registered_dialect_names:
            ctx.register_dialect(name, factory)
    return ctx


def load_model(path: str | Path, input_shapes: Sequence[str] | None = None) -> LoadedModel:
    """Import `path` (`.onnx`, symbolic input dimensions fixed by `input_shapes`,
    ``--input-shape`` values) or parse it (`.mlir`), verified, with input/output names."""
    path = Path(path)
    if not path.is_file():
        raise CollageError(f"{path}: no such file")
    if path.suffix == ".onnx":
        from collage_xdsl.frontend import (  # onnx: .onnx only
            parse_input_shapes,
            read_onnx,
        )

        module, proto = read_onnx(path.read_bytes(), str(path),
                                  parse_input_shapes(input_shapes))
        graph = proto.graph
        initializers = {t.name for t in graph.initializer}
        inputs = [i.name for i in graph.input if i.name not in initializers]
        outputs = [o.name for o in graph.output]
    elif path.suffix == ".mlir":
        if input_shapes:
            raise CollageError(f"{path}: --input-shape fixes an ONNX model's symbolic "
                               "dimensions; a module's shapes are its types")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise CollageError(not_utf8(path, e)) from None
        module = Parser(_context(), text, str(path)).parse_module()
        inputs = outputs = None
    else:
        raise CollageError(f"{path}: expected an .onnx model or an .mlir module")
    try:
        module.verify()
    except DiagnosticException as e:
        raise CollageError(diagnostic_message(e, str(path))) from None
    main = SymbolTable.lookup_symbol(module, "main")
    if not isinstance(main, FuncOp):
        raise CollageError(f"{path}: the module has no func.func @main")
    if len(main.body.blocks) != 1:
        raise CollageError(f"{path}: @main has {len(main.body.blocks)} blocks; collage runs "
                           "functions of one block")
    try:
        check_static(main)
    except CollageError as e:
        raise CollageError(f"{path}: {e}") from None
    args, n_out = main.body.block.args, len(main.function_type.outputs.data)
    if inputs is None or outputs is None:  # an .mlir module names only its arguments
        inputs = [a.name_hint or f"arg{i}" for i, a in enumerate(args)]
        outputs = [f"output{i}" for i in range(n_out)]
    if len(inputs) != len(args) or len(outputs) != n_out:
        raise CollageError(
            f"{path}: @main has {len(args)} arguments and {n_out} results, the model "
            f"{len(inputs)} inputs and {len(outputs)} outputs"
        )
    return LoadedModel(module, main, inputs, outputs, path if path.suffix == ".onnx" else None)


def check_input_options(args: argparse.Namespace) -> None:
    """`--seed`, `--rtol` and `--atol`, as `run` and `bench` take them."""
    if args.seed < 0:
        raise CollageError(f"--seed must be >= 0, got {args.seed}")
    for option, value in (("--rtol", args.rtol), ("--atol", args.atol)):
        if not 0 <= value < math.inf:
            raise CollageError(f"{option} must be a number >= 0, got {value}")


def random_inputs(model: LoadedModel, seed: int) -> list[np.ndarray]:
    """Seeded inputs: floats ~ N(0, 1); integers in range for Gather (else 0 or 1); random bools."""
    return random_arguments(model.main, seed, int_high=2)


def load_inputs(model: LoadedModel, path: str | Path) -> list[np.ndarray]:
    """Inputs from an `.npz`, keyed by input name or positionally (`arr_0`, `arr_1`, ...)."""
    try:
        data = np.load(path, allow_pickle=False)
    except OSError as e:
        raise CollageError(f"{path}: cannot read inputs: {e.strerror or e}") from None
    except (ValueError, EOFError, zipfile.BadZipFile):  # numpy guessed pickle, or no data
        raise CollageError(f"{path}: cannot read inputs: not a NumPy .npz archive") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise CollageError(f"{path}: cannot read inputs: a single .npy array; inputs come "
                           "in an .npz archive (numpy.savez), keyed by input name")
    arrays = []
    with data:
        for i, name in enumerate(model.input_names):
            key = name if name in data.files else f"arr_{i}"
            if key not in data.files:
                raise CollageError(f"{path}: no array for input '{name}' "
                                   f"(has {', '.join(data.files) or 'none'})")
            try:
                arrays.append(data[key])
            except (ValueError, EOFError, zipfile.BadZipFile, zlib.error) as e:
                raise CollageError(f"{path}: cannot read input '{name}' ({key}): {e}") from None
    return arrays


def summary(name: str, value: np.ndarray) -> str:
    """One line: name, shape, dtype, min/max/mean and a CRC-32 of the bytes."""
    a = np.asarray(value)  # ascontiguousarray would make a scalar 1-d
    stats = "empty"
    if a.size:
        f = a.astype(np.float64)
        stats = f"min={f.min():.6g} max={f.max():.6g} mean={f.mean():.6g}"
    crc = zlib.crc32(a.tobytes())
    return f"{name}: shape={list(a.shape)} dtype={a.dtype} {stats} crc32={crc:08x}"


def onnxruntime_outputs(path: Path, names: list[str], inputs: Sequence[np.ndarray],
                        threads: int) -> list[np.ndarray]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: no warnings about unused initializers
    try:
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        return session.run(None, dict(zip(names, inputs)))
    except Exception as e:  # onnxruntime's own errors (Fail, InvalidGraph, ...) share no base
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise CollageError(f"{path}: --check: onnxruntime cannot run the model as the "
                           f"reference: {reason}") from None


def compare(name: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> str | None:
    """Why `got` differs from `want` (None when they agree within rtol/atol)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return (f"{name}: got {got.dtype}{list(got.shape)}, "
                f"onnxruntime gives {want.dtype}{list(want.shape)}")
    if np.issubdtype(got.dtype, np.floating):
        bad = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        bad = got != want
    if not bad.any():
        return None
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    return (f"{name}: {int(bad.sum())} of {got.size} elements differ from onnxruntime "
            f"(max abs error {np.nanmax(err):.3g}, rtol={rtol}, atol={atol})")
