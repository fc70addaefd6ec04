"""Plans as files (`collage_xdsl.planner.plan_file`): saved, followed, checked."""

import json
from pathlib import Path

import onnx
import pytest

from collage_xdsl.core.index_set import bits
from collage_xdsl.frontend.onnx_import import import_onnx
from collage_xdsl.planner.options import PartitionOptions
from collage_xdsl.planner.pipeline import partition_module
from collage_xdsl.planner.plan_file import PlanFileError, read_plan

RESNET50 = Path(onnx.__file__).parent / "backend/test/data/light/light_resnet50.onnx"
MOCK = "tvm:1e-5,onnxruntime:2e-5,openvino:1.5e-5"
BACKENDS = ("tvm", "onnxruntime", "openvino")


def kernels_of(partitioned) -> list[tuple[int, str]]:
    return [(k.inside, k.backend) for p in partitioned.plans for k in p.kernels]


def test_the_saved_plan_of_resnet50_reloads_into_an_identical_partition(tmp_path):
    module = import_onnx(RESNET50)
    path = tmp_path / "plan.json"
    options = PartitionOptions(backends=BACKENDS, mock_costs=MOCK, refine_budget=3,
                               pin="op:max_pool2d=openvino;op:softmax=onnxruntime")
    saved = partition_module(module, PartitionOptions(**{**options.__dict__,
                                                         "save_plan": str(path)}))
    entries = read_plan(path)["functions"]["main"]
    assert len({e["kernel"] for e in entries}) == len(saved.plans[0].kernels) == 4
    assert {e["backend"] for e in entries} == {"tvm", "openvino", "onnxruntime"}
    followed = partition_module(module, PartitionOptions(backends=BACKENDS, mock_costs=MOCK,
                                                         plan_file=str(path)))
    assert kernels_of(followed) == kernels_of(saved)
    assert str(followed.module) == str(saved.module)


def test_an_edited_plan_moves_a_node_to_another_backend(tmp_path, example_module):
    module = example_module("mnist_cnn")
    path = tmp_path / "plan.json"
    partition_module(module, PartitionOptions(backends=BACKENDS, mock_costs="tvm:1",
                                              save_plan=str(path)))
    plan = json.loads(path.read_text())
    for e in plan["functions"]["main"]:
        if e["node"] in ("matmul.16", "add.18"):
            e["backend"], e["kernel"] = "openvino", 99
    path.write_text(json.dumps(plan))
    followed = partition_module(module, PartitionOptions(backends=BACKENDS, mock_costs="tvm:1",
                                                         plan_file=str(path)))
    graph = followed.plans[0].kernels[0].sub_graph.graph
    placed = {graph.nodes[i].op.results[0].name_hint: k.backend
              for k in followed.plans[0].kernels for i in bits(k.inside & graph.kernel_nodes)}
    assert placed["matmul.16"] == placed["add.18"] == "openvino"
    assert placed["conv.2"] == "tvm"


@pytest.mark.parametrize("text, message", [
    ("{", "not JSON"),
    ('{"format": "other"}', "not a collage plan"),
    ('{"format": "collage-plan", "version": 7}', "plan version 7, this collage reads version 1"),
    ('{"format": "collage-plan", "version": 1, "functions": {"main": [{"node": "a"}]}}',
     'entry {"node": "a"} needs "node", "op", "backend"'),
])
def test_a_malformed_plan_file_is_one_line(tmp_path, text, message):
    path = tmp_path / "plan.json"
    path.write_text(text)
    with pytest.raises(PlanFileError, match=message):
        read_plan(path)
