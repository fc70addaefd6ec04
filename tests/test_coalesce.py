"""MaxCoalesce (`collage_xdsl.core.coalesce`): touching kernels of one backend merge when the
merge is valid, and, costed, only when it is no dearer than its parts; never a cycle."""

from __future__ import annotations

import pytest
from ir_helpers import main_of, parse
from region_helpers import DIAMOND, RELU_SIGMOID_MUL, nodes

from collage_xdsl.core.coalesce import coalesce, coalesce_costed
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.regions import Kernel, form_regions
from collage_xdsl.core.subgraph import SubGraph, SubGraphConfig


def _valid(config: SubGraphConfig):
    return lambda sub, backend: sub.is_valid(config)


def test_coalesce_merges_touching_kernels_of_one_backend():
    g = DataflowGraph(main_of(parse(DIAMOND)))
    kernels = [Kernel(SubGraph(g, nodes(g, n)), "tvm", 1.0) for n in ("a", "r", "s", "e")]
    kernels.append(Kernel(SubGraph(g, nodes(g, "m")), "onnxruntime", 1.0))
    merged = coalesce(kernels, _valid(SubGraphConfig(max_exits=0, allow_taps=True)))
    assert sorted((k.backend, k.inside, k.cost) for k in merged) == sorted([
        ("tvm", nodes(g, "a", "r", "s", "e"), 4.0), ("onnxruntime", nodes(g, "m"), 1.0)])
    # a depth limit stops the merge early
    limited = coalesce(kernels, _valid(SubGraphConfig(max_exits=0, allow_taps=True,
                                                         max_depth=2)))
    assert all(k.sub_graph.depth <= 2 for k in limited) and len(limited) > 2


@pytest.mark.parametrize("merged_cost, launch, expect_merged", [
    (3.5, 0.0, True),             # cheaper as one kernel: kept, with its own cost
    (4.5, 0.0, False),            # dearer than its parts: the parts stay apart
    (4.5, 0.25, True),            # ... unless the launches it saves pay for it (4.75 < 5)
    (float("inf"), 0.0, False),   # Invalid as one kernel
    (None, 0.0, False),           # not known
])
def test_coalesce_costed_keeps_a_merge_only_when_it_is_no_dearer(merged_cost, launch,
                                                                 expect_merged):
    g = DataflowGraph(main_of(parse(DIAMOND)))
    kernels = [Kernel(SubGraph(g, nodes(g, n)), "tvm", 1.0) for n in ("a", "r", "s", "e")]
    kernels.append(Kernel(SubGraph(g, nodes(g, "m")), "onnxruntime", 1.0))
    asked = []

    def cost_of(merged):
        asked.extend(k.inside for k in merged)
        return [merged_cost for _ in merged]

    result = coalesce_costed(kernels, _valid(SubGraphConfig(max_exits=0, allow_taps=True)),
                             cost_of, lambda backend: launch)
    assert asked == [nodes(g, "a", "r", "s", "e")]  # only the merged kernel is costed
    got = sorted((k.backend, k.inside, k.cost) for k in result)
    if expect_merged:
        assert got == sorted([("tvm", nodes(g, "a", "r", "s", "e"), merged_cost),
                              ("onnxruntime", nodes(g, "m"), 1.0)])
    else:
        assert got == sorted((k.backend, k.inside, k.cost) for k in kernels)


@pytest.mark.parametrize("merged_cost", [3.5, 4.5])
def test_coalesce_costed_with_a_shared_constant_keeps_each_kernel_once(merged_cost):
    """The tvm kernels merge; the onnxruntime one shares only %c with them and is neither
    a part of the merge nor repeated when the merge is dearer than its parts."""
    g = DataflowGraph(main_of(parse(DIAMOND)))
    c = nodes(g, "c")
    kernels = [Kernel(SubGraph(g, nodes(g, "a") | c), "tvm", 1.0)]
    kernels += [Kernel(SubGraph(g, nodes(g, n)), "tvm", 1.0) for n in ("r", "s", "e")]
    kernels.append(Kernel(SubGraph(g, nodes(g, "m") | c), "onnxruntime", 1.0))
    result = coalesce_costed(kernels, _valid(SubGraphConfig(max_exits=0, allow_taps=True)),
                             lambda merged: [merged_cost for _ in merged], lambda backend: 0.0)
    got = sorted((k.backend, k.inside) for k in result)
    if merged_cost < 4:
        assert got == sorted([("tvm", nodes(g, "a", "r", "s", "e") | c),
                              ("onnxruntime", nodes(g, "m") | c)])
    else:
        assert got == sorted((k.backend, k.inside) for k in kernels)
    form_regions(g, result)


def test_coalesce_never_creates_a_cycle():
    # a and m on tvm with s on onnxruntime between them: {a, m} would leave and re-enter
    g = DataflowGraph(main_of(parse(RELU_SIGMOID_MUL)))
    kernels = [Kernel(SubGraph(g, nodes(g, "a")), "tvm"),
               Kernel(SubGraph(g, nodes(g, "s")), "onnxruntime"),
               Kernel(SubGraph(g, nodes(g, "m")), "tvm")]
    merged = coalesce(kernels, _valid(SubGraphConfig(max_exits=0, allow_taps=True)))
    assert sorted(k.inside for k in merged) == sorted(k.inside for k in kernels)
