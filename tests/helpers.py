"""Helpers that several test files share (not a test module: pytest collects nothing here; tests/ is on
``sys.path``, so a test file writes ``from helpers import refused``).

* :data:`SMALL_STREAM`: a small job-stream scenario (two job sources, Poisson arrivals, deadlines,
  failures with a per-type rate, stragglers) that runs in about a second;
* :func:`refused`: run a command and assert the user-input rule (exit 2, one located ``error:`` line,
  inputs unchanged, nothing written, no hang);
* :func:`random_problem`: a random DAG on a random platform (HEFT/CPOP properties, the scheduler zoo);
* :func:`traces` and :data:`EXAMPLES`: random rigid-job traces for the batch engine's properties;
* :func:`compare_tables`: the rows of a documented table that a command did not print (the docs test,
  the plug-in's documented demo);
* :func:`batch_reference`: the independent heap-based FCFS/EASY reference of the batch engine, and
  :class:`RecordingConservative`, conservative backfilling that keeps each job's reservations;
* :data:`DIGESTS` and :func:`schedule_digest`: the pinned stream schedules (tests/data/stream_schedule_digests.json);
* :func:`warning_paragraphs`: the ``warning:`` paragraphs a command printed, each as one line.

Test modules never import each other: what two of them share lives here.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
import re
import time
from pathlib import Path

import numpy as np
from hypothesis import strategies as st
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.schedulers.batch_conservative import ConservativeBackfill
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.workloads.generators import random_dag
from simsched.workloads.importers.swf import make_trace

SMALL_STREAM = """\
name: small-stream
seed: 4
repetitions: 2
platform:
  processors: [{name: cpu, count: 3}, {name: gpu, type: gpu, speed: 2}]
  network: {bandwidth: 5.0, latency: 0.1}
workload:
  stream:
    jobs:
      - {weight: 2, generator: random, tasks: [3, 12], ccr: 0.3}
      - {weight: 1, generator: fork_join, priority: 1}
    arrivals: {poisson: 0.05}
    count: 6
    deadline: {slack: 3}
noise: {model: lognormal, sigma: 0.2}
failures: {mtbf: 150, mttr: 10, types: {gpu: {mtbf: 80, mttr: 20}}}
stragglers: {rate: 0.01, duration: 20, slowdown: 3}
schedulers: [mct, srjf-eft, fair-eft, heft]
"""
"""A job stream of six jobs on three CPUs and a GPU, failures (the GPU's more often) and stragglers: every
stream figure (JCT, slowdown, deadline misses, lost work) has something to show."""


def warning_paragraphs(output: str) -> list[str]:
    """Each ``warning: ...`` paragraph of ``output`` (its first line, then the indented lines below it:
    wrapped continuations and particulars) as one line, spaces collapsed."""
    paragraphs: list[list[str]] = []
    current: list[str] | None = None
    for line in output.splitlines():
        if line.startswith("warning:"):
            current = [line]
            paragraphs.append(current)
        elif current is not None and line.startswith(" "):
            current.append(line)
        else:
            current = None
    return [" ".join(" ".join(p).split()) for p in paragraphs]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def refused(args: list[str], *, inputs: tuple[Path, ...] = (), absent: tuple[Path, ...] = (),
            says: str = "", seconds: float = 120.0) -> str:
    """Run ``simsched ARGS``; assert exit 2, one located error line, inputs unchanged, ``absent``
    not created.  ``seconds`` is a liveness bound, not a speed target: reading a FIFO or /dev/zero, or
    building a 10^9-job day, would never end, so a refusal that is not up front shows as a hang
    (like the sweep-kill test's bound); it is generous so a loaded machine does not fail it.
    Returns the error line."""
    before = {p: digest(p) for p in inputs}
    t0 = time.perf_counter()
    result = CliRunner().invoke(app, args)
    took = time.perf_counter() - t0
    assert result.exit_code == 2, (args, result.exit_code, result.output[-1500:])
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), (args, result.stderr)
    assert says in lines[0], (says, lines[0])
    assert took < seconds, (args, took)
    for p, d in before.items():
        assert digest(p) == d, f"{p} changed"
    for p in absent:
        assert not p.exists(), f"{p} was written"
    return lines[0]


def random_problem(seed: int, n: int, m: int, *, eligibility: bool = True, arrivals: bool = False) -> Problem:
    """A random DAG on a random platform: per-pair latency/bandwidth, some tasks barred from some
    processors, optional arrival times."""
    rng = np.random.default_rng(seed)
    g = random_dag(n, processors=m, ccr=float(rng.uniform(0, 4)), shape=float(rng.uniform(0.5, 2)), rng=rng)
    if eligibility and m > 1:
        cost = np.array(g.cost)
        barred = rng.random(cost.shape) < 0.25
        barred[np.arange(n), rng.integers(0, m, n)] = False  # every task keeps one processor
        cost[barred] = np.inf
        g = g.with_(cost=cost)
    if arrivals:
        g = g.with_(arrival=rng.uniform(0, 50, n))
    procs = [Processor(f"p{i}", host=f"h{i // 2}") for i in range(m)]
    platform = Platform.uniform(procs, bandwidth=float(rng.uniform(0.2, 3)), latency=float(rng.uniform(0, 2)),
                                host_bandwidth=10.0)
    return Problem(g, platform)


EXAMPLES = int(os.environ.get("SIMSCHED_BATCH_EXAMPLES", "60"))
"""Hypothesis examples of the batch engine's trace properties (``SIMSCHED_BATCH_EXAMPLES=1000`` for more)."""


@st.composite
def traces(draw):
    m = draw(st.integers(1, 8))
    n = draw(st.integers(1, 25))
    gaps = draw(st.lists(st.sampled_from([0, 0, 1, 2, 3, 5, 10]), min_size=n, max_size=n))
    submit = np.cumsum(gaps).astype(float)
    run = draw(st.lists(st.sampled_from([0, 1, 2, 3, 4, 7, 10, 20]), min_size=n, max_size=n))
    # requested: exact, longer, shorter (below the actual run time) or missing (-1: the run time)
    req = [r if c == 0 else r + e if c == 1 else max(r - e, 0) if c == 2 else -1
           for r, c, e in zip(run, draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)),
                              draw(st.lists(st.integers(1, 6), min_size=n, max_size=n)))]
    procs = draw(st.lists(st.integers(1, m), min_size=n, max_size=n))
    if draw(st.booleans()):
        procs[draw(st.integers(0, n - 1))] = m  # a job as wide as the machine
    return make_trace(submit, run, procs, req), m


