"""One meaning per flag across every command (simsched.cli.flags): the command table is walked, every short
flag stands for one long name everywhere, ``-o`` always names a file to write, and the old spellings
(``capacity -o/-r/-p``, ``summarize -o``) stop with one line that names the new one, before anything runs."""

from __future__ import annotations

import inspect
import re
import typing
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from simsched.cli.flags import SHARED
from simsched.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
STREAM = ROOT / "scenarios" / "streams" / "capacity_stream.yaml"


def _commands() -> list[tuple[str, Any]]:
    found = []

    def walk(path: str, cmd: Any) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(f"{path} {name}".strip(), sub)
        else:
            found.append((path, cmd))

    walk("", typer.main.get_command(app))
    return found


def _options(hidden: bool = False) -> list[tuple[str, Any]]:
    return [(path, p) for path, cmd in _commands() for p in cmd.params
            if getattr(p, "param_type_name", "") == "option" and bool(getattr(p, "hidden", False)) == hidden]


def test_the_walk_sees_every_command() -> None:
    paths = {path for path, _ in _commands()}
    assert {"run", "capacity", "summarize", "sweep", "explain gantt", "baseline record", "adversary"} <= paths


def test_each_short_flag_has_one_meaning_everywhere() -> None:
    meanings: dict[str, set[str]] = defaultdict(set)
    for path, p in _options():
        longs = [o for o in p.opts if o.startswith("--")]
        for short in (o for o in [*p.opts, *p.secondary_opts] if not o.startswith("--")):
            meanings[short].add(longs[0] if longs else f"{path}:{p.name}")
    clashes = {flag: sorted(names) for flag, names in meanings.items() if len(names) > 1}
    assert not clashes, f"short flags with several meanings: {clashes}"
    for flag, long in SHARED.items():  # the documented table matches the commands
        assert meanings[flag] == {long}, (flag, meanings[flag])


def test_each_long_flag_has_one_dest_and_output_is_a_path() -> None:
    dest: dict[str, set[str]] = defaultdict(set)
    for path, cmd in _commands():
        hints = typing.get_type_hints(inspect.unwrap(cmd.callback))
        for p in cmd.params:
            if getattr(p, "param_type_name", "") != "option" or p.hidden:
                continue
            for o in (o for o in p.opts if o.startswith("--")):
                dest[o].add(p.name)
            if "-o" in p.opts:  # always a file or folder written, never a value like an objective
                assert "--output" in p.opts and Path in typing.get_args(hints[p.name]) + (hints[p.name],), \
                    (path, p.opts, hints[p.name])
    assert dest["--objective"] == {"objective"} and dest["--resource"] == {"resource"}
    assert dest["--repetitions"] == {"repetitions"}


def test_objective_and_resource_have_no_short_flag() -> None:
    for path, p in _options():
        if "--objective" in p.opts or "--resource" in p.opts:
            assert all(o.startswith("--") for o in p.opts + p.secondary_opts), (path, p.opts)


OLD = [
    (["capacity", str(STREAM), "-o", "jct_p95 <= 300", "--resource", "gpu"],
     'error: capacity: -o is --output in every command; give the objective with --objective "jct_p95 <= 300"'),
    (["capacity", str(STREAM), "--objective", "jct_p95 <= 300", "-r", "gpu"],
     "error: capacity: -r is --repetitions in every command; give the resource with --resource gpu"),
    (["capacity", str(STREAM), "-p", "fifo"], "give the scheduler with -s/--scheduler fifo"),
    (["summarize", "nothing.csv", "-o", "makespan <= 3"], 'give the objective with --objective "makespan <= 3"'),
]


@pytest.mark.parametrize("args,says", OLD, ids=["capacity-o", "capacity-r", "capacity-p", "summarize-o"])
def test_old_spellings_are_refused_in_one_line_naming_the_new(args: list[str], says: str,
                                                             tmp_path: Path) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], result.stderr
    assert "Traceback" not in result.output and result.stdout == ""


def test_old_spellings_are_hidden_from_help() -> None:
    text = CliRunner().invoke(app, ["capacity", "--help"], env={"COLUMNS": "200"}).stdout
    assert "--objective" in text and "--resource" in text
    assert not re.search(r"\s-[orp]\s", text), text


OLD_IN_TEXT = re.compile(r"simsched (?:capacity|summarize)\b[^\n`]*?\s-[orp]\s")


def test_docs_readme_and_scenarios_use_the_new_spellings() -> None:
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "scenarios").rglob("*.yaml")]
    stale = [f"{f.relative_to(ROOT)}: {m.group(0)}" for f in files
             for m in OLD_IN_TEXT.finditer(f.read_text(encoding="utf-8"))]
    assert not stale, stale


@pytest.mark.parametrize("args,says", [
    (["run", "--nope", "x.yaml"], "error: run: No such option: --nope (see `simsched run --help`)"),
    (["capacity"], "error: capacity: Missing argument"),
    (["run", "x.yaml", "-r", "abc"], "error: run: Invalid value for '--repetitions'"),
    (["nope"], "error: No such command 'nope'"),
    (["capacity", "x.yaml", "-o", "jct_p95 <= 5"], 'give the objective with --objective "jct_p95 <= 5"'),
])
def test_usage_mistakes_end_in_one_line_not_a_panel(args: list[str], says: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from simsched.cli.main import main

    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], err
    assert out == "" and "╭" not in err


def test_the_entry_point_keeps_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    from simsched.cli.main import main

    with pytest.raises(SystemExit) as stop:
        main(["validate", str(ROOT / "scenarios" / "topcuoglu2002.yaml")])
    assert stop.value.code == 0 and capsys.readouterr().out.startswith("ok: ")
    with pytest.raises(SystemExit) as stop:
        main(["validate", str(ROOT / "no-such.yaml")])
    assert stop.value.code == 2
