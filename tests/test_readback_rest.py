"""Issue 40, the rest of what is read back: the learned CLIs' read-back files go through the project's
bounded, located readers (``python -m simsched.learned.rl.dynamic --merge``, DeepSched's data manifest, a
training history), and the ``capacity:`` section's scheduler list refuses an energy-aware scheduler on a
platform without a power model up front, as ``run`` does.  Each is exit 2 (or a SimschedError) with one
line naming the file, line and field; a FIFO is never opened."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from helpers import refused  # tests/ is on sys.path (rootdir-less test modules)

from simsched.errors import SimschedError
from simsched.learned.rl import dynamic

DAYS = {"shift": None, "wall_s": {"a": 1.0, "b": 2.0}, "jct_mean": {"a": {"0": 10.0, "1": 12.0},
                                                                       "b": {"0": 11.0, "1": 13.0}}}


def _merge(capsys: pytest.CaptureFixture[str], *paths: Path) -> tuple[int, str, str]:
    code = dynamic.main(["x", "--merge", *map(str, paths)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_dynamic_merge_reads_its_own_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.json").write_text(json.dumps(DAYS))
    code, out, err = _merge(capsys, tmp_path / "m.json")
    assert code == 0 and "| a | 2 |" in out and err == ""


@pytest.mark.parametrize(("text", "says"), [
    ('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested more than"),
    (json.dumps({**DAYS, "jct_mean": {"a": {"zero": 1.0}}}), "jct_mean.a: 'zero' is not a day"),
    (json.dumps({**DAYS, "jct_mean": {"a": {"0": "fast"}, "b": {"0": 1.0}}}), "jct_mean.a.0: 'fast' is not a finite"),
    (json.dumps({**DAYS, "wall_s": {"b": 1.0}}), "wall_s: missing: the wall time of 'a'"),
    ('{"jct_mean": {"a": {"0": NaN}}, "wall_s": {"a": 1}}', "NaN is not a number JSON allows"),
    ("[1, 2]", "expected an object with jct_mean"),
])
def test_dynamic_merge_refuses_a_bad_file_with_one_located_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                text: str, says: str) -> None:
    (tmp_path / "m.json").write_text(text)
    code, out, err = _merge(capsys, tmp_path / "m.json")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"error: {tmp_path / 'm.json'}"), err
    assert says in lines[0], lines[0]


def test_dynamic_merge_names_a_fifo_and_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.mkfifo(tmp_path / "fifo")
    code, _, err = _merge(capsys, tmp_path / "fifo")  # never opened: a FIFO would block the read
    assert code == 2 and "is a FIFO" in err
    code, _, err = _merge(capsys, tmp_path)
    assert code == 2 and "is a directory" in err


def test_deepsched_manifest_is_read_bounded_and_located(tmp_path: Path) -> None:
    from simsched.learned.deepsched.train import read_manifest, shard_files

    assert shard_files(tmp_path) is None
    (tmp_path / "manifest.json").write_text('{"data": {}, "files": ["a.npz"]}')
    assert shard_files(tmp_path) == ["a.npz"]
    (tmp_path / "manifest.json").write_text('{"files": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(SimschedError, match="nested more than .*delete it"):
        read_manifest(tmp_path)
    (tmp_path / "manifest.json").write_text('{"files": [1, 2]}')
    with pytest.raises(SimschedError) as exc:
        shard_files(tmp_path)
    assert exc.value.field == "files" and exc.value.file == str(tmp_path / "manifest.json")
    (tmp_path / "manifest.json").unlink()
    os.mkfifo(tmp_path / "manifest.json")
    with pytest.raises(SimschedError, match="is a FIFO"):
        shard_files(tmp_path)


def test_a_deepsched_shard_in_place_of_a_fifo_is_refused_unopened(tmp_path: Path) -> None:
    from simsched.learned.deepsched.data import read_shard

    os.mkfifo(tmp_path / "train-0.npz")
    with pytest.raises(SimschedError, match="is a FIFO"):
        list(read_shard(tmp_path / "train-0.npz"))


def test_a_training_history_is_read_bounded_and_typed(tmp_path: Path) -> None:
    from simsched.learned.rl.training import model_free_steps, read_history

    assert read_history(tmp_path / "rl_history.json") == []
    (tmp_path / "rl_history.json").write_text('[{"real_steps": 10, "eval_ratio": 0.9}]')
    assert model_free_steps(tmp_path) == 10
    (tmp_path / "rl_history.json").write_text('[{"real_steps": "many"}]')
    with pytest.raises(SimschedError) as exc:
        model_free_steps(tmp_path)
    assert exc.value.field == "[0].real_steps"
    (tmp_path / "world_history.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(SimschedError, match="nested more than"):
        read_history(tmp_path / "world_history.json")


def _capacity(tmp_path: Path, schedulers: list[str], section: list[str]) -> Path:
    doc = {"platform": {"processors": [{"name": "cpu", "type": "cpu", "count": 2}, {"name": "G", "type": "gpu"}],
                        "network": {"bandwidth": 10.0}},
           "workload": {"generator": "random", "tasks": 6}, "schedulers": schedulers,
           "capacity": {"objective": "makespan <= 1000", "resource": "G", "days": 1, "max": 2,
                        "schedulers": section}}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.mark.parametrize("name", ["ecs", "heft-slack"])
def test_capacity_section_refuses_an_energy_aware_scheduler_without_power(tmp_path: Path, name: str) -> None:
    path = _capacity(tmp_path, ["heft"], ["heft", name])
    line = refused(["capacity", str(path)], inputs=(path,), says="energy-aware")
    assert line.startswith(f"error: {path}:") and "capacity.schedulers[1]:" in line and "platform.power" in line


def test_capacity_section_names_an_unknown_scheduler_where_it_is(tmp_path: Path) -> None:
    path = _capacity(tmp_path, ["heft"], ["cpop"])
    line = refused(["capacity", str(path)], inputs=(path,), says="not one of the scenario's schedulers")
    assert "capacity.schedulers[0]:" in line and f"{path}:" in line


# --------------------------------------------------------------------------- files a scenario or trace names
STREAM = """\
platform:
  processors: [{name: cpu, type: cpu, count: 2}]
  network: {bandwidth: 10.0}
