"""IR helpers shared by the tests (pytest puts this directory on sys.path)."""

from __future__ import annotations

import numpy as np
from collage_xdsl.dialects import ir_context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser

from collage_xdsl.backends import compile_kernel
from collage_xdsl.ir.interpreter import run_function


def parse(src: str) -> ModuleOp:
    """A module of builtin, func and collage ops from its text."""
    return Parser(ir_context(), src).parse_module()


def main_of(module: ModuleOp) -> FuncOp:
    """The module's first op, a function."""
    func = module.body.block.first_op
    assert isinstance(func, FuncOp)
    return func


def check_kernel(backend: str, func: FuncOp, feeds: list[np.ndarray], rtol: float = 1e-5,
                 atol: float = 1e-5) -> None:
    """`func` compiled for `backend` gives the interpreter's single result on `feeds`."""
    (expected,) = run_function(func, feeds)
    kernel = compile_kernel(backend, func)
    try:
        (actual,) = kernel(feeds)
    finally:
        kernel.release()
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


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
