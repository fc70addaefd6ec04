"""Refining a partitioned function (`collage_xdsl.planner.refinement`) through
`collage-refine` (`collage_xdsl.passes.refine`) and the pipeline: the mock scorer's
rewrite and report, alternatives kept as functions, bad options, refinement only with a
budget, and the MLP refined measured through the real backends, never slower."""

from __future__ import annotations

import json

import numpy as np
import pytest
from collage_xdsl.dialects.collage import KernelOp
from collage_xdsl.passes.partition import CollagePartitionPass
from collage_xdsl.passes.refine import CollageRefinePass
from ir_helpers import main_of, parse
from refine_helpers import CHAIN
from xdsl.context import Context

from collage_xdsl.errors import CollageError
from collage_xdsl.ir.inputs import random_arguments
from collage_xdsl.ir.interpreter import run_module
from collage_xdsl.planner.options import PartitionOptions
from collage_xdsl.planner.pipeline import partition_module
from collage_xdsl.runtime.executable import Executable

MOCK_PASS = dict(backends=("tvm", "test"), backend_options="test: ops=relu", scorer="mock",
                 mock_costs="tvm:1,test:0.5", mock_transfer=2)


def test_pass_with_the_mock_scorer_rewrites_and_reports(tmp_path, capsys):
    src = CHAIN.replace("collage.sigmoid %a", "collage.relu %a").replace("tanh", "sigmoid")
    module = parse(src)
    CollagePartitionPass(backends=("tvm", "test"), backend_options="test: ops=relu", estimator="mock",
                         mock_costs="tvm:1,test:0.5").apply(Context(), module)
    partitioned = str(module)
    CollageRefinePass(**MOCK_PASS, budget=0).apply(Context(), module)
    assert str(module) == partitioned and capsys.readouterr().err == ""

    report = tmp_path / "refine.json"
    CollageRefinePass(**MOCK_PASS, budget=10, report=str(report)).apply(Context(), module)
    module.verify()
    (kernel,) = [op for op in main_of(module).walk() if isinstance(op, KernelOp)]
    assert kernel.backend.data == "tvm" and kernel.cost is None
    err = capsys.readouterr().err
    assert err.startswith("collage-refine @main: start ") and "best seed tvm alone" in err
    (function,) = json.loads(report.read_text())["functions"]
    assert function["function"] == "main" and function["changed"]
    assert function["final"] == {"origin": "tvm alone", "kernels": 1, "backends": {"tvm": 1}}
    x = random_arguments(main_of(module), 0, int_high=2)
    np.testing.assert_allclose(run_module(module, x)[0], run_module(parse(src), x)[0])


def test_pass_keeps_alternatives_as_functions_after_the_result():
    src = CHAIN.replace("collage.sigmoid %a", "collage.relu %a").replace("tanh", "sigmoid")
    module = parse(src)
    CollagePartitionPass(backends=("tvm", "test"), backend_options="test: ops=relu", estimator="mock",
                         mock_costs="tvm:1,test:0.5").apply(Context(), module)
    CollageRefinePass(**{**MOCK_PASS, "mock_transfer": 0.4}, budget=10, alternatives=2).apply(
        Context(), module)
    module = parse(str(module))  # prints and parses back
    module.verify()
    names = [f.sym_name.data for f in module.ops]
    assert names == ["main", "main.alt1", "main.alt2"]
    main = main_of(module)
    assert [r.string_value() for r in main.attributes["collage.alternatives"].data] == \
        ["main.alt1", "main.alt2"]
    x = random_arguments(main, 0, int_high=2)
    want = run_module(parse(src), x)[0]
    plans = set()
    for name in names:
        np.testing.assert_allclose(run_module(module, x, entry=name)[0], want)
        func = next(f for f in module.ops if f.sym_name.data == name)
        plans.add(tuple((k.backend.data, len(list(k.body.walk())))
                        for k in func.walk() if isinstance(k, KernelOp)))
    assert len(plans) == 3


