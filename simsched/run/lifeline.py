"""A worker process's lifeline to the sweep that started it: it dies when the sweep dies, from its first instant.

A process a sweep spawns (a pool worker, a Dask worker of a local cluster) spends its first seconds
importing what it will run (numpy, the simulator, dask.distributed) before any code of its own runs;
a ``kill -9`` of the sweep in those seconds used to leave it running until the imports ended, and
longer on a loaded machine.  :func:`lifeline` closes that window: for its block, every process this
one spawns through :mod:`multiprocessing` carries a :class:`Lifeline` in its process configuration,
which is the first thing the child unpickles — before the target and its modules — and whose
unpickling calls :func:`die_with_parent`.  This module imports nothing heavy, so the child reaches it
at once.  Relies on ``multiprocessing``'s process configuration (``BaseProcess._config``, copied
into every child since Python 2.6); without it the workers' own start-up hooks remain.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator

WATCH_S = 0.25
"""How often a worker's watchdog checks that the sweep that started it is alive."""

_KEY = "simsched_lifeline"


def die_with_parent(parent: int, poll_s: float = WATCH_S) -> None:
    """End this process when process ``parent`` (the sweep) is gone: ``PR_SET_PDEATHSIG`` with
    SIGKILL on Linux, and a daemon thread polling ``os.getppid()`` every ``poll_s`` seconds that calls
    ``os._exit`` once the parent has changed (re-parented to init or a subreaper).  Exits at once if
    the parent is already gone.  O(1) per poll."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    if os.getppid() != parent:
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(poll_s)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="simsched-parent-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _revive(sweep: int) -> Lifeline:
    """Run in the child while it unpickles its process configuration: a child of the sweep dies
    with it; a grandchild (a worker's own process) lives on while the sweep does, else ends."""
    if os.getpid() != sweep:
        if os.getppid() == sweep:
            die_with_parent(sweep)
        elif not _alive(sweep):
            os._exit(1)
    return Lifeline(sweep)


class Lifeline:
    """The sweep's pid, pickled into each spawned child as a call of :func:`_revive`."""

    def __init__(self, sweep: int) -> None:
        self.sweep = sweep

    def __reduce__(self) -> tuple[object, tuple[int]]:
        return _revive, (self.sweep,)


@contextlib.contextmanager
def lifeline() -> Iterator[None]:
    """For the block, every process this one starts through :mod:`multiprocessing` (spawn) dies with
    it from its first instant (see the module docstring).  O(1)."""
    import multiprocessing

    config = getattr(multiprocessing.current_process(), "_config", None)
    if not isinstance(config, dict):  # pragma: no cover - another multiprocessing
        yield
        return
    previous = config.get(_KEY)
    config[_KEY] = Lifeline(os.getpid())
    try:
        yield
    finally:
        if previous is None:
            config.pop(_KEY, None)
        else:
            config[_KEY] = previous
