"""The `collage` commands end to end: compile -> artifact -> run in a fresh process,
explain, bench, run --backends, and their error paths (one `error:` line, no traceback).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from collage_xdsl.runtime.artifact import WEIGHTS, load_artifact
from collage_xdsl.tools.collage import main

MOCK = ["--estimator", "mock", "--mock-costs", "tvm:1,onnxruntime:1.1,openvino:1.2"]


def collage(capsys, *args: str) -> tuple[int, str, str]:
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def test_artifact_runs_in_a_fresh_process_without_the_weight_cache(example_file, tmp_path, capsys):
    model = example_file("mnist_cnn")
    status, out, _ = collage(capsys, "compile", model, *MOCK, "-o", tmp_path / "art")
    assert status == 0 and "-> " in out
    manifest = json.loads((tmp_path / "art" / "manifest.json").read_text())
    assert manifest["backends"] == ["tvm", "onnxruntime", "openvino"]
    assert manifest["source"]["path"] == str(model.resolve())
    assert manifest["kernels"] and manifest["estimated_cost"] > 0
    assert set(manifest["backend_versions"]) == {"tvm", "onnxruntime", "openvino"}

    status, _, _ = collage(capsys, "run", model, "--output", tmp_path / "reference.npz")
    assert status == 0
    env = {**os.environ, "COLLAGE_WEIGHTS_DIR": str(tmp_path / "empty-store")}
    run = subprocess.run(
        [sys.executable, "-m", "collage_xdsl.tools.collage", "run", tmp_path / "art",
         "--check", "--profile", "--output", tmp_path / "artifact.npz"],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "check: 1 output(s) match onnxruntime" in run.stdout
    assert "@collage_" in run.stdout  # the profile
    want, got = np.load(tmp_path / "reference.npz"), np.load(tmp_path / "artifact.npz")
    assert want.files == got.files
    for name in want.files:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-5)


def test_corrupt_or_foreign_artifacts_are_errors(example_file, tmp_path, capsys):
    art = tmp_path / "art"
    assert collage(capsys, "compile", example_file("mlp"), *MOCK, "-o", art)[0] == 0
    weights = dict(np.load(art / WEIGHTS))
    key = next(iter(weights))
    np.savez(art / WEIGHTS, **{**weights, key: weights[key] + 1})
    status, _, err = collage(capsys, "run", art)
    assert status == 1 and f"weight {key} does not match its key" in err

    archive = (art / WEIGHTS).read_bytes()
    middle = len(archive) // 2
    for broken, reason in ((archive[:middle], "File is not a zip file"),
                           (archive[:middle] + bytes([archive[middle] ^ 0xFF])
                            + archive[middle + 1:], "Bad CRC-32")):
        (art / WEIGHTS).write_bytes(broken)
        status, _, err = collage(capsys, "run", art)
        assert status == 1 and f"{WEIGHTS}: cannot read the weights: {reason}" in err
    with open(art / WEIGHTS, "wb") as f:
        np.save(f, weights[key])
    status, _, err = collage(capsys, "run", art)
    assert status == 1 and "a single .npy array, not an .npz archive" in err

    (art / "manifest.json").write_text('{"format": "something-else"}')
    status, _, err = collage(capsys, "run", art)
    assert status == 1 and "not a collage artifact manifest" in err

    status, _, err = collage(capsys, "run", tmp_path)
    assert status == 1 and "not a collage artifact (missing manifest.json" in err

    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.txt").write_text("mine")
    status, _, err = collage(capsys, "compile", example_file("mlp"), *MOCK,
                             "-o", tmp_path / "other")
    assert status == 1 and "not a collage artifact (refusing to write into it)" in err
    assert "Traceback" not in err


def test_artifact_check_needs_its_unchanged_source(example_file, tmp_path, capsys):
    source = tmp_path / "mlp.onnx"
    source.write_bytes(example_file("mlp").read_bytes())
    assert collage(capsys, "compile", source, *MOCK, "-o", tmp_path / "art")[0] == 0
    source.write_bytes(source.read_bytes() + b"\0")
    status, _, err = collage(capsys, "run", tmp_path / "art", "--check")
    assert status == 1 and "--check needs the artifact's source model" in err
    assert load_artifact(tmp_path / "art").source_model() is None


@pytest.mark.parametrize("name", ["mlp", "transformer_encoder"])
def test_run_with_backends_partitions_and_checks(example_file, capsys, name):
    status, out, err = collage(capsys, "run", example_file(name), "--backends", "tvm,openvino",
                               *MOCK, "--check", "--profile")
    assert status == 0, err
    assert "check: 1 output(s) match onnxruntime" in out
    kernel_lines = [line.split() for line in out.splitlines() if line.startswith("@collage_")]
    assert kernel_lines and {line[1] for line in kernel_lines} <= {"tvm", "openvino"}


@pytest.mark.parametrize("backends", ["tvm", "onnxruntime", "openvino", "tvm,onnxruntime"])
def test_merged_duplicate_computation_runs_on_each_backend(tmp_path, capsys, backends):
    """The importer merges equal convolutions and returns one value as two outputs; each
    backend's kernels still give all four outputs as ONNX Runtime does on the file."""
    import onnx
    from example_models import duplicate_computation_model

    onnx.save(duplicate_computation_model(), tmp_path / "dup.onnx")
    status, out, err = collage(capsys, "run", tmp_path / "dup.onnx", "--backends", backends,
                               *MOCK, "--check")
    assert status == 0, err
    assert "check: 4 output(s) match onnxruntime" in out


