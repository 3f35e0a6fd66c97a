"""Pegasus DAX XML (the "abstract DAG in XML" of Pegasus 3/4; the classic synthetic CyberShake,
Montage, Epigenomics, Inspiral and SIPHT workflows of Bharathi et al. 2008 / Juve et al. 2013).

``<adag>`` holds ``<job id=... name=... runtime=...>`` elements with ``<uses file=... link=input|output
size=...>`` children, and ``<child ref=...><parent ref=.../></child>`` dependencies.  Tasks are
named by job id; work = ``runtime`` (seconds); kind = job ``name`` (the transformation); edge data =
total size of the files the parent writes and the child reads, in units of ``data_unit`` bytes
(default 1e6).  Jobs with no ``runtime`` get ``default_runtime`` or are an error.  Negative runtimes and file
sizes (the synthetic Pegasus workflows have them, e.g. ``Epigenomics_997.xml``) are repaired by their absolute
value with one warning line, or refused with ``strict=True`` (see
:class:`~simsched.workloads.importers._common.NegativeRepairs`).  XML namespaces are ignored.  Errors
name the file and line (from the parser, or the line where the offending id is written).  O(jobs + uses + dependencies).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from xml.sax.saxutils import quoteattr

from simsched.errors import SimschedError
from simsched.workloads.importers._common import Lines, NegativeRepairs, atomic_write_text, located, read_text
from simsched.workloads.taskgraph import TaskGraph


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def read_dax(path: str | Path, *, data_unit: float = 1e6, default_runtime: float | None = None,
             strict: bool = False) -> TaskGraph:
    """Load a DAX file (see the module docstring): tasks named by job id, kind = transformation name, edge data
    = files the parent writes and the child reads.  ``strict`` refuses negative runtimes and sizes instead of
    repairing them.  O(jobs + uses + dependencies).

    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "two.dax"
    >>> _ = f.write_text('<adag><job id="a" name="x" runtime="2"/><job id="b" name="y" runtime="3"/>'
    ...                  '<child ref="b"><parent ref="a"/></child></adag>')
    >>> read_dax(f).names
    ['a', 'b']
    """
    text = read_text(path)
    repairs = NegativeRepairs(path, strict=strict)
    lines = Lines(text)  # built only if an error needs a line
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        line, col = e.position
        raise SimschedError(f"invalid XML: {str(e).split(':')[0]} (column {col + 1})", file=path, line=line) from None
    if _local(root.tag) != "adag":
        raise SimschedError(f"the root element is <{_local(root.tag)}>, expected <adag> (a Pegasus DAX)",
                            file=path, line=1)
    names: list[str] = []
    kinds: list[str] = []
    work: list[float] = []
    ins: list[dict[str, float]] = []
    outs: list[dict[str, float]] = []
    index: dict[str, int] = {}
    deps: list[tuple[str, str]] = []
    for el in root:
        tag = _local(el.tag)
        if tag == "job":
            jid = el.get("id")
            if not jid:
                raise SimschedError("a <job> has no id", file=path, line=lines.of("<job"))
            if jid in index:
                raise SimschedError(f"duplicate job id {jid!r}", file=path, line=lines.of(f'"{jid}"'))
            rt = el.get("runtime")
            if rt is None:
                if default_runtime is None:
                    raise SimschedError(f"job {jid!r} has no runtime", file=path, line=lines.of(f'id="{jid}"'))
                rt = default_runtime
            index[jid] = len(names)
            names.append(jid)
            kinds.append(el.get("name") or "compute")
            i_files: dict[str, float] = {}
            o_files: dict[str, float] = {}
            try:  # a bad value is located at its job's line, looked up on this path only
                work.append(repairs.value(rt, f"job {jid!r}: runtime", "runtimes"))
                for u in el:
                    if _local(u.tag) != "uses":
                        continue
                    fname = u.get("file") or u.get("name") or ""
                    size = repairs.value(u.get("size", 0), f"job {jid!r}: size of file {fname!r}", "file sizes")
                    (i_files if (u.get("link") or "").lower() == "input" else o_files)[fname] = size
            except SimschedError as e:
                raise e.located(file=path, line=lines.of(f'id="{jid}"')) from None
            ins.append(i_files)
            outs.append(o_files)
        elif tag == "child":
            c = el.get("ref")
            for p in el:
                if _local(p.tag) == "parent":
                    deps.append((p.get("ref") or "", c or ""))
    if not names:
        raise SimschedError("the DAX has no <job> elements", file=path)
    pairs, data = [], []
    for p, c in deps:
        for ref, role in ((p, "parent"), (c, "child")):
            if ref not in index:
                raise SimschedError(f"dependency names {role} job {ref!r}, which does not exist",
                                    file=path, line=lines.of(f'ref="{ref}"'))
        i, j = index[p], index[c]
        pairs.append((i, j))
        shared = outs[i].keys() & ins[j].keys()
        data.append(sum(ins[j][f] for f in shared) / data_unit)
    with located(path):
        graph = TaskGraph(names, pairs, data, work=work, kind=kinds)
    repairs.warn()
    return graph


def to_dax(graph: TaskGraph, *, data_unit: float = 1e6) -> str:
    """The graph as DAX 3.x XML; each edge becomes one file written by its source, read by its target."""
    g = graph
    uses: list[list[str]] = [[] for _ in g.names]
    for e, (s, d) in enumerate(zip(g.edge_src.tolist(), g.edge_dst.tolist())):
        size = int(round(float(g.edge_data[e]) * data_unit))
        uses[s].append(f'    <uses file="e{e}.dat" link="output" size="{size}"/>')
        uses[d].append(f'    <uses file="e{e}.dat" link="input" size="{size}"/>')
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<adag xmlns="http://pegasus.isi.edu/schema/DAX" version="3.6" name="simsched">']
    for i, n in enumerate(g.names):
        lines.append(f"  <job id={quoteattr(n)} name={quoteattr(g.kind_of(i))} runtime=\"{float(g.work[i])!r}\">")
        lines += uses[i]
        lines.append("  </job>")
    for d in range(g.n_tasks):
        preds = g.predecessors(d)
        if preds.size:
            lines.append(f"  <child ref={quoteattr(g.names[d])}>")
            lines += [f"    <parent ref={quoteattr(g.names[int(p)])}/>" for p in preds]
            lines.append("  </child>")
    lines.append("</adag>")
    return "\n".join(lines) + "\n"


def write_dax(graph: TaskGraph, path: str | Path, *, data_unit: float = 1e6) -> None:
    """Write :func:`to_dax` atomically."""
    atomic_write_text(path, to_dax(graph, data_unit=data_unit))
