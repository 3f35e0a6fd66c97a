"""Checkpoints stay data and are bounded (issue 40): one reader per kind (rl, rl-world, DeepSched, rl-gate),
the kind checked by name, truncated, text, empty and special files refused, the configuration's widths,
layer counts and weights bounded before any tensor is made, JSON depth bounded, and `train rl --resume`
refusing what it cannot resume from before it prints or trains anything."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from simsched import limits  # noqa: E402
from simsched.checkpoints import kind_of, read_checkpoint  # noqa: E402
from simsched.cli.main import app  # noqa: E402
from simsched.errors import SimschedError  # noqa: E402
from simsched.learned.deepsched.checkpoint import load_checkpoint, shipped_checkpoint  # noqa: E402
from simsched.learned.rl import checkpoint as rl_checkpoint  # noqa: E402
from simsched.learned.rl.gate import load_gate  # noqa: E402
from simsched.learned.rl.gate import shipped_path as gate_path  # noqa: E402
from simsched.learned.rl.policy import _load  # noqa: E402

SHIPPED = {"rl": rl_checkpoint.shipped_path("rl"), "rl-world": rl_checkpoint.shipped_path("rl-world"),
           "deepsched": shipped_checkpoint(), "rl-gate": gate_path()}
NAMES = {"rl": "an rl checkpoint", "rl-world": "an rl-world", "deepsched": "a DeepSched checkpoint",
         "rl-gate": "an rl-gate checkpoint"}


def _loader(kind: str):
    """The public loader of ``kind`` (what `run` reaches through the registry)."""
    if kind == "rl-gate":
        return load_gate
    if kind == "deepsched":
        return load_checkpoint
    return lambda path: _load(kind, str(path))


@pytest.fixture(autouse=True)
def _fresh_cache():
    _load.cache_clear()
    yield
    _load.cache_clear()


# --------------------------------------------------------------------------- the kind, by name
@pytest.mark.parametrize("given", list(SHIPPED))
@pytest.mark.parametrize("expected", list(SHIPPED))
def test_a_checkpoint_of_another_kind_is_refused_by_name(given, expected, tmp_path):
    path = tmp_path / ("ck.json" if given == "rl-gate" else "ck.pt")
    shutil.copy(SHIPPED[given], path)
    if given == expected:
        assert kind_of(read_checkpoint(path, expected, retrain="-")) == expected
        return
    with pytest.raises(SimschedError) as info:
        _loader(expected)(path)
    text = str(info.value)
    assert f"this is {NAMES[given]}" in text and f"not {NAMES[expected]}" in text and str(path) in text


@pytest.mark.parametrize("kind", list(SHIPPED))
def test_truncated_text_empty_and_special_files_are_refused_in_their_own_words(kind, tmp_path):
    raw = SHIPPED[kind].read_bytes()
    cases = {"truncated": (raw[: len(raw) // 2], "truncated" if kind != "rl-gate" else "ends too early"),
             "text": (b"hello, I am not a checkpoint\n", "text file"),
             "empty": (b"", "empty"),
             "binary": (bytes(range(1, 200)) * 3, "neither a torch archive nor JSON")}
    for name, (data, words) in cases.items():
        path = tmp_path / f"{name}.bin"
        path.write_bytes(data)
        with pytest.raises(SimschedError, match=words):
            _loader(kind)(path)
    (tmp_path / "adir").mkdir()
    with pytest.raises(SimschedError, match="is a directory"):
        _loader(kind)(tmp_path / "adir")
    os.mkfifo(tmp_path / "afifo")
    with pytest.raises(SimschedError, match="is a FIFO"):
        _loader(kind)(tmp_path / "afifo")
    with pytest.raises(SimschedError, match="does not exist"):
        _loader(kind)(tmp_path / "none.pt")


def test_a_pickle_that_would_run_code_is_never_loaded(tmp_path):
    path = tmp_path / "evil.pt"
    torch.save({"kind": "rl", "config": {}, "state": {}, "meta": Path("x")}, path)  # a class: not weights
    with pytest.raises(SimschedError, match="objects other than tensors"):
        _load("rl", str(path))


# --------------------------------------------------------------------------- sizes bounded before tensors
def _tampered(tmp_path: Path, kind: str, section: tuple[str, ...], key: str, value: int) -> Path:
    doc = torch.load(SHIPPED[kind], map_location="cpu", weights_only=True)
    node = doc["config"]
    for part in section:
        node = node[part]
    node[key] = value
    path = tmp_path / f"{kind}-{key}.pt"
    torch.save(doc, path)
    return path


@pytest.mark.parametrize("kind, section, key, value, words", [
    ("rl", ("ppo",), "hidden", 10**6, "max_net_width"),      # would allocate 4 TB
    ("rl", ("ppo",), "layers", 10**5, "max_net_layers"),     # would build for minutes
    ("rl-world", ("world",), "lstm", 10**6, "max_net_width"),
    ("rl-world", ("world",), "ensemble", 10**5, "max_net_layers"),
    ("rl-world", ("world",), "task_slots", 4000, "task_slots x proc_slots"),
    ("deepsched", ("model",), "hidden", 10**6, "max_net_width"),
    ("deepsched", ("model",), "dag_layers", 10**5, "max_net_layers"),
])
def test_a_configuration_asking_for_a_huge_network_is_refused_before_any_tensor(tmp_path, kind, section, key,
                                                                                  value, words):
    path = _tampered(tmp_path, kind, section, key, value)
    t0 = time.process_time()
    with pytest.raises(SimschedError, match=words) as info:
        _loader(kind)(path)
    assert time.process_time() - t0 < 5.0
    assert key in str(info.value) or "slots" in str(info.value)


def test_the_weights_a_configuration_describes_are_counted_on_the_meta_device(tmp_path, monkeypatch):
    """Within the width and layer limits, a network of more weights than max_net_weights is refused by its
    count (made on the meta device, no memory), before the stored shapes are even compared."""
    with pytest.raises(limits.LimitError, match="436,428,803 weights"):  # at the width limit: 1.7 GB of weights
        _load("rl", str(_tampered(tmp_path, "rl", ("ppo",), "hidden", 4096)))
    path = _tampered(tmp_path, "rl", ("ppo",), "hidden", 1024)
    monkeypatch.setenv("SIMSCHED_MAX_NET_WEIGHTS", "1000000")
    with pytest.raises(limits.LimitError, match="max_net_weights"):
        _load("rl", str(path))
    monkeypatch.delenv("SIMSCHED_MAX_NET_WEIGHTS")
    with pytest.raises(SimschedError, match="does not fit"):  # within the count: the shapes are not the file's
        _load("rl", str(path))


def test_a_world_agent_builds_its_slot_positions_on_first_use():
    """The controller's slot table is made on first use (not a buffer made on construction), so an agent
    can be planned on the meta device; its values are those of slot_position."""
    from simsched.learned.rl.world_model import slot_position

    agent = _load("rl-world", str(SHIPPED["rl-world"]))
    ctrl = agent.ctrl
    assert torch.equal(ctrl.position(), slot_position(ctrl.w))


# --------------------------------------------------------------------------- JSON depth
def _deep_gate(tmp_path: Path) -> Path:
    path = tmp_path / "deep.json"
    path.write_text('{"kind": "rl-gate", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    return path


def test_a_gate_nested_100000_deep_is_a_limit_not_a_recursion_error(tmp_path):
    with pytest.raises(limits.LimitError, match="max_depth"):
        load_gate(_deep_gate(tmp_path))


STREAM = """\
platform:
  processors: [{name: cpu, count: 2}]
