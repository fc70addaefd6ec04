"""Backend registry: built-ins by name, third-party backends through entry points.

    register_backend("mybackend", factory)   # factory(**options) -> Backend
    get_backend("onnxruntime")               # a Backend
    available_backends()                     # sorted names

Built-ins: `tvm` (native, FuseOps-like, every op), `onnxruntime` and `openvino` (BYOC),
and `test` (a toy BYOC backend whose ops, patterns and fusion style are options).
A package adds a backend by declaring an entry point in the group `collage_xdsl.backends`
whose object is a `Backend` or a factory returning one, e.g. in its pyproject.toml:

    [project.entry-points."collage_xdsl.backends"]
    mybackend = "mypackage.collage:MY_BACKEND"

`gather_specs` turns a list of enabled backend names into partition specs (Phase 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any

from collage_xdsl.backends.base import MAX_CANDIDATES_PER_NODE, Backend
from collage_xdsl.core.candidates import PartitionSpec
from collage_xdsl.core.rules import HostPartitionRule
from collage_xdsl.errors import CollageError

ENTRY_POINT_GROUP = "collage_xdsl.backends"

_BUILTINS: dict[str, tuple[str, str]] = {
    "tvm": ("tvm", "TVM"),
    "onnxruntime": ("onnxruntime", "ONNXRUNTIME"),
    "openvino": ("openvino", "OPENVINO"),
    "test": ("test", "make_test_backend"),
}

_REGISTERED: dict[str, Callable[..., Backend] | Backend] = {}


class BackendError(CollageError):
    """An unknown backend, or a registered object that is not a backend."""


def register_backend(name: str, backend: Backend | Callable[..., Backend]) -> None:
    """Register `backend` (or a factory taking options) under `name`, replacing any other."""
    _REGISTERED[name] = backend


def _entry_points() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available_backends() -> list[str]:
    return sorted({*_BUILTINS, *_entry_points(), *_REGISTERED})


def get_backend(name: str, **options: Any) -> Backend:
    """The backend called `name`; `options` go to a factory (e.g. the `test` backend's)."""
    if name in _REGISTERED:
        obj = _REGISTERED[name]
    elif name in _BUILTINS:
        module, attr = _BUILTINS[name]
        obj = getattr(import_module(f"collage_xdsl.backends.{module}"), attr)
    elif name in (eps := _entry_points()):
        try:
            obj = eps[name].load()
        except Exception as e:  # a broken third-party package must not crash the tool
            raise BackendError(f"backend {name!r} failed to load from {eps[name].value}: {e}")
    else:
        raise BackendError(
            f"unknown backend {name!r}; available: {', '.join(available_backends())}"
        )
    backend = obj if isinstance(obj, Backend) else obj(**options)
    if not isinstance(backend, Backend):
        raise BackendError(f"backend {name!r} is a {type(backend).__name__}, not a Backend")
    if backend.name != name:
        raise BackendError(f"backend registered as {name!r} calls itself {backend.name!r}")
    return backend


HOST_SPEC = PartitionSpec("host", HostPartitionRule("host"))
"""Zero-cost placements of tuples and projections (the host runs them, no kernel)."""


def gather_specs(
    names: Sequence[str],
    *,
    native_max_depth: int | None = None,
    byoc_max_depth: int | None = None,
    byoc_max_regions: bool = True,
    native_max_regions: bool = True,
    max_per_node: int = MAX_CANDIDATES_PER_NODE,
    options: dict[str, dict[str, Any]] | None = None,
) -> list[PartitionSpec]:
    """The specs of the backends `names` (depths override the declared ones), then the host's.

    `options[name]` are passed to that backend's factory."""
    for option, depth in (("tvm-max-depth", native_max_depth), ("byoc-max-depth", byoc_max_depth)):
        if depth is not None and depth < 0:
            raise CollageError(f"{option} must be >= 0 (0: unbounded), got {depth}")
    if max_per_node < 0:
        raise CollageError(f"max-candidates-per-node must be >= 0 (0: no cap), got {max_per_node}")
    specs = []
    for name in names:
        backend = get_backend(name, **(options or {}).get(name, {}))
        depth = byoc_max_depth if backend.byoc else native_max_depth
        regions = byoc_max_regions if backend.byoc else native_max_regions
        specs.append(backend.partition_spec(depth, regions, max_per_node))
    return [*specs, HOST_SPEC]
