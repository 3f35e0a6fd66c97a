"""One width rule for every output: no printed line is wider than the terminal (80 or 100 columns), in a
pty or piped (no terminal: ``$COLUMNS``, else 100), for every command of the command table and every
bundled scenario's ``run`` and ``validate``.

The test walks the command table (a new command without a case here fails
:func:`test_every_command_of_the_table_has_a_width_case`) and the scenarios folder (a new scenario is run
and validated by the slow walk), so new tables are born under the rule.  ``error:`` lines are exempt:
an error is one located line by contract (a script reads it whole).  The fast tests hold a representative
subset (a static table, a stream with energy, a cluster log, a capacity mix, ``list`` piped with no
``$COLUMNS``) in-process and in a real pty; ``-m slow`` walks everything.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simsched.cli.main import app

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "scenarios").rglob("*.yaml") if "data" not in p.parts)
WIDTHS = (80, 100)
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")

HEAVY_RUN = {  # run with one repetition in the walk (their full run takes minutes; the table is the same shape)
    "scenarios/streams/rl_dynamic.yaml": ["-r", "1"],
    "scenarios/streams/rl_worlds.yaml": ["-r", "1"],
}
CAPACITY = ["scenarios/capacity/gpus_for_a_deadline.yaml", "scenarios/tutorials/capacity_whatif.yaml",
            "scenarios/energy/gpu_mix.yaml", "scenarios/cluster/lublin_256.yaml"]


def too_wide(text: str, width: int) -> list[str]:
    """The lines of ``text`` (escape codes removed, a carriage return starting a new line as on a
    terminal) wider than ``width``, ``error:`` lines aside."""
    lines = re.split(r"[\r\n]", ESCAPES.sub("", text))
    return [line for line in lines if len(line) > width and not line.startswith("error: ")]


def piped(args: list[str], width: int | None, cwd: Path) -> tuple[int, str]:
    """``simsched ARGS`` in this process with output to a pipe; ``$COLUMNS`` = ``width`` (None: unset)."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, args, env={"COLUMNS": None if width is None else str(width)})
    finally:
        os.chdir(old)
    return result.exit_code, result.output


