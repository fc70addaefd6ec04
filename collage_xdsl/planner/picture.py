"""A picture of a partition: each partitioned function of an outlined module as its dataflow
graph, nodes filled by backend, a kernel call one node (with `expand`, each op, boxed per
call), crossings between backends red and dashed, laid out top to bottom in layers.

    partitioned = partition_module(module, PartitionOptions(backends=("tvm", "openvino")))
    draw_partition(partitioned.module, "partition.svg")      # or .png / .pdf
    html = partition_svg(partitioned.module, expand=True)    # SVG text to embed

networkx and matplotlib draw it, not Graphviz: there is no `dot` binary on the machines we
run on and CI installs only from PyPI. Alternative plans and constants are not drawn.
"""
from __future__ import annotations

import io
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

import matplotlib
import networkx as nx
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch, Rectangle
from matplotlib.path import Path as MplPath
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, TensorType
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from collage_xdsl.core.cost import Cost
from collage_xdsl.dialects.collage import CompositeOp, ConstantOp, YieldOp
from collage_xdsl.errors import CollageError

BACKEND_COLORS = {"tvm": "#8fb3e8", "onnxruntime": "#f5b06b", "openvino": "#8fd19e",
                  "test": "#c9b3e6"}
"""Fills of the built-in backends; other backends take one of `PALETTE` by name."""
PALETTE = ("#f2a7a7", "#e6d47a", "#a7dfe6", "#e6a7d8", "#c4b49a", "#b5e68f", "#a7b5f2")
HOST_COLOR, IO_COLOR, BOUNDARY_COLOR, EDGE_COLOR = "#dddddd", "#ffffff", "#d62728", "#666666"
FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf"}

FONT = 6.0
"""Node labels, in points, monospaced so a label's width is known before drawing."""
CHAR_WIDTH = 0.61 * FONT / 72
NODE_HEIGHT = 2 * 1.25 * FONT / 72 + 0.1
"""Inches; every label has at most two lines of at most `MAX_CHARS` characters."""
MAX_CHARS = 40
LAYER_GAP, NODE_GAP, DUMMY_WIDTH, MARGIN, BOX_PAD = 0.32, 0.15, 0.08, 0.3, 0.06
"""Inches between layers, between nodes, a dummy node's width, the margin, and the space
around the ops of a kernel call in an expanded picture."""
MAX_PIXELS = 32000
"""The longest side of a PNG, so Agg can render a tall picture (it caps the dpi)."""


def backend_color(backend: str | None) -> str:
    """The fill of `backend`'s nodes: a fixed colour for a built-in backend, a palette
    colour chosen by the name's CRC for any other, grey for the host (None)."""
    if backend is None:
        return HOST_COLOR
    return BACKEND_COLORS.get(backend) or PALETTE[zlib.crc32(backend.encode()) % len(PALETTE)]


@dataclass(frozen=True)
class KernelCall:
    """One call of a kernel function, as the picture labels it."""

    index: int
    backend: str
    label: str
    ops: int
    cost: float | None

    def caption(self) -> str:
        """`tvm: 3 ops, 12.3us` (no cost when the partitioner estimated none)."""
        cost = f", {Cost(self.cost)}" if self.cost is not None else ""
        return f"{self.backend}: {self.ops} op{'s' * (self.ops != 1)}{cost}"


def _short(text: str, limit: int = MAX_CHARS) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 1)] + "\u2026"


def _type_text(t: Attribute) -> str:
    if isinstance(t, TensorType):
        return "x".join([*(str(d) for d in t.get_shape()), str(t.element_type)])
    return str(t)


def _op_lines(op: Operation) -> tuple[str, ...]:
    """An op's label: its name without `collage.`, and its first result's name."""
    name = op.name.removeprefix("collage.")
    hint = op.results[0].name_hint if op.results else None
    return (_short(name), _short(f"%{hint}")) if hint else (_short(name),)


def _leaf_ops(block: Block) -> int:
    """The ops a kernel body computes (constants, terminators and composites aside)."""
    return sum(1 for op in block.walk()
               if not isinstance(op, (ConstantOp, ReturnOp, YieldOp, CompositeOp)))


