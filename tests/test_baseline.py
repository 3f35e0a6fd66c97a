"""`simsched baseline record/compare`, the noise-aware comparison, and the pytest marker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.testing.baseline import compare_baseline, welch_interval

FIXTURES = Path(__file__).parent / "fixtures"
DEGRADABLE = "degradable:MaybeSlowHEFT"

SCENARIO = f"""\
name: regress
seed: 7
repetitions: 4
platform:
  processors: [{{name: cpu, count: 4}}]
  network: {{bandwidth: 5.0, latency: 0.1}}
workload: {{generator: random, tasks: 25}}
noise: {{model: lognormal, sigma: 0.1}}
schedulers: [heft, mct, "{DEGRADABLE}"]
"""


@pytest.fixture
def scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(FIXTURES))
    monkeypatch.delenv("SIMSCHED_TEST_DEGRADE", raising=False)
    path = tmp_path / "regress.yaml"
    path.write_text(SCENARIO)
    return path


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["baseline", *args])
    return result.exit_code, result.output


def test_record_then_compare_unchanged_passes(scenario: Path, tmp_path: Path) -> None:
    out_path = tmp_path / "base.json"
    code, out = invoke("record", str(scenario), "-o", str(out_path))
    assert code == 0, out
    doc = json.loads(out_path.read_text())
    [entry] = doc["scenarios"]
    assert entry["path"] == "regress.yaml" and entry["seed"] == 7 and entry["repetitions"] == 4
    assert set(entry["results"]) == {"heft", "mct", DEGRADABLE}
    assert len(entry["results"]["heft"]["makespan"]) == 4
    code, out = invoke("compare", str(out_path))
    assert code == 0, out
    assert "no regression" in out


def test_a_degraded_scheduler_fails_naming_scheduler_and_metric(scenario: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    out_path = tmp_path / "base.json"
    assert invoke("record", str(scenario), "-o", str(out_path))[0] == 0
    monkeypatch.setenv("SIMSCHED_TEST_DEGRADE", "1")
    code, out = invoke("compare", str(out_path))
    assert code == 1, out
    rows = [line for line in out.splitlines() if "regression" in line and DEGRADABLE in line]
    assert any("makespan" in row for row in rows), out
    assert not any("heft " in line and "regression" in line for line in out.splitlines() if DEGRADABLE not in line)
    cmp = compare_baseline(out_path)
    assert {(c.scheduler, c.metric) for c in cmp.regressions} >= {(DEGRADABLE, "makespan")}
    assert all(c.scheduler == DEGRADABLE for c in cmp.regressions)


def _scaled(path: Path, factor: float, spread: float = 0.0) -> None:
    """Pretend the baseline's heft makespans were ``factor`` times what they are, +- ``spread``."""
    doc = json.loads(path.read_text())
    values = doc["scenarios"][0]["results"]["heft"]["makespan"]
    signs = [(-1) ** i for i in range(len(values))]
    doc["scenarios"][0]["results"]["heft"]["makespan"] = [v * factor * (1 + s * spread) for v, s in zip(values, signs)]
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize("factor, spread, regressed", [
    (0.97, 0.0, False),   # 3% worse: within the 5% tolerance
    (0.80, 0.0, True),    # 25% worse and no noise: a regression
    (0.80, 0.6, False),   # 25% worse on average, but the old runs were far too noisy to tell
    (1.30, 0.0, False),   # better: an improvement, not a failure
])
def test_tolerance_and_noise(scenario: Path, tmp_path: Path, factor: float, spread: float, regressed: bool) -> None:
    out_path = tmp_path / "base.json"
    assert invoke("record", str(scenario), "-o", str(out_path))[0] == 0
    _scaled(out_path, factor, spread)
    cmp = compare_baseline(out_path, tolerance=0.05)
    assert cmp.failed is regressed, cmp.format()
    heft = next(c for c in cmp.changes if c.scheduler == "heft" and c.metric == "makespan")
    assert heft.verdict == ("regression" if regressed else "improvement" if factor > 1 else "unchanged")


def test_welch_interval() -> None:
    d, lo, hi = welch_interval([10, 10, 10], [10, 10, 10])
    assert d == lo == hi == 0
    d, lo, hi = welch_interval([10.0, 11.0, 9.0, 10.0], [12.0, 13.0, 11.0, 12.0])
    assert d == pytest.approx(2.0) and 0 < lo < 2 < hi
    assert welch_interval([5.0], [7.0]) == (2.0, 2.0, 2.0)


def test_bad_inputs_exit_2(scenario: Path, tmp_path: Path) -> None:
    assert invoke("compare", str(tmp_path / "missing.json"))[0] == 2
    (tmp_path / "junk.json").write_text("{}")
    code, out = invoke("compare", str(tmp_path / "junk.json"))
    assert code == 2 and "not a simsched baseline" in out
    code, out = invoke("record", str(scenario), "-o", str(tmp_path / "nodir" / "b.json"))
    assert code == 2 and not (tmp_path / "nodir").exists()
    code, out = invoke("record", str(tmp_path / "nope.yaml"), "-o", str(tmp_path / "b.json"))
    assert code == 2 and not (tmp_path / "b.json").exists()


USER_TEST = f"""\
import pytest

@pytest.mark.simsched_baseline("base.json", tolerance=0.05)
def test_no_regression(simsched_problem, simsched_simulator):
    run = simsched_simulator.run("{DEGRADABLE}", simsched_problem)
    assert run.makespan > 0
"""


def test_the_pytest_marker_compares_with_the_baseline(scenario: Path, tmp_path: Path) -> None:
    assert invoke("record", str(scenario), "-o", str(tmp_path / "base.json"))[0] == 0
    (tmp_path / "test_user.py").write_text(USER_TEST)
    registered = any(ep.value == "simsched.testing.pytest_plugin" for ep in entry_points(group="pytest11"))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_user.py")]
    if not registered:  # simsched installed before the pytest11 entry point was added
        cmd[3:3] = ["-p", "simsched.testing.pytest_plugin"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(FIXTURES), os.environ.get("PYTHONPATH", "")]))
    env.pop("SIMSCHED_TEST_DEGRADE", None)
    ok = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    env["SIMSCHED_TEST_DEGRADE"] = "1"
    bad = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "a scheduler got worse" in bad.stdout and f"regress / {DEGRADABLE} / makespan" in bad.stdout
    # the failure is the test's, reported once, without pluggy's warning about a hook wrapper that raised
    assert "PluggyTeardownRaisedWarning" not in bad.stdout + bad.stderr and "1 failed" in bad.stdout
    assert "warning" not in bad.stdout.lower().split("short test summary")[0].split("= FAILURES =")[0]
