"""What a newcomer meets: messages, readable tables, capacity's jobs, like-with-like benchmarks,
planned-vs-simulated warnings, and a light install whose learned schedulers name their extra."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import SimschedError

ROOT = Path(__file__).resolve().parents[1]
TOPCUOGLU = ROOT / "scenarios" / "topcuoglu2002.yaml"


def invoke(*args: object):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert "Traceback" not in result.output, result.output
    return result


# --------------------------------------------------------------------------- 2: light install
def test_learned_scheduler_without_torch_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from simsched.schedulers import registry

    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    for name in ("deepsched", "rl", "rl-world"):
        hint = r"optional package 'torch': pip install torch==2.13.0 && pip install -e '.*\[learned\]'"
        with pytest.raises(SimschedError, match=hint):
            registry.create(name)
    result = invoke("train", "deepsched", ROOT / "scenarios" / "deepsched" / "tiny.yaml")
    assert result.exit_code == 2 and "pip install torch==2.13.0 && pip install -e" in result.output
    assert "[learned]'" in result.output


# --------------------------------------------------------------------------- 4: capacity
def test_capacity_says_how_many_jobs_and_plots_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scen = tmp_path / "small.yaml"
    scen.write_text(yaml.safe_dump({"seed": 3, "capacity": {"days": 2}, "autotuning": {
        "servers": [{"cores": 8, "gpus": 1}],
        "arrivals": {"rate_per_hour": 4, "duration_h": 2,
                     "jobs": [{"tasks": [{"name": "a"}], "trials_per_task": 64, "batch_size": 16}]},
        "objective": {"quantile": 0.9, "within_h": 0.5}, "policies": ["sequential"]}}))
    monkeypatch.chdir(tmp_path)
    result = invoke("capacity", scen)
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.output.splitlines() if "simulated" in ln)
    assert "2 simulated days (seeds 3–4" in line and "jobs a day" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.yaml"]  # no PNG without --plot


# --------------------------------------------------------------------------- 5: tables
def test_columns_share_one_precision_without_scientific_notation() -> None:
    from simsched.report.numbers import format_column, format_duration

    assert format_column([147.2, 81.88, 8207.8], [0.0, 2.8e-14, 150.0]) == ["147", "82", "8208 ± 150"]
    assert format_column([5.141, 3.0222, 11.579], [0.17, 0.13, 1.6]) == ["5.14 ± 0.17", "3.02 ± 0.13",
                                                                         "11.58 ± 1.60"]
    assert format_column([80.0, 86.0]) == ["80", "86"]
    assert format_column([float("nan"), 0.5], unit="%") == ["-", "0.5%"]
    assert format_column([44.2, 50.8, 3.0]) == ["44.2", "50.8", "3.0"]  # no trailing zeros, one precision
    assert [format_duration(t) for t in (0.000415, 2.93, 1234.0)] == ["0.415 ms", "2.93 s", "1234 s"]


def test_row_labels_show_non_default_parameters(tmp_path: Path) -> None:
    from simsched.scenario import load_scenario, scheduler_label

    assert scheduler_label("ga", {"objective": "makespan", "generations": 200}) != "ga"
    text = TOPCUOGLU.read_text().replace("schedulers: [heft, cpop, mct, minmin, maxmin, met, olb, round-robin, random]",
                                         "schedulers: [heft, {name: cpop, insertion: true}, "
                                         "{name: ga, objective: waiting, seed_heft: false}]")
    assert text != TOPCUOGLU.read_text()
    path = tmp_path / "s.yaml"
    path.write_text(text)
    labels = load_scenario(path).scheduler_labels
    assert labels[0] == "heft" and labels[1] == "cpop"  # insertion: true is the default
    assert labels[2].startswith("ga(") and "seed_heft=false" in labels[2]


# --------------------------------------------------------------------------- 7: messages
def test_messages_point_the_newcomer_on(tmp_path: Path) -> None:
    study = invoke("run", ROOT / "scenarios" / "studies" / "ccr_shape.yaml")
    assert study.exit_code == 2 and "this is a study file" in study.output and "simsched sweep" in study.output
    cpop = invoke("explain", "cpop")
    assert cpop.exit_code == 0 and "Critical Path On a Processor" in cpop.output and "heft" in cpop.output
    unknown = invoke("explain", "nosuch")
    assert unknown.exit_code == 2 and "greedy-gap, heft" in unknown.output
    helps = invoke("run", "--help").output + invoke("train", "rl", "--help").output
    assert "--transfers" in helps and "--gantt" in helps  # the options, in whatever style typer draws them
    train = invoke("train", "--help").output
    assert "DeepSched" in train and "rl-world" in train


def test_config_paths_are_normalised() -> None:
    from simsched.learned.rl.config import load_config

    cfg = load_config(ROOT / "scenarios" / "rl" / "train_tiny.yaml")
    assert ".." not in str(cfg.path(cfg.output))


# --------------------------------------------------------------------------- 9: bench
def test_bench_targets_compare_like_with_like() -> None:
    from simsched.bench.dispatch import sized_target

    assert sized_target("< 0.3 s", 10_000, 2_000, True) == {"target": "< 0.3 s at 10,000 (not compared)", "ok": None}
    assert sized_target("< 0.3 s", 10_000, 10_000, False)["ok"] is False
    assert sized_target("< 2 s", 5_000, 5_010, True)["ok"] is True


# --------------------------------------------------------------------------- 10: planned vs simulated
class OptimisticPlanner:
    """HEFT's placement, but every task predicted to start at 0 (its predictions ignore precedence)."""

    def plan(self, problem, rng):
        from simsched.schedulers.heft import HEFT
        from simsched.simulator.schedule import Plan

        good = HEFT().plan(problem, rng)
        n = problem.n_tasks
        return Plan(good.processor, good.order, np.zeros(n), problem.W[np.arange(n), good.processor])


def test_run_warns_when_a_plan_predicts_other_times() -> None:
    result = invoke("run", TOPCUOGLU, "-s", "heft", "-s", f"{__name__}:OptimisticPlanner")
    assert result.exit_code == 0, result.output
    text = result.output.replace("\n  ", " ")  # a warning is one paragraph, wrapped with indented continuations
    warnings = [ln for ln in text.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and "OptimisticPlanner" in warnings[0] and "task '" in warnings[0]
    assert "planned start 0 but simulated" in warnings[0]
