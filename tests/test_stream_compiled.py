"""The compiled stream engine gives the SimPy engine's schedules exactly (==, not approx):

* every shipped stream scenario's row of a compiled rule (MCT, Min-Min, Max-Min, the job-aware rules), failures
  and stragglers included, equals the schedule digest computed on the SimPy engine
  (``tests/data/stream_schedule_digests.json``) and the SimPy run's events, counters and failure log;
* random streams (hypothesis): jobs with arrival ties, noise, dense and structured costs, per-link and
  uniform networks, zero work and zero data, one processor — the same schedule, events, decisions and
  assignments as SimPy, for MCT, Min-Min, Max-Min and a replay of recorded decisions, the job-aware rules
  and online-heft (failures, stragglers and P-states: ``test_stream_compiled_disrupt.py``; gang tasks:
  ``test_stream_compiled_gangs.py``; rl-gate: ``test_stream_compiled_gate.py``; the streams and checks they
  share: ``stream_cases.py``);
* the choice: ``auto`` only for what qualifies, ``compiled`` refuses the rest with a reason, a replay
  that breaks the rules goes back to SimPy's error.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import DIGESTS, schedule_digest
from hypothesis import given
from hypothesis import strategies as st
from stream_cases import EXAMPLES, JOB_AWARE, STREAMS, Recorded, plat, same, same_world, small_stream, stream

from simsched.errors import SimschedError
from simsched.schedulers.jobaware import FairShareEFT, OnlineHEFT, ShortestJobEFT
from simsched.schedulers.online import MCT, MaxMin, MinMin
from simsched.simulator.engine import Disruptions, compiled, run_online
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.workloads.generators import random_dag
from simsched.workloads.jobs import merge_jobs
from simsched.workloads.taskgraph import TaskGraph

pytestmark = pytest.mark.extra("fast")  # skipped, with the install command, without numba
ROOT = Path(__file__).resolve().parents[1]
MCT_SCENARIOS = sorted(k.split("::")[0] for k in DIGESTS["scenarios"] if k.endswith("::mct"))
RULES = ("::srjf-eft", "::fair-eft", "::online-heft", "::minmin", "::maxmin")  # the compiled rules beside MCT
JOB_ROWS = sorted(tuple(k.split("::")) for k in DIGESTS["scenarios"] if k.endswith(RULES))
FAST = ("scenarios/streams/trace.yaml", "scenarios/streams/capacity_stream.yaml", "scenarios/energy/power_off.yaml")


def _scenario(path: str, monkeypatch, minimum: int, name: str = "mct"):
    from simsched.run.streams import simulate_stream
    from simsched.scenario.load import load_scenario

    monkeypatch.setattr(compiled, "AUTO_MIN_TASKS", minimum)
    sc = load_scenario(ROOT / path, construct=True)
    spec = next(s for s in sc.schedulers if getattr(s, "name", str(s)) == name)
    return simulate_stream(sc, spec, sc.seed)


def _check_scenario(path: str, monkeypatch, name: str = "mct") -> None:
    run = _scenario(path, monkeypatch, 0, name)  # auto: compiled whenever the run qualifies
    assert schedule_digest(run.schedule) == DIGESTS["scenarios"][f"{path}::{name}"]
    ref = _scenario(path, monkeypatch, 10**12, name)  # auto never compiles: SimPy
    assert ref.stats.engine == "simpy"
    same(run.schedule, ref.schedule)
    assert (run.stats.events, run.stats.decisions, run.stats.assignments) == \
        (ref.stats.events, ref.stats.decisions, ref.stats.assignments)
    assert run.stats.engine == "compiled"  # failures and stragglers included
    same_world(run.stats, ref.stats)
    if run.stats.pstate is not None or ref.stats.pstate is not None:  # a power model: P-state 0 throughout
        assert run.stats.pstate.tolist() == ref.stats.pstate.tolist()


@pytest.mark.parametrize("path", [p for p in MCT_SCENARIOS if p in FAST])
def test_shipped_stream_scenarios_compiled_equal_simpy(path: str, monkeypatch) -> None:
    _check_scenario(path, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in MCT_SCENARIOS if p not in FAST])
def test_every_shipped_stream_scenario_compiled_equals_simpy(path: str, monkeypatch) -> None:
    _check_scenario(path, monkeypatch)


def test_the_trace_scenario_does_run_compiled(monkeypatch) -> None:
    assert _scenario("scenarios/streams/trace.yaml", monkeypatch, 0).stats.engine == "compiled"


@pytest.mark.parametrize("path,name", [r for r in JOB_ROWS if r[0] in FAST])
def test_shipped_stream_scenarios_job_aware_compiled_equal_simpy(path: str, name: str, monkeypatch) -> None:
    _check_scenario(path, monkeypatch, name)
    assert _scenario(path, monkeypatch, 0, name).stats.engine == "compiled"


@pytest.mark.slow
@pytest.mark.parametrize("path,name", [r for r in JOB_ROWS if r[0] not in FAST])
def test_every_shipped_stream_scenario_job_aware_compiled_equals_simpy(path: str, name: str, monkeypatch) -> None:
    _check_scenario(path, monkeypatch, name)


@pytest.mark.parametrize("key", sorted(k for k in DIGESTS["bench"] if k.endswith(RULES)))
def test_bench_streams_job_aware_compiled_keep_their_pinned_schedules(key: str) -> None:
    """The pinned bench streams (recorded on SimPy before the compiled loop existed; 60x8 has more than
    ``AUTO_MIN_TASKS`` tasks, so ``auto`` now compiles it): the same digest, events and decisions."""
    from simsched.bench.streams import _stream_problem
    from simsched.schedulers import registry

    size, name = key.removeprefix("bench:").split("::")
    problem, _ = _stream_problem(*map(int, size.split("x")), seed=3)
    schedule, stats = run_online(problem, registry.create(name), engine="compiled")
    assert stats.engine == "compiled"
    assert [schedule_digest(schedule), stats.events, stats.decisions] == DIGESTS["bench"][key]



@EXAMPLES
@given(**STREAMS)
def test_compiled_equals_simpy_on_random_streams(seed, n_jobs, rate, ties, dense, zero, m, per_link, hetero,
                                                 noisy) -> None:
    prob = stream(seed, n_jobs, rate, ties, dense, zero, plat(m, per_link, hetero))
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, prob.n_tasks) if noisy else None
    rec = Recorded()
    s_ref, st_ref = run_online(prob, rec, factors, engine="simpy")
    s_mct, st_mct = run_online(prob, MCT(), factors, engine="compiled")
    assert st_mct.engine == "compiled" and st_ref.engine == "simpy"
    same(s_mct, s_ref)
    assert (st_mct.events, st_mct.decisions, st_mct.assignments) == (st_ref.events, st_ref.decisions,
                                                                     st_ref.assignments)
    s_rep, st_rep = run_online(prob, compiled.Replay(rec.log), factors, engine="compiled")
    same(s_rep, s_ref)
    assert st_rep.events == st_ref.events and st_rep.decisions == len(rec.log)
    s_py, _ = run_online(prob, MCT(), factors, engine="simpy")  # MCT itself on SimPy: the same
    same(s_py, s_ref)
    for batch in (MinMin, MaxMin):  # Min-Min and Max-Min: the batch board, compiled
        s_mm, st_mm = run_online(prob, batch(), factors, engine="simpy")
        s_mmc, st_mmc = run_online(prob, batch(), factors, engine="compiled")
        assert st_mmc.engine == "compiled"
        same(s_mmc, s_mm)
        assert (st_mmc.events, st_mmc.decisions, st_mmc.assignments) == (st_mm.events, st_mm.decisions,
                                                                         st_mm.assignments)



@EXAMPLES
@given(**STREAMS, priorities=st.booleans(), unnamed=st.booleans(),
       rule=st.sampled_from(sorted(JOB_AWARE)))
def test_job_aware_compiled_equals_simpy_on_random_streams(seed, n_jobs, rate, ties, dense, zero, m, per_link,
                                                           hetero, noisy, priorities, unnamed, rule) -> None:
    """srjf-eft (queueing and late binding) and fair-eft (alpha 0 and not) in the compiled loop: SimPy's
    schedule, events, decisions and assignments exactly; and the tables built once for the whole stream
    are those the policy grew arrival by arrival on SimPy, bit for bit."""
    prob = stream(seed, n_jobs, rate, ties, dense, zero, plat(m, per_link, hetero), priorities, unnamed)
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, prob.n_tasks) if noisy else None
    ref_policy = JOB_AWARE[rule]()
    s_ref, st_ref = run_online(prob, ref_policy, factors, engine="simpy")
    s_c, st_c = run_online(prob, JOB_AWARE[rule](), factors, engine="compiled")
    assert st_c.engine == "compiled" and st_ref.engine == "simpy"
    same(s_c, s_ref)
    assert (st_c.events, st_c.decisions, st_c.assignments) == (st_ref.events, st_ref.decisions, st_ref.assignments)
    tables = JOB_AWARE[rule]().compiled_tables(prob)
    assert tables.refusal(prob) is None
    grown = ref_policy  # after the SimPy run: its tables over every task (a decision followed the last arrival)
    for mine, theirs in ((tables.rank, grown.rank), (tables.job, grown.jobs), (tables.cost, grown.cost),
                         (tables.priority, grown.job_priority),
                         (tables.job_task, np.concatenate(grown.job_tasks))):
        assert np.array_equal(mine, theirs) and mine.dtype == np.asarray(theirs).dtype
    if rule.startswith("fair"):
        assert np.array_equal(tables.weight, grown.weight)
    assert np.array_equal(np.diff(tables.job_ptr), [t.size for t in grown.job_tasks])


@EXAMPLES
@given(**STREAMS, priorities=st.booleans())
def test_online_heft_compiled_equals_simpy_on_random_streams(seed, n_jobs, rate, ties, dense, zero, m, per_link,
                                                             hetero, noisy, priorities) -> None:
    """online-heft in the compiled loop (the ready task of highest rank, from a heap): SimPy's schedule,
    events, decisions and assignments exactly; its ranks, built once for the whole stream, are those the
    policy grew arrival by arrival on SimPy, bit for bit."""
    prob = stream(seed, n_jobs, rate, ties, dense, zero, plat(m, per_link, hetero), priorities)
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, prob.n_tasks) if noisy else None
    ref_policy = OnlineHEFT()
    s_ref, st_ref = run_online(prob, ref_policy, factors, engine="simpy")
    s_c, st_c = run_online(prob, OnlineHEFT(), factors, engine="compiled")
    tables = OnlineHEFT().compiled_tables(prob)
    assert st_c.engine == "compiled" and st_ref.engine == "simpy"
    same(s_c, s_ref)
    assert (st_c.events, st_c.decisions, st_c.assignments) == (st_ref.events, st_ref.decisions, st_ref.assignments)
    assert tables.refusal(prob) is None and np.array_equal(tables.rank, ref_policy.rank)


@pytest.mark.parametrize("policy", [OnlineHEFT, MinMin, MaxMin])
def test_compiled_rules_break_ties_as_numpy(policy) -> None:
    """Identical jobs arriving together (every rank and many completion times tied across jobs) and zero
    work: online-heft's heap and Min-Min's and Max-Min's board break ties as ``np.argmax``/``np.argmin`` do, the lowest
    task first, so the compiled schedule is SimPy's."""
    rng = np.random.default_rng(5)
    dag = random_dag(7, processors=3, rng=rng)
    g = merge_jobs([dag] * 4, [0.0, 0.0, 2.0, 2.0]).graph
    for work in (g.work, np.zeros(g.n_tasks)):
        prob = Problem(TaskGraph(g.names, np.stack([g.edge_src, g.edge_dst], axis=1), g.edge_data, work=work,
                                 arrival=g.arrival), plat(3, False, False))
        s, stats = run_online(prob, policy(), engine="compiled")
        ref, rstats = run_online(prob, policy(), engine="simpy")
        same(s, ref)
        assert (stats.engine, stats.events, stats.decisions) == ("compiled", rstats.events, rstats.decisions)


