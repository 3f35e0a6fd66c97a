"""`simsched train rl SCENARIO.yaml`: trains rl on a user's stream scenario within a CPU budget on the
train seed space, selects on the select space, reports on the evaluate space, writes its checkpoint,
and refuses the evaluation space and bad options (exit 2, one line, nothing written)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("gymnasium")

SCENARIO = """\
name: tiny-stream
seed: 7
repetitions: 2
platform:
  processors:
    - {name: cpu, type: cpu, speed: 1.0, count: 2}
    - {name: gpu, type: gpu, speed: 3.0, count: 1}
  network: {bandwidth: 5.0, latency: 0.1}
workload:
  stream:
    jobs:
      - {weight: 1, generator: random, tasks: [3, 6], ccr: 0.3, heterogeneity: 0.5}
    arrivals: {poisson: 0.02}
    count: 4
noise: {model: lognormal, sigma: 0.3}
schedulers: [srjf-eft]
"""


def train(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simsched.cli.main", "train", "rl", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture()
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(SCENARIO)
    return path


@pytest.mark.slow
def test_trains_selects_writes_and_reports_on_the_evaluate_space(scenario, tmp_path):
    from simsched.learned.rl import checkpoint
    from simsched.run.seedspace import space_of

    out = tmp_path / "out"
    r = train(str(scenario), "--budget-min", "0.05", "-o", str(out), "--select-days", "1", "--report-days", "2",
              cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert {p.name for p in out.iterdir()} == {"rl.pt", "train_history.json", "report.json"}  # no temporary left
    history = json.loads((out / "train_history.json").read_text())
    assert history[0]["phase"] == "clone" and history[0]["best"] and history[0]["select_ratio"] > 0
    report = json.loads((out / "report.json").read_text())
    assert report["days"] == 2 and 0 < report["low"] <= report["ratio"] <= report["high"]
    assert space_of(report["first_seed"]) == "evaluate"
    assert space_of(report["select_first_seed"]) == "select" and space_of(report["train_first_seed"]) == "train"
    assert "evaluate space, 2 days" in r.stdout
    ck = checkpoint.load(out / "rl.pt", "rl")
    assert ck["config"]["arrived_only"] and Path(ck["config"]["stream_scenario"]) == scenario.resolve()
    assert ck["meta"]["select_ratio"] == min(h["select_ratio"] for h in history)
    # the checkpoint runs like any other, named in a scenario
    mine = tmp_path / "mine.yaml"
    listed = f"schedulers: [srjf-eft, {{name: rl, checkpoint: {out / 'rl.pt'}}}]"
    mine.write_text(SCENARIO.replace("schedulers: [srjf-eft]", listed))
    run = subprocess.run([sys.executable, "-m", "simsched.cli.main", "run", str(mine), "-r", "1"], capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("args,needle", [
    (["--seed", str(3 << 40)], "evaluate seed space"),
    (["--seed", str(4 << 40)], "fresh seed space"),
    (["--budget-min", "0"], "--budget-min"),
    (["--budget-min", "nan"], "--budget-min"),
    (["--budget-min", "-1"], "--budget-min"),
    (["--select-days", "0"], "--select-days"),
    (["--report-days", "100000"], "--report-days"),
    (["--resume"], "nothing to resume"),
])
def test_refuses_the_evaluation_space_and_bad_options_writing_nothing(scenario, tmp_path, args, needle):
    out = tmp_path / "out"
    budget = [] if "--budget-min" in args else ["--budget-min", "0.01"]
    r = train(str(scenario), "-o", str(out), *budget, *args, cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in r.stderr
    assert not out.exists() or not any(out.iterdir())


def test_scenario_options_are_refused_with_a_training_config(tmp_path):
    cfg = Path(__file__).resolve().parents[1] / "scenarios" / "rl" / "train_tiny.yaml"
    r = train(str(cfg), "--budget-min", "1", cwd=tmp_path)
    assert r.returncode == 2 and "--budget-min applies to a stream scenario" in r.stderr
