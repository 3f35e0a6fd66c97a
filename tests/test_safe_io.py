"""Never destroy or mix a user's files, no hangs, no tracebacks (issue 24, items 5 and 6).

Every case runs the real command in-process and checks the user-input rule: exit code 2, one
``error:`` line that names the file (and field or line where there is one), input files
byte-identical afterwards, no output written, and a bounded time.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest
from helpers import refused  # tests/ is on sys.path (rootdir-less test modules)
from typer.testing import CliRunner

from simsched import limits
from simsched.checkpoints import check_archive
from simsched.cli.main import app
from simsched.errors import SimschedError
from simsched.fileio import NotRegularFile, TooLarge, read_bytes_capped, same_file
from simsched.outputlock import Busy, output_lock
from simsched.outputs import check_output, printable, release_outputs

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "topcuoglu2002.yaml"
CAPACITY = ROOT / "scenarios" / "autotuning" / "two_jobs_one_server.yaml"

STUDY = """\
name: NAME
scenario:
  platform: {processors: [{name: p, count: 2}]}
  workload: {generator: random, tasks: TASKS}
  schedulers: [heft]
seeds: [0, 1]
"""


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    target = tmp_path / "S.yaml"
    target.write_bytes(SCENARIO.read_bytes())
    return target


# ---------------------------------------------------------------- the same file as an input
@pytest.mark.parametrize("option", ["--json", "--trace"])
def test_run_refuses_to_write_over_its_scenario(scenario: Path, option: str) -> None:
    path = scenario if option == "--json" else scenario.with_suffix(".json")
    if option == "--trace":
        path.symlink_to(scenario)  # the same file under another name
    line = refused(["run", str(scenario), option, str(path)], inputs=(scenario,), says="is the input file")
    assert str(scenario.name) in line


def test_run_refuses_a_hard_link_to_its_scenario(scenario: Path) -> None:
    link = scenario.with_name("other.json")
    os.link(scenario, link)
    refused(["run", str(scenario), "--json", str(link)], inputs=(scenario,), says="is the input file")


def test_run_refuses_to_write_over_the_scenarios_workload_file(tmp_path: Path) -> None:
    data = tmp_path / "graph.json"
    data.write_bytes((ROOT / "scenarios" / "data" / "montage_60.json").read_bytes())
    s = tmp_path / "w.yaml"
    s.write_text("name: w\nplatform: {processors: [{name: p, count: 2}]}\nworkload: {wfcommons: graph.json}\n"
                 "schedulers: [heft]\n")
    ok = CliRunner().invoke(app, ["validate", str(s)])
    assert ok.exit_code == 0, ok.output
    refused(["run", str(s), "--json", str(data)], inputs=(s, data), says="is the input file")


def test_capacity_refuses_to_write_over_its_scenario(tmp_path: Path) -> None:
    s = tmp_path / "cap.yaml"
    s.write_bytes(CAPACITY.read_bytes())
    refused(["capacity", str(s), "--json", str(s)], inputs=(s,), says="is the input file")
    refused(["capacity", str(s), "--plot", str(tmp_path / "no" / "p.png")], inputs=(s,), says="does not exist")


def test_report_trace_onto_its_results_is_refused(scenario: Path, tmp_path: Path) -> None:
    results = tmp_path / "r.json"
    ok = CliRunner().invoke(app, ["run", str(scenario), "-s", "heft", "--json", str(results)])
    assert ok.exit_code == 0, ok.output
    refused(["report", str(results), "--trace", str(results)], inputs=(results,), says="is the input file",
            absent=(tmp_path / "r.html",))
    refused(["report", str(results), "-o", str(tmp_path / "x" / "r.html")], inputs=(results,))


def test_workload_convert_onto_its_source_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "w.stg"
    src.write_bytes((ROOT / "scenarios" / "data" / "kasahara_40.stg").read_bytes())
    refused(["workload", "convert", str(src), str(src)], inputs=(src,), says="is the input file")


# ---------------------------------------------------------------- output paths before any work
def test_output_paths_are_checked_before_work(scenario: Path, tmp_path: Path) -> None:
    long = tmp_path / ("a" * 300 + ".json")
    refused(["run", str(scenario), "--json", str(long)], inputs=(scenario,), says="255")
    refused(["run", str(scenario), "--json", str(tmp_path)], inputs=(scenario,), says="is a directory")
    refused(["run", str(scenario), "--json", "/dev/null"], inputs=(scenario,), says="character device")
    a_file = tmp_path / "file"
    a_file.write_text("keep")
    refused(["adversary", "heft", "cpop", "--iterations", "1", "--out", str(a_file / "sub")], inputs=(a_file,))
    refused(["adversary", "heft", "cpop", "--iterations", "1", "--out", str(a_file)], inputs=(a_file,),
            says="not a directory")
    refused(["explain", "greedy-gap", "--out", str(tmp_path / "no" / "x.yaml")])
    refused(["sweep", str(scenario), "-o", str(a_file / "r.csv")], inputs=(a_file,), says="is a file, not a directory")


def test_training_outputs_are_checked_before_training(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("gymnasium")
    a_file = tmp_path / "file"
    a_file.write_text("keep")
    pytest.importorskip("torch", reason="`simsched train rl` needs the 'learned' extra (the checks above ran)")
    rl = tmp_path / "rl.yaml"
    text = (ROOT / "scenarios" / "rl" / "train_tiny.yaml").read_text()
    text = "\n".join(line for line in text.splitlines() if not line.startswith("output:"))
    rl.write_text(text + f"\noutput: {a_file / 'sub'}\n")
    refused(["train", "rl", str(rl)], inputs=(rl, a_file), says="is a file, not a directory")
    ds = tmp_path / "ds.yaml"
    ds.write_text((ROOT / "scenarios" / "deepsched" / "tiny.yaml").read_text()
                  .replace("../../out/deepsched/tiny.pt", str(a_file / "x.pt")))
    refused(["train", "deepsched", str(ds), "-q"], inputs=(ds, a_file), says="is a file, not a directory")


def test_check_output_helpers(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    try:
        check_output(target, option="--json")
        with pytest.raises(Busy):  # a second writer (another open file description) is refused
            with output_lock(target):
                pass
    finally:
        release_outputs()
    with output_lock(target):  # released: free again, and the lock file is gone afterwards
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert same_file(tmp_path / "a" / ".." / "out.json", target)
    assert not same_file(target, tmp_path / "other.json")


def test_two_writers_of_one_path(scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    with output_lock(out):  # as if another `run --json` to the same path were under way
        refused(["run", str(scenario), "--json", str(out)], inputs=(scenario,), says="another simsched command",
                absent=(out,))
    ok = CliRunner().invoke(app, ["run", str(scenario), "-s", "heft", "--json", str(out)])
    assert ok.exit_code == 0 and out.is_file()
    assert not list(tmp_path.glob(".*.lock"))


# ---------------------------------------------------------------- inputs that are not files
@pytest.mark.parametrize("command", [["run"], ["validate"], ["workload", "info"], ["summarize"], ["report"],
                                     ["capacity"], ["sweep"], ["explain", "heft"]])
def test_a_fifo_or_device_as_the_input_is_refused_at_once(tmp_path: Path, command: list[str]) -> None:
    fifo = tmp_path / ("in.csv" if command[0] in ("summarize",) else "in.yaml")
    os.mkfifo(fifo)
    refused([*command, str(fifo)], says="FIFO")
    if command[0] not in ("summarize", "report"):
        refused([*command, "/dev/zero"], says="/dev/zero")


def test_read_bytes_capped(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"x" * 100)
    assert read_bytes_capped(f, 100) == b"x" * 100
    with pytest.raises(TooLarge):
        read_bytes_capped(f, 99)
    with pytest.raises(NotRegularFile):
        read_bytes_capped(Path("/dev/zero"), 10)
    empty = tmp_path / "e"
    empty.write_bytes(b"")
    assert read_bytes_capped(empty, 0) == b""


# ---------------------------------------------------------------- checkpoints: zip bombs
def test_a_zip_bomb_checkpoint_is_refused_before_decompression(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bomb = tmp_path / "bomb.pt"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("archive/data/0", b"\0" * (40 * 2**20))  # 40 MB of zeros in ~40 kB
    assert bomb.stat().st_size < 2**20
    with pytest.raises(SimschedError, match="1:1|zip bomb"):
        check_archive(bomb, what="DeepSched", retrain="retrain it")
    monkeypatch.setenv("SIMSCHED_MAX_UNPACKED_MB", "10")
    with pytest.raises(limits.LimitError, match="unpack to 40 MB"):
        check_archive(bomb, what="DeepSched", retrain="retrain it")
    s = tmp_path / "ds.yaml"
    s.write_text(SCENARIO.read_text().replace("schedulers:", f"schedulers:\n  - {{name: deepsched, checkpoint: "
                                                            f"{bomb}}}\n  #", 1))
    refused(["run", str(s)], inputs=(s, bomb))


def test_a_real_checkpoint_passes_the_archive_check() -> None:
    shipped = sorted((ROOT / "simsched").rglob("*.pt"))
    assert shipped
    for p in shipped:
        assert check_archive(p, what="shipped", retrain="-") > 0


# ---------------------------------------------------------------- CSV results: every field checked
def _sweep(tmp_path: Path, name: str = "one", tasks: int = 8) -> Path:
    study = tmp_path / f"{name}.yaml"
    study.write_text(STUDY.replace("NAME", name).replace("TASKS", str(tasks)))
    out = tmp_path / f"{name}.csv"
    result = CliRunner().invoke(app, ["sweep", str(study), "-o", str(out), "--workers", "1"])
    assert result.exit_code == 0, result.output
    return out


def test_truncated_or_edited_results_are_refused_by_line_and_column(tmp_path: Path) -> None:
    out = _sweep(tmp_path)
    text = out.read_text()
    truncated = tmp_path / "cut.csv"
    truncated.write_text(text[: len(text) - 40])
    header = text.splitlines()[0].split(",")
    no_column = tmp_path / "nocol.csv"
    drop = header.index("makespan")
    no_column.write_text("\n".join(",".join(c for k, c in enumerate(line.split(",")) if k != drop)
                                   for line in text.splitlines()) + "\n")
    bad_cell = tmp_path / "cell.csv"
    lines = text.splitlines()
    cells = lines[2].split(",")
    cells[header.index("seed")] = "x"
    bad_cell.write_text("\n".join([*lines[:2], ",".join(cells), *lines[3:]]) + "\n")
    for command in (["summarize"], ["plot", "--x", "seed", "--y", "makespan"], ["report"]):
        line = refused([*command[:1], str(truncated), *command[1:]], inputs=(truncated,), says="cut.csv:")
        assert "cells" in line
        line = refused([*command[:1], str(no_column), *command[1:]], inputs=(no_column,), says="nocol.csv:1: makespan")
        line = refused([*command[:1], str(bad_cell), *command[1:]], inputs=(bad_cell,), says="cell.csv:3: seed")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    refused(["summarize", str(empty)], says="empty")


def test_plot_x_with_a_slash_is_refused_cleanly(tmp_path: Path) -> None:
    out = _sweep(tmp_path)
    refused(["plot", str(out), "--x", "a/b", "--y", "makespan"], inputs=(out,), says="--x 'a/b'")


# ---------------------------------------------------------------- sweep --resume: the study's identity
def test_resume_into_another_studys_results_is_refused(tmp_path: Path) -> None:
    out = _sweep(tmp_path, "one", 8)
    other = tmp_path / "two.yaml"
    other.write_text(STUDY.replace("NAME", "two").replace("TASKS", "9"))
    refused(["sweep", str(other), "-o", str(out), "--resume"], inputs=(out, other), says="belong to study 'one'")
    # without the stored identity the rows still tell: none of them is a point of this study
    (tmp_path / "one.csv.study.json").unlink()
    refused(["sweep", str(other), "-o", str(out), "--resume"], inputs=(out,), says="another study")
    again = CliRunner().invoke(app, ["sweep", str(tmp_path / "one.yaml"), "-o", str(out), "--resume"])
    assert again.exit_code == 0 and "2 already done" in again.output
    assert json.loads((tmp_path / "one.csv.study.json").read_text())["study"] == "one"


# ---------------------------------------------------------------- train deepsched: only its own files
def test_prepare_data_deletes_only_the_shards_it_wrote(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from simsched.learned.deepsched.config import load_config
    from simsched.learned.deepsched.train import prepare_data, shard_files

    cfg_path = tmp_path / "ds.yaml"
    text = (ROOT / "scenarios" / "deepsched" / "tiny.yaml").read_text()
    text = text.replace("../../out/deepsched/tiny-data", "data").replace("train: 400", "train: 2")
    cfg_path.write_text(text.replace("val: 40", "val: 1").replace("test: 40", "test: 1")
                        .replace("test_unseen: 40", "test_unseen: 1"))
    cfg = load_config(cfg_path)
    folder = tmp_path / "data"
    folder.mkdir()
    mine = folder / "train-9999.npz"
    mine.write_bytes(b"the user's own file")
    prepare_data(cfg)
    written = shard_files(folder)
    assert written and "train-9999.npz" not in written
    prepare_data(cfg, force=True)  # regenerate: the user's file survives, byte for byte
    assert mine.read_bytes() == b"the user's own file"
    assert sorted(shard_files(folder) or []) == sorted(written)


# ---------------------------------------------------------------- seeds, sizes, hangs
def test_negative_seeds_are_refused(tmp_path: Path) -> None:
    refused(["explain", "greedy-gap", "--seed", "-1"], says="--seed must be >= 0")
    s = tmp_path / "cap.yaml"
    s.write_bytes(CAPACITY.read_bytes())
    refused(["capacity", str(s), "--seed", "-5"], inputs=(s,), says="--seed must be >= 0")
    s.write_text(CAPACITY.read_text() + "\nseed: -3\n" if "\nseed:" not in CAPACITY.read_text()
                 else CAPACITY.read_text().replace("\nseed:", "\nseed: -3\n#"))
    refused(["capacity", str(s)], inputs=(s,), says="seed")
    pytest.importorskip("torch", reason="`simsched train rl` needs the 'learned' extra (the checks above ran)")
    rl = tmp_path / "rl.yaml"
    text = (ROOT / "scenarios" / "rl" / "train_tiny.yaml").read_text()
    text = "\n".join(line for line in text.splitlines() if not line.startswith("seed:"))
    rl.write_text(text + "\nseed: -1\n")
    line = refused(["train", "rl", str(rl)], inputs=(rl,), says="seed: ")  # then pydantic's words
    assert f"{rl}:{len(text.splitlines()) + 1}: seed" in line  # the file, the line and the field


def test_huge_sizes_are_refused_up_front(tmp_path: Path) -> None:
    refused(["explain", "greedy-gap", "--processors", "5000"], says="--processors")
    huge = tmp_path / "huge.yaml"
    huge.write_text("""name: huge
