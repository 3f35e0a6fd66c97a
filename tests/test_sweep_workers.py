"""kill -9 of a sweep's main process leaves no worker process alive (issue 24, item 4).

A real ``simsched sweep`` runs in its own session, on the process pool and on a local Dask cluster;
once its workers are busy (a part file has been written), only the *main* process is killed with
SIGKILL — nothing else is signalled — and every process it had started must be gone within 5 s.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

STUDY = """\
name: kill-main
scenario:
  platform: {processors: [{name: p, count: 8}]}
  workload: {generator: random, tasks: 600}
  schedulers: [heft]
seeds: [SEEDS]
""".replace("SEEDS", ", ".join(str(i) for i in range(200)))


def _children() -> dict[int, int]:
    """pid -> parent pid of every process on the machine (from /proc)."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z":  # a zombie has already ended
            out[int(entry)] = int(fields[1])
    return out


def _descendants(root: int) -> set[int]:
    parent_of = _children()
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, ppid in parent_of.items() if ppid in frontier and pid not in found}
        found |= frontier
    return found


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.add(pid)
        except OSError:
            pass
    return alive


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("executor", [["--workers", "2"], ["--dask", "local", "--workers", "2"]], ids=["pool", "dask"])
def test_kill_9_of_the_sweep_leaves_no_worker(tmp_path: Path, executor: list[str]) -> None:
    if "--dask" in executor:
        pytest.importorskip("distributed")
    study = tmp_path / "study.yaml"
    study.write_text(STUDY)
    parts = tmp_path / "r.csv.parts"
    cmd = [sys.executable, "-c", "from simsched.cli.main import main; main()",
           "sweep", str(study), "-o", str(tmp_path / "r.csv"), *executor]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while not list(parts.glob("part-*.csv")) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, f"the sweep ended before it could be killed: {proc.stderr.read()}"
        workers = _descendants(proc.pid)
        assert workers, "the sweep started no worker process"
        os.kill(proc.pid, signal.SIGKILL)  # the main process only
        proc.wait()
        deadline = time.monotonic() + 5
        while _alive(workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        survivors = _alive(workers)
        assert not survivors, f"{len(survivors)} of {len(workers)} worker processes outlived the sweep"
    finally:
        for pid in _alive(workers):  # never leave one behind, even when the test fails
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()
