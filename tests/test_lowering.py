"""Codegen hooks: every dialect op through the ONNX export, and kernels through the
TVM, ONNX Runtime and OpenVINO hooks, checked against the reference interpreter."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from collage_xdsl.dialects import collage as C
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, FunctionType, ModuleOp
from xdsl.dialects.func import Func, FuncOp, ReturnOp
from xdsl.dialects.test import Test
from xdsl.ir import Block, Region
from xdsl.parser import Parser

from collage_xdsl.backends import compile_kernel
from collage_xdsl.backends.kernel import (
    KernelCompileError,
    KernelRunError,
    kernel_function,
)
from collage_xdsl.backends.onnx_export import export_onnx
from collage_xdsl.backends.walk import flatten
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.interpreter import run_function
from collage_xdsl.ir.tensors import constant_op, np_dtype, shape_of, tensor_type

BACKENDS = ["tvm", "onnxruntime", "openvino"]
RNG = np.random.default_rng(7)


def parse(text: str) -> FuncOp:
    ctx = Context()
    for dialect in (Builtin, Func, C.Collage, Test):
        ctx.load_dialect(dialect)
    module = Parser(ctx, text).parse_module()
    module.verify()
    return kernel_function(module)


def random_inputs(func: FuncOp) -> list[np.ndarray]:
    """Seeded inputs for the (tuple-free) parameters: floats in [0.1, 2), ints in [-3, 3)."""
    inputs = []
    for t in func.function_type.inputs.data:
        dtype = np_dtype(t.get_element_type())
        if dtype.kind == "f":
            inputs.append(RNG.uniform(0.1, 2.0, shape_of(t)).astype(dtype))
        elif dtype == np.bool_:
            inputs.append(RNG.integers(0, 2, shape_of(t)).astype(bool))
        else:
            inputs.append(RNG.integers(-3, 3, shape_of(t)).astype(dtype))
    return inputs


def check(backend: str, func: FuncOp, rtol: float = 1e-4, atol: float = 1e-5) -> None:
    inputs = random_inputs(func)
    expected = flatten(run_function(func, inputs))
    kernel = compile_kernel(backend, func)
    try:
        actual = kernel(inputs)
    finally:
        kernel.release()
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a.dtype == e.dtype and a.shape == e.shape, f"output {i}"
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=f"output {i}")


# ---------------------------------------------------------------------------
# Op families: between them every computing op of the dialect
# ---------------------------------------------------------------------------

ELEMENTWISE = """
func.func @elementwise(%x: tensor<2x3x4xf32>, %y: tensor<3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %n = collage.neg %x : tensor<2x3x4xf32>
  %a = collage.abs %n : tensor<2x3x4xf32>
  %l = collage.log %a : tensor<2x3x4xf32>
  %r = collage.relu %l : tensor<2x3x4xf32>
  %s = collage.sigmoid %l : tensor<2x3x4xf32>
  %t = collage.tanh %l : tensor<2x3x4xf32>
  %e = collage.erf %l : tensor<2x3x4xf32>
  %q = collage.sqrt %a : tensor<2x3x4xf32>
  %c = collage.reciprocal %q : tensor<2x3x4xf32>
  %lr = collage.leaky_relu %l {alpha = 0.2 : f32} : tensor<2x3x4xf32>
  %cl = collage.clip %lr {min = -0.05 : f32, max = 0.5 : f32} : tensor<2x3x4xf32>
  %ch = collage.clip %l {max = 0.25 : f32} : tensor<2x3x4xf32>
  %g = collage.gelu %l : tensor<2x3x4xf32>
  %gt = collage.gelu %l {approximate = "tanh"} : tensor<2x3x4xf32>
  %ex = collage.exp %t : tensor<2x3x4xf32>
  %b1 = collage.add %r, %y : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  %b2 = collage.sub %b1, %s : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %b3 = collage.mul %b2, %e : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %b4 = collage.div %b3, %ex : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %b5 = collage.pow %a, %y : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  %b6 = collage.maximum %b4, %cl : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %b7 = collage.minimum %b6, %c : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %b8 = collage.add %g, %gt : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %b9 = collage.add %b8, %ch : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %b7, %b5, %b9 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}
