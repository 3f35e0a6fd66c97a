"""DOT (Graphviz) and GraphML task graphs, read through networkx.

Node attributes: ``work`` (aliases ``weight``, ``runtime``, ``duration``, ``size``), ``kind``,
``arrival``, ``priority``, ``memory``, ``cores`` and ``cost`` (per-processor times, written as
``"1.5,2,3"`` or ``"[1.5, 2, 3]"``).  Edge attribute ``data`` (aliases ``weight``, ``size``,
``bytes``).  ``work=``/``data=`` options name other attributes.  Missing work is 1, missing data 0.
The graph must be directed; parallel edges are an error.

DOT needs the pure-Python ``pydot`` package (extra ``dot``).  Syntax errors name the line.  GraphML
uses networkx's reader (standard library XML).  Writers emit the same attributes, so a round trip
keeps tasks, edges, work, kinds, costs and data.  O(n + e).
"""

from __future__ import annotations

import contextlib
import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from simsched.errors import SimschedError
from simsched.workloads.importers._common import (
    atomic_write,
    atomic_write_text,
    number,
    read_text,
    require_extra,
)
from simsched.workloads.taskgraph import TaskGraph

WORK_ALIASES = ("work", "weight", "runtime", "duration", "size")
DATA_ALIASES = ("data", "weight", "size", "bytes")
_NUMERIC = ("arrival", "priority", "memory", "cores")


def _unquote(v: Any) -> Any:
    if isinstance(v, str) and len(v) >= 2 and v[0] == v[-1] == '"':
        return v[1:-1]
    return v


def _pick(attrs: dict, name: str, aliases: tuple[str, ...]) -> tuple[str | None, Any]:
    for key in (name, *[a for a in aliases if a != name]):
        if key in attrs:
            return key, _unquote(attrs[key])
    return None, None


def _cost_list(v: Any, where: str, file: str | Path) -> list[float]:
    if isinstance(v, (list, tuple)):
        parts = list(v)
    else:
        parts = [p for p in re.split(r"[,\s;]+", str(v).strip().strip("[]()")) if p]
    if not parts:
        raise SimschedError(f"{where}: cost is empty", file=file)
    return [float("inf") if str(p).lower() in ("inf", "infinity") else number(p, f"{where}: cost", file=file)
            for p in parts]


_EDGE_NAMES = re.compile(r"'([^']*)' -> '([^']*)'")
_TASK_NAME = re.compile(r"(?:node|task) '([^']*)'")


def _line_in_source(text: str, message: str, syntax: str) -> int | None:
    """The line of ``text`` (DOT or GraphML) holding the edge or node an error message names.
    A text search, O(len(text)); ``None`` when nothing matches."""
    edge = _EDGE_NAMES.search(message)
    if edge:
        a, b = (re.escape(x) for x in edge.groups())
        pattern = (rf'"?{a}"?\s*->\s*"?{b}"?' if syntax == "dot"
                   else rf'source="{a}"\s+target="{b}"|target="{b}"\s+source="{a}"')
    else:
        task = _TASK_NAME.search(message)
        if not task:
            return None
        n = re.escape(task.group(1))
        pattern = rf'(?m)^\s*"?{n}"?\s*(\[|;|$)' if syntax == "dot" else rf'<node\s+id="{n}"'
    found = re.search(pattern, text)
    return text.count("\n", 0, found.start()) + 1 if found else None


def graph_from_nx(g: Any, *, file: str | Path, work: str = "work", data: str = "data",
                  text: str | None = None, syntax: str = "dot") -> TaskGraph:
    """Convert a networkx graph read from ``file`` (string attributes allowed) to a TaskGraph.  With
    the file's ``text``, an error about a node or edge names its line."""
    try:
        return _graph_from_nx(g, file=file, work=work, data=data)
    except SimschedError as e:
        if e.line is None and text is not None:
            e.line = _line_in_source(text, e.message, syntax)
        raise


def _graph_from_nx(g: Any, *, file: str | Path, work: str, data: str) -> TaskGraph:
    if not g.is_directed():
        raise SimschedError("the graph is undirected; a task graph needs directed edges (digraph)", file=file)
    if g.number_of_nodes() == 0:
        raise SimschedError("the graph has no nodes", file=file)
    tasks = []
    for node, attrs in g.nodes(data=True):
        name = str(_unquote(node))
        where = f"node {name!r}"
        rec: dict[str, Any] = {"name": name}
        key, w = _pick(attrs, work, WORK_ALIASES)
        if key is not None:
            rec["work"] = number(w, f"{where}: {key}", file=file)
        if "kind" in attrs:
            rec["kind"] = str(_unquote(attrs["kind"]))
        for k in _NUMERIC:
            if k in attrs:
                rec[k] = number(_unquote(attrs[k]), f"{where}: {k}", file=file,
                                minimum=None if k == "priority" else 0.0)
        if "cores" in rec:
            rec["cores"] = int(rec["cores"])
        if "cost" in attrs:
            rec["cost"] = _cost_list(_unquote(attrs["cost"]), where, file)
        tasks.append(rec)
    edges = []
    seen: set[tuple[str, str]] = set()
    for a, b, attrs in g.edges(data=True):
        a, b = str(_unquote(a)), str(_unquote(b))
        if (a, b) in seen:
            raise SimschedError(f"duplicate edge {a!r} -> {b!r}", file=file)
        seen.add((a, b))
        key, d = _pick(attrs, data, DATA_ALIASES)
        edges.append((a, b, 0.0 if key is None else number(d, f"edge {a!r} -> {b!r}: {key}", file=file)))
    try:
        return TaskGraph.from_named(tasks, edges)
    except SimschedError as e:
        raise e.located(file=file) from None


