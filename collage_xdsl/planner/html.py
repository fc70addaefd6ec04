"""The explain report as one self-contained HTML page: per function its estimate, each
backend alone, the boundaries crossed, a table of kernels with their alternatives, and
the picture of the partition (`collage_xdsl.planner.picture`) inline.

    page = format_html(partitioned.report, title="mnist_cnn.onnx", pictures={"main": svg})
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from collage_xdsl.planner.explain import seconds_text

STYLE = """body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;font-size:90%}
th{background:#eee}.num{text-align:right}svg{max-width:100%;height:auto}"""


def _function(f: dict, picture: str | None) -> list[str]:
    parts = [f"<h2>@{escape(f['function'])}</h2>",
             f"<p>{len(f['kernels'])} kernels, estimated run "
             f"{seconds_text(f['estimated_seconds'])}; {f['candidates']} candidates, search "
             f"{seconds_text(f['search_seconds'])}.</p>"]
    alone = [escape(f"{a['backend']} {seconds_text(a['total_cost'])}" if a["total_cost"] is not None
                    else f"{a['backend']}: no cover") for a in f["alone"]]
    if alone:
        ratio = f["mixing_ratio"]
        mixed = f"; the mix at {ratio:.3f}x of the best" if ratio is not None else ""
        parts.append(f"<p>Each backend alone: {', '.join(alone)}{mixed}.</p>")
    if f["crossings"]:
        parts.append("<p>Boundaries crossed: " + ", ".join(
            f"{escape(c['from'])} &rarr; {escape(c['to'])}: {c['tensors']} tensor(s), "
            f"{seconds_text(c['cost'])}" for c in f["crossings"]) + ".</p>")
    rows = ["<tr><th>#</th><th>backend</th><th>cost</th><th>same ops elsewhere</th>"
            "<th>next best cover</th><th>label</th><th>ops</th></tr>"]
    for n, k in enumerate(f["kernels"]):
        other, alt = k["best_other"], k["alternative"]
        other_text = "-" if other is None else f"{other['backend']} {seconds_text(other['cost'])}"
        alt_text = "-" if alt is None else f"{alt['cover']} {seconds_text(alt['cost'])}"
        rows.append(
            f"<tr><td class=num>{n}</td><td>{escape(k['backend'])}</td>"
            f"<td class=num>{seconds_text(k['cost'])}</td><td>{escape(other_text)}</td>"
            f"<td>{escape(alt_text)}</td><td>{escape(k['label'])}</td>"
            f"<td>{escape(', '.join(k['ops']))}</td></tr>")
    parts.append("<table>" + "".join(rows) + "</table>")
    if picture:
        parts.append(f"<div class=picture>{picture[picture.find('<svg'):]}</div>")
    return parts


def format_html(report: dict, *, title: str, pictures: Mapping[str, str] | None = None) -> str:
    """The page for `report` (`collage_xdsl.planner.explain.to_json`'s form) with each
    function's SVG picture from `pictures` (by function name) inline."""
    body = [f"<h1>Collage partition of {escape(title)}</h1>"]
    for f in report["functions"]:
        body += _function(f, (pictures or {}).get(f["function"]))
    return (f"<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>{escape(title)}</title>"
            f"<style>{STYLE}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n")
