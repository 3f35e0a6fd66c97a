"""SIGTERM ends a ``simsched`` command within a bounded time, exit code 143, its output locks and
temporary files gone, even when the command's unwinding would wait forever (a thread that never ends,
as a worker pool's manager waits for a running task at exit); a second SIGTERM during the unwinding
does not cut its cleanup short; a SIGTERM inside the few statements between creating a lock or
temporary file and owning its removal is raised once the removal is owned."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simsched import fileio
from simsched.fileio import signals_deferred

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals and flock of Linux")

STUCK = """\
import sys, threading, time
import typer
from simsched.cli import common
from simsched.outputs import check_output

common.TERM_GRACE_S = float(sys.argv[3])
getattr(common, 'standalone', lambda: None)()  # (absent before the watchdog)

@common.recorded_reads
def command(out):
    check_output(out, option="--json")
    if sys.argv[2] == "stuck":  # a non-daemon thread that never ends: the interpreter's exit waits for it
        threading.Thread(target=time.sleep, args=(3600,), name="stuck").start()
    print("ready", flush=True)
    time.sleep(3600)

try:
    command(sys.argv[1])
except typer.Exit as exc:
    sys.exit(exc.exit_code)
"""


def _start(tmp_path: Path, mode: str, grace: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", STUCK, str(tmp_path / "out.json"), mode, str(grace)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n", proc.stderr.read() if proc.stderr else ""
    assert (tmp_path / ".out.json.lock").is_file()
    return proc


def _finish(proc: subprocess.Popen, seconds: float) -> tuple[int, str]:
    try:
        _, err = proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"SIGTERM did not end the command within {seconds} s")
    return proc.returncode, err.decode()


def test_sigterm_ends_a_command_whose_unwinding_would_wait_forever(tmp_path: Path) -> None:
    proc = _start(tmp_path, "stuck", grace=5.0)
    proc.send_signal(signal.SIGTERM)
    code, err = _finish(proc, 90)
    assert code == 143, err
    assert err.strip().splitlines()[-1] == "error: terminated"
    assert not list(tmp_path.iterdir()), sorted(p.name for p in tmp_path.iterdir())


def test_a_second_sigterm_does_not_cut_the_unwinding_short(tmp_path: Path) -> None:
    proc = _start(tmp_path, "plain", grace=60.0)
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGTERM)
    code, err = _finish(proc, 90)
    assert code == 143, err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "error: terminated"
    assert not list(tmp_path.iterdir()), sorted(p.name for p in tmp_path.iterdir())


class Boom(BaseException):
    pass


def test_an_interrupt_inside_a_deferred_block_is_raised_when_it_ends() -> None:
    done = []
    with pytest.raises(Boom):
        with signals_deferred():
            with signals_deferred():
                fileio.interrupt(Boom())
                done.append("inner")
            done.append("outer")  # still inside: the file's removal can be arranged here
    assert done == ["inner", "outer"]
    with pytest.raises(Boom):
        fileio.interrupt(Boom())  # outside any block: at once
    with signals_deferred():
        pass  # nothing pending is left over


def test_a_sigterm_while_the_lock_is_taken_leaves_no_lock(tmp_path: Path) -> None:
    """Python runs the handler at the first instruction after the signal: here right after the lock
    file is linked into place, before the code that removes it at the end is in charge, which used
    to leave the placed lock file behind; now ``Terminated`` comes once the lock is owned, and the
    lock is removed as the command unwinds."""
    from simsched.cli import common
    from simsched.outputs import check_output, release_outputs

    real_link = os.link
    sent = []

    def link(src: str, dst: str) -> None:
        real_link(src, dst)
        if not sent and str(dst).endswith(".lock"):
            sent.append(dst)
            os.kill(os.getpid(), signal.SIGTERM)

    previous = signal.signal(signal.SIGTERM, common._on_sigterm)
    common._TERM["terminating"] = False
    was_standalone, common._TERM["standalone"] = common._TERM["standalone"], False  # no watchdog in the runner
    try:
        fileio.os.link = link  # type: ignore[attr-defined]
        with pytest.raises(common.Terminated):
            check_output(tmp_path / "out.json", option="--json")
            time.sleep(5)  # not reached: raised as the lock is recorded
    finally:
        fileio.os.link = real_link  # type: ignore[attr-defined]
        signal.signal(signal.SIGTERM, previous)
        common._TERM["terminating"] = False
        common._TERM["standalone"] = was_standalone
        release_outputs()
    assert sent
    assert not list(tmp_path.iterdir()), sorted(p.name for p in tmp_path.iterdir())


def test_an_in_process_call_never_arms_the_watchdog_of_its_caller() -> None:
    """``main([...])`` called by another program (a test, a notebook) must not mark that process as the
    ``simsched`` program: a SIGTERM its caller later handles would otherwise arm the watchdog and end
    the caller 20 s later (it ended a pytest-xdist worker in CI)."""
    from simsched.cli import common
    from simsched.cli.main import main

    was = common._TERM["standalone"]
    common._TERM["standalone"] = False
    try:
        with pytest.raises(SystemExit):
            main(["list"])
        assert common._TERM["standalone"] is False
    finally:
        common._TERM["standalone"] = was
