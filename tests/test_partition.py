"""`collage-partition` (`collage_xdsl.passes.partition`) through the partition library call
(`collage_xdsl.planner.plan`) and its explain report (`collage_xdsl.planner.explain`): the
report's fields, the mix weighed against each backend alone, cost-database hits (and a
database from another host), and sequence costs."""

from __future__ import annotations

import pytest
from ir_helpers import parse
from region_helpers import DIAMOND, kernels_of
from xdsl.context import Context


def test_explain_report_fields(tmp_path):
    import json

    from collage_xdsl.passes.partition import CollagePartitionPass

    module = parse(DIAMOND)
    report, table = tmp_path / "explain.json", tmp_path / "explain.txt"
    CollagePartitionPass(
        backends=("tvm", "test"), backend_options="test: ops=relu,add,mul", byoc_max_regions=False,
        mock_costs="tvm:2,test:1", launch_penalty=0.5, coalesce=False, explain=str(report),
        explain_table=str(table),
    ).apply(Context(), module)
    (function,) = json.loads(report.read_text())["functions"]
    assert function["function"] == "main"
    assert function["candidates"] > 0 and function["estimates"] > 0
    assert function["cost_db_hits"] == 0 and function["search_seconds"] >= 0
    chosen = function["kernels"]
    assert [k["backend"] for k in chosen] == [k.backend.data for k in kernels_of(module)]
    for k, op in zip(chosen, kernels_of(module)):
        assert k["cost"] == op.cost.value.data and k["cost_status"] == "known"
        assert k["ops"] and len(k["nodes"]) >= len(k["ops"])
    # the sigmoid only runs on tvm: no other backend had a candidate for it
    (sigmoid,) = [k for k in chosen if "sigmoid" in k["ops"]]
    assert sigmoid["backend"] == "tvm" and sigmoid["best_other"] is None
    # add + mul: the test backend at half tvm's per-op cost
    (add_mul,) = [k for k in chosen if k["ops"] == ["add", "mul"]]
    assert add_mul["backend"] == "test" and add_mul["best_other"]["backend"] == "tvm"
    assert add_mul["best_other"]["cost"] == pytest.approx(2 * add_mul["cost"])
    # total: kernel costs plus one launch penalty per kernel (nothing coalesced here)
    assert function["total_cost"] == pytest.approx(
        sum(k["cost"] for k in chosen) + 0.5 * len(chosen))
    text = table.read_text()
    assert text.startswith("@main: ") and "best other" in text and "sigmoid" in text


def test_explain_report_weighs_the_mix_against_each_backend_alone(tmp_path):
    """`alone`: each backend's cheapest cover with only it enabled; the test backend
    cannot run the sigmoid, so it has no cover and the reason names the node."""
    import json
    from pathlib import Path

    from collage_xdsl.passes.partition import CollagePartitionPass

    def report(backends: tuple[str, ...]) -> dict:
        path = tmp_path / "_".join(backends)
        CollagePartitionPass(
            backends=backends, backend_options="test: ops=relu,add,mul", byoc_max_regions=False,
            mock_costs="tvm:2,test:1", launch_penalty=0.5, coalesce=False,
            explain=f"{path}.json", explain_table=f"{path}.txt",
        ).apply(Context(), parse(DIAMOND))
        (function,) = json.loads(Path(f"{path}.json").read_text())["functions"]
        return function

    mixed = report(("tvm", "test"))
    tvm_alone, test_alone = mixed["alone"]
    assert tvm_alone["backend"] == "tvm" and tvm_alone["total_status"] == "known"
    assert tvm_alone["total_cost"] == pytest.approx(report(("tvm",))["total_cost"])
    assert test_alone == {"backend": "test", "total_cost": None, "total_status": "no cover",
                          "reason": test_alone["reason"]}
    no_sigmoid = "search: cannot cover collage.sigmoid#4: no candidate contains it"
    assert test_alone["reason"] == no_sigmoid
    # the test backend runs add and mul at half tvm's cost: the mix is cheaper
    assert mixed["mixing_ratio"] == pytest.approx(mixed["total_cost"] / tvm_alone["total_cost"])
    assert mixed["mixing_ratio"] < 1
    alone_line = (tmp_path / "tvm_test.txt").read_text().splitlines()[2]
    assert alone_line == (f"  alone: tvm {tvm_alone['total_cost']:.3g} s, test no cover "
                          f"({no_sigmoid}); mixed total {mixed['mixing_ratio']:.3f}x of tvm's")