def _kernel_call(callee: FuncOp, index: int) -> KernelCall:
    backend = callee.attributes["collage.backend"].data  # type: ignore[attr-defined]
    label = callee.sym_name.data.removeprefix("collage_").removeprefix(f"{backend}_")
    cost = callee.attributes.get("collage.cost")
    seconds = cost.value.data if cost is not None else None  # type: ignore[attr-defined]
    return KernelCall(index, backend, label, _leaf_ops(callee.body.block), seconds)


class _Builder:
    """Builds the dataflow graph of partitioned functions: node attributes `kind` (input,
    output, host, kernel or op), `lines` (the label), `backend` and `call` (the index of
    the kernel call it belongs to, None outside kernels)."""

    def __init__(self, functions: dict[str, FuncOp], expand: bool, first_call: int):
        self.functions, self.expand, self.first_call = functions, expand, first_call
        self.graph, self.calls = nx.DiGraph(), []

    def node(self, kind: str, lines: tuple[str, ...], sources=(),
             call: KernelCall | None = None) -> int:
        node = self.graph.number_of_nodes()
        self.graph.add_node(node, kind=kind, lines=lines, call=call,
                            backend=call.backend if call is not None else None)
        self.graph.add_edges_from((s, node) for s in sources if s is not None)
        return node

    def function(self, func: FuncOp) -> None:
        env: dict[SSAValue, int | None] = {}
        for i, arg in enumerate(func.body.block.args):
            env[arg] = self.node("input", (_short(f"%{arg.name_hint or i}"),
                                           _short(_type_text(arg.type))))
        results = func.function_type.outputs.data
        for i, source in enumerate(self.block(func.body.block, env, None)):
            self.node("output", (f"return #{i}", _short(_type_text(results[i]))), [source])

    def block(self, block: Block, env: dict, call: KernelCall | None) -> list[int | None]:
        """Adds the nodes of `block`'s ops; the sources of what its terminator returns."""
        for op in block.ops:
            if isinstance(op, (ReturnOp, YieldOp)):
                return [env.get(v) for v in op.operands]
            sources = [env.get(v) for v in op.operands]
            env.update(zip(op.results, self.op(op, sources, call)))
        return []

    def op(self, op: Operation, sources: list, call: KernelCall | None) -> list[int | None]:
        """The nodes that produce each result of `op`, once it is drawn."""
        callee = self.kernel_function(op)
        if isinstance(op, ConstantOp):
            return [None] * len(op.results)
        if callee is not None:
            return self.kernel(op, callee, sources)
        if isinstance(op, CompositeOp) and call is not None:
            return self.block(op.body.block, dict(zip(op.body.block.args, sources)), call)
        node = self.node("host" if call is None else "op", _op_lines(op), sources, call)
        return [node] * len(op.results)

    def kernel_function(self, op: Operation) -> FuncOp | None:
        if not isinstance(op, CallOp):
            return None
        callee = self.functions.get(op.callee.string_value())
        return callee if callee is not None and "collage.kernel" in callee.attributes else None

    def kernel(self, op: CallOp, callee: FuncOp, sources: list) -> list[int | None]:
        call = _kernel_call(callee, self.first_call + len(self.calls))
        self.calls.append(call)
        if not self.expand:
            node = self.node("kernel", (_short(call.caption()), _short(call.label)), sources,
                             call)
            return [node] * len(op.results)
        args = dict(zip(callee.body.block.args, sources))
        return self.block(callee.body.block, args, call)


def _width(graph: nx.DiGraph, node) -> float:
    """A node's box width in inches (its longest label line's), a dummy's if not in graph."""
    if node not in graph:
        return DUMMY_WIDTH
    return max(len(line) for line in graph.nodes[node]["lines"]) * CHAR_WIDTH + 0.12


def _groups(graph: nx.DiGraph) -> dict:
    """Each node's group: the kernel call of an op, else the node itself."""
    return {n: ("call", d["call"].index) if d["kind"] == "op" else n
            for n, d in graph.nodes(data=True)}


