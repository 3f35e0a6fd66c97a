"""The identity of a capacity day saved in a results store, and the one reader that verifies a store
before a search trusts it.

A day of ``simsched capacity --results PATH`` is a row of a :class:`~simsched.run.store.ResultsStore`
with, beside the store's usual columns:

* ``point_id`` — the **scenario digest** (:func:`scenario_digest`): the scenario's canonical content
  without its ``capacity:`` section (which changes no simulation), the model's kind and what it sizes,
  and the content of every file the scenario reads (job files, traces, checkpoints) named relative to
  it — not the scenario's path, so a scenario moved with its files keeps its days;
* ``scheduler``, ``capacity``, ``seed`` — which day;
* ``version`` — the code version that simulated it (:func:`~simsched.run.provenance.code_version`);
* ``metrics`` — the day's metrics as a JSON object, bit for bit (``NaN``/``Infinity`` included: a day
  without deadlines has no deadline-miss rate, a batch day that cannot run is infinite on every metric);
* ``task_id`` — the digest of the day's identity (:func:`day_id`), and ``digest`` — the digest of the
  identity and the exact text of the metrics cell (:func:`row_digest`).

:func:`read_days` reads every row (the compacted file and the part files of an interrupted search) and
refuses the store — one line naming the file, line and column, before any day runs — when a row lacks
the identity (a store of an earlier simsched: it says how to recompute), a metrics cell is not a JSON
object of numbers (text, null, a list, an object, nesting deeper than Python can parse), a metric
column disagrees with the metrics cell, the ids or the digest do not verify (its metrics or identity
were edited after they were computed), or a day appears twice with other metrics.

**Refused, not recomputed**: a row that does not verify was changed by someone or something after
simsched wrote it; the other rows of that file cannot be trusted more than it (an edit that also fixed
the digest would go unseen), and recomputing it silently would hide that the file was changed.  The
user deletes the row (it is then simulated again) or the store.  **Recomputed, with one line**: a row
that verifies but was simulated by another code version is honest but stale; it is not reused, its
day is simulated again, and the store drops it when compacted.  O(rows x metrics).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simsched import limits
from simsched.errors import SimschedError, shown
from simsched.fileio import unrecorded
from simsched.run.columns import DAY_RECORD, GRAPH_METRICS
from simsched.run.provenance import DIGEST_HEX, digest, file_digests
from simsched.run.store import ResultsStore
from simsched.run.tables import read_table

IDENTITY = ("point_id", "scheduler", "capacity", "seed", *DAY_RECORD)
"""Columns every stored day has (with ``task_id``)."""

TEXT = ("capacity", *DAY_RECORD)
"""Columns read as text whatever they hold (a digest of hex digits is not a number)."""

_CAPACITY = re.compile(r"[0-9]{1,9}(\+[0-9]{1,9}){0,63}")
_HEX = re.compile(f"[0-9a-f]{{{DIGEST_HEX}}}")


def scenario_digest(source: Mapping[str, Any], inputs: Iterable[str | Path] = ()) -> str:
    """The identity of what a capacity model simulates: its plain-data ``source``
    (:func:`~simsched.capacity.models.base.model_source`) without the scenario's path, and the content
    of the ``inputs`` (the files the scenario read while it was loaded, its own file excepted) named
    relative to the scenario's directory.  O(size of the source and the files)."""
    file = source.get("file")
    base = Path(file).parent if file else None
    others = [p for p in inputs if file is None or Path(p).resolve() != Path(file).resolve()]
    model = {k: v for k, v in source.items() if k != "file"}
    return digest({"model": model, "files": file_digests(sorted(map(str, others)), base)})


def capacity_key(capacity: Any) -> str:
    """A capacity as text: the count, or a mix's counts joined by ``+`` (text as it is: read back)."""
    if isinstance(capacity, str):
        return capacity
    return "+".join(str(int(c)) for c in capacity) if isinstance(capacity, (tuple, list)) else str(int(capacity))


def day_id(scenario: str, variant: str, capacity: Any, seed: int, version: str) -> str:
    """The ``task_id`` of one day: the digest of what it simulates and of the code that simulated it."""
    return digest([scenario, variant, capacity_key(capacity), int(seed), version])


def row_digest(task: str, scenario: str, variant: str, capacity: str, seed: int, version: str, metrics: str) -> str:
    """The ``digest`` of a stored day: its ids and the exact text of its metrics cell."""
    return digest([task, scenario, variant, capacity, int(seed), version, metrics])


