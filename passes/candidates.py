"""`collage-candidates`: print every candidate kernel (Collage Phases 1 and 2); IR unchanged.

    collage-opt model.mlir -p 'collage-candidates{backends=tvm,onnxruntime tvm-max-depth=8}'

For every `func.func` with a body it prints a header and one line per candidate:

    // candidates @main: 7
    tvm conv2d+add [%c, %a] kind=out_ewise_fusable label=-
    onnxruntime onnxruntime.conv2d_bias [%w, %c, %b, %a] kind=out_ewise_fusable
        label=onnxruntime.conv2d_bias                                 (one line)
    host host.tuple [%t] kind=tuple label=-

(backend, rule path, the nodes inside by SSA name or `#index`, kind, composite label).
Options: `backends` (registered names), `tvm-max-depth` (native backends), `byoc-max-depth`,
`byoc-max-regions` (also offer each BYOC backend's maximal supported regions),
`tvm-max-regions` (the same for native backends that fuse: the kernels MaxCoalesce would
make of their fused candidates), and for the `test` backend `test-ops`, `test-fusion`
(none, tvm, arbitrary), `test-patterns` (chains, quoted:
`test-patterns="conv2d+add+relu"`). `generate_candidates` gives the same list in Python.
"""

from __future__ import annotations

from abc import ABC
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from collage_xdsl.backends import MAX_CANDIDATES_PER_NODE, gather_specs
from collage_xdsl.core.candidates import PartitionSpec, generate_candidates
from collage_xdsl.core.graph import DataflowGraph


@dataclass(frozen=True)
class CandidateOptions(ModulePass, ABC):
    """The options that choose the candidate kernels (Phase 1): enabled backends, depth
    limits, maximal regions, the per-node cap and the toy `test` backend's declarations.
    Shared by every pass that generates candidates."""

    backends: tuple[str, ...] = ("tvm", "onnxruntime", "openvino")
    tvm_max_depth: int = 8
    byoc_max_depth: int = 8
    byoc_max_regions: bool = True
    tvm_max_regions: bool = True
    max_candidates_per_node: int = MAX_CANDIDATES_PER_NODE
    test_ops: tuple[str, ...] = ()
    test_fusion: str = "arbitrary"
    test_patterns: tuple[str, ...] = ()

    def specs(self) -> list[PartitionSpec]:
        """The partition specs of the enabled backends (then the host's)."""
        return gather_specs(
            self.backends,
            native_max_depth=self.tvm_max_depth,
            byoc_max_depth=self.byoc_max_depth,
            byoc_max_regions=self.byoc_max_regions,
            native_max_regions=self.tvm_max_regions,
            max_per_node=self.max_candidates_per_node,
            options={"test": {"ops": self.test_ops, "fusion": self.test_fusion,
                              "patterns": self.test_patterns}},
        )


@dataclass(frozen=True)
class CollageCandidatesPass(CandidateOptions):
    """Prints the candidate kernels of every function for the enabled backends."""

    name = "collage-candidates"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        specs = self.specs()
        for func in op.walk():
            if not isinstance(func, FuncOp) or func.is_declaration:
                continue
            graph = DataflowGraph(func)
            candidates = generate_candidates(graph, specs)
            print(f"// candidates @{func.sym_name.data}: {len(candidates)}")
            for candidate in candidates:
                print(candidate.describe(graph))