def _layers(graph: nx.DiGraph, group: dict) -> dict:
    """Each node's layer: a group (a kernel call's ops) takes a band of layers, its ops
    in their topological generations inside it, below every group it depends on (kernels
    are convex, so groups form a DAG); outputs all on the bottom layer."""
    members: dict = {}
    for n in graph:
        members.setdefault(group[n], []).append(n)
    local = {n: depth for nodes in members.values()
             for depth, generation in enumerate(nx.topological_generations(
                 graph.subgraph(nodes))) for n in generation}
    size = {g: 1 + max(local[n] for n in nodes) for g, nodes in members.items()}
    groups = nx.DiGraph()
    groups.add_nodes_from(members)
    groups.add_edges_from((group[u], group[v]) for u, v in graph.edges if group[u] != group[v])
    offset: dict = {}
    for g in nx.topological_sort(groups):
        offset[g] = max((offset[p] + size[p] for p in groups.predecessors(g)), default=0)
    layer = {n: offset[group[n]] + local[n] for n in graph}
    outputs = [n for n in graph if graph.nodes[n]["kind"] == "output"]
    bottom = max((layer[n] for n in graph if n not in outputs), default=-1) + 1
    layer.update((n, bottom) for n in outputs)
    return layer


def _with_dummies(graph: nx.DiGraph, layer: dict) -> tuple[nx.DiGraph, dict, dict]:
    """The layered graph: an edge spanning several layers runs through a dummy node on
    each layer between (Sugiyama), so it is routed around the nodes. Returns it, every
    node's layer and each original edge's route (its nodes, dummies included)."""
    layered = nx.DiGraph()
    layered.add_nodes_from(graph)
    layers, routes = dict(layer), {}
    for u, v in graph.edges:
        route = [u, *((u, v, i) for i in range(layer[u] + 1, layer[v])), v]
        layers.update((d, d[2]) for d in route[1:-1])
        nx.add_path(layered, route)
        routes[(u, v)] = route
    return layered, layers, routes


def _order(layered: nx.DiGraph, layers: dict, group: dict) -> list[list]:
    """Nodes per layer, ordered by barycentres of their neighbours (down and up sweeps)
    so few edges cross, then a group's nodes side by side; ties keep program order."""
    rows: list[list] = [[] for _ in range(max(layers.values(), default=-1) + 1)]
    for n in layered:  # program order: nodes were added as the ops come, then dummies
        rows[layers[n]].append(n)
    pos = {n: i for row in rows for i, n in enumerate(row)}
    for sweep in range(4):
        down = sweep % 2 == 0
        near = layered.predecessors if down else layered.successors
        for row in rows[1:] if down else rows[-2::-1]:
            row.sort(key=lambda n: fmean([pos[m] for m in near(n)] or [pos[n]]))
            first: dict = {}
            for i, n in enumerate(row):
                first.setdefault(group.get(n, n), i)
            row.sort(key=lambda n: first[group.get(n, n)])
            pos.update((n, i) for i, n in enumerate(row))
    return rows


def _spread(want: list[float], gaps: list[float]) -> list[float]:
    """Positions in order, each as near its wanted one as a simple placement gets while
    neighbours keep `gaps` apart: the mean of pushing left and pushing right (both keep
    the gaps, so their mean does)."""
    right, left = list(want), list(want)
    for i, gap in enumerate(gaps):
        right[i + 1] = max(right[i + 1], right[i] + gap)
    for i in range(len(gaps) - 1, -1, -1):
        left[i] = min(left[i], left[i + 1] - gaps[i])
    return [(a + b) / 2 for a, b in zip(left, right)]


