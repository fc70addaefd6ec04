"""A default CPU schedule for the TIR functions TVM's Relax legalization produces.

`LoopNestSchedule` gives every block the output-stationary shape: outer spatial loops
fused and parallel, the reduction loops in the middle, one spatial loop innermost for
LLVM to vectorize. The reduction order is unchanged, so results are bit-identical to the
unscheduled code; no tuning is involved (`docs/measurement.md`, "Backends and their
threads": TVM's target and schedule).
"""
from __future__ import annotations

import tvm
from tvm import s_tir, tirx
from tvm.relax.backend.cpu_generic import pipeline as cpu_pipeline
from tvm.s_tir import dlight
from tvm.s_tir.dlight.analysis import normalize_prim_func


class LoopNestSchedule(dlight.ScheduleRule):
    """Parallel outer spatial loops, reductions in the middle, one spatial loop innermost."""

    def apply(self, func: tirx.PrimFunc, target: tvm.target.Target, tunable: bool):
        if not isinstance(func, tirx.PrimFunc):
            return None
        sch = s_tir.Schedule(func)
        blocks = normalize_prim_func(sch)
        if blocks is None or any("O" in b.dom_kind() for b in blocks):
            return None
        try:
            for block in reversed(blocks):
                self._schedule_block(sch, block)
        except s_tir.ScheduleError:
            return None
        return sch

    @staticmethod
    def _schedule_block(sch: s_tir.Schedule, block) -> None:
        kinds = block.dom_kind()
        loops = sch.get_loops(block.block_rv)
        spatial = [loop for loop, k in zip(loops, kinds) if k == "S"]
        reduction = [loop for loop, k in zip(loops, kinds) if k == "R"]
        if not spatial:
            return
        if reduction:
            sch.reorder(*spatial[:-1], *reduction, spatial[-1])
        outer = spatial[:-1]
        if outer:
            sch.parallel(sch.fuse(*outer) if len(outer) > 1 else outer[0])
        if reduction:
            sch.decompose_reduction(block.block_rv, reduction[0])


def cpu_pipeline_with_schedule(target: tvm.target.Target) -> tvm.transform.Pass:
    """`relax.get_default_pipeline` for an LLVM target, with `LoopNestSchedule` applied
    to the legalized and fused TIR functions."""

    @tvm.transform.module_pass(opt_level=0, name="CollageCpuPipeline")
    def pipeline(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        with target:
            return tvm.transform.Sequential(
                cpu_pipeline.library_dispatch_passes(target)
                + cpu_pipeline.legalize_passes(target)
                + [dlight.ApplyDefaultSchedule(LoopNestSchedule())]
                + cpu_pipeline.dataflow_lower_passes(target)
                + cpu_pipeline.finalize_passes(target)
            )(mod)

    return pipeline