autotuning:
  servers: [{cores: 32, gpus: 4}]
  arrivals: {rate_per_hour: 1.0e9, duration_h: 24, jobs: [{model: resnet18}]}
  objective: {quantile: 0.95, within_h: 8}
""")
    line = refused(["capacity", str(huge)], inputs=(huge,), says="max_jobs")
    assert "huge.yaml:4: autotuning.arrivals" in line
    huge.write_text(huge.read_text().replace("rate_per_hour: 1.0e9", "rate_per_hour: 1")
                    .replace("model: resnet18", "model: resnet18, trials_per_task: 1000000000"))
    refused(["capacity", str(huge)], inputs=(huge,), says="max_trials")
    refused(["run", str(huge)], inputs=(huge,), says="max_trials")
    huge.write_text(huge.read_text().replace(", trials_per_task: 1000000000", "")
                    .replace("gpus: 4}", "gpus: 4, count: 100000}"))
    refused(["capacity", str(huge)], inputs=(huge,), says="servers")


# ---------------------------------------------------------------- names printed to a terminal
def test_printable_escapes_control_characters() -> None:
    assert printable("a\x1b[2Jb\x07c\u202ed\te") == "a\\x1b[2Jb\\x07c\\u202ed\te"
    assert printable("plain ünïcode") == "plain ünïcode"
    assert printable("") == ""


def test_explain_does_not_print_escape_sequences_raw(tmp_path: Path) -> None:
    s = tmp_path / "esc.yaml"
    s.write_text("""name: esc
