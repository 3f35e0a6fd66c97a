"""RLScheduler's protocol on cluster logs (issue #41): windows of consecutive jobs from an empty
machine, drawn from the day's seed or as RLScheduler draws them, a queue window, located refusals,
and the reproduction of its Lublin rows where the fetched logs are present."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from simsched.cli.main import main
from simsched.errors import SimschedError
from simsched.schedulers.batch_sjf import SJF
from simsched.simulator.batch import simulate_batch
from simsched.simulator.batch.policy import QueueWindow
from simsched.workloads.importers.swf import make_trace
from simsched.workloads.log_windows import cut, rlscheduler_starts, seeded_start, start_range

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "scenarios" / "data" / "traces" / "lublin_256.swf"
FETCHED = ROOT / "scenarios" / "data" / "traces" / "rlscheduler"


def test_rlschedulers_own_starts_for_seed_1() -> None:
    # compare-pick-jobs.py --seed 1 on a 10,000-job log: these starts give its Lublin-1 FCFS cell 7273.77 exactly
    assert rlscheduler_starts(1, 10, *start_range(10_000, 1024)) == [1981, 2756, 4299, 8850, 3316, 2714, 5228,
                                                                      7762, 4022, 7085]


def test_seeded_starts_are_the_days_own_and_in_range() -> None:
    lo, hi = start_range(2000, 256)
    assert (lo, hi) == (256, 1743)
    starts = [seeded_start(s, lo, hi) for s in range(200)]
    assert all(lo <= s < hi for s in starts) and len(set(starts)) > 150
    assert starts == [seeded_start(s, lo, hi) for s in range(200)]


def test_within_limits_the_draw_and_a_short_log_is_refused() -> None:
    assert start_range(50_000, 1024, within=10_000) == (1024, 10_000 - 1025)
    with pytest.raises(SimschedError, match="at least 2,050 jobs"):
        start_range(2000, 1024)


def test_a_window_keeps_the_logs_clock() -> None:
    tr = make_trace([0, 5, 9, 12], [1, 1, 1, 1], [1, 1, 1, 1])
    w = cut(tr, 1, 2)
    assert w.submit.tolist() == [5.0, 9.0] and w.ids.tolist() == [2, 3]


def test_a_queue_window_hides_the_jobs_behind_it() -> None:
    # one processor: job 0 runs 0-10; jobs 1 (100 s) and 2 (5 s) wait.  SJF starts job 2 at 10; seeing
    # one waiting job only (the first in submit order), it starts job 1 at 10
    tr = make_trace([0, 1, 2], [10, 100, 5], [1, 1, 1])
    assert simulate_batch(tr, 1, SJF()).start.tolist() == [0.0, 15.0, 10.0]
    assert simulate_batch(tr, 1, QueueWindow(SJF(), 1)).start.tolist() == [0.0, 10.0, 110.0]


def scenario(tmp_path: Path, windows: str, extra: str = "") -> Path:
    p = tmp_path / "w.yaml"
    p.write_text(f"name: w\nseed: 1\nrepetitions: 2\nplatform:\n  processors:\n    - {{name: node, count: 256}}\n"
                 f"workload:\n  stream:\n    swf: {SHIPPED}\n    windows: {windows}\n{extra}"
                 f"schedulers: [fcfs, f1]\n")
    return p


def run_cli(args: list[str], capsys) -> tuple[int, str]:
    with pytest.raises(SystemExit) as end:
        main(args)
    out = capsys.readouterr()
    return end.value.code, out.out + out.err


@pytest.mark.parametrize(("windows", "says"), [
    ("{jobs: 1024}", "windows.jobs"),        # 2,000 jobs cannot hold windows of 1,024
    ("{jobs: 64, queue: 0}", "windows.queue"),
    ("{jobs: 0}", "windows.jobs"),
    ("{jobs: 64, draw: random}", "windows.draw"),
])
def test_bad_windows_are_one_located_line(tmp_path: Path, capsys, windows: str, says: str) -> None:
    code, text = run_cli(["run", str(scenario(tmp_path, windows))], capsys)
    errors = [line for line in text.splitlines() if "error" in line.lower()]
    assert code == 2 and len(errors) == 1 and says in errors[0] and re.search(r"w\.yaml:\d+:", errors[0]), text
    assert "Traceback" not in text


def test_rlscheduler_draw_refuses_a_seed_space(tmp_path: Path, capsys) -> None:
    code, text = run_cli(["run", str(scenario(tmp_path, "{jobs: 64, draw: rlscheduler}")), "--seed-space", "train"],
                         capsys)
    assert code == 2 and "windows.draw" in text and "Traceback" not in text


def test_a_windowed_run_reports_each_policy_over_the_windows(tmp_path: Path, capsys) -> None:
    import json

    out = tmp_path / "r.json"
    code, text = run_cli(["run", str(scenario(tmp_path, "{jobs: 64}")), "-r", "3", "--json", str(out)], capsys)
    assert code == 0, text
    doc = json.loads(out.read_text())
    assert doc["windows"]["days"] == [1, 2, 3] and len(doc["results"]) == 6
    lo, hi = start_range(2000, 64)
    assert doc["windows"]["starts"] == [seeded_start(d, lo, hi) for d in (1, 2, 3)]
    fcfs = [r["bsld_mean"] for r in doc["results"] if r["scheduler"] == "fcfs"]
    assert doc["summary"][0]["scheduler"] == "fcfs" and doc["summary"][0]["mean"] == pytest.approx(np.mean(fcfs))
    assert all(r["window_jobs"] == 64 and r["window_start"] in doc["windows"]["starts"] for r in doc["results"])


@pytest.mark.parametrize(("row", "cells"), [
    (1, {"fcfs": 7273.77, "f1": 258.37, "sjf-priority(backfill=true)": 73.31}),
    (2, {"fcfs": 7842.47, "f1": 698.34, "f1(backfill=true)": 148.25}),
])
def test_rlschedulers_lublin_cells_where_the_logs_were_fetched(row: int, cells: dict[str, float]) -> None:
    name = "lublin_256.swf" if row == 1 else "lublin_256_new2.swf"
    if not (FETCHED / name).is_file():
        pytest.skip(f"{name} not fetched (tools/fetch_rlscheduler_traces.sh)")
    from simsched.run.log_windows import run_windows
    from simsched.scenario import load_scenario

    sc = load_scenario(ROOT / "scenarios" / "cluster" / f"rlscheduler_lublin{row}.yaml")
    report = run_windows(sc, schedulers=list(cells), repetitions=10)
    got = {r["scheduler"]: round(r["mean"], 2) for r in report.summary()}
    assert got == cells


def test_report_refuses_a_windowed_document_in_one_line(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.json"
    assert run_cli(["run", str(scenario(tmp_path, "{jobs: 64}")), "-r", "2", "--json", str(out)], capsys)[0] == 0
    code, text = run_cli(["report", str(out), "-o", str(tmp_path / "r.html")], capsys)
    assert code == 2 and "batch-windows" in text and "Traceback" not in text
    assert not (tmp_path / "r.html").exists()
