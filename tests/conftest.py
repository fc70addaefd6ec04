"""`pytest --full` also runs the tests marked `full` (every model through every backend)."""

import pytest


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true", help="also run the tests marked full")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--full"):
        return
    skip = pytest.mark.skip(reason="slow: run with --full")
    for item in items:
        if "full" in item.keywords:
            item.add_marker(skip)
