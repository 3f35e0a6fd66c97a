"""Which runs a fidelity table scores as held out: the profile's own split, wherever the runs are read from.

A profile calibrated on every run of one folder (``calibrate --no-split``) predicts runs brought later
from another: those are held out, a copy of a run it was trained on is not.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
import yaml
from helpers import wfformat_chain as chain
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.fidelity import HELD_OUT, TRAIN, read_corpus, read_profile
from simsched.fidelity.ask import calibrate_corpus, fidelity_of
from simsched.fidelity.extent import below, beyond, features, kind, training_range
from simsched.fidelity.profile import write_profile

runner = CliRunner()
FIXED = ("runtime_factor=1,1", "submit=0,0", "dispatch_interval=0,0", "dispatch_per_queued=0,0", "cycle=0,0",
         "post=0,0", "startup=0,0", "pre=0,20")


def _chains(folder: Path, lengths: list[int], per_task: float) -> Path:
    """Chains of 10 s tasks on one machine, each recorded at n x (10 + per_task) seconds."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, n in enumerate(lengths):
        chain(folder / f"chain{n}-{i:03d}.json", [10.0] * n, n * (10.0 + per_task))
    return folder


def test_without_a_split_every_run_trains_but_the_applications_held_out(tmp_path: Path) -> None:
    folder = _chains(tmp_path / "a", [2, 3, 4, 5], 5.0)
    assert {e.part for e in read_corpus([folder], seed=3).executions} == {TRAIN, HELD_OUT}
    assert [e.part for e in read_corpus([folder], seed=3, split_runs=False).executions] == [TRAIN] * 4
    corpus = read_corpus([folder], split_runs=False, hold_out=["chain4"])
    assert {e.application: e.part for e in corpus.executions} == {"chain2": TRAIN, "chain3": TRAIN,
                                                                  "chain4": HELD_OUT, "chain5": TRAIN}


def test_a_profile_of_all_the_runs_of_one_folder_predicts_the_runs_of_another(tmp_path: Path) -> None:
    # trained on chains of 2 and 3 tasks recorded with 5 s of pre-execution per task; the longer chains
    # of the other folder, never seen, take exactly n x 15 s: the calibrated model predicts them
    past = _chains(tmp_path / "past", [2, 3, 2, 3], 5.0)
    done = calibrate_corpus([past], budget_s=8.0, seed=1, bounds=FIXED, split_runs=False)
    [entry] = done.calibrations
    assert entry.parameters.pre == pytest.approx(5.0, abs=0.05)
    assert len(entry.train) == 4
    profile = tmp_path / "p.yaml"
    write_profile(profile, done.calibrations, done.corpus, budget_s=20.0, prior=0.0, search="cma",
                  regression=True)
    new = _chains(tmp_path / "new" / "later", [6, 8, 10], 5.0)
    shutil.copy(past / "chain2-000.json", new / "chain2-000.json")  # a run it was trained on, moved
    table = fidelity_of([tmp_path / "new"], profile=profile)
    parts = {r.name.split("/")[-1]: r.part for r in table.rows}
    assert parts == {"chain2-000.json": TRAIN, "chain6-000.json": HELD_OUT, "chain8-001.json": HELD_OUT,
                     "chain10-002.json": HELD_OUT}
    for r in table.rows:
        assert r.simulated[-1] == pytest.approx(r.recorded, rel=0.01)
    [whole] = [g for g in table.groups if g.kind == "all"]
    assert whole.runs == 3


def test_calibrate_no_split_on_the_command_line(tmp_path: Path) -> None:
    past = _chains(tmp_path / "past", [2, 3, 4], 5.0)
    profile = tmp_path / "p.yaml"
    args = ["calibrate", str(past), "-o", str(profile), "--budget", "3", "--no-split", "--per-installation"]
    for bound in FIXED:
        args += ["--bound", bound]
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    assert sorted(read_profile(profile).train) == ["chain2-000.json", "chain3-001.json", "chain4-002.json"]
    shown = runner.invoke(app, ["fidelity", str(_chains(tmp_path / "new", [7], 5.0)), "--profile", str(profile)])
    assert shown.exit_code == 0, shown.output
    assert "1 held out, 0 trained on" in " ".join(shown.stdout.split())


def test_a_run_is_known_by_its_content_and_an_older_profile_by_its_file_name(tmp_path: Path) -> None:
    past = _chains(tmp_path / "past", [2, 3], 5.0)
    profile = tmp_path / "p.yaml"
    done = calibrate_corpus([past], budget_s=2.0, seed=1, bounds=FIXED, split_runs=False)
    write_profile(profile, done.calibrations, done.corpus, budget_s=2.0)
    assert len(read_profile(profile).entries[0].train_sha256) == 2
    new = tmp_path / "new"
    _chains(new, [4, 3], 5.0)  # chain3-001.json: the name of a training run, another run (4 -> 3 tasks moved)
    (new / "chain4-000.json").rename(new / "chain2-000.json")
    by_digest = {r.name: r.part for r in fidelity_of([new], profile=profile).rows}
    assert by_digest == {"chain2-000.json": HELD_OUT, "chain3-001.json": TRAIN}  # chain3-001 is the same file
    text = profile.read_text()
    older = tmp_path / "older.yaml"
    older.write_text("\n".join(line for line in text.splitlines() if "train_sha256" not in line) + "\n")
    assert read_profile(older).entries[0].train_sha256 == ()
    by_name = {r.name: r.part for r in fidelity_of([new], profile=older).rows}
    assert by_name == {"chain2-000.json": TRAIN, "chain3-001.json": TRAIN}


