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
    kernel_op_names,
)
from collage_xdsl.core.patterns import Pattern, is_op, wildcard
from collage_xdsl.dialects.collage import Collage
from collage_xdsl.errors import CollageError


class TestBackendError(CollageError):
    """A test-backend option names an unknown op or fusion style."""


def _op_name(name: str) -> str:
    full = name if name.startswith("collage.") else f"collage.{name}"
    if full not in kernel_op_names():
        raise TestBackendError(
            f"test backend: unknown op {name!r} (known: "
            f"{', '.join(n.removeprefix('collage.') for n in kernel_op_names())})"
        )
    return full


def _arity(name: str) -> int:
    op = next(o for o in Collage.operations if o.name == name)
    return len(op.get_irdl_definition().operands)


def chain_pattern(text: str) -> Pattern:
    """`a+b+c`: c(.., b(.., a(*, ..), ..), ..) with the chain at any operand position."""
    names = [_op_name(n) for n in text.split("+")]
    pattern: Pattern = is_op(names[0])
    for name in names[1:]:
        arity = _arity(name)
        alternatives = [
            is_op(name)(*(pattern if k == pos else wildcard() for k in range(arity)))
            for pos in range(arity)
        ]
        pattern = alternatives[0]
        for alt in alternatives[1:]:
            pattern = pattern | alt
    return pattern


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
            NamedPattern("_".join(p.split("+")), chain_pattern(p)) for p in patterns
        ),
        fusion=style,
        max_depth=max_depth,
    )
