"""`collage-refine`: end-to-end refinement of a partitioned module (`collage_xdsl.refine.driver`).

    collage-opt m.mlir -p 'collage-partition{...},collage-refine{budget=auto},collage-outline'
    collage-opt m.mlir -p 'collage-partition{estimator=mock},collage-refine{budget=5
                           scorer=mock mock-costs="tvm:1,onnxruntime:2" mock-transfer=3}'

Runs after `collage-partition`, before `collage-outline`. Per function holding
`collage.kernel` regions: the plan is recovered from the regions (the inverse of
`collage_xdsl.core.regions.partition`: regions and their composites are inlined, giving the
function's `DataflowGraph` and one `Kernel` per region with its backend, label and cost),
then refined: seeds and mutations of the plan are compared with the incumbent by measured
whole-function latency (`scorer=measured`: outlined and run through the runtime in a
worker process, `collage_xdsl.refine.measured`, at least `rounds` interleaved rounds per
comparison and more while the ratio is less certain than half of `min-gain`,
`timeout` seconds per compile or timing request, every plan run on the function's
random arguments drawn with `seed`; an output that differs from the start plan's only by
rounding, as an ill-conditioned softmax does, agrees: `collage_xdsl.runtime.agreement`) or by
a latency model (`scorer=mock`: `mock-costs` per op as for the mock estimator,
`mock-transfer` seconds per dataflow edge between kernels of different backends). A
mutation replaces the incumbent when faster by more than `min-gain` (a seed, and a climb's
result against the best plan, when faster with confidence); `seed` orders the mutations;
`budget` is the wall seconds of the whole pass (0, the default: the pass does nothing) or
`auto`: each function's refinement gets a budget that grows with the time its
start plan takes to load (`collage_xdsl.refine.driver`: 30 s to 600 s). The kernels may take
what the candidate options (`backends`, `tvm-max-depth`, `byoc-max-depth`, `byoc-max-regions`,
`tvm-max-regions`, `test-*`) allow `collage-partition`'s coalescing; pass it the same ones.

`cost-db=PATH`, the database `collage-partition` filled, puts first the cuts it measured
to gain at least `min-gain` (`collage_xdsl.refine.cuts`: kernels on a backend slower than
their two halves cut after a node), also where no kernel of the start plan ends; it is
only read.

`alternatives=N` (default 0) also keeps the N measured plans closest to the result, each
within 15% of it (`collage_xdsl.refine.driver.TIE`), as functions `@<name>.alt1`, ... after
`@<name>`, listed in its `collage.alternatives` attribute; the runtime chooses between
them at run time by measured latency (`collage_xdsl.runtime.selector`), since which library is
faster can change with the machine's state after refinement decided:

    func.func @main(...) attributes {collage.alternatives = [@main.alt1]} { ...kernels... }
    func.func @main.alt1(...) { ...the alternative plan's kernels... }

With a budget, a module without kernel regions is an error (partition first, outline
after). A function whose plan did not change is left exactly as it was. A changed one is
partitioned again with the final plan, in `collage-partition`'s form (kernels the start
plan had keep their `cost`; new ones have none). Each function's outcome is one line on
stderr (start and final latency, best seed, variants tried); `report=PATH.json` writes
every trial.

Before (`backends=tvm,test test-ops=relu scorer=mock mock-costs="tvm:1,test:0.5"
mock-transfer=2`):

    %a = collage.kernel "test"(%x) {label = "relu"} ... { collage.relu ... }
    %b = collage.kernel "tvm"(%a) {label = "sigmoid"} ... { collage.sigmoid ... }
    %c = collage.kernel "test"(%b) {label = "relu"} ... { collage.relu ... }

After (no handover at all outweighs relu's cheaper kernels):

    %c = collage.kernel "tvm"(%x) {label = "relu_sigmoid"} ... { ... }
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from collage_xdsl.dialects.collage import CompositeOp, KernelOp, RegionOp
from collage_xdsl.passes.candidates import CandidateOptions
from collage_xdsl.passes.partition import CollagePartitionPass, cost_db_versions, evicts
from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import ConstantLike, SymbolTable

from collage_xdsl.core.candidates import PartitionSpec, generate_candidates
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.core.outline import outline_kernels
from collage_xdsl.core.regions import Kernel, partition
from collage_xdsl.core.subgraph import SubGraph
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.inputs import random_arguments
from collage_xdsl.measure.cost_db import CostDatabase
from collage_xdsl.measure.estimator import parse_mock_costs
from collage_xdsl.refine.cuts import cut_gains, database_cost_of
from collage_xdsl.refine.driver import (
    AUTO,
    LatencyScorer,
    ModelLatency,
    RefineOptions,
    Scorer,
    refine,
)
from collage_xdsl.refine.moves import MoveSpace, Plan
from collage_xdsl.runtime.agreement import SoftmaxRounding

_Region = tuple[str, list[Operation], list["_Region"]]
"""A region's label, its ops (constants aside) and its nested composites."""


