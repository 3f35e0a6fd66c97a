"""Where chunks of runs execute: a local process pool, or a Dask distributed cluster.

Both are context managers with one method, :meth:`results`, that submits every chunk and yields
``(chunk, rows)`` as chunks finish, in completion order.  The work of a chunk is ``fn(chunk)``: a
sweep's :func:`~simsched.study.work.run_chunk`, or a capacity search's days
(:func:`simsched.capacity.days.run_days`); ``fn`` must be a module-level function (it is pickled by
reference).  The executors know nothing of what a chunk holds, so the floors that use them (a
sweep, a capacity search) stand above this one.  ``skip(chunk)`` says a chunk is no longer wanted: it is cancelled if
it has not started (a capacity level decided by its first days); closing the iterator early cancels
every chunk not yet started.  Scheduling is the engine's own
(:class:`concurrent.futures.ProcessPoolExecutor`, or Dask's scheduler through ``client.map`` and
``distributed.as_completed``).  A chunk's runs never raise (failures are rows); if the
infrastructure fails — a worker process dies, a Dask worker is lost — :class:`WorkerLost` is raised
and the sweep stops with its completed rows saved.

Workers never outlive the sweep: each worker process (pool or Dask) calls
:func:`~simsched.run.lifeline.die_with_parent` while it unpickles its process configuration,
before it imports anything heavy (:mod:`simsched.run.lifeline`), which asks Linux to kill it when
its parent dies (``prctl(PR_SET_PDEATHSIG, SIGKILL)``) and starts a watchdog thread that ends it
once ``os.getppid()`` is no longer the sweep (for platforms without ``prctl``, and for a parent whose
spawning thread is not the one that dies).  Pool workers do it again in their initializer, Dask
workers as the cluster's *preload* (:func:`dask_setup`), before they register with the scheduler.
A ``kill -9`` of ``simsched sweep`` leaves no worker behind within a second, even while the cluster
is still starting.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, as_completed, wait
from typing import Any

from simsched.errors import SimschedError
from simsched.extras import install_hint
from simsched.run.lifeline import die_with_parent, lifeline

Result = tuple[dict[str, Any], list[dict[str, Any]]]
Work = Callable[[Any], list[dict[str, Any]]]
Skip = Callable[[Any], bool]
_UNSET = object()


class WorkerLost(SimschedError):
    """A worker died or the cluster failed; completed rows are saved and ``--resume`` continues."""


def _rows(future: Any, what: str) -> list[dict[str, Any]]:
    """A finished chunk's rows (its runs never raise); :class:`WorkerLost` naming ``what`` failed when
    the infrastructure did (a worker process died, a Dask worker was lost)."""
    try:
        return future.result()
    except Exception as exc:
        raise WorkerLost(f"{what} failed ({type(exc).__name__}: {exc})") from None


def default_workers() -> int:
    """The number of CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def _worker_init(parent: int) -> None:
    """Pool worker start-up: leave Ctrl-C to the parent (which saves the finished rows and stops the
    pool) and die with the parent (:func:`die_with_parent`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)


SWEEP_PID = "SIMSCHED_SWEEP_PID"
"""Environment variable naming the sweep's pid to the Dask worker processes of its local cluster
(spawned children inherit it)."""


def dask_setup(worker: Any = None) -> None:
    """Dask preload hook (this module is the local cluster's ``preload``): each worker process,
    before it registers with the scheduler and runs anything, dies with the sweep that started it
    (:func:`die_with_parent`) — at once if the sweep is already gone, so a ``kill -9`` while the
    cluster is still starting leaves no worker either.  No-op outside a sweep's cluster."""
    sweep = os.environ.get(SWEEP_PID, "")
    if sweep.isdigit() and int(sweep) != os.getpid():  # processes=False runs workers inside the sweep
        die_with_parent(int(sweep))


Rank = Callable[[list[Any]], Callable[[Any], Any]]
"""``rank(chunks in flight)``: a sort key for the chunks not yet handed out (lowest first)."""


def _windowed(chunks: Sequence[Any], submit: Callable[[Any], Any], skip: Skip | None, window: int,
              finished: Callable[[list[Any]], Any], cancel: Callable[[list[Any]], list[Any]],
              what: str, rank: Rank | None = None) -> Iterator[Result]:
    """``(chunk, rows)`` as chunks finish, handing out at most ``window`` at once: a chunk is submitted
    only when an earlier one has finished (or was cancelled), and one that ``skip`` rejects by then is
    never submitted.  For work that may stop early (a capacity level decided by its first days):
    nothing waits in a queue that a decision could have spared, at the price of one hand-over per chunk
    while its worker waits.  The next chunk is the first in order, or the lowest of ``rank`` (asked
    with the chunks in flight at that moment).  ``submit(chunk)`` gives a future,
    ``finished(futures)`` those of them done (blocking until one is), ``cancel(futures)`` those it
    cancelled.  O(window) per finished chunk, O(chunks) more with ``rank``."""
    pending: dict[Any, Any] = {}
    left = list(chunks)
    limit = max(1, window)

    def top_up() -> None:
        nonlocal left
        while len(pending) < limit and left:
            left = [c for c in left if skip is None or not skip(c)]
            if not left:
                return
            key = None if rank is None else rank(list(pending.values()))
            pick = 0 if key is None else min(range(len(left)), key=lambda j: key(left[j]))
            chunk = left.pop(pick)
            pending[submit(chunk)] = chunk

    try:
        top_up()
        while pending:
            for future in finished(list(pending)):
                chunk = pending.pop(future, _UNSET)
                if chunk is _UNSET or future.cancelled():
                    continue
                yield chunk, _rows(future, what)
                if skip is not None:
                    for f in cancel([f for f, c in pending.items() if skip(c)]):
                        pending.pop(f, None)
            top_up()
    finally:
        cancel(list(pending))


class PoolExecutor:
    """``workers`` local processes (started with ``spawn``: safe whatever threads the parent runs)."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or default_workers()
        if self.workers < 1:
            raise SimschedError(f"--workers must be >= 1, got {self.workers}")
        self.pool: ProcessPoolExecutor | None = None
        self._lifeline = contextlib.ExitStack()
        self.description = f"{self.workers} local process{'es' if self.workers > 1 else ''}"

    def __enter__(self) -> PoolExecutor:
        self._lifeline = contextlib.ExitStack()
        self._lifeline.enter_context(lifeline())  # workers are spawned lazily: keep it while the pool lives
        self.pool = ProcessPoolExecutor(self.workers, mp_context=mp.get_context("spawn"),
                                        initializer=_worker_init, initargs=(os.getpid(),))
        return self

    def warm_up(self, fn: Callable[[], Any]) -> Callable[[], bool]:
        """Start every worker process now, each running ``fn`` (a module-level function: the worker
        imports its module) while the caller goes on; returns a probe that is True once a worker has
        run it (a worker is ready for chunks).  O(workers)."""
        assert self.pool is not None
        started = [self.pool.submit(fn) for _ in range(self.workers)]
        return lambda: any(f.done() for f in started)

    def results(self, chunks: Sequence[Any], fn: Work, skip: Skip | None = None,
                window: int | None = None, rank: Rank | None = None) -> Iterator[Result]:
        """``(chunk, fn(chunk))`` as chunks finish (module docstring); at most ``window`` chunks handed
        out at once (None: all at once), lowest ``rank`` first (:func:`_windowed`).  O(chunks) per
        finished chunk with ``skip``, O(1) without."""
        assert self.pool is not None
        pool = self.pool
        if window is not None:
            yield from _windowed(chunks, lambda c: pool.submit(fn, c), skip, window,
                                 lambda fs: wait(fs, return_when=FIRST_COMPLETED)[0],
                                 lambda fs: [f for f in fs if f.cancel()], "a worker process", rank)
            return
        futures = {pool.submit(fn, c): c for c in chunks}
        pending = set(futures)
        try:
            for future in as_completed(futures):
                pending.discard(future)
                if future.cancelled():
                    continue
                yield futures[future], _rows(future, "a worker process")
                if skip is not None:
                    for f in [f for f in pending if skip(futures[f])]:
                        f.cancel()
        finally:
            for f in pending:
                f.cancel()

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            workers = list((getattr(self.pool, "_processes", None) or {}).values())
            self.pool.shutdown(wait=exc[0] is None, cancel_futures=True)
            if exc[0] is not None:  # an error, Ctrl-C or SIGTERM: a running chunk's rows would be dropped anyway,
                for worker in workers:  # so end its worker now instead of letting the exit wait for it
                    with contextlib.suppress(Exception):
                        worker.terminate()
            self.pool = None
        self._lifeline.close()


def require_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise SimschedError("--dask needs dask.distributed, from the 'study' extra: "
                            f"{install_hint('study')}") from None
    return distributed


class DaskExecutor:
    """Chunks run as Dask tasks.  ``address`` is ``"local"`` (start a ``LocalCluster`` of ``workers``
    single-threaded workers; ``processes=False`` keeps them in this process, for tests) or a
    scheduler address such as ``tcp://host:8786``; or pass a connected ``client``."""

    def __init__(self, address: str | None = "local", workers: int | None = None, *, processes: bool = True,
                 client: Any = None) -> None:
        self.address, self.workers, self.processes = address, workers, processes
        self.client, self._own_client, self.cluster = client, client is None, None
        self._environ: Any = _UNSET  # SWEEP_PID as it was before this cluster set it
        self._lifeline = contextlib.ExitStack()
        self.description = f"Dask cluster {address}" if client is None else "Dask client"

    def __enter__(self) -> DaskExecutor:
        distributed = require_distributed()
        if self.client is not None:
            return self
        if self.address == "local":
            n = self.workers or default_workers()
            extra: dict[str, Any] = {}
            if self.processes:  # every worker process dies with this one, from its first instant
                self._lifeline.enter_context(lifeline())
                self._environ = os.environ.get(SWEEP_PID)
                os.environ[SWEEP_PID] = str(os.getpid())
                extra["preload"] = [__name__]
            try:
                self.cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=self.processes,
                                                        dashboard_address=None, silence_logs=logging.ERROR, **extra)
                self.client = distributed.Client(self.cluster)
            except BaseException:
                self.__exit__(None, None, None)
                raise
            self.description = f"Dask LocalCluster of {n} worker{'s' if n > 1 else ''}"
        else:
            try:
                self.client = distributed.Client(self.address, timeout="10s")
            except Exception as exc:
                raise SimschedError(f"--dask {self.address}: cannot connect to the Dask scheduler "
                                    f"({type(exc).__name__}: {exc})") from None
        self.workers = sum(self.client.nthreads().values()) or self.workers
        if self.cluster is None:
            self.description = f"{self.description} ({self.workers} worker threads)"
        return self

    def results(self, chunks: Sequence[Any], fn: Work, skip: Skip | None = None,
                window: int | None = None, rank: Rank | None = None) -> Iterator[Result]:
        """``(chunk, fn(chunk))`` as chunks finish (module docstring); Dask's ``as_completed``; at most
        ``window`` chunks handed out at once (None: all at once), lowest ``rank`` first
        (:func:`_windowed`).  O(chunks) per finished chunk with ``skip``."""
        distributed = require_distributed()
        if window is not None:
            client = self.client

            def cancel(futures: list[Any]) -> list[Any]:
                if futures:
                    client.cancel(futures)
                return futures

            yield from _windowed(chunks, lambda c: client.submit(fn, c, pure=False), skip, window,
                                 lambda fs: distributed.wait(fs, return_when="FIRST_COMPLETED").done, cancel,
                                 "a Dask task", rank)
            return
        futures = self.client.map(fn, list(chunks), pure=False)
        by_key = {f.key: c for f, c in zip(futures, chunks)}
        pending = {f.key: f for f in futures}
        try:
            for future in distributed.as_completed(futures):
                pending.pop(future.key, None)
                if future.cancelled():
                    continue
                yield by_key[future.key], _rows(future, "a Dask task")
                if skip is not None:
                    drop = [f for k, f in pending.items() if skip(by_key[k])]
                    if drop:
                        self.client.cancel(drop)
                        for f in drop:
                            pending.pop(f.key, None)
        finally:
            if pending:
                self.client.cancel(list(pending.values()))

    def __exit__(self, *exc: object) -> None:
        if self._own_client and self.client is not None:
            self.client.close()
            self.client = None
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None
        if self._environ is not _UNSET:
            if self._environ is None:
                os.environ.pop(SWEEP_PID, None)
            else:
                os.environ[SWEEP_PID] = self._environ
            self._environ = _UNSET
        self._lifeline.close()


