"""The generalisation matrix (:mod:`simsched.learned.generalise_matrix`) as a self-contained HTML
page: one row per cell with the ratio to the best rule, its 95% interval and the verdict (worse in
red, better in green).  O(cells)."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simsched.outputs import atomic_write
from simsched.report.html import BASE_CSS

_CSS = BASE_CSS + ".worse{color:#b00020;font-weight:bold}.better{color:#1b7a1b;font-weight:bold}"


def matrix_html(doc: Mapping[str, Any]) -> str:
    """The page of a matrix document ``{scenario, scheduler, days, seed_space, seed, rows, summary}``."""
    e = html.escape
    head = ("cell", "world", "days", "mean JCT", "best rule", "its mean JCT", "ratio (geo. mean)", "95% interval",
            "better on", "verdict")
    body = []
    for r in doc["rows"]:
        if "skipped" in r:
            body.append(f"<tr><td>{e(r['cell'])}</td><td colspan=\"{len(head) - 1}\">skipped: {e(r['skipped'])}"
                        "</td></tr>")
            continue
        cells = (r["cell"], r["world"], str(r["days"]), f"{r['jct']:.4g}", r["best_rule"], f"{r['best_jct']:.4g}",
                 f"{r['ratio']:.3f}", f"[{r['low']:.3f}, {r['high']:.3f}]", f"{r['wins']}/{r['days']}", r["verdict"])
        body.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in cells[:-1])
                    + f"<td class=\"{e(r['verdict'])}\">{e(r['verdict'])}</td></tr>")
    s = doc["summary"]
    title = f"{doc['scheduler']} on {doc['scenario']}: generalisation matrix"
    meta = (f"{doc['days']} days per cell from the {doc['seed_space']} seed space (seed {doc['seed']}); per-day "
            f"ratio of mean JCT to the best rule of the cell, paired 95% t interval. Cells: {s['cells']}, better "
            f"{s['better']}, tie {s['tie']}, worse {s['worse']}; geometric mean ratio {s['geomean_ratio']:.3f}.")
    data = json.dumps(doc, separators=(",", ":"), allow_nan=True).replace("</", "<\\/")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{e(title)}</title><style>{_CSS}</style></head><body><h1>{e(title)}</h1>"
            f"<p class=\"meta\">{e(meta)}</p><table><thead><tr>"
            + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr></thead><tbody>" + "".join(body)
            + f"</tbody></table><script type=\"application/json\" id=\"simsched-matrix\">{data}</script>"
            "</body></html>\n")


def write_matrix_html(doc: Mapping[str, Any], path: str | Path) -> Path:
    """Write :func:`matrix_html` to ``path`` atomically."""
    text = matrix_html(doc)
    return atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))
