"""The run table fits the terminal: short headers with a legend, columns chosen by what the scenario is
(a job stream shows JCT percentiles, slowdown, misses and utilisation, not task-graph figures), ``--wide``
for everything, and the paired column's reference chosen on the same (geometric) mean its ratios show."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from helpers import SMALL_STREAM  # tests/ is on sys.path (rootdir-less test modules)
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.report.run_table import print_run_table
from simsched.run.runner import run_scenario
from simsched.scenario import load_scenario
from simsched.study.stats import paired_comparison

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "scenarios" / "quickstart.yaml"


@pytest.fixture(scope="module")
def static_report():
    return run_scenario(load_scenario(QUICKSTART), schedulers=["heft", "cpop", "mct", "random"], repetitions=3)


@pytest.fixture(scope="module")
def stream_report(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("stream") / "s.yaml"
    path.write_text(SMALL_STREAM)
    return run_scenario(load_scenario(path))


def _printed(report, width: int, wide: bool = False) -> str:
    console = Console(width=width, record=True, color_system=None)
    print_run_table(report, console, wide)
    return console.export_text()


def _header(text: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith("┃"))
    return [c.strip() for c in line.strip("┃").split("┃")]


def _body_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("│")]


@pytest.mark.parametrize("width", [80, 100])
@pytest.mark.parametrize("which", ["static_report", "stream_report"])
def test_the_table_fits_the_terminal_without_cut_or_wrapped_cells(which: str, width: int,
                                                                  request: pytest.FixtureRequest) -> None:
    report = request.getfixturevalue(which)
    text = _printed(report, width)
    assert max(len(line) for line in text.splitlines()) <= width
    assert "…" not in text  # no header or cell cut short
    assert len(_body_rows(text)) == len(report.schedulers)  # one line per scheduler: nothing wrapped
    assert "scheduler" in _header(text)


def test_a_static_table_shows_makespan_figures(static_report) -> None:
    header = _header(_printed(static_report, 100))
    assert header == ["scheduler", "makespan", "util", "vs LB", "time", "vs ref"]


def test_a_stream_table_shows_job_figures_not_task_graph_ones(stream_report) -> None:
    text = _printed(stream_report, 100)
    header = _header(text)
    assert {"JCT", "p50", "p95", "p99", "slowdown", "missed", "util", "lost", "vs ref"} <= set(header)
    assert not {"makespan", "SLR", "slr", "speedup", "efficiency", "vs LB", "turnaround"} & set(header)
    assert "p99: its 99th percentile" in " ".join(text.split())  # the legend names every short header


def test_a_narrow_terminal_leaves_out_columns_and_says_which(stream_report) -> None:
    text = " ".join(_printed(stream_report, 80).split())
    assert "left out to fit the terminal: p50" in text


def test_wide_shows_every_column_with_spread(stream_report, static_report) -> None:
    header = _header(_printed(stream_report, 250, wide=True))
    assert {"makespan", "turnaround", "waiting", "vs LB", "time", "JCT", "p50", "p99", "lost"} <= set(header)
    assert "mean JCT vs ref" in header
    rows = _body_rows(_printed(static_report, 250, wide=True))
    assert all(row.count("±") >= 4 for row in rows)  # std for makespan, turnaround, waiting, util, time


def test_the_run_command_takes_wide() -> None:
    args = ["run", str(QUICKSTART), "-s", "heft", "-s", "mct", "-r", "2"]
    narrow = CliRunner().invoke(app, args)
    wide = CliRunner().invoke(app, [*args, "--wide"])
    assert narrow.exit_code == wide.exit_code == 0
    assert "turnaround" not in _header(narrow.stdout) and "turnaround" in _header(wide.stdout)


def _rows(values: dict[str, list[float]]) -> list[dict]:
    return [{"scheduler": k, "seed": s, "makespan": v} for k, vs in values.items() for s, v in enumerate(vs)]


def test_the_reference_is_chosen_on_the_geometric_mean_its_ratios_show() -> None:
    # "a" wins on 4 of 5 days and loses badly on one: the lower arithmetic mean is b's, the lower
    # geometric mean a's; the ratios are geometric, so a is the reference and b's ratio is above 1
    comp = paired_comparison(_rows({"a": [1, 1, 1, 1, 20], "b": [2, 2, 2, 2, 2]}), "makespan")
    assert comp["reference"] == "a" and comp["reference_by"] == "geometric"
    assert comp["ratios"]["b"]["ratio"] == pytest.approx(2 / 20 ** 0.2)
    assert comp["ratios"]["a"]["ratio"] == pytest.approx(1.0)


def test_with_zeros_the_reference_falls_back_to_the_arithmetic_mean() -> None:
    comp = paired_comparison(_rows({"a": [0, 0, 4], "b": [1, 1, 1]}), "makespan")
    assert comp["reference_by"] == "arithmetic" and comp["reference"] == "b"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.floats(0.01, 1e4), min_size=2, max_size=2), min_size=2, max_size=8),
       st.lists(st.floats(0.01, 1e4), min_size=1, max_size=1))
def test_no_row_is_below_its_reference(seeds: list[list[float]], _c: list[float]) -> None:
    values = {"a": [s[0] for s in seeds], "b": [s[1] for s in seeds]}
    comp = paired_comparison(_rows(values), "makespan")
    for entry in comp["ratios"].values():
        assert entry["ratio"] >= 1 - 1e-9 or math.isnan(entry["ratio"])


# --------------------------------------------------------------------------- explain and check within 100 columns
STEP_BY_STEP = ("heft", "cpop", "peft", "minmin")


def _widest(output: str) -> int:
    """The widest printed line (CliRunner's console is 200 wide: only the command keeps it narrower)."""
    return max((len(line) for line in output.splitlines()), default=0)


def _explained(scenario: Path, name: str, *more: str) -> str:
    result = CliRunner().invoke(app, ["explain", name, str(scenario), *more])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("name", STEP_BY_STEP)
def test_explain_fits_100_columns_splitting_processors_into_parts(name: str) -> None:
    """Topcuoglu's three processors fit whole; the quick start's ten do not, so each table is printed in
    parts of consecutive processors, every processor in exactly one part; ``--wide`` prints it whole."""
    small = _explained(ROOT / "scenarios" / "topcuoglu2002.yaml", name)
    assert _widest(small) <= 100 and "part 1 of" not in small
    assert "EST/EFT P3" in small or "EST/EFT/O_EFT P3" in small or "CT P3" in small
    quick = ROOT / "scenarios" / "quickstart.yaml"
    out = _explained(quick, name)
    assert _widest(out) <= 100
    k = int(re.search(r"part 1 of (\d+)\)", out).group(1))
    assert k >= 2 and f"part {k} of {k})" in out
    headers = [line for line in out.splitlines() if line.startswith("┃") and "task" in line]
    # the processors' columns: every one of the ten in some part, none twice in one table
    for proc in [f"cpu{i}" for i in range(8)] + ["gpu0", "gpu1"]:
        assert any(f" {proc} " in h for h in headers), proc
        assert all(h.count(f" {proc} ") <= 1 for h in headers)
    assert " gpu1 " not in next(h for h in headers if " cpu0 " in h)  # the first part stops before the last
    wide = _explained(quick, name, "--wide")
    assert _widest(wide) > 100 and "part 1 of" not in wide


@pytest.mark.parametrize("target, prop", [("heft", None), ("mct", "no-future"), ("load-aware", None),
                                          ("fcfs", None)])
def test_check_fits_100_columns(target: str, prop: str | None) -> None:
    """A planner's, an online policy's, an autotuning policy's and a batch policy's contract tables: each
    property on one row within 100 columns (only the description may wrap, and here none does)."""
    args = ["check", target, "-n", "2"] + (["-P", "valid", "-P", prop] if prop else [])
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert _widest(result.output) <= 100
    rows = [line for line in result.output.splitlines() if line.startswith("│")]
    assert rows and all(line.split("│")[1].strip() for line in rows)  # a wrapped row has an empty first cell


@pytest.mark.slow
@pytest.mark.parametrize("name", STEP_BY_STEP)  # one test per scheduler: parallel workers share the load
def test_every_bundled_scenario_explains_within_100_columns(name: str) -> None:
    """``explain heft|cpop|peft|minmin`` on every bundled scenario of the top folder: within 100 columns,
    or refused in one line where it has more tasks than the step-by-step view shows."""
    for scenario in sorted((ROOT / "scenarios").glob("*.yaml")):
        result = CliRunner().invoke(app, ["explain", name, str(scenario)])
        if result.exit_code == 2:
            assert "shows every task, so it is limited to" in result.output, (scenario, result.output)
            continue
        assert result.exit_code == 0, (scenario, name, result.output[-500:])
        assert _widest(result.output) <= 100, (scenario.name, name)