def recover_kernels(func: FuncOp) -> tuple[DataflowGraph, list[Kernel]]:
    """Inline the `collage.kernel` regions of `func` (composites included) and return its
    dataflow graph with one kernel per region: the inverse of `partition`."""
    found: list[tuple[KernelOp, _Region]] = []
    for op in list(func.body.block.ops):
        if isinstance(op, KernelOp):
            found.append((op, _inline(op)))
    graph = DataflowGraph(func)

    def sub_graph(region: _Region) -> SubGraph:
        label, ops, nested = region
        inside = 0
        for op in ops:
            inside |= 1 << graph.node_of(op)
        return SubGraph(graph, inside, label, tuple(sub_graph(n) for n in nested))

    kernels = [Kernel(sub_graph(region), op.backend.data,
                      None if op.cost is None else op.cost.value.data)
               for op, region in found]
    return graph, kernels


def _inline(region_op: RegionOp) -> _Region:
    """Move the body of `region_op` before it, in its place; the op is erased."""
    block = region_op.body.block
    terminator = block.last_op
    assert terminator is not None
    values = list(terminator.operands)
    body = [op for op in block.ops if op is not terminator]
    Rewriter.inline_block(block, InsertPoint.before(region_op), list(region_op.inputs))
    for result, value in zip(region_op.results, values):
        result.replace_all_uses_with(value)
    Rewriter.erase_op(terminator)
    label = region_op.label.data if region_op.label is not None else ""  # type: ignore
    Rewriter.erase_op(region_op)
    ops: list[Operation] = []
    nested: list[_Region] = []
    for op in body:
        if isinstance(op, CompositeOp):
            inner = _inline(op)
            nested.append(inner)
            ops += inner[1]
        elif not op.has_trait(ConstantLike):
            ops.append(op)
    return label, ops, nested


def _has_kernels(func: FuncOp) -> bool:
    return any(isinstance(op, KernelOp) for op in func.body.block.ops)


