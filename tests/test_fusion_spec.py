"""Fusion-spec files (`collage_xdsl.backends.fusion_spec`): the built-in tvm and openvino
specs written as files give the same candidates; extend and replace; conditions, kinds,
exclusions, patterns and depth; one clear error per mistake; a partition that follows
the file."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from example_models import make_models
from graph_helpers import CONV, CONV_ARGS, names, parse_graph
from xdsl.dialects.func import FuncOp

from collage_xdsl.backends import available_backends, gather_specs, get_backend
from collage_xdsl.backends.base import Backend
from collage_xdsl.backends.fusion_spec import (
    FusionSpecError,
    apply_section,
    load_fusion_spec,
    parse_fusion_spec,
)
from collage_xdsl.core.candidates import generate_candidates
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.outline import kernel_calls
from collage_xdsl.core.rules import OpCallByKindPartitionRule
from collage_xdsl.errors import CollageError
from collage_xdsl.frontend import import_onnx
from collage_xdsl.planner.options import PartitionOptions
from collage_xdsl.planner.pipeline import partition_module

ROOT = Path(__file__).resolve().parent.parent
LIGHT = Path(onnx.__file__).parent / "backend/test/data/light"
BF16_RELU = """
  %r = collage.relu %x : tensor<2x4xbf16>
  func.return %r : tensor<2x4xbf16>"""
MIXED = """
  %h = collage.cast %x : tensor<2x4xf32> -> tensor<2x4xbf16>
  %g = collage.relu %h : tensor<2x4xbf16>
  %r0 = collage.cast %g : tensor<2x4xbf16> -> tensor<2x4xf32>
""" + "".join(f"  %r{i} = collage.sigmoid %r{i - 1} : tensor<2x4xf32>\n"
              for i in range(1, 11)) + """
  func.return %r10 : tensor<2x4xf32>"""
"""A bf16 island, then a chain of 10 ops: where float conditions and depths show."""


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "spec.toml"
    path.write_text(text)
    return str(path)


def lines(graph: DataflowGraph, specs) -> list[str]:
    return [c.describe(graph) for c in generate_candidates(graph, specs)]


def conv_lines(tmp_path: Path, spec: str, test_options: dict, **kw) -> list[str]:
    """The test backend's candidate lines over the conv block (`graph_helpers.CONV`)."""
    graph = parse_graph(CONV, CONV_ARGS)
    specs = gather_specs(["tvm", "test"], options={"test": test_options},
                         fusion_spec=write(tmp_path, spec), **kw)
    return [line for line in lines(graph, specs) if line.startswith("test ")]


@pytest.fixture(scope="module")
def graphs() -> dict[str, DataflowGraph]:
    """ResNet-50 of the light model zoo, the transformer encoder example and `MIXED`."""
    modules = {"resnet50": import_onnx(LIGHT / "light_resnet50.onnx"),
               "transformer_encoder": import_onnx(make_models.make_model("transformer_encoder"))}
    graphs = {name: DataflowGraph(next(op for op in m.ops if isinstance(op, FuncOp)))
              for name, m in modules.items()}
    return {**graphs, "mixed": parse_graph(MIXED)}


@pytest.mark.parametrize("backend", ["tvm", "openvino"])
@pytest.mark.parametrize("model", ["resnet50", "transformer_encoder", "mixed"])
def test_a_builtin_spec_written_as_a_file_gives_the_same_candidates(graphs, backend, model):
    path = str(ROOT / "docs" / "fusion_specs" / f"{backend}.toml")
    section = load_fusion_spec(path, available_backends())[backend]
    assert section.mode == "replace"
    graph = graphs[model]
    builtin = lines(graph, gather_specs(["openvino", "tvm"]))
    from_file = lines(graph, gather_specs(["openvino", "tvm"], fusion_spec=path))
    assert len(builtin) > 50 and from_file == builtin


def test_the_tvm_file_declares_exactly_the_builtin_backend():
    path = str(ROOT / "docs" / "fusion_specs" / "tvm.toml")
    tvm = get_backend("tvm")
    assert apply_section(tvm, load_fusion_spec(path, ["tvm"])["tvm"]) == tvm


def test_extend_adds_ops_and_patterns_to_the_declared_ones(tmp_path):
    found = conv_lines(tmp_path, '[test]\nops = ["conv2d"]\npatterns = { cr = "conv2d+add" }',
                       {"ops": ["relu"], "fusion": "none"})
    assert found == [
        "test test.cr [%c, %a] kind=out_ewise_fusable label=test.cr",
        "test conv2d [%c] kind=out_ewise_fusable label=-",
        "test relu [%r] kind=elemwise label=-",
    ]


