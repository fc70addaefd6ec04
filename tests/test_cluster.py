"""Measurement on a Ray cluster (`collage_xdsl.measure.cluster`, `measure-on`): the option
and its errors, costs kept under the measuring node's host, and on a local Ray cluster the
tests start: crashes on a node, a task whose Ray worker dies, and the same cost database
as the local pool."""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import pytest
from cluster_hooks import exits_on_relu, kills_the_ray_worker_on_neg
from ir_helpers import RELU_ADD_RELU, parse
from test_pool import FAST, request
from xdsl.context import Context

from collage_xdsl.core.candidates import generate_candidates
from collage_xdsl.core.cost import Cost
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.regions import partitionable_functions
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.cluster import RayCostEstimator, ray_address
from collage_xdsl.measure.cost_db import (
    CachedCostEstimator,
    CostDatabase,
    host_description,
    host_fingerprint,
)
from collage_xdsl.measure.estimator import CostEstimator, KernelRequest, Measurement, kernel_request
from collage_xdsl.measure.pool import WorkerCostEstimator
from collage_xdsl.passes.partition import CollagePartitionPass
from collage_xdsl.planner.costing import cost_db_versions, make_estimator
from collage_xdsl.planner.options import PartitionOptions
from collage_xdsl.tools import collage
from collage_xdsl.tools.options import add_partition_options, partition_options

NEEDS_EXTRA = "needs the cluster extra: pip install 'collage-xdsl[cluster]'"


# -- the option, without a cluster --------------------------------------------------------


@pytest.mark.parametrize("text, address", [
    ("local", None), ("ray:auto", "auto"), ("ray://10.0.0.7:10001", "ray://10.0.0.7:10001"),
    ("ray://head.example.org:10001", "ray://head.example.org:10001")])
def test_measure_on_names_this_machine_or_a_ray_address(text, address):
    assert ray_address(text, "--measure-on") == address


@pytest.mark.parametrize("text", ["", "ray", "ray:", "Ray:auto", "ray://head", "ray://:1",
                                  "ray://head:port", "http://head:1", "ray://head:1/x"])
def test_a_bad_measure_on_is_one_error_naming_it(text):
    with pytest.raises(CollageError) as e:
        ray_address(text, "--measure-on")
    assert str(e.value) == f"--measure-on {text}: expected local, ray:auto or ray://HOST:PORT"


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_partition_options(parser, backends_default="onnxruntime")
    return parser.parse_args(list(argv))


def test_the_flag_reaches_the_partition_options():
    assert partition_options(_args()).measure_on == "local"
    pytest.importorskip("ray")
    options = partition_options(_args("--measure-on", "ray://127.0.0.1:10001"))
    assert options.measure_on == "ray://127.0.0.1:10001"
    with pytest.raises(CollageError, match="^--measure-on measures kernels; it needs "
                                           "--estimator measured$"):
        partition_options(_args("--measure-on", "ray:auto", "--estimator", "mock"))


def test_without_ray_asking_for_it_is_one_error_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if not installed
    model = tmp_path / "m.mlir"
    model.write_text(RELU_ADD_RELU)
    assert collage.main(["explain", str(model), "--measure-on", "ray:auto"]) == 1
    assert capsys.readouterr().err == f"error: --measure-on ray:auto: {NEEDS_EXTRA}\n"
    with pytest.raises(CollageError) as e:  # the pass: before anything is measured
        CollagePartitionPass(backends=("onnxruntime",), estimator="measured",
                             measure_on="ray:auto").apply(Context(), parse(RELU_ADD_RELU))
    assert str(e.value) == f"collage-partition: measure-on ray:auto: {NEEDS_EXTRA}"
    # measuring here needs no ray
    options = PartitionOptions(backends=("onnxruntime",), estimator="measured")
    estimator, _ = make_estimator(options.specs(), options, evict=False)
    assert isinstance(estimator, WorkerCostEstimator)


