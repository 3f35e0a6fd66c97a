"""RL on dynamic job streams: arrived-only observations, the rollout forward model, tuned fair share."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from simsched.errors import SimschedError  # noqa: E402
from simsched.learned.rl.features import StaticInfo, observe  # noqa: E402
from simsched.learned.rl.rollout import ForwardModel, best_candidate, srjf_choice  # noqa: E402
from simsched.schedulers.jobaware import FairShareEFT, ShortestJobEFT  # noqa: E402
from simsched.simulator.engine import run_online  # noqa: E402
from simsched.simulator.jobmetrics import job_metrics  # noqa: E402
from simsched.simulator.platform import Platform, Processor  # noqa: E402
from simsched.simulator.problem import Problem, spread_over_platform  # noqa: E402
from simsched.workloads.generators import GENERATORS  # noqa: E402
from simsched.workloads.jobs import merge_jobs  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = Platform.uniform([Processor("a", speed=1.0), Processor("b", speed=2.0), Processor("c", speed=1.0)],
                            bandwidth=2.0, latency=0.1)


def jobs(rng, sizes, platform=PLATFORM, ccr=0.5):
    return [spread_over_platform(GENERATORS["random"](int(k), rng=rng, ccr=ccr), platform, {}) for k in sizes]


def snapshot(view):
    """The view's arrays copied: the engine's own arrays change after ``decide`` returns."""
    return dataclasses.replace(view, processor=view.processor.copy(), finish=view.finish.copy())


class Recorder:
    """Wraps an online policy; records every decision ``(time, [(task name, processor)])``."""

    def __init__(self, policy):
        self.policy, self.name, self.log = policy, policy.name, []

    def reset(self, problem, rng):
        self.policy.reset(problem, rng)

    def decide(self, view):
        out = self.policy.decide(view)
        self.log.append((view.now, [(view.problem.graph.names[t], p) for t, p in out]))  # arrived tasks only
        return out


@pytest.fixture(scope="module")
def arrived_only_checkpoint(tmp_path_factory):
    """A small random-weight network saved as an arrived-only job-stream checkpoint."""
    from simsched.learned.rl import checkpoint
    from simsched.learned.rl.config import TrainConfig
    from simsched.learned.rl.nets import ActorCritic

    torch.manual_seed(3)
    cfg = TrainConfig(scenario="online_jobs_4p.yaml", tasks=(2, 12), jobs=4, reward="jobs", arrived_only=True,
                      ppo={"hidden": 16, "layers": 2})
    path = tmp_path_factory.mktemp("ck") / "rl.pt"
    checkpoint.save(path, "rl", cfg.model_dump(), ActorCritic(16, 2).state_dict())
    return str(path)


def test_observation_holds_only_arrived_unfinished_jobs_and_ignores_later_ones():
    rng = np.random.default_rng(1)
    first, later = jobs(rng, [5, 7]), jobs(rng, [9, 4])
    other = jobs(np.random.default_rng(99), [20, 2])  # later jobs of another size, count and cost
    probs = [Problem(merge_jobs(first + tail, [0.0, 0.0, 50.0, 80.0]).graph, PLATFORM) for tail in (later, other)]
    obs = []
    for prob in probs:
        view = run_until(prob, 10.0)
        assert view.problem.n_tasks == 12  # the engine's view holds the arrived tasks only
        obs.append(observe(StaticInfo.of(view.problem, arrived_only=True), view))
    a, b = obs
    assert a.nodes.shape[0] == 12 and a.jobs.shape[0] == 2  # only the two arrived jobs' tasks
    assert a.tasks is None or np.array_equal(a.tasks, np.arange(12))  # every visible task is a row
    for field in ("nodes", "edges", "procs", "pairs", "jobs", "task_job", "globals", "task_mask", "proc_mask"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    view = run_until(probs[0], 10.0)
    full = observe(StaticInfo.of(view.problem), view)  # the default sees every arrived task, finished or not
    assert full.nodes.shape[0] == view.problem.n_tasks == 12 and full.tasks is None


def run_until(prob, t):
    """The view of the first decision point at or after time ``t`` of an srjf-eft run."""
    seen = []

    class Stop(ShortestJobEFT):
        def decide(self, view):
            if view.now >= t and not seen:
                seen.append(snapshot(view))
            return super().decide(view)

    run_online(prob, Stop())
    return seen[0]


@pytest.mark.parametrize("params", [{}, {"rollout": 2}, {"rollout": 2, "base": "network", "horizon": 5},
                                    {"checkpoint": "rl_dynamic"}, {"checkpoint": "rl_dynamic", "rollout": 2}])
def test_rl_decisions_before_an_arrival_do_not_depend_on_the_jobs_arriving_later(arrived_only_checkpoint, params):
    from simsched.schedulers import registry

    params = {"checkpoint": arrived_only_checkpoint, **params}  # a random network, or the shipped one

    rng = np.random.default_rng(5)
    head = jobs(rng, [6, 9, 4])
    arrivals = [0.0, 5.0, 12.0, 60.0, 90.0]
    logs = []
    for tail_seed, sizes in ((7, [8, 5]), (8, [2, 12])):
        tail = jobs(np.random.default_rng(tail_seed), sizes)
        stream = merge_jobs(head + tail, arrivals)
        rec = Recorder(registry.create("rl", **params))
        run_online(Problem(stream.graph, PLATFORM), rec)
        logs.append(rec.log)
    before = [[d for d in log if d[0] < 60.0] for log in logs]
    assert before[0] and before[0] == before[1]
    assert logs[0] != logs[1]  # the later jobs differ, so later decisions may too: the test can fail


def test_forward_model_reproduces_srjf_eft_exactly_without_noise():
    rng = np.random.default_rng(0)
    for _ in range(4):
        stream = merge_jobs(jobs(rng, rng.integers(3, 12, 4)), [0.0] * 4)
        prob = Problem(stream.graph, PLATFORM)
        views = [run_until(prob, 0.0)]  # deterministic: the first decision point of the same run
        schedule, _ = run_online(prob, ShortestJobEFT())
        real = job_metrics(schedule, stream.jobs, stream.job_arrival).mean_flow_time * 4
        srjf = ShortestJobEFT()
        srjf.reset(prob, rng)
        prio = np.zeros(4)
        model = ForwardModel(views[0], srjf.jobs, srjf.rank, srjf.cost, prio, stream.job_arrival)
        rec = {}
        est = model.simulate(None, srjf_choice(srjf.jobs, srjf.rank, prio), record=rec)
        assert est == pytest.approx(real, rel=1e-9)
        assert np.array_equal(rec["processor"], schedule.processor)
        assert np.allclose(rec["finish"], schedule.finish)


def test_rollout_never_picks_worse_than_the_base_action_in_the_model_and_handles_degenerate_inputs():
    rng = np.random.default_rng(2)
    one = Platform.uniform([Processor("solo")], bandwidth=1.0, latency=0.0)
    for platform in (PLATFORM, one):
        graphs = jobs(rng, [4, 6, 3], platform)
        zero = graphs[0].with_(work=np.zeros(graphs[0].n_tasks))  # zero costs
        stream = merge_jobs([zero] + graphs[1:], [0.0, 0.0, 0.0])
        prob = Problem(stream.graph, platform)
        view = run_until(prob, 0.0)
        srjf = ShortestJobEFT()
        srjf.reset(prob, rng)
        prio = np.zeros(3)
        choose = srjf_choice(srjf.jobs, srjf.rank, prio)
        model = ForwardModel(view, srjf.jobs, srjf.rank, srjf.cost, prio, stream.job_arrival)
        base = srjf.choose(view)
        cands = [base] + [(int(t), p) for t in view.ready for p in range(platform.n_processors)]
        best, costs = best_candidate(model, cands, choose)
        assert costs.min() <= costs[0] and best == cands[int(np.argmin(costs))]
        assert np.isfinite(costs).all()
        # a horizon cut still gives a finite, comparable estimate, and ties keep the first candidate
        best_h, costs_h = best_candidate(model, [base, base], choose, horizon=2)
        assert best_h == base and costs_h[0] == costs_h[1] and np.isfinite(costs_h).all()
        assert model.simulate(None, choose) == pytest.approx(costs[0])  # the base action is the base


def test_rl_rollout_parameters_are_checked():
    from simsched.schedulers import registry

    for bad in ({"rollout": -1}, {"base": "oracle"}, {"horizon": -3}, {"rollout": 1.5}, {"margin": 1.0}):
        with pytest.raises(SimschedError):
            registry.create("rl", checkpoint="rl_dynamic", **bad)


def test_tuned_fair_share_weights_jobs_by_their_work():
    from simsched.schedulers.jobaware import assume_assigned

    rng = np.random.default_rng(4)
    small, big = jobs(rng, [3, 12])
    stream = merge_jobs([big, small], [0.0, 0.0])
    prob = Problem(stream.graph, PLATFORM)
    view = run_until(prob, 0.0)
    pols = {a: FairShareEFT(alpha=a) for a in (-3.0, 0.0, 3.0)}
    for pol in pols.values():
        pol.reset(prob, rng)
    jobs_of = pols[0.0].jobs
    # nothing served yet: every weight ties at 0 service, broken by the earlier job (the big one)
    assert all(jobs_of[pol.pick_task(view, view.ready, ())] == 0 for pol in pols.values())
    for j in (0, 1):  # serve one task of each job
        t = int(view.ready[jobs_of[view.ready] == j][0])
        view = assume_assigned(view, t, j)
    work = np.bincount(jobs_of, weights=pols[0.0].cost)
    assert np.allclose(pols[-3.0].weight, work ** -3.0) and np.allclose(pols[0.0].weight, 1.0)
    assert jobs_of[pols[-3.0].pick_task(view, view.ready, ())] == 1  # alpha < 0: the small job first
    assert jobs_of[pols[3.0].pick_task(view, view.ready, ())] == 0  # alpha > 0: the big one
    with pytest.raises(SimschedError):
        FairShareEFT(alpha=float("nan"))


def test_stream_family_draws_training_days_that_are_never_the_scenarios_days():
    from simsched.learned.rl.family import StreamFamily
    from simsched.run.streams import stream_of

    fam = StreamFamily.from_scenario(ROOT / "scenarios/streams/rl_dynamic.yaml")
    a, b = fam.draw(10000), fam.draw(10000)
    assert np.array_equal(a.job_arrival, b.job_arrival) and np.array_equal(a.factors, b.factors)
    day = stream_of(fam.scenario, 10000)  # what `simsched run` calls day 10000
    assert not np.array_equal(a.job_arrival, day.job_arrival)
    assert fam.disruptions.active and a.problem.n_processors == 8
    assert a.problem.n_tasks <= fam.tasks[1] * fam.n_jobs and len(a.job_arrival) <= fam.n_jobs


def test_the_shipped_dynamic_checkpoint_sees_arrived_jobs_only_and_states_its_world():
    from simsched.schedulers import registry

    pol = registry.create("rl", checkpoint="rl_dynamic")
    assert pol.checkpoint.endswith("rl_dynamic.pt") and pol.arrived_only
    rng = pol.training_range()
    assert rng.processors == (8, 8) and rng.tasks[0] <= 5 and rng.tasks[1] >= 58  # random DAGs to Montage
    assert not registry.create("rl").arrived_only  # the single-DAG checkpoint observes the whole graph


def test_dynamic_comparison_parses_specs_shifts_worlds_and_pairs_days(tmp_path, capsys):
    import json

    from simsched.learned.rl import dynamic

    assert dynamic.parse_spec("fair-eft:alpha=-0.5") == ("fair-eft", {"alpha": -0.5})
    spec = dynamic.parse_spec("rl:checkpoint=rl_dynamic:rollout=3")
    assert spec == ("rl", {"checkpoint": "rl_dynamic", "rollout": 3})
    with pytest.raises(ValueError):
        dynamic.parse_spec("rl:rollout")
    path = str(ROOT / "scenarios/streams/rl_dynamic.yaml")
    base = dynamic.shifted(path, None)
    st = base.workload.options["stream"]
    assert dynamic.shifted(path, "2x jobs").workload.options["stream"].count == 2 * st.count
    two = dynamic.shifted(path, "2x processors")
    assert two.platform.n_processors == 2 * base.platform.n_processors
    assert [r for _, r in two.workload.options["stream"].rates] == [2 * r for _, r in st.rates]
    hot = dynamic.shifted(path, "load 110%").workload.options["stream"].rates
    assert all(h[1] > r[1] for h, r in zip(hot, st.rates))
    assert dynamic.shifted(path, "sigma 1.5").noise.sigma == 1.5
    unseen = dynamic.shifted(path, "unseen job families").workload.options["stream"].sources
    assert {s.spec.form for s in unseen} == {"stg", "dot", "generator"}
    # a tiny real comparison, written and merged back: the reference is 1 against itself
    jct, wall = dynamic.compare(base, ["srjf-eft", "mct"], [("srjf-eft", {}), ("mct", {})], [10000, 10001])
    assert set(jct["mct"]) == {10000, 10001} and all(v > 0 for v in jct["srjf-eft"].values())
    text = dynamic.table(jct, wall)
    assert "| srjf-eft | 2 |" in text and "1.000 [1.000, 1.000]" in text
    out = tmp_path / "a.json"
    assert dynamic.main([path, "--seed", "10002", "--seeds", "1", "--shift", "sigma 0.2", "--json", str(out),
                         "-s", "rl=srjf-eft", "-s", "srjf-eft", "-s", "mct"]) == 0
    assert json.loads(out.read_text())["shift"] == "sigma 0.2"
    capsys.readouterr()
    assert dynamic.main([path, "--merge", str(out), "--shift-table"]) == 0
    assert "| sigma 0.2 | 1 |" in capsys.readouterr().out
