"""``report``, ``summarize`` and ``plot`` validate what they read, and say when a study is incomplete
(issue 33, parts 5 and 6).

A results document (``run --json``) or a sweep's results (CSV, Parquet) with a missing key, a text
value, a negative, infinite, NaN or null metric is refused: exit 2, one line naming the file, the line
(for JSON: where the key sits) and the field, nothing written.  The results of an interrupted sweep are
read, but every reader says "k of n runs" and marks the study incomplete — in the table, the HTML report
and the JSON summary.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import refused  # tests/ is on sys.path (rootdir-less test modules)
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.run.document import json_line
from simsched.run.store import completion, load_rows
from simsched.study.spec import load_study
from simsched.study.sweep import run_sweep

ROOT = Path(__file__).resolve().parent.parent

STREAM = """\
name: tiny-stream
seed: 3
platform:
  processors: [{name: cpu, type: cpu, count: 2}]
  network: {bandwidth: 10.0, latency: 0.1}
workload:
  stream:
    jobs: {generator: random, tasks: [3, 5]}
    arrivals: {poisson: 0.05}
    count: 4
    deadline: {slack: 3.0}
schedulers: [mct]
"""

STUDY = """\
name: four-runs
scenario:
  platform: {processors: [{name: p, count: 2}]}
  workload: {generator: random, tasks: 8}
  schedulers: [heft, mct]
seeds: [0, 1]
"""


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real results document of a job-stream run (rows with per-job records)."""
    tmp = tmp_path_factory.mktemp("doc")
    (tmp / "s.yaml").write_text(STREAM)
    result = CliRunner().invoke(app, ["run", str(tmp / "s.yaml"), "--json", str(tmp / "r.json")])
    assert result.exit_code == 0, result.output
    return json.loads((tmp / "r.json").read_text())


def _write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc, indent=1))
    return path


