"""xDSL dialects of collage-xdsl."""

from collections.abc import Callable

from xdsl.context import Context
from xdsl.ir import Dialect


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Dialect factories by name, for collage-opt and the xdsl.universe entry point."""

    def get_collage() -> Dialect:
        from collage_xdsl.dialects.collage import Collage

        return Collage

    return {"collage": get_collage}


def ir_context() -> Context:
    """A context with the dialects of collage IR text: builtin, func and collage (what
    kernel modules, outlined modules and artifacts are written in)."""
    from collage_xdsl.dialects.collage import Collage
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func

    ctx = Context()
    for dialect in (Builtin, Func, Collage):
        ctx.load_dialect(dialect)
    return ctx
