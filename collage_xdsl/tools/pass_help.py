"""The help text of collage's passes: each pass with its one-line description and every
option with its default and one-line description (the string under the option's field).

    print(pass_help(get_all_passes()))
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import MISSING, fields

from xdsl.passes import ModulePass

WIDTH = 88


def option_docs(cls: type) -> dict[str, str]:
    """Each dataclass field of `cls` (and its bases) with the first line of the string
    literal right under it."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for field, after in zip(body, body[1:]):
            if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                docs[field.target.id] = " ".join(after.value.value.split())
    return docs


def _default(value: object) -> str:
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    return "none" if value is None else str(value).lower() if isinstance(value, bool) \
        else str(value)


def pass_help(passes: Mapping[str, Callable[[], type[ModulePass]]]) -> str:
    """Every pass: its name, its class docstring's first sentence, and its options."""
    lines = ["collage passes, e.g. -p 'collage-partition{backends=tvm,onnxruntime "
             "estimator=mock},collage-outline':"]
    for name, factory in passes.items():
        cls = factory()
        summary = " ".join((cls.__doc__ or "").split("\n\n")[0].split())
        lines.append(f"  {name}")
        lines += textwrap.wrap(summary, WIDTH, initial_indent="      ",
                               subsequent_indent="      ")
        docs = option_docs(cls)
        for f in fields(cls):
            default = f.default if f.default is not MISSING else f.default_factory() \
                if f.default_factory is not MISSING else ""
            option = f"{f.name.replace('_', '-')}={_default(default)}"
            lines += textwrap.wrap(docs.get(f.name, ""), WIDTH,
                                   initial_indent=f"      {option:<32} ",
                                   subsequent_indent=" " * 39) or [f"      {option}"]
    return "\n".join(lines)