def test_the_pass_option_makes_a_ray_estimator_that_connects_only_when_it_measures(tmp_path):
    pytest.importorskip("ray")
    options = PartitionOptions(backends=("onnxruntime",), estimator="measured",
                               measure_on="ray://127.0.0.1:1", cost_db=str(tmp_path / "c.db"))
    estimator, db = make_estimator(options.specs(), options, evict=False)
    assert isinstance(estimator, CachedCostEstimator)
    assert isinstance(estimator.inner, RayCostEstimator)
    assert estimator.inner.address == "ray://127.0.0.1:1"
    estimator.close()  # nothing to disconnect: it never connected
    db.close()
    with pytest.raises(CollageError, match="measure-on ray:auto: measures kernels; it needs "
                                           "estimator=measured"):
        PartitionOptions(measure_on="ray:auto").check([])


class _Remote(CostEstimator):
    """Returns what a cluster node would: a measurement with its host."""

    def _measure(self, request: KernelRequest) -> Measurement:
        return Measurement(Cost(1e-3), runs=5, host="Another CPU (avx2); 64 cores; Linux x86_64")


def test_a_cost_measured_on_a_node_is_kept_under_that_nodes_host(tmp_path):
    with CostDatabase(tmp_path / "costs.sqlite") as db:
        cached = CachedCostEstimator(_Remote(), db, lambda r: "v1")
        (m,) = cached.measure_many([request("relu")])
        assert m.cost.seconds == 1e-3
        rows = db._conn.execute("SELECT host FROM collage_costs").fetchall()
        assert rows == [(host_fingerprint("Another CPU (avx2); 64 cores; Linux x86_64"),)]
        assert db.other_hosts() == 1 and db.get("relu", "onnxruntime", "v1") is None


# -- on a local Ray cluster ---------------------------------------------------------------


@pytest.fixture(scope="module")
def node_weights(tmp_path_factory) -> Path:
    """The weight store of the test cluster's node."""
    return tmp_path_factory.mktemp("node-weights")


@pytest.fixture(scope="module")
def ray_cluster(node_weights):
    """A local Ray cluster of one 2-CPU node, this process connected to it; its workers
    can import `cluster_hooks`, and keep weights in a store of their own (`node_weights`),
    as a node of another machine does."""
    ray = pytest.importorskip("ray")
    here = str(Path(__file__).resolve().parent)
    path = os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path,
                                       "COLLAGE_WEIGHTS_DIR": str(node_weights)}})
    yield ray
    ray.shutdown()


def test_a_kernel_that_kills_its_worker_on_a_node_is_invalid_alone(ray_cluster):
    requests = [request(op) for op in ("exp", "relu", "sqrt")]
    with RayCostEstimator("auto", compile=exits_on_relu, settings=FAST, progress=False) as est:
        exp, relu, sqrt = est.measure_many(requests)
        assert est.tasks == 1  # the node's pool measured the batch again, one by one
    assert relu.reason == "kernel relu on onnxruntime: worker crashed: exit code 3"
    assert exp.cost.is_known and sqrt.cost.is_known
    assert exp.host == sqrt.host == relu.host == host_description()


def test_a_task_whose_ray_worker_dies_once_is_run_again(ray_cluster, tmp_path):
    hook = partial(kills_the_ray_worker_on_neg, marker=str(tmp_path / "killed"))
    requests = [request(op) for op in ("exp", "neg", "sqrt")]
    with RayCostEstimator("auto", compile=hook, settings=FAST, progress=False) as est:
        measured = list(est.measure_many(requests))
        assert est.tasks == 1  # Ray ran it again (max_retries)
    assert (tmp_path / "killed").exists()
    assert all(m.cost.is_known for m in measured), measured


@pytest.mark.full
def test_a_kernel_that_kills_every_ray_worker_is_invalid_alone(ray_cluster):
    requests = [request(op) for op in ("exp", "neg", "sqrt")]
    with RayCostEstimator("auto", compile=kills_the_ray_worker_on_neg, settings=FAST,
                          progress=False) as est:
        exp, neg, sqrt = est.measure_many(requests)
        assert est.tasks == 4  # the batch, then each kernel alone
    assert exp.cost.is_known and sqrt.cost.is_known
    assert neg.cost.is_invalid
    assert neg.reason.startswith("kernel neg on onnxruntime: lost on the cluster: ")


