"""ModulePasses of collage-xdsl."""

from collections.abc import Callable

from xdsl.passes import ModulePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass factories by name, for collage-opt and the xdsl.universe entry point."""
    return {}
