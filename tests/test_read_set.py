"""One read set: no output of any command may be, or link to, a file the command reads (issue 33, part 2).

Loading a scenario records every file it reads, transitively — the scenario, its workload file, the
job files of a stream (named in ``jobs:`` or only in an arrival trace), the arrival trace, the
down-interval trace — and every output is refused when it is one of them, a symbolic link to one or a
hard link to one: exit 2, one line naming the option, the output and the input, the input unchanged,
nothing written.  The writer itself checks too (``simsched.fileio.atomic_path``), so a file read only
while the command works is protected as well.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import refused  # tests/ is on sys.path (rootdir-less test modules)
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import SimschedError
from simsched.fileio import OverwritesInput, atomic_write_text, declare_output, note_read, read_set, reading, unrecorded
from simsched.outputs import check_output, release_outputs

JOBS = '[{"name": "a", "work": 3}, {"name": "b", "work": 2}]\n'

SCENARIO = """\
name: read-set
seed: 1
platform:
  processors: [{name: cpu, type: cpu, count: 2}]
  network: {bandwidth: 10.0, latency: 0.1}
workload:
  stream:
    jobs:
      - {name: small, tasklist: jobs.json}
    arrivals: {trace: arrivals.csv}
failures:
  trace: down.csv
schedulers: [mct]
"""


@pytest.fixture
def stream(tmp_path: Path) -> Path:
    """A stream scenario reading four files besides itself: a job file named in ``jobs:``, an arrival
    trace, a job file named only in the trace, and a down-interval trace."""
    (tmp_path / "jobs.json").write_text(JOBS)
    (tmp_path / "other.json").write_text(JOBS)
    (tmp_path / "arrivals.csv").write_text("time,job\n0,small\n5,other.json\n9,small\n")
    (tmp_path / "down.csv").write_text("processor,start,end\ncpu1,2,4\n")
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO)
    return scenario


def inputs_of(scenario: Path) -> tuple[Path, ...]:
    return tuple(scenario.parent / n for n in ("s.yaml", "jobs.json", "other.json", "arrivals.csv", "down.csv"))


def test_the_stream_runs(stream: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["run", str(stream), "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert out.is_file()


@pytest.mark.parametrize(("option", "name"), [("--json", "jobs.json"), ("--json", "other.json"),
                                              ("--json", "arrivals.csv"), ("--json", "down.csv"),
                                              ("--trace", "jobs.json"), ("--trace", "other.json")])
def test_run_refuses_an_output_that_is_a_file_the_scenario_reads(stream: Path, name: str, option: str) -> None:
    target = stream.parent / name
    line = refused(["run", str(stream), option, str(target)], inputs=inputs_of(stream), says=option)
    assert "is the input file" in line and name in line
    assert not list(stream.parent.glob(".*.lock")) and not list(stream.parent.glob(".*.tmp"))


@pytest.mark.parametrize("how", ["symlink", "hardlink"])
@pytest.mark.parametrize("name", ["jobs.json", "arrivals.csv", "down.csv"])
def test_a_link_to_an_input_is_refused_too(stream: Path, tmp_path: Path, how: str, name: str) -> None:
    link = tmp_path / f"link-{name}.json"
    if how == "symlink":
        link.symlink_to(stream.parent / name)
    else:
        os.link(stream.parent / name, link)
    line = refused(["run", str(stream), "--json", str(link)], inputs=(*inputs_of(stream), link), says="--json")
    assert "link" in line or "is the input file" in line
    assert (link.is_symlink() if how == "symlink" else link.stat().st_nlink == 2)


def test_capacity_refuses_its_trace_as_output(stream: Path) -> None:
    for option in ("--json", "--plot"):
        target = stream.parent / ("arrivals.csv" if option == "--json" else "down.png")
        if option == "--plot":
            os.link(stream.parent / "down.csv", target)
        refused(["capacity", str(stream), "--objective", "makespan <= 1000", "--days", "1", option, str(target)],
                inputs=(*inputs_of(stream), target), says=option)


def test_the_second_output_is_checked_before_the_first_is_written(stream: Path, tmp_path: Path) -> None:
    """``--json`` is fine, ``--trace`` is the trace: neither is written."""
    fine = tmp_path / "fine.json"
    refused(["run", str(stream), "--json", str(fine), "--trace", str(stream.parent / "jobs.json")],
            inputs=inputs_of(stream), absent=(fine,), says="--trace")


def test_summarize_and_report_refuse_their_results_by_hard_link(tmp_path: Path) -> None:
    results = tmp_path / "r.csv"
    results.write_text("task_id,point_id,point,scheduler,seed,makespan\nt1,p0,0,heft,0,1.0\n")
    alias = tmp_path / "alias.json"
    os.link(results, alias)
    refused(["summarize", str(results), "--json", str(alias)], inputs=(results,), says="--json")
    alias_html = tmp_path / "alias.html"
    os.link(results, alias_html)
    refused(["report", str(results), "-o", str(alias_html)], inputs=(results,), says="-o")


# ---------------------------------------------------------------- the mechanism
def test_the_writer_refuses_a_member_of_the_read_set(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text("x\n")
    hard, soft = tmp_path / "hard", tmp_path / "soft"
    os.link(src, hard)
    soft.symlink_to(src)
    with reading() as reads:
        note_read(src)
        assert len(reads) == 1 and list(reads) == [str(src)]
        for target in (src, hard, soft, tmp_path / "sub" / ".." / "in.csv"):
            with pytest.raises(OverwritesInput, match="in.csv"):
                atomic_write_text(target, "gone")
        atomic_write_text(tmp_path / "fine.txt", "ok")
    assert src.read_text() == "x\n" and hard.read_text() == "x\n"
    atomic_write_text(soft, "outside a command nothing is refused")  # replaces the link, not its target
    assert src.read_text() == "x\n"
    assert read_set() is None


def test_a_declared_output_is_checked_on_every_write(tmp_path: Path) -> None:
    src, first, second = tmp_path / "in", tmp_path / "first", tmp_path / "second"
    src.write_text("keep")
    with reading():
        declare_output(second, "--trace")
        os.link(src, second)
        note_read(src)
        with pytest.raises(OverwritesInput, match="--trace"):
            atomic_write_text(first, "not written either")
    assert not first.exists()


def test_check_output_refuses_what_was_read_before(tmp_path: Path) -> None:
    src = tmp_path / "in.json"
    src.write_text("{}")
    try:
        with reading():
            note_read(src)
            with pytest.raises(SimschedError, match="--json"):
                check_output(src, option="--json")
            with unrecorded():  # a store reading its own file to rewrite it
                note_read(tmp_path / "own.csv")
            check_output(tmp_path / "own.csv", option="-o")
    finally:
        release_outputs()
    assert src.read_text() == "{}"


def test_reading_back_an_output_the_command_wrote_is_not_an_input(tmp_path: Path) -> None:
    """``train`` writes its checkpoint, evaluates it (reads it back), then writes its metrics."""
    checkpoint, metrics = tmp_path / "net.pt", tmp_path / "metrics.json"
    with reading() as reads:
        declare_output(checkpoint, "checkpoint")
        declare_output(metrics, "--json")
        atomic_write_text(checkpoint, "weights")
        note_read(checkpoint)
        assert len(reads) == 0
        atomic_write_text(metrics, "{}")
        atomic_write_text(checkpoint, "better weights")  # and may rewrite it
    assert metrics.read_text() == "{}" and checkpoint.read_text() == "better weights"


@pytest.mark.slow  # imports torch: about 10 s on a loaded machine
def test_run_refuses_a_schedulers_checkpoint_as_output_before_running(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from simsched.learned.deepsched.checkpoint import shipped_checkpoint

    net = tmp_path / "net.pt"
    net.write_bytes(shipped_checkpoint().read_bytes())
    scenario = tmp_path / "s.yaml"
    text = (Path(__file__).resolve().parent.parent / "scenarios" / "topcuoglu2002.yaml").read_text()
    scenario.write_text("\n".join("schedulers: [heft, {name: deepsched, checkpoint: net.pt}]"
                                  if line.startswith("schedulers:") else line for line in text.splitlines()))
    refused(["run", str(scenario), "--json", str(net)], inputs=(net, scenario), says="is the input file")


def test_sweep_refuses_results_that_are_a_file_its_study_reads(stream: Path, tmp_path: Path) -> None:
    """The study file, the base scenario it names and the files that scenario reads are all inputs."""
    study = tmp_path / "study.yaml"
    study.write_text("name: st\nscenario: s.yaml\nseeds: [0, 1]\n")
    base_link = tmp_path / "base.csv"
    os.link(stream, base_link)  # a hard link to the base scenario, named like results
    for target in (base_link, tmp_path / "arrivals.csv", tmp_path / "down.csv"):
        refused(["sweep", str(study), "-o", str(target), "--workers", "1"],
                inputs=(*inputs_of(stream), study, base_link), absent=(target.with_name(target.name + ".parts"),),
                says="the input file")
