"""Capacity searches on the sweep's executors and results store (issue #30): the same answer whatever
runs the days (here, a process pool, in any completion order), a killed search resumed from its store
with fewer simulations and the same answer, and the store's refusals (exit 2, one line)."""

from __future__ import annotations

import fcntl
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer import Typer
from typer.testing import CliRunner

from simsched.capacity import IN_PROCESS, evaluate_levels, find_capacity, parse_objective
from simsched.capacity.days import StoredDays
from simsched.cli.capacity_cmd import capacity_command

CLI = [sys.executable, "-m", "simsched.cli.main"]

TASK_GRAPH = {
    "name": "tg", "seed": 0,
    "platform": {"processors": [{"name": "c", "type": "cpu", "count": 1}, {"name": "g", "type": "gpu", "count": 1}]},
    "workload": {"generator": "random", "tasks": 30},
    "schedulers": ["heft", "minmin"],
    "capacity": {"objective": "slr <= 2.2", "resource": "gpu", "days": 6},
}

MIX = {
    "name": "mix", "seed": 3,
    "platform": {"processors": [{"name": "cpu", "type": "cpu", "count": 2},
                                {"name": "gpu", "type": "gpu", "speed": 4.0, "count": 1}],
                 "power": {"types": {"cpu": {"idle": 25, "busy": 95}, "gpu": {"idle": 50, "busy": 300}}}},
    "workload": {"generator": "random", "tasks": 20},
    "schedulers": ["heft"],
    "capacity": {"objective": "makespan <= 60", "mix": {"cpu": [1, 2], "gpu": [0, 1]}, "cheapest_by": "energy_kwh",
                 "days": 3},
}


def _app() -> Typer:
    app = Typer()
    app.command()(capacity_command)
    return app


def _without_wall(result: dict) -> str:
    """The answer as canonical JSON text without its wall times (NaN compares equal as text)."""
    result = json.loads(json.dumps(result))
    for entry in result.get("variants", []):
        entry.pop("wall_s")
    return json.dumps(result, sort_keys=True)


# ------------------------------------------------------------------ the same answer in any order
class Jitter:
    """A day's makespan: work / capacity + a seeded jitter (monotone in capacity)."""

    unit = "processors"
    variants = ["a", "b"]
    metrics = ["makespan"]

    def __call__(self, variant: str, capacity: int, seed: int) -> dict[str, float]:
        jitter = np.random.default_rng(seed).uniform(0.0, 2.0)
        return {"makespan": {"a": 10.0, "b": 25.0}[variant] / capacity + jitter}


class Shuffled:
    """A runner that simulates every day not yet skipped, in a random order (as a pool's completions)."""

    description = "shuffled"

    def __init__(self, seed: int, slots: int = 1) -> None:
        self.rng = random.Random(seed)
        self.simulated = 0
        self.slots = slots  # as many workers: the search looks ahead (speculative bisection)
        self.rounds = 0

    def run(self, model, requests, skip):
        self.rounds += 1
        order = list(range(len(requests)))
        self.rng.shuffle(order)
        for i in order:
            if not skip(i):
                self.simulated += 1
                yield i, model(*requests[i])


class Ranked(Shuffled):
    """A pool of ``slots`` workers handing out the lowest-ranked day whenever one frees up (as
    :class:`~simsched.capacity.days.ExecutorDays` does); days in flight finish in a random order."""

    ranked = True

    def run(self, model, requests, skip, rank=None):
        self.rounds += 1
        left, flying = list(range(len(requests))), []
        while True:
            left = [i for i in left if not skip(i)]
            while left and len(flying) < self.slots:
                key = rank(list(flying))
                flying.append(left.pop(min(range(len(left)), key=lambda j: key(left[j]))))
            if not flying:
                return
            i = flying.pop(self.rng.randrange(len(flying)))
            self.simulated += 1
            yield i, model(*requests[i])