@pytest.mark.parametrize("options, message", [
    (dict(alternatives=-1), "alternatives must be >= 0, got -1"),
    (dict(budget=-1), "budget must be auto or a finite number of seconds >= 0, got -1"),
    (dict(budget="ten"), "budget must be auto or a finite number of seconds >= 0, got 'ten'"),
    (dict(min_gain=1), "min-gain must be in [0, 1), got 1"),
    (dict(rounds=0), "rounds must be at least 1"),
    (dict(scorer="guess"), "unknown scorer 'guess' (measured or mock)"),
    (dict(scorer="measured"), "backend 'test' has no codegen hook"),
    (dict(mock_costs="tvm"), "mock-costs: bad entry 'tvm'"),
])
def test_bad_pass_options_are_errors(options, message):
    with pytest.raises(CollageError, match=message.replace("[", r"\[").replace("(", r"\(")
                       .replace(")", r"\)")):
        CollageRefinePass(**{**MOCK_PASS, "budget": 1, **options}).apply(
            Context(), parse(CHAIN))


def test_partition_refines_before_it_forms_the_regions(example_module, monkeypatch):
    """`collage-partition{refine-budget=...}` refines the search's plan and forms the
    regions of the result once: no region is formed, inlined and formed again."""
    import collage_xdsl.core.regions as regions

    def no_recovery(func):
        raise AssertionError("the regions the partition formed were recovered")

    monkeypatch.setattr(regions, "recover_kernels", no_recovery)
    module = example_module("mlp")
    CollagePartitionPass(backends=("tvm", "onnxruntime"), estimator="mock",
                         mock_costs="tvm:1,onnxruntime:1.1", refine_budget=5,
                         refine_alternatives=1).apply(Context(), module)
    names = [f.sym_name.data for f in module.ops]
    assert names == ["main", "main.alt1"]
    kernels = [op for op in main_of(module).walk() if isinstance(op, KernelOp)]
    assert kernels and all(k.backend.data in ("tvm", "onnxruntime") for k in kernels)


def test_the_refinement_budget_starts_when_refinement_does(example_module, monkeypatch):
    """Time the partition spends before refining (boundary costs here) is not taken out of
    refinement's budget."""
    import time

    from collage_xdsl.planner import plan

    real = plan.boundary_costs

    def slow(*args):
        time.sleep(1.5)
        return real(*args)

    monkeypatch.setattr(plan, "boundary_costs", slow)
    options = PartitionOptions(backends=("tvm", "onnxruntime"), estimator="mock",
                               mock_costs="tvm:1,onnxruntime:1.1", refine_budget=1)
    (function,) = partition_module(example_module("mlp"), options).refinement["functions"]
    assert function["trials"] and function["stopped"] == "converged"


def test_pipeline_refines_only_with_a_budget(example_module):
    module = example_module("mlp")
    mock = PartitionOptions(estimator="mock", mock_costs="tvm:1,onnxruntime:1.1,openvino:1.2",
                            refine_alternatives=2)
    assert partition_module(module, mock).refinement is None
    refined = partition_module(module, PartitionOptions(**{**mock.__dict__, "refine_budget": 5}))
    (function,) = refined.refinement["functions"]
    assert function["function"] == "main" and function["trials"]


def test_measured_refinement_of_the_mlp_runs_and_is_never_slower(example_module, tmp_path,
                                                                    capsys):
    source = example_module("mlp")
    module = source.clone()
    CollagePartitionPass(backends=("tvm", "onnxruntime", "openvino"), estimator="mock",
                         mock_costs="tvm:1,onnxruntime:1.1,openvino:1.2").apply(Context(), module)
    report = tmp_path / "refine.json"
    CollageRefinePass(budget=20, rounds=5, report=str(report)).apply(Context(), module)
    (function,) = json.loads(report.read_text())["functions"]
    assert function["ratio"] <= 1.0 and function["start_ms"] > 0
    assert function["stopped"] in ("converged", "fruitless", "no move left", "budget")
    assert any(t["kind"] == "seed" and t["status"] in ("accepted", "rejected")
               for t in function["trials"])
    assert "collage-refine @main: start " in capsys.readouterr().err
    x = random_arguments(main_of(source), 0, int_high=2)
    np.testing.assert_allclose(Executable(module).run(x)[0], run_module(source, x)[0],
                               rtol=1e-4, atol=1e-4)
