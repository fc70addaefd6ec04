"""Plans as files: a placement saved as JSON, edited by hand and followed instead of a search.

    write_plan("plan.json", plan_json(plans, backends))      # collage explain --save-plan
    kernels = plan_kernels(graph, read_plan("plan.json"), specs)   # collage compile --plan

One entry per op of a kernel, keyed by the op's node name (the ONNX node's, `%conv.2` in
the IR; `#12` for an unnamed op) and op kind, with the backend and the kernel it belongs
to; ops one ONNX node became share its name and differ by kind (and by `part` when the
kind repeats). Tuples and projections a kernel holds are listed with it; left out, the
host runs them. The schema is in `docs/control.md`, "Plans as files". Loading checks that
the file is a valid partition of the function and lists every problem by node name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from collage_xdsl.core.candidates import HOST_OPS, PartitionSpec
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, single
from collage_xdsl.core.placement import Constraints
from collage_xdsl.core.regions import ANY_SHAPE, Kernel
from collage_xdsl.core.subgraph import SubGraph, SubGraphConfig
from collage_xdsl.errors import CollageError
from collage_xdsl.refine.moves import MoveSpace

FORMAT, VERSION = "collage-plan", 1

NodeKey = tuple[str, str, int]
"""(node name, op kind, part): an op's identity in a plan file."""


class PlanFileError(CollageError):
    """A plan file that cannot be read or is not a valid partition."""


def node_keys(graph: DataflowGraph) -> dict[int, NodeKey]:
    """The key of every kernel node of `graph`, in dataflow order."""
    keys: dict[int, NodeKey] = {}
    seen: dict[tuple[str, str], int] = {}
    for i in bits(graph.kernel_nodes):
        op = graph.nodes[i].op
        hint = op.results[0].name_hint if op.results else None
        name, kind = hint or f"#{i}", op.name.removeprefix("collage.")
        part = seen.get((name, kind), 0)
        seen[(name, kind)] = part + 1
        keys[i] = (name, kind, part)
    return keys


def entry_key(entry: Mapping) -> NodeKey:
    return (str(entry.get("node")), str(entry.get("op")), int(entry.get("part", 0)))


def describe_key(key: NodeKey) -> str:
    name, kind, part = key
    return f"node '{name}' ({kind}{f', part {part}' if part else ''})"


def function_entries(kernels: Sequence[Kernel]) -> list[dict]:
    """The plan file entries of one function's kernels, kernel by kernel."""
    if not kernels:
        return []
    keys = node_keys(kernels[0].sub_graph.graph)
    entries = []
    for k, kernel in enumerate(kernels):
        for i in bits(kernel.inside):
            if i in keys:
                name, kind, part = keys[i]
                entry = {"node": name, "op": kind, "backend": kernel.backend, "kernel": k}
                entries.append({**entry, "part": part} if part else entry)
    return entries


def plan_json(plans: Sequence, backends: Sequence[str]) -> dict:
    """The plan file of partitioned functions (`FunctionPlan`s: `.function`, the final
    `.kernels`)."""
    return {"format": FORMAT, "version": VERSION, "backends": list(backends),
            "functions": {p.function: function_entries(p.kernels) for p in plans}}


def format_plan(plan: dict) -> str:
    """The plan file's text: JSON with one line per entry, for editing by hand."""
    head = ", ".join(f"{json.dumps(k)}: {json.dumps(plan[k])}"
                     for k in ("format", "version", "backends"))
    functions = ",\n".join(
        f"  {json.dumps(name)}: [\n" + ",\n".join(f"   {json.dumps(e)}" for e in entries)
        + "\n  ]" for name, entries in plan["functions"].items())
    return f"{{{head},\n \"functions\": {{\n{functions}\n }}\n}}\n"


def write_plan(path: str | Path, plan: dict) -> None:
    try:
        Path(path).write_text(format_plan(plan))
    except OSError as e:
        raise PlanFileError(f"{path}: cannot write the plan: {e.strerror}") from None