def _spoiled(doc: dict[str, Any], where: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """A deep copy of ``doc`` with the value at ``where`` replaced (``...``: the key removed)."""
    out = json.loads(json.dumps(doc))
    node = out
    for part in where[:-1]:
        node = node[part]
    if value is ...:
        del node[where[-1]]
    else:
        node[where[-1]] = value
    return out


def test_a_real_document_is_accepted(document: dict[str, Any], tmp_path: Path) -> None:
    results = _write(tmp_path / "r.json", document)
    result = CliRunner().invoke(app, ["report", str(results), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    assert "tiny-stream" in (tmp_path / "r.html").read_text()


BAD_DOCUMENTS = [  # (where, value, field named, words in the message)
    (("results", 0, "jobs", 1, "arrival"), ..., "results[0].jobs[1]", "no 'arrival'"),
    (("results", 0, "makespan"), "fast", "results[0].makespan", "must be a number"),
    (("results", 0, "makespan"), None, "results[0].makespan", "null"),
    (("results", 0, "avg_waiting"), -1.5, "results[0].avg_waiting", "at least 0"),
    (("results", 0, "jct_mean"), -3, "results[0].jct_mean", "at least 0"),
    (("results", 0, "utilization"), 1e300, "results[0].utilization", "finite"),
    (("results", 0, "makespan"), 10**400, "results[0].makespan", "finite"),
    (("results", 0, "seed"), True, "results[0].seed", "whole number"),
    (("results", 0, "scheduler"), 7, "results[0].scheduler", "must be a str"),
    (("results", 0, "makespan"), ..., "results[0]", "no 'makespan'"),
    (("results", 0, "schedule", 2, "finish"), -1, "results[0].schedule[2].finish", "at least 0"),
    (("results", 0, "schedule", 0, "start"), "0", "results[0].schedule[0].start", "must be a number"),
    (("results", 0, "jobs", 0, "completion"), None, "results[0].jobs[0].completion", "null"),
    (("results", 0, "jobs", 0), "job", "results[0].jobs[0]", "must be an object"),
    (("results", 0, "jobs"), {"a": 1}, "results[0].jobs", "must be a list"),
    (("lower_bound",), "x", "lower_bound", "must be a number"),
    (("network", "edges", 0), [1], "network.edges[0]", "an edge is"),
    (("network", "latency"), [[0]], "network.latency", "matrix"),
    (("network", "inv_bandwidth", 0, 1), -1, "network.inv_bandwidth[0][1]", "at least 0"),
]


@pytest.mark.parametrize(("where", "value", "field", "says"), BAD_DOCUMENTS,
                         ids=[f"{b[2]}={b[1]!r}"[:60] for b in BAD_DOCUMENTS])
def test_report_refuses_a_bad_results_document_with_file_line_and_field(
        document: dict[str, Any], tmp_path: Path, where: tuple[Any, ...], value: Any, field: str, says: str) -> None:
    results = _write(tmp_path / "bad.json", _spoiled(document, where, value))
    out, trace = tmp_path / "r.html", tmp_path / "t.json"
    line = refused(["report", str(results), "-o", str(out), "--trace", str(trace)], inputs=(results,),
                   absent=(out, trace), says=says)
    assert f"{results}:" in line and f" {field}: " in line, line
    text = results.read_text()
    named = int(line.split(f"{results}:", 1)[1].split(":", 1)[0])
    want = json_line(text, where if value is not ... else where[:-1])
    assert named == want, (line, want)
    if value is not ...:  # the line is where the key sits
        assert json.dumps(where[-1]) in text.splitlines()[named - 1] or isinstance(where[-1], int)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_standard_json_numbers_are_refused_at_their_line(document: dict[str, Any], tmp_path: Path,
                                                            constant: str) -> None:
    text = json.dumps(_spoiled(document, ("results", 0, "makespan"), 12345.678), indent=1)
    results = tmp_path / "nan.json"
    results.write_text(text.replace("12345.678", constant))
    line = refused(["report", str(results), "-o", str(tmp_path / "r.html")], inputs=(results,),
                   absent=(tmp_path / "r.html",), says="not a number JSON allows")
    assert f":{json_line(text, ('results', 0, 'makespan'))}:" in line


def test_an_integer_python_will_not_convert_is_refused_at_its_line(document: dict[str, Any], tmp_path: Path) -> None:
    text = json.dumps(_spoiled(document, ("results", 0, "makespan"), 12345.678), indent=1)
    results = tmp_path / "digits.json"
    results.write_text(text.replace("12345.678", "9" * 5000))
    line = refused(["report", str(results), "-o", str(tmp_path / "r.html")], inputs=(results,), says="4300 digits")
    assert f":{json_line(text, ('results', 0, 'makespan'))}:" in line


def test_json_line_finds_keys_and_items() -> None:
    text = '{\n "a": [\n  {"b": 1},\n  {"b": 2,\n   "c": [0, 1,\n 2]}\n ],\n "d": {}\n}'
    assert json_line(text, ("a",)) == 2
    assert json_line(text, ("a", 0)) == 3
    assert json_line(text, ("a", 1, "c")) == 5
    assert json_line(text, ("a", 1, "c", 2)) == 6
    assert json_line(text, ("d",)) == 8
    assert json_line(text, ("x",)) is None and json_line(text, ()) == 1
    assert json_line('{"a\\"b": {"k": 1}}', ('a"b', "k")) == 1


# ---------------------------------------------------------------- sweep results (CSV)
class Serial:
    """The executor interface of :mod:`simsched.run.executors`, in this process; ``stop_after``
    chunks then a Ctrl-C, as if the user interrupted the sweep."""

    workers = 1

    def __init__(self, stop_after: int | None = None) -> None:
        self.stop_after = stop_after

    def __enter__(self) -> Serial:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def results(self, chunks: list[dict[str, Any]],
                fn: Callable[[Any], list[dict[str, Any]]]) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
        for k, chunk in enumerate(chunks):
            if self.stop_after is not None and k >= self.stop_after:
                raise KeyboardInterrupt
            yield chunk, fn(chunk)


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    """A finished sweep of 4 runs."""
    (tmp_path / "study.yaml").write_text(STUDY)
    out = tmp_path / "r.csv"
    run_sweep(load_study(tmp_path / "study.yaml"), out, Serial(), size=1)
    return out


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


@pytest.mark.parametrize(("column", "cell", "says"), [("makespan", "-4.0", "negative"), ("slr", "inf", "finite"),
                                                      ("avg_waiting", "fast", "not a number"),
                                                      ("makespan", "", "no makespan"),
                                                      ("makespan", "nan", "no makespan"),
                                                      ("utilization", "1e999", "finite"),
                                                      ("seed", "-3", "whole number")])
def test_summarize_report_and_plot_refuse_bad_metrics(sweep: Path, column: str, cell: str, says: str) -> None:
    lines = _lines(sweep)
    header = lines[0].split(",")
    cells = lines[3].split(",")
    cells[header.index(column)] = cell
    lines[3] = ",".join(cells)
    sweep.write_text("\n".join(lines) + "\n")
    out = sweep.parent
    for args in (["summarize", str(sweep), "--json", str(out / "s.json")],
                 ["report", str(sweep), "-o", str(out / "s.html")],
                 ["plot", str(sweep), "--x", "seed", "--y", "makespan", "-o", str(out / "s.png")]):
        line = refused(args, inputs=(sweep,), absent=(out / "s.json", out / "s.html", out / "s.png"), says=says)
        assert f"{sweep}:4: {column}:" in line, line


def test_a_failed_run_may_have_nan_metrics(sweep: Path) -> None:
    from simsched.run.rowcheck import stamp
    from simsched.run.tables import columns_of, read_table, write_table

    rows = read_table(sweep)
    rows[1].update(dict.fromkeys(("makespan", "avg_turnaround", "slr"), math.nan), error="RuntimeError: boom")
    stamp(rows[1], rows[1]["version"])  # as a worker whose run failed writes it
    write_table(sweep, rows, columns_of(rows))
    rows = load_rows(sweep)
    assert math.isnan(rows[1]["makespan"]) and rows[1]["error"]


def test_a_complete_sweep_says_so(sweep: Path) -> None:
    result = CliRunner().invoke(app, ["summarize", str(sweep), "--json", str(sweep.parent / "s.json")])
    assert result.exit_code == 0, result.output
    assert "4 of 4 runs" in result.output and "INCOMPLETE" not in result.output
    doc = json.loads((sweep.parent / "s.json").read_text())
    assert (doc["runs"], doc["expected_runs"], doc["complete"]) == (4, 4, True)


def test_an_interrupted_sweep_is_marked_incomplete_everywhere(tmp_path: Path) -> None:
    (tmp_path / "study.yaml").write_text(STUDY)
    out = tmp_path / "r.csv"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(load_study(tmp_path / "study.yaml"), out, Serial(stop_after=3), size=1)
    assert not out.exists() and list((tmp_path / "r.csv.parts").glob("part-*.csv"))
    done = completion(out, load_rows(out))
    assert (done.done, done.expected, done.complete) == (3, 4, False)
    runner = CliRunner()
    result = runner.invoke(app, ["summarize", str(out), "--json", str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.output
    assert "3 of 4 runs" in result.output and "INCOMPLETE" in result.output
    assert "warning:" in result.stderr and "--resume" in result.stderr
    doc = json.loads((tmp_path / "s.json").read_text())
    assert (doc["runs"], doc["expected_runs"], doc["complete"]) == (3, 4, False)
    result = runner.invoke(app, ["report", str(out), "-o", str(tmp_path / "s.html")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "s.html").read_text()
    assert 'data-complete="false"' in page and "3 of 4 runs" in page and "(incomplete)" in page
    result = runner.invoke(app, ["plot", str(out), "--x", "seed", "--y", "makespan", "-o", str(tmp_path / "p.png")])
    assert result.exit_code == 0, result.output
    assert "3 of 4 runs" in result.output and "INCOMPLETE" in result.output
    run_sweep(load_study(tmp_path / "study.yaml"), out, Serial(), resume=True)  # finished: complete again
    assert completion(out, load_rows(out)).complete


def test_a_fifo_in_place_of_the_study_identity_never_blocks(sweep: Path) -> None:
    identity = sweep.with_name(sweep.name + ".study.json")
    identity.unlink()
    os.mkfifo(identity)
    result = CliRunner().invoke(app, ["summarize", str(sweep)])
    assert result.exit_code == 0, result.output
    assert ": 4 runs" in result.output  # the total is unknown without the identity, and nothing blocked


def test_a_file_in_place_of_the_parts_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "study.yaml").write_text(STUDY)
    (tmp_path / "r.csv.parts").write_text("not a folder")
    refused(["sweep", str(tmp_path / "study.yaml"), "-o", str(tmp_path / "r.csv"), "--workers", "1"],
            inputs=(tmp_path / "r.csv.parts",), absent=(tmp_path / "r.csv",), says="is a file, not a directory")


def test_a_byte_order_mark_is_not_part_of_the_first_column(sweep: Path) -> None:
    sweep.write_bytes(b"\xef\xbb\xbf" + sweep.read_bytes())  # as a spreadsheet saves it
    assert len(load_rows(sweep)) == 4
