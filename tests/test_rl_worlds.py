"""``rl`` with the world's description in its observation, trained across worlds (rl_worlds.pt):
checkpoints without the flag observe and decide exactly as before (pinned schedules); with it, the
global features end with the world block of the arrived work only (no future: the contract's
perturbation check and a direct comparison), the numpy forward picks torch's action on the wider
input, the shipped rl_worlds checkpoint loads with its training range recorded and stays inside it on
the bar's platform, and the training loop runs end to end on a tiny budget."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import schedule_digest  # noqa: E402

from simsched.learned.rl.features import (  # noqa: E402
    GLOBAL_FEATURES,
    WORLD_OBS,
    StaticInfo,
    WorldSeen,
    observe,
    world_description,
)
from simsched.run.streams import simulate_stream  # noqa: E402
from simsched.scenario import load_scenario  # noqa: E402
from simsched.schedulers import registry  # noqa: E402
from simsched.simulator.engine import run_online  # noqa: E402
from simsched.simulator.platform import Platform, Processor  # noqa: E402
from simsched.simulator.problem import Problem, spread_over_platform  # noqa: E402
from simsched.workloads.generators import GENERATORS  # noqa: E402
from simsched.workloads.jobs import merge_jobs  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BAR = ROOT / "scenarios" / "streams" / "rl_dynamic.yaml"
WORLDS = ROOT / "simsched" / "learned" / "rl" / "data" / "rl_worlds.pt"

# schedules of the old checkpoints on days of the bar (guard off, so the network decides): rl_dynamic's
# recorded before the world block existed; rl.pt's (a checkpoint that observes every job, arrived or not)
# recorded at a16c820, when it replaced the removed rl_online.pt, the other checkpoint that observes so
BEFORE = {("rl_dynamic", 10000): "c86c2a94b0a987895b402c9744172f9b",
          ("rl", 10001): "4b7bb37a27c2c804ca88fc2930cde3ea"}


def stream_problem(seed: int, m: int = 4, sizes=(6, 9, 4, 12, 5, 7, 8, 3, 10), gap: float = 12.0) -> Problem:
    rng = np.random.default_rng(seed)
    procs = [Processor(f"p{i}", speed=1.0 + 2 * (i == 0)) for i in range(m)]
    platform = Platform.uniform(procs, bandwidth=2.0, latency=0.1)
    graphs = [spread_over_platform(GENERATORS["random"](int(k), rng=rng, ccr=0.5), platform, {}) for k in sizes]
    return Problem(merge_jobs(graphs, [gap * i for i in range(len(sizes))]).graph, platform)


def observations(problem: Problem, world: bool) -> list:
    """The arrived-only observation at every decision point of an srjf-eft run (one StaticInfo per
    arrival, the world carried over, as the agent keeps them)."""
    from simsched.schedulers.jobaware import ShortestJobEFT

    seen = []

    class Watch(ShortestJobEFT):
        info = None

        def decide(self, view):
            if self.info is None or self.info.problem is not view.problem:
                carry = self.info.world if self.info is not None else (WorldSeen() if world else None)
                self.info = StaticInfo.of(view.problem, arrived_only=True, world=carry)
            if view.ready.size:
                seen.append((view.now, observe(self.info, view)))
            return super().decide(view)

    run_online(problem, Watch())
    return seen


@pytest.mark.parametrize("checkpoint,day", list(BEFORE))
def test_old_checkpoints_decide_exactly_as_before(checkpoint, day):
    sc = load_scenario(BAR)
    run = simulate_stream(sc, "rl", day, scheduler=registry.create("rl", checkpoint=checkpoint, guard=False))
    assert schedule_digest(run.schedule) == BEFORE[(checkpoint, day)]


def test_without_the_flag_the_globals_are_the_four_old_ones_and_with_it_the_world_block_follows():
    problem = stream_problem(1)
    plain = observations(problem, world=False)
    wide = observations(problem, world=True)
    assert len(plain) == len(wide) > 10
    for (_, a), (_, b) in zip(plain, wide):
        assert a.globals.shape == (GLOBAL_FEATURES,) and b.globals.shape == (GLOBAL_FEATURES + WORLD_OBS,)
        np.testing.assert_array_equal(a.globals, b.globals[:GLOBAL_FEATURES])
        np.testing.assert_array_equal(a.nodes, b.nodes)
        assert np.isfinite(b.globals).all()
    # the block is world_description of the arrived work (no failures here): processors, speed ratio
    now, last = wide[-1]
    from simsched.simulator.arrived import restrict

    k = int((problem.graph.arrival <= now).sum())
    sub = restrict(problem, k)
    from simsched.workloads.jobs import job_ids

    jobs = job_ids(sub.graph)
    ja = np.full(int(jobs.max()) + 1, np.inf)
    np.minimum.at(ja, jobs, sub.graph.arrival)
    from simsched.schedulers.heft import upward_rank

    want = world_description(sub, jobs, ja, np.nan_to_num(upward_rank(sub), nan=0.0, posinf=0.0))
    np.testing.assert_allclose(last.globals[GLOBAL_FEATURES:], want.astype(np.float32), rtol=1e-6)
    assert last.globals[GLOBAL_FEATURES + 2] == pytest.approx(2.0)  # log2 of 4 processors


def test_the_world_block_does_not_see_jobs_that_have_not_arrived():
    """Two streams equal up to the 5th arrival, different after: every observation before it is equal."""
    a = stream_problem(2, sizes=(6, 9, 4, 12, 5, 7, 8))
    b = stream_problem(2, sizes=(6, 9, 4, 12, 5, 30, 2, 2, 2, 25))
    cut = 5 * 12.0
    oa = [o for t, o in observations(a, True) if t < cut]
    ob = [o for t, o in observations(b, True) if t < cut]
    assert len(oa) == len(ob) > 3
    for x, y in zip(oa, ob):
        np.testing.assert_array_equal(x.globals, y.globals)


def test_the_world_block_counts_failures_seen():
    """A view with a processor down (not idle, no work, available later) raises the failure entry."""
    from simsched.simulator.policy import DecisionView

    problem = stream_problem(3, sizes=(5, 5))
    info = StaticInfo.of(problem, arrived_only=True, world=WorldSeen())
    n, m = problem.n_tasks, problem.n_processors
    idle = np.ones(m, dtype=bool)
    base = dict(problem=problem, ready=np.array([0]), finish=np.full(n, np.nan), processor=np.full(n, -1))
    up = DecisionView(now=20.0, available=np.full(m, 20.0), idle=idle, **base)
    down_idle = idle.copy()
    down_idle[1] = False
    avail = np.full(m, 20.0)
    avail[1] = 80.0
    down = DecisionView(now=20.0, available=avail, idle=down_idle, **base)
    assert observe(info, up).globals[-1] == 0.0
    assert observe(info, down).globals[-1] > 0.0 and info.world.failures == 1
    observe(info, down)
    assert info.world.failures == 1  # still down: the same failure


def test_numpy_forward_takes_torch_action_with_the_world_block():
    from simsched.learned.rl.fastnet import NumpyActor, single_threaded_blas
    from simsched.learned.rl.nets import ActorCritic, collate

    torch.manual_seed(5)
    net = ActorCritic(16, 2, GLOBAL_FEATURES + WORLD_OBS)
    net.eval()
    fast = NumpyActor(net.state_dict(), 2)
    obs = [o for _, o in observations(stream_problem(4), True)]
    assert len(obs) > 10

    def torch_action(o):
        with torch.no_grad():
            t, p, *_ = net(collate([o]), greedy=True)
        return int(t[0]), int(p[0])

    with single_threaded_blas():
        assert [fast.act(o) for o in obs] == [torch_action(o) for o in obs]


def test_the_worlds_checkpoint_loads_observes_the_world_and_records_its_range():
    from simsched.learned.rl import checkpoint

    assert WORLDS.is_file()
    agent = registry.create("rl", checkpoint="rl_worlds")
    assert agent.world_obs and agent.arrived_only
    cfg = checkpoint.load(agent.checkpoint, "rl")["config"]
    assert cfg["worlds"] and cfg["world_obs"] and cfg["arrived_only"]
    rng = agent.training_range()
    assert rng.processors[0] <= 8 <= rng.processors[1]  # the bar's 6 CPUs + 2 GPUs
    assert rng.speed_ratio[0] <= 3.0 <= rng.speed_ratio[1]
    assert rng.load is not None and rng.tasks is not None
    from simsched.learned.rl.policy import _load

    net = _load("rl", agent.checkpoint)
    assert net.world_obs and net.encoder.glob_inp.in_features == GLOBAL_FEATURES + WORLD_OBS + 2 * net.encoder.hidden


def test_the_worlds_checkpoint_stays_in_range_on_the_bar_and_decides_as_torch():
    from simsched.learned.rl.policy import GuardWarning

    sc = load_scenario(BAR)
    runs = []
    for torch_forward in (False, True):
        agent = registry.create("rl", checkpoint="rl_worlds")
        agent.torch_forward = torch_forward
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            runs.append(simulate_stream(sc, "rl", 10002, scheduler=agent))
        assert agent.rule is None
        assert not [w for w in caught if issubclass(w.category, GuardWarning)]
    np.testing.assert_array_equal(runs[0].schedule.processor, runs[1].schedule.processor)
    np.testing.assert_array_equal(runs[0].schedule.start, runs[1].schedule.start)


def test_the_worlds_checkpoint_passes_the_no_future_contract():
    from simsched.testing.contract import check_scheduler
    from simsched.testing.strategies import ProblemSpace

    space = ProblemSpace(max_tasks=10, min_processors=3, max_processors=4, arrivals=10.0)
    report = check_scheduler(registry.create("rl", checkpoint="rl_worlds", guard=False), examples=6,
                             properties=["no-future"], space=space)
    assert report.passed, [d.message for d in report.defects]


def test_worlds_family_episodes_carry_their_world_and_stay_in_the_train_space():
    from simsched.learned.rl.worldfamily import WorldsFamily
    from simsched.run.seedspace import space_of

    fam = WorldsFamily()
    ep = fam.draw(0)
    assert space_of(fam.world_seed(0)) == "train" and space_of(fam.world_seed(10**6)) == "train"
    assert ep.disruptions is not None and ep.problem.n_processors <= fam.max_processors
    assert len(ep.job_arrival) <= fam.n_jobs and np.bincount(ep.jobs).max() <= fam.tasks[1]
    again = fam.draw(0)
    np.testing.assert_array_equal(ep.problem.W, again.problem.W)


def test_budget_cli_refuses_bad_options_in_one_line(capsys, tmp_path):
    from simsched.learned.rl.budget import main

    for args in (["--budget-min", "nan"], ["--budget-min", "-1"], ["--select-days", "0"], ["--seed", "-3"],
                 ["--range-draws", "0"], ["--bc-episodes", "0"], ["--bar-days", "-1"]):
        assert main(["worlds", "-o", str(tmp_path / "o"), *args]) == 2
        out = capsys.readouterr().out.strip().splitlines()
        assert len(out) == 1 and out[0].startswith("error: --")
    assert not (tmp_path / "o").exists()


def test_rl_without_a_checkpoint_hands_a_job_stream_to_the_rule():
    """The shipped default: no stream checkpoint switched in, so plain ``rl`` on a stream is srjf-eft's
    schedule exactly (the guard's fallback), and a single DAG is decided by ``rl.pt``."""
    from simsched.learned.rl import policy
    from simsched.schedulers.jobaware import ShortestJobEFT

    assert policy.STREAM_DEFAULT is None
    problem = stream_problem(6, sizes=(6, 9, 4, 12))
    agent = policy.RLPolicy(guard=True)
    with pytest.warns(policy.GuardWarning):
        got = run_online(problem, agent)[0]
    want = run_online(problem, ShortestJobEFT())[0]
    assert agent.checkpoint.endswith("rl.pt") and agent.rule is not None
    np.testing.assert_array_equal(got.processor, want.processor)
    np.testing.assert_array_equal(got.start, want.start)


def test_rl_without_a_checkpoint_uses_rl_worlds_on_job_streams_and_rl_pt_on_single_dags(monkeypatch):
    """The switch a stream default makes (``policy.STREAM_DEFAULT`` set): the stream checkpoint decides
    a stream exactly as when named, single DAGs keep ``rl.pt``, the range checked is the stream one's."""
    from simsched.learned.rl import policy
    from simsched.learned.rl.policy import RLPolicy

    monkeypatch.setattr(policy, "STREAM_DEFAULT", "rl_worlds")

    problem = stream_problem(6, sizes=(6, 9, 4, 12))
    default, named = RLPolicy(), RLPolicy(checkpoint="rl_worlds")
    runs = [run_online(problem, agent)[0] for agent in (default, named)]
    assert default.checkpoint.endswith("rl_worlds.pt") and default.world_obs and default.rule is None
    np.testing.assert_array_equal(runs[0].processor, runs[1].processor)
    np.testing.assert_array_equal(runs[0].start, runs[1].start)
    dag = Problem(GENERATORS["random"](20, rng=np.random.default_rng(1), processors=4), problem.platform)
    single = RLPolicy()
    run_online(dag, single)
    assert single.checkpoint.endswith("rl.pt") and not single.world_obs
    line = RLPolicy().range_warning(problem, "rl")  # the runner's check, before the run: rl_worlds's range
    assert line is None