def test_explain_table_and_json(example_file, capsys):
    status, out, _ = collage(capsys, "explain", example_file("mnist_cnn"), *MOCK)
    assert status == 0
    assert out.startswith("@main: ") and "best other" in out and "partitioned in" in out
    status, out, _ = collage(capsys, "explain", example_file("mnist_cnn"), *MOCK, "--json")
    report = json.loads(out)
    (function,) = report["functions"]
    assert function["candidates"] > 0 and function["kernels"]
    assert {k["backend"] for k in function["kernels"]} <= {"tvm", "onnxruntime", "openvino"}
    assert report["partition_seconds"] > 0


def test_bench_json(example_file, capsys):
    status, out, _ = collage(capsys, "bench", example_file("mlp"), *MOCK, "--rounds", "5", "--json")
    assert status == 0
    report = json.loads(out)
    configs = report["configs"]
    assert list(configs) == ["tvm", "onnxruntime", "openvino", "collage"]
    singles = [configs[b]["ratio_to_best_single"] for b in ("tvm", "onnxruntime", "openvino")]
    assert min(singles) == 1.0
    for row in configs.values():
        assert 0 < row["p25_ms"] <= row["median_ms"] <= row["p75_ms"]
    assert configs["collage"]["ratio_to_best_single"] == pytest.approx(
        configs["collage"]["median_ms"] / min(configs[b]["median_ms"] for b in report["backends"])
    )
    for row in configs.values():  # per-block ratios to the best single backend, with a CI
        ratio = row["per_round_ratio"]
        assert 0 < ratio["low"] <= ratio["median"] <= ratio["high"]
    # each library alone as its users run it (ONNX Runtime spinning on after a run)
    assert configs["onnxruntime"]["policy"] == {"threads": report["threads"], "spinning": "on",
                                                "own_defaults": True}
    assert report["failed"] == {}


def test_bench_samples_are_sized_after_the_warm_up():
    """A slow first call (a library initialising) neither sizes nor enters the samples."""
    import time

    from collage_xdsl.tools.bench import measure

    log = []

    def config(name):
        def run(inputs):
            if name not in log:
                time.sleep(0.05)  # the first call ever
            log.append(name)
            return []
        return run

    samples = measure({"a": config("a"), "b": config("b")}, [], rounds=3, warmup=1,
                      sample_s=0.001)
    assert all(len(s) == 3 and max(s) < 0.01 for s in samples.values())
    assert log.count("a") > 3 * 2 + 2  # warm-up, sizing, then samples of many calls


def test_measured_compile_reuses_the_cost_database(example_file, tmp_path, capsys):
    """The second compile follows the plan the database keeps (nothing estimated); with
    --replan the search runs again on the costs the database keeps."""
    db = tmp_path / "costs.sqlite"
    for art, more in (("cold", []), ("warm", []), ("replan", ["--replan"])):
        status, out, err = collage(capsys, "compile", example_file("mlp"), "--backends",
                                   "onnxruntime,openvino", "--cost-db", db, "--refine-budget", 0,
                                   "-o", tmp_path / art, *more)
        assert status == 0, err
    cold, warm, replan = (json.loads((tmp_path / a / "explain.json").read_text())["functions"][0]
                          for a in ("cold", "warm", "replan"))
    assert cold["estimates"] > 0 and cold["cost_db_hits"] == 0
    assert cold["plan_source"] == "search" and warm["plan_source"] == "kept in the cost database"
    def placed(report: dict) -> list:
        return [(k["backend"], k["label"], k["ops"], k["cost"]) for k in report["kernels"]]

    assert warm["estimates"] == 0 and placed(warm) == placed(cold)
    assert replan["estimates"] == 0 and replan["cost_db_hits"] == cold["estimates"]
    assert replan["kernels"] == cold["kernels"]


@pytest.mark.parametrize("args, message", [
    (["compile", "missing.onnx", "-o", "out"], "missing.onnx: no such file"),
    (["compile", "{mlp}", "--backends", "tvm,cuda", "-o", "out"],
     "--backends: unknown backend 'cuda' (runnable backends: iree, onnxruntime, openvino, tvm)"),
    (["explain", "{mlp}", "--backends", "tvm,tvm"], "names a backend twice"),
    (["explain", "{mlp}", "--estimator", "mock", "--cost-db", "x.sqlite"],
     "--cost-db keeps measured costs; it needs --estimator measured"),
    (["run", "{mlp}", "--profile"], "--profile times kernels"),
    (["explain", "{mlp}", "--estimator", "mock", "--max-depth", "-3"],
     "--max-depth must be >= 0 (0: unbounded), got -3"),
    (["run", "{mlp}", "--backends", "tvm", "--profile", "--profile-runs", "0"],
     "--profile-runs: need at least 1 run, not 0"),
    (["bench", "{mlp}", "--rounds", "0"], "--rounds must be at least 1"),
    (["bench", "{mlp}", "--seed", "-5"], "--seed must be >= 0, got -5"),
    (["bench", "missing.onnx"], "missing.onnx: no such file"),
    (["bench", "missing.onnx", "--refine-budget", "x"],  # options first, as compile does
     "--refine-budget must be auto or a number of seconds >= 0, got x"),
])
def test_command_errors_are_one_line(example_file, capsys, args, message):
    args = [a.replace("{mlp}", str(example_file("mlp"))) for a in args]
    status, out, err = collage(capsys, *args)
    assert status == 1 and "Traceback" not in err
    *progress, error = err.splitlines()  # progress lines name the phase reached
    assert all(line.startswith("collage: ") for line in progress), err
    assert error.startswith("error: ") and message in error