def _layout(graph: nx.DiGraph) -> tuple[dict, dict]:
    """Positions in inches (x, y; y down from 0) of every node and dummy, and each edge's
    route, layered top to bottom by topological generation."""
    group = _groups(graph)
    layered, layers, routes = _with_dummies(graph, _layers(graph, group))
    rows = _order(layered, layers, group)
    width = {n: _width(graph, n) for n in layered}
    group.update((n, n) for n in layered if n not in group)  # a dummy is a group alone
    gaps = [[(width[a] + width[b]) / 2 + NODE_GAP + 3 * BOX_PAD * (group[a] != group[b])
             for a, b in zip(row, row[1:])] for row in rows]  # kernel boxes further apart
    x: dict = {}
    for row, gap in zip(rows, gaps):
        x.update(zip(row, _spread([0.0] * len(row), gap)))
    for sweep in range(5):
        down = sweep % 2 == 0
        near = layered.predecessors if down else layered.successors
        for row, gap in zip(rows, gaps) if down else zip(rows[::-1], gaps[::-1]):
            want = [fmean([x[m] for m in near(n)] or [x[n]]) for n in row]
            x.update(zip(row, _spread(want, gap)))
    step = NODE_HEIGHT + LAYER_GAP
    return {n: (x[n], -layers[n] * step) for n in layered}, routes


@dataclass
class _Picture:
    """One function's graph, laid out; `dx` places it in the figure."""

    name: str
    graph: nx.DiGraph
    calls: list[KernelCall]
    pos: dict
    routes: dict
    boundary: list
    """The edges between nodes of different backends."""
    dx: float = 0.0

    def extent(self) -> tuple[float, float, float]:
        """Left and right x and lowest y of the drawing (y runs down from 0)."""
        half = {n: _width(self.graph, n) / 2 + BOX_PAD for n in self.graph}
        left = min((self.pos[n][0] - half[n] for n in self.graph), default=0.0)
        right = max((self.pos[n][0] + half[n] for n in self.graph), default=0.0)
        bottom = min((y for _, y in self.pos.values()), default=0.0) - NODE_HEIGHT / 2
        return left, right, bottom - BOX_PAD


def _picture(name: str, functions: dict[str, FuncOp], expand: bool, first_call: int):
    builder = _Builder(functions, expand, first_call)
    builder.function(functions[name])
    graph = builder.graph
    pos, routes = _layout(graph)
    boundary = [(u, v) for u, v in graph.edges
                if None not in (graph.nodes[u]["backend"], graph.nodes[v]["backend"])
                and graph.nodes[u]["backend"] != graph.nodes[v]["backend"]]
    return _Picture(name, graph, builder.calls, pos, routes, boundary)


def partitioned_functions(module: ModuleOp) -> list[FuncOp]:
    """The functions a picture draws: neither kernels nor alternative plans."""
    funcs = [op for op in module.ops if isinstance(op, FuncOp)]
    alternative = {ref.string_value() for f in funcs
                   for ref in f.attributes.get("collage.alternatives", ArrayAttr([])).data}
    return [f for f in funcs
            if "collage.kernel" not in f.attributes and f.sym_name.data not in alternative]


def _pictures(module: ModuleOp, expand: bool, function: str | None) -> list[_Picture]:
    """The pictures of the function named (all partitioned ones when None), side by side."""
    names = [f.sym_name.data for f in partitioned_functions(module)]
    if function is not None:
        if function.removeprefix("@") not in names:
            listed = ", ".join(f"@{n}" for n in names) or "none"
            raise CollageError(f"no partitioned function {function!r} to draw "
                               f"(partitioned: {listed})")
        names = [function.removeprefix("@")]
    if not names:
        raise CollageError("the module has no partitioned function to draw")
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp)}
    pictures, calls, right = [], 0, 0.0
    for name in names:
        picture = _picture(name, functions, expand, calls)
        calls += len(picture.calls)
        left, width_right, _ = picture.extent()
        picture.dx = right - left
        right += width_right - left + MARGIN
        pictures.append(picture)
    return pictures


