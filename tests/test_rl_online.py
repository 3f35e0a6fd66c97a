"""The online job-stream family of the RL agent: heuristic baselines, the jobs objective, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gymnasium")
torch = pytest.importorskip("torch")

from simsched.learned.rl.baselines import ShortestJobEFT, StaticPlanPolicy, heuristics  # noqa: E402
from simsched.learned.rl.env import SchedulingEnv, default_family  # noqa: E402
from simsched.simulator.engine import Disruptions, run_online  # noqa: E402
from simsched.simulator.jobmetrics import job_metrics  # noqa: E402
from simsched.simulator.platform import Platform, Processor  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def stream_family(sigma=None, stragglers=False):
    fam = default_family()
    fam.tasks, fam.n_jobs, fam.job_rate = (3, 10), 4, 0.05
    fam.sigma_range = sigma
    if stragglers:
        fam.disruptions = Disruptions(slowdown_rate=0.01, slowdown_duration=20.0)
    return fam


def test_static_plan_policy_reproduces_the_plan_without_communication_or_noise():
    from simsched.schedulers.heft import heft_schedule

    fam = stream_family()
    fam.platform = Platform.uniform([Processor(f"p{i}") for i in range(4)], bandwidth=1e12, latency=0.0)
    for seed in range(3):
        ep = fam.draw(seed)
        plan = heft_schedule(ep.problem)
        s, _ = run_online(ep.problem, StaticPlanPolicy(plan), None)
        assert (s.processor == plan.processor).all()
        assert np.allclose(s.finish, plan.finish)


def test_shortest_job_first_serves_the_job_with_least_remaining_work():
    fam = stream_family()
    fam.job_rate = 1e6  # every job arrives at once
    ep = fam.draw(4)
    pol = ShortestJobEFT()
    pol.reset(ep.problem, np.random.default_rng(0))
    env = SchedulingEnv(fam, reward="jobs", max_tasks=64)
    env.load(ep)
    t, _ = pol.choose(env.view)
    work = np.bincount(ep.jobs, weights=ep.problem.mean_cost)
    ready_jobs = np.unique(ep.jobs[env.view.ready])
    assert ep.jobs[t] == ready_jobs[np.argmin(work[ready_jobs])]


def test_jobs_reward_sums_to_the_jct_ratio_and_every_heuristic_runs_under_stragglers():
    fam = stream_family(sigma=(0.5, 1.0), stragglers=True)
    env = SchedulingEnv(fam, reward="jobs", max_tasks=64)
    env.reset(seed=7)
    pol = ShortestJobEFT()
    pol.reset(env.episode.problem, np.random.default_rng(0))
    total, done = 0.0, False
    while not done:
        _, r, done, _, info = env.step(pol.choose(env.view))
        total += r
    ep = env.episode
    jct = job_metrics(env.session.schedule(), ep.jobs, ep.job_arrival).mean_flow_time
    assert np.isclose(info["score"], jct) and np.isclose(total, -jct / info["baseline_score"])
    for name, policy in heuristics(ep).items():
        s, stats = run_online(ep.problem, policy, ep.factors, np.random.default_rng(0), fam.disruptions,
                              np.random.default_rng(ep.disruption_seed))
        assert not np.isnan(s.finish).any(), name
    # the same episode under the same seed, whatever the policy: ShortestJobEFT's own run in the engine
    s, _ = run_online(ep.problem, ShortestJobEFT(), ep.factors, np.random.default_rng(0), fam.disruptions,
                      np.random.default_rng(ep.disruption_seed))
    assert np.isclose(job_metrics(s, ep.jobs, ep.job_arrival).mean_flow_time, jct)


def test_tiny_online_training_reports_the_job_table(tmp_path):
    cfg = tmp_path / "c.yaml"
    text = (ROOT / "scenarios/rl/train_online_tiny.yaml").read_text()
    text = text.replace("online_jobs_4p.yaml", str(ROOT / "scenarios/rl/online_jobs_4p.yaml"))
    text = text.replace("../../out/rl-online-tiny", str(tmp_path / "out"))
    text = text.replace("final_seeds: 10", "final_seeds: 3")
    cfg.write_text(text)
    r = subprocess.run([sys.executable, "-m", "simsched.cli.main", "train", "rl", str(cfg), "--report"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    data = json.loads((tmp_path / "out/report.json").read_text())
    rows = {row["policy"]: row for row in data["jobs_table"]["rows"]}
    assert set(rows) == {"rl", "heft-static", "online-heft", "mct", "minmin", "srjf-eft"}
    assert data["jobs_table"]["best_heuristic"] in ("heft-static", "online-heft", "mct", "minmin")
    assert "| srjf-eft |" in r.stdout and "| rl |" in (tmp_path / "out/report.md").read_text()
    import matplotlib.image as mpimg

    img = mpimg.imread(tmp_path / "out/report.png")[..., :3]
    right = img[:, img.shape[1] // 2 + 40:]  # the job table's bars: the right half is drawn, not blank
    assert (right.mean(axis=2) < 0.9).mean() > 0.02
    from simsched.learned.rl.checkpoint import load

    stored = load(tmp_path / "out/rl.pt", "rl")["config"]  # the family travels with the checkpoint
    assert stored["jobs"] == 4 and list(stored["sigma"]) == [0.5, 1.0] and stored["reward"] == "jobs"
    bad = tmp_path / "bad.yaml"
    bad.write_text("sigma: [1.0, 0.5]\n")
    r = subprocess.run([sys.executable, "-m", "simsched.cli.main", "train", "rl", str(bad)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "sigma" in r.stderr and "Traceback" not in r.stderr


def test_shipped_job_stream_checkpoints_are_found_by_name_and_a_withdrawn_one_says_what_to_name():
    from simsched.errors import SimschedError
    from simsched.schedulers import registry

    assert registry.create("rl", checkpoint="rl_dynamic").checkpoint.endswith("rl_dynamic.pt")
    assert registry.create("rl", checkpoint="rl_dynamic.pt").checkpoint.endswith("rl_dynamic.pt")
    assert registry.create("rl").checkpoint.endswith("rl.pt")
    for name in ("rl_online", "rl_online.pt"):  # removed: it always handed its decisions to srjf-eft
        with pytest.raises(SimschedError, match="no longer shipped.*name srjf-eft"):
            registry.create("rl", checkpoint=name)



def test_generalisation_shifts_change_only_what_they_name():
    from simsched.learned.rl.config import load_config
    from simsched.learned.rl.generalise import shifted_families

    cfg = load_config(ROOT / "scenarios/rl/train_online_tiny.yaml")  # the job-stream family it trains on
    fams = shifted_families(cfg)
    base = fams["trained family"]
    assert len(fams) == 7
    assert fams["2x jobs per stream"].n_jobs == 2 * base.n_jobs
    two = fams["2x processors (same load)"]
    assert two.platform.n_processors == 2 * base.platform.n_processors and two.job_rate == 2 * base.job_rate
    assert fams["load 70%"].job_rate < base.job_rate < fams["load 110%"].job_rate
    assert fams["sigma 0.2"].sigma_range == (0.2, 0.2) and fams["sigma 1.5"].sigma_range == (1.5, 1.5)
    assert base.sigma_range == tuple(cfg.sigma) and base.n_jobs == cfg.jobs  # the shifts copied, never mutated
    ep = two.draw(3)
    assert ep.problem.n_processors == 8 and ep.problem.W.shape[1] == 8
