"""Online list heuristics driven by the SimPy engine."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.errors import SimschedError
from simsched.schedulers import online, registry
from simsched.schedulers.online import MCT, MaxMin, MinMin
from simsched.simulator.engine import run_online
from simsched.simulator.noise import NoiseModel
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.policy import DecisionView, OnlinePolicy
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import validate_schedule
from simsched.testing.strategies import EDGE_CASES, problems
from simsched.workloads.taskgraph import TaskGraph

POLICIES = ["random", "round-robin", "olb", "met", "mct", "minmin", "maxmin"]


def independent(cost: list[list[float]], arrival: list[float] | None = None) -> Problem:
    graph = TaskGraph([f"t{i}" for i in range(len(cost))], cost=cost, arrival=arrival)
    return Problem(graph, Platform.uniform([Processor(f"p{j}") for j in range(len(cost[0]))]))


@pytest.mark.parametrize("name", POLICIES)
def test_registered_classes_meet_the_protocol(name):
    cls = registry.load_class(name)
    assert registry.kind(cls) == "online"
    assert cls.name == name and registry.summary(cls)
    assert isinstance(registry.create(name), OnlinePolicy)


@settings(max_examples=40, deadline=None)
@given(problems(EDGE_CASES, max_tasks=14, max_processors=4), st.sampled_from(POLICIES), st.integers(0, 1000))
def test_every_policy_gives_a_valid_schedule(problem, name, seed):
    s, stats = run_online(problem, registry.create(name), rng=np.random.default_rng(seed))
    assert validate_schedule(s, problem) == []
    assert stats.assignments == problem.n_tasks and stats.decisions >= 1
    factors = NoiseModel("lognormal", 0.5).factors(problem.n_tasks, np.random.default_rng(seed))
    noisy, _ = run_online(problem, registry.create(name), factors, rng=np.random.default_rng(seed))
    assert validate_schedule(noisy, problem, check_durations=False) == []
    durations = problem.W[np.arange(problem.n_tasks), noisy.processor] * factors
    np.testing.assert_allclose(noisy.finish - noisy.start, durations, rtol=1e-9, atol=1e-9)


@settings(max_examples=15, deadline=None)
@given(problems(EDGE_CASES, max_tasks=14, max_processors=4), st.sampled_from(POLICIES), st.integers(0, 1000))
def test_runs_are_deterministic_under_a_seed(problem, name, seed):
    factors = NoiseModel("uniform", 0.4).factors(problem.n_tasks, np.random.default_rng(seed))
    a, sa = run_online(problem, registry.create(name), factors, rng=np.random.default_rng(seed))
    b, sb = run_online(problem, registry.create(name), factors, rng=np.random.default_rng(seed))
    np.testing.assert_array_equal(a.processor, b.processor)
    np.testing.assert_array_equal(a.start, b.start)
    np.testing.assert_array_equal(a.finish, b.finish)
    assert (sa.decisions, sa.events) == (sb.decisions, sb.events)


class OneAtATimeMCT:
    """Assigns only the first ready task, to its minimum-completion processor, and records the
    completion time the view predicted."""

    name = "one-at-a-time"

    def reset(self, problem, rng):
        self.predicted = {}

    def decide(self, view: DecisionView):
        t = int(view.ready[0])
        ct = view.completion_times(view.ready[:1])[0]
        p = int(np.argmin(ct))
        self.predicted[view.problem.graph.names[t]] = ct[p]  # the view numbers tasks in arrival order
        return [(t, p)]


@settings(max_examples=60, deadline=None)
@given(problems(EDGE_CASES, max_tasks=14, max_processors=4))
def test_view_predicts_deterministic_completion_exactly(problem):
    policy = OneAtATimeMCT()
    s, _ = run_online(problem, policy)
    for name, predicted in policy.predicted.items():
        assert s.finish[problem.graph.index(name)] == predicted


def test_mct_hand_example():
    # t0 -> p0 (2 < 4); t1 -> p1 (1 < 2+3); t2: p0 2+5=7, p1 1+5=6 -> p1
    problem = independent([[2, 4], [3, 1], [5, 5]])
    s, stats = run_online(problem, MCT())
    assert s.processor.tolist() == [0, 1, 1]
    assert s.finish.tolist() == [2.0, 1.0, 6.0]
    assert stats.decisions == 1


def test_met_ignores_load_and_olb_ignores_speed():
    problem = independent([[1, 9], [1, 9], [1, 9]])
    s, _ = run_online(problem, registry.create("met"))
    assert s.processor.tolist() == [0, 0, 0]
    s, _ = run_online(problem, registry.create("olb"))
    assert s.processor.tolist() == [0, 1, 0]  # p1 is available at 0 when t1 is mapped


def test_minmin_and_maxmin_differ_as_in_the_literature():
    # two short tasks and a long one on two identical processors: Min-Min maps the short tasks
    # first and leaves the long one to finish last (makespan 3); Max-Min maps the long one first
    # and packs the short ones beside it (makespan 2) -- Braun et al. 2001, sec. 2.
    problem = independent([[1, 1], [1, 1], [2, 2]])
    small, _ = run_online(problem, MinMin())
    large, _ = run_online(problem, MaxMin())
    assert small.processor.tolist() == [0, 1, 0] and small.makespan == 3.0
    assert large.processor.tolist() == [1, 1, 0] and large.makespan == 2.0


def test_policies_respect_eligibility():
    cost = [[np.inf, 1, np.inf], [5, np.inf, np.inf], [np.inf, np.inf, 1], [1, 1, np.inf]] * 3
    problem = independent(cost)
    for name in POLICIES:
        s, _ = run_online(problem, registry.create(name))
        assert problem.eligible[np.arange(problem.n_tasks), s.processor].all(), name


def test_decisions_batch_events_at_one_instant():
    seen = []

    class Recorder(MCT):
        def decide(self, view):
            seen.append((view.now, view.ready.tolist(), view.trigger))
            return super().decide(view)

    # t0, t1 arrive at 0; t2 and t3 both arrive at 5, t3 also needs t0 (finished at 1)
    graph = TaskGraph(["t0", "t1", "t2", "t3"], [(0, 3)], [0.0], cost=[[1.0, 1.0]] * 4,
                      arrival=[0.0, 0.0, 5.0, 5.0])
    problem = Problem(graph, Platform.uniform([Processor("p0"), Processor("p1")]))
    run_online(problem, Recorder())
    assert seen == [(0.0, [0, 1], "arrival"), (5.0, [2, 3], "arrival")]


def test_random_policy_uses_the_run_rng():
    problem = independent([[1.0] * 5] * 30)
    a, _ = run_online(problem, online.RandomPolicy(), rng=np.random.default_rng(1))
    b, _ = run_online(problem, online.RandomPolicy(), rng=np.random.default_rng(2))
    assert not np.array_equal(a.processor, b.processor)


# --------------------------------------------------------------------------- misbehaving policies
class Scripted:
    name = "scripted"

    def __init__(self, answer):
        self.answer = answer

    def reset(self, problem, rng):
        pass

    def decide(self, view):
        return self.answer(view)


@pytest.mark.parametrize("answer, message", [
    (lambda v: [], "stalled with 2 ready tasks"),
    (lambda v: [(0, 1)], "may not run it"),
    (lambda v: [(0, 0), (0, 0)], "already assigned"),
    (lambda v: [(2, 0)], "not ready"),
    (lambda v: [(0, 7)], "does not exist"),
    (lambda v: [(0,)], "pair of integers"),
])
def test_bad_policies_get_clear_errors(answer, message):
    graph = TaskGraph(["a", "b", "c"], [(0, 2)], [0.0], cost=[[1.0, np.inf], [1.0, 1.0], [1.0, 1.0]])
    problem = Problem(graph, Platform.uniform([Processor("p0"), Processor("p1")]))
    with pytest.raises(SimschedError, match=message) as info:
        run_online(problem, Scripted(answer))
    assert "'scripted'" in str(info.value)


def test_a_policy_that_keeps_declining_under_failures_is_a_stall_not_a_hang():
    """With failures the processors' on/off processes never end, so the event list never runs dry:
    a policy that assigns nothing must still end in the stall error (found by a hanging RL test)."""
    import numpy as np
    import pytest

    from simsched.errors import SimschedError
    from simsched.simulator.engine import Disruptions, run_online
    from simsched.simulator.platform import Platform, Processor
    from simsched.simulator.problem import Problem
    from simsched.workloads.generators import GENERATORS

    problem = Problem(GENERATORS["random"](tasks=10, rng=np.random.default_rng(0)),
                      Platform.uniform([Processor(f"p{i}") for i in range(2)], 1.0, 0.0))

    class Declining:
        name = "declining"
        calls = 0

        def reset(self, problem, rng):
            pass

        def decide(self, view):
            Declining.calls += 1
            return []

    with pytest.raises(SimschedError, match="stalled with 4 ready tasks"):
        run_online(problem, Declining(), None, np.random.default_rng(0),
                   disruptions=Disruptions(failure_rate=0.05), disruption_rng=np.random.default_rng(1))
    assert 1 <= Declining.calls <= 10_000 + 1  # the engine gives up after 10,000 idle decisions in a row


def test_heft_static_plan_restarts_a_task_a_failure_hands_back():
    """The RL family's static-HEFT baseline follows its plan; a failure hands the running task back
    and it restarts on its planned processor (it used to wait forever for its turn to come again)."""
    import pytest

    pytest.importorskip("gymnasium")
    pytest.importorskip("torch")
    from simsched.learned.rl.env import SchedulingEnv, default_family
    from simsched.simulator.engine import Disruptions

    fam = default_family()
    fam.tasks, fam.n_jobs, fam.job_rate = (5, 15), 2, 0.05
    fam.disruptions = Disruptions(failure_rate=0.01, slowdown_rate=0.01)
    for seed in (573301, 51673, 103069):
        env = SchedulingEnv(fam, reward="jobs", max_tasks=32, max_jobs=4)
        env.reset(seed=seed)
