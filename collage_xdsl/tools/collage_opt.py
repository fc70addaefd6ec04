"""`collage-opt`: xDSL's optimizer driver with the collage dialects, passes and an ONNX frontend.

    collage-opt model.onnx                              # import and print the graph IR
    collage-opt in.mlir -p 'collage-partition{backends=tvm,onnxruntime estimator=mock}'
    collage-opt dynamic.onnx --input-shape input:1,3,224,224   # fix symbolic dimensions

Everything of `xdsl-opt` (`-p` pipelines with options, `--split-input-file`,
`--verify-diagnostics`, `--print-between-passes`, `--time-passes`, `--print-op-generic`)
works unchanged. A bad input ends with an `error: ...` line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import version
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    PassFailedException,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from collage_xdsl.dialects import get_all_dialects
from collage_xdsl.errors import CollageError, diagnostic_message, not_utf8
from collage_xdsl.passes import get_all_passes
from collage_xdsl.tools.pass_help import pass_help


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
        arg_parser.add_argument(
            "--list-passes", action=_ListPasses, passes=self.available_passes,
            help="print the name of every pass (ours and xDSL's) and exit")
        helps = {"passes": "a pass pipeline (collage's passes and their options below; "
                           "every xdsl-opt pass works too: --list-passes)",
                 "version": "print the version and exit",
                 "disable_verify": "do not verify the IR after parsing and after each pass"}
        for action in arg_parser._actions:
            action.help = helps.get(action.dest, action.help)
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        format_help = arg_parser.format_help

        def with_passes() -> str:  # built for --help only: it imports every pass
            arg_parser.epilog = pass_help(get_all_passes())
            return format_help()

        arg_parser.format_help = with_passes

    def _parse_onnx(self, io: IO[bytes]) -> ModuleOp:
        """The `.onnx` frontend: xDSL hands frontends the input as a binary stream."""
        from collage_xdsl.frontend import (  # onnx: .onnx only
            parse_input_shapes,
            read_onnx,
        )

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


class _ListPasses(argparse.Action):
    """`--list-passes`: every registered pass name, one a line."""

    def __init__(self, option_strings, dest, passes, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)
        self.passes = passes

    def __call__(self, parser, namespace, values, option_string=None):
        print("\n".join(sorted(self.passes)))
        parser.exit()


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 1


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
    except KeyboardInterrupt:
        print("interrupted: the costs measured so far are kept in the cost database; no "
              "output was written", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
