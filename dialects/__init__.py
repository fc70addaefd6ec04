"""xDSL dialects of collage-xdsl."""

from collections.abc import Callable

from xdsl.ir import Dialect


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Dialect factories by name, for collage-opt and the xdsl.universe entry point."""

    def get_collage() -> Dialect:
        from collage_xdsl.dialects.collage import Collage

        return Collage

    return {"collage": get_collage}