def test_one_processor_one_task_zero_work() -> None:
    g = TaskGraph(["a"], work=[0.0])
    prob = Problem(g, Platform.uniform([Processor("p")]))
    s, stats = run_online(prob, MCT(), engine="compiled")
    ref, rstats = run_online(prob, MCT(), engine="simpy")
    same(s, ref)
    assert s.finish.tolist() == [0.0] and stats.events == rstats.events == 3  # a decision, a finish, the idle point



def test_auto_compiles_only_large_qualifying_runs(monkeypatch) -> None:
    prob = small_stream()
    assert run_online(prob, MCT())[1].engine == "simpy"  # below AUTO_MIN_TASKS
    monkeypatch.setattr(compiled, "AUTO_MIN_TASKS", 1)
    assert run_online(prob, MCT())[1].engine == "compiled"
    assert run_online(prob, Recorded())[1].engine == "simpy"  # a Python policy

    class Tuned(MCT):  # inherits the attribute but may decide otherwise: SimPy
        pass

    assert run_online(prob, Tuned())[1].engine == "simpy"
    d = Disruptions(failure_rate=1e-4, repair_time=1.0, slowdown_rate=0.01)
    assert run_online(prob, MCT(), disruptions=d)[1].engine == "compiled"  # failures and stragglers too


