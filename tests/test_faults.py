"""Faults leave nothing misleading behind (issue 33, part 6).

* A command killed with ``kill -9`` leaves its output locks (``.NAME.lock``) behind; each records its
  owner (pid, host), and the next command recognises them as stale — nobody holds the ``flock``, or
  the recorded owner is dead though an orphan still holds it — removes them and is never blocked.
  A lock file that is not simsched's is never touched.
* SIGTERM unwinds a command: ``error: terminated``, exit 143, no lock and no temporary file left.
* ``kill -9`` of a Dask sweep's main process leaves no process of its session alive (the pool's
  test is in ``test_sweep_workers.py``; this one counts every process of the session, reparented
  ones included).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simsched.errors import SimschedError
from simsched.outputlock import LOCK_TAG, lock_path, output_lock, owner_dead, remove_stale_locks
from simsched.outputs import check_output, release_outputs

ROOT = Path(__file__).resolve().parent.parent
CAPACITY = ROOT / "scenarios" / "streams" / "capacity_stream.yaml"
CLI = [sys.executable, "-c", "from simsched.cli.main import main; main()"]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="flock, /proc and signals of Linux")


def _wait_for(predicate, seconds: float = 120.0) -> bool:  # noqa: ANN001 - a callable
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _capacity(tmp_path: Path, *outputs: str, days: int = 200) -> subprocess.Popen:
    """A long ``simsched capacity`` run writing ``outputs`` (``--json x.json``, ``--plot x.png``)."""
    args = [*CLI, "capacity", str(CAPACITY), "--objective", "jct_p95 <= 600", "--resource", "gpu", "--days", str(days),
            "--all-days"]
    for out in outputs:
        args += ["--json" if out.endswith(".json") else "--plot", str(tmp_path / out)]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()


@pytest.mark.slow
def test_locks_of_a_killed_capacity_run_never_block_and_are_removed(tmp_path: Path) -> None:
    proc = _capacity(tmp_path, "out.json", "out.png")
    try:
        assert _wait_for(lambda: (tmp_path / ".out.png.lock").is_file() and (tmp_path / ".out.json.lock").is_file()
                         and proc.poll() is None), "capacity never took its locks"
        assert _wait_for(lambda: LOCK_TAG in (tmp_path / ".out.png.lock").read_text())
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        _stop(proc)
    left = sorted(p.name for p in tmp_path.glob(".*.lock"))
    assert left == [".out.json.lock", ".out.png.lock"]  # what kill -9 leaves: recognisably dead
    assert f"pid={proc.pid}" in (tmp_path / ".out.json.lock").read_text()
    assert owner_dead(tmp_path / ".out.json.lock")
    again = subprocess.run([*CLI, "capacity", str(CAPACITY), "--objective", "jct_p95 <= 600", "--resource", "gpu",
                            "--days", "2", "--json", str(tmp_path / "out.json")],
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "out.json").is_file()
    assert not list(tmp_path.glob(".*.lock")), "a stale lock was left (the --plot one included)"
    assert not list(tmp_path.glob(".*.tmp"))


def test_sigterm_unwinds_and_leaves_no_lock(tmp_path: Path) -> None:
    proc = _capacity(tmp_path, "out.json")
    try:
        assert _wait_for(lambda: (tmp_path / ".out.json.lock").is_file() and proc.poll() is None)
        time.sleep(0.5)  # into the simulations
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        _stop(proc)
    assert proc.returncode == 143, err
    assert err.decode().strip().splitlines()[-1] == "error: terminated"
    assert not list(tmp_path.iterdir()), sorted(p.name for p in tmp_path.iterdir())


HOLD = """\
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(60)
"""


def _dead_pid() -> int:
    done = subprocess.run(["true"], check=True)
    assert done.returncode == 0
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@pytest.mark.parametrize("owner", ["dead", "alive"])
def test_a_lock_held_by_an_orphan_of_a_dead_command_does_not_block(tmp_path: Path, owner: str) -> None:
    """The flock of a killed command can outlive it in a child that inherited the descriptor; the
    recorded owner tells: dead -> replaced, alive -> a writer, refused."""
    import socket

    out = tmp_path / "r.json"
    lock = lock_path(out)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(lock)], stdout=subprocess.PIPE)
    try:
        lock.write_text("")  # created before the holder opens it
        pid = _dead_pid() if owner == "dead" else holder.pid
        lock.write_text(f"{LOCK_TAG} pid={pid} host={socket.gethostname()} for=r.json\n")
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
        try:
            if owner == "dead":
                check_output(out, option="--json")
                assert f"pid={os.getpid()}" in lock.read_text()  # ours now
            else:
                with pytest.raises(SimschedError, match="another simsched command"):
                    check_output(out, option="--json")
                assert remove_stale_locks(tmp_path) == 0 and lock.is_file()
        finally:
            release_outputs()
    finally:
        holder.kill()
        holder.wait()
    assert not lock.exists() or owner == "alive"


def test_only_simsched_locks_are_removed(tmp_path: Path) -> None:
    mine = tmp_path / ".tool.lock"
    mine.write_text("a user's own lock file\n")
    empty_other = tmp_path / ".plain.lock"  # empty, but no NAME.SUFFIX: not what simsched ever wrote
    empty_other.write_text("")
    with output_lock(tmp_path / "busy.json"):  # held by this process: not stale
        assert remove_stale_locks(tmp_path) == 0
        assert (tmp_path / ".busy.json.lock").is_file()
    stale = tmp_path / ".old.csv.lock"  # an empty lock of an earlier simsched, nobody holding it
    stale.write_text("")
    assert remove_stale_locks(tmp_path) == 1
    assert mine.is_file() and empty_other.is_file() and not stale.exists()


def test_a_killed_writers_temporary_file_is_removed_with_its_lock(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    left = tmp_path / ".r.json.abc123.tmp"  # what kill -9 in the middle of atomic_path leaves
    left.write_text("half")
    other = tmp_path / ".s.json.abc123.tmp"  # another output's: not ours to remove
    other.write_text("half")
    try:
        check_output(out, option="--json")
    finally:
        release_outputs()
    assert not left.exists() and other.exists()


# ---------------------------------------------------------------- Dask: no survivor
STUDY = """\
name: kill-dask
scenario:
  platform: {processors: [{name: p, count: 8}]}
  workload: {generator: random, tasks: 600}
  schedulers: [heft]
