"""The benchmark's report: summary over models, text and Markdown tables, the ratio chart.

    results["summary"] = summarize(results["models"])
    write_report(results, Path("out"))  # out/results.json, table.md, ratios.png; prints
                                        # the tables (aligned text) and what it wrote

Two tables: the rounds timed and the median latency of every configuration (ms), and per
non-single configuration the median of its per-round ratios to the best single backend
with the 95% confidence interval, next to the partitioning times (cold and warm cost
database, and with refinement), the additive errors, and "estimated mix": the search's
total for the mixed plan over its total with the cheapest backend alone (what mixing
gains by the cost model's own estimates, `collage_xdsl.planner.explain`). `*` marks a slow
configuration timed in a few rounds only. Below them: the geomean of each ratio over the
models, how many models are above 1.02x, the largest additive error, and notes (failures
with their reasons).
"""

from __future__ import annotations

import json
from pathlib import Path

from bench_configs import BASELINES, COLLAGE, CONFIGS, PAIRS
from bench_stats import geomean

ABOVE = 1.02
"""A model is above the best single backend when its median ratio exceeds this."""
GOALS = {"geomean": 0.9, "above": 0, "additive": 0.10}
RATIO_CONFIGS = BASELINES + COLLAGE


def _ok(model: dict, config: str) -> dict | None:
    entry = model["configs"].get(config)
    return entry if model["status"] == "ok" and entry and entry["status"] == "ok" else None


def summarize(models: dict[str, dict]) -> dict:
    """Per non-single configuration: models measured, geomean ratio, models above 1.02x;
    per collage configuration: the additive errors' largest magnitude."""
    summary: dict = {"ratio": {}, "additive_error": {}}
    for config in RATIO_CONFIGS:
        ratios = [e["ratio"]["median"] for m in models.values() if (e := _ok(m, config))]
        first = [e["first_ratio"]["median"] for m in models.values()
                 if (e := _ok(m, config)) and "first_ratio" in e]
        summary["ratio"][config] = {
            "models": len(ratios),
            "geomean": geomean(ratios) if ratios else None,
            "above_1.02": sum(r > ABOVE for r in ratios),
            "first_call": {"models": len(first), "geomean": geomean(first) if first else None,
                           "above_1.02": sum(r > ABOVE for r in first)},
        }
    summary["vs_greedy"] = {}
    for config in PAIRS:
        ratios = [r["median"] for m in models.values()
                  if (r := m.get("vs_greedy", {}).get(config)) is not None]
        summary["vs_greedy"][config] = {
            "models": len(ratios), "geomean": geomean(ratios) if ratios else None,
            "above_1.02": sum(r > ABOVE for r in ratios)}
    mixing = [r for m in models.values()
              if (r := m["partition"].get("warm", {}).get("mixing_ratio")) is not None]
    summary["estimated_mixing"] = {"models": len(mixing),
                                   "geomean": geomean(mixing) if mixing else None,
                                   "min": min(mixing) if mixing else None}
    for config in COLLAGE:
        records = [e for m in models.values() if (e := m["additive_error"].get(config))]
        db = [abs(e["error"]) for e in records if e["error"] is not None]
        now = [abs(e["side_by_side"]["error"]) for e in records]
        summary["additive_error"][config] = {
            "models": len(db), "max_abs": max(db) if db else None,
            "side_by_side": {"models": len(now), "max_abs": max(now) if now else None,
                             "within_10%": sum(x <= GOALS["additive"] for x in now)}}
    return summary


def _ms(x: float) -> str:
    return f"{x:.3f}" if x < 1 else f"{x:.2f}" if x < 100 else f"{x:.0f}"


def _cell(model: dict, config: str, ratio: bool) -> str:
    if model["status"] != "ok":
        return "failed"
    entry = model["configs"].get(config)
    if entry is None:
        return ""
    if entry["status"] != "ok":
        return entry["status"]
    slow = "*" if entry["slow"] else ""
    if not ratio:
        return _ms(entry["median_ms"]) + slow
    r = entry["ratio"]
    return f"{r['median']:.2f} ({r['low']:.2f}-{r['high']:.2f}){slow}"


def _seconds(record: dict | None, key: str = "seconds") -> str:
    if record is None or record.get(key) is None:
        return "n/a"
    return f"{record[key]:.2f}" if record[key] < 10 else f"{record[key]:.1f}"


