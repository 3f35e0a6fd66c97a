"""Studies: expansion, Dask vs process pool, crash-safe resume after SIGKILL, failures, summaries."""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import SimschedError
from simsched.run.columns import VOLATILE
from simsched.run.executors import PoolExecutor
from simsched.run.store import ResultsStore, load_rows
from simsched.scenario.overrides import apply_overrides, parse_path
from simsched.study.spec import load_study
from simsched.study.sweep import make_chunks, run_sweep
from simsched.study.work import run_chunk

SMALL = """\
name: small
scenario:
  platform: {processors: [{name: p, count: 3}], network: {bandwidth: 1.0}}
  workload: {generator: random, tasks: 12}
  schedulers: [heft]
grid:
  workload.ccr: [0.5, 2]
schedulers: [heft, mct]
seeds: [0, 1]
"""

runner = CliRunner()


def _write(tmp_path: Path, text: str, name: str = "study.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _stable(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in rows]


def test_paths_and_overrides() -> None:
    assert parse_path("platform.processors[1].count") == ("platform", "processors", 1, "count")
    data = {"platform": {"processors": [{"name": "a"}, {"name": "b"}]}, "workload": {"tasks": 3}}
    out = apply_overrides(data, {"platform.processors[1].count": 4, "workload.ccr": 2, "noise.sigma": 0.2})
    assert out["platform"]["processors"][1]["count"] == 4 and out["workload"]["ccr"] == 2
    assert out["noise"] == {"sigma": 0.2} and "count" not in data["platform"]["processors"][1]  # a copy
    with pytest.raises(SimschedError, match="has 2 entries"):
        apply_overrides(data, {"platform.processors[5].count": 1})
    with pytest.raises(SimschedError, match="malformed"):
        parse_path("workload..ccr")


def test_expansion_and_ids(tmp_path: Path) -> None:
    study = load_study(_write(tmp_path, SMALL))
    assert [p.overrides for p in study.points] == [{"workload.ccr": 0.5}, {"workload.ccr": 2}]
    tasks = study.tasks()
    assert len(tasks) == 8 and len({t.task_id for t in tasks}) == 8
    assert [(t.scheduler, t.seed) for t in tasks[:4]] == [("heft", 0), ("heft", 1), ("mct", 0), ("mct", 1)]
    # ids depend on what runs, not on the file: a second study with one more value keeps the old ids
    bigger = load_study(_write(tmp_path, SMALL.replace("[0.5, 2]", "[0.5, 2, 8]"), "b.yaml"))
    assert {t.task_id for t in tasks} < {t.task_id for t in bigger.tasks()}


def test_pool_and_dask_give_identical_rows(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    from simsched.run.executors import DaskExecutor

    study = load_study(_write(tmp_path, SMALL))
    run_sweep(study, tmp_path / "pool.csv", PoolExecutor(2))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) \
            as cluster, distributed.Client(cluster) as client:
        outcome = run_sweep(study, tmp_path / "dask.csv", DaskExecutor(client=client))
    assert outcome.ran == 8 and outcome.failed == 0
    pool, dask = load_rows(tmp_path / "pool.csv"), load_rows(tmp_path / "dask.csv")
    assert [r["task_id"] for r in pool] == [t.task_id for t in study.tasks()]
    assert _stable(pool) == _stable(dask)
    assert all(math.isfinite(r["makespan"]) and r["error"] == "" for r in pool)


def test_parquet_matches_csv(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    study = load_study(_write(tmp_path, SMALL))
    run_sweep(study, tmp_path / "r.csv", PoolExecutor(1))
    run_sweep(study, tmp_path / "r.parquet", PoolExecutor(1))
    assert _stable(load_rows(tmp_path / "r.csv")) == _stable(load_rows(tmp_path / "r.parquet"))


def test_failing_runs_are_recorded_and_do_not_stop_the_study(tmp_path: Path) -> None:
    study = _write(tmp_path, SMALL.replace("[0.5, 2]", "[1, -1]"))
    result = runner.invoke(app, ["sweep", str(study), "-o", str(tmp_path / "r.csv"), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert "4 failed" in result.output and "ccr must be >= 0" in result.output
    rows = load_rows(tmp_path / "r.csv")
    bad = [r for r in rows if r["workload.ccr"] == -1]
    good = [r for r in rows if r["workload.ccr"] == 1]
    assert len(bad) == len(good) == 4
    assert all("ccr must be >= 0" in r["error"] and math.isnan(r["makespan"]) for r in bad)
    assert all(r["error"] == "" and r["makespan"] > 0 for r in good)


@pytest.mark.parametrize("text, where", [
    (SMALL.replace("workload.ccr: [0.5, 2]", "platform.processors[0].speed: [1, -2]"),
     r"study.yaml:7: grid.platform.processors\[0\].speed: point 1"),
    (SMALL.replace("workload.ccr", "workload.cccr"), r"study.yaml:7: grid.workload.cccr: .*no parameter 'cccr'"),
    (SMALL.replace("seeds:", "seedz:"), r"study.yaml:9: seedz: unknown field 'seedz' \(did you mean 'seeds'\?\)"),
    (SMALL.replace("[heft, mct]", "[heft, nosuch]"), r"study.yaml:8: schedulers\[1\]"),
    (SMALL.replace("workload.ccr", "seed"), r"study.yaml:7: grid.seed: 'seed' is set by the study"),
])
def test_bad_studies_exit_2_with_file_field_and_line(tmp_path: Path, text: str, where: str) -> None:
    study = _write(tmp_path, text)
    result = runner.invoke(app, ["sweep", str(study), "-o", str(tmp_path / "r.csv")])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and len(result.stderr.strip().splitlines()) == 1
    assert re.search(where, result.stderr), result.stderr
    assert not (tmp_path / "r.csv").exists() and not (tmp_path / "r.csv.parts").exists()


def test_existing_results_need_resume(tmp_path: Path) -> None:
    study = _write(tmp_path, SMALL)
    out = tmp_path / "r.csv"
    assert runner.invoke(app, ["sweep", str(study), "-o", str(out), "-w", "1"]).exit_code == 0
    again = runner.invoke(app, ["sweep", str(study), "-o", str(out)])
    assert again.exit_code == 2 and "--resume" in again.stderr
    resumed = runner.invoke(app, ["sweep", str(study), "-o", str(out), "--resume"])
    assert resumed.exit_code == 0 and "0 runs" in resumed.output and "8 already done" in resumed.output


def test_resume_after_extending_the_grid_runs_only_new_points(tmp_path: Path) -> None:
    out = tmp_path / "r.csv"
    first = run_sweep(load_study(_write(tmp_path, SMALL)), out, PoolExecutor(1))
    extended = load_study(_write(tmp_path, SMALL.replace("[0.5, 2]", "[0.5, 1, 2]"), "b.yaml"))
    outcome = run_sweep(extended, out, PoolExecutor(1), resume=True)
    assert (outcome.skipped, outcome.ran, outcome.rows) == (8, 4, 12)
    rows = load_rows(out)
    assert [r["point"] for r in rows] == [0] * 4 + [1] * 4 + [2] * 4  # renumbered, in study order
    assert [r["workload.ccr"] for r in rows[::4]] == [0.5, 1.0, 2.0]
    assert {r["run_id"] for r in rows if r["workload.ccr"] != 1} == {first.run_id}


def test_crash_between_compaction_and_cleanup_duplicates_nothing(tmp_path: Path) -> None:
    study = load_study(_write(tmp_path, SMALL))
    out = tmp_path / "r.csv"
    store = ResultsStore(out)
    store.open(resume=False)
    rows = run_chunk(make_chunks(study, study.tasks()[:3], "x", 8)[0])
    part = store.append(rows, "x", study.fields)
    saved = part.read_bytes()
    store.compact([t.task_id for t in study.tasks()], study.fields)
    store.close()
    out.with_name("r.csv.parts").mkdir()
    part.write_bytes(saved)  # as if killed after compaction, before the parts were removed
    assert len(load_rows(out)) == 3
    outcome = run_sweep(study, out, PoolExecutor(1), resume=True)
    assert outcome.skipped == 3 and outcome.ran == 5 and outcome.rows == 8


KILL_STUDY = """\
name: kill-me
scenario:
  platform: {processors: [{name: p, count: 8}]}
  workload: {generator: random, tasks: 1000}
  schedulers: [heft]
seeds: [SEEDS]
""".replace("SEEDS", ", ".join(str(i) for i in range(60)))


def test_sigkill_then_resume_loses_duplicates_and_recomputes_nothing(tmp_path: Path) -> None:
    study_path = _write(tmp_path, KILL_STUDY)
    out = tmp_path / "r.csv"
    parts = tmp_path / "r.csv.parts"
    cmd = [sys.executable, "-c", "from simsched.cli.main import main; main()",
           "sweep", str(study_path), "-o", str(out), "--workers", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not list(parts.glob("part-*.csv")) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, f"the sweep ended before it could be killed: {proc.stderr.read()}"
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its worker process, mid-run
    finally:
        proc.wait()
    assert not out.exists()
    saved = {r["task_id"]: r for r in load_rows(out)}
    first_ids = {r["run_id"] for r in saved.values()}
    assert 0 < len(saved) < 60 and len(first_ids) == 1

    outcome = run_sweep(load_study(study_path), out, PoolExecutor(1), resume=True)
    assert outcome.skipped == len(saved) and outcome.ran == 60 - len(saved)
    final = load_rows(out)
    assert not parts.exists()
    ids = [r["task_id"] for r in final]
    assert len(ids) == 60 and set(ids) == {t.task_id for t in load_study(study_path).tasks()}
    for r in final:
        if r["task_id"] in saved:  # saved before the kill: kept as they were, not run again
            assert r == saved[r["task_id"]]
        else:
            assert r["run_id"] == outcome.run_id and r["run_id"] not in first_ids


def test_summarize_and_plot(tmp_path: Path) -> None:
    study = load_study(_write(tmp_path, SMALL))
    out = tmp_path / "r.csv"
    run_sweep(study, out, PoolExecutor(1))
    result = runner.invoke(app, ["summarize", str(out), "--metric", "makespan", "--json", str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.output
    assert "workload.ccr" in result.output and "±" in result.output and "mct" in result.output
    import json

    groups = json.loads((tmp_path / "s.json").read_text())["groups"]
    assert len(groups) == 4 and all(g["makespan"]["n"] == 2 for g in groups)
    for kind, name in (("line", "p.png"), ("box", "p.svg")):
        result = runner.invoke(app, ["plot", str(out), "--x", "workload.ccr", "--y", "slr", "--kind", kind,
                                     "-o", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
        assert (tmp_path / name).stat().st_size > 1000
    bad = runner.invoke(app, ["plot", str(out), "--x", "nosuch", "--y", "slr", "-o", str(tmp_path / "q.png")])
    assert bad.exit_code == 2 and "workload.ccr" in bad.stderr
    bad = runner.invoke(app, ["summarize", str(out), "--metric", "speed"])
    assert bad.exit_code == 2 and "makespan" in bad.stderr


def test_example_study_validates() -> None:
    root = Path(__file__).resolve().parents[1]
    study = load_study(root / "scenarios" / "studies" / "ccr_shape.yaml")
    assert len(study.points) == 9 and len(study.tasks()) == 135


def test_missing_extras_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def fake(name: str, *args, **kwargs):
        if name.split(".")[0] in ("pyarrow", "distributed"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)
    study = _write(tmp_path, SMALL)
    for extra in (["-o", str(tmp_path / "r.parquet")], ["-o", str(tmp_path / "r.csv"), "--dask", "local"]):
        result = runner.invoke(app, ["sweep", str(study), *extra])
        assert result.exit_code == 2 and "[study]'" in result.stderr
