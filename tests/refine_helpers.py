"""Plans and latency models shared by the refinement tests (pytest puts this directory on
sys.path): the five-op CHAIN on tvm and the test backend with per-op costs whose optimum
is known, MLP_CHAIN, kernels named by their ops, and the fused-%b-%c case."""

from __future__ import annotations

import itertools

from ir_helpers import main_of, parse

from collage_xdsl.backends import get_backend
from collage_xdsl.backends.test import make_test_backend
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.index_set import bits, count, of
from collage_xdsl.core.regions import Kernel
from collage_xdsl.core.subgraph import SubGraph, SubGraphConfig
from collage_xdsl.refine.moves import MoveSpace, make_plan

T = "tensor<2x3xf32>"

# sigmoid -> relu -> tanh -> relu -> sigmoid
CHAIN = f"""
func.func @main(%x: {T}) -> {T} {{
  %a = collage.sigmoid %x : {T}
  %b = collage.relu %a : {T}
  %c = collage.tanh %b : {T}
  %d = collage.relu %c : {T}
  %e = collage.sigmoid %d : {T}
  func.return %e : {T}
}}
"""


OP_COSTS = {"tvm": {"sigmoid": 1.0, "relu": 1.0, "tanh": 1.0},
            "test": {"sigmoid": 3.0, "relu": 0.2, "tanh": 0.2}}
TRANSFER, LAUNCH = 0.5, 0.3
CONFIGS = {"tvm": SubGraphConfig(max_exits=0, allow_taps=True, max_depth=8),
           "test": SubGraphConfig(max_exits=0, allow_taps=True, max_depth=0)}


def chain_space(test_ops=("sigmoid", "relu", "tanh")) -> MoveSpace:
    graph = DataflowGraph(main_of(parse(CHAIN)))
    return MoveSpace(graph, [get_backend("tvm"), make_test_backend(ops=test_ops)], CONFIGS)


def named(graph: DataflowGraph, *names: str) -> int:
    return of(n.index for n in graph.nodes
              if n.op is not None and n.op.results[0].name_hint in names)


def kernels(graph: DataflowGraph, *groups: tuple[str, str]) -> list[Kernel]:
    """`("ab", "tvm")`: the ops %a and %b in one tvm kernel."""
    return [Kernel(SubGraph(graph, named(graph, *names)), backend) for names, backend in groups]


def op_latency(plan) -> float:
    """Per-op cost by backend, a launch per kernel, a transfer per edge between backends."""
    total, backend_of = 0.0, {}
    for k in plan.kernels:
        graph = k.sub_graph.graph
        total += LAUNCH
        for i in bits(k.inside & graph.kernel_nodes):
            total += OP_COSTS[k.backend][graph.nodes[i].op.name.removeprefix("collage.")]
            backend_of[i] = k.backend
    for i, b in backend_of.items():
        total += TRANSFER * sum(backend_of.get(p, b) != b for p in graph.nodes[i].inputs)
    return total


def chain_optimum() -> float:
    """Every assignment of the five ops to a backend, same-backend neighbours fused."""
    graph = chain_space().graph
    best = float("inf")
    for assignment in itertools.product(("tvm", "test"), repeat=5):
        runs = [(names, b) for b, names in
                ((b, "".join(n for n, _ in group)) for b, group in
                 itertools.groupby(zip("abcde", assignment), key=lambda e: e[1]))]
        best = min(best, op_latency(make_plan(kernels(graph, *runs), "")))
    return best


BAD_START = (("a", "tvm"), ("b", "tvm"), ("c", "test"), ("d", "tvm"), ("e", "tvm"))
ALTERNATING = (("a", "tvm"), ("b", "test"), ("c", "tvm"), ("d", "test"), ("e", "tvm"))


MLP_CHAIN = f"""
func.func @main(%x: {T}, %w: tensor<3x3xf32>) -> {T} {{
  %a = collage.matmul %x, %w : ({T}, tensor<3x3xf32>) -> {T}
  %b = collage.relu %a : {T}
  %c = collage.matmul %b, %w : ({T}, tensor<3x3xf32>) -> {T}
  %d = collage.relu %c : {T}
  %e = collage.matmul %d, %w : ({T}, tensor<3x3xf32>) -> {T}
  func.return %e : {T}
}}
"""


def fused_bc_case(penalty: float, now: list[float] | None = None,
                  op_cost: dict[str, float] | None = None, fused_on: str = "tvm"):
    """The chain, one tvm kernel per op to start with, on the backends of `op_cost` (tvm
    alone by default); a kernel costs 2, an op `op_cost[backend]` (tvm 1), and %b fused
    with %c `penalty` more on `fused_on` (each new plan advancing `now` by 1 s)."""
    op_cost = op_cost or {"tvm": 1.0}
    graph = DataflowGraph(main_of(parse(CHAIN)))
    known = {"tvm": get_backend("tvm"), "test": make_test_backend(ops=("sigmoid", "relu",
                                                                      "tanh"))}
    space = MoveSpace(graph, [known[b] for b in op_cost], {b: CONFIGS[b] for b in op_cost})
    start = kernels(graph, *((name, "tvm") for name in "abcde"))
    bc = named(graph, "b", "c")

    def latency(plan) -> float:
        if now is not None:
            now[0] += 1.0
        return sum(2.0 + count(k.inside & graph.kernel_nodes) * op_cost[k.backend]
                   + penalty * (k.backend == fused_on and k.inside & bc == bc)
                   for k in plan.kernels)

    return graph, space, start, latency