def read_dot(path: str | Path, *, work: str = "work", data: str = "data") -> TaskGraph:
    """Load a Graphviz DOT digraph (see the module docstring)."""
    pydot = require_extra("pydot", "dot", "reading DOT files")
    import networkx as nx

    text = read_text(path)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            graphs = pydot.graph_from_dot_data(text)
    except Exception as e:  # pydot/pyparsing raise assorted exceptions on bad input
        graphs = None
        out.write(str(e))
    if not graphs:
        msg = out.getvalue()
        m = re.search(r"line:(\d+), col:(\d+)", msg)
        line = int(m.group(1)) if m else None
        detail = msg.strip().splitlines()[-1] if msg.strip() else "no graph found"
        detail = re.sub(r"\s*\(at char \d+\), \(line:\d+, col:\d+\)", "", detail)
        raise SimschedError(f"invalid DOT: {detail}", file=path, line=line)
    g = nx.nx_pydot.from_pydot(graphs[0])
    if g.is_multigraph():
        simple = nx.DiGraph() if g.is_directed() else nx.Graph()
        simple.add_nodes_from(g.nodes(data=True))
        for a, b, attrs in g.edges(data=True):
            if simple.has_edge(a, b):
                raise SimschedError(f"duplicate edge {a!r} -> {b!r}", file=path)
            simple.add_edge(a, b, **attrs)
        g = simple
    return graph_from_nx(g, file=path, work=work, data=data, text=text, syntax="dot")


def read_graphml(path: str | Path, *, work: str = "work", data: str = "data") -> TaskGraph:
    """Load a GraphML file (see the module docstring)."""
    import networkx as nx

    text = read_text(path)  # file errors first, uniformly
    try:
        g = nx.read_graphml(path)
        _check_graphml_ends(ET.fromstring(text.encode("utf-8")), text, path)
    except ET.ParseError as e:
        raise SimschedError(f"invalid XML: {str(e).split(':')[0]}", file=path, line=e.position[0]) from None
    except (nx.NetworkXError, KeyError, ValueError, TypeError, IndexError) as e:
        raise SimschedError(f"invalid GraphML: {e}", file=path) from None
    return graph_from_nx(g, file=path, work=work, data=data, text=text, syntax="graphml")


def _check_graphml_ends(root: ET.Element, text: str, path: str | Path) -> None:
    """Every edge must join declared nodes (networkx would silently create a missing one)."""
    nodes = {el.get("id") for el in root.iter() if el.tag.rsplit("}", 1)[-1] == "node"}
    for el in root.iter():
        if el.tag.rsplit("}", 1)[-1] != "edge":
            continue
        for end in ("source", "target"):
            name = el.get(end)
            if name not in nodes:
                found = re.search(rf'<(?:\w+:)?edge\b[^>]*{end}="{re.escape(str(name))}"', text)
                raise SimschedError(
                    f"edge {el.get('source')!r} -> {el.get('target')!r}: its {end} {name!r} is not a declared node",
                    file=path, line=text.count("\n", 0, found.start()) + 1 if found else None)


def _node_attrs(graph: TaskGraph, i: int) -> dict[str, Any]:
    g = graph
    attrs: dict[str, Any] = {"work": float(g.work[i]), "kind": g.kind_of(i)}
    for k in ("arrival", "priority", "memory"):
        v = float(getattr(g, k)[i])
        if v:
            attrs[k] = v
    if g.cores[i] != 1:
        attrs["cores"] = int(g.cores[i])
    if g.cost is not None:
        attrs["cost"] = ",".join(repr(float(c)) for c in g.cost[i])
    return attrs


def _dot_id(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(graph: TaskGraph, name: str = "simsched") -> str:
    """The graph as DOT text with the attributes above (no pydot needed to write)."""
    g = graph
    lines = [f"digraph {_dot_id(name)} {{"]
    for i, n in enumerate(g.names):
        attrs = ", ".join(f"{k}={_dot_id(str(v)) if isinstance(v, str) else repr(v)}"
                          for k, v in _node_attrs(g, i).items())
        lines.append(f"  {_dot_id(n)} [{attrs}];")
    for s, d, x in zip(g.edge_src.tolist(), g.edge_dst.tolist(), g.edge_data.tolist()):
        lines.append(f"  {_dot_id(g.names[s])} -> {_dot_id(g.names[d])} [data={float(x)!r}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_dot(graph: TaskGraph, path: str | Path) -> None:
    """Write :func:`to_dot` atomically."""
    atomic_write_text(path, to_dot(graph, Path(path).stem))


def write_graphml(graph: TaskGraph, path: str | Path) -> None:
    """Write GraphML (networkx's writer; ``cost`` as a comma-separated string) atomically."""
    import networkx as nx

    g = graph
    h = nx.DiGraph()
    for i, n in enumerate(g.names):
        h.add_node(n, **_node_attrs(g, i))
    for s, d, x in zip(g.edge_src.tolist(), g.edge_dst.tolist(), g.edge_data.tolist()):
        h.add_edge(g.names[s], g.names[d], data=float(x))
    atomic_write(path, lambda tmp: nx.write_graphml(h, tmp))
