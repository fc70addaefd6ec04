"""The plan cache (`collage_xdsl.planner.plan_cache`): a model's final plan kept in the cost
database is followed by the next partition, and a changed host, backend version or option
invalidates it; and refinement is skipped where the database says it cannot pay."""

import json
import sqlite3

import pytest

from collage_xdsl.backends.base import Backend
from collage_xdsl.measure import cost_db
from collage_xdsl.planner.options import PartitionOptions
from collage_xdsl.planner.pipeline import partition_module
from collage_xdsl.planner.plan_file import PlanFileError


@pytest.fixture
def options(tmp_path) -> PartitionOptions:
    return PartitionOptions(backends=("tvm", "onnxruntime"), mock_costs="tvm:1,onnxruntime:2",
                            pin="op:relu=onnxruntime", refine_budget=2,
                            cost_db=str(tmp_path / "costs.sqlite"))


def source(module, options: PartitionOptions) -> tuple[str, list]:
    partitioned = partition_module(module, options)
    plan = partitioned.plans[0]
    return plan.report.source, [(k.inside, k.backend, k.cost) for k in plan.kernels]


def test_a_kept_plan_is_followed_without_search_or_refinement(example_module, options):
    module = example_module("mnist_cnn")
    first, kernels = source(module, options)
    assert first == "search" and len(kernels) > 1
    partitioned = partition_module(module, options)
    plan = partitioned.plans[0]
    assert plan.report.source == "kept in the cost database"
    assert plan.refined is None and plan.report.candidates == 0
    assert [(k.inside, k.backend, k.cost) for k in plan.kernels] == kernels
    assert "plan: kept in the cost database" in partitioned.table


def test_replan_searches_again_and_keeps_the_new_plan(example_module, options):
    module = example_module("mnist_cnn")
    source(module, options)
    assert source(module, PartitionOptions(**{**options.__dict__, "replan": True}))[0] == \
        "search (replan)"
    assert source(module, options)[0] == "kept in the cost database"


def test_an_option_that_changes_the_plan_is_another_key(example_module, options):
    module = example_module("mnist_cnn")
    source(module, options)
    changed = PartitionOptions(**{**options.__dict__, "pin": "op:relu=tvm"})
    assert source(module, changed)[0] == "search"
    assert source(module, changed)[0] == "kept in the cost database"
    moved = PartitionOptions(**{**options.__dict__, "save_plan": None, "measure_workers": 2})
    assert source(module, moved)[0] == "kept in the cost database"


def test_another_model_is_another_key(example_module, options):
    source(example_module("mnist_cnn"), options)
    assert source(example_module("mlp"), options)[0] == "search"


def test_a_backend_version_change_invalidates_the_kept_plan(example_module, options,
                                                             monkeypatch):
    module = example_module("mnist_cnn")
    source(module, options)
    original = Backend.version.fget
    monkeypatch.setattr(Backend, "version", property(
        lambda self: "tvm==next" if self.name == "tvm" else original(self)))
    assert source(module, options)[0] == \
        "search (the plan kept for this model was made with other versions of tvm)"
    assert source(module, options)[0] == "kept in the cost database"


def test_another_host_does_not_use_the_kept_plan(example_module, options, monkeypatch):
    module = example_module("mnist_cnn")
    source(module, options)
    monkeypatch.setattr(cost_db, "host_fingerprint", lambda: "another-host")
    assert source(module, options)[0] == \
        "search (the plans kept for this model were made on other hosts)"


def test_a_kept_plan_that_no_longer_fits_the_model_is_an_error_naming_it(
        example_module, options):
    """A plan row edited by hand (or by another tool) is checked like a plan file."""
    module = example_module("mnist_cnn")
    source(module, options)
    with sqlite3.connect(options.cost_db) as db:
        (plan,) = db.execute("SELECT plan FROM collage_plans").fetchone()
        kept = json.loads(plan)
        kept["plan"]["functions"]["main"][0]["node"] = "frob"
        db.execute("UPDATE collage_plans SET plan = ?", (json.dumps(kept),))
    with pytest.raises(PlanFileError, match=r"cost database .*costs.sqlite: @main is not a "
                                            r"valid partition:\n  node 'frob' \(conv2d\)"):
        partition_module(module, options)


def test_refinement_is_skipped_for_a_whole_model_plan_no_measured_cut_improves(
        example_module, tmp_path):
    """The search's plan is one backend's whole model and the cost database measured no
    cut of it cheaper: refinement has nothing to try, so it does not run."""
    module = example_module("mnist_cnn")
    phases = []
    options = PartitionOptions(backends=("tvm", "onnxruntime"), mock_costs="tvm:1,onnxruntime:2",
                               refine_budget=5, cost_db=str(tmp_path / "c.sqlite"))
    plan = partition_module(module, options, progress=phases.append).plans[0]
    assert len(plan.kernels) == 1 and plan.refined is None
    assert any(p.startswith("refinement @main skipped: the search's plan is tvm's whole "
                            "model") for p in phases)
    without_db = PartitionOptions(**{**options.__dict__, "cost_db": None})
    assert partition_module(module, without_db).plans[0].refined is not None
