"""`collage-opt`: xDSL's optimizer driver with the collage dialects, passes and an ONNX frontend.

    collage-opt model.onnx                              # import and print the graph IR
    collage-opt in.mlir -p 'collage-partition{backends=tvm,onnxruntime estimator=mock}'
    collage-opt dynamic.onnx --input-shape input:1,3,224,224   # fix symbolic dimensions

Everything of `xdsl-opt` (`-p` pipelines with options, `--split-input-file`,
`--verify-diagnostics`, `--print-between-passes`, `--time-passes`, `--print-op-generic`)
works unchanged. A bad input ends with an `error: ...` line on stderr and exit status 1.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from importlib.metadata import version
from typing import IO, TYPE_CHECKING

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    PassFailedException,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from collage_xdsl.dialects import get_all_dialects
from collage_xdsl.errors import CollageError, not_utf8
from collage_xdsl.passes import get_all_passes

if TYPE_CHECKING:
    import onnx


class CollageOptMain(xDSLOptMain):
    """xDSLOptMain that also registers collage-xdsl's dialects, passes and `.onnx` frontend."""

    version_format = f"collage-opt {version('collage-xdsl')} (xDSL {{xdsl_version}})"

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="collage-xdsl modular optimizer driver", args=args)

    def register_all_dialects(self):
        super().register_all_dialects()
        registered = set(self.ctx.registered_dialect_names)
        for name, factory in get_all_dialects().items():
            if name not in registered:
                self.ctx.register_dialect(name, factory)

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_frontends(self):
        super().register_all_frontends()
        self.available_frontends["onnx"] = self._parse_onnx

    def register_all_arguments(self, arg_parser):
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--input-shape", action="append", metavar="NAME:D1,D2,...",
            help="fix the symbolic dimensions of an .onnx model's input (repeatable)")

    def _parse_onnx(self, io: IO[bytes]) -> ModuleOp:
        """The `.onnx` frontend: xDSL hands frontends the input as a binary stream."""
        shapes = parse_input_shapes(self.args.input_shape)
        return read_onnx(io.read(), self.get_input_name(), shapes)[0]

    def setup_pipeline(self):
        try:
            super().setup_pipeline()
        except (ValueError, ArgSpecParseError) as e:
            raise CollageError(f"pass pipeline '{self.args.passes}': {e}") from None

    def apply_passes(self, prog: ModuleOp):
        """Apply the pipeline; a pass's CollageError becomes a diagnostic, so that
        `--verify-diagnostics` can check it like a verifier error."""
        try:
            super().apply_passes(prog)
        except CollageError as e:
            raise PassFailedException(str(e)) from None


def parse_input_shapes(specs: Sequence[str] | None) -> dict[str, list[int]] | None:
    """``--input-shape NAME:D1,D2,...`` values (symbolic input dimensions fixed) as the
    frontend's ``input_shapes``; None when there are none."""
    if not specs:
        return None
    shapes: dict[str, list[int]] = {}
    for spec in specs:
        name, sep, dims = spec.rpartition(":")
        try:
            shape = [int(d) for d in dims.split(",")]
        except ValueError:
            shape = []
        if not sep or not name or not shape or min(shape) < 1 or name in shapes:
            raise CollageError(f"--input-shape: expected NAME:D1,D2,... with positive "
                               f"dimensions, each input once, got {spec!r}")
        shapes[name] = shape
    return shapes


def read_onnx(data: bytes, name: str, input_shapes: dict[str, list[int]] | None = None
              ) -> tuple[ModuleOp, onnx.ModelProto]:
    """Import the serialized ONNX model `data` read from `name` (named in every error),
    with `input_shapes` fixing symbolic input dimensions."""
    import onnx

    from collage_xdsl.frontend import FrontendError, import_onnx

    try:
        model = onnx.load_model_from_string(data)
    except Exception as e:  # protobuf decode errors have no common base class
        raise FrontendError(f"{name}: not a readable ONNX model: {e}") from None
    if not model.HasField("graph"):
        raise FrontendError(f"{name}: not an ONNX model: it has no graph"
                            + (" (the file is empty)" if not data else ""))
    try:
        return import_onnx(model, input_shapes), model
    except FrontendError as e:  # its message names the graph and node; add the file
        raise FrontendError(f"{name}: {e}") from None


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 1


def diagnostic_message(e: DiagnosticException, source: str) -> str:
    """A verifier diagnostic as `SOURCE: reason` plus the op it points at (the line above
    the `^^^` marker in the annotated IR xDSL attaches as a note)."""
    message = f"{source}: {e}"
    for note in getattr(e, "__notes__", ()):
        lines = note.splitlines()
        for line, below in zip(lines, lines[1:]):
            if re.fullmatch(r"\s*\^+-*", below):
                return f"{message}\n  in: {line.strip()}"
    return message


def main(args: Sequence[str] | None = None) -> int:
    """Entry point of `collage-opt`; returns the exit status (1 on any user error)."""
    tool: CollageOptMain | None = None
    try:
        tool = CollageOptMain(args=args)
        tool.run()
    except DiagnosticException as e:
        return _error(diagnostic_message(e, tool.get_input_name() if tool else "input"))
    except CollageError as e:
        return _error(str(e))
    except ParseError as e:
        return _error(str(e).rstrip())
    except UnicodeDecodeError as e:
        name = tool.get_input_name() if tool else "input"
        return _error(f"{not_utf8(name, e)}; an ONNX model needs -f onnx or .onnx")
    except (OSError, ValueError) as e:
        return _error(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