_DURATION = re.compile(r"^[\d.]+(?: ± [\d.]+)? ?(?:ms|µs|us|s|min)$")


def _wall_time_header(cell: str) -> bool:
    return cell == "s" or "time" in cell or cell.endswith("(s)")


def _rows(text: str, time_columns: frozenset[int] = frozenset()) -> list[tuple[str, ...]]:
    """The body rows of every table in ``text`` (``│ a │ b │``), wall-time cells replaced by ``*``: cells that
    read as durations and cells under a wall-time header (``s``, ``... time``; ``time_columns`` until the text
    shows a header of its own)."""
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("┃") and line.endswith("┃"):
            header = [c.strip() for c in line.strip("┃").split("┃")]
            time_columns = frozenset(i for i, c in enumerate(header) if _wall_time_header(c))
        elif line.startswith("│") and line.endswith("│"):
            cells = [c.strip() for c in line.strip("│").split("│")]
            rows.append(tuple("*" if _DURATION.match(c) or i in time_columns else c for i, c in enumerate(cells)))
    return rows


def _first_time_columns(text: str) -> frozenset[int]:
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("┃") and line.endswith("┃"):
            return frozenset(i for i, c in enumerate(line.strip("┃").split("┃")) if _wall_time_header(c.strip()))
    return frozenset()


def compare_tables(documented: str, printed: str) -> list[str]:
    """Rows of the documented tables that the command did not print (a ``...`` cell matches anything)."""
    actual = _rows(printed)
    missing = []
    for row in _rows(documented, _first_time_columns(printed)):
        if all(c == "..." for c in row[1:]):
            continue

        def same(got: tuple[str, ...], row: tuple[str, ...] = row) -> bool:
            return len(got) >= len(row) and all(w in ("...", g) for w, g in zip(row, got))

        if not any(same(got) for got in actual):
            missing.append(" | ".join(row))
    return missing