"""

ACTIVATIONS = """
func.func @activations(%x: tensor<2x3x4xf32>, %s: tensor<3x1xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %h = collage.constant dense<1.05> : tensor<f32>
  %k = collage.constant dense<8.0> : tensor<f32>
  %c = collage.sub %x, %h : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
  %z = collage.mul %c, %k : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
  %sl = collage.sub %s, %h : (tensor<3x1xf32>, tensor<f32>) -> tensor<3x1xf32>
  %hsg = collage.hard_sigmoid %z {alpha = 0.3 : f32, beta = 0.4 : f32} : tensor<2x3x4xf32>
  %hsw = collage.hard_swish %z : tensor<2x3x4xf32>
  %mi = collage.mish %z : tensor<2x3x4xf32>
  %el = collage.elu %z {alpha = 0.7 : f32} : tensor<2x3x4xf32>
  %sp = collage.softplus %z : tensor<2x3x4xf32>
  %se = collage.selu %z {alpha = 1.5 : f32, gamma = 1.1 : f32} : tensor<2x3x4xf32>
  %pr = collage.prelu %z, %sl : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  func.return %hsg, %hsw, %mi, %el, %sp, %se, %pr : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}
"""

LOGIC = """
func.func @logic(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>, %i: tensor<3xi64>) -> (tensor<2x4xf32>, tensor<2x4xi1>, tensor<2x4xi32>, tensor<2x3xf32>, tensor<3x2x4xf32>) {
  %eq = collage.equal %x, %x : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xi1>
  %lt = collage.less %x, %y : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xi1>
  %gt = collage.greater %x, %y : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xi1>
  %ng = collage.not %gt : tensor<2x4xi1>
  %w = collage.where %lt, %x, %y : (tensor<2x4xi1>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %k = collage.constant dense<[[3.0, -3.0, 2.5, -1.5], [-3.0, 3.0, 1.0, -2.0]]> : tensor<2x4xf32>
  %m = collage.mul %x, %k : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %ci = collage.cast %m : tensor<2x4xf32> -> tensor<2x4xi32>
  %two = collage.constant dense<[[2, -2, 3, -3], [2, 2, -2, 5]]> : tensor<2x4xi32>
  %d = collage.div %ci, %two : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
  %ga = collage.gather %x, %i {axis = 1 : i64} : (tensor<2x4xf32>, tensor<3xi64>) -> tensor<2x3xf32>
  %ex = collage.expand %w : tensor<2x4xf32> -> tensor<3x2x4xf32>
  func.return %w, %ng, %d, %ga, %ex : tensor<2x4xf32>, tensor<2x4xi1>, tensor<2x4xi32>, tensor<2x3xf32>, tensor<3x2x4xf32>
}
"""

LAYOUT = """
func.func @layout(%x: tensor<2x3x4xf32>) -> (tensor<3x2x4xf32>, tensor<2x3x8xf32>, tensor<2x2x4xf32>, tensor<2x1x4xf32>, tensor<1x3x2xf32>, tensor<4x5x4xf32>, tensor<3xf32>, tensor<f32>, tensor<2x3x1xf32>) {
  %t = collage.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %r = collage.reshape %t : tensor<3x2x4xf32> -> tensor<2x3x4xf32>
  %c = collage.concat %x, %r {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
  %s:2 = collage.split %x {axis = 1 : i64, sizes = array<i64: 2, 1>} : (tensor<2x3x4xf32>) -> (tensor<2x2x4xf32>, tensor<2x1x4xf32>)
  %sl = collage.slice %x {starts = array<i64: -1, 0>, ends = array<i64: -100, 100>, axes = array<i64: 0, 2>, steps = array<i64: -1, 2>} : tensor<2x3x4xf32> -> tensor<2x3x2xf32>
  %sl2 = collage.slice %sl {starts = array<i64: 1>, ends = array<i64: 2>, axes = array<i64: 0>, steps = array<i64: 1>} : tensor<2x3x2xf32> -> tensor<1x3x2xf32>
  %p = collage.pad %x {pads = array<i64: 1, 1, 0, 1, 1, 0>, value = 0.5 : f32} : tensor<2x3x4xf32> -> tensor<4x5x4xf32>
  %rs = collage.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = false} : tensor<2x3x4xf32> -> tensor<3xf32>
  %rm = collage.reduce_mean %x {keepdims = false} : tensor<2x3x4xf32> -> tensor<f32>
  %rx = collage.reduce_max %x {axes = array<i64: -1>, keepdims = true} : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  func.return %t, %c, %s#0, %s#1, %sl2, %p, %rs, %rm, %rx : tensor<3x2x4xf32>, tensor<2x3x8xf32>, tensor<2x2x4xf32>, tensor<2x1x4xf32>, tensor<1x3x2xf32>, tensor<4x5x4xf32>, tensor<3xf32>, tensor<f32>, tensor<2x3x1xf32>
}
"""

NN = """
func.func @nn(%x: tensor<1x4x7x7xf32>, %w: tensor<6x2x3x3xf32>, %c: tensor<6xf32>, %v: tensor<6xf32>, %a: tensor<2x5x8xf32>, %b: tensor<8x3xf32>, %g: tensor<8xf32>) -> (tensor<1x6x2x2xf32>, tensor<1x6x2x2xf32>, tensor<1x6x1x1xf32>, tensor<1x6x4x3xf32>, tensor<2x5x3xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>) {
  %cv = collage.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 2, 1, 0>, dilations = array<i64: 1, 2>, group = 2 : i64} : (tensor<1x4x7x7xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x4x3xf32>
  %bn = collage.batch_norm %cv, %c, %v, %c, %v {epsilon = 1.0e-03 : f32} : (tensor<1x6x4x3xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x6x4x3xf32>
  %lrn = collage.lrn %bn {size = 3 : i64, alpha = 0.1 : f32, beta = 0.75 : f32, bias = 2.0 : f32} : tensor<1x6x4x3xf32>
  %mp = collage.max_pool2d %lrn {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true} : tensor<1x6x4x3xf32> -> tensor<1x6x2x2xf32>
  %ap = collage.avg_pool2d %lrn {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x6x4x3xf32> -> tensor<1x6x2x2xf32>
  %gp = collage.global_avg_pool2d %bn : tensor<1x6x4x3xf32> -> tensor<1x6x1x1xf32>
  %ai = collage.avg_pool2d %lrn {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 1, 0, 0, 1>, count_include_pad = true} : tensor<1x6x4x3xf32> -> tensor<1x6x4x3xf32>
  %mm = collage.matmul %a, %b : (tensor<2x5x8xf32>, tensor<8x3xf32>) -> tensor<2x5x3xf32>
  %sm = collage.softmax %a {axis = 1 : i64} : tensor<2x5x8xf32>
  %ln = collage.layer_norm %a, %g, %g {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  func.return %mp, %ap, %gp, %ai, %mm, %sm, %ln : tensor<1x6x2x2xf32>, tensor<1x6x2x2xf32>, tensor<1x6x1x1xf32>, tensor<1x6x4x3xf32>, tensor<2x5x3xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>
}
"""

NORMS = """
func.func @norms(%x: tensor<2x4x3x5xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<2x4x3x5xf32>, tensor<2x4x3x5xf32>, tensor<2x1x3x1xf32>, tensor<2x4x3xf32>, tensor<2x3x5xi64>) {
  %in = collage.instance_norm %x, %s, %b {epsilon = 1.0e-05 : f32} : (tensor<2x4x3x5xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x5xf32>
  %gn = collage.group_norm %in, %b, %s {num_groups = 2 : i64, epsilon = 1.0e-03 : f32} : (tensor<2x4x3x5xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x5xf32>
  %mn = collage.reduce_min %x {axes = array<i64: 1, 3>, keepdims = true} : tensor<2x4x3x5xf32> -> tensor<2x1x3x1xf32>
  %l2 = collage.reduce_l2 %gn {axes = array<i64: -1>, keepdims = false} : tensor<2x4x3x5xf32> -> tensor<2x4x3xf32>
  %am = collage.argmax %x {axis = 1 : i64, keepdims = false} : tensor<2x4x3x5xf32> -> tensor<2x3x5xi64>
  func.return %in, %gn, %mn, %l2, %am : tensor<2x4x3x5xf32>, tensor<2x4x3x5xf32>, tensor<2x1x3x1xf32>, tensor<2x4x3xf32>, tensor<2x3x5xi64>
}
"""

# strided, padded, output-padded, grouped and dilated; stride 1 with dilation
CONV_TRANSPOSE = """
func.func @conv_transpose(%x: tensor<1x6x4x3xf32>, %w: tensor<6x2x3x3xf32>) -> (tensor<1x4x9x8xf32>, tensor<1x2x8x5xf32>) {
  %a = collage.conv_transpose2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 1>, dilations = array<i64: 1, 2>, output_padding = array<i64: 1, 0>, group = 2 : i64} : (tensor<1x6x4x3xf32>, tensor<6x2x3x3xf32>) -> tensor<1x4x9x8xf32>
  %b = collage.conv_transpose2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 2, 1>, output_padding = array<i64: 0, 0>, group = 1 : i64} : (tensor<1x6x4x3xf32>, tensor<6x2x3x3xf32>) -> tensor<1x2x8x5xf32>
  func.return %a, %b : tensor<1x4x9x8xf32>, tensor<1x2x8x5xf32>
}
"""

# split results regrouped through a tuple, concatenated from the tuple, a tuple parameter
# and a tuple result, and a composite region inlined into the kernel
TUPLES = """
func.func @tuples(%x: tensor<2x6xf32>, %p: tuple<tensor<2x2xf32>, tensor<2x1xf32>>) -> (tuple<tensor<2x3xf32>, tensor<2x6xf32>>, tensor<2x3xf32>) {
  %s:3 = collage.split %x {axis = 1 : i64, sizes = array<i64: 1, 2, 3>} : (tensor<2x6xf32>) -> (tensor<2x1xf32>, tensor<2x2xf32>, tensor<2x3xf32>)
  %t = collage.tuple %s#2, %s#1, %s#0 : (tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x1xf32>) -> tuple<tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x1xf32>>
  %c = collage.concat %t {axis = 1 : i64} : (tuple<tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x1xf32>>) -> tensor<2x6xf32>
  %p0 = collage.get_item %p {index = 0 : i64} : (tuple<tensor<2x2xf32>, tensor<2x1xf32>>) -> tensor<2x2xf32>
  %p1 = collage.get_item %p {index = 1 : i64} : (tuple<tensor<2x2xf32>, tensor<2x1xf32>>) -> tensor<2x1xf32>
  %q = collage.concat %p1, %p0 {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x2xf32>) -> tensor<2x3xf32>
  %r = collage.composite "add_relu" (%q, %s#2) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>):
    %sum = collage.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %y = collage.relu %sum : tensor<2x3xf32>
    collage.yield %y : tensor<2x3xf32>
  }
  %u = collage.tuple %q, %c : (tensor<2x3xf32>, tensor<2x6xf32>) -> tuple<tensor<2x3xf32>, tensor<2x6xf32>>
  func.return %u, %r : tuple<tensor<2x3xf32>, tensor<2x6xf32>>, tensor<2x3xf32>
}
"""

RESIZE = """
func.func @resize(%x: tensor<1x2x5x6xf32>) -> (tensor<1x2x10x9xf32>, tensor<1x2x2x3xf32>, tensor<1x2x3x4xf32>, tensor<1x4x15x6xf32>) {
  %n = collage.resize %x {mode = "nearest", coordinate_transformation_mode = "half_pixel", nearest_mode = "round_prefer_floor", scales = array<f32: 2.0, 1.5>} : tensor<1x2x5x6xf32> -> tensor<1x2x10x9xf32>
  %d = collage.resize %x {mode = "linear", coordinate_transformation_mode = "asymmetric", scales = array<f32: 0.5, 0.6>} : tensor<1x2x5x6xf32> -> tensor<1x2x2x3xf32>
  %l = collage.resize %x {mode = "linear", coordinate_transformation_mode = "align_corners"} : tensor<1x2x5x6xf32> -> tensor<1x2x3x4xf32>
  %t = collage.tile %x {repeats = array<i64: 1, 2, 3, 1>} : tensor<1x2x5x6xf32> -> tensor<1x4x15x6xf32>
  func.return %n, %d, %l, %t : tensor<1x2x10x9xf32>, tensor<1x2x2x3xf32>, tensor<1x2x3x4xf32>, tensor<1x4x15x6xf32>
}
"""

# attention's two contractions, a transpose, a row sum and three operands
EINSUM = """
func.func @einsum(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %m: tensor<3x4xf32>, %n: tensor<4x5xf32>) -> (tensor<1x2x4x8xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3x5xf32>) {
  %s = collage.einsum %q, %k {equation = "bhid,bhjd->bhij"} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x6xf32>
  %o = collage.einsum %s, %k {equation = "bhij,bhjd->bhid"} : (tensor<1x2x4x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
  %t = collage.einsum %m {equation = "ij->ji"} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %r = collage.einsum %m {equation = "ij->i"} : (tensor<3x4xf32>) -> tensor<3xf32>
  %c = collage.einsum %m, %n, %n {equation = "ij,jk,lk->il"} : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<3x4xf32>
  %mm = collage.einsum %c, %n {equation = "ij,jk->ik"} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return %o, %t, %r, %mm : tensor<1x2x4x8xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3x5xf32>
}
"""

# negative i32 indices; batched gather_nd; scatter with repeated tuples (add) and distinct
# ones (none); the 2 smallest; exclusive reverse cumsum
INDEXING = """
func.func @indexing(%x: tensor<3x4x5xf32>, %i: tensor<3x2x5xi32>, %m: tensor<4x5xf32>) -> (tensor<3x2x5xf32>, tensor<3x2x5xf32>, tensor<4x5xf32>, tensor<4x2xf32>, tensor<4x2xi64>, tensor<3x4x5xf32>) {
  %ge = collage.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4x5xf32>, tensor<3x2x5xi32>) -> tensor<3x2x5xf32>
  %b = collage.constant dense<[[[3], [-4]], [[0], [2]], [[-1], [1]]]> : tensor<3x2x1xi64>
  %gb = collage.gather_nd %x, %b {batch_dims = 1 : i64} : (tensor<3x4x5xf32>, tensor<3x2x1xi64>) -> tensor<3x2x5xf32>
  %t = collage.constant dense<[[2, -1], [0, 3], [-3, 0]]> : tensor<3x2xi64>
  %gn = collage.gather_nd %x, %t {batch_dims = 0 : i64} : (tensor<3x4x5xf32>, tensor<3x2xi64>) -> tensor<3x5xf32>
  %r = collage.constant dense<[[0], [-1], [2]]> : tensor<3x1xi64>
  %sc = collage.scatter_nd %m, %r, %gn : (tensor<4x5xf32>, tensor<3x1xi64>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %d = collage.constant dense<[[1], [1], [-4]]> : tensor<3x1xi64>
  %sa = collage.scatter_nd %sc, %d, %gn {reduction = "add"} : (tensor<4x5xf32>, tensor<3x1xi64>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %tv, %ti = collage.top_k %sa {k = 2 : i64, axis = -1 : i64, largest = false} : tensor<4x5xf32> -> tensor<4x2xf32>, tensor<4x2xi64>
  %cs = collage.cumsum %x {axis = 1 : i64, exclusive = true, reverse = true} : tensor<3x4x5xf32>
  func.return %ge, %gb, %sa, %tv, %ti, %cs : tensor<3x2x5xf32>, tensor<3x2x5xf32>, tensor<4x5xf32>, tensor<4x2xf32>, tensor<4x2xi64>, tensor<3x4x5xf32>
}
"""

# per channel (i8, along axis 1) and per tensor (ui8); power-of-two scales divide exactly
QDQ = """
func.func @qdq(%x: tensor<2x3x4xf32>, %q: tensor<2x3x4xui8>) -> (tensor<2x3x4xi8>, tensor<2x3x4xf32>, tensor<2x3x4xui8>, tensor<2x3x4xf32>) {
  %s = collage.constant dense<[5.000000e-01, 2.500000e-01, 1.250000e-01]> : tensor<3xf32>
  %z = collage.constant dense<[0, -3, 5]> : tensor<3xi8>
  %a = collage.quantize_linear %x, %s, %z {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3x4xi8>
  %d = collage.dequantize_linear %a, %s, %z {axis = 1 : i64} : (tensor<2x3x4xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3x4xf32>
  %t = collage.constant dense<6.250000e-02> : tensor<f32>
  %u = collage.constant dense<128> : tensor<ui8>
  %b = collage.quantize_linear %x, %t, %u : (tensor<2x3x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x3x4xui8>
  %e = collage.dequantize_linear %q, %t, %u : (tensor<2x3x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3x4xf32>
  func.return %a, %d, %b, %e : tensor<2x3x4xi8>, tensor<2x3x4xf32>, tensor<2x3x4xui8>, tensor<2x3x4xf32>
}
"""

FAMILIES = {"elementwise": ELEMENTWISE, "activations": ACTIVATIONS, "logic": LOGIC,
            "layout": LAYOUT, "nn": NN, "conv_transpose": CONV_TRANSPOSE, "indexing": INDEXING,
            "norms": NORMS, "resize": RESIZE, "einsum": EINSUM, "qdq": QDQ}


def tuple_inputs(func: FuncOp) -> tuple[list, list[np.ndarray]]:
    """Inputs for @tuples: (interpreter inputs with a tuple, the flat kernel inputs)."""
    x = RNG.uniform(-1, 1, (2, 6)).astype(np.float32)
    p = (RNG.uniform(-1, 1, (2, 2)).astype(np.float32),
         RNG.uniform(-1, 1, (2, 1)).astype(np.float32))
    return [x, p], [x, *p]


def test_families_cover_every_computing_op():
    used = {op.name for text in [*FAMILIES.values(), TUPLES] for op in parse(text).walk()}
    missing = {op.name for op in C.Collage.operations} - used
    assert missing == {"collage.kernel"}  # kernel functions hold no kernel regions


@pytest.mark.parametrize("family", FAMILIES)
def test_onnx_export_is_valid_and_matches_interpreter(family):
    func = parse(FAMILIES[family])
    model = export_onnx(func)
    onnx.checker.check_model(model, full_check=True)
    assert [i.name for i in model.graph.input] == [f"in{i}" for i in range(len(func.args))]
    assert len(model.graph.output) == len(func.function_type.outputs.data)
    check("onnxruntime", func)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("backend", ["tvm", "openvino"])
def test_op_families_on_backend(backend, family):
    check(backend, parse(FAMILIES[family]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_tuples_split_concat_composite(backend):
    func = parse(TUPLES)
    reference_inputs, flat_inputs = tuple_inputs(func)
    expected = flatten(run_function(func, reference_inputs))
    kernel = compile_kernel(backend, func)
    actual = kernel(flat_inputs)
    assert len(actual) == 3
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------
# Kernels with weights (initializers / relax constants)
# ---------------------------------------------------------------------------


def weighted_kernel(name: str, inputs: list[tuple], build) -> FuncOp:
    """func @name(inputs) whose body ``build(block, *args)`` appends ops; returns the last."""
    types = [tensor_type(shape, np.float32) for shape in inputs]
    block = Block(arg_types=types)
    results = build(block, *block.args)
    block.add_op(ReturnOp(*results))
    func = FuncOp(name, FunctionType.from_lists(types, [r.type for r in results]), Region(block))
    ModuleOp([func]).verify()
    return func


def add_ops(block, *ops):
    block.add_ops(ops)
    return ops[-1]


def conv_bias_relu(channels: int = 8, size: int = 16) -> FuncOp:
    w = constant_op(RNG.normal(0, 0.3, (channels, 3, 3, 3)).astype(np.float32))
    b = constant_op(RNG.normal(0, 0.3, (1, channels, 1, 1)).astype(np.float32))

    def build(block, x):
        conv = add_ops(block, w, b, C.Conv2dOp(x, w.output, pads=(1, 1, 1, 1)))
        add = add_ops(block, C.AddOp(conv.output, b.output))
        return [add_ops(block, C.ReluOp(add.output)).output]

    return weighted_kernel("conv_bias_relu", [(1, 3, size, size)], build)


def matmul_add_gelu(n: int = 32) -> FuncOp:
    w = constant_op(RNG.normal(0, 0.2, (n, n)).astype(np.float32))
    b = constant_op(RNG.normal(0, 0.2, (n,)).astype(np.float32))

    def build(block, x):
        mm = add_ops(block, w, b, C.MatmulOp(x, w.output))
        add = add_ops(block, C.AddOp(mm.output, b.output))
        gelu = add_ops(block, C.GeluOp(add.output))
        return [gelu.output, mm.output]

    return weighted_kernel("matmul_add_gelu", [(4, n)], build)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("make", [conv_bias_relu, matmul_add_gelu])
def test_weighted_kernels(backend, make):
    func = make()
    kernel = compile_kernel(backend, ModuleOp([func.clone()]), threads=2)
    assert kernel.backend == backend and kernel.version
    inputs = random_inputs(func)
    expected = run_function(func, inputs)
    actual = kernel(inputs)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5)
    kernel.release()


def test_weights_are_initializers():
    model = export_onnx(conv_bias_relu())
    assert {tuple(i.dims) for i in model.graph.initializer} == {(8, 3, 3, 3), (1, 8, 1, 1)}
    assert [n.op_type for n in model.graph.node] == ["Conv", "Add", "Relu"]


# ---------------------------------------------------------------------------
# Errors and backend settings
# ---------------------------------------------------------------------------

UNKNOWN = """
func.func @unknown(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = collage.relu %x : tensor<4xf32>
  %u = "test.op"(%r) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %u : tensor<4xf32>
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_unsupported_op_is_a_compile_error(backend):
    with pytest.raises(KernelCompileError, match=rf"{backend}: test\.op has no .* lowering"):
        compile_kernel(backend, parse(UNKNOWN))


@pytest.mark.parametrize("backend", BACKENDS)
def test_library_compile_failure_is_a_compile_error(backend):
    # the dialect allows collage.neg on i1; no backend library can compile it
    func = parse("""
    func.func @neg_bool(%x: tensor<4xi1>) -> tensor<4xi1> {
      %u = collage.neg %x : tensor<4xi1>
      func.return %u : tensor<4xi1>
    }
    """)
    with pytest.raises(KernelCompileError, match=rf"{backend}: cannot compile kernel @neg_bool: "):
        compile_kernel(backend, func)


def test_unknown_backend():
    with pytest.raises(KernelCompileError, match="unknown backend 'tensorrt'"):
        compile_kernel("tensorrt", parse(UNKNOWN))


@pytest.mark.parametrize("backend", BACKENDS)
def test_wrong_inputs_are_a_run_error(backend):
    kernel = compile_kernel(backend, parse(UNKNOWN.split("  %u")[0] + """
      func.return %r : tensor<4xf32>
    }"""))
    with pytest.raises(KernelRunError, match=r"input 0 must be float32\[4\], got float32\[5\]"):
        kernel([np.zeros(5, np.float32)])
    with pytest.raises(KernelRunError, match="expected 1 inputs, got 2"):
        kernel([np.zeros(4, np.float32)] * 2)


def test_module_with_several_functions_is_rejected():
    func = parse(UNKNOWN)
    with pytest.raises(KernelCompileError, match="exactly one func.func, found 2"):
        compile_kernel("onnxruntime", ModuleOp([func.clone(), func.clone()]))


def test_openvino_runs_in_f32():
    import openvino as ov

    kernel = compile_kernel("openvino", matmul_add_gelu(), threads=1)
    assert kernel.compiled.get_property("INFERENCE_PRECISION_HINT") == ov.Type.f32
    assert kernel.compiled.get_property("INFERENCE_NUM_THREADS") == 1
    assert kernel.compiled.get_property("NUM_STREAMS") == 1
    assert kernel.compiled.get_property("ENABLE_CPU_PINNING") is True


def test_onnxruntime_session_follows_the_thread_policy():
    from collage_xdsl.backends.threads import ThreadPolicy

    kernel = compile_kernel("onnxruntime", matmul_add_gelu(), ThreadPolicy(3))
    options = kernel.session.get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (3, 1)
    # by default the threads spin in a run and stop when it returns
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "1"
    assert options.get_session_config_entry("session.force_spinning_stop") == "1"
    # workers 1 and 2 pinned to the 2nd and 3rd CPU this process may use (1-based ids,
    # wrapping around on a machine with fewer)
    cpus = sorted(os.sched_getaffinity(0))
    want = f"{cpus[1 % len(cpus)] + 1};{cpus[2 % len(cpus)] + 1}"
    assert options.get_session_config_entry("session.intra_op_thread_affinities") == want
    _, _, single = ThreadPolicy(1).onnxruntime_config()
    assert "session.intra_op_thread_affinities" not in single  # no workers, nothing pinned


@pytest.mark.parametrize("spinning, allow, stop", [("off", "0", None), ("run", "1", "1"),
                                                   ("on", "1", None)])
def test_onnxruntime_spinning_settings(spinning, allow, stop):
    from collage_xdsl.backends.threads import ThreadPolicy

    _, _, config = ThreadPolicy(2, spinning).onnxruntime_config()
    assert config["session.intra_op.allow_spinning"] == allow
    assert config.get("session.force_spinning_stop") == stop


def test_a_library_alone_runs_with_its_own_defaults_but_the_thread_count():
    """`ThreadPolicy.library_defaults`: ONNX Runtime gets its intra-op threads and nothing
    else (it spins on after a run, its default); OpenVINO its threads, f32 and the
    latency hint."""
    import openvino as ov

    from collage_xdsl.backends.threads import ThreadPolicy

    alone = ThreadPolicy.library_defaults(3)
    assert (alone.threads, alone.spinning, alone.own_defaults) == (3, "on", True)
    options = compile_kernel("onnxruntime", matmul_add_gelu(), alone).session \
        .get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (3, 0)
    for key in ("session.intra_op.allow_spinning", "session.force_spinning_stop",
                "session.intra_op_thread_affinities"):
        with pytest.raises(RuntimeError, match="does not have configuration"):
            options.get_session_config_entry(key)
    compiled = compile_kernel("openvino", matmul_add_gelu(),
                              ThreadPolicy.library_defaults(1)).compiled
    assert compiled.get_property("INFERENCE_PRECISION_HINT") == ov.Type.f32
    assert compiled.get_property("INFERENCE_NUM_THREADS") == 1
    assert str(compiled.get_property("PERFORMANCE_HINT")) == "LATENCY"
    with pytest.raises(CollageError, match="own defaults spin on after a run, not 'run'"):
        ThreadPolicy(2, "run", own_defaults=True)


def test_unknown_spinning_is_refused():
    from collage_xdsl.backends.threads import ThreadPolicy

    with pytest.raises(CollageError, match="spinning must be one of off, run, on, got 'yes'"):
        ThreadPolicy(2, "yes")


@pytest.mark.parametrize("backend", BACKENDS)
def test_inputs_of_any_alignment_and_results_that_stay_put(backend):
    # TVM takes 64-byte aligned inputs zero-copy and stages the others; results are
    # fresh arrays that a later call does not overwrite
    func = matmul_add_gelu()
    kernel = compile_kernel(backend, func)
    raw = np.empty(4 * 32 + 16, np.float32)
    start = (-raw.ctypes.data % 64) // 4
    aligned = raw[start : start + 128].reshape(4, 32)
    unaligned = raw[start + 1 : start + 129].reshape(4, 32)
    aligned[:] = RNG.uniform(-1, 1, (4, 32))
    first = [r.copy() for r in kernel([aligned])]
    kept = kernel([aligned])
    unaligned[:] = RNG.uniform(-1, 1, (4, 32))
    other = kernel([unaligned])
    for k, f in zip(kept, first):
        np.testing.assert_array_equal(k, f)
    for o, e in zip(other, run_function(func, [unaligned.copy()])):
        np.testing.assert_allclose(o, e, rtol=1e-4, atol=1e-5)


def test_tvm_loop_nest_schedule_is_applied_and_bit_identical():
    import tvm
    from tvm import relax

    from collage_xdsl.backends.tvm.lowering import host_target, to_relax
    from collage_xdsl.backends.tvm.schedule import cpu_pipeline_with_schedule

    func = conv_bias_relu()
    target = host_target()
    scheduled = cpu_pipeline_with_schedule(target)(to_relax(func))
    kernels = [f for _, f in scheduled.functions_items() if isinstance(f, tvm.tirx.PrimFunc)]
    assert kernels and all("T.parallel" in f.script() for f in kernels)
    x = random_inputs(func)[0]
    outputs = []
    for pipeline in (cpu_pipeline_with_schedule(target), relax.get_default_pipeline(target)):
        executable = tvm.compile(to_relax(func), target=target, relax_pipeline=pipeline)
        vm = relax.VirtualMachine(executable, tvm.cpu())
        outputs.append(vm["main"](tvm.runtime.tensor(x))[0].numpy())
    np.testing.assert_array_equal(outputs[0], outputs[1])


def test_tvm_thread_pool_follows_the_policy():
    import tvm

    from collage_xdsl.backends.threads import ThreadPolicy

    func = parse(UNKNOWN.split("  %u")[0] + "\n  func.return %r : tensor<4xf32>\n}")
    for threads in (1, 2, 1):
        compile_kernel("tvm", func, ThreadPolicy(threads))([np.ones(4, np.float32)])
        assert tvm.runtime.num_threads() == threads


@pytest.mark.parametrize("backend", BACKENDS)
def test_parameters_and_repeated_values_as_results(backend):
    func = parse("""
    func.func @passthrough(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>, tensor<2x2xf32>) {
      %r = collage.relu %x : tensor<4xf32>
      %c = collage.constant dense<[1.0, 2.0]> : tensor<2xf32>
      %v = collage.reshape %x : tensor<4xf32> -> tensor<2x2xf32>
      func.return %x, %r, %r, %c, %v : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>, tensor<2x2xf32>
    }
    """)
    if backend == "tvm":
        from collage_xdsl.backends.tvm.lowering import _shared_results

        assert _shared_results(func) == (0, 2, 3, 4)  # %x, %r again, %c, a view of %x
    x = np.array([-1, 2, -3, 4], np.float32)
    kernel = compile_kernel(backend, func)
    expected = [x.copy(), np.maximum(x, 0), np.maximum(x, 0), [1, 2], x.reshape(2, 2)]
    outputs = kernel([x])
    for actual, want in zip(outputs, expected):
        np.testing.assert_array_equal(actual, want)
    # the outputs are the caller's: writing them changes neither the input, nor another
    # output, nor what the next call returns (the runtime hands them to its caller as is)
    for actual in outputs:
        actual[...] = 7
    np.testing.assert_array_equal(x, expected[0])
    for actual, want in zip(kernel([x]), expected):
        np.testing.assert_array_equal(actual, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unsupported_element_type_is_a_compile_error(backend):
    func = parse("""
    func.func @bf16(%x: tensor<4xbf16>) -> tensor<4xbf16> {
      %r = collage.relu %x : tensor<4xbf16>
      func.return %r : tensor<4xbf16>
    }
    """)
    with pytest.raises(KernelCompileError, match=rf"{backend}: unsupported element type bf16"):
        compile_kernel(backend, func)
