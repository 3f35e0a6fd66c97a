"""``simsched run SCENARIO -s POLICY --swf out.swf``: a cluster log's jobs as one policy ran them,
back to SWF (atomic), so other batch simulators can replay them.  Round trip: export -> import ->
the same jobs, and the exported waits are the run's start times."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.schedulers.batch_easy import EASYBackfill
from simsched.simulator.batch import simulate_batch
from simsched.workloads.importers.swf import read_swf

ROOT = Path(__file__).resolve().parents[1]
LUBLIN = ROOT / "scenarios" / "data" / "traces" / "lublin_256.swf"
RICC = ROOT / "scenarios" / "data" / "traces" / "ricc_2010_5000.swf"


def _scenario(tmp_path: Path, trace: Path, m: int, extra: str = "", schedulers: str = "[easy-backfill]") -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(f"limits: {{max_processors: {m}}}\nplatform:\n  processors: [{{name: n, count: {m}}}]\n"
                 f"workload:\n  stream:\n    swf: {trace}\n    limit: 400\n{extra}schedulers: {schedulers}\n")
    return p


def _waits(path: Path) -> np.ndarray:
    rows = [line.split() for line in path.read_text().splitlines() if line.strip() and not line.startswith(";")]
    return np.array([float(r[2]) for r in rows])


@pytest.mark.filterwarnings("ignore::simsched.errors.DataRepairWarning")
@pytest.mark.parametrize(("trace", "m"), [(LUBLIN, 256), (RICC, 8192)], ids=["lublin", "ricc"])
def test_export_then_import_gives_the_same_jobs(tmp_path, trace, m) -> None:
    out, results = tmp_path / "out.swf", tmp_path / "r.json"
    res = CliRunner().invoke(app, ["run", str(_scenario(tmp_path, trace, m)), "--swf", str(out), "--json",
                                   str(results)])
    assert res.exit_code == 0, res.output
    original, back = read_swf(trace, limit=400), read_swf(out)
    for key in ("ids", "submit", "run", "procs", "requested", "user"):
        assert getattr(back, key).tolist() == getattr(original, key).tolist(), key
    assert back.max_procs == m
    jobs = json.loads(results.read_text())["results"][0]["jobs"]
    start = np.array([j["start"] for j in jobs])
    assert np.allclose(back.submit + _waits(out), start, rtol=0, atol=1e-6)
    # another simulator replaying the exported file meets the same jobs: EASY starts them alike
    assert simulate_batch(back, m, EASYBackfill()).start.tolist() == pytest.approx(start.tolist())


@pytest.mark.filterwarnings("ignore::simsched.errors.DataRepairWarning")  # the real log's unfinished jobs
def test_killed_jobs_are_exported_with_status_0_and_their_cut_run(tmp_path) -> None:
    out = tmp_path / "out.swf"
    scenario = _scenario(tmp_path, RICC, 8192, extra="    kill: true\n")
    res = CliRunner().invoke(app, ["run", str(scenario), "--swf", str(out)])
    assert res.exit_code == 0, res.output
    rows = [line.split() for line in out.read_text().splitlines() if not line.startswith(";")]
    trace = read_swf(RICC, limit=400)
    killed = [i for i, r in enumerate(rows) if r[10] == "0"]
    assert killed  # this slice has jobs that ran past their requested time
    for i in killed:
        assert float(rows[i][3]) == trace.requested[i] < trace.run[i]


@pytest.mark.parametrize(("args", "expect"), [
    (["-s", "fcfs", "-s", "easy-backfill"], "choose it with -s"),
    (["-s", "fcfs", "--swf-name", "x"], "No such option"),
])
def test_swf_export_refusals_write_nothing(tmp_path, args, expect) -> None:
    out = tmp_path / "out.swf"
    scenario = _scenario(tmp_path, LUBLIN, 256, schedulers="[fcfs, easy-backfill]")
    res = CliRunner().invoke(app, ["run", str(scenario), "--swf", str(out), *args])
    assert res.exit_code == 2 and expect in res.output, res.output
    assert not out.exists()


def test_swf_export_needs_a_cluster_log_and_an_swf_name(tmp_path) -> None:
    res = CliRunner().invoke(app, ["run", str(ROOT / "scenarios" / "topcuoglu2002.yaml"), "--swf",
                                   str(tmp_path / "o.swf")])
    assert res.exit_code == 2 and "--swf" in res.output and not (tmp_path / "o.swf").exists()
    res = CliRunner().invoke(app, ["run", str(_scenario(tmp_path, LUBLIN, 256)), "--swf", str(tmp_path / "o.txt")])
    assert res.exit_code == 2 and ".swf" in res.output and not (tmp_path / "o.txt").exists()
