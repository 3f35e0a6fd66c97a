"""Reading and writing tables of result rows as CSV (standard library) or Parquet (pyarrow).

Rows are dicts; the columns of :data:`simsched.run.columns.FIXED` have fixed types (metrics float,
``point``/``seed``/``tasks`` int, ids and ``error`` text) and every other column is a study override
field whose type is inferred (int, float, bool or text).  A CSV round trip gives back the same rows:
floats are written with ``repr`` (exact), a missing value is an empty cell.  Files are written with
:func:`simsched.outputs.atomic_write`.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from simsched import limits
from simsched.errors import SimschedError, shown
from simsched.extras import install_hint
from simsched.outputs import atomic_write
from simsched.run.columns import ENERGY_METRICS, FIXED, GRAPH_METRICS, KNOWN, METRICS, STREAM_METRICS, TAIL
from simsched.run.document import SIGNED_METRICS

SUFFIXES = (".csv", ".parquet")
_INTS = ("point", "seed", "tasks")
_TEXT = ("task_id", "point_id", "scheduler", "error", "checkpoint", "warning", "run_id", "version", "digest")


def table_format(path: str | Path) -> str:
    """``"csv"`` or ``"parquet"`` from the suffix; :class:`SimschedError` for anything else."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise SimschedError(f"{path}: a results file must end in .csv or .parquet")
    return suffix[1:]


def pyarrow_module() -> Any:
    """``pyarrow`` (and ``pyarrow.parquet``), or a clear message naming the extra that provides it."""
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise SimschedError("Parquet results need pyarrow, from the 'study' extra: "
                            f"{install_hint('study')} (or name a .csv results file)") from None
    return pyarrow


def columns_of(rows: Sequence[dict[str, Any]], fields: Sequence[str] = ()) -> list[str]:
    """Column order: the fixed head, the override fields (``fields`` first, then any other extra
    column in first-seen order), the fixed middle and metrics, the stream and energy metrics some row has
    (none for a study without job streams or power models), then the fixed tail.  O(rows x columns)."""
    extra = list(dict.fromkeys([*fields, *(k for r in rows for k in r if k not in KNOWN)]))
    optional = [m for m in (*STREAM_METRICS, *ENERGY_METRICS) if any(m in r for r in rows)]
    head, middle = FIXED[:3], FIXED[3:len(FIXED) - len(TAIL)]
    return [*head, *extra, *middle, *optional, *TAIL]


