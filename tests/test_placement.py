"""Placement constraints (`collage_xdsl.core.placement`): honoured by candidate generation,
the search, MaxCoalesce and refinement, checked op by op on the light model zoo."""

from pathlib import Path

import onnx
import pytest
from ir_helpers import main_of

from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, count
from collage_xdsl.core.placement import ConstraintError, Constraints
from collage_xdsl.frontend.onnx_import import import_onnx
from collage_xdsl.planner.options import PartitionOptions
from collage_xdsl.planner.plan import partition

LIGHT_DIR = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
FAST = ["light_squeezenet", "light_bvlc_alexnet"]
SLOW = sorted({p.stem for p in LIGHT_DIR.glob("light_*.onnx")} - set(FAST))
MOCK = "tvm:1e-5,onnxruntime:2e-5,openvino:1.5e-5"
BACKENDS = ("tvm", "onnxruntime", "openvino")


def placed_ops(module, options) -> list[tuple[str, str, str, int]]:
    """(node name, op kind, backend, kernel size) of every kernel op of the plan."""
    plans = partition(module, options)
    found = []
    for plan in plans:
        for kernel in plan.kernels:
            graph = kernel.sub_graph.graph
            ops = kernel.inside & graph.kernel_nodes
            for i in bits(ops):
                op = graph.nodes[i].op
                hint = op.results[0].name_hint or ""
                found.append((hint, op.name.removeprefix("collage."), kernel.backend, count(ops)))
    return found


def check_model(name: str) -> None:
    module = import_onnx(LIGHT_DIR / f"{name}.onnx")
    free = placed_ops(module.clone(), PartitionOptions(backends=BACKENDS, mock_costs=MOCK))
    assert any(kind == "conv2d" and b != "onnxruntime" for _, kind, b, _ in free), \
        "the free plan already puts every conv on onnxruntime: the pin would prove nothing"
    options = PartitionOptions(backends=BACKENDS, mock_costs=MOCK, pin="op:conv2d=onnxruntime",
                               forbid="op:relu=tvm;op:max_pool2d=openvino", min_kernel_ops=2,
                               refine_budget=5, refine_alternatives=1)
    placed = placed_ops(module, options)
    assert placed and len(placed) == len(free)
    for node, kind, backend, size in placed:
        where = f"{name}: %{node} ({kind}) on {backend}"
        if kind == "conv2d":
            assert backend == "onnxruntime", where
        if kind == "relu":
            assert backend != "tvm", where
        if kind == "max_pool2d":
            assert backend != "openvino", where
        if backend != "tvm":
            assert size >= 2, f"{where}: a BYOC kernel of {size} op(s)"


@pytest.mark.parametrize("name", FAST)
def test_constraints_are_kept_op_by_op(name):
    check_model(name)


@pytest.mark.full
@pytest.mark.parametrize("name", SLOW)
def test_constraints_are_kept_op_by_op_on_every_light_model(name):
    check_model(name)


def test_a_node_name_glob_pins_the_ops_the_onnx_importer_named(example_module):
    module = example_module("mnist_cnn")
    placed = placed_ops(module.clone(), PartitionOptions(
        backends=BACKENDS, mock_costs=MOCK, pin="conv.*=openvino;relu.5=onnxruntime"))
    by_node = {node: backend for node, _, backend, _ in placed}
    assert by_node["conv.2"] == by_node["conv.8"] == "openvino"
    assert by_node["relu.5"] == "onnxruntime"


def test_unconstrained_options_allow_every_supported_node(example_module):
    graph = DataflowGraph(main_of(example_module("mlp")))
    specs = PartitionOptions(backends=BACKENDS).specs()
    allowed = Constraints().allowed(graph, specs)
    assert allowed == {name: graph.kernel_nodes for name in BACKENDS}


def test_no_fallback_lists_every_op_no_byoc_backend_accepts(example_module):
    module = example_module("mlp")
    options = PartitionOptions(backends=("tvm", "test"), backend_options="test: ops=relu",
                               mock_costs="tvm:1,test:1", no_fallback=True)
    with pytest.raises(ConstraintError, match=r"no-fallback: 6 op\(s\) no enabled BYOC "
                                              r"backend accepts: op %gemm.3 \(matmul\)"):
        partition(module.clone(), options)


@pytest.mark.parametrize("kwargs, message", [
    (dict(pin="x=tvm,onnxruntime"), "pin: 'x' names 2 backends; an op is pinned to one"),
    (dict(forbid="=tvm"), "forbid: expected SELECTOR=BACKEND"),
    (dict(min_kernel_ops=-1), "min-kernel-ops and min-kernel-seconds must be >= 0"),
])
def test_malformed_constraints_are_one_line(kwargs, message):
    with pytest.raises(ConstraintError, match=message):
        Constraints.parse(**kwargs)
