"""The docs cannot rot: generated pages are current, runnable blocks run, links and images resolve.

Runnable blocks: a fenced ``bash`` block right after ``<!-- runnable -->`` (or
``<!-- runnable: VAR=value ... -->``, whose variables are set for the block so that it runs a small
setting) is executed with ``bash -e`` in a scratch directory holding a copy of ``scenarios/`` and
``docs/img/``; it must exit 0 and write only under ``out/`` (or a temporary folder outside the
repository): a block that creates or changes any other file there fails.  User pages (docs/ and the
README) never mention the project's issues ("issue 7").  See docs/index.md, "Conventions".

Every documented command runs: each fenced ``bash`` block of docs/ that calls ``simsched`` is either runnable
or named in :data:`NOT_RUN` with the reason.  Where a runnable block with no variables is followed by its
printed output (a plain fenced block), the tables the command prints are compared with the page's, row by row,
cell by cell, apart from wall times (cells ending in ``ms``/``s``) and cells written ``...``, and so are its
``ok:``, ``offered load``, ``warning:`` and ``error:`` lines, whole.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import compare_tables

from simsched.report import reference_docs as docs_gen
from simsched.report.reference_docs.scenario_page import EXAMPLES
from simsched.report.reference_docs.scheduler_page import BEGIN

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
USER_PAGES = [*PAGES, ROOT / "README.md"]
ISSUE = re.compile(r"\bissues?\s*#?\s*\d+", re.I)
RUNNABLE = re.compile(r"^<!-- runnable(?::(?P<env>[^>]*))? -->\n```bash\n(?P<body>.*?)^```", re.M | re.S)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
PENDING = {"studies.md", "deepsched.md", "rl.md"}
"""Pages other issues are writing; a link to one is allowed until it exists."""


FENCE = re.compile(r"^```(\w*)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
PRINTED = re.compile(r"\s*```[ \t]*\n(.*?)^```", re.M | re.S)
"""The plain fenced block right after a runnable block: what its commands print."""

NOT_RUN = {
    "simsched train batch-priority scenarios/cluster/lublin": "needs the fetched Lublin logs and 3,380 window "
    "replays each (about 8 CPU minutes); tests/test_batch_learned.py trains on the shipped log's windows",
    "simsched generalise scenarios/cluster/": "needs the fetched Lublin logs, the models the training above writes "
    "and 1,100 window replays per fresh matrix; tests/test_generalise_windows.py runs the matrix on small windows "
    "and on the protocol's Lublin-1 windows when fetched",
    "simsched run scenarios/cluster/rlscheduler_lublin": "needs the two Lublin logs fetched by "
    "tools/fetch_rlscheduler_traces.sh (no licence: not shipped); tests/test_log_windows.py runs cells of both "
    "when they are present",
    "simsched train deepsched scenarios/deepsched/general.yaml": "trains/evaluates on 2000 instances: minutes",
    "simsched train deepsched scenarios/deepsched/tiny.yaml": "trains a network (~20 s) then evaluates it; the "
    "tiny scenario is trained in tests/test_deepsched.py",
    "simsched run scenarios/deepsched_montage.yaml": "needs the general checkpoint that `train ... general.yaml` "
    "writes (minutes of training)",
    "simsched train rl": "trains agents for minutes (the tiny one runs in the runnable block of rl.md)",
    "simsched bench": "speed benchmarks take minutes and their numbers are machine-dependent",
    "simsched capacity scenarios/cluster/": "about 18 replays of the 2,000-job log per answer (a minute on a loaded "
    "machine); tests/test_swf.py runs a capacity search on a slice of the same log",
    "simsched run scenarios/cluster/ricc_2010.yaml": "four policies replay 4,665 jobs on 8,192 cores (~5 s "
    "with numba, minutes without it); tests/test_batch.py and tests/test_swf_export.py replay the same log",
    "simsched adversary deepsched heft --minutes 9": "a 9-minute search",
    "simsched adversary rl heft --minutes 9": "a 9-minute search",
    "simsched run scenarios/deepsched/try_tiny.yaml": "needs the checkpoint `train deepsched ... tiny.yaml` writes",
    "simsched plot out/ccr_shape.csv --x workload.shape": "needs the study of the block before it; "
    "the same `plot` runs in the runnable block of studies.md",
    "simsched summarize out/ccr_shape.csv --metric slr": "needs the study swept at the top of studies.md, whose "
    "runnable block runs this same command",
    "simsched generalise scenarios/streams/rl_dynamic.yaml": "generalisation cells of 4 days each for the "
    "late-binding rule and rl (minutes); tests/test_rl_generalise_matrix.py runs the matrix on 2 cells x 2 days",
    "simsched calibrate-curve /tmp/WfInstances": "needs the fetched WfInstances corpus and 72 fits of 6 CPU s; "
    "tests/test_fidelity_prior.py runs the curve on generated runs",
    "simsched calibrate /tmp/WfInstances": "needs the fetched WfInstances corpus (150 MB, LGPL-3.0, not shipped) "
    "and 10 CPU-minutes; tests/test_fidelity.py calibrates the shipped executions end to end",
    "simsched fidelity /tmp/WfInstances": "needs the fetched WfInstances corpus and the profile calibrate writes; "
    "tests/test_fidelity.py runs fidelity on the shipped executions",
    "simsched calibrate out/by-": "needs the fetched WfInstances corpus, split by size above, and 10 "
    "CPU-minutes; tests/test_fidelity_parts.py calibrates one folder and predicts another",
    "simsched fidelity out/by-": "needs the profile the calibration before it writes; "
    "tests/test_fidelity_parts.py scores runs brought later against a profile",
    "simsched run scenarios/streams/rl_dynamic.yaml": "100 days of every rule and the learned agent (minutes); "
    "tests/test_rl_dynamic.py runs rl on streams, and rl.md's tables come from simsched.learned.rl.dynamic",
}
"""Documented commands the docs test does not run, by prefix, each with the reason."""


def _blocks() -> list[tuple[str, dict[str, str], str, str | None]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for k, m in enumerate(RUNNABLE.finditer(text)):
            env = dict(item.split("=", 1) for item in (m.group("env") or "").split())
            printed = PRINTED.match(text, m.end())
            found.append((f"{page.relative_to(DOCS)}#{k + 1}", env, m.group("body"),
                          printed.group(1) if printed and not env else None))
    return found


BLOCKS = _blocks()
CHECKED_LINES = ("ok:", "offered load", "warning:", "error:")
"""Printed lines outside tables that the docs test compares whole: verdicts, loads, warnings, errors."""


def _paragraphs(text: str) -> list[str]:
    """``text``'s lines with each wrapped line's indented continuations joined back to it (the CLI wraps
    its verdicts, loads and warnings to the terminal's width), spaces normalised."""
    joined: list[str] = []
    for raw in text.splitlines():
        if raw.startswith("  ") and raw.strip() and joined and joined[-1].startswith(CHECKED_LINES):
            joined[-1] += " " + raw.strip()
        else:
            joined.append(" ".join(raw.split()))
    return joined


def compare_lines(documented: str, printed: str) -> list[str]:
    """Documented lines starting with one of :data:`CHECKED_LINES` (and without ``...``) that the command did
    not print, spaces normalised and wrapped lines joined (:func:`_paragraphs`)."""
    got = set(_paragraphs(printed))
    return [line for line in _paragraphs(documented)
            if line.startswith(CHECKED_LINES) and "..." not in line and line not in got]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory that looks like the repository root for the commands of the docs."""
    root = tmp_path_factory.mktemp("docs-run")
    shutil.copytree(ROOT / "scenarios", root / "scenarios")
    shutil.copytree(ROOT / "docs" / "img", root / "docs" / "img")
    shutil.copytree(ROOT / "tests" / "data" / "wfinstances", root / "tests" / "data" / "wfinstances")
    return root


def _files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` outside ``out/``: relative path -> (size, mtime in ns)."""
    found = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if path.is_file() and rel.parts[0] != "out" and "__pycache__" not in rel.parts:
            stat = path.stat()
            found[str(rel)] = (stat.st_size, stat.st_mtime_ns)
    return found


def test_generated_pages_are_current() -> None:
    from simsched.cli.main import app

    stale = docs_gen.check(app)
    assert not stale, f"stale generated docs {[p.name for p in stale]}: run `simsched docs generate`"


def test_cli_reference_covers_every_command() -> None:
    from simsched.cli.main import app
    from simsched.report.reference_docs.cli_page import click_commands

    page = (DOCS / "cli.md").read_text()
    paths = [path for path, _ in click_commands(app)]
    assert {"simsched run", "simsched validate", "simsched sweep", "simsched train deepsched"} <= set(paths)
    for path in paths:
        assert f"`{path}`" in page and f"Usage: {path}" in page, f"docs/cli.md has no section for {path}"


def test_scenario_reference_examples_validate() -> None:
    from simsched.scenario import schema, stream_section

    for name, text in EXAMPLES.items():
        getattr(schema, name, None) or getattr(stream_section, name)
        (getattr(schema, name, None) or getattr(stream_section, name)).model_validate(yaml.safe_load(text))


def test_scenario_reference_types_every_section_with_its_limits() -> None:
    page = (DOCS / "scenario-reference.md").read_text(encoding="utf-8")
    top = page[page.index("## `ScenarioModel`"):page.index("## `PlatformSpec`")]
    for field in ("failures", "stragglers", "platform", "noise"):
        row = next(line for line in top.splitlines() if line.startswith(f"| `{field}` |"))
        assert "dict[str, Any]" not in row, row
    for section in ("FailuresSection", "FailureRates", "StragglersSection", "StreamSection", "ArrivalsSpec",
                    "DeadlineSpec"):
        assert f"`{section}`" in page
    assert "| `mtbf` | float > 0" in page and "| `slowdown` | float" in page and ">= 1.0" in page
    assert "| `poisson` | float > 0" in page and "| `count` | int >= 1" in page


def test_every_builtin_scheduler_is_described() -> None:
    from simsched.schedulers import registry

    text = (DOCS / "schedulers.md").read_text(encoding="utf-8")
    prose = text[:text.index(BEGIN)]
    for name in registry.BUILTIN:
        assert f"`{name}`" in prose, f"docs/schedulers.md has no prose for scheduler {name!r}"
        assert f"#### `{name}` (" in text, f"docs/schedulers.md has no parameter table for {name!r}"


def test_there_are_runnable_blocks() -> None:
    assert len(BLOCKS) >= 10


@pytest.mark.parametrize("label,env,body,printed", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_runnable_block(label: str, env: dict[str, str], body: str, printed: str | None, scratch: Path) -> None:
    # the `simsched` of the Python running the tests, also when its venv is not activated (`venv/bin/pytest`)
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    run_env = {**os.environ, "COLUMNS": "120", "PATH": path, **env}
    before = _files(scratch)
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", body], cwd=scratch, env=run_env,
                          capture_output=True, text=True, timeout=300)
    output = f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert done.returncode == 0, f"{label} failed ({done.returncode}):\n{body}\n{output}"
    after = _files(scratch)
    written = sorted(p for p in after if before.get(p) != after[p])
    assert not written, f"{label} writes into the repository ({', '.join(written[:5])}): write to out/ or a temp dir"
    if printed is not None:
        missing = compare_tables(printed, done.stdout + done.stderr) + compare_lines(printed, done.stdout + done.stderr)
        assert not missing, f"{label}: the page shows rows the command no longer prints:\n" + "\n".join(missing) + \
            "\n--- printed:\n" + done.stdout[-3000:]


def _documented_commands() -> list[tuple[str, str, bool]]:
    """(page, command, runnable) for every ``simsched`` line of a fenced bash block in docs/."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            if m.group(1) != "bash":
                continue
            runnable = text[:m.start()].rstrip().rsplit("\n", 1)[-1].startswith("<!-- runnable")
            for line in m.group(2).splitlines():
                if line.strip().startswith("simsched "):
                    found.append((str(page.relative_to(DOCS)), line.strip(), runnable))
    return found


def test_every_documented_command_runs_or_says_why_not() -> None:
    commands = _documented_commands()
    assert len(commands) >= 40
    unaccounted = [f"{page}: {cmd}" for page, cmd, runnable in commands
                   if not runnable and not any(cmd.startswith(prefix) for prefix in NOT_RUN)]
    assert not unaccounted, "documented commands neither runnable nor in NOT_RUN:\n" + "\n".join(unaccounted)
    assert all(reason.strip() for reason in NOT_RUN.values())
    used = [prefix for prefix in NOT_RUN if any(cmd.startswith(prefix) for _, cmd, r in commands if not r)]
    assert sorted(used) == sorted(NOT_RUN), "NOT_RUN names commands the docs no longer show"


def test_line_comparison_catches_a_changed_verdict() -> None:
    doc = "ok: s.yaml: 3 tasks\noffered load 0.77 (cpu 0.77)\nresults written to x\nwarning: ... anything"
    assert compare_lines(doc, "ok: s.yaml: 3  tasks\noffered load 0.77 (cpu 0.77)\n") == []
    assert compare_lines(doc, "ok: s.yaml: 3 tasks\noffered load 0.78 (cpu 0.78)") == ["offered load 0.77 (cpu 0.77)"]


def test_table_comparison_catches_a_changed_cell() -> None:
    doc = "│ heft │ 80 │ 44.2 │ 0.5 ms │\n│ cpop │ 86 │ ... │ 1 ms │"
    assert compare_tables(doc, "│ heft │ 80 │ 44.2 │ 0.7 ms │\n│ cpop │ 86 │ 50.8 │ 2 ms │") == []
    assert compare_tables(doc, "│ heft │ 81 │ 44.2 │ 0.5 ms │\n│ cpop │ 86 │ 50.8 │ 2 ms │") == ["heft | 80 | 44.2 | *"]
    assert compare_tables(doc, "") == ["heft | 80 | 44.2 | *", "cpop | 86 | ... | *"]


@pytest.mark.parametrize("page", USER_PAGES, ids=[str(p.relative_to(ROOT)) for p in USER_PAGES])
def test_user_pages_do_not_mention_issues(page: Path) -> None:
    hits = [m.group(0) for m in ISSUE.finditer(page.read_text(encoding="utf-8"))]
    assert not hits, f"{page.relative_to(ROOT)} mentions {hits[:3]}: docs speak to users, not of the project's history"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_links_and_images_resolve(page: Path) -> None:
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        resolved = (page.parent / path).resolve()
        if not resolved.exists() and resolved.name in PENDING and resolved.parent == DOCS:
            continue
        assert resolved.exists(), f"{page.relative_to(DOCS)}: broken link {target}"
        if path.lower().endswith((".png", ".svg")):
            assert resolved.stat().st_size < 150_000, f"{target}: image too large"


def test_readme_links_to_the_docs() -> None:
    assert "](docs/index.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