def _error(model: dict, config: str) -> str:
    """The cost database's additive error / the side-by-side check's."""
    e = model["additive_error"].get(config)
    if e is None:
        return "n/a"
    db = "n/a" if e["error"] is None else f"{e['error'] * 100:+.0f}%"
    return f"{db} / {e['side_by_side']['error'] * 100:+.0f}%"


def _mixing(model: dict) -> str:
    r = model["partition"].get("warm", {}).get("mixing_ratio")
    return "n/a" if r is None else f"{r:.3f}"


def tables(results: dict) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) of the latency table and the ratio table."""
    models = results["models"].values()
    latency = [
        [m["display"], m.get("best_single", ""), str(m.get("rounds", ""))]
        + [_cell(m, c, False) for c in CONFIGS]
        for m in models
    ]
    ratios = [
        [m["display"]] + [_cell(m, c, True) for c in RATIO_CONFIGS] + [
            _seconds(m["partition"], "cold_seconds"),
            _seconds(m["partition"].get("warm")),
            _seconds(m["partition"].get("refined")),
            _error(m, "collage-search"),
            _error(m, "collage"),
            _mixing(m),
        ]
        for m in models
    ]
    greedy = [
        [m["display"]] + [_greedy_cell(m, c) for c in PAIRS]
        for m in models
    ]
    return [
        ("Median latency (ms)", ["model", "best single", "rounds", *CONFIGS], latency),
        ("Ratio to the best single backend: median of per-round ratios (95% CI)",
         ["model", *RATIO_CONFIGS, "partition cold s", "warm s", "refined s",
          "additive error search (db / now)", "additive error collage (db / now)",
          "estimated mix"], ratios),
        ("Collage with tvm + one BYOC backend against that backend's greedy partition-for: "
         "median of per-round ratios (95% CI)",
         ["model", *(f"{c} / {g}" for c, g in PAIRS.items())], greedy),
    ]


def _greedy_cell(model: dict, config: str) -> str:
    r = model.get("vs_greedy", {}).get(config)
    if r is None:
        entry = model["configs"].get(config)
        return "n/a" if entry is None or entry["status"] == "ok" else entry["status"]
    return f"{r['median']:.2f} ({r['low']:.2f}-{r['high']:.2f})"


def _budget(budget: float | str) -> str:
    return budget if isinstance(budget, str) else f"{budget:g} s"


def summary_lines(results: dict) -> list[str]:
    s = results["summary"]
    lines = []
    for config, r in s["ratio"].items():
        if r["geomean"] is None:
            lines.append(f"{config}: no model measured")
            continue
        goal = (f" (goal <= {GOALS['geomean']}x, none above {ABOVE}x)"
                if config == "collage" else "")
        first = r.get("first_call", {})
        cold = (f"; first call after the other configurations: geomean "
                f"{first['geomean']:.3f}x, {first['above_1.02']} above {ABOVE}x"
                if first.get("geomean") is not None else "")
        lines.append(f"{config}: geomean ratio {r['geomean']:.3f}x over {r['models']} models, "
                     f"{r['above_1.02']} above {ABOVE}x{goal}{cold}")
    for config, r in s.get("vs_greedy", {}).items():
        if r["models"]:
            lines.append(f"{config}: geomean {r['geomean']:.3f}x of {PAIRS[config]} over "
                         f"{r['models']} models, {r['above_1.02']} above {ABOVE}x")
    mixing = s.get("estimated_mixing", {})
    if mixing.get("geomean") is not None:
        lines.append(f"collage-search: by the cost model's own estimates the mixed plan is "
                     f"{mixing['geomean']:.3f}x of the cheapest backend alone on geomean over "
                     f"{mixing['models']} models, at best {mixing['min']:.3f}x")
    for config, e in s["additive_error"].items():
        now = e["side_by_side"]
        if now["max_abs"] is not None:
            db = ("n/a" if e["max_abs"] is None else
                  f"at most {e['max_abs'] * 100:.1f}% over {e['models']} models")
            lines.append(f"{config}: additive error with cost-database costs {db}; side by "
                         f"side at most {now['max_abs'] * 100:.1f}%, within "
                         f"{GOALS['additive'] * 100:.0f}% on {now['within_10%']} of "
                         f"{now['models']} models (goal <= {GOALS['additive'] * 100:.0f}%)")
    return lines


def notes(results: dict) -> list[str]:
    """Failures and skipped configurations with their reasons, then model notes."""
    lines = []
    for m in results["models"].values():
        if m["status"] != "ok":
            lines.append(f"{m['display']}: failed: {m['reason']}")
        for config, entry in m["configs"].items():
            if entry["status"] != "ok":
                lines.append(f"{m['display']} {config}: {entry['status']}: {entry['reason']}")
        lines += [f"{m['display']} {note}" for note in m["notes"]]
    slow = {m["configs"][c]["rounds"] for m in results["models"].values()
            for c in CONFIGS if (e := _ok(m, c)) and e["slow"]}
    if slow:
        lines.append(f"* slow: more than {results['slow_factor']:g}x the fastest single backend "
                     f"in warm-up, timed in {', '.join(map(str, sorted(slow)))} rounds only")
    return lines


def _header(results: dict) -> str:
    sample = (f"; samples of {results['sample_ms']:g} ms after a first call"
              if "sample_ms" in results else "; one call per sample")
    rounds = (f"at least {results['rounds']} rounds, more in {results['timing_s']:g} s a model"
              if results.get("timing_s") else f"{results['rounds']} rounds")
    return (f"{results['host']}; {results['threads']} threads; {rounds}{sample}; "
            f"refine budget {_budget(results['refine_budget'])}; tvm-tune {results['tvm_tune']}; "
            f"{results['date']}")


def format_tables(results: dict) -> str:
    """The tables as aligned text, the summary and the notes (after the parts they
    come from, for merged results)."""
    out = [*_parts(results), _header(results), ""]
    for title, header, rows in tables(results):
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        out.append(title)
        for row in [header, *rows]:
            out.append("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                                 for i, (cell, w) in enumerate(zip(row, widths))).rstrip())
        out.append("")
    out += summary_lines(results) + [""] + notes(results)
    return "\n".join(out).rstrip() + "\n"


def _at(record: dict) -> str:
    return f" at {record['commit']}" if record.get("commit") else ""


def _parts(results: dict) -> list[str]:
    """The runs merged into `results` (`benchmarks/merge.py`), each with its command,
    commit and date; none for one run."""
    return [f"- part: `{' '.join(part['command'])}`{_at(part)}, {part['date']}"
            for part in results.get("parts", [])]


def _provenance(results: dict) -> list[str]:
    """The command that wrote `results`, at which commit, and the parts it merged."""
    return [f"Command: `{' '.join(results['command'])}`{_at(results)}", *_parts(results)]


def markdown_tables(results: dict) -> str:
    """The tables in Markdown, for the README."""
    out = [*_provenance(results), "", _header(results), ""]
    for title, header, rows in tables(results):
        out += [f"**{title}**", "", "| " + " | ".join(header) + " |",
                "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
        out += ["| " + " | ".join(row) + " |" for row in rows]
        out.append("")
    out += [f"- {line}" for line in summary_lines(results) + notes(results)]
    return "\n".join(out) + "\n"


def plot_ratios(results: dict, path: Path) -> None:
    """Per model the median ratio of each non-single configuration with its CI whiskers,
    lines at 1.0 and 0.9, log scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(results["models"].values())
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(models) + 2), 4.5))
    width = 0.8 / len(RATIO_CONFIGS)
    for j, config in enumerate(RATIO_CONFIGS):
        xs, ys, lows, highs = [], [], [], []
        for i, m in enumerate(models):
            if (e := _ok(m, config)) is None:
                continue
            r = e["ratio"]
            xs.append(i - 0.4 + (j + 0.5) * width)
            ys.append(r["median"])
            lows.append(r["median"] - r["low"])
            highs.append(r["high"] - r["median"])
        ax.errorbar(xs, ys, yerr=[lows, highs], fmt="o", capsize=3, label=config)
    ax.axhline(1.0, color="black", linewidth=1, label="best single backend")
    ax.axhline(GOALS["geomean"], color="gray", linewidth=1, linestyle="--",
               label=f"goal {GOALS['geomean']}x")
    ax.set_yscale("log")
    ax.set_xticks(range(len(models)), [m["display"] for m in models], rotation=30, ha="right")
    ax.set_ylabel("latency / best single backend")
    ax.set_title("Median per-round ratio to the best single backend (95% CI)")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_report(results: dict, out: Path) -> None:
    """`results.json`, `table.md` and `ratios.png` in `out` (which exists); the tables and
    the paths written go to standard output."""
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (out / "table.md").write_text(markdown_tables(results))
    plot_ratios(results, out / "ratios.png")
    print(format_tables(results), end="")
    print(f"wrote {out / 'results.json'}, {out / 'table.md'}, {out / 'ratios.png'}")