def _kind(values: list[Any]) -> str:
    """Inferred type of an override column: int, float, bool or str."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "bool"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return "int" if all(isinstance(v, int) for v in present) else "float"
    return "str"


def _kinds(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> dict[str, str]:
    out = {}
    for c in columns:
        if c in METRICS:
            out[c] = "float"
        elif c in _INTS:
            out[c] = "int"
        elif c in _TEXT:
            out[c] = "str"
        else:
            out[c] = _kind([r.get(c) for r in rows])
    return out


def _coerce(value: Any, kind: str) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value) and kind != "float"):
        return None
    if kind == "float":
        return float(value)
    if kind == "int":
        return int(value)
    if kind == "bool":
        return bool(value)
    return str(value)


def write_table(path: str | Path, rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> Path:
    """Write ``rows`` (``columns`` in this order) to ``path`` atomically, CSV or Parquet by suffix."""
    kinds = _kinds(rows, columns)
    if table_format(path) == "parquet":
        pa = pyarrow_module()
        types = {"float": pa.float64(), "int": pa.int64(), "bool": pa.bool_(), "str": pa.string()}
        arrays = {c: pa.array([_coerce(r.get(c), kinds[c]) for r in rows], type=types[kinds[c]]) for c in columns}
        table = pa.table(arrays)
        return atomic_write(path, lambda fh: pa.parquet.write_table(table, fh))
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(columns)
    for r in rows:
        writer.writerow(["" if (v := _coerce(r.get(c), kinds[c])) is None else repr(v) if isinstance(v, float)
                         else v for c in columns])
    return atomic_write(path, lambda fh: fh.write(text.getvalue().encode("utf-8")))


def _parse_cell(text: str, column: str, as_text: Collection[str] = ()) -> Any:
    if column in as_text:
        return text
    if column in METRICS:
        return float(text) if text else math.nan
    if column in _INTS:
        return int(text) if text else None
    if column in _TEXT:
        return text
    if text == "":
        return None
    if text in ("True", "False"):
        return text == "True"
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


_REQUIRED_CELLS = ("task_id", "point", "point_id", "scheduler", "seed")
"""Columns whose cells may not be empty in any row (a sweep always fills them)."""

KEY_COLUMNS = (*_REQUIRED_CELLS, "makespan", "error")
"""Columns every reader of a results file uses (makespan: the default metric of summarize, plot and
report); the other metrics a command reads are added by the command (``need``)."""



def check_metrics(values: dict[str, Any], p: Path, line: int | None, *, row: int | None = None,
                  columns: Sequence[str] = METRICS) -> None:
    """The metrics of one results row are what a sweep writes: numbers (``bool`` is not one), NaN
    only where undefined (a failed run's metrics; ``deadline_miss_rate`` without deadlines), never
    infinite, at least 0 (except :data:`~simsched.run.document.SIGNED_METRICS`), and a makespan for
    every run without an error; point, seed and tasks whole numbers of at least 0.  ``columns``: the
    metric columns the file has (all by default).  :class:`SimschedError` naming the file, line
    (``row`` for Parquet) and column.  O(columns), a few comparisons for each ordinary value."""
    limit = limits.MAX_VALUE
    for column in columns:
        value = values.get(column)
        if value is None or (value.__class__ is float and 0.0 <= value <= limit):
            continue  # the usual cell: a finite measurement (NaN fails the comparison and is checked below)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise SimschedError(f"{str(value)[:40]!r} is not a number" + (f" (row {row})" if row is not None else ""),
                                field=column, file=p, line=line)
        if math.isnan(value):
            continue
        if abs(value) > limit:
            raise SimschedError(f"{value!r} is not a finite number a run can measure", field=column, file=p,
                                line=line)
        if value < 0 and column not in SIGNED_METRICS:
            raise SimschedError(f"{value!r} is negative; a run's {column} is at least 0", field=column, file=p,
                                line=line)
    for column in _INTS:  # point index, seed, task count
        value = values.get(column)
        if value is not None and (value.__class__ is not int or not 0 <= value <= limits.MAX_INT):
            raise SimschedError(f"{shown(value, 40)} is not a whole number from 0 to 2**63 - 1", field=column,
                                file=p, line=line)
    makespan = values.get("makespan")
    if not values.get("error") and (makespan is None or makespan != makespan):
        raise SimschedError("the run has no error but no makespan; give the results file a sweep wrote",
                            field="makespan", file=p, line=line)


def _missing(header: Sequence[str], need: Sequence[str], p: Path, line: int | None, checked: bool = True) -> None:
    missing = [c for c in dict.fromkeys([*(KEY_COLUMNS if checked else _REQUIRED_CELLS), *need]) if c not in header]
    if missing:
        first = "not a simsched results file: " if "task_id" in missing else ""
        raise SimschedError(f"{first}the header has no {missing[0]!r} column"
                            + (f" (and {len(missing) - 1} more missing)" if len(missing) > 1 else "")
                            + "; give the results file a sweep wrote (simsched sweep), or choose another metric",
                            file=p, line=line, field=missing[0])


def _read_csv(p: Path, need: Sequence[str] = (), checked: bool = True,
              lines: list[int | None] | None = None, as_text: Collection[str] = ()) -> list[dict[str, Any]]:
    """Rows of results CSV ``p``, every field a reader needs checked first: the header holds the
    :data:`KEY_COLUMNS` and the ``need`` columns, each row has exactly the header's number of cells
    (a truncated file ends mid-row), ids, scheduler, point and seed are filled, and each cell parses
    as its column's type (the ``as_text`` columns: as text).  ``lines`` (when given) receives the line of
    each row.  :class:`SimschedError`
    naming the file, line and column.  O(size)."""
    raw = limits.read_input(p)
    try:
        text = raw.decode("utf-8-sig")  # a spreadsheet's byte-order mark is not part of the first column
    except UnicodeDecodeError as exc:
        raise SimschedError(f"not UTF-8 text (byte {exc.start}); give the results file a sweep wrote",
                            file=p, line=raw[: exc.start].count(b"\n") + 1) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        if header is None:
            raise SimschedError("the results file has no rows (it is empty); give the results file a sweep wrote",
                                file=p)
        _missing(header, need, p, 1, checked)
        if len(set(header)) < len(header):
            dup = next(c for c in header if header.count(c) > 1)
            raise SimschedError(f"the column {dup!r} appears twice in the header", file=p, line=1, field=dup)
        metric_columns = [c for c in header if c in METRICS]
        rows = []
        for cells in reader:
            line = reader.line_num
            if not cells:
                continue
            if len(cells) != len(header):
                raise SimschedError(f"the row has {len(cells)} cells, the header {len(header)} (a truncated or "
                                    f"edited file?); re-run the sweep with --resume into a new file, or delete "
                                    f"this line", file=p, line=line,
                                    field=header[min(len(cells), len(header)) - 1] if cells else None)
            row = {}
            for column, cell in zip(header, cells):
                if column in _REQUIRED_CELLS and cell == "":
                    raise SimschedError("the cell is empty; every row of a results file has it", file=p,
                                        line=line, field=column)
                try:
                    row[column] = _parse_cell(cell, column, as_text)
                except ValueError:
                    want = "a number" if column in METRICS else "an integer"
                    raise SimschedError(f"{cell[:40]!r} is not {want}", file=p, line=line, field=column) from None
            if checked:
                check_metrics(row, p, line, columns=metric_columns)
            rows.append(row)
            if lines is not None:
                lines.append(line)
    except csv.Error as exc:
        raise SimschedError(f"malformed CSV ({exc})", file=p, line=reader.line_num) from None
    return rows


def read_table(path: str | Path, need: Sequence[str] = (), *, checked: bool = True,
               lines: list[int | None] | None = None, as_text: Collection[str] = ()) -> list[dict[str, Any]]:
    """The rows of a CSV or Parquet results file (NaN for metrics of failed runs).  :class:`SimschedError`
    for an unreadable or malformed file, or one without the :data:`KEY_COLUMNS` or the ``need``
    columns, naming the line and column where it can (see :func:`_read_csv`).  ``checked=False``
    (a capacity search's store, whose days may measure ``inf``) needs only the ids, scheduler and
    seed columns and leaves the metric cells as they parse (its own reader checks them:
    :mod:`simsched.capacity.daystore`).  ``lines`` (when given) receives each row's line in a CSV file
    (``None`` for each row of a Parquet file), to locate what a later check finds; the ``as_text`` columns
    of a CSV file are read as text (a digest of hex digits is not a number)."""
    p = Path(path)
    fmt = table_format(p)
    if not p.exists():
        raise SimschedError("no such results file", file=p)
    try:
        if fmt == "parquet":
            pa = pyarrow_module()
            limits.check_file_size(p)
            table = pa.parquet.read_table(p)
            _missing(table.column_names, need, p, None, checked)
            rows = table.to_pylist()
            if lines is not None:
                lines.extend([None] * len(rows))
            for k, row in enumerate(rows):
                if checked:
                    check_metrics(row, p, None, row=k)
        else:
            rows = _read_csv(p, need, checked, lines, as_text)
    except SimschedError:
        raise
    except Exception as exc:
        raise SimschedError(f"cannot read the results file: {type(exc).__name__}: {exc}", file=p) from None
    for r in rows:
        for m in GRAPH_METRICS:
            if r.get(m) is None:
                r[m] = math.nan
        if r.get("error") is None:
            r["error"] = ""
    if rows and "task_id" not in rows[0]:
        raise SimschedError("not a simsched results file (no task_id column)", file=p)
    return rows
