"""HTML reports (rendered in headless Chromium) and Chrome/Perfetto trace export."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.report.trace import write_trace
from simsched.run.runner import run_scenario
from simsched.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
TOPCUOGLU = ROOT / "scenarios" / "topcuoglu2002.yaml"
SCHEDULERS = ["heft", "cpop", "mct"]
runner = CliRunner()


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture
def results_json(tmp_path: Path) -> Path:
    path = tmp_path / "run.json"
    args = ["run", str(TOPCUOGLU), "--json", str(path)]
    for s in SCHEDULERS:
        args += ["-s", s]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return path


def test_report_is_self_contained(results_json: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(results_json), "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "<script src" not in page and "<link" not in page and "url(" not in page
    assert not re.search(r"(src|href)=\"https?:", page)
    assert 'id="metrics"' in page and 'id="utilisation"' in page
    assert page.count('class="gantt"') == len(SCHEDULERS)


def test_gantt_renders_every_task_in_headless_chromium(results_json: Path, tmp_path: Path) -> None:
    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium binary on PATH (CI installs Debian's chromium in .ci/run)")
    out = tmp_path / "report.html"
    assert runner.invoke(app, ["report", str(results_json), "-o", str(out)]).exit_code == 0
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
           "--dump-dom", out.as_uri()]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
    doc = json.loads(results_json.read_text())
    n_tasks = doc["problem"]["tasks"]
    assert re.search(rf'data-rendered-tasks="{n_tasks * len(SCHEDULERS)}"', dom), dom[:2000]
    from simsched.run.document import first_runs, transfers_of

    moved = sum(len(transfers_of(doc, r["schedule"])) for r in first_runs(doc))
    assert moved > 0 and re.search(rf'data-rendered-transfers="{moved}"', dom)
    charts = re.findall(r'<svg[^>]*data-scheduler="([^"]+)"(.*?)</svg>', dom, flags=re.S)
    assert [name for name, _ in charts] == SCHEDULERS
    expected = {rec["task"]: rec["processor"] for rec in doc["results"][0]["schedule"]}
    for name, body in charts:
        rects = re.findall(r'<rect[^>]*data-task="([^"]+)"[^>]*data-processor="([^"]+)"', body)
        assert Counter(t for t, _ in rects) == Counter(expected.keys())  # every task exactly once
        if name == "heft":
            assert dict(rects) == expected
        # colour by kind (topcuoglu2002 has one kind), and the axis reaches past the last finish with
        # its last tick label inside the picture
        fills = set(re.findall(r'<rect class="task"[^>]*fill="([^"]+)"', body))
        assert len(fills) == 1 and 'data-kind="compute"' in body
        width = float(re.search(r'viewBox="0 0 (\d+)', dom).group(1))
        tick = r'<text x="([\d.]+)"[^>]*text-anchor="middle">([\d.]+)<'
        ticks = [(float(x), float(t)) for x, t in re.findall(tick, body)]
        end = max(rec["finish"] for row in doc["results"] for rec in row["schedule"])
        assert ticks and max(t for _, t in ticks) >= end
        assert max(x for x, _ in ticks) + 15 <= width


def test_trace_has_one_complete_event_per_task(tmp_path: Path) -> None:
    scenario = load_scenario(TOPCUOGLU)
    report = run_scenario(scenario, schedulers=SCHEDULERS)
    path = write_trace(report, tmp_path / "trace.json")
    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    complete = [e for e in events if e["ph"] == "X" and e["cat"] == "task"]
    assert len(complete) == report.problem.n_tasks * len(SCHEDULERS)
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert [processes[p].split()[0] for p in sorted(processes)] == SCHEDULERS
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    for pid, label in zip(sorted(processes), SCHEDULERS):
        mine = [e for e in complete if e["pid"] == pid]
        assert sorted(e["name"] for e in mine) == sorted(report.problem.graph.names)
        schedule = report.schedules[label]
        for e in mine:
            t = list(report.problem.graph.names).index(e["name"])
            assert threads[(pid, e["tid"])] == report.problem.platform.names[schedule.processor[t]]
            assert e["ts"] == pytest.approx(schedule.start[t] * 1e6)
            assert e["dur"] == pytest.approx((schedule.finish[t] - schedule.start[t]) * 1e6)
            assert e["dur"] >= 0 and isinstance(e["ts"], float)


def test_report_trace_option_and_bad_input(results_json: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(results_json), "-o", str(tmp_path / "r.html"),
                                 "--trace", str(tmp_path / "t.json")])
    assert result.exit_code == 0, result.output
    assert len([e for e in json.loads((tmp_path / "t.json").read_text())["traceEvents"] if e["ph"] == "X"]) == 30
    bad = tmp_path / "bad.json"
    for text, message in (("{", "not valid JSON"), ('{"results": [{"scheduler": "x"}]}', "no schedule"),
                          ('{"x": 1}', "not a results document")):
        bad.write_text(text)
        result = runner.invoke(app, ["report", str(bad), "-o", str(tmp_path / "b.html")])
        assert result.exit_code == 2 and message in result.stderr
        assert not (tmp_path / "b.html").exists()


def test_trace_shows_every_transfer_between_processors_on_link_threads(tmp_path: Path) -> None:
    from simsched.report.gantt import transfer_spans

    report = run_scenario(load_scenario(TOPCUOGLU), schedulers=["heft"])
    doc = json.loads(write_trace(report, tmp_path / "trace.json").read_text())
    events = doc["traceEvents"]
    moves = [e for e in events if e.get("cat") == "transfer"]
    problem, schedule = report.problem, report.schedules["heft"]
    g, procs = problem.graph, problem.platform.names
    edges, depart, arrive = transfer_spans(schedule, problem)
    assert len(moves) == len(edges) > 0  # every cross-processor edge of HEFT's schedule, nothing else
    threads = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    for e in moves:
        a, b = e["name"].split("→")
        ia, ib = list(g.names).index(a), list(g.names).index(b)
        assert threads[e["tid"]] == f"{procs[schedule.processor[ia]]}→{procs[schedule.processor[ib]]}"
        assert e["ts"] == pytest.approx(schedule.finish[ia] * 1e6)  # leaves when the producer finishes
        assert e["ts"] + e["dur"] <= schedule.start[ib] * 1e6 + 1e-6  # arrives before the consumer starts
        k = int(np.flatnonzero((g.edge_src == ia) & (g.edge_dst == ib))[0])
        assert e["args"]["data"] == float(g.edge_data[k]) and e["dur"] == pytest.approx(g.edge_data[k] * 1e6)
    assert set(threads.values()) >= set(procs)