@settings(max_examples=25, deadline=None)
@given(days=st.integers(1, 12), on_days=st.sampled_from([0.5, 0.8, 0.95, 1.0]), threshold=st.floats(0.2, 12.0),
       order=st.integers(0, 2**31), all_days=st.booleans(), slots=st.sampled_from([1, 2, 3, 4, 16]),
       low=st.integers(1, 3), high=st.sampled_from([1, 5, 64]), ranked=st.booleans())
def test_any_completion_order_and_any_number_of_workers_give_the_serial_answer(days, on_days, threshold, order,
                                                                               all_days, slots, low, high,
                                                                               ranked) -> None:
    """Days finishing in any order, any look-ahead (the speculative levels of ``slots`` workers) and
    any order of handing them out (the search's ranking of likely levels): the answer, its levels and
    every number in them are those of one process."""
    objective = parse_objective(f"makespan <= {threshold}")
    high = max(high, low, 1)
    serial = find_capacity(Jitter(), objective, days=days, on_days=on_days, low=low, high=high, all_days=all_days)
    shuffled = find_capacity(Jitter(), objective, days=days, on_days=on_days, low=low, high=high,
                             all_days=all_days, runner=(Ranked if ranked else Shuffled)(order, slots))
    assert _without_wall(serial) == _without_wall(shuffled)


