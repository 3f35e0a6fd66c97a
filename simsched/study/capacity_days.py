"""A capacity search's days on a sweep's executor, saved in a sweep's results store, resumable after a kill.

``simsched capacity`` simulates (variant, capacity, day) triples: the search
(:mod:`simsched.run.capacity`, :mod:`simsched.run.mix`) hands each round of them to a
:class:`~simsched.run.capacity.DayRunner`.  This module gives it two more runners, which the command
line stacks:

* :class:`ExecutorDays`: the days run on a :mod:`simsched.study.executors` executor — the local
  process pool of ``--workers N`` or a Dask cluster of ``--dask`` — one day per chunk, executed by
  :func:`run_days`, which rebuilds the model in the worker from its plain-data ``source``
  (:func:`rebuild_model`, once per worker process and model).  Days a decided level no longer needs
  are cancelled before they start.
* :class:`StoredDays`: every finished day is appended to a :class:`~simsched.study.store.ResultsStore`
  (``--results PATH``: crash-safe part files, a lock, an identity, compaction at the end) and a day
  already there is not simulated again (``--resume``).  A row's ``task_id`` hashes the model's
  *fingerprint* (the scenario data without its ``capacity:`` section, the model's kind and what it
  sizes), the variant, the capacity and the seed: a day is reused exactly when it would simulate the
  same thing, whatever the objective; its metrics are a JSON object in the ``metrics`` column, so they
  come back bit for bit (``inf`` included) and the answer after a resume is the one a run without a
  kill gives.

A day's metrics are a deterministic function of the model source, variant, capacity and seed, so
the answer is the same on every runner (a test holds serial and ``--workers 2`` JSON equal apart from
wall times).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from simsched.errors import SimschedError
from simsched.study.store import ResultsStore
from simsched.study.work import GRAPH_METRICS

Request = tuple[str, Any, int]
_MODELS: dict[str, Any] = {}
_MODELS_LIMIT = 16


def fingerprint(source: Mapping[str, Any]) -> str:
    """16 hex digits of the SHA-256 of a model source (canonical JSON).  O(size of the source)."""
    text = json.dumps(source, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def capacity_key(capacity: Any) -> str:
    """A capacity as text: the count, or a mix's counts joined by ``+``."""
    return "+".join(str(int(c)) for c in capacity) if isinstance(capacity, (tuple, list)) else str(int(capacity))


