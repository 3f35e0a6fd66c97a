"""simsched's own inline workload form, in YAML or JSON: ``{tasks: [...], edges: [...]}``.

Task and edge fields as in :mod:`.records` (``name``, ``work`` or ``cost: [..]``, ``kind``, ...;
edges ``{from, to, data}``).  This is the same form a scenario's ``workload:`` section accepts
inline, so an exported file can be pasted into a scenario.  A whole scenario file is accepted too
(its ``workload`` section is used when it is inline).  YAML errors name the line of the field.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from simsched.errors import SimschedError
from simsched.workloads.importers._common import atomic_write_text
from simsched.workloads.importers.records import graph_to_records, records_to_graph
from simsched.workloads.taskgraph import TaskGraph


def read_inline(path: str | Path) -> TaskGraph:
    """Load a ``{tasks, edges}`` YAML/JSON file."""
    from simsched.yamlio import load_yaml  # JSON is YAML; yamlio keeps every field's line

    doc = load_yaml(Path(path))
    data, prefix = doc.data, ()
    if isinstance(data, dict) and "tasks" not in data and isinstance(data.get("workload"), dict):
        data, prefix = data["workload"], ("workload",)
    if not isinstance(data, dict) or "tasks" not in data:
        raise SimschedError("expected a mapping with 'tasks' (and optionally 'edges')", file=path, line=1)

    def locate(section: str, i: int, key: str | None) -> int | None:
        return doc.line_of((*prefix, section, i) + ((key,) if key else ()))

    return records_to_graph(data["tasks"], data.get("edges") or (), file=path, locate=locate)


def to_inline(graph: TaskGraph) -> dict:
    """The graph as ``{"tasks": [...], "edges": [...]}`` plain data."""
    tasks, edges = graph_to_records(graph)
    return {"tasks": tasks, "edges": edges}


def write_inline(graph: TaskGraph, path: str | Path) -> None:
    """Write YAML (flow-style records, one per line) or JSON for ``.json``, atomically."""
    doc = to_inline(graph)
    if Path(path).suffix.lower() == ".json":
        text = json.dumps(doc, indent=1) + "\n"
    else:
        lines = ["tasks:"]
        lines += ["  - " + yaml.safe_dump(t, default_flow_style=True, width=10**9).strip() for t in doc["tasks"]]
        lines.append("edges:" if doc["edges"] else "edges: []")
        lines += ["  - " + yaml.safe_dump(e, default_flow_style=True, width=10**9).strip() for e in doc["edges"]]
        text = "\n".join(lines) + "\n"
    atomic_write_text(path, text)
