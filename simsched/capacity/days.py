"""Where a capacity search's days run: on an executor, in a results store, resumable after a kill.

``simsched capacity`` simulates (variant, capacity, day) triples: the search
(:mod:`simsched.capacity.search`, :mod:`simsched.capacity.mix`) hands each round of them to a
:class:`~simsched.capacity.search.DayRunner`.  This module gives it two more runners, which
:func:`days_on` stacks as the command line asks (:func:`where_days_run`):

* :class:`ExecutorDays`: the days run on a :mod:`simsched.run.executors` executor — the local
  process pool of ``--workers N`` or a Dask cluster of ``--dask`` — one day per chunk, executed by
  :func:`run_days`, which rebuilds the model in the worker from its plain-data ``source``
  (:func:`~simsched.capacity.models.rebuild_model`, once per worker process and model).  A chunk is
  handed out only when a worker frees up, the one the search ranks most likely needed first
  (:meth:`~simsched.capacity.search._Round.rank`), so a day a decided level no longer needs seldom
  starts (queued ahead, the days after a level's deciding miss ran anyway: 95 simulations on 2
  workers for one process's 70, now 71-72).
* :class:`StoredDays`: every finished day is appended to a :class:`~simsched.run.store.ResultsStore`
  (``--results PATH``: crash-safe part files, a lock, an identity, compaction at the end) and a day
  already there is not simulated again (``--resume``).  A row carries the day's identity
  (:mod:`simsched.capacity.daystore`): the digest of the scenario's content (without its ``capacity:``
  section, with the files it reads; not its path), the variant, capacity and seed, the code version
  that simulated it, and a digest of all that and its metrics — a day is reused exactly when it would
  simulate the same thing with the same code, whatever the objective; its metrics are a JSON object in
  the ``metrics`` column, so they come back bit for bit (``inf`` included) and the answer after a
  resume is the one a run without a kill gives.  A store whose rows do not verify is refused before
  any day runs (:func:`~simsched.capacity.daystore.read_days`); days another code version simulated
  are simulated again, with one line saying how many.

A day's metrics are a deterministic function of the model source, variant, capacity and seed, so
the answer is the same on every runner (a test holds serial and ``--workers 2`` JSON equal apart from
wall times).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
import uuid
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simsched.capacity.daystore import TEXT, day_id, read_days, scenario_digest, stale_note, stored_row
from simsched.capacity.models import rebuild_model
from simsched.capacity.search import IN_PROCESS, Rank, Request
from simsched.errors import SimschedError
from simsched.fileio import atomic_write_text
from simsched.outputs import check_output
from simsched.run.executors import executor_for, require_distributed
from simsched.run.provenance import code_version
from simsched.run.store import ResultsStore
from simsched.run.tables import SUFFIXES, pyarrow_module, table_format

_MODELS: dict[str, Any] = {}
_MODELS_LIMIT = 16


def fingerprint(source: Mapping[str, Any]) -> str:
    """16 hex digits of the SHA-256 of a model source (canonical JSON).  O(size of the source)."""
    text = json.dumps(source, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


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


def _here(model: Any, variant: str, capacity: Any, seed: int) -> dict[str, float]:
    """One day simulated in this process, failing as it would in a worker (:func:`run_days`)."""
    try:
        return model(variant, capacity, seed)
    except Exception as exc:
        raise SimschedError(_describe(exc)) from None


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if isinstance(exc, SimschedError) else f"{type(exc).__name__}: {text}"


def ready() -> bool:
    """What a pool worker runs first (:meth:`ExecutorDays.__enter__`): importing this module, which
    holds everything a day needs, is the worker's start-up."""
    return True