def _draw_edges(ax, picture: _Picture, first: int) -> int:
    """The edges, a boundary crossing red and dashed; ids `edge-N` and `boundary-N`."""
    graph, pos, dx = picture.graph, picture.pos, picture.dx
    boundary = set(picture.boundary)
    for i, (u, v) in enumerate(graph.edges, first):
        route = picture.routes[(u, v)]
        points = [(pos[u][0] + dx, pos[u][1] - NODE_HEIGHT / 2),
                  *((pos[d][0] + dx, pos[d][1]) for d in route[1:-1]),
                  (pos[v][0] + dx, pos[v][1] + NODE_HEIGHT / 2)]
        crossing = (u, v) in boundary
        arrow = FancyArrowPatch(path=MplPath(points), arrowstyle="-|>", mutation_scale=5,
                                color=BOUNDARY_COLOR if crossing else EDGE_COLOR,
                                linewidth=1.4 if crossing else 0.6,
                                linestyle="--" if crossing else "-", zorder=1)
        arrow.set_gid(f"{'boundary' if crossing else 'edge'}-{i}")
        ax.add_patch(arrow)
    return first + graph.number_of_edges()


def _draw_nodes(ax, picture: _Picture, counts: Counter) -> None:
    """Each node a rounded box with id `<kind>-N` (a kernel call's is `kernel-I`, I its
    index among the kernel calls drawn, in program order), its label on top."""
    for node, data in picture.graph.nodes(data=True):
        x, y = picture.pos[node][0] + picture.dx, picture.pos[node][1]
        w = _width(picture.graph, node)
        kind = data["kind"]
        fill = IO_COLOR if kind in ("input", "output") else backend_color(data["backend"])
        box = FancyBboxPatch((x - w / 2, y - NODE_HEIGHT / 2), w, NODE_HEIGHT,
                             boxstyle="round,pad=0,rounding_size=0.04", facecolor=fill,
                             edgecolor="#333333", linewidth=0.5, zorder=3)
        index = data["call"].index if kind == "kernel" else counts[kind]
        counts[kind] += 1
        box.set_gid(f"{kind}-{index}")
        ax.add_patch(box)
        ax.text(x, y, "\n".join(data["lines"]), ha="center", va="center", fontsize=FONT,
                family="monospace", zorder=4)


def _draw_boxes(ax, picture: _Picture) -> None:
    """Expanded: a box per kernel call behind its ops, captioned above its top left."""
    for call in picture.calls:
        nodes = [n for n, d in picture.graph.nodes(data=True)
                 if d["kind"] == "op" and d["call"] is call]
        if not nodes:
            continue
        left = min(picture.pos[n][0] - _width(picture.graph, n) / 2 for n in nodes)
        right = max(picture.pos[n][0] + _width(picture.graph, n) / 2 for n in nodes)
        top = max(picture.pos[n][1] for n in nodes) + NODE_HEIGHT / 2 + BOX_PAD
        bottom = min(picture.pos[n][1] for n in nodes) - NODE_HEIGHT / 2 - BOX_PAD
        left += picture.dx - BOX_PAD
        box = Rectangle((left, bottom), right + picture.dx + BOX_PAD - left, top - bottom,
                        facecolor=to_rgba(backend_color(call.backend), 0.25),
                        edgecolor=backend_color(call.backend), linewidth=1.2, zorder=2)
        box.set_gid(f"kernel-{call.index}")
        ax.add_patch(box)
        fits = int((right + picture.dx + BOX_PAD - left) / (CHAR_WIDTH * (FONT - 1) / FONT))
        ax.text(left, top + 0.02, _short(f"{call.caption()} {call.label}", fits), ha="left",
                va="bottom", fontsize=FONT - 1, family="monospace", zorder=4)


def _title(pictures: list[_Picture]) -> str:
    """`@main: 31 kernel calls (onnxruntime 17, tvm 14), 28 boundary edges, kernel time
    1.405ms` (the sum of the kernels' estimated costs, when every one has one)."""
    calls = [c for p in pictures for c in p.calls]
    per = Counter(c.backend for c in calls)
    crossings = sum(len(p.boundary) for p in pictures)
    costs = [c.cost for c in calls if c.cost is not None]
    total = f", kernel time {Cost(sum(costs))}" if costs and len(costs) == len(calls) else ""
    split = ", ".join(f"{b} {n}" for b, n in per.most_common())
    return (f"{', '.join('@' + p.name for p in pictures)}: {len(calls)} kernel call"
            f"{'s' * (len(calls) != 1)}{f' ({split})' if split else ''}, {crossings} "
            f"boundary edge{'s' * (crossings != 1)}{total}")


