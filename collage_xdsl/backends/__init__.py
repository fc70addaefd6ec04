"""The backend registry: every backend, built-in or third-party, is an entry point of the
group `collage_xdsl.backends` whose object is a `Backend` or a factory taking its options.

    get_backend("onnxruntime")                          # a Backend
    get_backend("tvm", tune="metaschedule")             # a factory's options
    available_backends()                                # sorted names
    gather_specs(["tvm", "onnxruntime"])                # their partition specs, then the host's

A package adds a backend with one folder and one entry point in its pyproject.toml:

    [project.entry-points."collage_xdsl.backends"]
    mybackend = "mypackage.collage:BACKEND"

Options as pass options and flags give them (`backend-options="test: ops=relu,add
fusion=tvm; tvm: tune=metaschedule"`) are parsed by `parse_backend_options`.
"""

from __future__ import annotations

import inspect
import shlex
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any, get_type_hints

from collage_xdsl.backends.base import MAX_CANDIDATES_PER_NODE, Backend
from collage_xdsl.backends.fusion_spec import apply_section, load_fusion_spec
from collage_xdsl.backends.kernel import KernelCompileError
from collage_xdsl.core.candidates import PartitionSpec
from collage_xdsl.core.rules import HostPartitionRule
from collage_xdsl.dialects.collage import BACKEND_ENTRY_POINTS, RUNTIME_BACKENDS
from collage_xdsl.errors import CollageError

BackendOptions = Mapping[str, Mapping[str, Any]]
"""Per backend name, the options its factory is called with."""

_REGISTERED: dict[str, Callable[..., Backend] | Backend] = {}


class BackendError(CollageError):
    """An unknown backend, bad backend options, or a registered object that is no backend."""


def register_backend(name: str, backend: Backend | Callable[..., Backend]) -> None:
    """Register `backend` (or a factory taking options) under `name` in this process."""
    _REGISTERED[name] = backend
    RUNTIME_BACKENDS.add(name)
    _resolve.cache_clear()


@cache
def _entry_points() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=BACKEND_ENTRY_POINTS)}


def available_backends() -> list[str]:
    return sorted({*_entry_points(), *_REGISTERED})


def runnable_backends() -> list[str]:
    """The backends whose kernels can be compiled and run, not only estimated."""
    return [n for n in available_backends() if get_backend(n).can_compile]


def _factory(name: str) -> Callable[..., Backend] | Backend:
    if name in _REGISTERED:
        return _REGISTERED[name]
    eps = _entry_points()
    if name not in eps:
        raise BackendError(f"unknown backend {name!r}; available: "
                           f"{', '.join(available_backends())}")
    try:
        return eps[name].load()
    except Exception as e:  # a broken third-party package must not crash the tool
        raise BackendError(f"backend {name!r} failed to load from {eps[name].value}: {e}"
                           ) from None


@cache
def _resolve(name: str, options: tuple[tuple[str, Any], ...]) -> Backend:
    obj = _factory(name)
    if isinstance(obj, Backend):
        if options:
            raise BackendError(f"backend {name!r} takes no options, got "
                               f"{', '.join(k for k, _ in options)}")
        backend = obj
    else:
        backend = obj(**_converted(name, obj, dict(options)))
    if not isinstance(backend, Backend):
        raise BackendError(f"backend {name!r} is a {type(backend).__name__}, not a Backend")
    if backend.name != name:
        raise BackendError(f"backend registered as {name!r} calls itself {backend.name!r}")
    return backend


def get_backend(name: str, **options: Any) -> Backend:
    """The backend called `name`; `options` go to its factory (text values are converted
    to the types the factory declares)."""
    frozen = tuple(sorted((k, tuple(v) if isinstance(v, list) else v)
                          for k, v in options.items()))
    return _resolve(name, frozen)


def backend_for(name: str, options: BackendOptions | None = None) -> Backend:
    """`get_backend(name)` made with its entry of a backend-options map
    (`parse_backend_options`); no entry, no options."""
    return get_backend(name, **(options or {}).get(name, {}))


