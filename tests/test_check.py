"""`simsched check` finds each defect of deliberately broken schedulers, with a minimal example,
and rejects plug-ins that cannot be loaded (exit 2)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import SimschedError
from simsched.schedulers import registry
from simsched.simulator.bounds import finish_bound, lower_bound
from simsched.simulator.evaluate import evaluate_plan
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan
from simsched.testing import check_scheduler
from simsched.testing.strategies import problems_and_plans

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def broken(monkeypatch: pytest.MonkeyPatch) -> str:
    """The module of broken schedulers, importable as ``broken_schedulers``."""
    monkeypatch.syspath_prepend(str(FIXTURES))
    return "broken_schedulers"


def check(target: str, examples: int = 12, *properties: str) -> tuple[int, str]:
    args = ["check", target, "--examples", str(examples)]
    for prop in properties:
        args += ["--property", prop]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


def test_overlapping_tasks_are_reported_with_two_tasks_on_one_processor(broken: str) -> None:
    code, out = check(f"{broken}:Overlapping")
    assert code == 1
    assert "defect 1 valid / overlap: the planned times: tasks 't0' [0, 1) and 't1' [0, 1) overlap on 'p0'" in out
    # hypothesis shrank the example to two independent unit tasks on one processor
    assert "2 task(s), 0 edge(s), 1 processor(s)" in out
    assert "replay / planned-vs-simulated" in out


def test_ignoring_precedence_is_reported_with_a_small_example(broken: str) -> None:
    code, out = check(f"{broken}:IgnoresPrecedence", 12, "valid", "determinism")
    assert code == 1
    # the shrunk example: unit tasks on one processor whose one edge goes against index order
    flat = " ".join(out.split())  # long lines wrap at 100 columns
    assert "valid / precedence: the planned times: task 't0' started at 0 before the data of 't1' arrived" in flat
    assert "edges (data): t1->t0 (0)" in out and "1 processor(s)" in out
    assert "determinism │ ok" in out  # only the properties asked for ran
    assert "replay" not in out


def test_nondeterminism_is_reported(broken: str) -> None:
    report = check_scheduler(f"{broken}:Nondeterministic", examples=12, properties=["determinism"])
    [defect] = report.defects
    assert defect.category == "nondeterministic" and "differ" in defect.message
    assert defect.example is not None and defect.example.n_tasks <= 2 and defect.example.n_processors == 2
    code, out = check(f"{broken}:Nondeterministic")
    assert code == 1 and "determinism / nondeterministic: three runs with the same seed" in out


def test_a_builtin_passes() -> None:
    code, out = check("heft", examples=5)
    assert code == 0, out
    assert "heft: passed" in out


@pytest.mark.parametrize("target, message", [
    ("broken_schedulers:NotAScheduler", "implements no scheduler interface"),
    ("broken_schedulers:Missing", "AttributeError"),
    ("no_such_module:X", "cannot be loaded: ModuleNotFoundError: No module named 'no_such_module'"),
    ("heftt", "did you mean 'heft'?"),
])
def test_bad_plugins_exit_2_saying_which_and_why(broken: str, target: str, message: str) -> None:
    code, out = check(target)
    assert code == 2
    assert message in out and target in out


def test_a_half_online_policy_names_the_missing_method(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "half_policy.py").write_text("class Half:\n    def reset(self, problem, rng):\n        pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(SimschedError, match=r"'half_policy:Half' \(import path\).*no decide\(\) method"):
        registry.load_class("half_policy:Half")


def test_a_plugin_that_fails_to_import_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bad_plugin.py").write_text("import numpy\nraise ImportError('needs the foo extra')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(SimschedError, match="'bad_plugin:X' .*ImportError: needs the foo extra"):
        registry.create("bad_plugin:X")


def test_an_import_path_is_accepted_where_names_are() -> None:
    assert "simsched.schedulers.heft:HEFT" not in registry.names()  # accepted, but not listed
    assert registry.origin("simsched.schedulers.heft:HEFT") == "import path"
    assert registry.create("simsched.schedulers.heft:HEFT", insertion=False).insertion is False


def test_check_writes_nothing_into_the_current_folder(tmp_path: Path) -> None:
    """hypothesis caches the constants of the modules it searches in ``./.hypothesis`` unless told
    otherwise; ``simsched check`` (a fresh process: no cache in memory yet) must leave the user's
    current folder as it found it, for a planner and an autotuning policy."""
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    for target in ("heft", "load-aware"):
        done = subprocess.run([sys.executable, "-m", "simsched.cli.main", "check", target, "-n", "2"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        assert list(tmp_path.iterdir()) == [], target


def test_a_schedule_ending_before_its_first_arrival_is_reported_as_a_time_not_a_negative_makespan(
        broken: str) -> None:
    """The shrunk example is one zero-cost task arriving at 1, planned at 0: the bound and the end are
    both read on the clock (origin 0), so the report says it ends at 0, before 1 (it once said
    "makespan -1 below the lower bound 0": the makespan from the first arrival against a bound on it)."""
    code, out = check(f"{broken}:StartsAtZero", 6, "bound")
    assert code == 1
    assert "bound / below-lower-bound: the planned schedule ends at time 0, before 1, the earliest" in out
    assert "t0: 0 | 1" in out  # cost 0 on p0, arrival 1
    assert re.search(r"makespan -|ends at time -|before -", out) is None


@settings(max_examples=40, deadline=None)
@given(problems_and_plans(max_tasks=8, eligibility=0.3, arrivals=10.0, zero_costs=True))
def test_every_valid_schedule_ends_no_earlier_than_the_finish_bound(pair: tuple[Problem, Plan]) -> None:
    """``finish_bound`` is a bound on the clock: any valid plan's end is at or after it, and with every
    task arriving at 0 it is the makespan bound ``lower_bound`` itself."""
    problem, plan = pair
    end = float(evaluate_plan(problem, plan).finish.max())
    assert finish_bound(problem) <= end * (1 + 1e-12) + 1e-9
    assert finish_bound(problem) >= float(problem.graph.arrival.min()) + lower_bound(problem) - 1e-9
    if not problem.graph.arrival.any():
        assert finish_bound(problem) == lower_bound(problem)