def in_pty(args: list[str], width: int, cwd: Path, timeout: float = 300) -> tuple[int, str]:
    """``simsched ARGS`` as a program whose stdout and stderr are a pty ``width`` columns wide (no
    ``$COLUMNS``): what a person sees in a terminal, progress bars included."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, width, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(PYTHONPATH=str(ROOT), TERM="xterm-256color")
    proc = subprocess.Popen([sys.executable, "-m", "simsched.cli.main", *args], stdin=slave, stdout=slave,
                            stderr=slave, cwd=cwd, env=env, close_fds=True)
    os.close(slave)
    out, start = b"", time.monotonic()
    try:
        while time.monotonic() - start < timeout:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed the pty
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        os.close(master)
    return proc.returncode, out.decode("utf-8", "replace")


def check(args: list[str], width: int | None, cwd: Path = ROOT, terminal: bool = False) -> str:
    """Run ``args`` (piped, or in a pty) and fail on any line wider than ``width`` (None: the default
    of a pipe, 100) or on an exit other than 0 and 2 (a refusal is one ``error:`` line)."""
    code, out = in_pty(args, width, cwd) if terminal else piped(args, width, cwd)
    assert code in (0, 2), (args, code, out[-2000:])
    wide = too_wide(out, width or 100)
    assert not wide, (args, width, "terminal" if terminal else "piped", [len(w) for w in wide], wide[:3])
    return out


# --------------------------------------------------------------------------- the command table
def command_paths() -> set[str]:
    """Every command of the table, sub-commands as ``group sub`` (hidden ones included)."""
    import typer.main

    root = typer.main.get_command(app)
    paths: set[str] = set()

    def walk(group: object, prefix: str) -> None:
        for name, cmd in getattr(group, "commands", {}).items():
            path = f"{prefix}{name}"
            if getattr(cmd, "commands", None):
                walk(cmd, path + " ")
            else:
                paths.add(path)

    walk(root, "")
    return paths


def _cases(tmp: Path) -> dict[str, list[list[str]] | str]:
    """A representative, small invocation of each command (or the reason it is left to others), as the
    docs write them: run from a folder holding ``scenarios/`` and ``tests/`` (:func:`_workspace`), outputs
    under ``out/`` (``tmp``)."""
    corpus = "tests/data/wfformat/recorded_1.5.json"
    quick = "scenarios/quickstart.yaml"
    topc = "scenarios/topcuoglu2002.yaml"
    return {
        "run": "every bundled scenario (test_every_bundled_scenario_runs_and_validates_within_the_width)",
        "validate": "every bundled scenario (test_every_bundled_scenario_runs_and_validates_within_the_width)",
        "list": [["list"]],
        "check": [["check", "heft", "-n", "2"], ["check", "fcfs", "-n", "2"]],
        "capacity": [["capacity", s, "--days", "2"] for s in CAPACITY],
        "generalise": [["generalise", "scenarios/streams/failures.yaml", "-s", "mct", "--days", "2"]],
        "explain heft": [["explain", "heft"], ["explain", "heft", quick]],
        "explain cpop": [["explain", "cpop"], ["explain", "cpop", topc]],
        "explain peft": [["explain", "peft"], ["explain", "peft", topc]],
        "explain minmin": [["explain", "minmin"], ["explain", "minmin", topc]],
        "explain greedy-gap": [["explain", "greedy-gap", "--tries", "5"]],
        "explain gantt": [["explain", "gantt", topc, "-o", str(tmp / "g.html")]],
        "explain graph": [["explain", "graph", topc, "-o", str(tmp / "g.png")]],
        "workload info": [["workload", "info", "scenarios/data/pipeline_30.dot"]],
        "workload convert": [["workload", "convert", "scenarios/data/pipeline_30.dot", str(tmp / "p.json")]],
        "baseline record": [["baseline", "record", topc, "-o", str(tmp / "b.json")]],
        "baseline compare": [["baseline", "compare", str(tmp / "b.json"), "--all"]],
        "fidelity": [["fidelity", corpus]],
        "calibrate": [["calibrate", corpus, "-o", str(tmp / "profile.yaml")]],
        "sweep": [["sweep", "scenarios/studies/list_axes.yaml", "-w", "1", "-o", str(tmp / "s.csv")]],
        "summarize": [["summarize", str(tmp / "s.csv"), "--metric", "slr"]],
        "plot": [["plot", str(tmp / "s.csv"), "-o", str(tmp / "s.png")]],
        "report": [["report", str(tmp / "s.csv"), "-o", str(tmp / "s.html")]],
        "adversary": [["adversary", "heft", "cpop", "--tasks", "6", "--processors", "2", "--iterations", "20",
                       "--seed", "0", "--out", str(tmp / "adv")]],
        "bench": [["bench", "spine", "--quick"]],
        "train deepsched": "trains a network for minutes (torch); its progress bar is rich's, at the console's width",
        "train rl": "trains a network for minutes (torch); its progress bar is rich's, at the console's width",
        "train batch-priority": "fits a priority function over a log's train windows (minutes); its lines go "
                                "through say(), wrapped at the width",
        "docs generate": "hidden: writes the generated reference pages, prints one line per file",
        "calibrate-curve": "needs several runs per installation, which the shipped executions do not have; "
                           "tests/test_fidelity_prior.py runs it on generated runs and checks its lines fit 100",
    }


def test_every_command_of_the_table_has_a_width_case(tmp_path: Path) -> None:
    """A command added to the table without a case here fails: every output is born under the rule."""
    cases = _cases(tmp_path)
    assert command_paths() <= set(cases), sorted(command_paths() - set(cases))


def _workspace(tmp_path: Path) -> Path:
    """A folder like the docs' reader's: ``scenarios`` and ``tests`` of the checkout linked in, ``out/``
    empty, so that outputs are named as the docs name them (``out/s.csv``, not a 90-column temporary path)."""
    for name in ("scenarios", "tests"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    (tmp_path / "out").mkdir()
    return tmp_path


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
def test_every_documented_command_fits(width: int, tmp_path: Path) -> None:
    """Every case of :func:`_cases`, in order (sweep before summarize, record before compare), piped at
    ``width`` columns."""
    failed = []
    here = _workspace(tmp_path)
    for path, cases in _cases(Path("out")).items():
        if isinstance(cases, str) or path not in command_paths():
            continue
        for args in cases:
            try:
                check(args, width, cwd=here)
            except AssertionError as exc:  # every command's verdict, not only the first one's
                failed.append(str(exc)[:600])
    assert not failed, "\n".join(failed)


@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_bundled_scenario_runs_and_validates_within_the_width(scenario: str) -> None:
    """``validate`` and ``run`` of every bundled scenario at 80 and 100 columns, piped."""
    for width in WIDTHS:
        check(["validate", scenario], width)
        check(["run", scenario, *HEAVY_RUN.get(scenario, [])], width)


# --------------------------------------------------------------------------- the fast, representative subset
FAST = [
    ["run", "scenarios/topcuoglu2002.yaml"],
    ["run", "scenarios/quickstart.yaml", "-r", "2", "-s", "heft", "-s", "cpop", "-s", "mct"],
    ["run", "scenarios/energy/power_off.yaml", "-r", "2"],
    ["run", "scenarios/cluster/dag_gang_jobs.yaml"],
    ["run", "scenarios/cluster/gang_pipeline.yaml"],
    ["run", "scenarios/streams/trace.yaml", "--fresh"],  # 263 columns before: seed lines, load and its warning
    ["validate", "scenarios/streams/workflows.yaml"],
    ["validate", "scenarios/cluster/dag_gang_jobs.yaml"],
    ["explain", "cpop"],
    ["list"],
]


@pytest.mark.parametrize("width", WIDTHS)
def test_representative_outputs_fit_piped(width: int) -> None:
    for args in FAST:
        check(args, width)


def test_a_pipe_without_columns_is_100_wide() -> None:
    """``simsched list > file`` (no terminal, no ``$COLUMNS``) is at most 100 columns, not 200."""
    out = check(["list"], None)
    assert max(len(line) for line in out.splitlines()) > 80  # it uses the room it has


def test_the_capacity_mix_fits_with_its_numbers_whole() -> None:
    """The capacity table at 80 and 100 columns: no number cut short (no ``…``)."""
    for width in WIDTHS:
        out = check(["capacity", "scenarios/energy/gpu_mix.yaml", "--days", "2"], width)
        assert "…" not in out


@pytest.mark.parametrize("width", WIDTHS)
def test_representative_outputs_fit_in_a_terminal(width: int) -> None:
    """In a real pty (progress bars, colour): a stream with energy, a gang cluster log, ``list``."""
    for args in (["run", "scenarios/energy/power_off.yaml", "-r", "2"], ["run", "scenarios/cluster/dag_gang_jobs.yaml"],
                 ["validate", "scenarios/streams/workflows.yaml"], ["list"]):
        check(args, width, terminal=True)


# --------------------------------------------------------------------------- answers that carry their cost
def test_a_capacity_answer_carries_energy_and_money_per_day(tmp_path: Path) -> None:
    """Sizing the gpu entry of a platform with power and prices: the table, the answer line and the JSON
    say what the answer draws and costs per day."""
    import json

    out = tmp_path / "a.json"
    text = check(["capacity", "scenarios/energy/gpu_mix.yaml", "--days", "2", "--resource", "gpu",
                  "--objective", "jct_p95 <= 300", "--json", str(out)], 100)
    assert "kWh/day" in text and "USD/day" in text and "costs " in " ".join(text.split())
    level = next(lv for lv in json.loads(out.read_text())["variants"][0]["levels"])
    assert {"energy_kwh", "cost_usd", "jct_p95"} <= set(level["metrics"])


def test_off_for_powered_off_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "off.yaml"
    path.write_text("name: off\nplatform:\n  processors: [{name: cpu, type: cpu, count: 2}]\n  power:\n"
                    "    types: {cpu: {idle: 20, busy: 95, off: 2}}\nworkload:\n  tasks:\n"
                    "    - {name: a, cost: [1, 1]}\nschedulers: [heft]\n")
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2 and "powered_off" in result.output and "Keys should be strings" not in result.output
