"""Outputs onto inputs in the newest commands (issue 40, row 3): ``generalise --html``, ``capacity --plot``,
``train rl -o`` and the two learned command lines go through the one mechanism of :mod:`simsched.outputs`
(``check_output`` and the read set; ``output_files`` for a folder of results) — a located refusal, exit
2, no traceback, nothing overwritten, before any work.

``train rl SCENARIO --resume`` rewrites the checkpoint it resumes: the read set is told so
(:func:`simsched.fileio.rewrites`), so the resumed run may replace it (it was refused at the very end,
after minutes of training) while a checkpoint the scenario itself reads is still refused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import digest, refused  # tests/ is on sys.path (rootdir-less test modules)

from simsched.errors import SimschedError
from simsched.fileio import OverwritesInput, atomic_write_bytes, note_read, reading, rewrites
from simsched.outputs import check_output, output_files, release_outputs

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINT = ROOT / "simsched" / "learned" / "rl" / "data" / "rl_dynamic.pt"

STREAM = {"name": "small-stream", "seed": 1, "platform": {"processors": [{"name": "cpu", "count": 2}]},
          "workload": {"stream": {"jobs": [{"name": "small", "tasklist": "jobs.json"}], "arrivals": {"poisson": 0.05},
                                  "count": 4}},
          "schedulers": ["mct"]}
"""A job stream whose one job source is a job file beside it (an input the commands read)."""


@pytest.fixture
def stream(tmp_path: Path) -> Path:
    (tmp_path / "jobs.json").write_text('[{"name": "a", "work": 3}, {"name": "b", "work": 2}]\n')
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(STREAM))
    return scenario


# ------------------------------------------------------------------ the mechanism
def test_a_rewritten_output_may_be_read_then_replaced(tmp_path: Path) -> None:
    own, other = tmp_path / "rl.pt", tmp_path / "scheduler.pt"
    own.write_bytes(b"old")
    other.write_bytes(b"theirs")
    with reading():
        note_read(other)  # a file the scenario reads (a scheduler's checkpoint)
        with pytest.raises(OverwritesInput):
            check_output(other, option="--output")
        check_output(own, option="--output")
        rewrites(own)
        note_read(own)  # the resume reads it ...
        atomic_write_bytes(own, b"new")  # ... and the run replaces it
    release_outputs()
    assert own.read_bytes() == b"new" and other.read_bytes() == b"theirs"


def test_output_files_checks_every_file_of_the_folder(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.json").mkdir()
    try:
        with pytest.raises(SimschedError, match="report.json: is a directory"):
            output_files(tmp_path / "out", ("rl.pt", "report.json"), option="--output")
        (tmp_path / "file").write_text("x")
        with pytest.raises(SimschedError, match="is a file, not a directory"):
            output_files(tmp_path / "file", ("rl.pt",), option="-o")
    finally:
        release_outputs()


# ------------------------------------------------------------------ the commands
def test_generalise_html_onto_a_job_file_of_the_stream_is_refused(stream: Path) -> None:
    jobs = stream.parent / "jobs.json"
    link = stream.parent / "page.html"
    link.symlink_to(jobs)
    refused(["generalise", str(stream), "-s", "mct", "--days", "2", "--cell", "2x jobs", "--html", str(link)],
            inputs=(jobs, stream), says="--html")


def test_capacity_plot_onto_a_file_the_scenario_reads_is_refused(stream: Path) -> None:
    jobs = stream.parent / "jobs.json"
    link = stream.parent / "plot.png"
    os.link(jobs, link)
    refused(["capacity", str(stream), "--objective", "makespan <= 1000", "--days", "1", "--plot", str(link)],
            inputs=(jobs, stream), says="--plot")


def _rl_scenario(tmp_path: Path, checkpoint: str = "rl_dynamic") -> Path:
    text = (ROOT / "scenarios" / "streams" / "rl_dynamic.yaml").read_text()
    text = text.replace("../data/", f"{ROOT / 'scenarios' / 'data'}/").replace("checkpoint: rl_dynamic",
                                                                              f"checkpoint: {checkpoint}")
    scenario = tmp_path / "rl.yaml"
    scenario.write_text(text)
    return scenario


def test_train_rl_never_replaces_an_earlier_training_without_resume(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    scenario = _rl_scenario(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(CHECKPOINT, out / "rl.pt")
    line = refused(["train", "rl", str(scenario), "-o", str(out), "--budget-min", "0.01"], inputs=(out / "rl.pt",),
                   says="--output: ")
    assert "--resume" in line and "rl.pt" in line


def test_train_rl_resume_refuses_a_checkpoint_the_scenario_reads(tmp_path: Path) -> None:
    """The scenario names OUT/rl.pt as a scheduler's checkpoint: resuming would replace what it reads."""
    pytest.importorskip("torch")
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(CHECKPOINT, out / "rl.pt")
    scenario = _rl_scenario(tmp_path, str(out / "rl.pt"))
    line = refused(["train", "rl", str(scenario), "-o", str(out), "--resume", "--budget-min", "0.01"],
                   inputs=(out / "rl.pt", scenario), says="--output")
    assert "is the input file" in line


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_train_rl_resume_names_what_is_in_place_of_the_checkpoint(tmp_path: Path, kind: str) -> None:
    pytest.importorskip("torch")
    scenario = _rl_scenario(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    if kind == "fifo":
        os.mkfifo(out / "rl.pt")
    else:
        (out / "rl.pt").mkdir()
    line = refused(["train", "rl", str(scenario), "-o", str(out), "--resume", "--budget-min", "0.01"],
                   says="--resume")
    assert ("FIFO" in line) if kind == "fifo" else ("is a directory" in line)


@pytest.mark.parametrize("command", [["simsched.learned.rl.worlds", "train"], ["simsched.learned.rl.worlds", "cem"],
                                     ["simsched.learned.rl.budget", "worlds"]])
def test_the_learned_command_lines_refuse_an_existing_file_as_their_folder(tmp_path: Path,
                                                                          command: list[str]) -> None:
    target = tmp_path / "existing"
    target.write_text("keep me")
    before = digest(target)
    r = subprocess.run([sys.executable, "-m", *command, "-o", str(target)], capture_output=True, text=True,
                       timeout=300, cwd=ROOT)
    out = (r.stdout + r.stderr).strip().splitlines()
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert out == [f"error: -o {target}: is a file, not a directory; give a directory"], out
    assert digest(target) == before