def test_replace_keeps_only_what_the_file_says(tmp_path):
    found = conv_lines(tmp_path, '[test]\nmode = "replace"\nops = ["add"]\nfusion = "none"',
                       {"ops": ["conv2d", "add", "relu"], "fusion": "tvm",
                        "patterns": ["conv2d+add"]})
    assert found == ["test add [%a] kind=broadcast label=-"]


def test_replace_without_fusion_keeps_the_declared_style(tmp_path):
    found = conv_lines(tmp_path, '[test]\nmode = "replace"\nops = ["add", "relu"]',
                       {"ops": ["relu"], "fusion": "tvm"}, byoc_max_regions=False)
    assert "test add+relu [%a, %r] kind=broadcast label=-" in found


def test_kinds_select_ops_by_pattern_kind(tmp_path):
    found = conv_lines(tmp_path, '[test]\nmode = "replace"\nkinds = ["elemwise", "comm_reduce"]'
                       '\nfusion = "none"', {}, byoc_max_regions=False)
    assert found == ["test relu [%r] kind=elemwise label=-",
                     "test reduce_sum [%m] kind=comm_reduce label=-"]


def test_exclude_removes_ops_even_from_every_op(tmp_path):
    graph = parse_graph(CONV, CONV_ARGS)
    specs = gather_specs(["tvm"], fusion_spec=write(tmp_path, '[tvm]\nexclude = ["relu"]'))
    with pytest.raises(CollageError, match="no enabled backend supports collage.relu"):
        generate_candidates(graph, specs)
    assert get_backend("tvm").supported_ops is None
    assert "collage.relu" not in specs[0].backend.supported_ops


def test_an_attribute_condition_decides_support(tmp_path):
    spec = ('[test]\nmode = "replace"\nops = ["conv2d", "add"]\nfusion = "none"\n'
            '[test.conditions]\nconv2d = { attrs = { group = GROUP, strides = [1, 1] } }')
    assert conv_lines(tmp_path, spec.replace("GROUP", "1"), {})[0].startswith("test conv2d")
    assert conv_lines(tmp_path, spec.replace("GROUP", "2"), {}) == [
        "test add [%a] kind=broadcast label=-"]


@pytest.mark.parametrize("spec, supported", [
    ('[onnxruntime]\nops = ["relu"]', True),
    ('[onnxruntime]\nops = ["relu"]\nwhere = { f32 = true }', False),
    ('[onnxruntime]\nmode = "replace"\nops = ["relu"]', True),
    ('[onnxruntime]\nmode = "replace"\nops = "all"\nwhere = { f32 = true }', False),
    ('[onnxruntime]\nmode = "replace"\nops = "all"\nwhere = { floats = ["bf16"] }', True),
    ('[onnxruntime]\nmode = "replace"\nops = "all"\nwhere = { floats = ["f32", "f16"] }', False),
    ('[onnxruntime]\nmode = "replace"\nops = "all"\nwhere = { floats = ["bf16"], f32 = true }',
     False),
])
def test_extend_unites_predicates_and_f32_is_a_condition(tmp_path, spec, supported):
    graph = parse_graph(BF16_RELU, "%x: tensor<2x4xbf16>")
    backend = gather_specs(["onnxruntime"], fusion_spec=write(tmp_path, spec))[0].backend
    assert not get_backend("onnxruntime").supports(graph.nodes[1].op)
    assert backend.supports(graph.nodes[1].op) is supported


def test_a_file_pattern_replaces_the_declared_one_of_its_name(tmp_path):
    found = conv_lines(tmp_path, '[test]\npatterns = { conv2d_add = "add+relu" }',
                       {"ops": ["conv2d"], "fusion": "none", "patterns": ["conv2d+add"]})
    assert found[0] == "test test.conv2d_add [%a, %r] kind=broadcast label=test.conv2d_add"
    assert sum("label=test." in line for line in found) == 1


def test_the_files_max_depth_wins_over_the_options(tmp_path):
    graph = parse_graph(CONV, CONV_ARGS)
    spec = '[test]\nmode = "replace"\nkinds = ["elemwise", "broadcast"]\nmax_depth = 1'
    specs = gather_specs(["tvm", "test"], byoc_max_depth=8, byoc_max_regions=False,
                         fusion_spec=write(tmp_path, spec))
    found = [c for c in generate_candidates(graph, specs) if c.spec.name == "test"]
    assert sorted(names(graph, c.inside).pop() for c in found) == ["%a", "%r"]


def test_sections_of_backends_not_enabled_are_checked_but_unused(tmp_path):
    specs = gather_specs(["tvm"], fusion_spec=write(tmp_path, '[openvino]\nfusion = "none"'))
    assert specs[0].backend == get_backend("tvm")
    with pytest.raises(FusionSpecError, match=r"\[openvino\] fusion"):
        gather_specs(["tvm"], fusion_spec=write(tmp_path, '[openvino]\nfusion = "x"'))