class ExecutorDays:
    """Days on a :mod:`simsched.run.executors` executor (not yet entered: :meth:`__enter__` starts
    it, :meth:`__exit__` stops it).  Days in chunks (:meth:`chunk_days`), at most one chunk per worker
    handed out at a time.

    A worker process spends its first second or so importing simsched (measured: 0.9 s of CPU, where
    a day of a small search takes 10-100 ms): while no worker of a local pool is ready yet, the days
    run here, in request order, and the executor takes over the rest once one is (a search smaller
    than the start-up costs no more than in one process; the days are the same wherever they run)."""

    def __init__(self, executor: Any) -> None:
        self.executor = executor
        self.description = executor.description
        self._ready: Callable[[], bool] = lambda: True
        self._timed = [0.0, 0]  # seconds and count of the days timed so far (here or in a worker)

    @property
    def slots(self) -> int:
        """How many days the executor runs at once (its workers; known once started): how far ahead
        the search looks (:func:`~simsched.capacity.search.lookahead`)."""
        return int(getattr(self.executor, "workers", None) or 1)

    def __enter__(self) -> ExecutorDays:
        self.executor.__enter__()
        self.description = self.executor.description
        warm_up = getattr(self.executor, "warm_up", None)
        if warm_up is not None:
            try:
                self._ready = warm_up(ready)
            except BaseException:
                self.executor.__exit__(None, None, None)
                raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.executor.__exit__(*exc)

    ranked = True
    """:meth:`run` takes a ``rank`` (:data:`~simsched.capacity.search.Rank`)."""

    def run(self, model: Any, requests: Sequence[Request], skip: Callable[[int], bool],
            rank: Rank | None = None) -> Iterator[tuple[int, dict[str, float]]]:
        """Every request not skipped, in completion order (see :class:`~simsched.capacity.search.DayRunner`):
        at most one chunk per worker handed out at a time, the lowest of ``rank`` first (request order
        without it), so that a day a decided level no longer needs is seldom started.  A day that
        raised in its worker raises :class:`SimschedError` with its message."""
        first = 0
        while first < len(requests) and not self._ready():  # the workers are still starting: run days here
            i, first = first, first + 1
            if not skip(i):
                t0 = time.perf_counter()
                day = _here(model, *requests[i])
                self._time(time.perf_counter() - t0)
                yield i, day
        source = model.source
        key = fingerprint(source)
        rest = [(i, v, c, s) for i, (v, c, s) in enumerate(requests) if i >= first]
        size = self.chunk_days(len(rest))
        chunks = [{"fingerprint": key, "source": source, "days": rest[k:k + size]} for k in range(0, len(rest), size)]
        chunk_rank = None
        if rank is not None:
            def chunk_rank(out: list[dict[str, Any]]) -> Callable[[dict[str, Any]], Any]:
                key = rank([d[0] for chunk in out for d in chunk["days"]])
                return lambda chunk: key(chunk["days"][0][0])

        results = self.executor.results(chunks, run_days, lambda chunk: all(skip(d[0]) for d in chunk["days"]),
                                        window=self.slots, rank=chunk_rank)
        try:
            for _chunk, rows in results:
                for row in rows:
                    if "error" in row:
                        raise SimschedError(row["error"])
                    self._time(row.get("run_s", 0.0))
                    yield row["i"], row["metrics"]
        finally:
            results.close()

    CHUNK_S = 0.05
    """Seconds of days a chunk aims at: a task handed to a worker costs a few milliseconds of pickling,
    pipes and thread wake-ups (more on a loaded machine), as much as a whole day of a small search."""

    def _time(self, seconds: float) -> None:
        self._timed[0] += seconds
        self._timed[1] += 1

    def chunk_days(self, n: int) -> int:
        """Days per chunk for ``n`` days: as many as :attr:`CHUNK_S` holds at the mean day so far (1
        before any day was timed), but at most a quarter of a worker's share, so every worker has
        work and a level that stops early leaves little handed out.  O(1)."""
        seconds, count = self._timed
        if not count or seconds <= 0:
            return 1
        aim = max(1, int(self.CHUNK_S / (seconds / count)))
        return max(1, min(aim, n // (4 * self.slots)))


class StoredDays:
    """Days from a results store at ``path``, the others from ``inner`` (appended to the store as
    they finish, at most ``flush_s`` seconds apart and at the end of every round).  The store is
    opened on the first round (after the question was validated): without ``resume`` it must not
    exist; with it, every row must verify (:func:`~simsched.capacity.daystore.read_days`) and the
    store must be this scenario's (the sweep's identity check).  ``inputs``: the files the scenario
    read when it was loaded (part of its digest); ``notice`` hears the line saying how many stored
    days another code version simulated.  :meth:`finish` compacts the store (without those days);
    :meth:`close` releases it, keeping what finished."""

    def __init__(self, inner: Any, path: str | Path, *, resume: bool, name: str, option: str = "--results",
                 flush_s: float = 1.0, inputs: Sequence[str | Path] = (),
                 notice: Callable[[str], None] | None = None) -> None:
        self.inner, self.resume, self.name, self.flush_s = inner, resume, name, flush_s
        self.inputs, self.notice = tuple(inputs), notice
        self.store = ResultsStore(path, option=option, checked=False, text=TEXT)
        self.description = getattr(inner, "description", "this process")
        self.run_id = uuid.uuid4().hex[:12]
        self.version = code_version()
        self.done: dict[str, dict[str, float]] | None = None
        self.stale: set[str] = set()
        self.order: dict[str, None] = {}
        self.reused = self.ran = 0
        self._digests: dict[str, str] = {}
        self._buffer: list[dict[str, Any]] = []
        self._last = time.perf_counter()
        self._fresh = False

    @property
    def slots(self) -> int:
        """The inner runner's (stored days come back at once)."""
        return int(getattr(self.inner, "slots", 1) or 1)

    def scenario(self, model: Any) -> str:
        """The scenario digest of ``model`` (:func:`~simsched.capacity.daystore.scenario_digest`), once per source."""
        key = fingerprint(model.source)
        if key not in self._digests:
            self._digests[key] = scenario_digest(model.source, self.inputs)
        return self._digests[key]

    def _open(self, key: str) -> None:
        if self.done is not None:
            return
        self._fresh = not self.store.exists() and not self.store.identity_file.exists()
        identity = {"study": f"capacity search of {self.name}", "points": [key], "kind": "capacity"}
        self.store.open(resume=self.resume)
        try:
            contents = read_days(self.store, self.version) if self.store.exists() else None
            if self.resume:
                self.store.check_identity(identity)
            atomic_write_text(self.store.identity_file, json.dumps(identity, indent=1))
        except BaseException:
            self.store.close()
            raise
        self.done = {}
        if contents is not None:
            self.done, self.stale = contents.days, contents.stale
            line = stale_note(contents, self.store.path, self.version)
            if line is not None and self.notice is not None:
                self.notice(line)

    @property
    def ranked(self) -> bool:
        """Whether the inner runner takes a ``rank``."""
        return bool(getattr(self.inner, "ranked", False))

    def run(self, model: Any, requests: Sequence[Request], skip: Callable[[int], bool],
            rank: Rank | None = None) -> Iterator[tuple[int, dict[str, float]]]:
        """The stored days first (request order), then the others from ``inner`` (ranked by ``rank``
        where it takes one), each saved."""
        key = self.scenario(model)
        self._open(key)
        assert self.done is not None
        ids = [day_id(key, v, c, s, self.version) for v, c, s in requests]
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
            if rank is not None and self.ranked:
                def inner_rank(out: Collection[int]) -> Callable[[int], Any]:
                    key = rank([missing[j] for j in out])
                    return lambda j: key(missing[j])

                days = self.inner.run(model, sub, lambda j: skip(missing[j]), rank=inner_rank)
            else:
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
        self._buffer.append(stored_row(key, variant, capacity, seed, self.version, metrics, self.run_id))
        if time.perf_counter() - self._last >= self.flush_s or len(self._buffer) >= 500:
            self._flush()

    def _flush(self) -> None:
        if self._buffer:
            self.store.append(self._buffer, self.run_id, ())
        self._buffer, self._last = [], time.perf_counter()

    def finish(self) -> int:
        """Compact the store (the search's days in the order it asked for them, without the days another
        code version simulated); the rows written."""
        self._flush()
        if self.done is None:
            return 0
        return self.store.compact(list(self.order), (), drop=self.stale)

    def close(self) -> None:
        """Save what finished and release the store (a store this run created and left empty is removed)."""
        with contextlib.suppress(Exception):
            self._flush()
        self.store.close()
        if self._fresh and not self.store.exists():
            with contextlib.suppress(OSError):
                self.store.identity_file.unlink()


@dataclass(frozen=True)
class Where:
    """Where the days run, as the command line asked: ``executor`` (a :mod:`simsched.run.executors`
    executor, not started; None: here, in order), and the results store ``results`` (None: none)
    that ``resume`` continues."""

    executor: Any = None
    results: Path | None = None
    resume: bool = False


HERE = Where()


def where_days_run(scenario: Path, workers: int | None, dask: str | None, results: Path | None, resume: bool,
                   outputs: Sequence[Path | None] = ()) -> Where:
    """Check ``--workers``, ``--dask``, ``--results`` and ``--resume`` before anything runs (a results
    store needs a file of its own, not one of ``outputs``, and pyarrow for Parquet; an existing one needs
    ``--resume`` and rows that verify: :func:`~simsched.capacity.daystore.read_days`); where they ask
    the days to run, the executor not yet started.  :class:`SimschedError` naming the option."""
    if resume and results is None:
        raise SimschedError("--resume continues the search saved by --results PATH: give --results", field="--resume")
    if results is not None:
        check_output(results, option="--results", suffixes=SUFFIXES, inputs=[scenario])
        if any(o is not None and o.resolve() == results.resolve() for o in outputs):
            raise SimschedError("--results must name a file of its own, not the --json or --plot output",
                                field="--results")
        if table_format(results) == "parquet":
            pyarrow_module()
        store = ResultsStore(results, option="--results", checked=False, text=TEXT)
        store.refuse_existing(resume)
        if store.exists():  # every row verified before any day runs (again under the lock when the store opens)
            read_days(store, code_version())
    if workers is None and dask is None:
        return Where(None, results, resume)
    executor = executor_for(workers, dask)
    if dask is not None:
        require_distributed()
    return Where(executor, results, resume)


class Days:
    """The runner of one search (:func:`days_on`) and, once it is over, :attr:`note`: where the days
    ran, in how long, how many a store reused (None: here, without a store)."""

    def __init__(self, runner: Any) -> None:
        self.runner = runner
        self.note: str | None = None


@contextlib.contextmanager
def days_on(where: Where, name: str, started: Callable[[str], None] | None = None, *,
            inputs: Sequence[str | Path] = (), notice: Callable[[str], None] | None = None) -> Iterator[Days]:
    """The day runner ``where`` asks for: here (:data:`~simsched.capacity.search.IN_PROCESS`), on its
    executor (:class:`ExecutorDays`, started here and stopped on exit; ``started`` is told where, e.g.
    ``"2 local processes"``), through its results store (:class:`StoredDays`, identified by the
    scenario's ``name``, its days by the scenario's content and the files ``inputs`` it read; ``notice``
    hears how many stored days are simulated again; compacted when the search ends, released in every
    case, keeping the days that finished).  :attr:`Days.note` says where the days ran once the block
    ends without an error."""
    with contextlib.ExitStack() as stack:
        runner: Any = IN_PROCESS
        stored = None
        if where.executor is not None:
            runner = stack.enter_context(ExecutorDays(where.executor))
        if where.results is not None:
            stored = StoredDays(runner, where.results, resume=where.resume, name=name, inputs=inputs, notice=notice)
            stack.callback(stored.close)
            runner = stored
        if where.executor is not None and started is not None:
            started(runner.description)
        days = Days(runner)
        t0 = time.perf_counter()
        yield days
        if stored is not None:
            stored.finish()
        if where.executor is not None or stored is not None:
            note = (f"; {stored.ran} simulated, {stored.reused} reused from {where.results}" if stored is not None
                    else "")
            days.note = (f"days simulated on {getattr(runner, 'description', 'this process')} in "
                         f"{time.perf_counter() - t0:.1f} s{note}")