# --------------------------------------------------------------------------- the batch reference
def batch_reference(submit, run, req, procs, m: int, policy: str, kill: bool = False) -> list[float]:
    """Start time of every job under ``policy`` ("fcfs" or "easy"), by a heap of events."""
    n = len(submit)
    dur = [min(r, q) for r, q in zip(run, req)] if kill else list(run)
    heap: list[tuple[float, int, int]] = [(submit[j], 1, j) for j in range(n)]  # (time, 0 end / 1 arrival, job)
    heapq.heapify(heap)
    start = [None] * n
    waiting: list[int] = []
    running: dict[int, float] = {}  # job -> estimated end
    free = m
    while heap:
        now = heap[0][0]
        while heap and heap[0][0] == now:
            _, kind, j = heapq.heappop(heap)
            if kind == 1:
                waiting.append(j)
            else:
                free += procs[j]
                del running[j]
        waiting.sort()  # submit order = index order (submits are sorted)
        begin: list[int] = []
        while waiting and procs[waiting[0]] <= free:
            j = waiting.pop(0)
            begin.append(j)
            free -= procs[j]
            running[j] = now + req[j]
        if policy == "easy" and waiting and free > 0:
            need = procs[waiting[0]]
            shadow, extra, avail = None, 0, free
            for end, j in sorted((max(e, now), j) for j, e in running.items()):
                if shadow is not None and end > shadow:
                    break
                avail += procs[j]
                if shadow is None and avail >= need:
                    shadow = end
                extra = avail - need  # every processor free at the shadow time beyond the head's need
            for j in list(waiting[1:]):
                if procs[j] > free:
                    continue
                if now + req[j] <= shadow:
                    pass
                elif procs[j] <= extra:
                    extra -= procs[j]
                else:
                    continue
                waiting.remove(j)
                begin.append(j)
                free -= procs[j]
                running[j] = now + req[j]
        for j in begin:
            start[j] = now
            heapq.heappush(heap, (now + dur[j], 0, j))
    return start


class RecordingConservative(ConservativeBackfill):
    """Conservative backfilling that keeps every reservation each job held, decision by decision."""

    def reset(self, trace, m):
        super().reset(trace, m)
        self.history: dict[int, list[float]] = {}

    def decide(self, view):
        out = super().decide(view)
        for j, s in self.reservations().items():
            self.history.setdefault(j, []).append(s)
        for j in out:
            self.history.setdefault(j, []).append(view.now)
        return out


# --------------------------------------------------------------------------- stream schedule digests
DIGESTS = json.loads((Path(__file__).parent / "data" / "stream_schedule_digests.json").read_text())


def schedule_digest(schedule) -> str:
    """The first 32 hex digits of the SHA-256 of a schedule's processors, starts and finishes: equal
    digests are float-identical schedules."""
    h = hashlib.sha256()
    for a in (np.asarray(schedule.processor, dtype=np.int64), np.asarray(schedule.start, dtype=np.float64),
              np.asarray(schedule.finish, dtype=np.float64)):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:32]


class GangFirst:
    """An online policy for two-task cases: task 0 on processors (0, 1) at once, every other task on
    processor ``other``."""

    name = "gang-first"
    multiprocessor_tasks = True

    def __init__(self, other: int) -> None:
        self.other = other

    def reset(self, problem, rng) -> None:
        pass

    def decide(self, view):
        return [(int(t), (0, 1)) if t == 0 else (int(t), self.other) for t in view.ready]


def wfformat_chain(path: Path, runtimes: list[float], makespan: float, *, machine: str = "m1", cores: int = 4,
          wms: str = "Pegasus") -> Path:
    """A WfFormat 1.5 chain t0 -> t1 -> ... on one machine, no start times."""
    n = len(runtimes)
    ids = [f"t{i}_ID{i:02d}" for i in range(n)]
    tasks = [{"name": f"t{i}", "id": ids[i], "parents": ids[i - 1:i], "children": ids[i + 1:i + 2],
              "inputFiles": [], "outputFiles": []} for i in range(n)]
    execution = [{"id": ids[i], "runtimeInSeconds": r, "machines": [machine]} for i, r in enumerate(runtimes)]
    doc = {"name": path.stem, "schemaVersion": "1.5", "runtimeSystem": {"name": wms, "version": "5.0"},
           "workflow": {"specification": {"tasks": tasks, "files": []},
                        "execution": {"makespanInSeconds": makespan, "executedAt": "2024-03-01T10:00:00Z",
                                      "machines": [{"nodeName": machine, "cpu": {"coreCount": cores}}],
                                      "tasks": execution}}}
    path.write_text(json.dumps(doc))
    return path


def replace_top_key(path: Path, key: str, value: str) -> int:
    """Rewrite the line of ``path`` that sets the top-level YAML ``key`` to ``key: value`` (a hand edit of a
    written profile) and return its 1-based line number, which a refusal must name."""
    lines = path.read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith(f"{key}:"))
    lines[i] = f"{key}: {value}"
    path.write_text("\n".join(lines) + "\n")
    return i + 1