@dataclass(frozen=True)
class CollageRefinePass(CandidateOptions):
    """Refine each partitioned function by measured (or modelled) whole-function latency."""

    name = "collage-refine"

    budget: float | int | str = 0.0
    """Seconds (`float | int`: the pipeline syntax reads `budget=30` as an int) or auto."""
    seed: int = 0
    min_gain: float | int = 0.03
    rounds: int = 15
    timeout: float | int = 120.0
    scorer: str = "measured"
    mock_costs: str = ""
    mock_transfer: float | int = 0.0
    report: str | None = None
    alternatives: int = 0
    cost_db: str | None = None
    """The partition pass's cost database: the cuts it measured to gain are tried first
    (`collage_xdsl.refine.cuts`); read only."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        options = RefineOptions(
            self.budget if isinstance(self.budget, str) else float(self.budget), self.seed,
            float(self.min_gain), self.alternatives)
        if self.scorer not in ("measured", "mock"):
            raise CollageError(f"collage-refine: unknown scorer {self.scorer!r} "
                               "(measured or mock)")
        if self.rounds < 1:
            raise CollageError(f"collage-refine: rounds must be at least 1, got {self.rounds}")
        if not self.timeout > 0:
            raise CollageError(f"collage-refine: timeout must be positive, got {self.timeout}")
        if not self.mock_transfer >= 0:
            raise CollageError(f"collage-refine: mock-transfer must be >= 0, got "
                               f"{self.mock_transfer}")
        mock_costs = parse_mock_costs(self.mock_costs)
        specs = self.specs()
        if self.scorer == "measured":
            from collage_xdsl.backends.kernel import BACKENDS

            missing = [s.name for s in specs if s.backend is not None and s.name not in BACKENDS]
            if missing:
                raise CollageError(
                    f"collage-refine: scorer=measured runs every kernel; backend "
                    f"{', '.join(map(repr, missing))} has no codegen hook (hooks exist for "
                    f"{', '.join(sorted(BACKENDS))}); use scorer=mock for toy backends")
        if options.budget_s == 0:
            return
        coalescing = CollagePartitionPass(
            **{f.name: getattr(self, f.name) for f in fields(CandidateOptions)})
        backends = [s.backend for s in specs if s.backend is not None]
        configs = {s.name: coalescing.coalesce_config(s) for s in specs if s.backend is not None}
        functions = [f for f in op.ops if isinstance(f, FuncOp) and not f.is_declaration
                     and _has_kernels(f)]
        if not functions:
            raise CollageError("collage-refine: no function holds collage.kernel regions; run "
                               "it after collage-partition and before collage-outline")
        if self.cost_db is not None and not Path(self.cost_db).is_file():
            raise CollageError(f"collage-refine: cost database {self.cost_db} does not "
                               "exist (collage-partition's cost-db fills it)")
        ends = None if options.budget_s == AUTO else time.monotonic() + float(options.budget_s)
        reports = []
        for func in functions:
            name = func.sym_name.data
            work = op.clone()
            work_func = SymbolTable.lookup_symbol(work, name)
            assert isinstance(work_func, FuncOp)
            graph, start = recover_kernels(work_func)
            if self.scorer == "mock":
                scorer: Scorer = LatencyScorer(ModelLatency(mock_costs, self.mock_transfer))
            else:
                from collage_xdsl.refine.measured import MeasuredScorer

                inputs = random_arguments(work_func, self.seed, int_high=2)
                scorer = MeasuredScorer(variant_builder(work, name, len(graph)), inputs, name,
                                        rounds=self.rounds, timeout_s=self.timeout,
                                        precision=max(options.min_gain / 2, 0.005),
                                        explain=SoftmaxRounding(work, name, inputs).note)
            gains = self.gains(work, graph, specs)
            budget = AUTO if ends is None else max(0.0, ends - time.monotonic())
            result = refine(MoveSpace(graph, backends, configs), start, scorer,
                            RefineOptions(budget, self.seed, options.min_gain,
                                          options.alternatives), gains=gains)
            print(result.summary(name), file=sys.stderr)
            reports.append({"function": name, **result.to_json()})
            costs = {(k.inside, k.backend): k.cost for k in start}
            alternatives = [
                _plan_function(work, name, len(graph), plan, costs, f"{name}.alt{i}")
                for i, (plan, _) in enumerate(result.alternatives, 1)]
            if result.changed:
                partition(graph, [Kernel(k.sub_graph, k.backend,
                                         costs.get((k.inside, k.backend), k.cost))
                                  for k in result.plan.kernels])
                work_func.detach()
                Rewriter.insert_op(work_func, InsertPoint.before(func))
                Rewriter.erase_op(func)
                func = work_func
            for alternative in reversed(alternatives):
                Rewriter.insert_op(alternative, InsertPoint.after(func))
            if alternatives:
                func.attributes["collage.alternatives"] = ArrayAttr(
                    [SymbolRefAttr(f.sym_name) for f in alternatives])
        if self.report is not None:
            try:
                Path(self.report).write_text(json.dumps({"functions": reports}, indent=2) + "\n")
            except OSError as e:
                raise CollageError(f"collage-refine: cannot write report {self.report}: "
                                   f"{e.strerror}") from None

    def gains(self, work: ModuleOp, graph: DataflowGraph, specs: Sequence[PartitionSpec]
              ) -> dict[tuple[int, str], float] | None:
        """What the `cost_db` database says each cut in `graph` (a function of `work`, its
        kernels inlined) gains (`cut_gains`, with the costs the partition pass kept there,
        under its versions); None without a database."""
        if self.cost_db is None:
            return None
        from collage_xdsl.measure.pool import MeasureSettings

        versions = cost_db_versions(specs, MeasureSettings(evict=evicts(work)))
        with CostDatabase(self.cost_db) as db:
            return cut_gains(graph, generate_candidates(graph, specs),
                             database_cost_of(db, versions))


def _partitioned_copy(work: ModuleOp, name: str, nodes: int, plan: Plan,
                      costs: dict | None = None) -> tuple[ModuleOp, FuncOp]:
    """A copy of `work` (whose `@name` has `nodes` dataflow nodes and no kernel regions)
    with `@name` partitioned by `plan`; a kernel in `costs` keeps that cost."""
    module = work.clone()
    func = SymbolTable.lookup_symbol(module, name)
    assert isinstance(func, FuncOp)
    graph = DataflowGraph(func)
    assert len(graph) == nodes, "a copy numbers its dataflow nodes the same way"
    costs = costs or {}
    partition(graph, [Kernel(_remap(k.sub_graph, graph), k.backend,
                             costs.get((k.inside, k.backend), k.cost)) for k in plan.kernels])
    return module, func


def _plan_function(work: ModuleOp, name: str, nodes: int, plan: Plan,
                   costs: dict, new_name: str) -> FuncOp:
    """`@name` partitioned by `plan` (`_partitioned_copy`), detached and named `new_name`."""
    _, func = _partitioned_copy(work, name, nodes, plan, costs)
    func.detach()
    func.sym_name = StringAttr(new_name)
    return func


def variant_builder(work: ModuleOp, name: str, nodes: int) -> Callable[[Plan], str]:
    """`build(plan)`: the text of a copy of `work` (whose `@name` has `nodes` dataflow nodes
    and no kernel regions) with `@name` partitioned by the plan and every kernel outlined:
    the variants the measured scorer runs."""

    def build(plan: Plan) -> str:
        module, _ = _partitioned_copy(work, name, nodes, plan)
        outline_kernels(module)
        return str(module)

    return build


def _remap(sub: SubGraph, graph: DataflowGraph) -> SubGraph:
    return SubGraph(graph, sub.inside, sub.label, tuple(_remap(n, graph) for n in sub.nested))
