"""Every results row of a stream run records which stream engine ran it (``engine``: ``simpy``, the
ground truth, or ``compiled``), in the results JSON and in the HTML report's job-stream table; a
document checked by ``simsched report`` may carry it (a string) and a document written before it
existed still renders."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import SimschedError
from simsched.report.html import report_html
from simsched.run.document import load_document
from simsched.run.results import results_document
from simsched.run.runner import run_scenario
from simsched.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "scenarios/streams/trace.yaml"


def test_every_stream_row_names_its_engine_in_json_and_report(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    result = CliRunner().invoke(app, ["run", str(TRACE), "-s", "mct", "-s", "srjf-eft", "-r", "2",
                                      "--json", str(path)])
    assert result.exit_code == 0, result.output
    doc = json.loads(path.read_text())
    engines = [(r["scheduler"], r["engine"]) for r in doc["results"]]
    assert engines == [("mct", "simpy")] * 2 + [("srjf-eft", "simpy")] * 2
    page = report_html(load_document(path))
    stream = page[page.index('<table id="stream">'):]
    stream = stream[:stream.index("</table>")]
    assert "<th" in stream and ">engine</th>" in stream
    assert stream.count("<td>simpy</td>") == 2  # one row per scheduler


def test_a_compiled_run_says_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    """``mct`` on a stream the compiled loop applies to, with the size threshold lowered so that
    ``auto`` takes it: the row says ``compiled``; ``sufferage`` beside it (no compiled loop) says
    ``simpy``."""
    if importlib.util.find_spec("numba") is None:
        pytest.skip("the compiled stream engine needs numba (the 'fast' extra)")
    from simsched.simulator.engine import compiled

    monkeypatch.setattr(compiled, "AUTO_MIN_TASKS", 0)
    report = run_scenario(load_scenario(TRACE), schedulers=["mct", "sufferage"])
    rows = results_document(report)["results"]
    assert {r["scheduler"]: r["engine"] for r in rows} == {"mct": "compiled", "sufferage": "simpy"}


def test_engine_must_be_a_string_and_old_documents_render(tmp_path: Path) -> None:
    report = run_scenario(load_scenario(TRACE), schedulers=["mct"])
    doc = json.loads(json.dumps(results_document(report)))
    path = tmp_path / "run.json"
    doc["results"][0]["engine"] = 3
    path.write_text(json.dumps(doc, indent=1))
    with pytest.raises(SimschedError, match=r"results\[0\]\.engine"):
        load_document(path)
    del doc["results"][0]["engine"]  # a document written before the field existed
    path.write_text(json.dumps(doc, indent=1))
    page = report_html(load_document(path))
    assert ">engine</th>" in page and "<td>-</td>" in page


def test_a_cluster_logs_rows_name_their_engine(tmp_path: Path) -> None:
    """The batch path: a batch policy runs in the batch world on SimPy, a task-graph scheduler on the
    online engine (its rows say which of its engines ran)."""
    path = tmp_path / "gpu.json"
    result = CliRunner().invoke(app, ["run", str(ROOT / "scenarios/cluster/gpu_cluster.yaml"), "-s", "easy-backfill",
                                      "-s", "srjf-eft", "--json", str(path)])
    assert result.exit_code == 0, result.output
    doc = load_document(path)
    assert doc["workload"] == "batch"
    assert {r["scheduler"]: r["engine"] for r in doc["results"]} == {"easy-backfill": "simpy", "srjf-eft": "simpy"}
