"""Pictures a person reads: Gantt charts (legend placement, transfers, colours by kind), plots (no
series hidden under another, shared y axes) and the two HTML reports (a run's, a study's)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg", force=True)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from simsched.cli.main import app  # noqa: E402
from simsched.report.gantt import draw_gantt, transfer_spans  # noqa: E402
from simsched.run.runner import run_scenario  # noqa: E402
from simsched.scenario import load_scenario  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TOPCUOGLU = ROOT / "scenarios" / "topcuoglu2002.yaml"
PIPELINE = ROOT / "scenarios" / "dot_pipeline.yaml"  # two task kinds: io and compute
STUDY = """\
name: pictures
scenario:
  platform: {processors: [{name: p, count: 3}], network: {bandwidth: 1.0}}
  workload: {generator: random, tasks: 10}
  schedulers: [heft]
grid:
  workload.ccr: [0.5, 2]
schedulers: [heft, mct]
seeds: [0, 1, 2]
"""
runner = CliRunner()


@pytest.fixture(scope="module")
def pipeline_report():
    pytest.importorskip("pydot", reason="scenarios/dot_pipeline.yaml reads a DOT file: the 'dot' extra")
    return run_scenario(load_scenario(PIPELINE), schedulers=["heft", "mct"], repetitions=1)


@pytest.fixture(scope="module")
def sweep_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("study")
    (folder / "study.yaml").write_text(STUDY)
    out = folder / "r.csv"
    result = runner.invoke(app, ["sweep", str(folder / "study.yaml"), "-o", str(out), "--workers", "1"])
    assert result.exit_code == 0, result.output
    return out


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


# ----------------------------------------------------------------------------- Gantt (PNG)
def test_gantt_legend_sits_outside_every_panel_and_bars_are_coloured_by_kind(pipeline_report) -> None:
    fig = draw_gantt(pipeline_report, transfers=True)
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        (legend,) = fig.legends
        box = legend.get_window_extent(renderer)
        assert box.y0 >= max(ax.get_tightbbox(renderer).y1 for ax in fig.axes) - 1  # above panels and titles
        assert 0 <= box.x0 and box.x1 <= fig.bbox.x1 and box.y1 <= fig.bbox.y1  # and inside the picture
        assert not any(_overlaps(box, ax.get_window_extent(renderer)) for ax in fig.axes)
        names = [t.get_text() for t in legend.get_texts()]
        assert {"compute", "io"} <= set(names)
        g = pipeline_report.problem.graph
        colour_of = {t.get_text(): h.get_facecolor() for t, h in zip(legend.get_texts(), legend.legend_handles)
                     if t.get_text() in g.kind_names}
        for ax, label in zip(fig.axes, ["heft", "mct"]):
            s = pipeline_report.schedules[label]
            seen = 0
            for bars in (c for c in ax.collections if c.get_gid() == "tasks"):
                for path, face in zip(bars.get_paths(), bars.get_facecolors()):
                    x0, y0 = path.vertices.min(axis=0)
                    t = int(np.flatnonzero(np.isclose(s.start, x0) & (np.rint(y0 + 0.4) == s.processor))[0])
                    assert tuple(face) == pytest.approx(colour_of[g.kind_of(t)])
                    seen += 1
            assert seen == g.n_tasks
    finally:
        plt.close(fig)


def test_transfers_are_drawn_from_producer_to_consumer(pipeline_report) -> None:
    problem = pipeline_report.problem
    g = problem.graph
    plain = draw_gantt(pipeline_report)
    try:
        assert not [c for ax in plain.axes for c in ax.collections if c.get_gid() == "transfers"]
    finally:
        plt.close(plain)
    fig = draw_gantt(pipeline_report, transfers=True)
    try:
        for ax, label in zip(fig.axes, ["heft", "mct"]):
            s = pipeline_report.schedules[label]
            (lines,) = [c for c in ax.collections if c.get_gid() == "transfers"]
            segments = np.array(lines.get_segments())
            cross = s.processor[g.edge_src] != s.processor[g.edge_dst]
            assert len(segments) == int(cross.sum()) > 0  # every link transfer, none on one processor
            edges, depart, arrive = transfer_spans(s, problem)
            for (x0, p0), (x1, p1) in segments:
                e = edges[np.flatnonzero(np.isclose(depart, x0) & np.isclose(arrive, x1))[0]]
                u, v = g.edge_src[e], g.edge_dst[e]
                assert (p0, p1) == (s.processor[u], s.processor[v])
                assert x0 == pytest.approx(s.finish[u])
                assert x1 - x0 == pytest.approx(float(problem.transfer_time(e, s.processor[u], s.processor[v])))
                assert x1 <= s.start[v] + 1e-9  # the data is there before its consumer starts
    finally:
        plt.close(fig)


def test_run_transfers_flag(tmp_path: Path) -> None:
    out = tmp_path / "g.png"
    result = runner.invoke(app, ["run", str(TOPCUOGLU), "-s", "heft", "--gantt", str(out), "--transfers"])
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = runner.invoke(app, ["run", str(TOPCUOGLU), "-s", "heft", "--transfers"])
    assert bad.exit_code == 2 and "--gantt" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


# ----------------------------------------------------------------------------- plot
def test_plot_keeps_every_series_visible_and_shares_y(sweep_csv: Path) -> None:
    from simsched.report.plots import draw_plot
    from simsched.run.store import load_rows

    rows = load_rows(sweep_csv)
    for r in rows:  # two schedulers with identical results: the worst case for hiding a line
        if r["scheduler"] == "mct":
            twin = next(q for q in rows if q["scheduler"] == "heft" and q["point"] == r["point"]
                        and q["seed"] == r["seed"])
            r["slr"] = twin["slr"]
    fig = draw_plot(rows, "seed", "slr")
    try:
        fig.canvas.draw()
        axes = [ax for ax in fig.axes if ax.get_visible()]
        assert len(axes) == 2 and axes[0].get_shared_y_axes().joined(axes[0], axes[1])
        for ax in axes:
            lines = [container.lines[0] for container in ax.containers]  # each errorbar's data line
            assert len(lines) == 2
            (a, b) = lines
            assert a.get_marker() != b.get_marker() and a.get_linestyle() != b.get_linestyle()
            assert np.allclose(np.asarray(a.get_ydata(), float), np.asarray(b.get_ydata(), float))  # equal means...
            gap = np.asarray(a.get_xdata(), float) - np.asarray(b.get_xdata(), float)
            assert np.all(np.abs(gap) > 0.01)  # ...drawn side by side
        renderer = fig.canvas.get_renderer()
        (legend,) = fig.legends
        assert not any(_overlaps(legend.get_window_extent(renderer), ax.get_window_extent(renderer)) for ax in axes)
    finally:
        plt.close(fig)


# ----------------------------------------------------------------------------- study report
def test_study_report_from_a_sweep_csv(sweep_csv: Path, tmp_path: Path) -> None:
    from simsched.run.store import load_rows
    from simsched.study.stats import column_decimals, format_mean_ci, summarize_rows

    out = tmp_path / "study.html"
    result = runner.invoke(app, ["report", str(sweep_csv), "-o", str(out), "-m", "makespan", "-m", "slr"])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert not re.search(r"(src|href)=\"(https?:|file:|/)", page) and "<script src" not in page
    table = re.search(r'<table id="summary">(.*?)</table>', page, re.S).group(1)
    entries = summarize_rows(load_rows(sweep_csv), ["makespan", "slr"])
    assert len(re.findall(r"<tr[ >]", table)) == len(entries) + 1 == 5
    places = column_decimals([(e["makespan"]["mean"], e["makespan"]["ci"]) for e in entries])
    for e in entries:  # every mean ± 95% interval of the summary is in the table, one precision per column
        assert format_mean_ci(e["makespan"]["mean"], e["makespan"]["ci"], decimals=places) in table
        assert "±" in format_mean_ci(e["slr"]["mean"], e["slr"]["ci"])
    images = re.findall(r'<figure data-metric="([^"]+)" data-x="([^"]+)"><img alt="[^"]*" '
                        r'src="data:image/png;base64,([^"]+)"', page)
    assert [(m, x) for m, x, _ in images] == [("makespan", "workload.ccr"), ("slr", "workload.ccr")]
    assert all(base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n" for _, _, data in images)
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize("text, message", [
    ("a,b\n1,2\n", "not a simsched results file"),
    ("", "has no rows"),
    ("task_id,point,point_id,scheduler,seed,makespan,slr,utilization,error\nx,0,p,heft,0,,,,boom\n",
     "every run in the results failed"),
    ("task_id,point,point_id,scheduler,seed,makespan,error\nx,0,p,heft,0,,boom\n", "bad.csv:1: slr: the header has no"),
])
def test_study_report_of_a_bad_csv_is_one_line_and_writes_nothing(tmp_path: Path, text: str, message: str) -> None:
    bad, out = tmp_path / "bad.csv", tmp_path / "study.html"
    bad.write_text(text)
    out.write_text("the previous report")
    result = runner.invoke(app, ["report", str(bad), "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert message in result.stderr and str(bad) in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert out.read_text() == "the previous report" and not list(tmp_path.glob(".*.tmp"))


def test_study_report_options_are_checked(sweep_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.html"
    for args, message in ((["--trace", str(tmp_path / "t.json")], "--trace"), (["-m", "speed"], "makespan")):
        result = runner.invoke(app, ["report", str(sweep_csv), "-o", str(out), *args])
        assert result.exit_code == 2 and message in result.stderr and not out.exists()


# ----------------------------------------------------------------------------- run report (HTML)
@pytest.mark.extra("dot")  # scenarios/dot_pipeline.yaml reads a DOT file
def test_run_report_colours_by_kind_with_a_legend(tmp_path: Path) -> None:
    from simsched.report.html import report_html

    path = tmp_path / "run.json"
    assert runner.invoke(app, ["run", str(PIPELINE), "-s", "heft", "-r", "1", "--json", str(path)]).exit_code == 0
    doc = json.loads(path.read_text())
    kinds = doc["problem"]["kinds"]
    assert set(kinds.values()) == {"compute", "io"} and len(kinds) == doc["problem"]["tasks"]
    page = report_html(doc)
    legend = re.search(r'<p class="legend" id="kinds">(.*?)</p>', page).group(1)
    swatches = dict(re.findall(r'data-kind="([^"]+)"><i style="background:(#[0-9a-f]{6})"', legend))
    assert set(swatches) == {"compute", "io"} and len(set(swatches.values())) == 2
    data = json.loads(re.search(r'id="simsched-data">(.*?)</script>', page).group(1))
    assert data["colours"] == swatches and data["kinds"] == kinds


def test_run_report_transfers_match_the_gantt(pipeline_report) -> None:
    from simsched.run.document import transfers_of
    from simsched.run.results import results_document

    doc = json.loads(json.dumps(results_document(pipeline_report)))
    g, problem = pipeline_report.problem.graph, pipeline_report.problem
    for label in ("heft", "mct"):
        row = next(r for r in doc["results"] if r["scheduler"] == label)
        edges, depart, arrive = transfer_spans(pipeline_report.schedules[label], problem)
        got = sorted((d, a, name) for d, a, _, _, name in transfers_of(doc, row["schedule"]))
        want = sorted((float(d), float(a), f"{g.names[g.edge_src[e]]}→{g.names[g.edge_dst[e]]}")
                      for e, d, a in zip(edges, depart, arrive))
        assert [n for *_, n in got] == [n for *_, n in want]
        assert np.allclose([x[:2] for x in got], [x[:2] for x in want])


def test_mean_ci_text_has_no_noise_digits() -> None:
    from simsched.study.stats import column_decimals, format_mean_ci

    assert format_mean_ci(147.2, 0.0) == "147.2"
    assert format_mean_ci(81.88, 2.8e-14) == "81.88"
    assert format_mean_ci(8207.8, 150.0) == "8208 ± 150"
    assert format_mean_ci(0.6997, 0.05, percent=True) == "70.0 ± 5.0%"
    assert format_mean_ci(float("nan"), 1.0) == "-"
    pairs = [(1.08, 0.036), (1.283, 0.12), (4.5, 1.3), (2.0, 0.001)]
    assert [format_mean_ci(m, c, decimals=column_decimals(pairs)) for m, c in pairs] == \
        ["1.08 ± 0.04", "1.28 ± 0.12", "4.50 ± 1.30", "2.00 ± <0.01"]


def test_study_report_of_a_single_point_draws_one_box_per_scheduler(sweep_csv: Path, tmp_path: Path) -> None:
    from simsched.run.store import load_rows
    from simsched.run.tables import columns_of, write_table

    rows = [r for r in load_rows(sweep_csv) if r["point"] == 0]
    for r in rows:
        del r["workload.ccr"]
    one = write_table(tmp_path / "one.csv", rows, columns_of(rows))
    result = runner.invoke(app, ["report", str(one), "-o", str(tmp_path / "one.html"), "-m", "slr"])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "one.html").read_text()
    assert re.findall(r'<figure data-metric="([^"]+)" data-x="([^"]+)"', page) == [("slr", "scheduler")]
