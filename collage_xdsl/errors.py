"""The one exception type users see: a clear message, never a traceback."""


class CollageError(Exception):
    """A user-facing error; its message names the op, node or file and the reason."""