def test_a_hand_written_rule_can_be_replaced_not_extended():
    backend = Backend("custom", rule=OpCallByKindPartitionRule("mine"))
    sections = parse_fusion_spec('[custom]\nops = ["relu"]', "f.toml", ["custom"])
    with pytest.raises(FusionSpecError, match=r"f.toml: \[custom\] mode: .*hand-written"):
        apply_section(backend, sections["custom"])
    sections = parse_fusion_spec('[custom]\nmode = "replace"\nops = ["relu"]', "f.toml",
                                 ["custom"])
    replaced = apply_section(backend, sections["custom"])
    assert replaced.rule is None and set(replaced.supported_ops) == {"collage.relu"}


ERRORS = [
    ('[tvm]\nfuse = "tvm"', r"\[tvm\] fuse: unknown key \(keys: mode, ops"),
    ('[tvm]\nmode = "merge"', r"\[tvm\] mode: unknown mode 'merge' \(extend \| replace\)"),
    ('[tvm]\nfusion = "greedy"', r"\[tvm\] fusion: unknown fusion 'greedy' \(none \| tvm"),
    ('[tvm]\nops = ["relu", "frobnicate"]', r"\[tvm\] ops: unknown op 'frobnicate' \(known:"),
    ('[tvm]\nops = "every"', r"\[tvm\] ops: expected a list of op names or \"all\""),
    ('[tvm]\nkinds = ["pointwise"]', r"\[tvm\] kinds: unknown kind 'pointwise' \(elemwise,"),
    ('[tvm]\nexclude = ["nope"]', r"\[tvm\] exclude: unknown op 'nope'"),
    ('[tvm]\npatterns = { p = "conv2d+frob" }', r"\[tvm\] patterns.p: unknown op 'frob'"),
    ('[tvm]\npatterns = { "a.b" = "relu" }', r"\[tvm\] patterns.a.b: a pattern name is"),
    ('[tvm]\nmax_depth = -1', r"\[tvm\] max_depth: expected an integer >= 0"),
    ('[tvm]\nops = ["relu"]\nwhere = { fp32 = true }', r"\[tvm\] where.fp32: unknown condition"),
    ('[tvm]\nops = ["relu"]\nwhere = { f32 = 1 }', r"\[tvm\] where.f32: expected true or false"),
    ('[tvm]\nwhere = { f32 = true }', r"\[tvm\] where: the section offers no op"),
    ('[tvm]\nops = ["relu"]\nwhere = { floats = ["f8"] }',
     r"\[tvm\] where.floats: expected a list of element types \(f16, bf16, f32, f64\)"),
    ('[tvm]\nops = ["relu"]\nwhere = { floats = [] }', r"\[tvm\] where.floats: expected a list"),
    ('[tvm]\nops = ["relu"]\nconditions = { add = {} }',
     r"\[tvm\] conditions.add: the section does not offer this op"),
    ('[tvm]\nmode = "replace"\nfusion = "none"', r"\[tvm\] mode: replace offers no op"),
    ('[nope]\nops = ["relu"]', r"\[nope\]: unknown backend 'nope' \(available: iree, onnxruntime"),
    ('fusion = "none"', r"spec.toml: fusion: expected a \[backend\] section"),
    ('[tvm\nops = 1', r"spec.toml: not valid TOML"),
]


@pytest.mark.parametrize("text, message", ERRORS)
def test_each_mistake_is_one_line_naming_file_section_and_key(tmp_path, text, message):
    with pytest.raises(FusionSpecError, match=message) as info:
        gather_specs(["tvm"], fusion_spec=write(tmp_path, text))
    assert str(info.value).startswith(f"fusion spec {tmp_path / 'spec.toml'}: ")
    assert "\n" not in str(info.value)


def test_a_missing_file_is_an_error_naming_it(tmp_path):
    with pytest.raises(FusionSpecError, match=r"fusion spec .*none.toml: cannot read it"):
        gather_specs(["tvm"], fusion_spec=str(tmp_path / "none.toml"))


def test_a_partition_follows_the_file(tmp_path, example_module):
    module = example_module("mlp")
    spec = write(tmp_path, '[tvm]\nfusion = "none"')
    plain = partition_module(module, PartitionOptions(backends=("tvm",)))
    single = partition_module(module, PartitionOptions(backends=("tvm",), fusion_spec=spec))
    assert max(len(kernel_ops(f)) for f in kernel_calls(plain.module)) > 1
    assert {len(kernel_ops(f)) for f in kernel_calls(single.module)} == {1}


def kernel_ops(func: FuncOp) -> list:
    """The collage ops of an outlined kernel function that are not constants."""
    return [op for op in func.body.walk() if op.name.startswith("collage.")
            and op.name not in ("collage.constant", "collage.composite")]
