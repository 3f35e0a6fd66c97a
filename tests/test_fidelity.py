"""simsched.fidelity: the corpus and its split, the model of a recorded run, calibration, the profile,
the fidelity table, and the `calibrate` / `fidelity` commands end to end (with bad input)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import wfformat_chain as chain
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import SimschedError
from simsched.fidelity import (
    HELD_OUT,
    TRAIN,
    Parameters,
    calibrate,
    fidelity_table,
    read_corpus,
    read_profile,
    simulate,
    split,
    write_profile,
)
from simsched.fidelity.calibrate import Bound, bounds_for, parse_bounds
from simsched.fidelity.corpus import SPLITS, find_instances
from simsched.fidelity.model import build_problem, documented_defaults, task_io
from simsched.fidelity.table import start_error
from simsched.workloads.importers.wfformat_recorded import read_recorded

DATA = Path(__file__).parent / "data"
REAL = DATA / "wfinstances"
HAND = DATA / "wfformat" / "recorded_1.5.json"
runner = CliRunner()


def fan(path: Path, runtimes: list[float], makespan: float, *, machine: str = "m1", cores: int = 4) -> Path:
    """A WfFormat 1.5 set of independent tasks on one machine."""
    ids = [f"w_ID{i:02d}" for i in range(len(runtimes))]
    tasks = [{"name": "w", "id": t, "parents": [], "children": [], "inputFiles": [], "outputFiles": []} for t in ids]
    doc = {"name": path.stem, "schemaVersion": "1.5", "runtimeSystem": {"name": "Makeflow", "version": "7"},
           "workflow": {"specification": {"tasks": tasks, "files": []},
                        "execution": {"makespanInSeconds": makespan,
                                      "machines": [{"nodeName": machine, "cpu": {"coreCount": cores}}],
                                      "tasks": [{"id": t, "runtimeInSeconds": r, "machines": [machine]}
                                                for t, r in zip(ids, runtimes)]}}}
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture
def twice(tmp_path: Path) -> Path:
    """The three shipped executions, each under two names: three installations of two runs."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    for f in sorted(REAL.glob("*.json")):
        shutil.copy(f, folder / f.name)
        again = folder / f.name.replace("-001", "-002")
        doc = json.loads(f.read_text())
        doc["name"] = again.stem  # another file (a profile knows runs by content): the same run again
        again.write_text(json.dumps(doc))
    return folder


# ----------------------------------------------------------------------------------------------- corpus
@pytest.mark.parametrize("kind", SPLITS)
def test_split_is_seeded_balanced_and_per_application(kind: str) -> None:
    names = [f"app{a}-{i}.json" for a in "ab" for i in range(5)] + ["solo-1.json"]
    apps = [n.split("-")[0] for n in names]
    parts = split(names, apps, seed=3, kind=kind)
    assert parts == split(names, apps, seed=3, kind=kind)
    for a in ("appa", "appb"):
        mine = [p for p, x in zip(parts, apps) if x == a]
        assert {TRAIN, HELD_OUT} <= set(mine)
    assert abs(parts.count(HELD_OUT) - len(names) / 2) <= 1
    assert any(split(names, apps, seed=s, kind=kind) != parts for s in range(4, 10))
    for seed in range(20):
        assert split(["a-1.json"], ["a"], seed, kind=kind) == [TRAIN]
        assert sorted(split(["a-1.json", "a-2.json"], ["a", "a"], seed, kind=kind)) == [HELD_OUT, TRAIN]
        assert sorted(split(["a-1.json", "b-1.json"], ["a", "b"], seed, kind=kind)) == [HELD_OUT, TRAIN]


def test_the_alternate_split_carries_its_phase_and_the_default_does_not() -> None:
    names = ["a-1.json", "a-2.json", "a-3.json", "b-1.json", "b-2.json", "c-1.json"]
    apps = [n.split("-")[0] for n in names]
    grown = ([*names, "a-4.json"], [*apps, "a"])
    # alternate: a run added to the first application flips every run after it
    before, after = split(names, apps, 1, kind="alternate"), split(*grown, 1, kind="alternate")
    assert after[3:6] == [{TRAIN: HELD_OUT, HELD_OUT: TRAIN}[p] for p in before[3:6]]
    before, after = split(names, apps, 1), split(*grown, 1)
    assert after[3:6] == before[3:6]
    # one run per application: the alternate split is the same whatever the seed, the default is not
    solos = [f"{a}-1.json" for a in "abcdefgh"]
    alone = [n.split("-")[0] for n in solos]
    assert len({tuple(split(solos, alone, s, kind="alternate")) for s in range(10)}) == 1
    assert len({tuple(split(solos, alone, s)) for s in range(10)}) > 5


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcdef"), st.integers(0, 30)), min_size=1, max_size=25, unique=True),
       st.sampled_from("abcdef"), st.integers(0, 1000), st.integers(0, 2**31))
