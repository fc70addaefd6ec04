"""The plan cache: a model's final plan (after refinement) kept in the cost database, so a
second compile of the same model re-times and refines nothing.

    key = PlanKey.of(module, options, specs)
    kept, why_not = key.lookup(db)          # {"plan": ..., "costs": ...} or None
    key.keep(db, plans)

A plan is kept under the model's structure and node names (`function_hash` and the SSA
names the plan file keys ops by), the options that change the plan (every partition option
but where files go and where and by how many workers kernels are measured), the host (the database's) and the
versions of the enabled backends; a plan kept under other versions or on another host does
not count, and the lookup says why. `replan` searches again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from xdsl.dialects.builtin import ModuleOp

from collage_xdsl.core.candidates import PartitionSpec
from collage_xdsl.core.regions import partitionable_functions
from collage_xdsl.ir.structure import function_hash
from collage_xdsl.measure.cost_db import CostDatabase
from collage_xdsl.planner.options import PartitionOptions
from collage_xdsl.planner.plan_file import plan_json

NOT_IN_KEY = ("cost_db", "plan_file", "save_plan", "replan", "measure_workers",
              "measure_timeout", "measure_on")
"""Options that do not change the plan."""


@dataclass(frozen=True)
class PlanKey:
    """What a kept plan is kept under (the host is the database's)."""

    model: str
    options: str
    versions: dict[str, str]

    @classmethod
    def of(cls, module: ModuleOp, options: PartitionOptions, specs: Sequence[PartitionSpec]
           ) -> PlanKey:
        funcs = partitionable_functions(module)
        names = hashlib.blake2b(digest_size=16)
        for func in funcs:
            for op in func.body.walk():
                names.update(f"{op.results[0].name_hint if op.results else ''};".encode())
        chosen = {k: v for k, v in asdict(options).items() if k not in NOT_IN_KEY}
        versions = {s.name: s.backend.version for s in specs if s.backend is not None}
        return cls(f"{function_hash(funcs, names=True)}-{names.hexdigest()}",
                   json.dumps(chosen, sort_keys=True), versions)

    def lookup(self, db: CostDatabase) -> tuple[dict | None, str | None]:
        """The kept plan, or None and why none counts."""
        return db.get_plan(self.model, self.options, self.versions)

    def keep(self, db: CostDatabase, plans: Sequence) -> None:
        """Keep the final `plans` (`FunctionPlan`s) with their kernels' costs."""
        db.put_plan(self.model, self.options, self.versions, {
            "plan": plan_json(plans, list(self.versions)),
            "costs": {p.function: [k.cost for k in p.kernels] for p in plans}})
