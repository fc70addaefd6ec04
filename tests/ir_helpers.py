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


_T = "tensor<4x8xf32>"
RELU_ADD_RELU = f"""
func.func @main(%x: {_T}, %y: {_T}) -> {_T} {{
  %a = collage.relu %x : {_T}
  %b = collage.add %a, %y : ({_T}, {_T}) -> {_T}
  %c = collage.relu %b : {_T}
  func.return %c : {_T}
}}
"""
"""A module of two relus around an add: the kernels the measuring tests time."""
