"""Rules that keep the suite fast and safe to run in parallel (``pytest -q -n auto``, pytest-xdist):
test modules never import each other (what two share lives in tests/helpers.py), tests that share a
module-scoped fixture run on one worker, ``-n`` alone distributes by those groups, and the per-file
progress lines stay right when workers finish files in any order."""

from __future__ import annotations

import ast
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import _FileProgress, group_of, pytest_cmdline_main, shared_fixture_files

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
TEST_MODULES = {f.stem for f in TESTS.glob("test_*.py")}


def test_test_modules_never_import_each_other() -> None:
    """Importing a test module from another runs its module-level code twice under some import modes and
    ties the two files' fixtures and collection together; shared helpers live in tests/helpers.py."""
    found = []
    for f in sorted(TESTS.glob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{f.name}: {n}" for n in names if n.split(".")[0] in TEST_MODULES]
    assert found == []


def test_the_readme_command_runs_the_suite_in_parallel_with_a_declared_xdist() -> None:
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11+")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    for extra in ("testing", "dev"):
        assert any(r.startswith("pytest-xdist>=") for r in extras[extra]), extra
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "&& pytest -q -n auto\n" in readme and "&& pytest -q -n auto\n" in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("numprocesses, dist, expected", [
    (2, "no", "loadgroup"), ("auto", "no", "loadgroup"), (2, "load", "load"), (2, "worksteal", "worksteal"),
    (0, "no", "no"), (None, "no", "no"),
])
def test_n_alone_distributes_by_groups(numprocesses, dist, expected) -> None:
    config = SimpleNamespace(option=SimpleNamespace(numprocesses=numprocesses, dist=dist))
    pytest_cmdline_main(config)
    assert config.option.dist == expected


@pytest.fixture(scope="module")
def made_once() -> list[int]:
    return [1]


def test_files_with_a_shared_fixture_are_one_unit_of_work(made_once: list[int]) -> None:
    """This file defines a module-scoped fixture: all its tests go to one worker (the fixture is made once);
    a file without one is spread test by test; the docs test's blocks are grouped by page."""
    shared = shared_fixture_files()
    assert {"test_suite_rules.py", "test_deepsched.py", "test_docs.py"} <= shared
    assert "test_taskgraph.py" not in shared
    here = "tests/test_suite_rules.py"
    assert group_of(f"{here}::test_a[1]", shared) == group_of(f"{here}::test_b", shared) == here
    assert group_of("tests/test_taskgraph.py::test_x[2]", shared) == "tests/test_taskgraph.py::test_x[2]"
    docs = "tests/test_docs.py::test_runnable_block"
    assert group_of(f"{docs}[energy.md#1]", shared) == group_of(f"{docs}[energy.md#4]", shared) \
        == "tests/test_docs.py::docs:energy.md"
    page = "teaching/why-greedy-fails.md"
    assert group_of(f"{docs}[{page}#2]", shared) == f"tests/test_docs.py::docs:{page}"
    assert group_of("tests/test_docs.py::test_there_are_runnable_blocks", shared) == "tests/test_docs.py"


def test_slow_tests_come_first_on_a_worker_only(request: pytest.FixtureRequest) -> None:
    items = request.session.items
    slow = [i for i, it in enumerate(items) if it.get_closest_marker("slow") is not None]
    if os.environ.get("PYTEST_XDIST_WORKER") and slow:
        assert slow == list(range(len(slow)))  # every worker sorts alike: the controller hands these out first
    names = [it.nodeid for it in items]
    assert len(names) == len(set(names))


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def line(self, text: str) -> None:
        pass

    def write_line(self, text: str) -> None:
        self.lines.append(text)


def test_progress_lines_come_when_each_file_is_done_whatever_the_order() -> None:
    """Two workers finish the tests of a.py and b.py interleaved: one line per file, when its last test
    ends, with its own count; a file cut short (``-x``) is reported at the end with what ran."""
    reporter = _Lines()
    progress = _FileProgress(reporter)
    progress.collected(["a.py::t1", "a.py::t2", "b.py::t1", "b.py::t2", "b.py::t3", "c.py::t1", "d.py::t"])
    progress.collected(["x.py::other"])  # a second worker's collection changes nothing
    for nodeid in ["a.py::t1", "b.py::t1", "b.py::t2", "a.py::t2", "c.py::t1", "x.py::other"]:
        progress.begin(nodeid)
        progress.finish(nodeid)
    assert [line.split(" in ")[0] for line in reporter.lines] == ["a.py: 2 tests", "c.py: 1 test"]
    progress.close()  # b.py was cut short after 2 of its 3 tests; d.py never started
    assert [line.split(" in ")[0] for line in reporter.lines] == ["a.py: 2 tests", "c.py: 1 test", "b.py: 2 tests"]
    assert all(line.endswith("so far)") for line in reporter.lines)