def task_id(print_: str, variant: str, capacity: Any, seed: int) -> str:
    """The results-store id of one day: 16 hex digits of the SHA-256 of what it simulates."""
    text = json.dumps([print_, variant, capacity_key(capacity), int(seed)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def rebuild_model(source: Mapping[str, Any]) -> Any:
    """The capacity model ``source`` describes (:func:`simsched.run.capacity.model_source`), built
    as the command built it, from plain data.  Errors are those of building it the first time."""
    from simsched.yamlio import YamlDocument

    kind = source["kind"]
    if kind == "autotuning":
        from simsched.run.capacity import AutotuneModel

        return AutotuneModel(source["section"], quantiles=source["quantiles"])
    doc = YamlDocument(dict(source["data"]), {}, Path(source["file"]) if source["file"] else None)
    if kind == "task-graph":
        from simsched.run.capacity import TaskGraphModel

        return TaskGraphModel(doc, source["resource"])
    if kind == "mix":
        from simsched.run.mix import MixModel

        return MixModel(doc, source["mix"], field=source["field"])
    if kind == "batch":
        from simsched.run.batch import BatchCapacityModel
        from simsched.scenario import parse_scenario

        return BatchCapacityModel(parse_scenario(doc))
    raise SimschedError(f"unknown capacity model kind {kind!r}")


def _model(chunk: Mapping[str, Any]) -> Any:
    key = chunk["fingerprint"]
    if key not in _MODELS:
        if len(_MODELS) >= _MODELS_LIMIT:
            _MODELS.clear()
        _MODELS[key] = rebuild_model(chunk["source"])
    return _MODELS[key]


def run_days(chunk: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What a worker runs: ``{"i": index, "metrics": {...}, "run_s": seconds}`` for each day
    ``(index, variant, capacity, seed)`` of ``chunk``, or ``{"i": index, "error": text}`` for a day
    that raised (the command stops with it, as it would have here).  O(days of the chunk)
    simulations; the model is rebuilt once per process and source."""
    out: list[dict[str, Any]] = []
    try:
        model = _model(chunk)
    except Exception as exc:
        return [{"i": i, "error": _describe(exc)} for i, *_ in chunk["days"]]
    for i, variant, capacity, seed in chunk["days"]:
        t0 = time.perf_counter()
        try:
            metrics = model(variant, tuple(capacity) if isinstance(capacity, list) else capacity, seed)
        except Exception as exc:
            out.append({"i": i, "error": _describe(exc)})
            continue
        out.append({"i": i, "metrics": metrics, "run_s": time.perf_counter() - t0})
    return out


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if isinstance(exc, SimschedError) else f"{type(exc).__name__}: {text}"


class ExecutorDays:
    """Days on a :mod:`simsched.study.executors` executor (not yet entered: :meth:`__enter__` starts
    it, :meth:`__exit__` stops it).  One day per chunk, submitted a round at a time."""

    def __init__(self, executor: Any) -> None:
        self.executor = executor
        self.description = executor.description

    def __enter__(self) -> ExecutorDays:
        self.executor.__enter__()
        self.description = self.executor.description
        return self

    def __exit__(self, *exc: object) -> None:
        self.executor.__exit__(*exc)

    def run(self, model: Any, requests: Sequence[Request],
            skip: Callable[[int], bool]) -> Iterator[tuple[int, dict[str, float]]]:
        """Every request not skipped, in completion order (see :class:`~simsched.run.capacity.DayRunner`).
        A day that raised in its worker raises :class:`SimschedError` with its message."""
        source = model.source
        key = fingerprint(source)
        chunks = [{"fingerprint": key, "source": source, "days": [(i, v, c, s)]}
                  for i, (v, c, s) in enumerate(requests)]
        results = self.executor.results(chunks, run_days, lambda chunk: skip(chunk["days"][0][0]))
        try:
            for _chunk, rows in results:
                for row in rows:
                    if "error" in row:
                        raise SimschedError(row["error"])
                    yield row["i"], row["metrics"]
        finally:
            results.close()


class StoredDays:
    """Days from a results store at ``path``, the others from ``inner`` (appended to the store as
    they finish, at most ``flush_s`` seconds apart and at the end of every round).  The store is
    opened on the first round (after the question was validated): without ``resume`` it must not
    exist; with it, it must be this scenario's (the sweep's identity check).  :meth:`finish` compacts
    it; :meth:`close` releases it, keeping what finished."""

    def __init__(self, inner: Any, path: str | Path, *, resume: bool, name: str, option: str = "--results",
                 flush_s: float = 1.0) -> None:
        self.inner, self.resume, self.name, self.flush_s = inner, resume, name, flush_s
        self.store = ResultsStore(path, option=option, checked=False)
        self.description = getattr(inner, "description", "this process")
        self.run_id = uuid.uuid4().hex[:12]
        self.done: dict[str, dict[str, float]] | None = None
        self.order: dict[str, None] = {}
        self.reused = self.ran = 0
        self._buffer: list[dict[str, Any]] = []
        self._last = time.perf_counter()
        self._fresh = False

    def _open(self, key: str) -> None:
        if self.done is not None:
            return
        self._fresh = not self.store.exists() and not self.store.identity_file.exists()
        identity = {"study": f"capacity search of {self.name}", "points": [key], "kind": "capacity"}
        self.store.open(resume=self.resume, identity=identity)
        self.done = {}
        if self.store.exists():
            for row in self.store.rows():
                text = row.get("metrics")
                if row.get("error") or not isinstance(text, str):
                    continue
                try:
                    metrics = json.loads(text)
                except ValueError:
                    continue
                if isinstance(metrics, dict):
                    self.done[str(row["task_id"])] = {str(k): float(v) for k, v in metrics.items()}

    def run(self, model: Any, requests: Sequence[Request],
            skip: Callable[[int], bool]) -> Iterator[tuple[int, dict[str, float]]]:
        """The stored days first (request order), then the others from ``inner``, each saved."""
        key = fingerprint(model.source)
        self._open(key)
        assert self.done is not None
        ids = [task_id(key, v, c, s) for v, c, s in requests]
        self.order.update(dict.fromkeys(ids))
        missing = []
        try:
            for i, tid in enumerate(ids):
                if tid in self.done:
                    if not skip(i):
                        self.reused += 1
                        yield i, self.done[tid]
                else:
                    missing.append(i)
            sub = [requests[i] for i in missing]
            days = self.inner.run(model, sub, lambda j: skip(missing[j]))
            try:
                for j, metrics in days:
                    i = missing[j]
                    self._save(key, ids[i], requests[i], metrics)
                    yield i, metrics
            finally:
                close = getattr(days, "close", None)
                if close is not None:
                    close()
        finally:
            self._flush()

    def _save(self, key: str, tid: str, request: Request, metrics: Mapping[str, float]) -> None:
        variant, capacity, seed = request
        assert self.done is not None
        self.done[tid] = dict(metrics)
        self.ran += 1
        row: dict[str, Any] = {"task_id": tid, "point": 0, "point_id": key, "capacity": capacity_key(capacity),
                               "scheduler": variant, "seed": int(seed), "tasks": None}
        row.update({m: float(metrics.get(m, math.nan)) for m in GRAPH_METRICS})
        row.update(metrics=json.dumps(dict(metrics), sort_keys=True), error="", checkpoint="", warning="",
                   run_id=self.run_id, run_s=None)
        self._buffer.append(row)
        if time.perf_counter() - self._last >= self.flush_s or len(self._buffer) >= 500:
            self._flush()

    def _flush(self) -> None:
        if self._buffer:
            self.store.append(self._buffer, self.run_id, ())
        self._buffer, self._last = [], time.perf_counter()

    def finish(self) -> int:
        """Compact the store (the search's days in the order it asked for them); the rows written."""
        self._flush()
        if self.done is None:
            return 0
        return self.store.compact(list(self.order), ())

    def close(self) -> None:
        """Save what finished and release the store (a store this run created and left empty is removed)."""
        with contextlib.suppress(Exception):
            self._flush()
        self.store.close()
        if self._fresh and not self.store.exists():
            with contextlib.suppress(OSError):
                self.store.identity_file.unlink()
