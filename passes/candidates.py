"""`collage-candidates`: print every candidate kernel (Collage Phases 1 and 2) that the
placement constraints offer (`pin`, `forbid`, `min-kernel-ops`); the IR is unchanged.

    collage-opt model.mlir -p 'collage-candidates{backends=tvm,onnxruntime tvm-max-depth=8}'

For every `func.func` with a body, a header and one line per candidate: backend, rule
path, the nodes inside by SSA name or `#index`, kind and composite label:

    // candidates @main: 7
    tvm conv2d+add [%c, %a] kind=out_ewise_fusable label=-
    host host.tuple [%t] kind=tuple label=-
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from collage_xdsl.core.candidates import generate_candidates
from collage_xdsl.core.graph import DataflowGraph
from collage_xdsl.planner.options import CandidateOptions


@dataclass(frozen=True)
class CollageCandidatesPass(CandidateOptions, ModulePass):
    """Prints the candidate kernels of every function for the enabled backends."""

    name = "collage-candidates"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        specs, constraints = self.specs(), self.constraints()
        for func in op.walk():
            if not isinstance(func, FuncOp) or func.is_declaration:
                continue
            graph = DataflowGraph(func)
            candidates = constraints.filter(graph, generate_candidates(graph, specs),
                                            constraints.allowed(graph, specs))
            print(f"// candidates @{func.sym_name.data}: {len(candidates)}")
            for candidate in candidates:
                print(candidate.describe(graph))