workload:
  stream:
    jobs:
      - {generator: random, tasks: 3}
      - {wfcommons: TARGET}
    arrivals: {poisson: 0.05}
    count: 3
schedulers: [mct]
"""


def _special(tmp_path: Path, kind: str) -> str:
    if kind == "directory":
        (tmp_path / "d").mkdir()
        return str(tmp_path / "d")
    if kind == "FIFO":
        os.mkfifo(tmp_path / "f")
        return str(tmp_path / "f")
    return "/dev/null"


@pytest.mark.parametrize(("kind", "says"), [("directory", "is a directory, not a file"),
                                            ("FIFO", "is a FIFO (named pipe), not a file"),
                                            ("device", "is a character device, not a file")])
def test_a_stream_job_file_that_is_not_a_file_says_what_it_is(tmp_path: Path, kind: str, says: str) -> None:
    target = _special(tmp_path, kind)
    s = tmp_path / "s.yaml"
    s.write_text(STREAM.replace("TARGET", target))
    line = refused(["run", str(s)], inputs=(s,), says=says, seconds=60)  # a FIFO opened would hang
    assert line == f"error: {s}:8: workload.stream.jobs[1].wfcommons: {target}: {says}", line


@pytest.mark.parametrize("kind", ["directory", "FIFO"])
def test_a_trace_job_column_naming_a_non_file_says_what_it_is(tmp_path: Path, kind: str) -> None:
    target = _special(tmp_path, kind)
    (tmp_path / "t.csv").write_text(f"time,job\n0,{target}\n")
    s = tmp_path / "s.yaml"
    s.write_text(yaml.safe_dump({"platform": {"processors": [{"name": "cpu", "type": "cpu", "count": 2}],
                                              "network": {"bandwidth": 10.0}},
                                 "workload": {"stream": {"jobs": {"name": "j", "generator": "random", "tasks": 3},
                                                         "arrivals": {"trace": "t.csv"}}},
                                 "schedulers": ["mct"]}, sort_keys=False))
    line = refused(["run", str(s)], inputs=(s,), says=f"is a {kind if kind == 'directory' else 'FIFO'}", seconds=60)
    assert f"{s}:" in line and f"{tmp_path / 't.csv'}:2: job: {target}: is a" in line, line


def test_a_nested_file_error_is_a_chain_from_the_scenario_field(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("this is not JSON\n")
    s = tmp_path / "s.yaml"
    s.write_text(STREAM.replace("TARGET", "bad.json"))
    line = refused(["run", str(s)], inputs=(s,), says="invalid JSON")
    assert line.startswith(f"error: {s}:8: workload.stream.jobs[1].wfcommons: {tmp_path / 'bad.json'}:1: "), line


def test_a_graph_workload_file_that_is_a_directory_says_so(tmp_path: Path) -> None:
    (tmp_path / "wf.json").mkdir()
    s = tmp_path / "s.yaml"
    s.write_text("platform: {processors: [{name: p, count: 2}]}\nworkload: {wfcommons: wf.json}\nschedulers: [heft]\n")
    line = refused(["run", str(s)], inputs=(s,), says="is a directory, not a file")
    assert line.startswith(f"error: {s}:2: workload.wfcommons: "), line


# --------------------------------------------------------------------------- weak messages: the option is named
@pytest.mark.parametrize(("args", "option"), [
    (["check", "heft", "--property", "nosuch", "-n", "1"], "--property"),
    (["workload", "info", "{tmp}/x.json", "--from", "nosuch"], "--from"),
    (["workload", "convert", "{tmp}/x.json", "{tmp}/y.json", "--to", "nosuch"], "--to"),
    (["fidelity", "{tmp}", "--profile", "{tmp}/nope/missing.yaml"], "--profile"),
])
def test_a_named_options_refusal_names_the_option(tmp_path: Path, args: list[str], option: str) -> None:
    line = refused([a.replace("{tmp}", str(tmp_path)) for a in args])
    assert option in line, line


def test_an_unknown_scheduler_of_explain_gantt_names_the_option(tmp_path: Path) -> None:
    s = tmp_path / "s.yaml"
    s.write_text("platform: {processors: [{name: p, count: 2}]}\nworkload: {generator: random, tasks: 5}\n"
                 "schedulers: [heft]\n")
    line = refused(["explain", "gantt", str(s), "-o", str(tmp_path / "g.html"), "--scheduler", "hefft"],
                   inputs=(s,), absent=(tmp_path / "g.html",))
    assert "--scheduler" in line and "hefft" in line, line