platform: {processors: [{name: "p\\e[31m", count: 2}]}
workload:
  tasks: [{name: "t\\e]0;pwned\\a", work: 1}, {name: b, work: 2}]
  edges: [{from: "t\\e]0;pwned\\a", to: b, data: 1}]
schedulers: [heft]
""")
    result = CliRunner().invoke(app, ["explain", "heft", str(s)])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "\\x1b" in result.output


def test_duplicate_wfformat_ids_are_an_error_naming_the_field(tmp_path: Path) -> None:
    doc = {"name": "x", "schemaVersion": "1.5", "workflow": {
        "specification": {"tasks": [{"name": "a", "id": "t1", "parents": [], "children": ["t2"]},
                                    {"name": "b", "id": "t2", "parents": ["t1"], "children": []}], "files": []},
        "execution": {"tasks": [{"id": "t1", "runtimeInSeconds": 1}, {"id": "t2", "runtimeInSeconds": 2},
                                {"id": "t2", "runtimeInSeconds": 5}]}}}
    f = tmp_path / "dup.json"
    f.write_text(json.dumps(doc, indent=1))
    refused(["workload", "info", str(f)], inputs=(f,), says="workflow.execution.tasks[2]: duplicate task id")
    doc["workflow"]["execution"]["tasks"].pop()
    doc["workflow"]["specification"]["tasks"].append({"name": "c", "id": "t2", "parents": [], "children": []})
    f.write_text(json.dumps(doc, indent=1))
    refused(["workload", "info", str(f)], inputs=(f,), says="duplicate task 't2'")