def test_a_run_added_to_one_application_moves_no_run_of_another(runs: list[tuple[str, int]], app: str, number: int,
                                                                 seed: int) -> None:
    names = [f"{a}-{i}.json" for a, i in runs]
    apps = [a for a, _ in runs]
    name = f"{app}-{1000 + number}.json"
    before, after = split(names, apps, seed), split([*names, name], [*apps, app], seed)
    singles_move = apps.count(app) <= 1  # a new single-run application, or a single one no more
    for i, a in enumerate(apps):
        if a != app and (apps.count(a) > 1 or not singles_move) and len(names) > 1:
            assert after[i] == before[i], (a, names[i])
    for a in set(apps) | {app}:
        mine = [p for p, x in zip(after, [*apps, app]) if x == a]
        if len(mine) >= 2:
            assert {TRAIN, HELD_OUT} <= set(mine)
    assert TRAIN in after and HELD_OUT in after
    held = after.count(HELD_OUT)  # balanced: each alternation leaves at most one run more in a part
    assert abs(held - len(after) / 2) <= (len(set(apps) | {app}) + 1) / 2


def test_read_corpus_groups_installations_and_splits_them(twice: Path) -> None:
    corpus = read_corpus([twice])
    groups = corpus.installations()
    assert sorted(groups) == ["makeflow@worker-1.novalocal+1", "nextflow@dirt02", "pegasus@worker-4"]
    for runs in groups.values():
        assert sorted(e.part for e in runs) == [HELD_OUT, TRAIN]
    assert {e.application for e in corpus.executions} == {"bacass", "blast", "srasearch"}
    assert corpus.select("nextflow@dirt02").executions[0].wms == "nextflow"
    with pytest.raises(SimschedError, match="no installation 'x'.*there are: "):
        corpus.select("x")