def test_auto_compiles_the_job_aware_rules_but_not_their_subclasses(monkeypatch) -> None:
    prob = small_stream()
    monkeypatch.setattr(compiled, "AUTO_MIN_TASKS", 1)
    for policy in (ShortestJobEFT(), ShortestJobEFT(late_binding=True), FairShareEFT(), FairShareEFT(alpha=-0.5),
                   OnlineHEFT()):
        assert run_online(prob, policy)[1].engine == "compiled"

    class Tuned(OnlineHEFT):  # inherits the attribute but may decide otherwise: SimPy
        pass

    assert run_online(prob, Tuned())[1].engine == "simpy"


@pytest.mark.parametrize("edges,names,why", [
    ([(0, 2)], ["j0.a", "j0.b", "j1.a"], "edges between tasks that arrive at different times"),
    ([], ["j0.a", "j1.a", "j0.b"], "a job whose tasks arrive at different times"),
])
def test_job_aware_tables_that_would_change_after_arrival_stay_on_simpy(edges, names, why, monkeypatch) -> None:
    """The tables are built once for the whole stream: a stream where they would change as tasks arrive
    (an edge into a later arrival group, a job spread over two; for the job-blind online-heft only the
    edge) is refused by ``compiled``, and ``auto`` runs it on SimPy."""
    g = TaskGraph(names, edges, [1.0] * len(edges), work=[2.0, 3.0, 1.0], arrival=[0.0, 0.0, 5.0])
    prob = Problem(g, plat(2, False, False))
    monkeypatch.setattr(compiled, "AUTO_MIN_TASKS", 1)
    blind = (OnlineHEFT(),) if edges else ()  # online-heft is job-blind: only the edge matters to it
    for policy in (ShortestJobEFT(), FairShareEFT(alpha=0.5), *blind):
        with pytest.raises(SimschedError, match=why):
            run_online(prob, policy, engine="compiled")
        s, stats = run_online(prob, policy)
        assert stats.engine == "simpy"
        same(s, run_online(prob, policy, engine="simpy")[0])
    if not edges:
        s, stats = run_online(prob, OnlineHEFT())
        assert stats.engine == "compiled"
        same(s, run_online(prob, OnlineHEFT(), engine="simpy")[0])


