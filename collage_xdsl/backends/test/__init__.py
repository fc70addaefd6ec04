"""The `test` backend: a toy BYOC backend described by options, so tests can declare one.

    make_test_backend(ops=["relu", "add"], fusion="arbitrary",
                      patterns=["conv2d+add+relu"], max_depth=8)

`ops` are op names with or without the `collage.` prefix; each pattern is a chain of op
names joined by `+`, every op consuming the previous one at any operand position (the
other operands and the first op's operands are wildcards); it is labelled
`test.<ops joined by _>`.
"""

from collections.abc import Sequence

from collage_xdsl.backends.base import (
    Backend,
    FusionStyle,
    NamedPattern,
    full_op_name,
    kernel_op_names,
)
from collage_xdsl.core.patterns import chain_pattern
from collage_xdsl.errors import CollageError


class TestBackendError(CollageError):
    """A test-backend option names an unknown op or fusion style."""


def _op_name(name: str) -> str:
    full = full_op_name(name)
    if full is None:
        raise TestBackendError(
            f"test backend: unknown op {name!r} (known: "
            f"{', '.join(n.removeprefix('collage.') for n in kernel_op_names())})"
        )
    return full


def make_test_backend(
    ops: Sequence[str] = (),
    fusion: str = "arbitrary",
    patterns: Sequence[str] = (),
    max_depth: int = 8,
) -> Backend:
    try:
        style = FusionStyle(fusion)
    except ValueError:
        raise TestBackendError(
            f"test backend: unknown fusion style {fusion!r} (none, tvm or arbitrary)"
        ) from None
    return Backend(
        name="test",
        supported_ops={_op_name(n): None for n in ops},
        patterns=tuple(
            NamedPattern("_".join(p.split("+")),
                         chain_pattern([_op_name(n) for n in p.split("+")]))
            for p in patterns
        ),
        fusion=style,
        max_depth=max_depth,
    )