def test_finding_instances_refuses_what_is_not_there(tmp_path: Path) -> None:
    with pytest.raises(SimschedError, match="no such file or folder"):
        find_instances([tmp_path / "nope"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(SimschedError, match=r"no WfFormat instance \(\*\.json\) in this folder"):
        find_instances([tmp_path / "empty"])


def test_a_bad_instance_stops_the_reading_unless_skipped(tmp_path: Path) -> None:
    chain(tmp_path / "good-1.json", [1.0, 2.0], 5.0)
    (tmp_path / "bad-1.json").write_text('{"schemaVersion": "1.5", "workflow": {}}')
    with pytest.raises(SimschedError) as exc:
        read_corpus([tmp_path])
    assert exc.value.file is not None and "bad-1.json" in exc.value.file
    corpus = read_corpus([tmp_path], skip_refused=True)
    assert [e.name for e in corpus.executions] == ["good-1.json"]
    assert corpus.refused[0][0] == "bad-1.json"


# ------------------------------------------------------------------------------------------------ model
def test_a_recorded_chain_replays_its_runtimes(tmp_path: Path) -> None:
    graph, run = read_recorded(chain(tmp_path / "c-1.json", [3.0, 4.0, 5.0], 20.0))
    assert simulate(graph, run, Parameters()).makespan == 12.0
    assert simulate(graph, run, Parameters(runtime_factor=2.0)).makespan == 24.0


def test_slots_bound_the_concurrency_of_a_host(tmp_path: Path) -> None:
    graph, run = read_recorded(fan(tmp_path / "f-1.json", [10.0] * 6, 40.0, cores=4))
    assert simulate(graph, run, Parameters()).makespan == 20.0  # 4 slots: 4 then 2
    assert simulate(graph, run, Parameters(slots=2)).makespan == 30.0
    assert simulate(graph, run, Parameters(slots=1)).makespan == 60.0
    assert simulate(graph, run, Parameters(slots=9)).makespan == 20.0  # at most the machine's cores
    problem = build_problem(graph, run, Parameters(slots=3))
    assert problem.platform.names == ["m1/c0", "m1/c1", "m1/c2"]
    assert {p.host for p in problem.platform.processors} == {"m1"}


def test_the_hand_written_fork_join_with_a_two_core_task() -> None:
    graph, run = read_recorded(HAND)
    sim = simulate(graph, run, Parameters())
    # split 10 on n1; work_ID02 (2 cores) on n2 and work_ID03 on n1 from 10; merge on n2 at 30
    assert sim.makespan == 34.0
    assert sim.schedule.gang.of(1).size == 2
    hosts = [sim.problem.platform.processors[p].host for p in sim.schedule.processor.tolist()]
    assert hosts == ["n1", "n2", "n1", "n2"]
    # recorded starts 5, 16, 15, 37 after the workflow's start; simulated 0, 10, 10, 30
    assert start_error(run.start, sim) == (5.5, pytest.approx(6.85))
    assert simulate(graph, run, Parameters(slots=1)).schedule.gang is None  # one slot: cores capped to 1


def test_parameters_are_checked() -> None:
    with pytest.raises(SimschedError, match="slots must be an integer >= 1"):
        Parameters(slots=0)
    with pytest.raises(SimschedError, match="the value must be finite and > 0, got nan"):
        Parameters(runtime_factor=float("nan"))


# ------------------------------------------------------------------------------------------ calibration
def test_calibration_fits_the_training_runs_only(tmp_path: Path) -> None:
    # one installation: the same fan of six 10 s tasks recorded at 30 s (two slots) four times
    for i in range(4):
        fan(tmp_path / f"fan-{i}.json", [10.0] * 6, 30.0, cores=8)
    corpus = read_corpus([tmp_path])
    fixed = {name: (0.0, 0.0) for name in ("submit", "dispatch_interval", "cycle", "pre", "post", "startup")}
    [result] = calibrate(corpus, budget_s=20.0, seed=1, bounds={"runtime_factor": (1.0, 1.0), **fixed})
    assert result.parameters.slots == 2 and result.parameters.pre == 0.0
    assert result.train_error == 0.0 < result.start_error
    assert set(result.train) == {e.name for e in corpus.executions if not e.held_out}
    table = fidelity_table(corpus)
    assert [g.runs for g in table.groups if g.kind == "all"] == [2]


def test_calibration_recovers_a_per_task_overhead_of_a_chain(tmp_path: Path) -> None:
    # a chain of three 10 s tasks recorded at 45 s: 5 s per task beyond the runtimes
    for i in range(2):
        chain(tmp_path / f"c-{i}.json", [10.0, 10.0, 10.0], 45.0)
    free = {"pre": (0.0, 20.0)}
    fixed = {name: (0.0, 0.0) for name in ("submit", "dispatch_interval", "cycle", "post", "startup")}
    [result] = calibrate(read_corpus([tmp_path]), budget_s=20.0, seed=2,
                         bounds={"runtime_factor": (1.0, 1.0), **fixed, **free})
    assert result.parameters.pre == pytest.approx(5.0, abs=0.05)
    assert result.train_error < 2e-3


def test_documented_defaults_and_overheads_in_the_model(tmp_path: Path) -> None:
    graph, run = read_recorded(chain(tmp_path / "c-1.json", [3.0, 4.0, 5.0], 100.0))
    # sum of runtimes + n x (submit + pre + post) + startup
    params = Parameters(submit=1.0, pre=2.0, post=0.5, startup=7.0)
    assert simulate(graph, run, params).makespan == pytest.approx(12.0 + 3 * 3.5 + 7.0)
    pegasus = documented_defaults("pegasus")
    assert (pegasus.submit, pegasus.pre, pegasus.post) == (13.5, 13.5, 13.5) and pegasus.slots is None
    assert documented_defaults("someone-else") == Parameters()


def test_storage_moves_the_recorded_files(tmp_path: Path) -> None:
    graph, run = read_recorded(HAND)
    io = task_io(run)
    assert io.size.sum() == 7e6 + 3e6 + 1e6 + 5e5 + 2.5e5 + 2e6
    # split's tracer measured 7 MB read and 4 MB written: those bytes move, not its declared files
    assert io.extra_read[0] == 7e6 and io.extra_write[0] == 4e6
    assert io.in_ptr[1] - io.in_ptr[0] == 0 and io.out_ptr[1] - io.out_ptr[0] == 0
    # a task the tracer did not measure reads its declared input files (and only those)
    unmeasured = [v for v in range(run.n_tasks) if np.isnan(run.read_bytes[v]) and run.inputs[v]]
    assert unmeasured
    for v in unmeasured:
        assert io.extra_read[v] == 0.0
        assert list(io.in_files[io.in_ptr[v]:io.in_ptr[v + 1]]) == list(run.inputs[v])
    slow = simulate(graph, run, Parameters(bandwidth=1e6))
    fast = simulate(graph, run, Parameters(bandwidth=1e12))
    assert slow.makespan > fast.makespan == pytest.approx(34.0, abs=1e-3)
    assert simulate(graph, run, Parameters()).makespan == 34.0


def test_calibration_refuses_a_zero_budget_empty_bounds_and_no_training_runs(tmp_path: Path) -> None:
    chain(tmp_path / "c-1.json", [1.0], 2.0)
    corpus = read_corpus([tmp_path])
    with pytest.raises(SimschedError, match="budget must be a finite number of CPU seconds > 0"):
        calibrate(corpus, budget_s=0)
    with pytest.raises(SimschedError, match=r"bounds \[3, 1\] are empty") as exc:
        calibrate(corpus, budget_s=1, bounds={"slots": (3, 1)})
    assert exc.value.field == "bound slots"
    with pytest.raises(SimschedError, match="hold no integer"):
        bounds_for(corpus.executions, {"slots": (1.2, 1.8)})
    with pytest.raises(SimschedError, match="unknown parameter 'slot'.*did you mean 'slots'"):
        parse_bounds(["slot=1,2"])
    with pytest.raises(SimschedError, match="write NAME=LOW,HIGH"):
        parse_bounds(["slots=1"])
    assert Bound(2, 2).fixed
    held = read_corpus([tmp_path])
    object.__setattr__(held.executions[0], "part", HELD_OUT)
    with pytest.raises(SimschedError, match="has no training run with a recorded makespan"):
        calibrate(held, budget_s=1)


def test_a_budget_stops_the_search_with_the_best_point_so_far(tmp_path: Path) -> None:
    for i in range(2):
        fan(tmp_path / f"fan-{i}.json", [10.0] * 6, 30.0, cores=8)
    [result] = calibrate(read_corpus([tmp_path]), budget_s=1e-9)
    assert result.stopped == "budget" and result.evaluations == 1
    assert result.parameters == Parameters() and result.train_error == result.start_error


def _two_applications(folder: Path) -> Path:
    """One installation, two applications: chains of three 10 s tasks recorded with 5 s per task beyond
    the runtimes (``a``, 45 s) and with 20 s per task (``b``, 90 s), four runs each."""
    folder.mkdir()
    for i in range(4):
        chain(folder / f"a-{i}.json", [10.0] * 3, 45.0)
        chain(folder / f"b-{i}.json", [10.0] * 3, 90.0)
    return folder


ONLY_PRE = {"runtime_factor": (1.0, 1.0), "pre": (0.0, 40.0),
            **{name: (0.0, 0.0) for name in ("submit", "dispatch_interval", "cycle", "post", "startup")}}


def test_each_application_is_refined_from_its_installation_point(tmp_path: Path) -> None:
    corpus = read_corpus([_two_applications(tmp_path / "corpus")])
    done = calibrate(corpus, budget_s=30.0, seed=3, bounds=ONLY_PRE, min_runs=2)
    assert [(c.installation, c.application) for c in done] == [(done[0].installation, None),
                                                             (done[0].installation, "a"), (done[0].installation, "b")]
    whole, a, b = (c.parameters.pre for c in done)
    assert 5.0 < whole < 20.0  # one point for both: between the two
    assert a == pytest.approx(5.0, abs=0.1) and b == pytest.approx(20.0, abs=0.1)
    assert done[1].train_error < 5e-3 and done[2].train_error < 5e-3 < done[0].train_error
    assert done[1].start == done[0].parameters  # refined from the installation's point
    path = write_profile(tmp_path / "p.yaml", done, corpus, budget_s=30.0)
    profile = read_profile(path)
    assert profile.entry_for("pegasus", ["m1"], "b").parameters.pre == b
    assert profile.entry_for("pegasus", ["m1"], "elsewhere").application is None  # falls back
    table = fidelity_table(corpus, profile=profile)
    [everything] = [g for g in table.groups if g.kind == "all"]
    assert everything.runs == 4 and everything.stats[-1].median < 5e-3  # held-out runs, calibrated
    # without refinements, one point for both applications
    [only] = calibrate(corpus, budget_s=10.0, seed=3, bounds=ONLY_PRE, per_application=False)
    assert only.application is None and only.train_error > 0.1


def test_an_application_held_out_whole_is_predicted_by_its_installation_point(tmp_path: Path) -> None:
    corpus = read_corpus([_two_applications(tmp_path / "corpus")], hold_out=["b"])
    assert all(e.held_out for e in corpus.executions if e.application == "b")
    assert sum(not e.held_out for e in corpus.executions) == 2
    [only] = calibrate(corpus, budget_s=10.0, seed=3, bounds=ONLY_PRE, min_runs=1)
    assert only.application is None and only.parameters.pre == pytest.approx(5.0, abs=0.1)
    path = write_profile(tmp_path / "p.yaml", [only], corpus, budget_s=10.0)
    assert read_profile(path).hold_out == ("b",)
    shown = runner.invoke(app, ["fidelity", str(tmp_path / "corpus"), "--profile", str(path), "--json",
                                str(tmp_path / "f.json")])
    assert shown.exit_code == 0, shown.output
    rows = json.loads((tmp_path / "f.json").read_text())["executions"]
    b_rows = [r for r in rows if r["application"] == "b"]
    assert len(b_rows) == 4 and all(r["part"] == "held-out" for r in b_rows)
    # b's 20 s per task predicted with a's 5 s: (30 + 15) / 90 - 1
    assert all(r["relative_error"]["calibrated"] == pytest.approx(-0.5, abs=0.01) for r in b_rows)
    with pytest.raises(SimschedError, match="no application 'c' in the corpus") as exc:
        read_corpus([tmp_path / "corpus"], hold_out=["c"])
    assert exc.value.field == "--hold-out"
    with pytest.raises(SimschedError, match="every run is held out"):
        calibrate(read_corpus([tmp_path / "corpus"], hold_out=["a", "b"]), budget_s=1.0)


def test_a_refinement_without_its_installation_entry_is_refused(tmp_path: Path) -> None:
    corpus = read_corpus([_two_applications(tmp_path / "corpus")])
    done = calibrate(corpus, budget_s=2.0, seed=3, bounds=ONLY_PRE, min_runs=2)
    text = write_profile(tmp_path / "p.yaml", done[1:], corpus, budget_s=2.0).read_text()
    line = 1 + next(i for i, t in enumerate(text.splitlines()) if "application: a" in t)
    with pytest.raises(SimschedError, match="no entry of its installation to fall back on") as exc:
        read_profile(tmp_path / "p.yaml")
    assert exc.value.line == line and exc.value.field == "installations[0].application"


# ------------------------------------------------------------------------------------------------ profile
def test_a_profile_reads_back_what_was_written(twice: Path, tmp_path: Path) -> None:
    corpus = read_corpus([twice])
    done = calibrate(corpus, budget_s=1.0)
    path = write_profile(tmp_path / "p.yaml", done, corpus, budget_s=1.0)
    profile = read_profile(path)
    assert [e.parameters for e in profile.entries] == [c.parameters for c in done]
    assert profile.train == {name for c in done for name in c.train}
    entry = profile.entry_for("nextflow", ["dirt02"])
    assert entry is not None and entry.installation == "nextflow@dirt02"
    assert profile.entry_for("nextflow", ["elsewhere"]) is None


@pytest.mark.parametrize("find, old, new, message, field", [
    ("runtime_factor: ", r"runtime_factor: [0-9.e+-]+", "runtime_factor: .nan", "must be a finite number, got nan",
     "installations[0].parameters.runtime_factor"),
    ("slots: ", "slots: 1", "slots: 0", "must be a whole number >= 1", "installations[0].parameters.slots"),
    ("installation: ", "dirt02", "dirt03", "is not the installation of nextflow on these",
     "installations[0].installation"),
    ("simsched_profile: ", "1", "2", "not a simsched profile", "simsched_profile"),
    ("  stopped:", "stopped", "stoped", "unknown field", "installations[0].stoped"),
    ("split_kind: ", "per-application", "halves", "must be one of per-application, alternate", "split_kind"),
])
def test_a_tampered_profile_is_refused_with_its_line(twice: Path, tmp_path: Path, find: str, old: str, new: str,
                                                     message: str, field: str) -> None:
    import re

    corpus = read_corpus([twice]).select("nextflow@dirt02")
    path = write_profile(tmp_path / "p.yaml", calibrate(corpus, budget_s=0.5), corpus, budget_s=0.5)
    lines = path.read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if find in line)
    lines[i] = re.sub(old, new, lines[i], count=1)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SimschedError, match=message) as exc:
        read_profile(path)
    assert exc.value.line == i + 1 and exc.value.field == field