def metrics_text(metrics: Mapping[str, float]) -> str:
    """The metrics cell of a day: a JSON object with sorted keys (non-finite values as JSON's tokens)."""
    return json.dumps({str(k): float(v) for k, v in metrics.items()}, sort_keys=True)


def stored_row(scenario: str, variant: str, capacity: Any, seed: int, version: str, metrics: Mapping[str, float],
               run_id: str) -> dict[str, Any]:
    """The results-store row of one finished day (module docstring), its metrics also in the
    :data:`~simsched.run.columns.GRAPH_METRICS` columns for people and other readers."""
    tid = day_id(scenario, variant, capacity, seed, version)
    cap, text = capacity_key(capacity), metrics_text(metrics)
    row: dict[str, Any] = {"task_id": tid, "point": 0, "point_id": scenario, "capacity": cap, "scheduler": variant,
                           "seed": int(seed), "tasks": None}
    row.update({m: float(metrics.get(m, math.nan)) for m in GRAPH_METRICS})
    row.update(metrics=text, version=version, digest=row_digest(tid, scenario, variant, cap, int(seed), version, text),
               error="", checkpoint="", warning="", run_id=run_id, run_s=None)
    return row


@dataclass
class StoredContents:
    """What :func:`read_days` found: ``days`` (``task_id`` -> metrics) that verify and were simulated by
    this code version; ``stale`` the ``task_id`` of rows that verify but were simulated by another
    version (``versions``: which), to simulate again and drop; ``points`` the scenario digests."""

    days: dict[str, dict[str, float]] = field(default_factory=dict)
    stale: set[str] = field(default_factory=set)
    versions: set[str] = field(default_factory=set)
    points: set[str] = field(default_factory=set)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, str):
        return f"text {shown(value, 30)}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class _Place:
    """Where a row is: its file and line (CSV) or row number (Parquet), for one located line."""

    def __init__(self, file: Path, line: int | None, index: int) -> None:
        self.file, self.line, self.index = file, line, index

    def error(self, message: str, column: str | None = None) -> SimschedError:
        where = f" (row {self.index + 1})" if self.line is None else ""
        return SimschedError(message + where, file=self.file, line=self.line, field=column)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line is not None else f"{self.file} row {self.index + 1}"


def _metrics(cell: Any, place: _Place) -> dict[str, float]:
    """The metrics cell as ``{name: float}``: a JSON object whose values are numbers."""
    fix = "; a stored day's metrics are the numbers simsched computed: delete the row (its day is simulated again)"
    if not isinstance(cell, str):
        raise place.error(f"the cell is {_kind(cell)}, not a JSON object of metrics{fix}", "metrics")
    try:
        value = json.loads(cell)
    except RecursionError:
        raise place.error(f"the cell nests deeper than can be read, not a JSON object of metrics{fix}",
                          "metrics") from None
    except ValueError as exc:
        raise place.error(f"not JSON ({getattr(exc, 'msg', exc)} at character {getattr(exc, 'pos', 0)}){fix}",
                          "metrics") from None
    if not isinstance(value, dict) or not value:
        raise place.error(f"the cell holds {_kind(value)}, not a JSON object of metrics{fix}", "metrics")
    out = {}
    for name, v in value.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise place.error(f"the metric {shown(name, 40)} is {_kind(v)}, not a number{fix}", "metrics")
        out[name] = float(v)
    return out


def _same(a: Any, b: float) -> bool:
    return isinstance(a, (int, float)) and not isinstance(a, bool) and (a == b or (a != a and b != b))


