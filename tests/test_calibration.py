"""Calibrating boundary costs (`collage_xdsl.runtime.calibration`): real backends measured,
calibrations kept in the cost database, a failed calibration costing nothing, and the
timing order (kernels alone after eviction, chains without)."""

from __future__ import annotations

import math

import numpy as np

from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.core import boundaries as T
from collage_xdsl.errors import CollageError
from collage_xdsl.measure.cost_db import CostDatabase
from collage_xdsl.measure.timing import balanced_order
from collage_xdsl.runtime import calibration as Cal


def test_calibration_measures_real_backends():
    costs = Cal.calibrate(("onnxruntime", "openvino"), ThreadPolicy(1))
    assert set(costs.launch) == {"onnxruntime", "openvino"}
    assert set(costs.crossing) == {("onnxruntime", "openvino"), ("openvino", "onnxruntime")}
    values = [costs.base, *costs.launch.values(), *(x for c in costs.crossing.values() for x in c)]
    assert all(math.isfinite(v) and v >= 0 for v in values)
    crossing = costs.crossing
    assert crossing[("onnxruntime", "openvino")] == crossing[("openvino", "onnxruntime")]
    assert costs.base < 1e-3  # the runtime's own cost per run is microseconds, not more


def test_calibrations_are_kept_in_the_cost_database(tmp_path, monkeypatch):
    calls = []
    fake = T.TransitionCosts(2e-6, {"tvm": 1e-6, "openvino": 0.0},
                             {("tvm", "openvino"): (5e-6, 0.0), ("openvino", "tvm"): (5e-6, 0.0)})

    def calibrate(backends, policy, options=None):
        calls.append((tuple(backends), policy.threads))
        return fake

    monkeypatch.setattr(Cal, "calibrate", calibrate)
    versions = {"tvm": "1", "openvino": "2"}
    with CostDatabase(tmp_path / "c.sqlite") as db:
        assert db.get_transitions("k") is None  # no table yet: nothing stored
        assert Cal.transition_costs(["tvm", "openvino"], versions, ThreadPolicy(2), db) == fake
    with CostDatabase(tmp_path / "c.sqlite") as db:
        assert Cal.transition_costs(["openvino", "tvm"], versions, ThreadPolicy(2), db) == fake
        assert len(calls) == 1  # read back, whatever the backend order
        Cal.transition_costs(["tvm", "openvino"], versions, ThreadPolicy(1), db)
        Cal.transition_costs(["tvm", "openvino"], {**versions, "tvm": "9"}, ThreadPolicy(2), db)
        assert len(calls) == 3  # another thread count or version calibrates again


def test_a_failed_calibration_costs_nothing_and_says_why(monkeypatch, capsys):
    def calibrate(backends, policy, options=None):
        raise CollageError("transition calibration: the worker process crashed")

    monkeypatch.setattr(Cal, "calibrate", calibrate)
    assert Cal.transition_costs(["tvm"], {"tvm": "1"}, ThreadPolicy(1)) is T.NONE
    assert "worker process crashed; boundary costs are left out" in capsys.readouterr().err


def test_calibration_times_kernels_alone_after_eviction_and_chains_without():
    log = []
    runs = {name: (lambda inputs, name=name: log.append(name)) for name in ("chain", "iso 0")}
    t = Cal._timed(runs, np.zeros(1, np.float32), 0.0, {"iso 0"}, lambda: log.append("evict"))
    assert set(t) == {"chain", "iso 0"}
    chain = ["chain"] * Cal.STEADY
    iso = ["iso 0"] * (Cal.STEADY - 1) + ["evict", "iso 0"]  # evicted before the timed call
    steps = {"chain": chain, "iso 0": iso}
    assert log == [x for r in range(20) for name in balanced_order(list(runs), r)
                   for x in steps[name]]