RELU = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = collage.relu %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
"""


def test_the_pass_measures_on_the_cluster_and_keeps_the_costs(ray_cluster, tmp_path):
    db = tmp_path / "costs.sqlite"
    module = parse(RELU)
    CollagePartitionPass(backends=("onnxruntime", "openvino"), estimator="measured",
                         transitions="none", cost_db=str(db), measure_on="ray:auto"
                         ).apply(Context(), module)
    assert "collage.kernel" in str(module)
    hosts = sqlite3.connect(db).execute("SELECT DISTINCT host FROM collage_costs").fetchall()
    assert hosts == [(host_fingerprint(),)]  # the node is this machine
    assert ray_cluster.is_initialized()  # the estimator left the application's connection


def _keys(path: Path) -> set[tuple[str, str, str]]:
    rows = sqlite3.connect(path).execute("SELECT kernel, backend, version FROM collage_costs")
    return set(rows.fetchall())


def test_the_cluster_fills_the_cost_database_the_local_pool_does(ray_cluster, node_weights,
                                                                 example_module, tmp_path):
    (func,) = partitionable_functions(example_module("mlp"))
    specs = PartitionOptions(backends=("tvm", "onnxruntime", "openvino")).specs()
    requests = [kernel_request(c.sub_graph, c.spec.name)
                for c in generate_candidates(DataflowGraph(func), specs)
                if c.spec.backend is not None]
    seconds = {}
    for where, inner in [("local", WorkerCostEstimator(settings=FAST, progress=False)),
                         ("ray", RayCostEstimator("auto", settings=FAST, progress=False))]:
        started = time.monotonic()
        with CostDatabase(tmp_path / f"{where}.sqlite") as db:
            cached = CachedCostEstimator(inner, db, cost_db_versions(specs, FAST))
            costs = cached.estimate_all(requests)
            cached.close()
        seconds[where] = time.monotonic() - started
        assert all(c.is_known for c in costs), where
    print(f"MLP, {len(requests)} kernels: local {seconds['local']:.1f} s, "
          f"ray {seconds['ray']:.1f} s")
    local, ray = _keys(tmp_path / "local.sqlite"), _keys(tmp_path / "ray.sqlite")
    assert local == ray and len(local) > 0
    assert any(node_weights.rglob("*.npy"))  # the MLP's weights travelled to the node


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.full
def test_collage_measures_on_a_cluster_it_reaches_by_ray_client(tmp_path):
    """`ray start --head` on loopback, and `collage explain --measure-on ray://...`."""
    pytest.importorskip("ray")
    ray = Path(sys.executable).with_name("ray")
    gcs, client, agent = _free_port(), _free_port(), _free_port()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token"}
    # its own temporary directory (short: Ray's socket paths must fit), so that it leaves
    # no address behind for a later `ray:auto`
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    head = subprocess.Popen(
        [str(ray), "start", "--head", "--block", "--node-ip-address=127.0.0.1",
         f"--port={gcs}", f"--ray-client-server-port={client}",
         f"--dashboard-agent-listen-port={agent}", "--num-cpus=2", "--include-dashboard=false",
         "--disable-usage-stats", f"--temp-dir={temp}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        model, db = tmp_path / "m.mlir", tmp_path / "costs.sqlite"
        model.write_text(RELU_ADD_RELU)
        command = [sys.executable, "-m", "collage_xdsl.tools.collage", "explain", str(model),
                   "--backends", "onnxruntime,openvino", "--refine-budget", "0", "-q",
                   "--cost-db", str(db), "--measure-on", f"ray://127.0.0.1:{client}"]
        for _ in range(60):  # until the head takes clients
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            if "cannot connect" not in done.stderr:
                break
            time.sleep(1)
        assert done.returncode == 0, done.stderr
        hosts = sqlite3.connect(db).execute("SELECT DISTINCT host FROM collage_costs").fetchall()
        assert hosts == [(host_fingerprint(),)]
    finally:
        head.terminate()
        head.wait(60)
        shutil.rmtree(temp, ignore_errors=True)
