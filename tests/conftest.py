"""Shared fixtures: the papers' reference problems, loaded from tests/data (copies of
shared/reference, so the suite does not depend on a checkout layout)."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from simsched.errors import SimschedError
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.workloads.taskgraph import TaskGraph

DATA = Path(__file__).parent / "data"


def reference_problem(name: str) -> tuple[Problem, dict]:
    """The problem of a reference JSON file (explicit costs, unit bandwidth) and its expectations."""
    ref = json.loads((DATA / f"{name}.json").read_text())
    tasks = [{"name": k, "cost": v} for k, v in ref["computation_cost"].items()]
    graph = TaskGraph.from_named(tasks, [tuple(e) for e in ref["edges"]])
    platform = Platform.uniform([Processor(p) for p in ref["processors"]], bandwidth=ref["link_bandwidth"])
    return Problem(graph, platform), ref["expected"]


@pytest.fixture(autouse=True)
def _a_100_column_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts with ``$COLUMNS`` = 100, the width the output contract is written for, whatever
    an earlier test in the same worker left behind (in a full ``-n 2`` run some tests saw 80 columns);
    a test of another width, or of no ``$COLUMNS``, sets it itself."""
    monkeypatch.setenv("COLUMNS", "100")


@pytest.fixture
def topcuoglu() -> tuple[Problem, dict]:
    return reference_problem("topcuoglu2002")


@pytest.fixture
def peft_example() -> tuple[Problem, dict]:
    return reference_problem("arabnejad2014_peft")


# --------------------------------------------------------------------------- markers, progress
SLOW = frozenset({
    "test_stg_optimum.py::test_energetic_bound_never_exceeds_a_published_value",
    "test_fuzz.py::test_generated_documents",
    "test_study_streams.py::test_summarize_and_report_default_to_job_metrics_paired",
    "test_autotuning.py::test_capacity_day_of_arrivals_checked_by_direct_simulation",
    "test_zoo.py::test_named_points_equal_heft_cpop_peft_on_1000_random_instances",
    "test_sweep.py::test_sigkill_then_resume_loses_duplicates_and_recomputes_nothing",
    "test_importers.py::test_round_trip_through_every_format",
    "test_correct_plans.py::test_ci_campaign_every_registered_scheduler",
    "test_deepsched.py::test_tiny_training_beats_untrained_network",  # these two share a training run
    "test_deepsched.py::test_trained_checkpoint_plans_and_evaluates",
    "test_rl_online.py::test_tiny_online_training_reports_the_job_table",
    "test_rl.py::test_tiny_ppo_learns_on_a_fixed_problem",
    "test_rl.py::test_registered_agents_run_online_and_corrupt_checkpoints_are_user_errors",
    "test_rl_world_numpy.py::test_bench_world_rows_put_each_world_model_step_beside_a_real_step",
    "test_cli_tables.py::test_every_bundled_scenario_explains_within_100_columns",  # ~50 s CPU: 70 explains
})
"""Tests (``file::name``, parametrised ones by their function name) that take more than ~10 s on an idle
2-core machine: marked ``slow``, so ``pytest -q -m "not slow"`` is the fast part of the suite.  Found with
``pytest --durations=80`` (45 s and more on a machine shared by seven test runs, about 10 s idle)."""

SMOKE_FILES = frozenset({
    "test_fresh_machine.py", "test_heft_cpop.py", "test_scenario.py", "test_engine.py", "test_taskgraph.py",
})
"""Files marked ``smoke``: the cross-section CI also runs with the lowest versions we declare."""


