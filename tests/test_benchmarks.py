"""The benchmark suite (`benchmarks/`): its statistics on samples with known answers, the
output check, errors, and real runs on the MLP in a fresh work directory (cold cost
database first, then warm), each configuration in a process of its own. The timing itself
is `tests/test_side_by_side.py`'s and `tests/test_configurations.py`'s."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_configs  # noqa: E402
import merge as bench_merge  # noqa: E402
import run as bench_run  # noqa: E402
from bench_configs import (  # noqa: E402
    CONFIGS,
    PAIRS,
    OutputCheck,
    ill_conditioned,
)
from bench_stats import geomean, median_ci, per_round_ratios  # noqa: E402

from collage_xdsl.backends.threads import ThreadPolicy  # noqa: E402
from collage_xdsl.errors import CollageError  # noqa: E402
from collage_xdsl.measure.timing import QUIET_S  # noqa: E402
from collage_xdsl.runtime.selector import PlanSelector  # noqa: E402
from collage_xdsl.tools.model import load_model  # noqa: E402

# ---------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------


def test_per_round_ratios_skip_rounds_either_side_missed():
    assert per_round_ratios([2.0, None, 3.0, 4.0], [1.0, 1.0, None, 2.0]) == [2.0, 2.0]
    with pytest.raises(CollageError, match="3 rounds against 2"):
        per_round_ratios([1.0, 1.0, 1.0], [1.0, 1.0])


def test_median_ci_is_the_binomial_order_statistic_interval():
    ci = median_ci(list(range(10, 0, -1)))  # 10 samples: [x(2), x(9)], 1 - 2 * 11/1024
    assert (ci.median, ci.low, ci.high, ci.n) == (5.5, 2, 9, 10)
    assert ci.coverage == pytest.approx(1 - 22 / 1024)
    ci = median_ci([float(i) for i in range(1, 31)])  # 30 samples: [x(10), x(21)]
    assert (ci.median, ci.low, ci.high) == (15.5, 10.0, 21.0)
    assert ci.coverage == pytest.approx(0.9572, abs=1e-4)


def test_median_ci_of_few_samples_is_the_range_with_its_coverage():
    ci = median_ci([3.0, 1.0, 2.0, 5.0, 4.0])
    assert (ci.median, ci.low, ci.high) == (3.0, 1.0, 5.0)
    assert ci.coverage == pytest.approx(1 - 2 / 32)
    ci = median_ci([7.0])
    assert (ci.median, ci.low, ci.high, ci.coverage) == (7.0, 7.0, 7.0, 0.0)
    with pytest.raises(CollageError, match="no samples"):
        median_ci([])


def test_geomean():
    assert geomean([0.5, 2.0]) == pytest.approx(1.0)
    assert geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert geomean([0.9]) == pytest.approx(0.9)
    with pytest.raises(CollageError, match="positive"):
        geomean([1.0, 0.0])
    with pytest.raises(CollageError, match="positive"):
        geomean([])


# ---------------------------------------------------------------------------
# Output check
# ---------------------------------------------------------------------------


def _softmax_model(path: Path, scale: float) -> Path:
    """y = Softmax(x * scale) and z = x + 1, x: float32[1, 4]."""
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "scale"], ["logits"]),
         helper.make_node("Softmax", ["logits"], ["y"], axis=-1),
         helper.make_node("Add", ["x", "one"], ["z"])],
        "softmax",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(np.full([1, 4], scale, np.float32), "scale"),
         numpy_helper.from_array(np.ones([1, 4], np.float32), "one")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def test_ill_conditioned_softmax_disagreement_is_a_note(tmp_path):
    policy = ThreadPolicy()
    x = [np.array([[1.0, 1.0, 1.0, 1.0]], np.float32)]
    model = load_model(_softmax_model(tmp_path / "huge.onnx", 6.8e9))
    run = bench_configs.whole_model("onnxruntime", model).build(policy.threads).run
    reference = run(x)
    check = OutputCheck(model, x, reference, policy)
    one_hot = np.array([[1.0, 0.0, 0.0, 0.0]], np.float32)
    problem, notes = check.compare([one_hot, reference[1]])
    assert problem is None
    assert len(notes) == 1 and "output 'y'" in notes[0] and "decided by rounding" in notes[0]
    problem, _ = check.compare([reference[0], reference[1] + 1])
    assert problem == "disagrees with onnxruntime on output 'z': max abs difference 1"


def test_well_conditioned_softmax_disagreement_fails(tmp_path):
    policy = ThreadPolicy()
    x = [np.array([[1.0, 1.0, 1.0, 1.0]], np.float32)]
    model = load_model(_softmax_model(tmp_path / "small.onnx", 3.0))
    reference = bench_configs.whole_model("onnxruntime", model).build(policy.threads).run(x)
    problem, notes = OutputCheck(model, x, reference, policy).compare(
        [np.array([[1.0, 0.0, 0.0, 0.0]], np.float32), reference[1]])
    assert problem.startswith("disagrees with onnxruntime on output 'y'") and notes == []
    assert not ill_conditioned(np.array([3.0], np.float32))
    assert ill_conditioned(np.array([6.8e9, 6.8e9], np.float32))


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def test_unknown_model_is_exit_2_without_traceback():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"),
                           "--models", "mlp,resnet9000"], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith("error: --models: unknown model 'resnet9000' (known: ")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("argv, message", [
    (["--rounds", "0"], "--rounds, --warmup and --slow-rounds must be at least 1"),
    (["--refine-budget", "-1"], "--refine-budget must be auto or a number of seconds >= 0"),
    (["--refine-budget", "soon"], "--refine-budget must be auto or a number of seconds >= 0"),
    (["--additivity-rounds", "0"], "--additivity-rounds must be at least 1"),
    (["--sample-ms", "-1"], "--sample-ms must be a number of milliseconds >= 0, got -1.0"),
    (["--timing-s", "-1"], "--timing-s must be a number of seconds >= 0, got -1.0"),
    (["--timing-s", "inf"], "--timing-s must be a number of seconds >= 0, got inf"),
    (["--models", "mlp,mlp"], "names a model twice"),
    (["--threads", "0"], "--threads must be at least 1, got 0"),
])
def test_bad_options(capsys, tmp_path, argv, message):
    assert bench_run.main([*argv, "--work", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err


def test_a_bad_thread_setting_in_the_environment_is_one_error(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("COLLAGE_THREADS", "abc")
    assert bench_run.main(["--models", "mlp", "--work", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (
        "error: COLLAGE_THREADS must be a positive integer, got 'abc'\n")


def test_work_dir_that_cannot_be_created(capsys, tmp_path):
    (tmp_path / "file").write_text("")
    assert bench_run.main(["--models", "mlp", "--work", str(tmp_path / "file" / "w")]) == 2
    err = capsys.readouterr().err
    assert err == f"error: --work {tmp_path / 'file' / 'w'}: cannot create it: Not a directory\n"


def test_a_failing_reference_fails_the_model_only(monkeypatch, tmp_path):
    def broken(backend, model, options=None):
        raise RuntimeError("boom")

    monkeypatch.setattr(bench_configs, "whole_model", broken)
    args = bench_run.build_parser().parse_args(["--models", "mlp", "--work", str(tmp_path)])
    entry = bench_run.bench_model("mlp", args, ThreadPolicy())
    assert entry["status"] == "failed"
    assert entry["reason"] == ("CollageError: onnxruntime (the reference) failed: "
                               "RuntimeError: boom")
    assert not (tmp_path / "costs").exists()  # nothing partitioned after the reference failed


def test_the_selector_note_names_a_plan_dropped_at_run_time():
    def lost(inputs):
        raise RuntimeError("session lost")

    selector = PlanSelector([lambda x: x, lost], names=["@main", "@main.alt1"])
    for i in range(10):
        selector(i)
    assert bench_run.selector_note("collage", selector.stats()) == (
        "collage: chose between 2 plans at run time (calls 10/0, 0 probes, 0 switches); "
        "@main.alt1 dropped at run time: RuntimeError: session lost")


# ---------------------------------------------------------------------------
# Merging runs split by model
# ---------------------------------------------------------------------------


def _run_results(models: dict[str, float], **settings) -> dict:
    """A run's results as `benchmarks/run.py` writes them, over `models` (name: Collage's
    median ratio; every other configuration level with the best single backend)."""
    def entry(r: float) -> dict:
        return {"status": "ok", "slow": False, "median_ms": r, "rounds": 30,
                "ratio": {"median": r, "low": r - 0.01, "high": r + 0.01}}

    results = {"command": ["python", "benchmarks/run.py", "--models", ",".join(models)],
               "date": "2026-11-26T05:51:11+00:00", "commit": "97fc0bb",
               "host": "AMD EPYC; 2 cores; Linux x86_64", "threads": 2, "rounds": 30,
               "timing_s": 60.0, "warmup": 2, "sample_ms": 50.0, "slow_factor": 10.0,
               "slow_rounds": 3, "refine_budget": "auto", "max_depth": 8, "seed": 0,
               "tvm_tune": "none", "versions": {"openvino": "2026.4.1"}, "models": {}}
    results.update(settings)
    for name, ratio in models.items():
        configs = {c: entry(1.0) for c in CONFIGS}
        configs["collage"] = entry(ratio)
        results["models"][name] = {
            "display": name.removeprefix("light_"), "status": "ok", "reason": "", "notes": [],
            "configs": configs,
            "partition": {"cold_seconds": 9.0, "warm": {"seconds": 0.1, "mixing_ratio": 1.0}},
            "additive_error": {}, "vs_greedy": {}, "rounds": 30, "best_single": "openvino"}
    return results


def _write(path: Path, results: dict) -> Path:
    path.mkdir(parents=True)
    (path / "results.json").write_text(json.dumps(results))
    return path


def test_merged_runs_are_summarized_over_all_their_models(tmp_path, capsys):
    a = _write(tmp_path / "a", _run_results({"mlp": 0.81, "light_vgg19": 1.0}))
    b = _write(tmp_path / "b", _run_results({"light_zfnet512": 1.0}, commit=None,
                                            date="2026-11-26T09:00:00+00:00"))
    out = tmp_path / "merged"
    assert bench_merge.main([str(a), str(b / "results.json"), "--out", str(out)]) == 0
    merged = json.loads((out / "results.json").read_text())
    assert list(merged["models"]) == ["mlp", "light_vgg19", "light_zfnet512"]
    collage = merged["summary"]["ratio"]["collage"]
    assert collage["models"] == 3 and collage["geomean"] == pytest.approx(0.81 ** (1 / 3))
    assert [p["models"] for p in merged["parts"]] == [["mlp", "light_vgg19"],
                                                      ["light_zfnet512"]]
    assert merged["date"] == "2026-11-26T09:00:00+00:00" and merged["threads"] == 2
    table = (out / "table.md").read_text()
    assert table.startswith(f"Command: `python benchmarks/merge.py {a} {b / 'results.json'} "
                            f"--out {out}`\n- part: `python benchmarks/run.py --models "
                            "mlp,light_vgg19` at 97fc0bb, 2026-11-26T05:51:11+00:00\n- part: "
                            "`python benchmarks/run.py --models light_zfnet512`, 2026-11-26T09")
    assert "collage: geomean ratio 0.932x over 3 models, 0 above 1.02x" in table
    assert "| zfnet512 | " in table and (out / "ratios.png").exists()
    assert "- part: `python benchmarks/run.py --models mlp,light_vgg19`" in capsys.readouterr().out


@pytest.mark.parametrize("second, message", [
    ({"models": {"light_vgg19": 1.0}, "threads": 1},
     "threads is 1, but 2 in {a}: their ratios do not compare"),
    ({"models": {"light_vgg19": 1.0}, "versions": {"openvino": "2025.1"}},
     "versions is {{'openvino': '2025.1'}}, but {{'openvino': '2026.4.1'}} in {a}: their "
     "ratios do not compare"),
    ({"models": {"mlp": 1.0}}, "model mlp is also in {a}: merge one run of each model"),
    ({"models": {"light_vgg19": 1.0}, "timing": "a process per configuration"},
     "timing is 'a process per configuration', but None in {a}: their ratios do not "
     "compare"),
])
def test_runs_that_do_not_compare_are_not_merged(tmp_path, capsys, second, message):
    a = _write(tmp_path / "a", _run_results({"mlp": 1.0}))
    models = second.pop("models")
    b = _write(tmp_path / "b", _run_results(models, **second))
    assert bench_merge.main([str(a), str(b), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: {b / 'results.json'}: "
                   f"{message.format(a=a / 'results.json')}\n")
    assert not (tmp_path / "out").exists()


def test_a_file_that_is_not_a_runs_results_is_one_error(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    notes = tmp_path / "notes.json"
    notes.write_text(json.dumps({"models": {}}))
    for path, message in [
        (tmp_path / "missing", f"{tmp_path / 'missing'}: cannot read it: "
                               "No such file or directory"),
        (bad, f"{bad}: not a benchmark's results.json: not JSON (Expecting property name "
              "enclosed in double quotes: line 1 column 3 (char 2))"),
        (notes, f"{notes}: not a benchmark's results.json: no command, date, host"),
    ]:
        assert bench_merge.main([str(path), "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {message}") and "Traceback" not in err


# ---------------------------------------------------------------------------
# Real runs on the MLP: cold, then warm
# ---------------------------------------------------------------------------


SCHEMA = json.loads((ROOT / "benchmarks" / "results.schema.json").read_text())


def test_mlp_cold_then_warm(monkeypatch, tmp_path, capsys):
    """The benchmark's results follow its schema (`benchmarks/results.schema.json`), and:
    every configuration is timed in each round, ratios are per round against the best
    single backend, the cold partition is measured once and read back, the warm one
    measures nothing, refinement keeps to its budget, and both additive errors are
    consistent; a crashing backend fails its configuration only."""
    work, out = tmp_path / "work", tmp_path / "out"
    common = ["--models", "mlp", "--work", str(work), "--out", str(out), "--warmup", "1"]
    assert bench_run.main([*common, "--rounds", "3", "--timing-s", "0",
                           "--refine-budget", "1"]) == 0
    printed = capsys.readouterr().out
    assert "Median latency (ms)" in printed and "mlp" in printed

    results = json.loads((out / "results.json").read_text())
    jsonschema.validate(results, SCHEMA)
    assert results["rounds"] == 3 and results["threads"] == ThreadPolicy().threads
    assert results["timing_s"] == 0 and results["models"]["mlp"]["rounds"] == 3
    assert results["command"][:2] == ["python", "benchmarks/run.py"]
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                          capture_output=True, text=True).stdout.strip()
    assert (results["commit"] or "").rstrip("+") == head  # None outside a git checkout
    mlp = results["models"]["mlp"]
    assert mlp["status"] == "ok"
    assert [n for n in mlp["notes"] if "plans at run time" not in n] == []
    assert list(mlp["configs"]) == list(CONFIGS)
    assert all(c["status"] == "ok" for c in mlp["configs"].values())
    best = mlp["best_single"]
    assert mlp["configs"][best]["ratio"]["per_round"] == [1.0] * 3
    # each configuration in a process of its own, each library alone as its users run it,
    # every block ended once its process was quiet
    assert results["timing"] == bench_run.TIMING
    for single in ("onnxruntime", "openvino"):
        assert mlp["configs"][single]["policy"] == {
            "threads": results["threads"], "spinning": "on", "own_defaults": True}
    assert all(c["settle_ms"] >= QUIET_S * 1e3 for c in mlp["configs"].values())
    assert results["sample_ms"] == 50.0
    for name, config in mlp["configs"].items():
        assert len(config["samples_ms"]) == 3
        r = config["ratio"]
        assert r["low"] <= r["median"] <= r["high"]
        assert config["calls"] == 1 or not config["slow"]  # slow: one-call samples
        assert config["first_ratio"]["low"] <= config["first_ratio"]["median"]
    # tens of microseconds a call: a 5 ms sample is many calls (a call can take longer on
    # this loaded machine, or a configuration be classified slow by its first call)
    assert max(c["calls"] for c in mlp["configs"].values()) > 1
    first = results["summary"]["ratio"]["collage"]["first_call"]
    assert first["models"] == 1 and first["geomean"] > 0
    assert "first call after the other configurations: geomean" in printed
    cold = json.loads((work / "costs" / "mlp.cold.json").read_text())["seconds"]
    assert mlp["partition"]["cold_seconds"] == cold > 0
    assert mlp["partition"]["warm"]["estimates"] == 0
    assert mlp["partition"]["warm"]["refinement"] is None
    refinement = mlp["partition"]["refined"]["refinement"]  # every trial, as refine reports
    if refinement is None:  # skipped: the search's plan is one backend's whole model
        assert mlp["partition"]["refined"]["kernels"].startswith("1 kernel (")
    else:
        assert [f["function"] for f in refinement] == ["main"]
        assert 0 < refinement[0]["budget"] <= 1.0
    # the search considers every one-backend cover too: mixing is estimated no dearer
    mixing = mlp["partition"]["warm"]["mixing_ratio"]
    assert 0 < mixing <= 1 + 1e-9
    assert results["summary"]["estimated_mixing"] == {"models": 1, "geomean": mixing,
                                                      "min": mixing}
    assert f"the mixed plan is {mixing:.3f}x of the cheapest backend alone" in printed
    for config in ("collage-search", "collage"):  # the cost database's view and side by side
        error = mlp["additive_error"][config]
        now = error["side_by_side"]
        assert now["run_ms"] == error["measured_ms"]
        assert now["low"] <= now["error"] <= now["high"]
        if error["error"] is not None:
            assert error["error"] == pytest.approx(
                (error["estimate_ms"] - error["measured_ms"]) / error["measured_ms"])
    assert mlp["additive_error"]["collage-search"]["error"] is not None
    assert set(results["summary"]["ratio"]) == {"pf-onnxruntime", "pf-openvino",
                                                "collage-search", "collage"}
    for pair, greedy in PAIRS.items():  # tvm + one BYOC backend against its greedy plan
        r = mlp["vs_greedy"][pair]
        assert r["greedy"] == greedy and r["low"] <= r["median"] <= r["high"]
        assert pair in mlp["partition"]
    assert set(results["summary"]["vs_greedy"]) == set(PAIRS)
    assert (out / "ratios.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = (out / "table.md").read_text()
    assert "| model | best single | rounds | onnxruntime |" in table and "| mlp | " in table

    # warm: the cold time is read back, not measured; a crashing backend fails its config
    real = bench_configs.whole_model

    def openvino_crashes(backend, model, options=None):
        if backend == "openvino":
            raise RuntimeError("openvino crashed")
        return real(backend, model, options)

    monkeypatch.setattr(bench_configs, "whole_model", openvino_crashes)
    assert bench_run.main([*common, "--rounds", "2", "--timing-s", "3", "--refine-budget", "0",
                           "--no-pairs"]) == 0
    printed = capsys.readouterr().out
    assert "at least 2 rounds, more in 3 s a model" in printed
    assert "mlp openvino: failed: RuntimeError: openvino crashed" in printed
    mlp = json.loads((out / "results.json").read_text())["models"]["mlp"]
    assert mlp["partition"]["cold_seconds"] == cold
    assert mlp["configs"]["openvino"] == {"status": "failed",
                                          "reason": "RuntimeError: openvino crashed"}
    assert mlp["configs"]["collage"]["status"] == "skipped"
    # rounds of well under a second: 3 s of timing is more than 2 of them
    assert mlp["rounds"] > 2 and len(mlp["configs"]["onnxruntime"]["samples_ms"]) == mlp["rounds"]
    assert mlp["configs"]["collage-search"]["status"] == "ok"
    assert all(mlp["configs"][p]["status"] == "skipped" for p in PAIRS)
