"""Running one case: its directory materialised, a forked child under CPU-time, wall-time and memory
bounds running the command's real entry point, and the verdict (:func:`judge`) against the contract of
``docs/robustness.md``; :func:`run_campaign` runs many, ``jobs`` at a time.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import resource
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simsched.testing.hostile.documents import Case

TIME_S = 10.0
"""CPU-time bound of one case (user + system seconds of its child): a slower case is a hang."""

WALL_S = 120.0
"""Wall-clock bound of one case: the child is killed after it (a machine shared with other work may
stretch wall time, so the verdict is on CPU time; this bound catches a child that blocks)."""

MEMORY_MB = 1024
"""Address space a case may add to what its child starts with (``RLIMIT_AS``)."""


@dataclass
class Outcome:
    """What one case did, and the verdict: ``clean`` or the first broken promise."""

    case: Case
    verdict: str
    code: int | None
    seconds: float
    line: str = ""

    @property
    def clean(self) -> bool:
        return self.verdict == "clean"


def _hashes(root: Path) -> dict[str, str]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for n in filenames:
            p = Path(dirpath) / n
            rel = str(p.relative_to(root))
            if p.is_symlink() or not p.is_file():
                out[rel] = "special"
                continue
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
        for d in dirnames:
            out[str((Path(dirpath) / d).relative_to(root)) + "/"] = "dir"
    return out


def materialise(case: Case, root: Path) -> None:
    for name, data in case.files().items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)  # a file read back may sit in a folder (out/rl.pt)
        (root / name).write_bytes(data)
    specials = {**case.special, "adir": "directory", "afifo": "fifo", "loop": "symlink loop"}
    for name, what in specials.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if p.exists() or p.is_symlink():
            p.unlink()
        if what == "directory":
            p.mkdir()
        elif what == "fifo":
            os.mkfifo(p)
        elif what == "symlink loop":
            os.symlink(name, p)
        elif what.startswith("link:"):
            os.symlink(what[5:], p)


def run_child(entry: Callable[[list[str]], Any], argv: list[str], root: Path, out: Path) -> None:
    """In the forked child: the case's directory, its limits, its streams; run the entry point."""
    code = 70
    try:
        os.chdir(root)
        fd_out = os.open(out / "stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        fd_err = os.open(out / "stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        fd_in = os.open(os.devnull, os.O_RDONLY)
        os.dup2(fd_in, 0)
        os.dup2(fd_out, 1)
        os.dup2(fd_err, 2)
        # Python's streams onto fds 1 and 2 (now the files), whatever stood in for them (pytest's capture)
        redirect = contextlib.ExitStack()
        redirect.enter_context(contextlib.redirect_stdout(
            open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)))  # noqa: SIM115
        redirect.enter_context(contextlib.redirect_stderr(
            open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)))  # noqa: SIM115
        size = _address_space()
        resource.setrlimit(resource.RLIMIT_AS, (size + MEMORY_MB * 2**20, resource.RLIM_INFINITY))
        resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 2**20, resource.RLIM_INFINITY))
        try:
            entry(argv)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _address_space() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 2 * 2**30


@dataclass
class _Running:
    case: Case
    pid: int
    root: Path
    out: Path
    before: dict[str, str]
    start: float


def _start(case: Case, entry: Callable[[list[str]], Any], workdir: Path) -> _Running:
    root = Path(tempfile.mkdtemp(prefix="case-", dir=workdir))
    out = Path(tempfile.mkdtemp(prefix="out-", dir=workdir))
    materialise(case, root)
    if case.setup:  # a file only a command can write here (a results store naming this folder), then attacked
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            run_child(entry, case.setup, root, out)
        os.waitpid(pid, 0)
        if case.transform is not None:
            case.transform(root)
    before = _hashes(root)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        run_child(entry, case.argv, root, out)
    return _Running(case, pid, root, out, before, time.perf_counter())


def _poll(r: _Running, block: bool = False) -> Outcome | None:
    """The outcome of a running case once its child has ended (killed past :data:`WALL_S`), else None."""
    done, status, usage = os.wait4(r.pid, 0 if block else os.WNOHANG)
    hung = False
    if not done:
        if time.perf_counter() - r.start <= WALL_S:
            return None
        hung = True
        os.kill(r.pid, signal.SIGKILL)
        _, status, usage = os.wait4(r.pid, 0)
    cpu = usage.ru_utime + usage.ru_stime
    hung = hung or cpu > TIME_S
    out = r.out
    stdout = (out / "stdout").read_text(encoding="utf-8", errors="replace") if (out / "stdout").exists() else ""
    stderr = (out / "stderr").read_text(encoding="utf-8", errors="replace") if (out / "stderr").exists() else ""
    after = _hashes(r.root)
    code = None if hung or os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    verdict, line = judge(r.case, code, hung, status, stdout, stderr, r.before, after)
    _remove(r.root)
    _remove(r.out)
    return Outcome(r.case, verdict, code, cpu, line)


