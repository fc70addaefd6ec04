"""`collage`: the user-facing command, one sub-command per job.

    collage compile model.onnx --backends tvm,onnxruntime,openvino -o out/
    collage run out/ --check --profile                # the artifact, through the runtime
    collage explain model.onnx --backends tvm,openvino [--json]
    collage bench model.onnx --backends tvm,onnxruntime,openvino

Every failure is an `error: ...` line on stderr and exit status 1; Ctrl-C is one line
and exit status 130.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import version

from xdsl.utils.exceptions import DiagnosticException, ParseError

from collage_xdsl.errors import CollageError
from collage_xdsl.tools.bench import add_bench
from collage_xdsl.tools.compile import add_compile
from collage_xdsl.tools.explain import add_explain
from collage_xdsl.tools.run import add_run

SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    add_run, add_compile, add_explain, add_bench]
"""Each adds its sub-parser and sets `handler`: `handler(args) -> exit status`."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="collage", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version",
                        version=f"collage-xdsl {version('collage-xdsl')}")
    sub = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")
    for add in SUBCOMMANDS:
        add(sub)
    return parser


INTERRUPTED = ("interrupted: the costs measured so far are kept in the cost database; an "
               "artifact is written only when compile finishes, so none was changed")
"""What Ctrl-C prints (exit status 130)."""


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    except ParseError as e:
        message = str(e).rstrip()
    except (CollageError, DiagnosticException, OSError) as e:
        message = str(e)
    print(f"error: {message}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
