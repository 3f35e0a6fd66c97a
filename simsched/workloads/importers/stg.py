"""Kasahara's Standard Task Graph Set format (.stg; Tobita & Kasahara, J. Scheduling 2002).

::

    <n>                                  number of real tasks
    <id> <time> <npred> [<pred> ...]     n + 2 lines: task 0 is the dummy entry, n + 1 the dummy exit
    # ...                                anything after the task lines (and lines starting with #)

Files with communication costs (the STG "with communication" variant) write each predecessor as a
pair ``<pred> <comm>``; the importer tells the two apart per line from the token count (3 + npred
or 3 + 2 npred).  By default the dummy entry and exit (zero processing time) are dropped together
with their edges; ``keep_dummies=True`` keeps them.  Tasks are named by their number; work = the
processing time; edge data = the communication cost (0 without).  Errors name the file and the line.
O(n + e).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from simsched.errors import SimschedError
from simsched.workloads.importers._common import atomic_write_text, located, read_text
from simsched.workloads.taskgraph import TaskGraph


def _ints(tokens: list[str], path: str | Path, line: int) -> list[int]:
    try:
        return [int(t) for t in tokens]
    except ValueError:
        bad = next(t for t in tokens if not t.lstrip("-").isdigit())
        raise SimschedError(f"expected an integer, got {bad!r}", file=path, line=line) from None


def read_stg(path: str | Path, *, keep_dummies: bool = False) -> TaskGraph:
    """Load an STG file (see the module docstring)."""
    text = read_text(path)
    rows = [(k + 1, ln.split()) for k, ln in enumerate(text.splitlines())]
    rows = [(k, t) for k, t in rows if t and not t[0].startswith("#")]
    if not rows:
        raise SimschedError("the file is empty: expected the number of tasks on the first line", file=path, line=1)
    first_line, head = rows[0]
    if len(head) != 1:
        raise SimschedError("the first line must hold only the number of tasks", file=path, line=first_line)
    n = _ints(head, path, first_line)[0]
    if n < 1:
        raise SimschedError(f"the number of tasks must be >= 1, got {n}", file=path, line=first_line)
    total = n + 2
    body = rows[1:1 + total]
    if len(body) < total:
        last = rows[-1][0]
        raise SimschedError(f"the file declares {n} tasks (+2 dummies) but has only {len(body)} task lines "
                            "(truncated?)", file=path, line=last)
    work = [0.0] * total
    seen = [0] * total
    src: list[int] = []
    dst: list[int] = []
    data: list[float] = []
    for line, tok in body:
        vals = _ints(tok, path, line)
        if len(vals) < 3:
            raise SimschedError("a task line needs: id, processing time, number of predecessors",
                                file=path, line=line)
        tid, time, npred = vals[:3]
        if not 0 <= tid < total:
            raise SimschedError(f"task id {tid} is outside 0..{total - 1}", file=path, line=line)
        if seen[tid]:
            raise SimschedError(f"task {tid} is defined twice (first on line {seen[tid]})", file=path, line=line)
        seen[tid] = line
        if time < 0:
            raise SimschedError(f"task {tid}: processing time {time} is negative", file=path, line=line)
        if npred < 0:
            raise SimschedError(f"task {tid}: number of predecessors {npred} is negative", file=path, line=line)
        rest = vals[3:]
        if len(rest) == npred:
            preds, comm = rest, [0] * npred
        elif len(rest) == 2 * npred:
            preds, comm = rest[0::2], rest[1::2]
        else:
            raise SimschedError(f"task {tid} declares {npred} predecessors but lists {len(rest)} numbers",
                                file=path, line=line)
        for p, c in zip(preds, comm):
            if not 0 <= p < total:
                raise SimschedError(f"task {tid}: predecessor {p} does not exist (ids are 0..{total - 1})",
                                    file=path, line=line)
            if c < 0:
                raise SimschedError(f"task {tid}: communication cost {c} is negative", file=path, line=line)
            src.append(p)
            dst.append(tid)
            data.append(float(c))
        work[tid] = float(time)
    keep = list(range(total))
    if not keep_dummies:
        drop = {t for t in (0, total - 1) if work[t] == 0}
        keep = [t for t in keep if t not in drop]
        edges = [(s, d, c) for s, d, c in zip(src, dst, data) if s not in drop and d not in drop]
    else:
        edges = list(zip(src, dst, data))
    pos = {t: k for k, t in enumerate(keep)}
    with located(path):
        return TaskGraph([str(t) for t in keep], [(pos[s], pos[d]) for s, d, _ in edges],
                         [c for *_, c in edges], work=[work[t] for t in keep])


def to_stg(graph: TaskGraph) -> str:
    """The graph in STG form with communication costs (pairs), adding dummy entry and exit tasks.

    Work and data are rounded to integers (the format has no fractions); task names are replaced by
    their index + 1.
    """
    g = graph
    n = g.n_tasks
    lines = [str(n), "0 0 0"]
    for t in range(n):
        es = g.pred_edges[g.pred_ptr[t]:g.pred_ptr[t + 1]]
        if es.size:
            pairs = " ".join(f"{int(g.edge_src[e]) + 1} {int(round(float(g.edge_data[e])))}" for e in es)
            lines.append(f"{t + 1} {int(round(float(g.work[t])))} {es.size} {pairs}")
        else:
            lines.append(f"{t + 1} {int(round(float(g.work[t])))} 1 0 0")
    exits = [int(t) + 1 for t in g.exit_tasks]
    lines.append(f"{n + 1} 0 {len(exits)} " + " ".join(f"{t} 0" for t in exits))
    lines.append("# written by simsched")
    return "\n".join(lines) + "\n"


def write_stg(graph: TaskGraph, path: str | Path) -> None:
    """Write :func:`to_stg` atomically."""
    atomic_write_text(path, to_stg(graph))


@dataclass(frozen=True)
class PublishedValue:
    """One row of an STG optimum table: graph ``file`` (relative to the table's set), ``processors``,
    the best published ``lower`` and ``upper`` bounds (equal when the optimum is proven)."""

    file: str
    processors: int
    lower: int
    upper: int

    @property
    def proven(self) -> bool:
        return self.lower == self.upper


def read_stg_optima(path: str | Path) -> list[PublishedValue]:
    """An STG optimum table: CSV rows ``file,p,opt`` (proven) or ``file,p,lower,upper`` (open), no
    header (the form of the set's ``Optimal_values/Case*_OPT.csv``).  Errors name the file and the
    line.  O(rows)."""
    out = []
    for k, raw in enumerate(read_text(path).splitlines(), start=1):
        cells = [c.strip() for c in raw.split(",")]
        if not raw.strip():
            continue
        if len(cells) not in (3, 4):
            raise SimschedError(f"expected 'file,p,opt' or 'file,p,lower,upper', got {len(cells)} fields",
                                file=path, line=k)
        p, *values = _ints(cells[1:], path, k)
        lower, upper = values[0], values[-1]
        if p < 1 or lower < 0 or upper < lower:
            raise SimschedError(f"need p >= 1 and 0 <= lower <= upper, got p={p}, {lower}..{upper}", file=path, line=k)
        out.append(PublishedValue(cells[0], p, lower, upper))
    return out