def run_case(case: Case, entry: Callable[[list[str]], Any], workdir: Path) -> Outcome:
    """Run ``case`` in a forked child under the time and memory bounds and judge it."""
    r = _start(case, entry, workdir)
    while True:
        o = _poll(r)
        if o is not None:
            return o
        time.sleep(0.01)


def _remove(path: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(path, topdown=False):
        for n in filenames:
            os.unlink(os.path.join(dirpath, n))
        for d in dirnames:
            p = os.path.join(dirpath, d)
            if os.path.islink(p):
                os.unlink(p)
            else:
                os.rmdir(p)
    os.rmdir(path)


def without_warnings(stderr: str) -> list[str]:
    """The non-empty lines of ``stderr`` that are not warnings: a ``warning:`` line and its indented
    continuation lines (a warning wraps at the terminal's width) are left out.  O(lines)."""
    out, warning = [], False
    for s in stderr.splitlines():
        if s.startswith("warning: "):
            warning = True
        elif not (warning and s[:1].isspace()):
            warning = False
            if s.strip():
                out.append(s)
    return out


def judge(case: Case, code: int | None, hung: bool, status: int, stdout: str, stderr: str,
           before: dict[str, str], after: dict[str, str]) -> tuple[str, str]:
    lines = without_warnings(stderr)
    line = lines[0] if lines else ""
    if hung:
        return "hang", f"more than {TIME_S:g} s of CPU (or {WALL_S:g} s of wall time)"
    if code is None:
        return "killed", f"signal {os.WTERMSIG(status)}"
    changed = [k for k, h in before.items() if after.get(k) != h
               and not (code == 0 and any(k == o or k.startswith(o.rstrip("/") + "/") for o in case.outputs))]
    if changed:
        return "input modified", f"{changed[0]} changed or removed"
    if "MemoryError" in stderr or "MemoryError" in stdout:
        return "memory blow-up", line
    if "Traceback" in stderr or "Traceback" in stdout or code not in (0, 2):
        last = [s for s in stderr.splitlines() if s.strip()]
        return "traceback", (last[-1] if last else f"exit {code}")[:300]
    if case.expect == "run" and code != 0:
        return "base does not run", line[:300]
    if code == 0:
        warned = [s for s in stderr.splitlines() if s.startswith("warning: ")]
        if case.expect == "refuse" or (case.expect == "refuse-or-warn" and not warned):
            return "exit 0 on bad input", (stdout.strip().splitlines() or [""])[0][:300]
        return "clean", "ran" if case.expect != "refuse-or-warn" else warned[0][:300]
    new = sorted(set(after) - set(before))
    if new:
        return "wrote on error", new[0]
    if case.argv[:1] == ["validate"] and lines and all(x.startswith("error: ") for x in lines):
        pass  # validate lists every problem, one line each
    elif len(lines) != 1 or not line.startswith("error: "):
        return "not one line", " | ".join(lines)[:300]
    if case.needles and not any(n and n in line for n in case.needles):
        return "not located", line[:300]
    return "clean", line[:300]


def run_campaign(cases: Sequence[Case], entry: Callable[[list[str]], Any], *, jobs: int = 2,
                 progress: Callable[[int, int, Outcome], None] | None = None) -> list[Outcome]:
    """Run ``cases``, each in its own forked child, ``jobs`` at a time; outcomes in the cases' order."""
    outcomes: dict[int, Outcome] = {}
    with tempfile.TemporaryDirectory(prefix="simsched-hostile-") as tmp:
        running: dict[int, _Running] = {}
        todo = list(enumerate(cases))
        while todo or running:
            while todo and len(running) < max(1, jobs):
                i, case = todo.pop(0)
                running[i] = _start(case, entry, Path(tmp))
            for i, r in list(running.items()):
                o = _poll(r)
                if o is not None:
                    del running[i]
                    outcomes[i] = o
                    if progress is not None:
                        progress(len(outcomes), len(cases), o)
            time.sleep(0.005)
    return [outcomes[i] for i in range(len(cases))]