def test_workers_evaluate_the_next_steps_together() -> None:
    """On 4 workers each round holds the next 3 steps of every search (a midpoint and the midpoints that
    may follow it): fewer rounds than one step at a time, for the same answer and levels."""
    objective = parse_objective("makespan <= 3.1")
    one, four = Shuffled(1, 1), Shuffled(1, 4)
    a = find_capacity(Jitter(), objective, days=8, high=64, runner=one)
    b = find_capacity(Jitter(), objective, days=8, high=64, runner=four)
    assert _without_wall(a) == _without_wall(b)
    steps = max(len(e["levels"]) for e in a["variants"])
    assert one.rounds == steps >= 6 and four.rounds <= -(-steps // 3) + 1


def test_a_level_stops_at_the_first_day_it_cannot_pass_whatever_arrives_first() -> None:
    """Days 0 and 1 miss; with 4 days and on_days 0.75 one miss is allowed: the level is decided at day 1
    and holds days 0-1 even when days 2 and 3 finished first."""
    class Fails:
        unit, variants, metrics = "p", ["a"], ["makespan"]

        def __call__(self, variant, capacity, seed):
            return {"makespan": 10.0 if seed < 2 else 1.0}

    class Backwards:
        def run(self, model, requests, skip):
            for i in reversed(range(len(requests))):
                if not skip(i):
                    yield i, model(*requests[i])

    objective = parse_objective("makespan <= 5")
    (level,) = evaluate_levels(Fails(), [("a", 3)], objective, [0, 1, 2, 3], on_days=0.75, runner=Backwards())
    (serial,) = evaluate_levels(Fails(), [("a", 3)], objective, [0, 1, 2, 3], on_days=0.75, runner=IN_PROCESS)
    assert level.met == serial.met == [False, False] and level.planned == 4 and level.stopped_early


# ------------------------------------------------------------------ serial vs a process pool
@pytest.mark.slow
@pytest.mark.parametrize("scenario", [TASK_GRAPH, MIX], ids=["count", "mix"])
def test_a_process_pool_gives_the_serial_json(tmp_path: Path, scenario: dict) -> None:
    scen = tmp_path / "s.yaml"
    scen.write_text(yaml.safe_dump(scenario))
    serial, pool = tmp_path / "serial.json", tmp_path / "pool.json"
    r = CliRunner().invoke(_app(), [str(scen), "--json", str(serial)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(_app(), [str(scen), "--json", str(pool), "--jobs", "2", "--results",
                                    str(tmp_path / "days.csv")])
    assert r.exit_code == 0, r.output
    a, b = json.loads(serial.read_text()), json.loads(pool.read_text())
    assert _without_wall(a) == _without_wall(b)
    assert (tmp_path / "days.csv").is_file() and not (tmp_path / "days.csv.parts").exists()
    # the same command again, resumed in one process: every day comes from the store
    again = tmp_path / "again.json"
    r = CliRunner().invoke(_app(), [str(scen), "--json", str(again), "--results", str(tmp_path / "days.csv"),
                                    "--resume"])
    assert r.exit_code == 0, r.output
    assert " 0 simulated, " in r.output and _without_wall(json.loads(again.read_text())) == _without_wall(a)


def test_a_window_hands_out_chunks_only_as_workers_free_up() -> None:
    """With ``window``, a chunk is submitted only when an earlier one has finished, so one that a finished
    chunk made unwanted never runs (a decided capacity level wastes no worker); without it every chunk is
    queued at once and those already queued run anyway."""
    from simsched.run.executors import PoolExecutor

    chunks = [(i,) for i in range(6)]
    with PoolExecutor(1) as executor:
        first: list[int] = []
        for _chunk, rows in executor.results(chunks, list, lambda c: bool(first), window=1):
            first.extend(rows)  # the first chunk back decides that no other is wanted
        assert first == [0]
        even = [row for _chunk, rows in executor.results(chunks, list, lambda c: c[0] % 2 == 1, window=2)
                for row in rows]
        assert sorted(even) == [0, 2, 4]  # rejected before its turn: never submitted


# ------------------------------------------------------------------ resume after an interruption
class Interrupted(Exception):
    pass


class StopsAfter:
    """The in-process runner, interrupted (as by a kill) after ``n`` days."""

    description = "this process"

    def __init__(self, n: int) -> None:
        self.n, self.simulated = n, 0

    def run(self, model, requests, skip):
        for i, day in IN_PROCESS.run(model, requests, skip):
            if self.simulated == self.n:
                raise Interrupted
            self.simulated += 1
            yield i, day


class Counting:
    """The in-process runner, counting the days it simulates."""

    description = "this process"

    def __init__(self) -> None:
        self.simulated = 0

    def run(self, model, requests, skip):
        for i, day in IN_PROCESS.run(model, requests, skip):
            self.simulated += 1
            yield i, day


class SourcedJitter(Jitter):
    source = {"kind": "test", "data": {"name": "jitter"}}


@pytest.mark.parametrize("after", [0, 1, 7, 30])
def test_an_interrupted_search_resumes_from_its_store(tmp_path: Path, after: int) -> None:
    objective = parse_objective("makespan <= 4")
    fresh = Counting()
    expected = find_capacity(SourcedJitter(), objective, days=10, high=64, runner=fresh)
    path = tmp_path / "days.csv"
    first = StoredDays(StopsAfter(after), path, resume=False, name="jitter", flush_s=0.0)
    try:
        with pytest.raises(Interrupted):
            find_capacity(SourcedJitter(), objective, days=10, high=64, runner=first)
    finally:
        first.close()
    assert first.ran == after
    second = StoredDays(Counting(), path, resume=True, name="jitter")
    try:
        got = find_capacity(SourcedJitter(), objective, days=10, high=64, runner=second)
        second.finish()
    finally:
        second.close()
    assert _without_wall(got) == _without_wall(expected)
    assert second.reused == after and second.ran == fresh.simulated - after
    assert not (tmp_path / "days.csv.parts").exists()
    # a third run reuses everything and simulates nothing
    third = StoredDays(Counting(), path, resume=True, name="jitter")
    try:
        assert _without_wall(find_capacity(SourcedJitter(), objective, days=10, high=64, runner=third)) == \
            _without_wall(expected)
    finally:
        third.close()
    assert third.ran == 0 and third.reused == fresh.simulated


def _parts(path: Path) -> list[Path]:
    return sorted(path.with_name(path.name + ".parts").glob("part-*.csv"))


def _session(sid: int) -> set[int]:
    """The live processes of session ``sid`` (from /proc; zombies have ended)."""
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z" and int(fields[3]) == sid:
                out.add(int(entry))
    return out


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_capacity_command_resumes_with_fewer_simulations(tmp_path: Path) -> None:
    """``kill -9`` of the main process of a search on 2 workers: no worker survives it, and the same
    command with ``--resume`` (here in one process) reuses the saved days and gives the fresh answer."""
    scen = tmp_path / "s.yaml"
    scen.write_text(yaml.safe_dump({**TASK_GRAPH, "capacity": {**TASK_GRAPH["capacity"], "days": 12}}))
    store = tmp_path / "days.csv"
    args = [*CLI, "capacity", str(scen), "--all-days", "--results", str(store)]
    proc = subprocess.Popen([*args, "--workers", "2", "--json", str(tmp_path / "killed.json")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not _parts(store) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _parts(store) and proc.poll() is None, "the search finished (or saved nothing) before the kill"
        proc.send_signal(signal.SIGKILL)  # the main process only: its workers must follow it
        proc.wait()
        deadline = time.monotonic() + 10
        while _session(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _session(proc.pid), "a worker outlived the killed search"
    finally:
        if _session(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert not store.exists() and not (tmp_path / "killed.json").exists()
    again = subprocess.run([*args, "--json", str(tmp_path / "again.json")], capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 2 and "--resume" in again.stderr and len(again.stderr.strip().splitlines()) == 1
    resumed = subprocess.run([*args, "--resume", "--json", str(tmp_path / "resumed.json")], capture_output=True,
                             text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    fresh = subprocess.run([*CLI, "capacity", str(scen), "--all-days", "--json", str(tmp_path / "fresh.json")],
                           capture_output=True, text=True, timeout=300)
    assert fresh.returncode == 0, fresh.stderr
    a = json.loads((tmp_path / "fresh.json").read_text())
    b = json.loads((tmp_path / "resumed.json").read_text())
    assert _without_wall(a) == _without_wall(b)
    line = next(x for x in resumed.stderr.splitlines() if "reused from" in x)
    ran, reused = (int(w) for w in line.split("; ")[1].replace(" simulated,", "").split()[:2])
    total = sum(v["simulations"] for v in a["variants"])
    assert reused >= 1 and ran + reused == total and ran < total


# ------------------------------------------------------------------ refusals: exit 2, one line, nothing written
def _scenario(tmp_path: Path, data: dict = TASK_GRAPH) -> Path:
    scen = tmp_path / "s.yaml"
    scen.write_text(yaml.safe_dump({**data, "capacity": {**data["capacity"], "days": 2}}))
    return scen


def _refused(args: list[str], needle: str) -> None:
    r = CliRunner().invoke(_app(), args)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], r.output


def test_store_refusals(tmp_path: Path) -> None:
    scen = _scenario(tmp_path)
    store = tmp_path / "days.csv"
    _refused([str(scen), "--resume"], "--results")
    _refused([str(scen), "--results", str(tmp_path / "days.txt")], ".csv or .parquet")
    _refused([str(scen), "--results", str(tmp_path / "x.csv"), "--json", str(tmp_path / "x.csv")], "--results")
    _refused([str(scen), "--workers", "0"], "--workers")
    _refused([str(scen), "--workers", str(10**9)], "--workers")
    _refused([str(scen), "--dask", "somewhere"], "--dask")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]
    r = CliRunner().invoke(_app(), [str(scen), "--results", str(store), "-s", "heft"])
    assert r.exit_code == 0, r.output
    before = store.read_bytes()
    _refused([str(scen), "--results", str(store), "-s", "heft"], "--resume")  # results exist: resume or another file
    # another scenario's store
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump({**TASK_GRAPH, "name": "other", "capacity": {**TASK_GRAPH["capacity"],
                                                                                   "days": 2}}))
    _refused([str(other), "--results", str(store), "--resume"], "belong")
    edited = tmp_path / "edited.yaml"  # same name, another workload: none of the stored days is one of its days
    edited.write_text(yaml.safe_dump({**TASK_GRAPH, "workload": {"generator": "random", "tasks": 31},
                                      "capacity": {**TASK_GRAPH["capacity"], "days": 2}}))
    _refused([str(edited), "--results", str(store), "--resume"], "belong")
    # a store another command is writing (a live lock)
    parts = store.with_name("days.csv.parts")
    parts.mkdir()
    with open(parts / ".lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        _refused([str(scen), "--results", str(store), "--resume", "-s", "heft"], "is writing")
    assert store.read_bytes() == before


def test_resume_reuses_the_store_for_another_objective(tmp_path: Path) -> None:
    """The store keeps every metric of a day, not only the objective's: a new objective on the same
    scenario reuses the days it shares (the capacity section changes no simulation)."""
    scen = _scenario(tmp_path)
    store = tmp_path / "days.csv"
    r = CliRunner().invoke(_app(), [str(scen), "--results", str(store), "-s", "heft", "--all-days"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(_app(), [str(scen), "--results", str(store), "--resume", "-s", "heft", "--all-days",
                                    "--objective", "makespan <= 1e9", "--json", str(tmp_path / "a.json")])
    assert r.exit_code == 0, r.output
    assert "0 simulated, 2 reused" in r.output  # capacity 1 meets any makespan bound: its 2 days were stored


@pytest.mark.slow
def test_a_dask_cluster_gives_the_serial_answer(tmp_path: Path) -> None:
    """The same days on a Dask LocalCluster (threads in this process): the same answer, through the store."""
    pytest.importorskip("distributed")
    from simsched.capacity import question_from
    from simsched.capacity.days import ExecutorDays
    from simsched.run.executors import DaskExecutor
    from simsched.yamlio import YamlDocument

    def question():
        return question_from(YamlDocument({**TASK_GRAPH, "capacity": {**TASK_GRAPH["capacity"], "days": 4}}, {},
                                          tmp_path / "s.yaml"))

    serial = question().answer()
    stored = StoredDays(ExecutorDays(DaskExecutor("local", 2, processes=False)), tmp_path / "days.csv",
                        resume=False, name="tg")
    try:
        with stored.inner:
            dask = question().answer(runner=stored)
        stored.finish()
    finally:
        stored.close()
    assert _without_wall(serial) == _without_wall(dask)
    assert stored.ran >= sum(e["simulations"] for e in serial["variants"])  # and days a decided level no longer used


class SlowToStart:
    """An executor whose workers are ready only after ``wait`` probes; chunks (days of :class:`Jitter`)
    run here, counted."""

    description, workers = "slow to start", 2

    def __init__(self, wait: int) -> None:
        self.wait, self.chunks = wait, 0

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def warm_up(self, fn):
        def probe() -> bool:
            self.wait -= 1
            return self.wait < 0
        return probe

    def results(self, chunks, fn, skip=None, window=None, rank=None):
        for chunk in chunks:
            if skip is None or not skip(chunk):
                self.chunks += 1  # the days of the chunk, as a worker that rebuilt the model would return them
                yield chunk, [{"i": i, "metrics": Jitter()(v, c, s)} for i, v, c, s in chunk["days"]]


@pytest.mark.parametrize("wait", [0, 3, 10_000])
def test_days_run_here_while_the_workers_start(wait: int) -> None:
    """Until a worker is ready the days run in this process; the answer is the serial one either way."""
    from simsched.capacity.days import ExecutorDays

    objective = parse_objective("makespan <= 3.1")
    serial = find_capacity(SourcedJitter(), objective, days=6, high=64)
    executor = SlowToStart(wait)
    with ExecutorDays(executor) as runner:
        pooled = find_capacity(SourcedJitter(), objective, days=6, high=64, runner=runner)
    assert _without_wall(pooled) == _without_wall(serial)
    assert (executor.chunks == 0) == (wait == 10_000) and (executor.chunks > 0) == (wait < 10_000)
    # days of microseconds: as many per chunk as a quarter of each of the 2 workers' share allows
    assert runner.chunk_days(1000) == (1 if wait == 0 else 125) and runner.chunk_days(4) == 1
