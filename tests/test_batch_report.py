"""The HTML report of a cluster log's run: its metrics table and the utilisation and queue-length
plots drawn from the engine's timeline; the time-weighted binning they use; bad documents refused."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.report.batch import binned_mean

ROOT = Path(__file__).resolve().parents[1]


def test_binned_means_of_a_known_step_function() -> None:
    # 0 on [0, 10), 4 on [10, 30), 1 on [30, 40]: bins of 20 -> means 2 and 2.5
    x, y = binned_mean(np.array([0.0, 10.0, 30.0]), np.array([0.0, 4.0, 1.0]), 40.0, bins=2)
    assert x.tolist() == [10.0, 30.0] and y.tolist() == pytest.approx([2.0, 2.5])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 100), st.integers(0, 64)), min_size=1, max_size=60), st.integers(1, 20),
       st.floats(0, 50))
def test_binned_means_keep_the_integral(steps, bins, tail) -> None:
    """Whatever the bins, the means times the bin widths add up to the step function's integral, and
    every mean lies within the values' range."""
    steps.sort()
    t = np.array([a for a, _ in steps])
    y = np.array([float(b) for _, b in steps])
    end = float(t[-1] + tail)
    x, m = binned_mean(t, y, end, bins=bins)
    if x is t:  # fewer steps than bins (or no span): drawn as they are
        return
    width = (end - t[0]) / bins
    exact = float(np.dot(y, np.diff(np.append(t, end))))
    assert float(m.sum() * width) == pytest.approx(exact, rel=1e-9, abs=1e-6)
    assert m.min() >= y.min() - 1e-9 and m.max() <= y.max() + 1e-9


def test_the_report_of_a_cluster_log_has_the_plots_and_a_row_per_policy(tmp_path) -> None:
    results, page = tmp_path / "r.json", tmp_path / "r.html"
    scenario = ROOT / "scenarios" / "cluster" / "gpu_cluster.yaml"
    assert CliRunner().invoke(app, ["run", str(scenario), "--json", str(results)]).exit_code == 0
    doc = json.loads(results.read_text())
    for row in doc["results"]:  # the timeline is the engine's: busy never above the machine
        tl = row["timeline"]
        assert len(tl["t"]) == len(tl["busy"]) == len(tl["queued"]) and max(tl["busy"]) <= doc["processors"]
    res = CliRunner().invoke(app, ["report", str(results), "-o", str(page)])
    assert res.exit_code == 0, res.output
    text = page.read_text()
    body = text[text.index('id="batch-metrics"'):]
    assert body.count("<tr>") == 1 + len(doc["results"])  # header + one row per policy
    png = re.search(r'id="batch-timeline"[^>]*src="data:image/png;base64,([^"]+)"', text)
    assert png and base64.b64decode(png.group(1)).startswith(b"\x89PNG")


@pytest.mark.parametrize(("change", "field"), [
    (lambda row: row["timeline"]["busy"].pop(), "results[0].timeline.busy"),
    (lambda row: row["jobs"][0].pop("start"), "results[0].jobs[0]"),
    (lambda row: row.update(wait_mean="x"), "results[0].wait_mean"),
    (lambda row: row["timeline"]["t"].reverse(), "results[0].timeline.t"),
])
def test_a_damaged_batch_document_is_refused_with_its_field(tmp_path, change, field) -> None:
    results, page = tmp_path / "r.json", tmp_path / "r.html"
    scenario = ROOT / "scenarios" / "cluster" / "gpu_cluster.yaml"
    assert CliRunner().invoke(app, ["run", str(scenario), "-s", "fcfs", "--json", str(results)]).exit_code == 0
    doc = json.loads(results.read_text())
    change(doc["results"][0])
    results.write_text(json.dumps(doc, indent=1))
    res = CliRunner().invoke(app, ["report", str(results), "-o", str(page)])
    assert res.exit_code == 2 and field in res.output and "Traceback" not in res.output, res.output
    assert not page.exists()
