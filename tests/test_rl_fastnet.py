"""The numpy forward of the rl policy network (simsched.learned.rl.fastnet) picks the torch network's
actions: on every decision of small job streams (random networks of three shapes, wider inputs, and
the shipped rl_dynamic checkpoint on a day of its own scenario), on degenerate observations (no
edges, one processor, one ready task), and whole runs give equal schedules.  Its caches (the
observation's row structure, the actor's index structure and first round) give what a computation
from scratch gives."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from simsched.learned.rl.fastnet import NumpyActor, agreement, single_threaded_blas, torch_logits  # noqa: E402
from simsched.learned.rl.features import StaticInfo, observe  # noqa: E402
from simsched.learned.rl.nets import ActorCritic, collate  # noqa: E402
from simsched.schedulers.jobaware import ShortestJobEFT  # noqa: E402
from simsched.simulator.engine import run_online  # noqa: E402
from simsched.simulator.platform import Platform, Processor  # noqa: E402
from simsched.simulator.problem import Problem, spread_over_platform  # noqa: E402
from simsched.workloads.generators import GENERATORS  # noqa: E402
from simsched.workloads.jobs import merge_jobs  # noqa: E402


def stream_problem(seed: int, m: int = 3, sizes=(6, 9, 4, 12), gap: float = 15.0) -> Problem:
    rng = np.random.default_rng(seed)
    procs = [Processor(f"p{i}", speed=1.0 + i % 2) for i in range(m)]
    platform = Platform.uniform(procs, bandwidth=2.0, latency=0.1)
    graphs = [spread_over_platform(GENERATORS["random"](int(k), rng=rng, ccr=0.5), platform, {}) for k in sizes]
    return Problem(merge_jobs(graphs, [gap * i for i in range(len(sizes))]).graph, platform)


def observations(problem: Problem) -> list:
    """The arrived-only observation of every decision point of an srjf-eft run."""
    seen = []

    class Watch(ShortestJobEFT):
        def decide(self, view):
            if view.ready.size:
                seen.append(observe(StaticInfo.of(view.problem, arrived_only=True), view))
            return super().decide(view)

    run_online(problem, Watch())
    return seen


def torch_action(net: ActorCritic, obs) -> tuple[int, int]:
    with torch.no_grad():
        t, p, *_ = net(collate([obs]), greedy=True)
    return int(t[0]), int(p[0])


def net_of(seed: int, hidden: int, layers: int) -> ActorCritic:
    torch.manual_seed(seed)
    net = ActorCritic(hidden, layers)
    net.eval()
    return net


COMPILED = [pytest.param(True, id="compiled"), pytest.param(False, id="numpy")]
numba = pytest.importorskip("numba")


@pytest.mark.parametrize("compiled", COMPILED)
@pytest.mark.parametrize("hidden,layers", [(16, 1), (32, 3), (8, 0)])
def test_numpy_forward_takes_the_torch_networks_action_at_every_decision(hidden, layers, compiled):
    net = net_of(hidden + layers, hidden, layers)
    fast = NumpyActor(net.state_dict(), layers, compiled=compiled)
    obs = observations(stream_problem(1)) + observations(stream_problem(2, m=1, sizes=(3, 1, 5)))
    assert len(obs) > 20
    with single_threaded_blas():
        assert [fast.act(o) for o in obs] == [torch_action(net, o) for o in obs]


@pytest.mark.parametrize("compiled", COMPILED)
def test_numpy_forward_on_degenerate_observations(compiled):
    net = net_of(7, 16, 2)
    fast = NumpyActor(net.state_dict(), 2, compiled=compiled)
    base = observations(stream_problem(3, m=1, sizes=(1, 1, 2)))
    no_edges = [dataclasses.replace(o, edges=np.zeros((2, 0), dtype=np.int64)) for o in observations(stream_problem(4))]
    for o in base + no_edges:
        assert fast.act(o) == torch_action(net, o)
    single = [o for o in base if o.task_mask.sum() == 1]
    assert single and all(fast.act(o)[0] == int(np.flatnonzero(o.task_mask)[0]) for o in single)


def test_shipped_checkpoint_numpy_and_torch_runs_give_equal_schedules():
    from simsched.schedulers import registry

    problem = stream_problem(5, m=8, sizes=(12, 20, 8, 25, 6, 15), gap=40.0)
    runs = []
    for torch_forward in (False, True):
        agent = registry.create("rl", checkpoint="rl_dynamic", guard=False)
        agent.torch_forward = torch_forward
        schedule, _ = run_online(problem, agent)
        runs.append(schedule)
    assert np.array_equal(runs[0].processor, runs[1].processor)
    assert np.array_equal(runs[0].start, runs[1].start)


def test_blas_limit_is_restored_after_a_decision():
    from threadpoolctl import threadpool_info

    before = [i["num_threads"] for i in threadpool_info()]
    with single_threaded_blas():
        inside = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    assert all(n == 1 for n in inside)
    assert [i["num_threads"] for i in threadpool_info()] == before


class IdleWatch:
    """Wraps an online policy and records whether every assignment went to an idle processor, each
    at most once per decision."""

    def __init__(self, policy):
        self.policy, self.name, self.ok, self.assigned = policy, policy.name, True, 0

    def reset(self, problem, rng):
        self.policy.reset(problem, rng)

    def decide(self, view):
        out = self.policy.decide(view)
        procs = [p for _, p in out]
        self.ok &= all(view.idle[p] for p in procs) and len(set(procs)) == len(procs)
        self.assigned += len(out)
        return out


@pytest.mark.parametrize("make", [
    lambda: ShortestJobEFT(late_binding=True),
    lambda: __import__("simsched.schedulers", fromlist=["registry"]).registry.create(
        "rl", checkpoint="rl_dynamic", guard=False, late_binding=True),
])
def test_late_binding_places_only_on_idle_processors_and_finishes_every_task(make):
    from simsched.simulator.schedule import validate_schedule

    for seed, m in ((6, 3), (7, 1)):
        problem = stream_problem(seed, m=m)
        watch = IdleWatch(make())
        schedule, _ = run_online(problem, watch)
        assert watch.ok and watch.assigned >= problem.n_tasks
        assert not validate_schedule(schedule, problem)


def test_late_binding_off_is_the_default_rule_and_bad_values_are_refused():
    from simsched.errors import SimschedError
    from simsched.schedulers import registry

    problem = stream_problem(8)
    a, _ = run_online(problem, ShortestJobEFT())
    b, _ = run_online(problem, registry.create("srjf-eft", late_binding=False))
    assert np.array_equal(a.processor, b.processor) and np.array_equal(a.start, b.start)
    for bad in (None, "maybe", 2.5):  # the registry coerces "yes" and 1 to true, as for every boolean
        with pytest.raises(SimschedError, match="late_binding"):
            registry.create("srjf-eft", late_binding=bad)
        with pytest.raises(SimschedError, match="late_binding"):
            registry.create("rl", checkpoint="rl_dynamic", late_binding=bad)


@pytest.mark.parametrize("arrived_only", [True, False])
def test_cached_observation_equals_one_built_from_scratch_at_every_decision(arrived_only):
    """One StaticInfo per visible problem (its row-structure cache hit while no job arrives or
    finishes) gives, field for field, the observation of a fresh StaticInfo, arrived-only or not."""
    infos, seen, hits = {}, [], [0]

    class Watch(ShortestJobEFT):
        def decide(self, view):
            if view.ready.size:
                info = infos.setdefault(id(view.problem), StaticInfo.of(view.problem, arrived_only=arrived_only))
                before = info.rows_cache
                cached = observe(info, view)
                hits[0] += info.rows_cache is before and before is not None
                seen.append((cached, observe(StaticInfo.of(view.problem, arrived_only=arrived_only), view)))
            return super().decide(view)

    run_online(stream_problem(11, sizes=(6, 9, 4, 12, 3)), Watch())
    assert len(seen) > 20 and hits[0] > 5
    for cached, fresh in seen:
        for f in dataclasses.fields(cached):
            a, b = getattr(cached, f.name), getattr(fresh, f.name)
            assert (a is None and b is None) or (np.array_equal(a, b, equal_nan=True)
                                                 and np.asarray(a).dtype == np.asarray(b).dtype), f.name


def test_actor_caches_give_the_actions_and_embeddings_of_a_fresh_actor():
    """The actor's cached structure and first round (kept across observations with the same rows)
    give the embeddings of an actor that computes everything afresh, in any order of observations."""
    net = net_of(3, 16, 2)
    cached = NumpyActor(net.state_dict(), 2)
    obs = observations(stream_problem(12)) + observations(stream_problem(13, m=2))
    order = obs + obs[::-1] + obs[::3]
    with single_threaded_blas():
        for o in order:
            fresh = NumpyActor(net.state_dict(), 2)
            assert cached.act(o) == fresh.act(o)
            for a, b in zip(cached.encode(o), fresh.encode(o)):
                if cached.compiled:  # a row's result depends on its inputs alone: equal to the bit
                    np.testing.assert_array_equal(a, b)
                else:
                    np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)


@pytest.mark.parametrize("compiled", COMPILED)
@pytest.mark.parametrize("extra_nodes,extra_globals,hidden", [(2, 3, 16), (5, 9, 24)])
def test_numpy_forward_reads_input_widths_from_the_weights(monkeypatch, compiled, extra_nodes, extra_globals, hidden):
    """A checkpoint whose node and global inputs are wider (features appended, as a world description
    appended to the global features) loads and decides as torch does, compiled or not: no width is
    taken from the feature module."""
    import simsched.learned.rl.nets as nets

    monkeypatch.setattr(nets, "NODE_FEATURES", nets.NODE_FEATURES + extra_nodes)
    monkeypatch.setattr(nets, "GLOBAL_FEATURES", nets.GLOBAL_FEATURES + extra_globals)
    net = net_of(5, hidden, 2)
    fast = NumpyActor(net.state_dict(), 2, compiled=compiled)
    rng = np.random.default_rng(0)
    for o in observations(stream_problem(14)):
        wide = dataclasses.replace(
            o, nodes=np.hstack([o.nodes, rng.random((o.nodes.shape[0], extra_nodes), dtype=np.float32)]),
            globals=np.concatenate([o.globals, rng.random(extra_globals, dtype=np.float32)]))
        assert fast.act(wide) == torch_action(net, wide)


@pytest.mark.slow
def test_shipped_checkpoint_takes_torchs_action_at_every_decision_of_a_day():
    """rl_dynamic on a day of its own scenario (failures, stragglers, noise, arrivals): at every
    placement the numpy forward's action is the torch network's on the same observation."""
    from pathlib import Path

    from simsched.learned.rl.policy import RLPolicy
    from simsched.run.streams import simulate_stream
    from simsched.scenario import load_scenario

    sc = load_scenario(Path(__file__).resolve().parents[1] / "scenarios" / "streams" / "rl_dynamic.yaml")
    checked, wrong = [0], []

    unsafe, diffs = [], []

    class Both(RLPolicy):
        def choose(self, view):
            obs = observe(self.info, view)
            t, p = self.model.numpy_actor.act(obs)
            checked[0] += 1
            if (t, p) != torch_action(self.model, obs):
                wrong.append(checked[0])
            if self.model.numpy_actor.compiled:  # logits within rounding, and no choice near a flip
                tl, pl, row = self.model.numpy_actor.logits(obs)
                ttl, tpl = torch_logits(self.model, obs, row)
                for ours, theirs in ((tl, ttl), (pl[obs.proc_mask[row]], tpl[obs.proc_mask[row]])):
                    diff, _, _, safe = agreement(ours, theirs)
                    diffs.append(diff)
                    if not safe:
                        unsafe.append(checked[0])
            return super().choose(view)

    simulate_stream(sc, "rl", int(sc.seed) + 7, scheduler=Both(checkpoint="rl_dynamic"))
    assert checked[0] > 100 and not wrong and not unsafe
    assert max(diffs) < 1e-4


@pytest.mark.parametrize("arrived_only", [True, False])
def test_compiled_observation_equals_the_numpy_one_bit_for_bit(arrived_only):
    """observe's compiled path (observe_fill, open_rows) gives every field of its numpy path with the
    same bytes and dtype, at every decision of streams with arrivals, finished jobs and one processor."""
    import simsched.learned.rl.features as features

    infos, checked = {}, [0]

    class Watch(ShortestJobEFT):
        def decide(self, view):  # compared here: the engine's view arrays change after the decision
            if view.ready.size:
                key = id(view.problem)
                if key not in infos:
                    infos[key] = (StaticInfo.of(view.problem, arrived_only=arrived_only),
                                  StaticInfo.of(view.problem, arrived_only=arrived_only))
                fast = observe(infos[key][0], view)
                with features.numpy_path():
                    slow = observe(infos[key][1], view)
                for f in dataclasses.fields(fast):
                    a, b = getattr(fast, f.name), getattr(slow, f.name)
                    if a is None and b is None:
                        continue
                    a, b = np.asarray(a), np.asarray(b)
                    assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), f.name
                checked[0] += 1
            return super().decide(view)

    for problem in (stream_problem(21, sizes=(6, 9, 4, 12, 3)), stream_problem(22, m=1, sizes=(3, 1, 5))):
        infos.clear()
        before = checked[0]
        run_online(problem, Watch())
        assert checked[0] - before > 5


@pytest.mark.slow
@pytest.mark.parametrize("checkpoint", ["rl_dynamic", "rl_worlds"])
def test_rl_dynamic_day_gives_the_same_schedule_with_and_without_numba(checkpoint):
    """A whole day of rl_dynamic.yaml (failures, stragglers, noise, arrivals) with a shipped stream
    checkpoint (``rl_worlds`` observes the world block too): the compiled observation and forward give
    the schedule of the numpy ones, start for start."""
    from pathlib import Path

    from simsched.learned.rl.features import numpy_path
    from simsched.learned.rl.policy import RLPolicy
    from simsched.run.streams import simulate_stream
    from simsched.scenario import load_scenario

    sc = load_scenario(Path(__file__).resolve().parents[1] / "scenarios" / "streams" / "rl_dynamic.yaml")
    fast = RLPolicy(checkpoint=checkpoint)
    a = simulate_stream(sc, "rl", int(sc.seed) + 3, scheduler=fast).schedule
    assert fast.model.numpy_actor.compiled
    slow = RLPolicy(checkpoint=checkpoint)
    slow.actor = NumpyActor(fast.model.state_dict(), len(fast.model.numpy_actor.layers), compiled=False)
    with numpy_path():
        b = simulate_stream(sc, "rl", int(sc.seed) + 3, scheduler=slow).schedule
    assert a.processor.size > 100
    for x, y in ((a.processor, b.processor), (a.start, b.start), (a.finish, b.finish)):
        assert np.array_equal(x, y, equal_nan=True)


def test_compiled_tanh_is_float32_tanh_within_one_ulp():
    """The kernel's tanh (a float64 evaluation rounded to float32) is within 1 ulp of the correctly
    rounded float32 tanh everywhere tried, exact at 0, -0, the series boundary and saturation, odd."""
    from simsched.learned.rl.fastnet_kernel import _tanh

    @numba.njit
    def apply(x, out):
        for i in range(x.size):
            out[i] = _tanh(x[i])

    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(20_000).astype(np.float32) * s for s in (1e-6, 1e-3, 0.1, 1, 3, 10)]
                       + [np.float32([0.0, -0.0, 1e-3, -1e-3, 9.5, -9.5, 20.0, 1e-40, 3.4e38, -3.4e38])])
    out = np.empty_like(x)
    apply(x, out)
    ref = np.tanh(x.astype(np.float64)).astype(np.float32)
    ulps = np.abs(out.view(np.int32).astype(np.int64) - ref.view(np.int32).astype(np.int64))
    assert ulps.max() <= 1 and (out == ref).mean() > 0.9999
    assert np.signbit(out[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()
    neg = np.empty_like(x)
    apply(-x, neg)
    assert np.array_equal(neg, -out)


def test_without_numba_the_actor_says_so_in_one_line_and_takes_the_numpy_path(monkeypatch):
    import importlib.util
    import warnings

    from simsched.learned.rl import fastnet

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "numba" else real(name, *a))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert fastnet.compiled_available.__wrapped__() is False
    assert len(caught) == 1 and "\n" not in str(caught[0].message) and "[fast]" in str(caught[0].message)
    monkeypatch.setattr(fastnet, "compiled_available", lambda: False)
    net = net_of(9, 16, 2)
    actor = NumpyActor(net.state_dict(), 2)
    assert not actor.compiled
    with pytest.raises(ValueError, match="compiled path only"):
        actor.logits(observations(stream_problem(15))[0])