# ------------------------------------------------------------------------------------------ commands
def test_calibrate_then_fidelity_end_to_end(twice: Path, tmp_path: Path) -> None:
    profile, out_json, out_html = tmp_path / "p.yaml", tmp_path / "f.json", tmp_path / "f.html"
    done = runner.invoke(app, ["calibrate", str(twice), "-o", str(profile), "--budget", "2", "--seed", "0"])
    assert done.exit_code == 0, done.output
    assert "profile written to" in done.stdout and profile.exists()
    shown = runner.invoke(app, ["fidelity", str(twice), "--profile", str(profile), "--json", str(out_json),
                                "--html", str(out_html)])
    assert shown.exit_code == 0, shown.output
    assert "HELD-OUT" in shown.stdout and "calibrated" in shown.stdout
    assert max(len(line) for line in shown.stdout.splitlines() if line.startswith(("┃", "│"))) <= 100
    doc = json.loads(out_json.read_text())
    assert doc["models"] == ["today", "defaults", "calibrated"] and len(doc["executions"]) == 6
    held = [e for e in doc["executions"] if e["part"] == "held-out"]
    assert len(held) == 3 and {e["execution"] for e in held}.isdisjoint(read_profile(profile).train)
    page = out_html.read_text()
    assert page.count("<svg") == 1 + 3  # the scatter, one simulated Gantt per installation's first held-out run
    assert "recorded no task start times" in page


