"""Dataflow graphs the tests share: a function body parsed into a `DataflowGraph`, node
names of a set, and three graphs (a convolution block, a GPT-2 MLP, a split and concat)."""

from __future__ import annotations

from collage_xdsl.dialects import ir_context
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser

from collage_xdsl.core.candidates import node_name
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits


def parse_graph(body: str, args: str = "%x: tensor<2x4xf32>", extra: str = "") -> DataflowGraph:
    """The graph of `func.func @main(<args>) { <body> }` (body ends with func.return);
    `extra` holds further top-level ops of the module."""
    text = f"func.func @main({args}) {{\n{body}\n}}\n{extra}"
    module = Parser(ir_context(), text).parse_module()
    func = next(op for op in module.ops if isinstance(op, FuncOp))
    return DataflowGraph(func)


def names(graph: DataflowGraph, inside: int) -> set[str]:
    return {node_name(graph, i) for i in bits(inside)}


T4 = "tensor<1x2x4x4xf32>"
CONV = f"""
  %w = collage.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = collage.conv2d %x, %w {{strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>,
       dilations = array<i64: 1, 1>, group = 1 : i64}} : ({T4}, tensor<2x2x1x1xf32>) -> {T4}
  %b = collage.constant dense<0.5> : tensor<2x1x1xf32>
  %a = collage.add %c, %b : ({T4}, tensor<2x1x1xf32>) -> {T4}
  %r = collage.relu %a : {T4}
  %m = collage.reduce_sum %r {{axes = array<i64: 2, 3>, keepdims = true}}
       : {T4} -> tensor<1x2x1x1xf32>
  func.return %m : tensor<1x2x1x1xf32>"""
CONV_ARGS = f"%x: {T4}"

# GPT-2 MLP: dense (matmul), bias add, gelu as 0.5*h*(1+tanh(0.7978*(h+0.044715*h^3))), reshape
H = "tensor<4x8xf32>"
S = "tensor<f32>"
MLP = f"""
  %w = collage.constant dense<0.1> : tensor<8x8xf32>
  %mm = collage.matmul %x, %w : ({H}, tensor<8x8xf32>) -> {H}
  %bias = collage.constant dense<0.2> : tensor<8xf32>
  %h = collage.add %mm, %bias : ({H}, tensor<8xf32>) -> {H}
  %three = collage.constant dense<3.0> : {S}
  %p = collage.pow %h, %three : ({H}, {S}) -> {H}
  %k = collage.constant dense<0.044715> : {S}
  %m1 = collage.mul %p, %k : ({H}, {S}) -> {H}
  %a1 = collage.add %h, %m1 : ({H}, {H}) -> {H}
  %s = collage.constant dense<0.7978> : {S}
  %m2 = collage.mul %a1, %s : ({H}, {S}) -> {H}
  %t = collage.tanh %m2 : {H}
  %one = collage.constant dense<1.0> : {S}
  %a2 = collage.add %t, %one : ({H}, {S}) -> {H}
  %half = collage.constant dense<0.5> : {S}
  %m3 = collage.mul %h, %half : ({H}, {S}) -> {H}
  %m4 = collage.mul %m3, %a2 : ({H}, {H}) -> {H}
  %y = collage.reshape %m4 : {H} -> tensor<32xf32>
  func.return %y : tensor<32xf32>"""
MLP_ARGS = f"%x: {H}"

SPLIT = """
  %s:2 = collage.split %x {axis = 0 : i64, sizes = array<i64: 1, 1>}
         : (tensor<2x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>)
  %a = collage.transpose %s#0 {perm = array<i64: 1, 0>} : tensor<1x4xf32> -> tensor<4x1xf32>
  %r = collage.reshape %s#1 : tensor<1x4xf32> -> tensor<4xf32>
  %e = collage.reshape %r : tensor<4xf32> -> tensor<4x1xf32>
  %t = collage.tuple %a, %e : (tensor<4x1xf32>, tensor<4x1xf32>)
       -> tuple<tensor<4x1xf32>, tensor<4x1xf32>>
  %c = collage.concat %t {axis = 1 : i64} : (tuple<tensor<4x1xf32>, tensor<4x1xf32>>)
       -> tensor<4x2xf32>
  %o = collage.relu %c : tensor<4x2xf32>
  func.return %o : tensor<4x2xf32>"""
