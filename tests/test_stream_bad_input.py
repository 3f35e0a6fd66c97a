"""Bad input on job streams, failures and capacity questions: exit code 2, ONE line naming the file,
the field (scenario path, CSV column or option) and the line where there is one, no traceback, and
nothing written (neither --json, nor --gantt, nor --plot)."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from simsched.cli.main import app

BASE: dict[str, Any] = {
    "platform": {"processors": [{"name": "cpu", "type": "cpu", "count": 2},
                                {"name": "gpu", "type": "gpu", "speed": 3.0, "count": 1}],
                 "network": {"bandwidth": 10.0}},
    "workload": {"stream": {"jobs": {"generator": "random", "tasks": [4, 8]}, "arrivals": {"poisson": 0.05},
                            "count": 4}},
    "schedulers": ["mct"],
}
TRACED = {"jobs": {"name": "j", "generator": "random", "tasks": 5}, "arrivals": {"trace": "t.csv"}}


def _set(path: str, value: Any) -> Callable[[dict], None]:
    keys = path.split(".")

    def edit(data: dict) -> None:
        node = data
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        node[keys[-1]] = value
    return edit


def _no_size(data: dict) -> None:
    del data["workload"]["stream"]["count"]


def _horizon(value: Any) -> Callable[[dict], None]:
    def edit(data: dict) -> None:
        del data["workload"]["stream"]["count"]
        data["workload"]["stream"]["horizon"] = value
    return edit


# (id, edit of BASE, CSV written next to the scenario as t.csv or None,
#  where the error must point: (file name, field, line or None), a word of the message)
SCENARIO_CASES = [
    ("negative rate", _set("workload.stream.arrivals", {"poisson": -0.1}), None,
     ("s.yaml", "workload.stream.arrivals.poisson", True), "greater than 0"),
    ("rate 0", _set("workload.stream.arrivals", {"poisson": 0}), None,
     ("s.yaml", "workload.stream.arrivals.poisson", True), "greater than 0"),
    ("negative piecewise rate", _set("workload.stream.arrivals", {"rates": [[0, 0.1], [10, -1]]}), None,
     ("s.yaml", "workload.stream.arrivals.rates[1][1]", True), "greater than or equal to 0"),
    ("piecewise rate ending at 0", _set("workload.stream.arrivals", {"rates": [[0, 0.1], [10, 0]]}), None,
     ("s.yaml", "workload.stream.arrivals.rates", True), "never ends"),
    ("MTTR 0", _set("failures", {"mtbf": 100, "mttr": 0}), None, ("s.yaml", "failures.mttr", True), "greater than 0"),
    ("negative MTBF", _set("failures", {"mtbf": -100, "mttr": 5}), None,
     ("s.yaml", "failures.mtbf", True), "greater than 0"),
    ("per-type MTTR negative", _set("failures", {"types": {"gpu": {"mtbf": 10, "mttr": -1}}}), None,
     ("s.yaml", "failures.types.gpu.mttr", True), "greater than 0"),
    ("MTBF without MTTR", _set("failures", {"mtbf": 100}), None, ("s.yaml", "failures", True), "together"),
    ("failure type unknown", _set("failures", {"types": {"tpu": {"mtbf": 5, "mttr": 1}}}), None,
     ("s.yaml", "failures.types.tpu", True), "no processor has type 'tpu'"),
    ("straggler rate negative", _set("stragglers", {"rate": -1, "duration": 5}), None,
     ("s.yaml", "stragglers.rate", True), "greater than 0"),
    ("unsorted trace times", _set("workload.stream", TRACED), "time,job\n0,j\n10,j\n5,j\n",
     ("t.csv", "time", 4), "sorted"),
    ("trace missing the job column", _set("workload.stream", TRACED), "time\n0\n", ("t.csv", "job", 1), "'job'"),
    ("trace empty file", _set("workload.stream", TRACED), "", ("t.csv", "time", 1), "'time'"),
    ("trace bad time cell", _set("workload.stream", TRACED), "time,job\n0,j\nsoon,j\n", ("t.csv", "time", 3),
     "'soon' is not a number"),
    ("trace NaN time", _set("workload.stream", TRACED), "time,job\nnan,j\n", ("t.csv", "time", 2), "finite"),
    ("trace negative time", _set("workload.stream", TRACED), "time,job\n-3,j\n", ("t.csv", "time", 2), ">= 0"),
    ("trace bad deadline cell", _set("workload.stream", TRACED), "time,job,deadline\n0,j,x\n",
     ("t.csv", "deadline", 2), "'x' is not a number"),
    ("trace row cut short", _set("workload.stream", TRACED), "time,job,deadline\n0,j,9\n4\n",
     ("t.csv", "job", 3), "no cell"),
    ("trace row too long", _set("workload.stream", TRACED), "time,job\n0,j,7\n", ("t.csv", "job", 2), "more cells"),
    ("trace empty job cell", _set("workload.stream", TRACED), "time,job\n0, \n", ("t.csv", "job", 2), "empty"),
    ("trace job file missing", _set("workload.stream", TRACED), "time,job\n0,j\n3,nope.json\n",
     ("t.csv", "job", 3), "not found"),
    ("trace deadline before arrival", _set("workload.stream", TRACED), "time,job,deadline\n10,j,5\n",
     ("t.csv", "deadline", 2), "not after the arrival"),
    ("trace deadline at arrival", _set("workload.stream", TRACED), "time,job,deadline\n10,j,10\n",
     ("t.csv", "deadline", 2), "not after the arrival"),
    ("trace with no jobs", _set("workload.stream", TRACED), "time,job\n", ("s.yaml", "workload.stream.arrivals.trace",
                                                                          True), "no jobs"),
    ("trace file missing", _set("workload.stream", {**TRACED, "arrivals": {"trace": "nope.csv"}}), None,
     ("s.yaml", "workload.stream.arrivals.trace", True), "not found"),
    ("job file missing", _set("workload.stream.jobs", {"wfcommons": "nope.json"}), None,
     ("s.yaml", "workload.stream.jobs.wfcommons", True), "does not exist"),
    ("negative relative deadline", _set("workload.stream.deadline", {"slack": -1}), None,
     ("s.yaml", "workload.stream.deadline.slack", True), "greater than 0"),
    ("relative deadline 0", _set("workload.stream.deadline", {"slack": 0}), None,
     ("s.yaml", "workload.stream.deadline.slack", True), "greater than 0"),
    ("count 0", _set("workload.stream.count", 0), None, ("s.yaml", "workload.stream.count", True),
     "greater than or equal to 1"),
    ("neither count nor horizon", _no_size, None, ("s.yaml", "workload.stream", True), "count"),
    ("negative horizon", _horizon(-5), None, ("s.yaml", "workload.stream.horizon", True), "greater than 0"),
    ("zero total weight", _set("workload.stream.jobs", [{"weight": 0, "generator": "random", "tasks": 4},
                                                       {"weight": 0, "generator": "random", "tasks": 5}]), None,
     ("s.yaml", "workload.stream.jobs[0].weight", True), "> 0"),
    ("failure trace unknown processor", _set("failures", {"trace": "t.csv"}), "processor,start,end\ntpu0,1,2\n",
     ("t.csv", "processor", 2), "no processor named 'tpu0'"),
    ("failure trace unsorted", _set("failures", {"trace": "t.csv"}), "processor,start,end\ncpu0,5,6\ncpu1,1,2\n",
     ("t.csv", "start", 3), "sorted"),
    ("failure trace bad cell", _set("failures", {"trace": "t.csv"}), "processor,start,end\ncpu0,1,later\n",
     ("t.csv", "end", 2), "'later' is not a number"),
    ("failure trace end before start", _set("failures", {"trace": "t.csv"}), "processor,start,end\ncpu0,5,2\n",
     ("t.csv", "end", 2), "start < end"),
    ("failure trace missing column", _set("failures", {"trace": "t.csv"}), "processor,start\ncpu0,1\n",
     ("t.csv", "end", 1), "'end'"),
]

_LOCATED = re.compile(r"^error: (?P<file>\S+?)(?::(?P<line>\d+))?: (?P<field>[^:]+): (?P<message>.+)$")


def _scenario(tmp_path: Path, edit: Callable[[dict], None], csv: str | None) -> Path:
    data = copy.deepcopy(BASE)
    edit(data)
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    if csv is not None:
        (tmp_path / "t.csv").write_text(csv)
    return path


def _one_located_line(result: Any, outputs: list[Path]) -> re.Match:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.stdout == ""
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, result.stderr
    match = _LOCATED.match(lines[0])
    assert match is not None, lines[0]
    assert not any(p.exists() for p in outputs), "an output was written"
    return match


@pytest.mark.parametrize("edit, csv, where, needle", [c[1:] for c in SCENARIO_CASES],
                         ids=[c[0] for c in SCENARIO_CASES])
def test_run_rejects_with_one_located_line(tmp_path: Path, edit, csv, where, needle) -> None:
    scenario = _scenario(tmp_path, edit, csv)
    outputs = [tmp_path / "o.json", tmp_path / "o.png"]
    result = CliRunner().invoke(app, ["run", str(scenario), "--json", str(outputs[0]), "--gantt", str(outputs[1])])
    match = _one_located_line(result, outputs)
    file, field, line = where
    if file != "s.yaml":  # a file the scenario names: the chain, the scenario's file, line and field first
        assert Path(match["file"]).name == "s.yaml" and match["line"] is not None, match.group(0)
        assert match["field"] in ("workload.stream.arrivals.trace", "failures.trace"), match.group(0)
        match = _LOCATED.match("error: " + match["message"])
        assert match is not None
    assert Path(match["file"]).name == file
    assert match["field"] == field, match.group(0)
    if line is True:
        assert match["line"] is not None, match.group(0)
    else:
        assert match["line"] == str(line), match.group(0)
    assert needle in match["message"], match.group(0)


def test_validate_agrees_with_run(tmp_path: Path) -> None:
    """``simsched validate`` reports the same located problem without running anything."""
    scenario = _scenario(tmp_path, _set("failures", {"mtbf": 100, "mttr": 0}), None)
    result = CliRunner().invoke(app, ["validate", str(scenario)])
    assert result.exit_code == 2 and "failures.mttr" in result.output and "Traceback" not in result.output


CAPACITY_CASES = [
    ("unknown metric", ["--objective", "jct_p96x <= 5", "--resource", "gpu"], {},
     ("--objective", False), "no metric 'jct_p96x'"),
    ("malformed expression", ["--objective", "jct_p95 <== 5", "--resource", "gpu"], {},
     ("--objective", False), "METRIC OP NUMBER"),
    ("unknown unit", ["--objective", "jct_p95 <= 5 parsecs", "--resource", "gpu"], {}, ("--objective", False), ""),
    ("resource names no processor", ["--objective", "jct_p95 <= 5", "--resource", "tpu"], {},
     ("--resource", False), "'tpu'"),
    ("resource missing with two entries", ["--objective", "jct_p95 <= 5"], {}, ("capacity.resource", True), "several"),
    ("file: unknown metric", [], {"objective": "jct_p42x <= 5", "resource": "gpu"},
     ("capacity.objective", True), "no metric 'jct_p42x'"),
    ("file: malformed expression", [], {"objective": "p95 of jct under 5", "resource": "gpu"},
     ("capacity.objective", True), ""),
    ("file: resource names no processor", [], {"objective": "jct_p95 <= 5", "resource": "tpu"},
     ("capacity.resource", True), "'tpu'"),
    ("file: days 0", ["--objective", "jct_p95 <= 5", "--resource", "gpu"], {"days": 0}, ("capacity.days", True), ""),
]


@pytest.mark.parametrize("args, section, where, needle", [c[1:] for c in CAPACITY_CASES],
                         ids=[c[0] for c in CAPACITY_CASES])
def test_capacity_rejects_with_one_located_line(tmp_path: Path, args, section, where, needle) -> None:
    scenario = _scenario(tmp_path, _set("capacity", section) if section else (lambda d: None), None)
    outputs = [tmp_path / "o.json", tmp_path / "o.png"]
    result = CliRunner().invoke(app, ["capacity", str(scenario), *args, "--json", str(outputs[0]),
                                      "--plot", str(outputs[1])])
    match = _one_located_line(result, outputs)
    field, has_line = where
    assert Path(match["file"]).name == "s.yaml" and match["field"] == field, match.group(0)
    assert (match["line"] is not None) == has_line, match.group(0)
    assert needle in match["message"], match.group(0)


def test_a_good_stream_still_runs(tmp_path: Path) -> None:
    """The base of every case above is valid: each failure comes from its one edit."""
    scenario = _scenario(tmp_path, lambda d: None, None)
    result = CliRunner().invoke(app, ["run", str(scenario), "--json", str(tmp_path / "o.json")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "o.json").stat().st_size > 0
