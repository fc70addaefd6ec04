"""`collage-lower-linalg` op by op: each case of `tests/linalg_cases.py` lowered whole, printed
in generic form, compiled by IREE for the host CPU and run on seeded random inputs agrees
with the reference interpreter; every op the lowering handles has a case."""

from __future__ import annotations

import numpy as np
import pytest
from ir_helpers import main_of, parse
from linalg_cases import CASES

from collage_xdsl.backends import compile_kernel
from collage_xdsl.ir.inputs import random_arguments
from collage_xdsl.ir.interpreter import run_function
from collage_xdsl.linalg import lower_to_linalg, lowered_op_names

CASE_IDS = [(op, i) for op, cases in CASES.items() for i in range(len(cases))]


def test_every_lowered_op_has_a_case():
    assert sorted(lowered_op_names() - set(CASES)) == []
    assert sorted(set(CASES) - lowered_op_names()) == []


@pytest.mark.parametrize(("op", "index"), CASE_IDS, ids=[f"{op[8:]}-{i}" for op, i in CASE_IDS])
def test_lowered_op_matches_interpreter_through_iree(op, index):
    func = main_of(parse(CASES[op][index]))
    assert any(o.name == op for o in func.walk())
    feeds = random_arguments(func, seed=index, int_high=5)
    expected = run_function(func, feeds)
    kernel = compile_kernel("iree", func, threads=1)
    try:
        actual = kernel(feeds)
    finally:
        kernel.release()
    for a, e in zip(actual, expected, strict=True):
        assert a.dtype == e.dtype and a.shape == e.shape
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5)


def test_lowering_leaves_no_collage_op():
    for op, cases in CASES.items():
        module = parse(cases[0])
        assert lower_to_linalg(module).complete, op
        module.verify()
        assert not [o.name for o in module.walk() if o.name.startswith("collage.")], op