def test_explain_report_with_cost_db_hits(tmp_path):
    import json

    from collage_xdsl.passes.partition import CollagePartitionPass

    options = dict(backends=("tvm",), mock_costs="tvm:1", cost_db=str(tmp_path / "c.sqlite"),
                   explain=str(tmp_path / "e.json"), explain_table=str(tmp_path / "e.txt"),
                   replan=True)  # the search, not the plan the database keeps
    CollagePartitionPass(**options).apply(Context(), parse(DIAMOND))
    first = json.loads((tmp_path / "e.json").read_text())["functions"][0]
    CollagePartitionPass(**options).apply(Context(), parse(DIAMOND))
    second = json.loads((tmp_path / "e.json").read_text())["functions"][0]
    assert first["estimates"] > 0 and first["cost_db_hits"] == 0
    assert second["estimates"] == 0 and second["cost_db_hits"] == first["estimates"]
    assert second["cost_db_other_hosts"] == 0
    assert "other hosts" not in (tmp_path / "e.txt").read_text()


def test_explain_report_says_a_database_from_another_host_is_not_used(tmp_path):
    """A cost database carried from another machine: its costs are kept and not read, so
    everything is measured again, and the report says why."""
    import json
    import sqlite3

    from collage_xdsl.passes.partition import CollagePartitionPass

    db = tmp_path / "c.sqlite"
    options = dict(backends=("tvm",), mock_costs="tvm:1", cost_db=str(db),
                   explain=str(tmp_path / "e.json"), explain_table=str(tmp_path / "e.txt"),
                   replan=True)
    CollagePartitionPass(**options).apply(Context(), parse(DIAMOND))
    first = json.loads((tmp_path / "e.json").read_text())["functions"][0]
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE collage_costs SET host = 'a-host-elsewhere'")
    CollagePartitionPass(**options).apply(Context(), parse(DIAMOND))
    second = json.loads((tmp_path / "e.json").read_text())["functions"][0]
    assert second["estimates"] == first["estimates"] > 0 and second["cost_db_hits"] == 0
    assert second["cost_db_other_hosts"] == first["estimates"]
    assert (tmp_path / "e.txt").read_text().splitlines()[1:3] == ["  plan: search (replan)", (
        f"  cost database: {first['estimates']} costs measured on other hosts (another CPU, "
        "core count or platform), not used here")]
    with sqlite3.connect(db) as conn:  # nothing the file had is lost
        hosts = dict(conn.execute("SELECT host, COUNT(*) FROM collage_costs GROUP BY host"))
    assert hosts["a-host-elsewhere"] == first["estimates"]


def test_kernels_of_a_several_kernel_plan_pay_their_sequence_costs(tmp_path):
    """Costs from a database whose measurements carry sequence costs: each kernel of the
    plan pays its own, which the report gives apart, and enough of it makes a plan of
    fewer kernels the cheaper one."""
    import json
    import sqlite3

    from collage_xdsl.passes.partition import CollagePartitionPass

    db = tmp_path / "c.sqlite"

    def report(**options) -> tuple[dict, str]:
        CollagePartitionPass(
            backends=("tvm", "test"), backend_options="test: ops=relu,add,mul",
            mock_costs="tvm:2,test:1", coalesce=False, tvm_max_regions=False, cost_db=str(db),
            explain=str(tmp_path / "e.json"), explain_table=str(tmp_path / "e.txt"),
            replan=True, **options).apply(Context(), parse(DIAMOND))
        (function,) = json.loads((tmp_path / "e.json").read_text())["functions"]
        return function, (tmp_path / "e.txt").read_text()

    before, _ = report()
    assert len(before["kernels"]) == 4 and all(k["sequence"] == 0 for k in before["kernels"])
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE collage_costs SET sequence = 0.25")
    same, table = report()
    assert [k["ops"] for k in same["kernels"]] == [k["ops"] for k in before["kernels"]]
    for k, was in zip(same["kernels"], before["kernels"]):
        assert k["sequence"] == 0.25 and k["cost"] == pytest.approx(was["cost"] + 0.25)
    assert same["total_cost"] == pytest.approx(before["total_cost"] + 4 * 0.25)
    assert "; sequence cost +250 ms" in table and "(sequence costs +1 s)" in table
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE collage_costs SET sequence = 100")
    fewer, _ = report()
    assert len(fewer["kernels"]) == 3 and all(k["sequence"] == 100 for k in fewer["kernels"])