seeds: [SEEDS]
""".replace("SEEDS", ", ".join(str(i) for i in range(200)))


def _session(sid: int) -> set[int]:
    """Live (not zombie) processes of session ``sid``: every process the sweep started, however
    reparented."""
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            out.add(int(entry))
    return out


def _workers(sid: int) -> set[int]:
    """The spawned worker processes of session ``sid``."""
    out = set()
    for pid in _session(sid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if b"spawn_main" in fh.read():
                    out.add(pid)
        except OSError:
            pass
    return out


@pytest.mark.slow
@pytest.mark.parametrize("moment", ["workers starting", "workers busy"])
def test_kill_9_of_a_dask_sweep_leaves_no_process_of_its_session(tmp_path: Path, moment: str) -> None:
    pytest.importorskip("distributed")
    (tmp_path / "study.yaml").write_text(STUDY)
    parts = tmp_path / "r.csv.parts"
    proc = subprocess.Popen([*CLI, "sweep", str(tmp_path / "study.yaml"), "-o", str(tmp_path / "r.csv"),
                             "--dask", "local", "--workers", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        if moment == "workers busy":
            ready = _wait_for(lambda: bool(list(parts.glob("part-*.csv"))) or proc.poll() is not None)
        else:  # as soon as the worker processes exist, before the cluster is up and runs start
            ready = _wait_for(lambda: len(_workers(proc.pid)) >= 2 or proc.poll() is not None)
        assert ready and proc.poll() is None, "the sweep ended before it could be killed"
        started = _session(proc.pid) - {proc.pid}
        assert started, "the sweep started no process"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        _wait_for(lambda: not _session(proc.pid), seconds=5)
        survivors = _session(proc.pid)
        assert not survivors, f"{len(survivors)} process(es) of the sweep's session outlived it"
    finally:
        for pid in _session(proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _stop(proc)


def test_a_lock_file_never_exists_without_its_owner(tmp_path: Path) -> None:
    """Whoever sees the lock file sees who holds it: a ``kill -9`` at any moment leaves a lock that
    names its dead owner (a lock created empty and written afterwards was seen empty by CI)."""
    out = tmp_path / "r.json"
    script = ("import sys\nfrom simsched.outputlock import output_lock\n"
              "for _ in range(3000):\n    with output_lock(sys.argv[1]):\n        pass\n")
    proc = subprocess.Popen([sys.executable, "-c", script, str(out)])
    seen = empty = 0
    try:
        while proc.poll() is None:
            try:
                text = lock_path(out).read_text()
            except FileNotFoundError:
                continue
            seen += 1
            empty += not text.startswith(f"{LOCK_TAG} pid={proc.pid} ")
    finally:
        _stop(proc)
    assert proc.returncode == 0
    assert seen > 0, "the lock was never seen: the test watched nothing"
    assert empty == 0, f"{empty} of {seen} reads saw a lock file without its owner"
    assert not list(tmp_path.iterdir()), "a lock or staging file was left"
