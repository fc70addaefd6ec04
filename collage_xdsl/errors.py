"""The one exception type users see: a clear message, never a traceback."""


class CollageError(Exception):
    """A user-facing error; its message names the op, node or file and the reason."""


def not_utf8(source: object, e: UnicodeDecodeError) -> str:
    """The message for a text module `source` that does not decode: `SOURCE: not a UTF-8
    text module (byte N is 0xXX)`."""
    return f"{source}: not a UTF-8 text module (byte {e.start} is 0x{e.object[e.start]:02x})"
