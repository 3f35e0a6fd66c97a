"""A real plug-in package (tests/fixtures/example_plugin), installed with pip, is listed, runs
from a scenario and passes `simsched check`.

pip installs it into a private ``--target`` directory that these tests put on ``sys.path`` (and on
``PYTHONPATH`` for a fresh interpreter): entry points are found exactly as for a package in
site-packages, without changing the environment other test runs share.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.run.runner import run_scenario
from simsched.scenario import load_scenario
from simsched.schedulers import registry

PLUGIN_SRC = Path(__file__).parent / "fixtures" / "example_plugin"
NAME = "shortest-task-first"

SCENARIO = """\
name: plugin-demo
seed: 3
repetitions: 2
platform:
  processors: [{name: cpu, count: 3}, {name: gpu, type: gpu, speed: 3.0}]
  network: {bandwidth: 5.0, latency: 0.1}
workload: {generator: random, tasks: 30}
noise: {model: lognormal, sigma: 0.1}
schedulers:
  - heft
  - shortest-task-first
  - {name: shortest-task-first, largest_first: true}
  - simsched_example_plugin.stf:ShortestTaskFirst
"""


def _cannot_build_offline() -> str | None:
    """Why pip cannot build the example plug-in here without fetching a build backend, or None: setuptools
    builds wheels itself from 70.1 on; before, it needs the ``wheel`` package (a fresh venv has neither)."""
    import importlib.util

    try:
        import setuptools
    except ImportError:
        return "building the example plug-in offline needs setuptools: pip install -e '.[testing]'"
    version = tuple(int(x) for x in re.findall(r"\d+", setuptools.__version__)[:2])
    if version >= (70, 1) or importlib.util.find_spec("wheel") is not None:
        return None
    return (f"building the example plug-in offline needs setuptools >= 70.1 or the wheel package (setuptools "
            f"{setuptools.__version__} here): pip install -e '.[testing]'")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example plug-in, built and installed by pip into a fresh directory (offline, with this
    environment's setuptools: skipped, with the reason, where that cannot build a wheel)."""
    why = _cannot_build_offline()
    if why:
        pytest.skip(why)
    src = tmp_path_factory.mktemp("src") / "example_plugin"
    shutil.copytree(PLUGIN_SRC, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(target), str(src)], check=True, capture_output=True)
    assert list(target.glob("simsched_example_plugin-*.dist-info"))
    return target


@pytest.fixture
def installed(site: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(site))
    yield site
    for mod in [m for m in sys.modules if m.startswith("simsched_example_plugin")]:
        del sys.modules[mod]


def test_the_plugin_is_listed_with_its_origin(installed: Path) -> None:
    assert NAME in registry.names()
    assert registry.origin(NAME) == "entry point (simsched-example-plugin)"
    out = CliRunner().invoke(app, ["list"]).output
    line = next(row for row in out.splitlines() if NAME in row)
    assert "static" in line and "entry point (simsched-example-plugin)" in line and "Shortest task first" in line


def test_not_listed_when_not_installed() -> None:
    assert NAME not in registry.names()


def test_a_fresh_interpreter_finds_the_entry_point(installed: Path) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(installed), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-m", "simsched.cli.main", "list"], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert NAME in out and "simsched-example-plugin" in out


def test_the_plugin_runs_from_a_scenario(installed: Path, tmp_path: Path) -> None:
    path = tmp_path / "plugin.yaml"
    path.write_text(SCENARIO)
    report = run_scenario(load_scenario(path))
    labels = ["heft", NAME, f"{NAME}(largest_first=true)", "simsched_example_plugin.stf:ShortestTaskFirst"]
    assert report.schedulers == labels
    assert len(report.rows) == 2 * len(labels)
    makespans = {r["scheduler"]: r["makespan"] for r in report.rows if r["seed"] == 3}
    assert makespans[NAME] == makespans["simsched_example_plugin.stf:ShortestTaskFirst"]  # same class
    assert all(m >= report.lower_bound for m in makespans.values())
    result = CliRunner().invoke(app, ["run", str(path), "--scheduler", NAME])
    assert result.exit_code == 0, result.output
    assert NAME in result.output


def test_the_plugin_passes_simsched_check(installed: Path) -> None:
    result = CliRunner().invoke(app, ["check", NAME, "--examples", "10"])
    assert result.exit_code == 0, result.output
    assert f"{NAME}: passed" in result.output
    assert "entry point (simsched-example-plugin)" in result.output


def test_a_bad_parameter_of_the_plugin_is_a_user_error(installed: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(SCENARIO.replace("largest_first: true", "largest_first: maybe"))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert "shortest-task-first" in result.output and "largest_first" in result.output


def test_the_documented_demo_table_matches_a_real_run(installed: Path, tmp_path: Path) -> None:
    """docs/testing-your-scheduler.md shows `simsched run demo.yaml`: its rows are what a run prints."""
    import re

    from helpers import compare_tables

    page = (Path(__file__).parents[1] / "docs" / "testing-your-scheduler.md").read_text(encoding="utf-8")
    scenario = re.search(r"\(`demo.yaml`\):\n\n```yaml\n(.*?)```", page, re.S).group(1)
    shown = re.search(r"\$ simsched run demo.yaml\n(.*?)```", page, re.S).group(1)
    (tmp_path / "demo.yaml").write_text(scenario)
    result = CliRunner().invoke(app, ["run", str(tmp_path / "demo.yaml")], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert sum(line.startswith("│") for line in shown.splitlines()) == 3  # heft and the plug-in twice
    assert compare_tables(shown, result.stdout) == []
