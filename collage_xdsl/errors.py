"""The one exception type users see, and one-line messages for the errors users meet:
a clear message naming the op, node or file and the reason, never a traceback."""

import re

from xdsl.utils.exceptions import DiagnosticException


class CollageError(Exception):
    """A user-facing error; its message names the op, node or file and the reason."""


def not_utf8(source: object, e: UnicodeDecodeError) -> str:
    """The message for a text module `source` that does not decode: `SOURCE: not a UTF-8
    text module (byte N is 0xXX)`."""
    return f"{source}: not a UTF-8 text module (byte {e.start} is 0x{e.object[e.start]:02x})"


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
