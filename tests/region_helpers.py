"""Functions and checks shared by the kernel-region tests (pytest puts this directory on
sys.path): DIAMOND and RELU_SIGMOID_MUL, nodes by SSA name, semantics kept by a rewrite
(and by outlining), the kernel regions of a module."""

from __future__ import annotations

import numpy as np
from collage_xdsl.dialects.collage import KernelOp
from ir_helpers import main_of, parse
from xdsl.dialects.builtin import ModuleOp

from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import of
from collage_xdsl.core.outline import outline_kernels
from collage_xdsl.ir.interpreter import run_function, run_module
from collage_xdsl.measure.estimator import random_inputs

T = "tensor<2x3xf32>"
BIN = f"({T}, {T}) -> {T}"

# %x -> add(c) -> relu -> sigmoid -> add -> mul(c) -> concat(tuple(.., %y)) ; a diamond,
# a constant read twice, a tuple feeding concatenate and two results.
DIAMOND = f"""
func.func @main(%x: {T}, %y: {T}) -> (tensor<4x3xf32>, {T}) {{
  %c = collage.constant dense<1.5> : {T}
  %a = collage.add %x, %c : {BIN}
  %r = collage.relu %a : {T}
  %s = collage.sigmoid %a : {T}
  %e = collage.add %r, %s : {BIN}
  %m = collage.mul %e, %c : {BIN}
  %t = collage.tuple %m, %y : ({T}, {T}) -> tuple<{T}, {T}>
  %k = collage.concat %t {{axis = 0 : i64}} : (tuple<{T}, {T}>) -> tensor<4x3xf32>
  func.return %k, %r : tensor<4x3xf32>, {T}
}}
"""


def nodes(graph: DataflowGraph, *names: str) -> int:
    """The nodes defining the values named `names` (by SSA name hint)."""
    wanted = set(names)
    return of(
        n.index for n in graph.nodes if n.op is not None and n.op.results
        and n.op.results[0].name_hint in wanted
    )


def check_semantics(src: str, rewrite) -> ModuleOp:
    """Run `rewrite(graph)` on a fresh module; before and after (and after outlining)
    compute the same values on random inputs."""
    before = parse(src)
    inputs = random_inputs(before)
    expected = run_function(main_of(before), inputs)
    after = parse(src)
    rewrite(DataflowGraph(main_of(after)))
    after.verify()
    for got, want in zip(run_function(main_of(after), inputs), expected):
        np.testing.assert_array_equal(got, want)
    outlined = after.clone()
    outline_kernels(outlined)
    outlined.verify()
    for got, want in zip(run_module(outlined, inputs), expected):
        np.testing.assert_array_equal(got, want)
    return after


def kernels_of(module: ModuleOp) -> list[KernelOp]:
    return [op for op in module.walk() if isinstance(op, KernelOp)]


RELU_SIGMOID_MUL = f"""
func.func @main(%x: {T}) -> {T} {{
  %a = collage.relu %x : {T}
  %s = collage.sigmoid %a : {T}
  %m = collage.mul %a, %s : {BIN}
  func.return %m : {T}
}}"""
"""{a, m} with s between them: a path leaves {a, m} and re-enters it."""