# ------------------------------------------------------------------------------------ the training range
def test_the_features_of_a_chain_by_hand(tmp_path: Path) -> None:
    [e] = read_corpus([chain(tmp_path / "c-1.json", [3.0, 4.0, 5.0], 20.0)]).executions
    assert features(e) == {"tasks": 3.0, "levels": 3.0, "critical_path_s": 12.0, "work_s": 12.0, "bytes": 0.0,
                           "work_per_task_s": 4.0, "bytes_per_task": 0.0}
    assert training_range([e, e]) == {f: (v, v) for f, v in features(e).items()}
    assert training_range([]) == {}


def test_beyond_is_outside_the_range_by_more_than_the_slack() -> None:
    span = {"tasks": (2.0, 4.0), "bytes": (0.0, 0.0)}
    assert beyond({"tasks": 5.0, "bytes": 0.0}, span) == ()  # 4 x 1.25
    assert beyond({"tasks": 1.6, "bytes": 0.0}, span) == ()  # 2 / 1.25
    assert beyond({"tasks": 5.01, "bytes": 1.0}, span) == ("tasks", "bytes")
    assert beyond({"tasks": 1.5}, span) == ("tasks",)
    assert beyond({"levels": 99.0}, span) == ()  # what the range does not hold is not judged
    assert beyond({"tasks": 3.0}, span, slack=1.0) == ()
    assert below({"tasks": 1.5, "bytes": 1.0}, span) == ("tasks",)  # bytes lie above, not below


def test_the_kind_of_a_run_beyond_its_range_says_which_way() -> None:
    assert kind(()) == "within"
    assert kind(("tasks", "work_s")) == "larger"
    assert kind(("tasks", "work_s"), ("tasks", "work_s")) == "smaller"
    assert kind(("tasks", "bytes"), ("bytes",)) == "another size"  # more tasks, fewer bytes
    assert kind(("tasks", "bytes_per_task"), ("tasks",)) == "another shape"


def test_fidelity_flags_the_runs_beyond_their_training_range(tmp_path: Path) -> None:
    past = _chains(tmp_path / "past", [2, 3, 2, 3], 5.0)
    profile = tmp_path / "p.yaml"
    done = calibrate_corpus([past], budget_s=2.0, seed=1, bounds=FIXED, split_runs=False)
    write_profile(profile, done.calibrations, done.corpus, budget_s=2.0)
    span = read_profile(profile).entries[0].train_range
    assert span == {"tasks": (2.0, 3.0), "levels": (2.0, 3.0), "critical_path_s": (20.0, 30.0),
                    "work_s": (20.0, 30.0), "bytes": (0.0, 0.0), "work_per_task_s": (10.0, 10.0),
                    "bytes_per_task": (0.0, 0.0)}
    # another chain3 (7 s per task: not a training file), a longer chain of the same tasks, and a chain
    # of three tasks five times as long: the same size of run, another shape
    new = _chains(tmp_path / "new", [3, 8], 7.0)
    chain(new / "long-002.json", [50.0] * 3, 160.0)
    table = fidelity_of([new], profile=profile)
    size = ("tasks", "levels", "critical_path_s", "work_s")
    assert {r.name: r.beyond for r in table.rows} == {
        "chain3-000.json": (), "chain8-001.json": size,
        "long-002.json": ("critical_path_s", "work_s", "work_per_task_s")}
    assert [kind(r.beyond, r.below) for r in table.rows] == ["within", "larger", "another shape"]
    shown = runner.invoke(app, ["fidelity", str(new), "--profile", str(profile), "--json", str(tmp_path / "f.json")])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    assert "│ within │ 1 │" in text and "│ larger │ 1 │" in text and "│ another shape │ 1 │" in text
    assert "tasks 1, levels 1, critical path 1, work 1" in text and "critical path 1, work 1, work per task 1" in text
    rows = {r["execution"]: r["beyond_training_range"] for r in json.loads((tmp_path / "f.json").read_text())[
        "executions"]}
    assert rows["chain3-000.json"] == [] and rows["chain8-001.json"] == list(size)