def test_fidelity_draws_the_recorded_gantt_where_starts_are_recorded(tmp_path: Path) -> None:
    out = tmp_path / "f.html"
    shown = runner.invoke(app, ["fidelity", str(HAND), "--html", str(out), "--gantt", HAND.name, "--wide"])
    assert shown.exit_code == 0, shown.output
    page = out.read_text()
    assert "recorded</text>" in page and "simulated (defaults)" in page
    assert "5.5/6.8" in shown.stdout  # the start-time error, median/p95 in seconds


@pytest.mark.parametrize("args, message", [
    (["calibrate", "{corpus}", "-o", "{out}", "--budget", "0"],
     "--budget: the budget must be a finite number of CPU seconds > 0"),
    (["calibrate", "{corpus}", "-o", "{out}", "--bound", "slots=4,1"], "bound slots: bounds [4, 1] are empty"),
    (["calibrate", "{corpus}", "-o", "{out}", "--bound", "dispatch_per_queued=-1,0.01"],
     "bound dispatch_per_queued: bounds [-1, 0.01] must be >= 0"),
    (["calibrate", "{corpus}", "-o", "{out}", "--bound", "runtime_factor=0,2"],
     "bound runtime_factor: bounds [0, 2] must be > 0"),
    (["calibrate", "{empty}", "-o", "{out}"], "no WfFormat instance (*.json) in this folder"),
    (["calibrate", "{corpus}", "-o", "{out}", "--installation", "nope"], "--installation: no installation 'nope'"),
    (["calibrate", "{corpus}", "-o", "{out}", "--search", "bayes"], "--search: must be one of cma, de, got 'bayes'"),
    (["calibrate", "{corpus}", "-o", "{out}", "--evaluations", "0"], "--evaluations: must be a whole number >= 1"),
    (["fidelity", "{corpus}", "--json", "{out}", "--scheduler", "heft"], "'heft' is not an online policy"),
    (["fidelity", "{corpus}", "--html", "{out}", "--gantt", "nope.json"], "no execution 'nope.json' in the corpus"),
])
def test_bad_input_is_one_located_line_exit_2_and_nothing_written(twice: Path, tmp_path: Path, args: list[str],
                                                                   message: str) -> None:
    (tmp_path / "empty").mkdir()
    out = tmp_path / ("out.yaml" if args[0] == "calibrate" else "out.json" if "--json" in args else "out.html")
    filled = [a.format(corpus=twice, out=out, empty=tmp_path / "empty") for a in args]
    result = runner.invoke(app, filled)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines
    assert not out.exists()


