"""The CSV traces a stream scenario names: an arrival trace (``time,job[,deadline][,priority]``) and a
down-interval trace (``processor,start,end``).  Every problem names the file, the line and the column;
a name too long or a symbolic-link loop is an error like a missing file, never an exception.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from simsched import limits
from simsched.errors import SimschedError
from simsched.fileio import not_a_file, note_read
from simsched.scenario.stream import JobSource, TraceRow


def read_arrival_trace(path: Path, sources: list[JobSource], m: int) -> list[TraceRow]:
    """Rows of an arrival trace CSV (header ``time,job[,deadline][,priority]``).  A ``job`` naming
    a file adds a source for it (form from the suffix, path relative to the CSV).  Errors name the
    file and line: unsorted or negative times, a missing file, a deadline not after its arrival.
    O(rows)."""
    from simsched.scenario.workload import WorkloadSpec
    from simsched.workloads.importers import IMPORTERS, detect_form

    if not _exists(path):
        raise SimschedError(f"arrival trace not found: {_short_text(str(path))}")
    by_name = {s.name: i for i, s in enumerate(sources)}
    rows: list[TraceRow] = []
    _, records = limits.read_csv_records(path, required=("time", "job"), optional=("deadline", "priority"),
                                         what="an arrival trace",
                                         max_rows=(limits.current().max_jobs, "max_jobs"))
    last = 0.0
    for line, rec in records:
        def number(key: str, rec: dict[str, str] = rec, line: int = line) -> float | None:
            return _cell_number(rec.get(key, ""), path, line, key)

        t = number("time")
        if t is None or t < 0:
            raise SimschedError("must be a number >= 0", file=path, line=line, field="time")
        if t < last:
            raise SimschedError(f"times must be sorted: {t:g} comes after {last:g}", file=path, line=line,
                                field="time")
        last = t
        job = rec["job"]
        if not job:
            raise SimschedError("the cell is empty: give a workflow file or the name of a jobs entry",
                                file=path, line=line, field="job")
        if job in by_name:
            k = by_name[job]
        else:
            file = Path(job) if Path(job).is_absolute() else path.parent / job
            why = not_a_file(file)  # never opened: a FIFO or a device cannot block
            if why is not None and (why == "does not exist" or why.startswith("is not a usable path")):
                raise SimschedError(f"job file not found: {_short_text(str(file))} (nor a jobs entry named "
                                    f"{_short_text(job)!r})", file=path, line=line, field="job")
            if why is not None:  # a folder, a FIFO, a device: said as such
                raise SimschedError(f"{_short_text(str(file))}: {why}", file=path, line=line, field="job")
            try:
                form = detect_form(file)
            except SimschedError as exc:
                raise SimschedError(exc.message, file=path, line=line, field="job") from None
            func = IMPORTERS[form]
            note_read(file)  # imported when the stream is drawn
            spec = WorkloadSpec(form, {"path": str(file)}, lambda _m, _r, f=func, p=file: f(p), ())
            sources.append(JobSource(spec, 0.0, 0.0, file.name))
            k = by_name[job] = len(sources) - 1
        deadline = number("deadline")
        if deadline is not None and deadline <= t:
            raise SimschedError(f"deadline {deadline:g} is not after the arrival {t:g}", file=path, line=line,
                                field="deadline")
        rows.append(TraceRow(t, k, deadline, number("priority")))
    if not rows:
        raise SimschedError("the arrival trace has no jobs", file=path)
    return rows


def read_down_trace(path: Path, names: Sequence[str]) -> tuple[tuple[int, float, float], ...]:
    """``(processor index, start, end)`` rows of a CSV with header ``processor,start,end``; errors
    name the file and line (unknown processor, ``start >= end``, unsorted starts).  O(rows)."""
    if not _exists(path):
        raise SimschedError(f"down-interval trace not found: {_short_text(str(path))}")
    index = {n: i for i, n in enumerate(names)}
    out = []
    _, records = limits.read_csv_records(path, required=("processor", "start", "end"), what="a down-interval trace")
    last = 0.0
    for line, rec in records:
        if rec["processor"] not in index:
            raise SimschedError(f"no processor named {_short_text(rec['processor'], 40)!r}; the platform's: "
                                f"{_some(names)}", file=path, line=line, field="processor")
        a, b = (_cell_number(rec[key], path, line, key, required=True) for key in ("start", "end"))
        assert a is not None and b is not None
        if not 0 <= a < b:
            raise SimschedError(f"a down interval needs 0 <= start < end, got [{a:g}, {b:g}]", file=path,
                                line=line, field="start" if not 0 <= a else "end")
        if a < last:
            raise SimschedError(f"start times must be sorted: {a:g} comes after {last:g}", file=path, line=line,
                                field="start")
        last = a
        out.append((index[rec["processor"]], a, b))
    return tuple(out)


def _short_text(text: str, k: int = 80) -> str:
    return text if len(text) <= k else text[:k] + f"... ({len(text):,} characters)"


def _exists(path: Path) -> bool:
    """``path.exists()`` (without following a last symlink loop), False for a name too long."""
    try:
        return path.exists() or path.is_symlink()
    except (OSError, ValueError):
        return False


def _cell_number(text: str, path: Path, line: int, key: str, *, required: bool = False) -> float | None:
    """A CSV cell as a number under the shared number rule (finite, magnitude <= MAX_VALUE); None for an
    empty cell (an error when ``required``).  Errors name the file, line and column.  O(len(text))."""
    if not text:
        if required:
            raise SimschedError("the cell is empty: give a number", file=path, line=line, field=key)
        return None
    try:
        value = float(text)
    except ValueError:
        raise SimschedError(f"{_short_text(text, 40)!r} is not a number", file=path, line=line, field=key) from None
    if not limits.finite_value(value):
        raise SimschedError(f"must be finite and at most {limits.MAX_VALUE:g} in magnitude, got "
                            f"{_short_text(text, 40)}", file=path, line=line, field=key)
    return value


def _some(names: Sequence[str], k: int = 8) -> str:
    """``a, b, c`` (the first ``k`` names, then ``... (N in all)``)."""
    return ", ".join(names[:k]) + (f", ... ({len(names)} in all)" if len(names) > k else "")

