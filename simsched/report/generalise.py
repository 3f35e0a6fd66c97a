"""The generalisation matrix (:mod:`simsched.learned.generalise_matrix`) as a self-contained HTML
page: one row per cell with the ratio to the best rule, its 95% interval and the verdict (worse in
red, better in green), and the same as a terminal table (:func:`print_matrix`).  O(cells)."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simsched.outputs import atomic_write
from simsched.report.fit import print_table
from simsched.report.html import BASE_CSS

if TYPE_CHECKING:
    from rich.console import Console

_CSS = BASE_CSS + ".worse{color:#b00020;font-weight:bold}.better{color:#1b7a1b;font-weight:bold}"


def matrix_html(doc: Mapping[str, Any]) -> str:
    """The page of a matrix document ``{scenario, scheduler, days, seed_space, seed, rows, summary}``."""
    e = html.escape
    what, key, per = doc.get("metric", "mean JCT"), doc.get("value", "jct"), doc.get("per", "days")
    head = ("cell", "world", per, what, "best rule", f"its {what}", "ratio (geo. mean)", "95% interval",
            "better on", "verdict")
    body = []
    for r in doc["rows"]:
        if "skipped" in r:
            body.append(f"<tr><td>{e(r['cell'])}</td><td colspan=\"{len(head) - 1}\">skipped: {e(r['skipped'])}"
                        "</td></tr>")
            continue
        cells = (r["cell"], r["world"], str(r["days"]), f"{r[key]:.4g}", r["best_rule"], f"{r['best_' + key]:.4g}",
                 f"{r['ratio']:.3f}", f"[{r['low']:.3f}, {r['high']:.3f}]", f"{r['wins']}/{r['days']}", r["verdict"])
        body.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in cells[:-1])
                    + f"<td class=\"{e(r['verdict'])}\">{e(r['verdict'])}</td></tr>")
    s = doc["summary"]
    title = f"{doc['scheduler']} on {doc['scenario']}: generalisation matrix"
    meta = (f"{doc['days']} {per} per cell from the {doc['seed_space']} seed space (seed {doc['seed']}); per-"
            f"{per[:-1]} ratio of {what} to the best rule of the cell, paired 95% t interval. Cells: {s['cells']}, "
            f"better {s['better']}, tie {s['tie']}, worse {s['worse']}; geometric mean ratio {s['geomean_ratio']:.3f}.")
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


def print_matrix(doc: Mapping[str, Any], console: Console) -> None:
    """The matrix as a terminal table: per cell the world (a log's: the two means instead), the best
    rule, the ratio to it with its 95% interval, the days it was better on and the verdict (worse in
    red, better in green); the caption counts the verdicts.  O(cells)."""
    from rich.markup import escape
    from rich.table import Table

    s = doc["summary"]
    what, per = doc.get("metric", "mean JCT"), doc.get("per", "days")
    table = Table(title=escape(f"{doc['scheduler']} on {doc['scenario']}: ratio of {what} to the best rule"),
                  caption=escape(f"{doc['days']} {per} per cell, {doc['seed_space']} seed space (seed {doc['seed']}); "
                                 f"geometric mean of per-{per[:-1]} ratios, paired 95% t interval; cells better "
                                 f"{s['better']}, tie {s['tie']}, worse {s['worse']}; geometric mean "
                                 f"{s['geomean_ratio']:.3f}"))
    key = doc.get("value")  # a log's matrix shows both means (bsld) in place of the world
    cols = ("cell", "world", "best rule", "ratio", "95% interval", "better on", "verdict") if key is None else (
        "cell", what.split()[-1], "best rule", "its " + what.split()[-1], "ratio", "95% interval", "better on",
        "verdict")
    for col in cols:  # a long rule name folds onto a second line rather than losing its end
        table.add_column(col, justify="left" if col in ("cell", "world", "best rule", "verdict") else "right",
                         overflow="fold" if col == "best rule" else "ellipsis")
    for r in doc["rows"]:
        if "skipped" in r:
            table.add_row(escape(r["cell"]), escape(f"skipped: {r['skipped']}"), *[""] * (len(cols) - 2))
            continue
        colour = {"worse": "red", "better": "green"}.get(r["verdict"], "")
        verdict = f"[{colour}]{r['verdict']}[/]" if colour else r["verdict"]
        first = ((escape(r["world"]), escape(r["best_rule"])) if key is None else
                 (f"{r[key]:.2f}", escape(r["best_rule"]), f"{r['best_' + key]:.2f}"))
        table.add_row(escape(r["cell"]), *first, f"{r['ratio']:.3f}", f"[{r['low']:.3f}, {r['high']:.3f}]",
                      f"{r['wins']}/{r['days']}", verdict)
    print_table(console, table)