def test_an_output_onto_an_input_is_refused(twice: Path) -> None:
    target = next(twice.glob("*.json"))
    before = target.read_bytes()
    result = runner.invoke(app, ["fidelity", str(twice), "--json", str(target)])
    assert result.exit_code == 2 and "--json" in result.stderr and "is the input file" in result.stderr
    renamed = twice / "run.yaml"  # a file named on the command line is an instance whatever its name
    shutil.copy(target, renamed)
    result = runner.invoke(app, ["calibrate", str(renamed), "-o", str(renamed)])
    assert result.exit_code == 2 and "-o" in result.stderr and "is the input file" in result.stderr
    assert target.read_bytes() == before == renamed.read_bytes()


def test_a_tampered_profile_stops_fidelity_before_anything_is_written(twice: Path, tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    assert runner.invoke(app, ["calibrate", str(twice), "-o", str(profile), "--budget", "0.5"]).exit_code == 0
    profile.write_text(profile.read_text().replace("slots: ", "slots: -", 1))
    out = tmp_path / "f.json"
    result = runner.invoke(app, ["fidelity", str(twice), "--profile", str(profile), "--json", str(out)])
    assert result.exit_code == 2 and f"{profile}:" in result.stderr and "slots" in result.stderr
    assert not out.exists()


def test_the_whole_table_of_the_shipped_runs_under_today_model(twice: Path) -> None:
    table = fidelity_table(read_corpus([twice]))
    errors = {r.name: round(r.error(0), 3) for r in table.rows}
    assert errors["bacass-dirt02-001.json"] == round(3961.87 / 4243.0 - 1, 3)  # one core: the runtimes' sum
    assert all(s is None for r in table.rows for s in r.start_error)  # WfInstances records no task starts


def test_the_profile_platform_as_a_scenario_gives_the_model_makespan(tmp_path: Path) -> None:
    import yaml

    from simsched.fidelity.model import scenario_platform
    from simsched.schedulers.recorded import Recorded

    path = fan(tmp_path / "f-1.json", [10.0, 6.0, 7.0, 3.0, 9.0], 60.0, cores=8)
    graph, run = read_recorded(path)
    params = Parameters(slots=2, submit=1.0, dispatch_interval=0.5, pre=2.0, post=3.0, startup=4.0)
    expected = simulate(graph, run, params).makespan
    platform = scenario_platform(run.machines, params)
    assert platform["processors"] == [{"name": "m1", "cores": 2}]
    hosts = Recorded.from_run(run).hosts
    scenario = {"name": "replay", "platform": {**platform, "network": {"bandwidth": 1.0e9}},
                "workload": {"wfcommons": str(path)}, "schedulers": [{"name": "recorded", "hosts": hosts}]}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(scenario))
    out = tmp_path / "r.json"
    result = runner.invoke(app, ["run", str(tmp_path / "s.yaml"), "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["results"][0]["makespan"] == pytest.approx(expected)


def test_the_split_kind_is_checked_recorded_and_kept_by_fidelity(twice: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "p.yaml"
    bad = runner.invoke(app, ["calibrate", str(twice), "-o", str(out), "--budget", "1", "--split-kind", "halves"])
    assert bad.exit_code == 2 and "--split-kind: must be one of per-application, alternate" in bad.output
    assert not out.exists()
    done = runner.invoke(app, ["calibrate", str(twice), "-o", str(out), "--budget", "1", "--split-kind", "alternate"])
    assert done.exit_code == 0, done.output
    profile = read_profile(out)
    assert profile.split_kind == "alternate"
    # fidelity splits the installations the profile did not calibrate as the profile was split, and refuses another
    clash = runner.invoke(app, ["fidelity", str(twice), "--profile", str(out), "--split-kind", "per-application"])
    assert clash.exit_code == 2 and "leave --split-kind out" in clash.output
    # a profile written before the split was recorded is read as the alternate split
    older = tmp_path / "older.yaml"
    older.write_text("".join(line for line in out.read_text().splitlines(keepends=True) if "split_kind" not in line))
    assert read_profile(older).split_kind == "alternate"
