"""`pytest --full` also runs the tests marked `full` (every model through every backend);
fixtures for the example models of `examples/make_models.py` (loaded once, by
`tests/example_models.py`). The Ray clusters the tests start stay on the loopback
address: Ray otherwise binds this machine's network address."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import onnx
import pytest
from example_models import make_models
from xdsl.dialects.builtin import ModuleOp

from collage_xdsl.frontend import import_onnx

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # read when ray is imported


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true", help="also run the tests marked full")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--full"):
        return
    skip = pytest.mark.skip(reason="slow: run with --full")
    for item in items:
        if "full" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def example_file(tmp_path_factory) -> Callable[[str], Path]:
    """name -> the example model's .onnx file, written once per session into a temporary
    directory."""
    directory = tmp_path_factory.mktemp("models")
    return lambda name: make_models.ensure_model(name, directory)


@pytest.fixture(scope="session")
def example_model() -> Callable[[str], onnx.ModelProto]:
    """name -> the example model, built once per session; each call returns a copy of
    its own."""
    built: dict[str, onnx.ModelProto] = {}

    def get(name: str) -> onnx.ModelProto:
        if name not in built:
            built[name] = make_models.make_model(name)
        copy = onnx.ModelProto()
        copy.CopyFrom(built[name])
        return copy

    return get


@pytest.fixture(scope="session")
def example_module(example_model) -> Callable[[str], ModuleOp]:
    """name -> the example model imported into the collage dialect (a fresh module on
    each call)."""
    return lambda name: import_onnx(example_model(name))
