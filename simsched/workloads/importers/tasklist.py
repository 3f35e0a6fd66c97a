"""Task lists in CSV or JSON: independent (or lightly dependent) jobs with arrival times,
per-processor times, priority and memory — the shape of CloudSim task data (DeepSched).

CSV: a header row, then one task per row.  Columns (see :mod:`.records` for aliases): ``name``,
``work``, ``kind``, ``arrival``, ``priority``, ``memory``, ``cores``, per-processor times either as
``cost_0, cost_1, ...`` (or ``time_<name>``) columns or one ``cost`` column ``"3;4.5;inf"``, and
``depends`` (``"a;b"``).  Errors name the file and the row's line.

JSON: a list of task objects, or ``{"tasks": [...]}`` (same keys; ``cost`` a list).  Errors name
the file and the task index (and the line, found from the task's name).

O(n) rows.  :func:`write_tasklist` writes CSV or JSON (by extension), atomically.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from simsched import limits
from simsched.errors import SimschedError
from simsched.workloads.importers._common import atomic_write_text, line_of, load_json
from simsched.workloads.importers.records import graph_to_records, records_to_graph
from simsched.workloads.taskgraph import TaskGraph


def read_tasklist(path: str | Path) -> TaskGraph:
    """Load a CSV (``.csv``/``.tsv``) or JSON task list (see the module docstring)."""
    p = Path(path)
    if p.suffix.lower() in (".csv", ".tsv", ".txt"):
        return _read_csv(p)
    doc, text = load_json(p)
    tasks = doc.get("tasks") if isinstance(doc, dict) else doc
    if not isinstance(tasks, list):
        raise SimschedError('expected a list of tasks or {"tasks": [...]}', file=p, field="tasks")

    def locate(section: str, i: int, key: str | None) -> int | None:
        if section != "tasks" or i >= len(tasks) or not isinstance(tasks[i], dict):
            return None
        name = tasks[i].get("name", tasks[i].get("id"))
        start = line_of(text, json.dumps(name)) if name is not None else None
        if start is None or key is None:
            return start
        k = text.find(json.dumps(name))
        return line_of(text, json.dumps(key), k) or start

    return records_to_graph(tasks, doc.get("edges", ()) if isinstance(doc, dict) else (),
                            file=p, locate=locate)


def _read_csv(p: Path) -> TaskGraph:
    """The rows of a CSV/TSV task list through the one capped CSV reader
    (:func:`simsched.limits.read_csv_records`: UTF-8, cell size, duplicated columns, cut rows), the
    row count checked against ``max_tasks`` before any row becomes a task.  O(size)."""
    delim = "\t" if p.suffix.lower() == ".tsv" else ","
    _, records = limits.read_csv_records(p, required=(), what="a task list", delimiter=delim, extra_ok=True,
                                         max_rows=(limits.current().max_tasks, "max_tasks"))
    limits.check_tasks(len(records), field="rows", file=p)
    rows = [rec for _, rec in records]
    lines = [line for line, _ in records]
    return records_to_graph(rows, (), file=p, locate=lambda s, i, k: lines[i] if i < len(lines) else None)


def write_tasklist(graph: TaskGraph, path: str | Path) -> None:
    """Write the graph as a task list: CSV for ``.csv``, JSON otherwise.  Edges become ``depends``
    (their data sizes are dropped: a task list has no per-edge data)."""
    p = Path(path)
    tasks, edges = graph_to_records(graph)
    preds: dict[str, list[str]] = {}
    for e in edges:
        preds.setdefault(e["to"], []).append(e["from"])
    for t in tasks:
        if t["name"] in preds:
            t["depends"] = preds[t["name"]]
    if p.suffix.lower() != ".csv":
        atomic_write_text(p, json.dumps({"tasks": tasks}, indent=1) + "\n")
        return
    m = graph.cost.shape[1] if graph.cost is not None else 0
    cols = ["name", "work", "kind", "arrival", "priority", "memory", "cores", "depends"]
    cols += [f"cost_{j}" for j in range(m)]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for t in tasks:
        row = {k: t.get(k, "") for k in cols[:7]}
        row["depends"] = ";".join(t.get("depends", []))
        for j, c in enumerate(t.get("cost", [])):
            row[f"cost_{j}"] = repr(c)
        w.writerow(row)
    atomic_write_text(p, buf.getvalue())
