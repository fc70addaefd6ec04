"""The picture of a partition (`collage_xdsl.planner.picture`): ResNet-50 and the transformer
encoder partitioned with mock costs, drawn collapsed and expanded; the SVG is checked
against the module (a node per kernel call or per op, filled with its backend's colour, the
crossings between backends), the layout for overlaps, the writer for its errors."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import networkx as nx
import onnx
import pytest
from collage_xdsl.dialects.collage import CompositeOp, ConstantOp, YieldOp
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp

from collage_xdsl.core.outline import kernel_calls
from collage_xdsl.errors import CollageError
from collage_xdsl.frontend.onnx_import import import_onnx
from collage_xdsl.planner import picture
from collage_xdsl.planner.options import PartitionOptions
from collage_xdsl.planner.picture import (
    NODE_GAP,
    backend_color,
    draw_partition,
    partition_svg,
)
from collage_xdsl.planner.pipeline import partition_module

RESNET = Path(onnx.__file__).parent / "backend/test/data/light/light_resnet50.onnx"
MOCK = PartitionOptions(backends=("tvm", "onnxruntime", "openvino"), estimator="mock",
                        mock_costs="tvm:1e-5,onnxruntime:1.1e-5,openvino:1.2e-5",
                        tvm_max_regions=False, byoc_max_regions=False)
"""Per-op mock costs close together and no maximal regions: TVM's fused kernels and ONNX
Runtime's depth-bounded regions take turns (ResNet-50: 14 and 17 kernel calls)."""


@pytest.fixture(scope="module", params=["resnet50", "transformer_encoder"])
def partitioned(request, example_module) -> ModuleOp:
    """The model partitioned over two backends or more and outlined."""
    module = (import_onnx(onnx.load(RESNET)) if request.param == "resnet50"
              else example_module(request.param))
    outlined = partition_module(module, MOCK).module
    assert len({f.attributes["collage.backend"] for f in kernel_calls(outlined)}) >= 2
    return outlined


def ids(svg: str) -> dict[str, ET.Element]:
    """The SVG's elements by id."""
    root = ET.fromstring(svg)
    return {e.get("id"): e for e in root.iter() if e.get("id")}


def fill(group: ET.Element) -> str:
    """The fill of a node's box: its group's first path."""
    path = next(group.iter("{http://www.w3.org/2000/svg}path"))
    return re.search(r"fill: (#[0-9a-f]{6})", path.get("style", "")).group(1)


def numbered(found: dict[str, ET.Element], prefix: str) -> dict[int, ET.Element]:
    return {int(k.removeprefix(prefix)): e for k, e in found.items() if k.startswith(prefix)}


def backend(func: FuncOp) -> str:
    return func.attributes["collage.backend"].data


def leaf_ops(func: FuncOp) -> int:
    return sum(1 for op in func.body.walk()
               if not isinstance(op, (ConstantOp, ReturnOp, YieldOp, CompositeOp)))


def crossings(module: ModuleOp) -> int:
    """Pairs (producer call, consumer call) of kernels of different backends that a value
    flows between, in @main."""
    funcs = {f.sym_name.data: f for f in module.ops if isinstance(f, FuncOp)}
    main = funcs["main"]

    def backend_of(op) -> str | None:
        callee = funcs[op.callee.string_value()] if isinstance(op, CallOp) else None
        return backend(callee) if callee and "collage.kernel" in callee.attributes else None

    pairs = {(id(v.owner), id(op)) for op in main.body.block.ops for v in op.operands
             if backend_of(op) and backend_of(v.owner) and backend_of(op) != backend_of(v.owner)}
    return len(pairs)


def test_collapsed_one_node_per_kernel_call_in_its_backends_colour(partitioned):
    found = ids(partition_svg(partitioned))
    nodes = numbered(found, "kernel-")
    calls = kernel_calls(partitioned)
    assert sorted(nodes) == list(range(len(calls)))
    assert [fill(nodes[i]) for i in range(len(calls))] == [backend_color(backend(f))
                                                           for f in calls]
    assert not numbered(found, "op-")


def test_boundary_edges_are_the_crossings_and_counted_in_the_title(partitioned):
    svg = partition_svg(partitioned)
    boundary = numbered(ids(svg), "boundary-")
    assert len(boundary) == crossings(partitioned) > 0
    assert f"{len(boundary)} boundary edges" in svg
    assert all("stroke: #d62728" in next(iter(e)).get("style") for e in boundary.values())


def test_inputs_and_outputs_are_drawn(partitioned):
    found = ids(partition_svg(partitioned))
    main = next(f for f in partitioned.ops if isinstance(f, FuncOp))
    assert len(numbered(found, "input-")) == len(main.body.block.args)
    assert len(numbered(found, "output-")) == len(main.function_type.outputs.data)
    assert all(fill(e) == "#ffffff" for e in numbered(found, "output-").values())


