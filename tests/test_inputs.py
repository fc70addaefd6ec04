"""Seeded random arguments (`collage_xdsl.ir.inputs`): what kernels are measured on."""

from __future__ import annotations

import numpy as np
import pytest
from collage_xdsl.dialects import ir_context
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser

from collage_xdsl.errors import CollageError
from collage_xdsl.ir.inputs import random_arguments, random_array

GATHER = """
func.func @main(%x: tensor<5x3xf32>, %i: tensor<4xi64>, %k: tensor<4xi32>, %m: tensor<2xi1>)
    -> tensor<4x3xf32> {
  %r = collage.reshape %i : tensor<4xi64> -> tensor<4xi64>
  %g = collage.gather %x, %r {axis = 0 : i64} : (tensor<5x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  func.return %g : tensor<4x3xf32>
}
"""


def main_of(text: str) -> FuncOp:
    module = Parser(ir_context(), text).parse_module()
    return next(op for op in module.ops if isinstance(op, FuncOp))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.bool_])
def test_random_array_has_the_shape_and_type_asked_for(dtype):
    array = random_array(np.random.default_rng(0), (3, 4), np.dtype(dtype), high=3)
    assert array.shape == (3, 4) and array.dtype == dtype
    if np.issubdtype(dtype, np.integer):
        assert array.min() >= 0 and array.max() < 3


def test_random_floats_are_standard_normal():
    array = random_array(np.random.default_rng(0), (100_000,), np.dtype(np.float32))
    assert abs(array.mean()) < 0.02 and abs(array.std() - 1) < 0.02


def test_arguments_are_seeded_and_indices_stay_in_the_gathered_axis():
    x, i, k, m = random_arguments(main_of(GATHER), seed=7, int_high=100)
    again = random_arguments(main_of(GATHER), seed=7, int_high=100)
    assert all(np.array_equal(a, b) for a, b in zip((x, i, k, m), again))
    assert x.dtype == np.float32 and m.dtype == np.bool_
    assert i.max() < 5  # reaches the gather (through a reshape) on an axis of 5
    assert k.max() >= 5 and k.max() < 100  # reaches no gather: [0, int_high)


def test_capped_indices_stay_below_int_high():
    _, i, _, _ = random_arguments(main_of(GATHER), seed=7, int_high=2, cap_indices=True)
    assert set(np.unique(i)) <= {0, 1}


def test_a_dynamic_argument_is_named():
    text = GATHER.replace("%x: tensor<5x3xf32>", "%x: tensor<?x3xf32>").replace(
        "(tensor<5x3xf32>, tensor<4xi64>)", "(tensor<?x3xf32>, tensor<4xi64>)")
    with pytest.raises(CollageError, match=r"@main argument %x: .* has a dynamic dimension"):
        random_arguments(main_of(text), seed=0, int_high=2)