def read_plan(path: str | Path) -> dict:
    """A plan file's JSON, checked for its format and shape (not yet against a model)."""
    try:
        plan = json.loads(Path(path).read_text())
    except OSError as e:
        raise PlanFileError(f"{path}: cannot read the plan: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise PlanFileError(f"{path}: not JSON: {e}") from None
    if not isinstance(plan, dict) or plan.get("format") != FORMAT:
        raise PlanFileError(f"{path}: not a collage plan (no \"format\": \"{FORMAT}\")")
    if plan.get("version") != VERSION:
        raise PlanFileError(f"{path}: plan version {plan.get('version')!r}, this collage "
                            f"reads version {VERSION}")
    functions = plan.get("functions")
    if not isinstance(functions, dict) or not all(
            isinstance(es, list) and all(isinstance(e, dict) for e in es)
            for es in functions.values()):
        raise PlanFileError(f"{path}: \"functions\" must map function names to lists of "
                            "entries")
    for name, entries in functions.items():
        for e in entries:
            if not isinstance(e.get("node"), str) or not isinstance(e.get("op"), str) or \
                    not isinstance(e.get("backend"), str) or not isinstance(e.get("kernel"), int):
                raise PlanFileError(f"{path}: @{name}: entry {json.dumps(e)} needs \"node\", "
                                    "\"op\", \"backend\" (strings) and \"kernel\" (an integer)")
    return {"path": str(path), **plan}


def plan_kernels(graph: DataflowGraph, plan: dict, specs: Sequence[PartitionSpec],
                 configs: Mapping[str, SubGraphConfig | None],
                 constraints: Constraints = Constraints()) -> list[Kernel]:
    """The kernels `plan` gives the function of `graph`, or a `PlanFileError` listing every
    way it is not a valid partition: ops missing, unknown or placed twice, a kernel mixing
    backends, a backend not enabled or unable to run a kernel, kernels in a cycle."""
    function = graph.func.sym_name.data
    entries = plan["functions"].get(function)
    if entries is None:
        raise PlanFileError(f"{plan['path']}: no plan for @{function}")
    problems: list[str] = []
    keys = node_keys(graph)
    by_key = {key: i for i, key in keys.items()}
    kernels = _group(entries, by_key, problems)
    placed = {i for _, nodes in kernels.values() for i in nodes}
    problems += [f"{describe_key(key)} is not placed" for key, i in by_key.items()
                 if i not in placed and graph.nodes[i].op.name not in HOST_OPS]
    backends = [s.backend for s in specs if s.backend is not None]
    space = MoveSpace(graph, backends, configs, constraints.allowed(graph, specs),
                      constraints.min_kernel_ops)
    found = [_kernel(graph, space, keys, k, backend, nodes, problems)
             for k, (backend, nodes) in sorted(kernels.items())]
    if not problems and not space.acyclic(found):
        problems.append("the kernels depend on each other in a cycle: no order runs them")
    if problems:
        raise PlanFileError(f"{plan['path']}: @{function} is not a valid partition:\n  "
                            + "\n  ".join(problems))
    return found


def _group(entries: Sequence[Mapping], by_key: Mapping[NodeKey, int], problems: list[str]
           ) -> dict[int, tuple[str, list[int]]]:
    """Kernel id -> (backend, nodes) of the entries; unknown, repeated and mixed entries
    are problems."""
    kernels: dict[int, tuple[str, list[int]]] = {}
    seen: set[NodeKey] = set()
    for e in entries:
        key = entry_key(e)
        if key in seen:
            problems.append(f"{describe_key(key)} is placed twice")
            continue
        seen.add(key)
        if key not in by_key:
            kinds = sorted({kind for name, kind, _ in by_key if name == key[0]})
            problems.append(f"{describe_key(key)}: the node is a {' and '.join(kinds)}" if kinds
                            else f"{describe_key(key)} is not an op of the function")
            continue
        backend, nodes = kernels.setdefault(e["kernel"], (e["backend"], []))
        if backend != e["backend"]:
            problems.append(f"kernel {e['kernel']} mixes backends {backend} and "
                            f"{e['backend']} ({describe_key(key)})")
            continue
        nodes.append(by_key[key])
    return kernels


def _kernel(graph: DataflowGraph, space: MoveSpace, keys: Mapping[int, NodeKey], k: int,
            backend: str, nodes: list[int], problems: list[str]) -> Kernel:
    """Kernel `k` of the plan; what keeps its backend from running it is a problem."""
    inside = 0
    for i in nodes:
        inside |= single(i)
    sub = SubGraph(graph, inside)
    if backend not in space.backends:
        problems.append(f"kernel {k}: backend {backend!r} is not enabled (enabled: "
                        f"{', '.join(space.backends)})")
        return Kernel(sub, backend)
    refused = [i for i in nodes if not space.supported[backend] >> i & 1]
    config = space.configs.get(backend)
    why = sub.why_invalid(ANY_SHAPE) or (
        sub.why_invalid(config) if config is not None else
        None if len(nodes) == 1 else f"{backend} does not fuse: one op per kernel")
    if refused:
        node = describe_key(keys[refused[0]])
        problems.append(f"kernel {k}: {backend} cannot run {node} (unsupported, or the "
                        "constraints forbid it)")
    elif why is not None:
        problems.append(f"kernel {k} ({backend}) is not a kernel it can run: {why}")
    elif not space.fits(sub, backend):
        problems.append(f"kernel {k} ({backend}) is smaller than min-kernel-ops")
    return Kernel(sub, backend)