MAX_LOCAL_WORKERS = 512
"""Most local worker processes ``--workers`` may ask for (a typo such as ``--workers 1000000000``
would otherwise fork one process per chunk)."""


def executor_for(workers: int | None, dask: str | None) -> PoolExecutor | DaskExecutor:
    """The executor the command line asks for (``--workers N``, ``--dask local|tcp://HOST:PORT``), shared
    by ``sweep`` and ``capacity``: a local pool by default, a Dask ``LocalCluster`` or a remote cluster.
    :class:`SimschedError` (exit 2) for ``--workers`` outside ``1..MAX_LOCAL_WORKERS``, ``--workers`` with
    a remote cluster, or an address that is neither ``local`` nor ``SCHEME://HOST:PORT``.  O(1)."""
    if workers is not None and not 1 <= workers <= MAX_LOCAL_WORKERS:
        raise SimschedError(f"--workers must be between 1 and {MAX_LOCAL_WORKERS} local processes, got {workers}")
    if dask is None:
        return PoolExecutor(workers)
    if dask != "local" and workers is not None:
        raise SimschedError("--workers sets the local pool or a --dask local cluster; a remote cluster has "
                            "its own workers")
    if dask != "local" and "://" not in dask:
        raise SimschedError(f"--dask {dask}: give 'local' or a scheduler address like tcp://host:8786")
    return DaskExecutor(dask, workers)
