"""One test per class of bad input that used to crash, hang or pass silently: each is now exit 2 with
one line naming the file, the field and (where there is one) the line — or, for valid input, a run.
See simsched/limits.py for the limits and docs/architecture.md for the rule."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from simsched.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = "platform:\n  processors: [{name: P1}, {name: P2}]\n"


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout, result.stderr


def error_line(*args: str) -> str:
    """The single error line of a command that must fail with exit 2 (and print nothing on stdout)."""
    code, out, err = cli(*args)
    assert code == 2, (code, out, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- one validation path
def test_inline_workload_file_is_valid_for_validate_and_run(tmp_path: Path) -> None:
    write(tmp_path / "graph.yaml", "tasks:\n  - {name: a, work: 1}\n  - {name: b, work: 2}\nedges:\n"
                                   "  - {from: a, to: b, data: 1}\n")
    scenario = write(tmp_path / "s.yaml", PLATFORM + "workload: {inline: graph.yaml}\nschedulers: [heft]\n")
    code, out, _ = cli("validate", scenario)
    assert code == 0 and "inline file" in out
    assert cli("run", scenario)[0] == 0


def test_cycle_in_an_imported_file_names_that_file_and_its_line(tmp_path: Path) -> None:
    write(tmp_path / "graph.yaml", "tasks:\n  - {name: a, work: 1}\n  - {name: b, work: 2}\nedges:\n"
                                   "  - {from: a, to: b}\n  - {from: b, to: a}\n")
    scenario = write(tmp_path / "s.yaml", PLATFORM + "workload: {inline: graph.yaml}\nschedulers: [heft]\n")
    for command in ("validate", "run"):
        line = error_line(command, scenario)
        # a chain (issue 40): the scenario's line and field, then the imported file's own line
        assert line.startswith(f"error: {scenario}:3: workload.inline: {tmp_path / 'graph.yaml'}:6: edges[1]: "
                               f"the task graph has a cycle"), line


@settings(max_examples=25, deadline=None)
@given(speed=st.sampled_from([1, 0, -1, 1e31, ".inf", "fast"]), tasks=st.sampled_from([1, 5, 0, -3, 10**13]),
       sigma=st.sampled_from([0, 0.5, 10, 10.5, -1]), model=st.sampled_from(["none", "lognormal", "uniform"]),
       scheduler=st.sampled_from(["heft", "mct", "hfet", "cpop"]), count=st.sampled_from([None, 2, 0, 10**7]))
def test_validate_and_run_agree(tmp_path_factory: pytest.TempPathFactory, speed, tasks, sigma, model, scheduler,
                                count) -> None:
    """Property: for generated scenarios, validate's verdict is run's verdict."""
    proc = {"name": "P", "speed": speed, **({"count": count} if count is not None else {})}
    doc = {"platform": {"processors": [proc, {"name": "Q"}]},
           "workload": {"generator": "random", "tasks": tasks}, "noise": {"model": model, "sigma": sigma},
           "schedulers": [scheduler]}
    path = tmp_path_factory.mktemp("agree") / "s.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    assert cli("validate", path)[0] == cli("run", path)[0]


# --------------------------------------------------------------------------- deep and huge input
def test_deeply_nested_yaml_is_refused_not_a_segfault(tmp_path: Path) -> None:
    path = write(tmp_path / "deep.yaml", "a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    proc = subprocess.run([sys.executable, "-m", "simsched.cli.main", "validate", str(path)],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr[-500:]
    # refused on line 1, in one line: by our depth limit, or first by PyYAML's own (6.0.4 and later), in its words
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}:1: "), proc.stderr[-500:]


def test_deeply_nested_block_yaml_and_json_are_refused(tmp_path: Path) -> None:
    block = write(tmp_path / "block.yaml", "a:\n" + "".join("  " * i + "b:\n" for i in range(1, 300)))
    assert "nested more than 64 levels" in error_line("validate", block)
    deep = write(tmp_path / "deep.json", '{"tasks": ' + "[" * 50_000 + "]" * 50_000 + "}")
    assert error_line("workload", "info", deep, "--from", "tasklist").startswith(f"error: {deep}: the document is "
                                                                                  f"nested more than 64")


def test_huge_task_count_is_refused_before_allocating(tmp_path: Path) -> None:
    scenario = write(tmp_path / "s.yaml", PLATFORM + "workload:\n  generator: random\n  tasks: 1000000000000\n"
                                                     "schedulers: [heft]\n")
    line = error_line("validate", scenario)
    assert line.startswith(f"error: {scenario}:5: workload.tasks: 1,000,000,000,000 tasks is more than the "
                           f"limit of 2,000,000 (max_tasks;")


def test_huge_processor_count_and_matrix_memory_are_refused(tmp_path: Path) -> None:
    many = write(tmp_path / "many.yaml", "platform:\n  processors: [{name: P, count: 1000000}]\n"
                                         "workload: {generator: random, tasks: 10}\nschedulers: [heft]\n")
    assert error_line("run", many).startswith(f"error: {many}:2: platform.processors: 1,000,000 processors is more "
                                              f"than the limit of 2,000 (max_processors;")
    matrix = write(tmp_path / "matrix.yaml", "platform:\n  processors: [{name: P, count: 2000}]\n"
                                             "workload: {generator: random, tasks: 1000000}\nschedulers: [heft]\n")
    line = error_line("run", matrix)
    assert "1,000,000 tasks x 2,000 processors" in line and "needs about" in line and "max_memory_mb" in line


def test_a_scenario_limits_section_lowers_or_raises_a_limit(tmp_path: Path) -> None:
    base = PLATFORM + "workload: {generator: random, tasks: 50}\nschedulers: [heft]\n"
    low = write(tmp_path / "low.yaml", base + "limits: {max_tasks: 10}\n")
    assert "50 tasks is more than the limit of 10" in error_line("validate", low)
    high = write(tmp_path / "high.yaml", base.replace("tasks: 50", "tasks: 3000") + "limits: {max_tasks: 5000}\n")
    assert cli("validate", high)[0] == 0


def test_file_size_limit_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = write(tmp_path / "s.yaml", PLATFORM + "workload: {generator: random, tasks: 5}\nschedulers: [heft]\n"
                     + "# padding\n" * 200)
    monkeypatch.setenv("SIMSCHED_MAX_YAML_MB", "0.001")
    assert "more than the limit of 0.001 MB (max_yaml_mb" in error_line("validate", scenario)


def test_study_grid_too_large_is_refused_before_expansion(tmp_path: Path) -> None:
    write(tmp_path / "base.yaml", PLATFORM + "workload: {generator: random, tasks: 5}\nschedulers: [heft]\n")
    axes = "".join(f"  workload.p{i}: [{', '.join(map(str, range(10)))}]\n" for i in range(7))
    study = write(tmp_path / "study.yaml", "scenario: base.yaml\ngrid:\n" + axes)
    line = error_line("sweep", study, "-o", tmp_path / "out.csv")
    assert "10,000,000 runs" in line and "max_grid_points" in line
    assert not (tmp_path / "out.csv").exists()


# --------------------------------------------------------------------------- numbers that mean nothing
@pytest.mark.parametrize(("fragment", "field"), [
    ("  network: {bandwidth: 1, latency: .inf}\n", "platform.network.latency"),
    ("  network: {bandwidth: 1.0e-300}\n", "platform.network.bandwidth"),
])
def test_meaningless_platform_numbers(tmp_path: Path, fragment: str, field: str) -> None:
    scenario = write(tmp_path / "s.yaml", PLATFORM + fragment + "workload: {generator: random, tasks: 5}\n"
                                                               "schedulers: [heft]\n")
    assert error_line("validate", scenario).startswith(f"error: {scenario}:3: {field}: must be")
    assert error_line("run", scenario).startswith(f"error: {scenario}:3: {field}: must be")


def test_huge_sigma_and_huge_work_are_refused(tmp_path: Path) -> None:
    sigma = write(tmp_path / "sigma.yaml", PLATFORM + "workload: {generator: random, tasks: 5}\n"
                                                      "noise: {model: lognormal, sigma: 50}\nschedulers: [heft]\n")
    assert "lognormal noise needs sigma <= 10" in error_line("run", sigma)
    work = write(tmp_path / "work.yaml", PLATFORM + "workload:\n  tasks:\n    - {name: a, work: 1.0e+31}\n"
                                                    "schedulers: [heft]\n")
    assert error_line("run", work).startswith(f"error: {work}:5: workload.tasks[0].work: must be a finite number")


# --------------------------------------------------------------------------- the right file and line
def test_error_in_an_imported_csv_names_the_csv_line(tmp_path: Path) -> None:
    write(tmp_path / "w.csv", "name,work,cost_0,cost_1\na,1,1,2\nb,2,1,2\nc,3,inf,inf\n")
    scenario = write(tmp_path / "s.yaml", "# one\n# two\n# three\n# four\n# five\n" + PLATFORM
                     + "workload: {tasklist: w.csv}\nschedulers: [heft]\n")
    line = error_line("run", scenario)
    assert line.startswith(f"error: {scenario}:8: workload.tasklist: {tmp_path / 'w.csv'}:4: tasks[2]: task 'c' has "
                           f"an infinite cost"), line


def test_error_without_a_line_in_an_imported_file_is_at_the_scenario_field(tmp_path: Path) -> None:
    write(tmp_path / "w.csv", "name,work,cost_0,cost_1,cost_2\na,1,1,2,3\n")
    scenario = write(tmp_path / "s.yaml", PLATFORM + "workload: {tasklist: w.csv}\nschedulers: [heft]\n")
    assert error_line("validate", scenario).startswith(f"error: {scenario}:3: workload.tasklist: ")


def test_dot_cycle_names_the_dot_line(tmp_path: Path) -> None:
    pytest.importorskip("pydot")
    write(tmp_path / "g.dot", "digraph g {\n  a [work=1];\n  b [work=2];\n  a -> b;\n  b -> a;\n}\n")
    scenario = write(tmp_path / "s.yaml", PLATFORM + "workload: {dot: g.dot}\nschedulers: [heft]\n")
    assert error_line("validate", scenario).startswith(f"error: {scenario}:3: workload.dot: {tmp_path / 'g.dot'}:5: "
                                                       f"the task graph has a cycle")


def test_graphml_edge_to_a_missing_node_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "g.graphml", '<?xml version="1.0" encoding="UTF-8"?>\n'
                 '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
                 '  <graph id="G" edgedefault="directed">\n    <node id="a"/>\n    <node id="b"/>\n'
                 '    <edge source="a" target="b"/>\n    <edge source="b" target="zz"/>\n  </graph>\n</graphml>\n')
    assert error_line("workload", "info", path) == (f"error: {path}:7: edge 'b' -> 'zz': its target 'zz' is not a "
                                                    f"declared node")


# --------------------------------------------------------------------------- baselines
@pytest.fixture
def baseline_doc(tmp_path: Path) -> dict:
    write(tmp_path / "s.yaml", PLATFORM + "workload: {generator: random, tasks: 5}\nschedulers: [heft]\n")
    return {"format": "simsched-baseline", "version": 1, "simsched_version": "0.1.0",
            "metrics": {"makespan": "lower"},
            "scenarios": [{"path": "s.yaml", "name": "s", "seed": 0, "repetitions": 1,
                           "results": {"heft": {"makespan": [10.0]}}}]}


@pytest.mark.parametrize(("change", "expected"), [
    (lambda d: d["scenarios"][0]["results"]["heft"].update(makespan="NaN_TOKEN"), "NaN is not a number JSON allows"),
    (lambda d: d.update(version=7), "format version 7, written by a newer simsched"),
    (lambda d: d["metrics"].update(speediness="lower"), "unknown metric 'speediness'"),
    (lambda d: d["scenarios"][0].update(seed="zero"), "scenarios[0].seed: "),  # then pydantic's words
    (lambda d: d["scenarios"][0]["results"]["heft"].update(makespan=[1, "x"]), "results.heft.makespan[1]"),
])
def test_bad_baseline_files(tmp_path: Path, baseline_doc: dict, change, expected: str) -> None:
    doc = copy.deepcopy(baseline_doc)
    change(doc)
    text = json.dumps(doc, indent=1).replace('"NaN_TOKEN"', "[NaN]")
    path = write(tmp_path / "b.json", text)
    line = error_line("baseline", "compare", path)
    assert line.startswith(f"error: {path}") and expected in line, line


def test_good_baseline_file_is_accepted(tmp_path: Path, baseline_doc: dict) -> None:
    path = write(tmp_path / "b.json", json.dumps(baseline_doc))
    from simsched.testing.baseline import load_baseline

    assert load_baseline(path)["scenarios"][0]["seed"] == 0


# --------------------------------------------------------------------------- checkpoints
def _scenario_with(tmp_path: Path, scheduler: str, checkpoint: Path) -> Path:
    return write(tmp_path / "s.yaml", "platform:\n  processors: [{name: P, count: 3}]\n"
                                      "workload: {generator: random, tasks: 8}\n"
                                      f"schedulers: [{{name: {scheduler}, checkpoint: {checkpoint}}}]\n")


@pytest.mark.parametrize(("kind", "damage", "expected"), [
    ("rl", lambda ck: ck["state"].update(extra=ck["state"][next(iter(ck["state"]))]), "1 unexpected"),
    ("rl", lambda ck: ck["config"].update(ppo="big"), "config.ppo"),
    ("rl", lambda ck: ck.update(config=None), "no configuration mapping"),
    ("rl-world", lambda ck: ck["state"].pop(next(k for k in ck["state"] if k.startswith("ctrl."))), "1 missing"),
    ("deepsched", lambda ck: ck["model"].update(extra=ck["model"][next(iter(ck["model"]))]), "1 unexpected"),
    ("deepsched", lambda ck: ck["config"]["model"].update(hidden=8), "does not fit its network"),
])
def test_foreign_checkpoints_are_one_line(tmp_path: Path, kind: str, damage, expected: str) -> None:
    torch = pytest.importorskip("torch")
    if kind == "deepsched":
        from simsched.learned.deepsched.checkpoint import shipped_checkpoint as shipped
        source = shipped()
    else:
        from simsched.learned.rl.checkpoint import shipped_path

        source = shipped_path(kind)
    ck = torch.load(source, map_location="cpu", weights_only=True)
    damage(ck)
    path = tmp_path / "bad.pt"
    torch.save(ck, path)
    scenario = _scenario_with(tmp_path, kind, path)
    line = error_line("run", scenario)
    assert expected in line and "bad.pt" in line, line
    assert error_line("validate", scenario) == line  # validate loads the checkpoint too


# --------------------------------------------------------------------------- numeric noise
def test_runtime_warnings_do_not_precede_a_user_error() -> None:
    import warnings

    import numpy as np
    import typer

    from simsched.cli.common import user_errors
    from simsched.errors import SimschedError

    tiny = typer.Typer()

    @tiny.command()
    @user_errors
    def boom() -> None:
        with np.errstate(all="warn"):
            np.array([1.0]) / np.array([0.0])
        warnings.warn("overflow encountered in reduce", RuntimeWarning, stacklevel=1)
        raise SimschedError("bad input", file="f.yaml", line=3)

    result = CliRunner().invoke(tiny, [])
    assert result.exit_code == 2
    assert result.stderr == "error: f.yaml:3: bad input\n"