def _converted(name: str, factory: Callable[..., Backend], options: dict[str, Any]
               ) -> dict[str, Any]:
    """`options` with text values turned into the factory's parameter types (int, float,
    str, or a sequence of strings written `a,b,c`); unknown options are an error."""
    params = inspect.signature(factory).parameters
    hints = get_type_hints(factory)
    unknown = sorted(set(options) - set(params))
    if unknown:
        raise BackendError(f"backend {name!r}: unknown option {unknown[0]!r} (options: "
                           f"{', '.join(params) or 'none'})")
    converted = {}
    for key, value in options.items():
        kind = hints.get(key, str)
        if isinstance(value, str) and kind in (int, float):
            try:
                value = kind(value)
            except ValueError:
                raise BackendError(f"backend {name!r}: option {key} must be a number, "
                                   f"got {value!r}") from None
        elif isinstance(value, str) and kind is not str:
            value = tuple(v for v in value.split(",") if v)
        converted[key] = value
    return converted


def parse_backend_options(text: str) -> dict[str, dict[str, str]]:
    """`test: ops=relu,add fusion=tvm; tvm: tune=metaschedule` as
    ``{"test": {"ops": "relu,add", "fusion": "tvm"}, "tvm": {"tune": "metaschedule"}}``;
    a value with spaces is quoted as in a shell (`db='/my dir'`)."""
    parsed: dict[str, dict[str, str]] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, sep, rest = part.partition(":")
        name = name.strip()
        if not sep or not name or name in parsed:
            raise BackendError(f"backend-options: expected NAME: KEY=VALUE ...; NAME: ..., "
                               f"each backend once, got {part!r}")
        parsed[name] = {}
        try:
            items = shlex.split(rest)
        except ValueError as e:
            raise BackendError(f"backend-options: {name}: {e} in {rest.strip()!r}") from None
        for item in items:
            key, eq, value = item.partition("=")
            if not eq or not key or key in parsed[name]:
                raise BackendError(f"backend-options: {name}: expected KEY=VALUE, each key "
                                   f"once, got {item!r}")
            parsed[name][key] = value
    return parsed


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
    options: BackendOptions | None = None,
    fusion_spec: str = "",
) -> list[PartitionSpec]:
    """The specs of the backends `names` (depths override the declared ones), then the
    host's; `options[name]` go to that backend's factory (options of a backend that is not
    enabled are not used). `fusion_spec`, a file's path, extends or replaces backends'
    declarations (`collage_xdsl.backends.fusion_spec`; its `max_depth` wins over the
    depths given here)."""
    for option, depth in (("tvm-max-depth", native_max_depth), ("byoc-max-depth", byoc_max_depth)):
        if depth is not None and depth < 0:
            raise CollageError(f"{option} must be >= 0 (0: unbounded), got {depth}")
    if max_per_node < 0:
        raise CollageError(f"max-candidates-per-node must be >= 0 (0: no cap), got {max_per_node}")
    sections = load_fusion_spec(fusion_spec, available_backends()) if fusion_spec else {}
    specs = []
    for name in names:
        backend = backend_for(name, options)
        depth = byoc_max_depth if backend.byoc else native_max_depth
        if name in sections:
            backend = apply_section(backend, sections[name])
            depth = depth if sections[name].max_depth is None else sections[name].max_depth
        regions = byoc_max_regions if backend.byoc else native_max_regions
        specs.append(backend.partition_spec(depth, regions, max_per_node))
    return [*specs, HOST_SPEC]


def compile_kernel(backend: str, kernel, threads=None, options: Mapping[str, Any] | None = None):
    """``get_backend(backend, **options).compile(kernel, threads)``: a `CompiledKernel`;
    an unknown backend is a `KernelCompileError` too."""
    try:
        found = get_backend(backend, **(options or {}))
    except BackendError as e:
        raise KernelCompileError(str(e)) from None
    return found.compile(kernel, threads)
