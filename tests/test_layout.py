"""The library's layout: layered packages, no import cycle, modules and functions of a
readable size. Imports are read from the source (every `import`, at any depth, type-only
ones too), so the check runs without importing the library."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = {"collage_xdsl": ROOT / "collage_xdsl", "collage_xdsl.dialects": ROOT / "dialects",
           "collage_xdsl.passes": ROOT / "passes"}

LAYERS = {
    "dialects": 0, "errors": 1, "cache": 1, "ir": 2, "core": 3, "frontend": 3, "linalg": 3, "rewrite": 4,
    "backends": 4,
    "measure": 5, "baselines": 5, "runtime": 6, "refine": 7, "planner": 8, "passes": 9,
    "tools": 10, "universe": 10,
}
"""Each package's layer: a module may import its own package and packages of lower
layers only (tools -> passes -> planner -> refine -> runtime -> measure, baselines ->
backends -> core, frontend -> ir -> dialects)."""

MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
LARGE_MODULES = {"collage_xdsl.dialects.collage"}
"""The dialect: one op class per operator, exempt from the module size."""


def modules() -> dict[str, Path]:
    found = {}
    for package, folder in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The library modules `name` imports (a package import counts as its `__init__`)."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "collage_xdsl"


GRAPH = {name: imports(name, path, modules()) for name, path in modules().items()}


def test_every_package_is_installed():
    """A regular (not editable) install ships the packages pyproject.toml lists."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = {name for name, path in modules().items() if path.name == "__init__.py"}
    assert set(tool["packages"]) == packages
    assert {name: ROOT / folder for name, folder in tool["package-dir"].items()} == {
        name: SOURCES[name] for name in tool["package-dir"]}


def test_every_package_has_a_layer():
    assert {layer(m) for m in GRAPH} - {"collage_xdsl"} <= set(LAYERS)


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_point_down_the_layers(module):
    if layer(module) == "collage_xdsl":
        return
    upward = [t for t in GRAPH[module] if layer(t) != "collage_xdsl" and layer(t) != layer(module)
              and LAYERS[layer(t)] >= LAYERS[layer(module)]]
    assert not upward, f"{module} imports {upward} from a layer at or above its own"


def test_no_import_cycle():
    done: set[str] = set()
    path: list[str] = []

    def visit(m: str) -> None:
        if m in path:
            raise AssertionError("import cycle: " + " -> ".join(path[path.index(m):] + [m]))
        if m in done:
            return
        path.append(m)
        for t in sorted(GRAPH[m]):
            visit(t)
        path.pop()
        done.add(m)

    for m in sorted(GRAPH):
        visit(m)


@pytest.mark.parametrize("module", sorted(set(GRAPH) - LARGE_MODULES))
def test_modules_and_functions_are_of_a_readable_size(module):
    path = modules()[module]
    source = path.read_text()
    assert len(source.splitlines()) <= MAX_MODULE_LINES, f"{path}: over {MAX_MODULE_LINES} lines"
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1
            assert length <= MAX_FUNCTION_LINES, (
                f"{path}:{node.lineno} {node.name} is {length} lines")


def test_no_library_module_imports_a_pass():
    importers = {m for m, targets in GRAPH.items() for t in targets if layer(t) == "passes"}
    assert importers <= {m for m in GRAPH if layer(m) in ("passes", "tools", "universe")}
