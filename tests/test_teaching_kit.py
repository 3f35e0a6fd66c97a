"""The teaching pictures and step-by-step views, tested for what a lecturer needs them to show."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.report.taskgraph_picture import CP_COLOUR, describe_graph, write_graph
from simsched.scenario import build_problem, load_scenario
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.workloads.taskgraph import TaskGraph

ROOT = Path(__file__).resolve().parents[1]
TOPCUOGLU = ROOT / "scenarios" / "topcuoglu2002.yaml"


def _topcuoglu() -> Problem:
    return build_problem(load_scenario(TOPCUOGLU))


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


# ------------------------------------------------------------------ the weighted task graph
def test_topcuoglu_critical_path_is_highlighted_n1_n2_n9_n10() -> None:
    pic = describe_graph(_topcuoglu())
    assert [pic.names[t] for t in pic.critical_path] == ["1", "2", "9", "10"]
    assert pic.highlighted_names() == [("1", "2"), ("2", "9"), ("9", "10")]
    assert pic.node_label[0] == "14 | 16 | 9" and pic.node_label[9] == "21 | 7 | 16"  # the paper's cost table
    assert pic.edge_label[pic.edges.index((0, 1))] == "18"  # data of 1 -> 2
    assert "P1 | P2 | P3" in pic.cost_caption
    # layers: entry on top, exit at the bottom, every edge pointing down
    y = pic.position[:, 1]
    assert y[0] == 0 and y[9] == y.min() and all(y[a] > y[b] for a, b in pic.edges)


def test_svg_draws_the_highlighted_edges_in_red_and_the_labels(tmp_path: Path) -> None:
    out = write_graph(_topcuoglu(), tmp_path / "g.svg", title="topcuoglu2002")
    svg = out.read_text()
    for a, b in [("1", "2"), ("2", "9"), ("9", "10")]:
        group = re.search(rf'<g id="edge-{a}-{b}">(.*?)</g>', svg, re.S)
        assert group and CP_COLOUR.lower() in group.group(1).lower(), f"edge {a}->{b} not red"
    plain = re.search(r'<g id="edge-1-3">(.*?)</g>', svg, re.S).group(1)
    assert CP_COLOUR.lower() not in plain.lower()
    assert "critical path 1–2–9–10" in svg or "critical path 1" in svg


def test_png_has_red_path_and_is_not_blank(tmp_path: Path) -> None:
    import matplotlib.image as mpimg

    out = write_graph(_topcuoglu(), tmp_path / "g.png")
    img = mpimg.imread(out)[..., :3]
    red = (img[..., 0] > 0.75) & (img[..., 1] < 0.35) & (img[..., 2] < 0.3)
    ink = img.mean(axis=2) < 0.9
    assert red.sum() > 500 and ink.mean() > 0.02


def test_degenerate_graphs_draw(tmp_path: Path) -> None:
    one = Problem(TaskGraph(["only"], work=[0.0]), Platform.uniform([Processor("p")]))
    pic = describe_graph(one)
    assert pic.critical_path == (0,) and pic.highlighted == () and pic.node_label == ("0",)
    write_graph(one, tmp_path / "one.png")
    # ties: two equal chains; many processors -> the mean cost is shown
    g = TaskGraph(["a", "b", "c", "d"], [(0, 1), (0, 2), (1, 3), (2, 3)], [1.0, 1.0, 1.0, 1.0], work=1.0)
    wide = Problem(g, Platform.uniform([Processor(f"p{i}") for i in range(6)]))
    pic = describe_graph(wide)
    assert [pic.names[t] for t in pic.critical_path] == ["a", "b", "d"]  # tie: the lowest index
    assert pic.node_label[0] == "w̄ 1"
    write_graph(wide, tmp_path / "wide.svg")


def test_explain_graph_command(tmp_path: Path) -> None:
    result = _invoke("explain", "graph", str(TOPCUOGLU), "-o", str(tmp_path / "g.png"))
    assert result.exit_code == 0, result.output
    assert "critical path: 1 - 2 - 9 - 10" in result.output and (tmp_path / "g.png").stat().st_size > 10_000
    bad = _invoke("explain", "graph", str(TOPCUOGLU), "-o", str(tmp_path / "g.txt"))
    assert bad.exit_code == 2 and not (tmp_path / "g.txt").exists()
    assert np.all([line.startswith("error:") for line in bad.output.strip().splitlines()])


@pytest.mark.parametrize("name", ["topcuoglu2002.yaml", "tutorials/greedy_fails.yaml"])
def test_explain_graph_on_tutorial_scenarios(name: str, tmp_path: Path) -> None:
    assert _invoke("explain", "graph", str(ROOT / "scenarios" / name), "-o", str(tmp_path / "g.svg")).exit_code == 0


# ------------------------------------------------------------------ step by step: CPOP, PEFT, Min-Min
def _random_problems() -> list[Problem]:
    from simsched.workloads.generators import random_dag

    out = []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        g = random_dag(int(rng.integers(1, 25)), ccr=float(rng.uniform(0.1, 5.0)), rng=rng)
        m = int(rng.integers(1, 4))
        procs = [Processor(f"p{i}", speed=float(rng.uniform(0.5, 2.0))) for i in range(m)]
        out.append(Problem(g, Platform.uniform(procs, bandwidth=float(rng.uniform(0.5, 3.0)))))
    return out


@pytest.mark.parametrize("k", range(6))
def test_traces_end_in_the_schedulers_own_plans(k: int) -> None:
    from simsched.analysis.teaching import trace_cpop, trace_minmin, trace_peft
    from simsched.schedulers.cpop import cpop_schedule
    from simsched.schedulers.online import MinMin
    from simsched.schedulers.peft import peft_schedule
    from simsched.simulator.engine import run_online

    problem = ([_topcuoglu()] + _random_problems())[k]
    for trace, plan in ((trace_cpop(problem), cpop_schedule(problem)), (trace_peft(problem), peft_schedule(problem))):
        assert np.array_equal(trace.plan.processor, plan.processor)
        assert np.allclose(trace.plan.start, plan.start) and np.allclose(trace.plan.finish, plan.finish)
        assert len(trace.steps) == problem.n_tasks
    mm = trace_minmin(problem)
    plain, _ = run_online(problem, MinMin(), rng=np.random.default_rng(0))
    assert np.array_equal(mm.schedule.processor, plain.processor) and np.allclose(mm.schedule.start, plain.start)
    assert sorted(t for d in mm.decisions for t, _ in d.mapped) == list(range(problem.n_tasks))
    for d in mm.decisions:  # the first task mapped has the smallest minimum completion time
        first = list(d.tasks).index(d.mapped[0][0])
        assert d.completion[first].min() == pytest.approx(d.completion.min())


def test_explain_cpop_peft_minmin_on_topcuoglu() -> None:
    cpop = _invoke("explain", "cpop", str(TOPCUOGLU)).output
    assert "Critical path 1 - 2 - 9 - 10 (priority 108): critical-path processor P2" in cpop
    assert "CPOP makespan: 86" in cpop  # the paper's Fig. 3(b)
    peft = _invoke("explain", "peft", str(TOPCUOGLU)).output
    assert "OCT P1" in peft and "EST/EFT/O_EFT P2" in peft and "PEFT makespan: 85" in peft
    minmin = _invoke("explain", "minmin", str(TOPCUOGLU)).output
    assert "decision 1 at time 0: 1 ready" in minmin and "Min-Min makespan (measured by the simulator)" in minmin
    described = _invoke("explain", "cpop")
    assert described.exit_code == 0 and "Topcuoglu" in described.output and "explain cpop SCENARIO" in described.output


# ------------------------------------------------------------------ the Gantt chart decision by decision
def _groups(page: str) -> list[dict[str, str]]:
    return [dict(re.findall(r'data-(\w+)="([^"]*)"', m.group(1))) | {"body": m.group(2)}
            for m in re.finditer(r'<g class="task" ([^>]*)>(.*?)</g>', page, re.S)]


def test_step_gantt_has_one_frame_per_decision_in_heft_order(tmp_path: Path) -> None:
    import json

    from simsched.analysis.teaching import trace_heft

    out = tmp_path / "heft.html"
    result = _invoke("explain", "gantt", str(TOPCUOGLU), "-s", "heft", "-o", str(out))
    assert result.exit_code == 0 and "10 decisions of heft, makespan 80" in result.output
    page = out.read_text()
    groups = _groups(page)
    assert len(groups) == 10
    trace = trace_heft(_topcuoglu())
    names = _topcuoglu().graph.names
    by_step = sorted(groups, key=lambda g: int(g["step"]))
    assert [g["task"] for g in by_step] == [names[t] for t in trace.order]  # frame k adds HEFT's k-th task
    frames = json.loads(re.search(r'<script id="frames" type="application/json">(.*?)</script>', page, re.S)
                        .group(1))
    assert len(frames) == 10 and frames[0]["task"] == "1" and frames[-1]["finish"] == "80"
    assert {g["task"] for g in groups if g["cp"] == "1"} == {"1", "2", "9", "10"}  # the critical path marked
    assert all(CP_COLOUR in g["body"] for g in groups if g["cp"] == "1")
    assert 'type="range"' in page and 'max="10"' in page and "critical path 1–2–9–10" in page


def test_every_bar_is_labelled_narrow_ones_outside(tmp_path: Path) -> None:
    from simsched.report.gantt_steps import gantt_svg

    g = TaskGraph(["long-task", "x", "tiny-but-named"], [(0, 1)], [0.0], work=[50.0, 0.2, 0.5])
    problem = Problem(g, Platform.uniform([Processor("p"), Processor("q")]))
    from simsched.analysis.teaching import decision_order

    schedule, order = decision_order(problem, "heft")
    groups = _groups(gantt_svg(problem, schedule, order))
    labels = {grp["task"]: re.search(r'class="label (\w+)"[^>]*>([^<]*)<', grp["body"]).groups() for grp in groups}
    assert labels["long-task"] == ("inside", "long-task")
    assert labels["x"] == ("outside", "x") and labels["tiny-but-named"] == ("outside", "tiny-but-named")


@pytest.mark.parametrize("scheduler", ["cpop", "peft", "minmin", "mct", "etf"])
def test_step_gantt_for_other_schedulers_matches_their_runs(scheduler: str, tmp_path: Path) -> None:
    from simsched.analysis.teaching import decision_order
    from simsched.run.runner import run_scenario

    problem = _topcuoglu()
    schedule, order = decision_order(problem, scheduler)
    assert sorted(order.tolist()) == list(range(10))
    report = run_scenario(load_scenario(TOPCUOGLU), schedulers=[scheduler])
    assert schedule.makespan == pytest.approx(report.schedules[scheduler].makespan)
    out = tmp_path / "s.html"
    assert _invoke("explain", "gantt", str(TOPCUOGLU), "-s", scheduler, "-o", str(out)).exit_code == 0
    assert len(_groups(out.read_text())) == 10


def test_step_gantt_bad_input(tmp_path: Path) -> None:
    bad = _invoke("explain", "gantt", str(TOPCUOGLU), "-s", "hfet", "-o", str(tmp_path / "x.html"))
    assert bad.exit_code == 2 and "did you mean 'hlfet'?" in bad.output and not (tmp_path / "x.html").exists()
    assert _invoke("explain", "gantt", str(TOPCUOGLU), "-o", str(tmp_path / "x.png")).exit_code == 2


def test_step_gantt_in_headless_chromium_grows_frame_by_frame(tmp_path: Path) -> None:
    """The page as a lecturer sees it: at step 1 one bar (red: task 1 is on the critical path), at step 10
    all of them; the slider changes what is drawn."""
    import shutil
    import subprocess

    import matplotlib.image as mpimg

    browser = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                    if shutil.which(n)), None)
    if browser is None:
        pytest.skip("no chromium binary on PATH (CI installs Debian's chromium in .ci/run)")
    page = tmp_path / "heft.html"
    assert _invoke("explain", "gantt", str(TOPCUOGLU), "-s", "heft", "-o", str(page)).exit_code == 0
    shots = {}
    for step in (1, 10):
        shot = tmp_path / f"step{step}.png"
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--window-size=1050,420", f"--screenshot={shot}", f"{page.as_uri()}?step={step}"],
                       capture_output=True, timeout=120, check=True)
        img = mpimg.imread(shot)[..., :3]
        chart = img[180:]  # below the title, legend, slider and caption
        shots[step] = (chart.mean(axis=2) < 0.85).sum(), ((chart[..., 0] > 0.7) & (chart[..., 1] < 0.3)).sum()
    (ink1, red1), (ink10, red10) = shots[1], shots[10]
    assert red1 > 50 and red10 > red1  # the critical path grows from task 1 to 1-2-9-10
    assert ink10 > ink1 * 2


def test_explain_cpop_prints_markup_in_task_names_as_text(tmp_path: Path) -> None:
    """Task names come from the user's file: rich markup in one is printed, not interpreted (the CPOP
    priority table once passed names to rich as they were, so ``[red]`` vanished from the output)."""
    path = tmp_path / "names.yaml"
    path.write_text("""\
name: names
platform:
  processors: [{name: P1}, {name: P2}]
  network: {bandwidth: 1.0, latency: 0.0}
workload:
  tasks:
    - {name: "[red]a", cost: [2, 3]}
    - {name: "b[/]", cost: [4, 1]}
  edges:
    - {from: "[red]a", to: "b[/]", data: 1}
schedulers: [cpop]
""")
    result = _invoke("explain", "cpop", str(path))
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("│")]
    assert any("[red]a" in row for row in rows[:2]) and any("b[/]" in row for row in rows[:2])
    assert "Critical path [red]a - b[/]" in result.output