def test_expanded_one_node_per_op_boxed_per_kernel_call(partitioned):
    found = ids(partition_svg(partitioned, expand=True))
    calls = kernel_calls(partitioned)
    ops = numbered(found, "op-")
    assert len(ops) == sum(leaf_ops(f) for f in calls)
    expected = Counter()
    for f in calls:
        expected[backend_color(backend(f))] += leaf_ops(f)
    assert Counter(fill(e) for e in ops.values()) == expected
    assert sorted(numbered(found, "kernel-")) == list(range(len(calls)))
    # a model is one connected graph; a crossing between kernels is one between ops too
    edges = {**numbered(found, "edge-"), **numbered(found, "boundary-")}
    nodes = len(ops) + len(numbered(found, "input-")) + len(numbered(found, "output-"))
    assert len(edges) >= nodes - 1
    assert len(numbered(found, "boundary-")) >= crossings(partitioned)


@pytest.mark.parametrize("expand", [False, True])
def test_layout_keeps_nodes_apart_and_edges_pointing_down(partitioned, expand):
    for pic in picture._pictures(partitioned, expand, None):
        rows: dict[float, list] = {}
        for n in pic.graph:
            rows.setdefault(pic.pos[n][1], []).append(n)
        for row in rows.values():
            row.sort(key=lambda n: pic.pos[n][0])
            for a, b in zip(row, row[1:]):
                gap = pic.pos[b][0] - pic.pos[a][0]
                need = (picture._width(pic.graph, a) + picture._width(pic.graph, b)) / 2
                assert gap >= need + NODE_GAP - 1e-9, (pic.graph.nodes[a], pic.graph.nodes[b])
        assert all(pic.pos[u][1] > pic.pos[v][1] for u, v in pic.graph.edges)
        assert nx.is_weakly_connected(pic.graph)


def test_a_module_before_partitioning_is_all_host(example_module):
    module = example_module("transformer_encoder")
    found = ids(partition_svg(module))
    host = numbered(found, "host-")
    main = next(f for f in module.ops if isinstance(f, FuncOp))
    assert len(host) == sum(1 for op in main.body.block.ops
                            if not isinstance(op, (ConstantOp, ReturnOp)))
    assert {fill(e) for e in host.values()} == {backend_color(None)}
    assert not numbered(found, "kernel-")


def with_copy(module: ModuleOp, name: str, alternative: bool) -> ModuleOp:
    """`module` with a copy of @main named `name`, an alternative plan of @main or not."""
    module = module.clone()
    main = next(f for f in module.ops if isinstance(f, FuncOp))
    copy = main.clone()
    copy.sym_name = StringAttr(name)
    copy.attributes.pop("collage.alternatives", None)
    module.body.block.add_op(copy)
    if alternative:
        main.attributes["collage.alternatives"] = ArrayAttr([SymbolRefAttr(name)])
    return module


def test_every_partitioned_function_is_drawn_but_not_alternatives(partitioned):
    calls = len(kernel_calls(partitioned))
    two = with_copy(partitioned, "second", alternative=False)
    svg = partition_svg(two)
    assert len(numbered(ids(svg), "kernel-")) == 2 * calls
    assert "@main, @second" in svg
    assert len(numbered(ids(partition_svg(two, function="@second")), "kernel-")) == calls
    alternative = with_copy(partitioned, "plan_1", alternative=True)
    assert len(numbered(ids(partition_svg(alternative)), "kernel-")) == calls
    with pytest.raises(CollageError, match=r"'plan_1' .*partitioned: @main\)"):
        partition_svg(alternative, function="plan_1")


def test_draw_partition_writes_each_format(partitioned, tmp_path):
    for suffix, magic in ((".svg", b"<?xml"), (".png", b"\x89PNG"), (".pdf", b"%PDF")):
        path = tmp_path / f"partition{suffix.upper() if suffix == '.png' else suffix}"
        draw_partition(partitioned, path, expand=suffix == ".pdf")
        assert path.read_bytes().startswith(magic)


def test_backend_colours():
    builtin = [backend_color(b) for b in ("tvm", "onnxruntime", "openvino", "test", None)]
    assert len(set(builtin)) == 5
    other = backend_color("iree")
    assert other == backend_color("iree") and other not in builtin
    assert re.fullmatch(r"#[0-9a-f]{6}", other)


def test_unknown_suffix_and_unwritable_path_are_one_line_errors(partitioned, tmp_path,
                                                               monkeypatch):
    with pytest.raises(CollageError, match=r"unknown picture format '\.jpg'") as e:
        draw_partition(partitioned, tmp_path / "p.jpg")
    assert "\n" not in str(e.value)
    with pytest.raises(CollageError, match="cannot write the picture: No such file"):
        draw_partition(partitioned, tmp_path / "missing" / "p.svg")

    def denied(self, data):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "write_bytes", denied)
    with pytest.raises(CollageError, match=r"p\.svg: cannot write the picture: Permission "
                                           r"denied$"):
        draw_partition(partitioned, tmp_path / "p.svg")
