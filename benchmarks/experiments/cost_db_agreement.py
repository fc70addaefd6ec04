"""How far apart are two cost databases filled the same way at different times?

    for db in a.sqlite b.sqlite; do
      for m in mnist_cnn mlp light_shufflenet; do
        collage explain W/models/$m.onnx --cost-db $db --refine-budget 0; done
    done
    python benchmarks/experiments/cost_db_agreement.py a.sqlite b.sqlite

For the kernels both measured: the median |log| of one kernel's cost in A over its cost
in B; per pair of backends, how much a sub-graph's cost ratio (what the search compares)
differs between A and B; and on how many sub-graphs the cheapest backend is the same.
The three models' 1402 kernels, two fills each on the 2-core VM of 2026-11-23:

| measurement | kernel A/B | ORT/OpenVINO ratio A/B | same cheapest backend |
|---|---:|---:|---:|
| each sub-graph alone, until 2 rounds agree (d830b28) | 0.214 | 0.141 | 91% |
| batches of 24, samples over 0.5 s | 0.166 | 0.093 | 95% |
| batches of 48, samples over 1 s (`MeasureSettings`) | 0.123 | 0.079 | 96% |
"""

from __future__ import annotations

import argparse
import sqlite3
from itertools import combinations
from pathlib import Path

import numpy as np


def costs(path: str) -> dict[tuple[str, str], float]:
    """(kernel key, backend) -> seconds, for every valid nonzero cost in the database."""
    if not Path(path).is_file():
        raise SystemExit(f"error: {path}: no such file")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT kernel, backend, cost FROM collage_costs WHERE cost > 0")
        return {(kernel, backend): cost for kernel, backend, cost in rows}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("a")
    p.add_argument("b")
    args = p.parse_args()
    a, b = costs(args.a), costs(args.b)
    both = sorted(a.keys() & b.keys())
    if not both:
        raise SystemExit("the two databases have no kernel in common")
    log_ratio = np.log([a[k] / b[k] for k in both])
    print(f"{len(both)} kernels in both: |log cost A / cost B| median "
          f"{np.median(np.abs(log_ratio)):.3f}; geomean A / B {np.exp(log_ratio.mean()):.3f}")
    backends: dict[str, set[str]] = {}
    for kernel, backend in both:
        backends.setdefault(kernel, set()).add(backend)
    for x, y in combinations(sorted({backend for _, backend in both}), 2):
        keys = [k for k, bs in backends.items() if {x, y} <= bs]
        if keys:
            d = np.array([np.log(a[k, x] / a[k, y]) - np.log(b[k, x] / b[k, y]) for k in keys])
            print(f"{x}/{y} on {len(keys)} sub-graphs: |log ratio in A / ratio in B| median "
                  f"{np.median(np.abs(d)):.3f}")
    several = [(k, sorted(bs)) for k, bs in backends.items() if len(bs) > 1]
    same = sum(min(bs, key=lambda be: a[k, be]) == min(bs, key=lambda be: b[k, be])
               for k, bs in several)
    print(f"the cheapest backend is the same on {same} of {len(several)} sub-graphs")


if __name__ == "__main__":
    main()