def _legend_handles(pictures: list[_Picture]) -> list:
    per = Counter(c.backend for p in pictures for c in p.calls)
    handles: list = [Patch(facecolor=backend_color(b), edgecolor="#333333",
                           label=f"{b} ({n} kernel call{'s' * (n != 1)})")
                     for b, n in sorted(per.items())]
    if any(d["kind"] == "host" for p in pictures for _, d in p.graph.nodes(data=True)):
        handles.append(Patch(facecolor=HOST_COLOR, edgecolor="#333333", label="host"))
    handles.append(Patch(facecolor=IO_COLOR, edgecolor="#333333", label="input / output"))
    handles.append(Line2D([], [], color=BOUNDARY_COLOR, linestyle="--", linewidth=1.4,
                          label="boundary edge"))
    return handles


def _figure(module: ModuleOp, expand: bool, function: str | None) -> Figure:
    """The whole picture: a header (title, legend), then each function's graph, in a
    figure whose size follows the graph (one data unit is one inch)."""
    pictures = _pictures(module, expand, function)
    title, handles = _title(pictures), _legend_handles(pictures)
    extents = [p.extent() for p in pictures]
    width = max(extents[-1][1] + pictures[-1].dx, len(title) * 0.07, 3.4) + 2 * MARGIN
    columns = max(1, min(len(handles), int((width - 2 * MARGIN) / 1.9)))
    header = 0.35 + 0.17 * -(-len(handles) // columns) + (0.2 if len(pictures) > 1 else 0)
    bottom = min(e[2] for e in extents) - MARGIN
    height = header + NODE_HEIGHT / 2 + BOX_PAD - bottom
    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-MARGIN, width - MARGIN)
    ax.set_ylim(bottom, bottom + height)
    ax.set_axis_off()
    top = bottom + height
    ax.text(0, top - 0.1, title, ha="left", va="top", fontsize=8, weight="bold")
    fig.legend(handles=handles, loc="upper left", ncol=columns, fontsize=FONT, frameon=False,
               bbox_to_anchor=(0.05 / width, 1 - 0.28 / height))
    counts, edges = Counter(), 0
    for picture in pictures:
        if len(pictures) > 1:
            left = picture.extent()[0] + picture.dx
            ax.text(left, NODE_HEIGHT / 2 + BOX_PAD + 0.2, f"@{picture.name}", ha="left",
                    va="bottom", fontsize=7, weight="bold")
        if expand:
            _draw_boxes(ax, picture)
        edges = _draw_edges(ax, picture, edges)
        _draw_nodes(ax, picture, counts)
    return fig


def _render(fig: Figure, fmt: str) -> bytes:
    """The figure as `fmt` bytes, reproducibly (no dates; SVG text kept as text)."""
    buffer = io.BytesIO()
    metadata = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(fmt)
    dpi = min(150.0, MAX_PIXELS / max(fig.get_size_inches()))
    rc = {"svg.fonttype": "none", "svg.hashsalt": "collage-xdsl", "text.hinting": "none"}
    with matplotlib.rc_context(rc):  # unhinted: a label is as wide at any dpi
        fig.savefig(buffer, format=fmt, dpi=dpi, metadata=metadata)
    return buffer.getvalue()


def partition_svg(module: ModuleOp, *, expand: bool = False,
                  function: str | None = None) -> str:
    """The picture of `module`'s partitioned functions (or `function` alone) as SVG text,
    for embedding in HTML."""
    return _render(_figure(module, expand, function), "svg").decode()


def draw_partition(module: ModuleOp, path: str | Path, *, expand: bool = False,
                   function: str | None = None) -> None:
    """Writes the picture of `module`'s partitioned functions (or `function` alone) to
    `path`, as SVG, PNG or PDF by its suffix."""
    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise CollageError(f"{path}: unknown picture format {path.suffix or '(no suffix)'!r} "
                           "(.svg, .png or .pdf)")
    data = _render(_figure(module, expand, function), fmt)
    try:
        path.write_bytes(data)
    except OSError as e:
        raise CollageError(f"{path}: cannot write the picture: {e.strerror or e}") from None
