"""Autotuning jobs, the interference engine, the load-aware policies and the capacity search."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import simpy
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.errors import SimschedError
from simsched.run.autotune import plan_jobs, result_of, run_autotuning, validate_section
from simsched.schedulers.loadaware import GradientTaskScheduler
from simsched.schedulers.registry import AUTOTUNE_POLICIES
from simsched.simulator.autotune_engine import ServerSpec, SharedServer, simulate
from simsched.workloads.autotuning import PRESETS, JobSpec, latency_curves, plan_job, round_robin, tuning_tasks

SCEN = Path(__file__).resolve().parents[1] / "scenarios" / "autotuning"


@dataclass(frozen=True)
class Layer:
    """A stand-in for dlmodels.LayerSpec (tests only)."""

    name: str
    op: str
    flops: float
    signature: tuple


STAND_IN = [Layer("c1", "conv", 2e8, (3, 64, 7)), Layer("r1", "relu", 1e6, ("r",)),
            Layer("c2", "conv", 1e8, (64, 64, 3)), Layer("c3", "conv", 1e8, (64, 64, 3)),
            Layer("c4", "conv", 5e7, (64, 128, 1)), Layer("fc", "dense", 1e6, (512, 1000))]


def _overlap(a, b) -> bool:
    return a.start < b.end - 1e-9 and b.start < a.end - 1e-9


def test_tuning_tasks_dedupe_and_weight() -> None:
    tasks = tuning_tasks(STAND_IN)
    assert [t.name for t in tasks] == ["c1", "c2", "c4", "fc"]
    assert [t.weight for t in tasks] == [1, 2, 1, 1]


def test_shared_server_slowdown() -> None:
    env = simpy.Environment()
    cpu = SharedServer(env, 16, 0.64)
    ends = []
    for w in (10.0, 10.0):
        cpu.submit(w, 4).callbacks.append(lambda _e: ends.append(env.now))
    env.run()
    assert ends == pytest.approx([16.4, 16.4])  # two updates side by side: +64%
    env = simpy.Environment()
    cpu = SharedServer(env, 16, 0.64)
    ends = []
    for w in (10.0, 10.0):
        cpu.submit(w, 16).callbacks.append(lambda _e: ends.append(env.now))
    env.run()
    assert ends == pytest.approx([20.0, 20.0])  # two all-core builds: twice as long


def test_calibration_about_one_second_per_trial_on_gpu() -> None:
    tasks = tuning_tasks(STAND_IN)
    gpu = plan_job(JobSpec("g", tasks, trials_per_task=640), np.random.default_rng(0))
    cpu = plan_job(JobSpec("c", tasks, trials_per_task=640, target="cpu", params=PRESETS["cpu"]),
                   np.random.default_rng(0))
    per_trial_gpu = gpu.alone_time(16) / gpu.spec.total_trials
    per_trial_cpu = cpu.alone_time(16) / cpu.spec.total_trials
    assert 0.8 < per_trial_gpu < 1.2
    assert 4.0 < per_trial_cpu < 5.6


@st.composite
def _cases(draw):
    n_jobs = draw(st.integers(1, 4))
    servers = [ServerSpec(f"s{h}", draw(st.integers(1, 16)), ("gpu",) * draw(st.integers(1, 3)))
               for h in range(draw(st.integers(1, 2)))]
    layers = STAND_IN[: draw(st.integers(1, len(STAND_IN)))]
    tasks = tuning_tasks(layers) or tuning_tasks(STAND_IN[:1])
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    plans = []
    for j in range(n_jobs):
        target = draw(st.sampled_from(["gpu", "gpu", "cpu"]))
        spec = JobSpec(f"j{j}", tasks, trials_per_task=draw(st.integers(1, 40)), batch_size=draw(st.integers(1, 16)),
                       target=target, arrival=draw(st.sampled_from([0.0, 0.0, 30.0, 200.0])), params=PRESETS[target])
        plans.append(plan_job(spec, rng))
    return plans, servers, draw(st.sampled_from(sorted(AUTOTUNE_POLICIES)))


@settings(max_examples=40, deadline=None)
@given(_cases())
def test_invariants(case) -> None:
    plans, servers, policy = case
    res = simulate(plans, servers, AUTOTUNE_POLICIES[policy]())
    stages = res.stages
    # every job finishes all its trials, round by round in stage order
    for j, plan in enumerate(plans):
        mine = sorted((s for s in stages if s.job == j), key=lambda s: (s.start, s.end))
        assert [s.kind for s in mine] == ["build", "measure", "update"] * plan.n_rounds
        assert [s.rnd for s in mine] == [r for r in range(plan.n_rounds) for _ in range(3)]
        assert all(a.end <= b.start + 1e-9 for a, b in zip(mine, mine[1:]))
        assert mine[0].start >= plan.spec.arrival
        assert sum(s.configs for s in mine if s.kind == "measure") == plan.spec.total_trials
        assert len({s.host for s in mine}) == 1
        assert res.jobs[j].trials == plan.spec.total_trials
    measures = [s for s in stages if s.kind == "measure"]
    cpu = [s for s in stages if s.kind != "measure"]
    conflicts = sum(1 for i, a in enumerate(measures) for b in measures[i + 1:]
                    if a.device == b.device and _overlap(a, b))
    conflicts += sum(1 for a in measures for b in cpu if a.host == b.host and _overlap(a, b))
    distorted = sum(s.distorted for s in measures)
    if policy != "uncontrolled":
        assert conflicts == 0
        assert distorted == 0 and res.distorted_trials == 0 and res.mean_latency_penalty == 0
    if distorted == 0:
        assert conflicts == 0  # every conflict is reported as a distortion
    assert 0 <= res.device_idle_fraction <= 1 and 0 <= res.cpu_utilisation <= 1 + 1e-9


def test_four_jobs_done_when() -> None:
    data = yaml.safe_load((SCEN / "four_jobs_gpu_server.yaml").read_text())
    out = run_autotuning(data["autotuning"], base_dir=SCEN, seed=data["seed"])
    s = {r["policy"]: r for r in out["summary"]}
    assert s["load-aware"]["makespan_h"] <= 0.65 * s["sequential"]["makespan_h"]
    assert s["load-aware"]["distorted_measurements"] == 0 and s["predictive"]["distorted_measurements"] == 0
    assert s["uncontrolled"]["distorted_measurements"] > 0 and s["uncontrolled"]["mean_latency_penalty"] > 0
    assert s["predictive"]["makespan_h"] <= s["load-aware"]["makespan_h"] * (1 + 1e-9)
    assert s["dedicated"]["device_hours"] > s["load-aware"]["device_hours"]
    again = run_autotuning(data["autotuning"], base_dir=SCEN, seed=data["seed"], policies=["load-aware"])
    assert again["results"][0]["makespan_h"] == s["load-aware"]["makespan_h"]  # deterministic per seed


def test_capacity_day_of_arrivals_checked_by_direct_simulation() -> None:
    from simsched.capacity import AutotuneModel, find_capacity, parse_objective

    data = yaml.safe_load((SCEN / "day_of_arrivals.yaml").read_text())
    model = AutotuneModel(data["autotuning"])
    out = find_capacity(model, parse_objective("jct_p95 <= 8h"), seed=data["seed"], days=2, on_days=1.0,
                        variants=["load-aware"])
    n = out["variants"][0]["capacity"]
    # the search's work is bounded: 2 days per capacity tried, doubling then bisection
    assert out["variants"][0]["simulations"] <= 2 * (2 * math.ceil(math.log2(n)) + 2)
    assert n is not None and n >= 2
    cfg = validate_section(data["autotuning"])
    q, h = cfg.objective.quantile, cfg.objective.within_h * 3600
    days = [plan_jobs(cfg, data["seed"] + d) for d in range(2)]
    # n meets "95% of jobs within 8 h" on both days; n - 1 misses it on at least one
    assert all(result_of(p, cfg, "load-aware", n).fraction_within(h) >= q for p in days)
    assert not all(result_of(p, cfg, "load-aware", n - 1).fraction_within(h) >= q for p in days)


def test_capacity_command_writes_plot_and_rejects_bad_input(tmp_path: Path) -> None:
    from typer import Typer
    from typer.testing import CliRunner

    from simsched.cli.capacity_cmd import capacity_command

    app = Typer()
    app.command()(capacity_command)
    scen = tmp_path / "small.yaml"
    scen.write_text(yaml.safe_dump({"seed": 3, "autotuning": {
        "servers": [{"cores": 8, "gpus": 1}],
        "arrivals": {"rate_per_hour": 4, "duration_h": 2,
                     "jobs": [{"tasks": [{"name": "a"}, {"name": "b"}], "trials_per_task": 64, "batch_size": 16}]},
        "objective": {"quantile": 0.9, "within_h": 0.5}, "policies": ["sequential", "load-aware", "dedicated"]}}))
    plot = tmp_path / "cap.png"
    r = CliRunner().invoke(app, [str(scen), "--plot", str(plot), "--days", "3"])
    assert r.exit_code == 0, r.output
    assert "dedicated" in r.output and "3 simulated days" in r.output
    assert plot.read_bytes()[:4] == b"\x89PNG"
    bad = tmp_path / "bad.yaml"
    bad.write_text("autotuning:\n  servers: [{cores: 8}]\n  jobs:\n    - {model: resnet18, trails: 5}\n")
    r = CliRunner().invoke(app, [str(bad), "--plot", str(tmp_path / "no.png")])
    assert r.exit_code == 2
    assert "autotuning.jobs[0].trails: unknown field 'trails'" in r.output and ":4:" in r.output
    assert not (tmp_path / "no.png").exists()


@pytest.mark.parametrize("section, field", [
    ({"servers": [{"cores": 0}], "jobs": [{"tasks": [{"name": "a"}]}]}, "autotuning.servers[0].cores"),
    ({"servers": [{}], "jobs": [{"tasks": [{"name": "a"}], "model": "resnet18"}]}, "autotuning.jobs[0]"),
    ({"servers": [{}], "jobs": [{"tasks": [{"name": "a"}]}], "policies": ["fifo"]}, "autotuning"),
    ({"servers": [{}]}, "autotuning"),
])
def test_validation_names_the_field(section, field) -> None:
    with pytest.raises(SimschedError) as exc:
        validate_section(section)
    assert exc.value.field == field


def test_autotuning_errors_locate_fields_as_the_rest_of_the_schema(tmp_path: Path) -> None:
    """A bad autotuning job and a bad processor in one file: both fields are written ``name[index].field``
    (never ``jobs.1.count``), each with its line, and the unknown field lists the known ones."""
    from typer.testing import CliRunner

    from simsched.cli.main import app

    bad = tmp_path / "bad.yaml"
    bad.write_text("autotuning:\n  servers: [{cores: 8}]\n  jobs:\n    - {model: resnet18}\n"
                   "    - {model: resnet18, count: -1}\n")
    r = CliRunner().invoke(app, ["validate", str(bad)])
    assert r.exit_code == 2 and f"{bad}:5: autotuning.jobs[1].count: " in r.output, r.output
    plat = tmp_path / "plat.yaml"
    plat.write_text("platform:\n  processors:\n    - {name: a}\n    - {name: b, speed: -1}\n"
                    "workload: {generator: random, tasks: 5}\nschedulers: [heft]\n")
    r = CliRunner().invoke(app, ["validate", str(plat)])
    assert r.exit_code == 2 and f"{plat}:4: platform.processors[1].speed: " in r.output, r.output
    with pytest.raises(SimschedError) as exc:
        validate_section({"servers": [{}], "jobs": [{"model": "resnet18", "trails": 5}]})
    assert exc.value.field == "autotuning.jobs[0].trails"
    assert "expected one of: name, model, tasks, trials_per_task" in exc.value.message


def test_gradient_task_scheduler() -> None:
    tasks = tuning_tasks(STAND_IN)
    spec = JobSpec("g", tasks, trials_per_task=256, batch_size=16)
    curves = latency_curves(spec, np.random.default_rng(5))
    n = spec.n_rounds
    alloc = GradientTaskScheduler(eps=0.0)(curves, n, 16, np.random.default_rng(0))
    assert alloc.shape == (n,) and set(alloc[: len(tasks)]) == set(range(len(tasks)))
    rr = round_robin(curves, n, 16, np.random.default_rng(0))
    lat = [curves.model_latency(np.bincount(a, minlength=len(tasks)) * 16) for a in (alloc, rr)]
    assert lat[0] <= lat[1]


def test_model_tasks_from_dlmodels() -> None:
    pytest.importorskip("simsched.workloads.dlmodels")
    from simsched.workloads.autotuning import model_tasks

    assert 10 <= len(model_tasks("resnet18")) <= 30
    with pytest.raises(SimschedError):
        model_tasks("no-such-net")