# ------------------------------------------------------------------------ intervals from the profile
def _noisy_chains(folder: Path, spread: list[float]) -> Path:
    """Chains of three 10 s tasks recorded at 45 s times a factor each (repeats that differ)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, f in enumerate(spread):
        chain(folder / f"noisy-{i:03d}.json", [10.0] * 3, 45.0 * f)
    return folder


def test_intervals_come_from_the_profile_when_the_training_runs_are_elsewhere(tmp_path: Path) -> None:
    both = _noisy_chains(tmp_path / "both", [0.9, 1.0, 1.1, 1.2, 0.8, 1.05, 0.95, 1.15, 1.0, 0.85])
    done = calibrate_corpus([both], budget_s=3.0, seed=2, bounds=FIXED)
    [unit] = done.calibrations
    assert len(unit.train_errors) == len(unit.train) == 5
    profile, older = tmp_path / "p.yaml", tmp_path / "older.yaml"
    write_profile(profile, done.calibrations, done.corpus, budget_s=3.0)
    doc = yaml.safe_load(profile.read_text())  # a profile written before it recorded the training errors
    for entry in doc["installations"]:
        del entry["train_errors"]
    older.write_text(yaml.safe_dump(doc, sort_keys=False))
    # the same corpus: the recorded errors are the training rows' errors, to the bit
    [a] = fidelity_of([both], profile=profile).intervals
    [b] = fidelity_of([both], profile=older).intervals
    assert a == b and a.train_runs == 5 and math.isfinite(a.radius)
    # the held-out runs alone, in another folder: the interval is still there, the same one
    later = tmp_path / "later"
    later.mkdir()
    for r in fidelity_of([both], profile=profile).rows:
        if r.part == HELD_OUT:
            shutil.copy(both / r.name, later / r.name)
    [c] = fidelity_of([later], profile=profile).intervals
    assert c == a
    [d] = fidelity_of([later], profile=older).intervals
    assert d.train_runs == 0 and d.radius == math.inf


# ------------------------------------------------------------- what the profile records, tampered with
@pytest.mark.parametrize(("key", "value", "says"), [
    ("train_sha256", "[abc, abc]", "train_sha256[0]: must be a SHA-256 digest"),
    ("train_sha256", "[]", "must be a list of 2 SHA-256 digests"),
    ("train_range", "{tasks: [5, 1]}", "train_range.tasks: must be [lowest, highest] with 0 <= lowest <= highest"),
    ("train_range", "{tasks: [1]}", "train_range.tasks: must be [lowest, highest]"),
    ("train_range", "{task: [1, 2]}", "train_range.task: unknown feature (did you mean 'tasks'?)"),
    ("train_range", "{bytes: [0, .nan]}", "train_range.bytes[1]: must be a finite number"),
    ("train_range", "[1, 2]", "train_range: must be a mapping of tasks, levels"),
    ("train_errors", "[0.1]", "must be a list of 2 numbers >= 0"),
    ("train_errors", "[0.1, -0.2]", "train_errors[1]: must be >= 0"),
    ("train_errors", "[0.1, .inf]", "train_errors[1]: must be a finite number"),
    ("train_mix", "[[0.1, 1, 0, 0, 0]]", "train_mix: must be a list of 2 rows of 5 numbers"),
    ("train_mix", "[[0.1, 1, 0, 0], [0.1, 1, 0, 0, 0]]", "train_mix[0]: must be a list of 5 numbers"),
    ("train_mix", "[[0.1, 1, 0, 0, 0], [0.1, -1, 0, 0, 0]]", "train_mix[1]: must be >= 0, the first > 0"),
    ("train_mix", "[[0, 1, 0, 0, 0], [0.1, 1, 0, 0, 0]]", "train_mix[0]: must be >= 0, the first > 0"),
    ("train_mix", "[[0.1, 1, 0, 0, 0], [0.1, 1, 0, 0, x]]", "train_mix[1][4]: must be a finite number")])
def test_a_tampered_record_of_the_training_runs_is_refused_with_its_line(tmp_path: Path, key: str, value: str,
                                                                         says: str) -> None:
    past = _chains(tmp_path / "past", [2, 3], 5.0)
    profile = tmp_path / "p.yaml"
    done = calibrate_corpus([past], budget_s=1.0, seed=1, bounds=FIXED, split_runs=False)
    write_profile(profile, done.calibrations, done.corpus, budget_s=1.0)
    lines = profile.read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if f"{key}:" in line)
    j, indent = i + 1, len(lines[i]) - len(lines[i].lstrip())
    while j < len(lines) and (len(lines[j]) - len(lines[j].lstrip()) > indent
                              or lines[j].startswith(" " * indent + "- ")):
        j += 1  # the value's own lines (a block mapping, a wrapped list, a block list's items)
    lines[i:j] = [f"{lines[i].split(f'{key}:')[0]}{key}: {value}"]
    profile.write_text("\n".join(lines) + "\n")
    shown = runner.invoke(app, ["fidelity", str(past), "--profile", str(profile)])
    assert shown.exit_code == 2, shown.output
    assert f"p.yaml:{i + 1}" in shown.output and says in shown.output and "Traceback" not in shown.output