EXTRA_TEST_MODULES: dict[str, tuple[str, ...]] = {
    "learned": ("torch",), "rl": ("torch", "gymnasium"), "exact": ("ortools",), "workflows": ("wfcommons",),
    "onnx": ("onnx",), "dot": ("pydot",), "study": ("dask.distributed",), "fast": ("numba",),
    "docs": ("mkdocs", "mkdocstrings"), "notebook": ("pandas",),
    "sb3": ("torch", "gymnasium", "stable_baselines3", "sb3_contrib"),
}
"""The modules a test marked ``@pytest.mark.extra("name")`` needs: the extras of pyproject.toml."""


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``extra("workflows")`` is skipped, with the reason and the install command, when
    that extra is not installed (the core install, CI's lowest-versions lane), instead of failing."""
    for mark in item.iter_markers("extra"):
        for extra in mark.args:
            for module in EXTRA_TEST_MODULES[extra]:
                try:
                    importlib.import_module(module)
                except ImportError:
                    from simsched.extras import install_hint

                    pytest.skip(f"needs the {extra!r} extra ({module} is not installed): {install_hint(extra)}")


@contextlib.contextmanager
def _skip_on_missing_extra() -> Iterator[None]:
    try:
        yield
    except SimschedError as exc:
        found = re.search(r"needs the optional package '([\w.]+)'", str(exc))
        if found is None or importlib.util.find_spec(found.group(1).split(".")[0]) is not None:
            raise
        pytest.skip(str(exc))


@pytest.fixture
def skip_on_missing_extra() -> Callable[[], contextlib.AbstractContextManager[None]]:
    """``with skip_on_missing_extra(): ...``: a block that stops on simsched's "needs the optional package X"
    error, X not installed, skips the test with that line as the reason (for tests that loop over files,
    some of which need an extra)."""
    return _skip_on_missing_extra


# --------------------------------------------------------------------------- parallel runs (pytest-xdist)
SHARED_SCOPES = frozenset({"module", "class", "package"})
"""Fixture scopes whose value tests of one file share: such a file's tests run on one xdist worker."""

GROUP_BY_PARAM: dict[str, Callable[[str], str]] = {
    "test_docs.py::test_runnable_block": lambda param: "docs:" + param.split("#")[0],
}
"""Tests (``file::function``) whose parametrised cases are grouped by their id, not by file: the runnable
blocks of one docs page run in order on one worker (a later block may read an earlier one's ``out/``);
any worker may make the docs test's cheap copy of the repository."""


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """``pytest -n N`` (or ``-n auto``) without ``--dist`` distributes as ``--dist loadgroup``, which
    :func:`pytest_xdist_make_scheduler` serves.  An explicit ``--dist`` is kept."""
    if getattr(config.option, "numprocesses", None) and getattr(config.option, "dist", "no") == "no":
        config.option.dist = "loadgroup"


def shared_fixture_files(folder: Path = Path(__file__).parent) -> frozenset[str]:
    """Names of the test files in ``folder`` that define a fixture of module, class or package scope (a
    training run, a built wheel, a sweep), read from their source.  O(size of the test files)."""
    import ast

    found = set()
    for f in folder.glob("test_*.py"):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "scope" and isinstance(node.value, ast.Constant) \
                    and node.value.value in SHARED_SCOPES:
                found.add(f.name)
    return frozenset(found)


def group_of(nodeid: str, shared: frozenset[str]) -> str:
    """The unit of work ``nodeid`` is scheduled in: the docs page of a runnable block
    (:data:`GROUP_BY_PARAM`), its file when the file has a shared fixture (made once, on one worker), or
    the test alone.  O(1)."""
    path, _, rest = nodeid.partition("::")
    name = Path(path).name
    function, _, param = rest.partition("[")
    by_param = GROUP_BY_PARAM.get(f"{name}::{function}")
    if by_param is not None and param:
        return f"{path}::{by_param(param[:-1])}"
    return path if name in shared else nodeid


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` here: each test is a unit of work of its own, except the groups of
    :func:`group_of`; the biggest groups are handed out first, then the single tests in collection order
    (the ``slow`` ones first, see below), each to whichever worker is free.  (pytest-xdist's own
    ``xdist_group`` marks are not used: it names a group by editing the test's node id, which pytest 9
    no longer reads.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    shared = shared_fixture_files()

    class Groups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid, shared)

    return Groups(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks ``smoke`` and ``slow`` from the lists above; a test parametrised by a scheduler ``name`` gets
    ``extra(...)`` with the extras that scheduler declares in the registry (``optimal``: exact, the learned
    ones: learned), so the contract and campaign tests skip it, with the reason, where the extra is missing.

    On a pytest-xdist worker the ``slow`` tests move to the front, so the longest ones start first and the
    short ones fill in at the end instead of one long test running alone while the other workers wait
    (every worker sorts alike, so their collections stay equal)."""
    from simsched.schedulers import registry

    worker = hasattr(config, "workerinput")
    for item in items:
        callspec = getattr(item, "callspec", None)
        name = callspec.params.get("name") if callspec is not None else None
        found = registry.spec(name) if isinstance(name, str) else None
        if found is not None and found.extras:
            item.add_marker(pytest.mark.extra(*found.extras))
        file = item.path.name
        if file in SMOKE_FILES:
            item.add_marker(pytest.mark.smoke)
        name = getattr(item, "originalname", None) or item.name
        if f"{file}::{name}" in SLOW:
            item.add_marker(pytest.mark.slow)
    if worker:
        items.sort(key=lambda it: it.get_closest_marker("slow") is None)  # stable: otherwise as collected


class _FileProgress:
    """With ``-q``, one line per finished test file: its tests, their time, and the time so far, so a
    long run shows where it is and what takes the time (pytest's dots alone say neither).

    A file is finished when the last of its collected tests is: that holds alike for one process and for
    pytest-xdist's workers, which run several files at once and report in any order (the controller learns
    each file's tests from a worker's collection).  A file's time is the wall time from its first test's
    start to its last test's end.  O(1) per test."""

    def __init__(self, reporter: Any) -> None:
        self.reporter = reporter
        self.start = time.monotonic()
        self.left: dict[str, int] = {}
        self.began: dict[str, float] = {}

    def collected(self, nodeids: list[str]) -> None:
        """The tests of the run, once (the first worker's collection under xdist; all see the same)."""
        if self.left:
            return
        self.start = time.monotonic()  # the first file's time starts after collection
        for nodeid in nodeids:
            file = _file_of(nodeid)
            self.left[file] = self.left.get(file, 0) + 1
        self.total = dict(self.left)

    def begin(self, nodeid: str) -> None:
        self.began.setdefault(_file_of(nodeid), time.monotonic())

    def finish(self, nodeid: str) -> None:
        file = _file_of(nodeid)
        if file in self.left:
            self.left[file] -= 1
            if self.left[file] == 0:
                self._line(file)

    def close(self) -> None:
        """At the end of the session: the files started but cut short (``-x``, a crash), with their count."""
        for file, left in self.left.items():
            if 0 < left < self.total[file] or (left and file in self.began):
                self._line(file)

    def _line(self, file: str) -> None:
        now = time.monotonic()
        count = self.total[file] - self.left[file]
        self.left[file] = 0
        total = int(now - self.start)
        self.reporter.line("")  # end the line of dots
        self.reporter.write_line(f"{file}: {count} test{'s' * (count != 1)} in {now - self.began.get(file, now):.1f} s "
                                 f"({total // 60}:{total % 60:02d} so far)")


def _file_of(nodeid: str) -> str:
    return nodeid.split("::")[0]


_progress: list[_FileProgress] = []


@pytest.hookimpl(trylast=True)  # after the terminal reporter is registered
def pytest_configure(config: pytest.Config) -> None:
    reporter = config.pluginmanager.getplugin("terminalreporter")
    if reporter is not None and config.get_verbosity() < 0 and not hasattr(config, "workerinput"):
        _progress.append(_FileProgress(reporter))


def pytest_collection_finish(session: pytest.Session) -> None:
    for progress in _progress:
        progress.collected([item.nodeid for item in session.items])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    for progress in _progress:
        progress.collected(list(ids))


def pytest_runtest_logstart(nodeid: str) -> None:
    for progress in _progress:
        progress.begin(nodeid)


def pytest_runtest_logfinish(nodeid: str) -> None:
    for progress in _progress:
        progress.finish(nodeid)


def pytest_sessionfinish() -> None:
    for progress in _progress:
        progress.close()
    _progress.clear()
