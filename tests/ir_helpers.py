"""IR helpers shared by the tests (pytest puts this directory on sys.path)."""

from __future__ import annotations

from collage_xdsl.dialects import ir_context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser


def parse(src: str) -> ModuleOp:
    """A module of builtin, func and collage ops from its text."""
    return Parser(ir_context(), src).parse_module()


def main_of(module: ModuleOp) -> FuncOp:
    """The module's first op, a function."""
    func = module.body.block.first_op
    assert isinstance(func, FuncOp)
    return func
