"""One table from benchmark runs split by model: their results, merged.

    python benchmarks/merge.py RUN [RUN ...] --out DIR

A RUN is a `results.json` that `benchmarks/run.py` wrote, or the directory holding one.
The twelve models take hours with cold cost databases, so they are often run a few at a
time (`--models`); this puts the parts in one `results.json`, `table.md` and
`ratios.png`, with the geomeans, counts above 1.02x and additive errors computed over all
their models by the benchmark's own summary (`bench_report.summarize`), not by hand.

Runs are merged only when their numbers compare: the same host, threads, timing method and
settings, refinement settings and library versions (`SETTINGS`, `METHOD`); each model
comes from one part.
The merged results keep every part's command, date and commit (`parts`), and the tables
list them. A file that is missing, not JSON or not a benchmark's results, settings that
differ (the field and both values) and a model in two parts are one `error:` line naming
the file, and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_report import summarize, write_report  # noqa: E402

from collage_xdsl.errors import CollageError  # noqa: E402

SETTINGS = ("host", "threads", "rounds", "timing_s", "warmup", "sample_ms", "slow_factor",
            "slow_rounds", "refine_budget", "max_depth", "seed", "tvm_tune", "versions")
"""What must be equal in every part for their ratios to be summarized together."""
METHOD = ("timing",)
"""What must be equal too, but older runs do not record (None: every configuration in the
benchmark's own process)."""


def load_run(path: Path) -> dict:
    """The results of one run, from its `results.json` or the directory holding it."""
    file = path / "results.json" if path.is_dir() else path
    try:
        results = json.loads(file.read_text())
    except OSError as e:
        raise CollageError(f"{file}: cannot read it: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CollageError(f"{file}: not a benchmark's results.json: not JSON ({e})") from None
    missing = [k for k in ("command", "date", "models", *SETTINGS)
               if not isinstance(results, dict) or k not in results]
    if missing:
        raise CollageError(f"{file}: not a benchmark's results.json: no "
                           f"{', '.join(missing)}")
    results["file"] = str(file)
    return results


def merge(runs: list[dict]) -> dict:
    """One results dict over the models of every run in `runs` (each from `load_run`)."""
    first = runs[0]
    for run in runs[1:]:
        for key in (*SETTINGS, *METHOD):
            if run.get(key) != first.get(key):
                raise CollageError(f"{run['file']}: {key} is {run.get(key)!r}, but "
                                   f"{first.get(key)!r} in {first['file']}: their ratios do "
                                   f"not compare")
    models: dict[str, dict] = {}
    source: dict[str, str] = {}
    for run in runs:
        for name, model in run["models"].items():
            if name in models:
                raise CollageError(f"{run['file']}: model {name} is also in "
                                   f"{source[name]}: merge one run of each model")
            models[name], source[name] = model, run["file"]
    merged = {key: first[key] for key in SETTINGS}
    merged.update({key: first[key] for key in METHOD if key in first})
    merged["confidence_interval"] = first.get("confidence_interval")
    merged["parts"] = [{"file": run["file"], "command": run["command"], "date": run["date"],
                        "commit": run.get("commit"), "models": list(run["models"])}
                       for run in runs]
    merged["date"] = max(run["date"] for run in runs)
    merged["models"] = models
    merged["summary"] = summarize(models)
    return merged


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="benchmarks/merge.py",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN",
                   help="a results.json of benchmarks/run.py, or its directory")
    p.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="where results.json, table.md and ratios.png go")
    args = p.parse_args(argv)
    try:
        merged = merge([load_run(path) for path in args.runs])
        merged["command"] = ["python", "benchmarks/merge.py",
                             *(sys.argv[1:] if argv is None else argv)]
        args.out.mkdir(parents=True, exist_ok=True)
    except CollageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {args.out}: cannot create it: {e.strerror}", file=sys.stderr)
        return 2
    write_report(merged, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