workload:
  stream: {jobs: {generator: random, tasks: [2, 4]}, arrivals: {poisson: 0.01}, count: 3}
schedulers: [{name: rl-gate, checkpoint: deep.json}]
"""


def test_run_and_generalise_refuse_a_deep_gate_in_one_line(tmp_path):
    _deep_gate(tmp_path)
    (tmp_path / "s.yaml").write_text(STREAM)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for argv in (["run", "s.yaml"], ["generalise", "s.yaml", "-s", "rl-gate:checkpoint=deep.json", "--days", "2"]):
            result = CliRunner().invoke(app, argv)
            assert result.exit_code == 2, result.output
            assert "RecursionError" not in result.output and "Traceback" not in result.output
            errors = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
            assert len(errors) == 1 and "deep.json" in errors[0] and "max_depth" in errors[0], result.output
    finally:
        os.chdir(cwd)


# --------------------------------------------------------------------------- train rl --resume
pytest.importorskip("gymnasium")

TINY = """\
seed: 7
platform:
  processors: [{name: cpu, count: 2}]
workload:
  stream: {jobs: {generator: random, tasks: [2, 4]}, arrivals: {poisson: 0.02}, count: 3}
schedulers: [srjf-eft]
"""


@pytest.mark.parametrize("what, make, words", [
    ("truncated", lambda p: p.write_bytes(SHIPPED["rl"].read_bytes()[:5000]), "truncated"),
    ("deepsched", lambda p: shutil.copy(SHIPPED["deepsched"], p), "this is a DeepSched checkpoint, not an rl"),
    ("world", lambda p: shutil.copy(SHIPPED["rl-world"], p), "this is an rl-world"),
    ("text", lambda p: p.write_text("not a checkpoint\n"), "text file"),
    ("directory", lambda p: p.mkdir(), "is a directory"),
    ("fifo", lambda p: os.mkfifo(p), "is a FIFO"),
])
def test_train_rl_resume_refuses_what_it_cannot_resume_from_before_it_trains(tmp_path, what, make, words):
    (tmp_path / "s.yaml").write_text(TINY)
    out = tmp_path / "out"
    out.mkdir()
    make(out / "rl.pt")
    before = sorted(p.name for p in out.iterdir())
    r = subprocess.run([sys.executable, "-m", "simsched.cli.main", "train", "rl", "s.yaml", "--budget-min", "0.05",
                        "-o", "out", "--resume"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and words in lines[0] and "rl.pt" in lines[0] and "--resume" in lines[0], r.stderr
    assert "does not exist" not in lines[0] and not r.stdout.strip()
    assert sorted(p.name for p in out.iterdir()) == before  # nothing written