def _verify(row: Mapping[str, Any], place: _Place) -> tuple[str, str, dict[str, float]]:
    """``(task_id, digest, metrics)`` of one row whose every identity cell is well formed and whose ids,
    digest and metric columns agree with its metrics cell; :class:`SimschedError` located otherwise."""
    for column in ("point_id", "scheduler", "capacity", "version", "digest", "task_id"):
        value = row.get(column)
        if not isinstance(value, str) or not value:
            raise place.error(f"the cell is {_kind(value) if value != '' else 'empty'}; every stored day records "
                              f"its {column} (delete the row: its day is simulated again)", column)
    seed = row.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= limits.MAX_INT:
        raise place.error(f"{shown(seed, 30)} is not a seed (a whole number from 0 to 2**63 - 1)", "seed")
    if not _CAPACITY.fullmatch(row["capacity"]):
        raise place.error(f"{shown(row['capacity'], 30)} is not a capacity (a count, or counts joined by +)",
                          "capacity")
    metrics = _metrics(row.get("metrics"), place)
    if str(row.get("error") or ""):
        raise place.error("a stored day has no error (a day that failed stops the search and is never saved)",
                          "error")
    for m in GRAPH_METRICS:
        if m in row and not _same(row[m], metrics.get(m, math.nan)):
            raise place.error(f"{shown(row[m], 30)} disagrees with the metrics cell "
                              f"({metrics.get(m, math.nan)!r}): the row was edited after simsched computed it; "
                              f"delete the row (its day is simulated again)", m)
    tid = day_id(row["point_id"], row["scheduler"], row["capacity"], seed, row["version"])
    expected = row_digest(tid, row["point_id"], row["scheduler"], row["capacity"], seed, row["version"],
                          row["metrics"])
    if row["task_id"] != tid or not _HEX.fullmatch(row["digest"]) or row["digest"] != expected:
        odd = [k for k, v in metrics.items() if not math.isfinite(v)]
        note = f" (its {', '.join(odd[:3])} {'is' if len(odd) == 1 else 'are'} not finite)" if odd else ""
        column = "task_id" if row["task_id"] != tid else "digest"
        raise place.error(f"the row does not verify{note}: its metrics or identity were changed after simsched "
                          f"computed them, and a store cannot change an answer; delete the row (its day is "
                          f"simulated again) or the store", column)
    return tid, expected, metrics


def old_store(path: Path, option: str) -> SimschedError:
    """The refusal of a store written before stored days carried their identity."""
    identity = path.with_name(path.name + ".study.json")
    return SimschedError(f"these days were saved by an earlier simsched, without the identity a stored day now "
                         f"carries (scenario digest, code version, digest), so they cannot be verified; recompute "
                         f"them: delete {path} and {identity.name}, or choose another {option}", file=path)


def read_days(store: ResultsStore, version: str) -> StoredContents:
    """Every row of ``store`` (compacted file first, then part files), verified (module docstring):
    :class:`SimschedError` with one located line for the first row that does not verify.  Rows of
    ``version`` go to :attr:`StoredContents.days`; verified rows of another version to ``stale``.  A
    day in two files with the same digest is a compaction cut short by a kill (read once); with other
    metrics, or twice in one file, it is refused.  The store's own files: read capped, unrecorded.
    O(rows x metrics)."""
    out = StoredContents()
    seen: dict[str, tuple[str, _Place]] = {}
    with unrecorded():
        files = ([store.path] if store.path.exists() else []) + store.part_files()
        for f in files:
            lines: list[int | None] = []
            rows = read_table(f, checked=False, lines=lines, as_text=TEXT)
            if rows:
                missing = [c for c in IDENTITY if c not in rows[0]]
                if "version" in missing or "digest" in missing:
                    raise old_store(store.path, store.option)
                if missing:
                    raise SimschedError(f"not the results store of a capacity search: the header has no "
                                        f"{missing[0]!r} column; choose another {store.option}", file=f,
                                        line=1 if lines[0] is not None else None, field=missing[0])
            here: set[str] = set()
            for k, row in enumerate(rows):
                place = _Place(f, lines[k], k)
                tid, check, metrics = _verify(row, place)
                if tid in here:
                    raise place.error(f"the day repeats the day of {seen[tid][1]} (the same scheduler, capacity "
                                      f"and seed): delete one of the two rows", "task_id")
                if tid in seen and seen[tid][0] != check:
                    raise place.error(f"the day is also in {seen[tid][1]} with other metrics: one of the two "
                                      f"was changed; delete both rows (the day is simulated again)", "task_id")
                here.add(tid)
                if tid in seen:
                    continue
                seen[tid] = (check, place)
                out.points.add(row["point_id"])
                if row["version"] == version:
                    out.days[tid] = metrics
                else:
                    out.stale.add(tid)
                    out.versions.add(row["version"])
    return out


def stale_note(contents: StoredContents, path: Path, version: str) -> str | None:
    """The one line that says how many stored days another code version simulated (None: none)."""
    n = len(contents.stale)
    if not n:
        return None
    others = ", ".join(sorted(contents.versions)[:3])
    return (f"{path}: {n} stored day{'s were' if n != 1 else ' was'} simulated by simsched {others}, not by this "
            f"version ({version}): simulated again, not reused")