def test_compiled_refuses_what_it_cannot_run() -> None:
    with pytest.raises(SimschedError, match="P-state table"):
        run_online(small_stream(), MCT(), engine="compiled", pstate_slowdown=np.ones((2, 1)))


def test_compiled_refuses_other_policies_and_unknown_engines() -> None:
    with pytest.raises(SimschedError, match="no compiled form"):
        run_online(small_stream(), Recorded(), engine="compiled")
    with pytest.raises(SimschedError, match="engine must be one of"):
        run_online(small_stream(), MCT(), engine="fast")


def test_a_replay_that_breaks_the_rules_stops_and_simpy_says_why() -> None:
    prob = small_stream()
    rec = Recorded()
    run_online(prob, rec, engine="simpy")
    bad = [list(d) for d in rec.log]
    bad[1] = bad[1] + [bad[0][0]]  # a task assigned twice
    short = rec.log[:-1]  # decisions run out before the tasks
    wrong = [list(d) for d in rec.log]
    wrong[0] = [(wrong[0][0][0], 99)] + wrong[0][1:]  # a processor that does not exist
    triple = [[(t, p, 1) for t, p in d] for d in rec.log]  # a P-state the platform has no table for
    for log, why in ((bad, "already assigned"), (short, "ran out"), (wrong, "does not exist"), (triple, "P-state")):
        assert compiled.run_compiled(prob, compiled.Replay(log)) is None
        with pytest.raises(SimschedError, match=why):  # run_online falls back to SimPy, which says why
            run_online(prob, compiled.Replay(log), engine="compiled")


def test_bench_measures_the_compiled_engine_on_the_same_schedule() -> None:
    from simsched.bench.streams import _compiled_rows, measure_stream

    r = measure_stream(6, 3)
    c = r["compiled"]
    assert r["replay_same"] and c["same"] and c["events_per_s"] > 0 and c["load_cpu_s"] >= 0
    rows = _compiled_rows(r, "6 jobs")
    assert rows[0]["measured"] == c["events_per_s"] and rows[0]["baseline"] == r["floor_events_per_s"]
    assert all("NO" not in row["what"] for row in rows)


def test_bench_compares_each_compiled_policy_with_simpy(monkeypatch) -> None:
    from simsched.bench.streams import _policy_rows, measure_policy

    monkeypatch.setattr(compiled, "AUTO_MIN_TASKS", 1)
    r = measure_policy(6, 3, "fair-eft")
    assert r["engine"] == "compiled" and r["same"] and r["simpy_cpu_s"] > 0
    rows = _policy_rows([r], "6 jobs")
    versus = [row for row in rows if "compiled vs SimPy" in row["what"]]
    assert len(versus) == 1 and versus[0]["baseline"] == r["simpy_cpu_s"] and "NO" not in versus[0]["what"]
