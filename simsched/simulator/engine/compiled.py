"""The compiled stream engine: the common online run in one numba loop, the SimPy engine's schedule
float for float (:mod:`simsched.simulator.engine.compiled_kernel`).

The SimPy engine (:func:`~simsched.simulator.engine.loop.run_online`) stays the ground truth and the
fallback.  The compiled loop runs a call of ``run_online`` only when everything in it has a compiled
form (:func:`compiled_applies`):

* single-processor tasks, and gang tasks under the job-aware rules and the gated one, with failures or without
  (:func:`_gang_refusal`, :mod:`~simsched.simulator.engine.compiled_gang`,
  :mod:`~simsched.simulator.engine.compiled_gangfail`; a moldable task that may take one processor counts as
  one under a rule that places every task on one processor, srjf-eft's late binding included); failures, repairs
  (random and traced) and stragglers, drawn as the SimPy engine draws them
  (:mod:`~simsched.simulator.engine.compiled_world`); P-states (``pstate_slowdown``: a power model's DVFS
  table, :mod:`~simsched.simulator.engine.compiled_pstate`): the rules that name none run every task at
  P-state 0, ``ecs-online`` and a replay of ``(task, processor, P-state)`` triples choose them;
* arrivals that never decrease with the task index (every job stream: Poisson, rates, trace), so the
  policy's visible numbering is the task index;
* a policy whose class itself declares a ``compiled_kernel`` of :data:`KERNELS` (a subclass that does
  not declare it again runs on SimPy): ``"mct"`` (:class:`~simsched.schedulers.online.MCT`),
  ``"minmin"`` (:class:`~simsched.schedulers.online.MinMin`), ``"maxmin"``
  (:class:`~simsched.schedulers.online.MaxMin`), ``"ecs-online"`` (:class:`~simsched.schedulers.ecs.OnlineECS`,
  with the tables it decides with from ``compiled_pstates(problem)``), a :class:`Replay` of recorded
  decisions (pairs or P-state triples; what ``simsched bench streams`` times), or the job-aware
  ``"srjf-eft"`` and ``"fair-eft"`` (:mod:`simsched.schedulers.jobaware`, late binding included) and the
  job-blind ``"online-heft"``, whose per-task and per-job tables the policy builds once for the whole
  stream (``compiled_tables(problem)``,
  a :class:`JobTables`): taken only when arrival groups share no edge and no job (:meth:`JobTables.refusal`),
  so that the tables are those the policy would grow arrival by arrival; and a gated ``srjf-eft``
  (``"gated-srjf"``, ``rl-gate``: :mod:`~simsched.simulator.engine.compiled_gate`, its gate's tables per arrival
  state from ``compiled_gate(problem)``; with failures or stragglers filled as the loop reaches each state, with
  the failures the policy has seen; with gang tasks, which the rule places alone, as srjf-eft's);
* numba installed (extra ``simsched[fast]``).

Noise factors and any platform (dense or structured costs, uniform or per-link transfers) are
supported.  ``run_online(..., engine="auto")`` (the default) takes the compiled loop when it applies
and the problem has at least :data:`AUTO_MIN_TASKS` tasks (below that, loading numba costs more than
it saves); ``engine="compiled"`` insists (a :class:`SimschedError` says why not), ``engine="simpy"``
never.  ``OnlineStats.engine`` records which ran.  A run the compiled loop would refuse (a replayed
decision that assigns a task that is not ready, ...) is run again on SimPy, which raises its own error.
"""

from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass, replace
from itertools import chain
from pathlib import Path

import numpy as np

from simsched.errors import SimschedError
from simsched.readonly import drop_stale_machine_code, read_only
from simsched.simulator.engine.compiled_gate import GATE_KERNEL, GateTables, gate_args, gate_ran, gate_state, lazy_rows
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Schedule

ENGINES = ("auto", "simpy", "compiled")
"""The values of ``run_online``'s ``engine``."""

KERNELS = ("mct", "replay", "srjf-eft", "fair-eft", "online-heft", "minmin", "maxmin", "ecs-online", GATE_KERNEL)
"""Online rules with a compiled form (a policy class names one in ``compiled_kernel``)."""

JOB_KERNELS = ("srjf-eft", "fair-eft", "online-heft")
"""The kernels whose policy hands the loop its :class:`JobTables` (``policy.compiled_tables(problem)``)."""

JOB_RULES = ("srjf", "srjf-late", "fair", "heft")
"""The rules a :class:`JobTables` may name (:mod:`~simsched.simulator.engine.compiled_jobaware`)."""

AUTO_MIN_TASKS = 5_000
"""``engine="auto"`` compiles only problems with at least this many tasks: loading numba and its cached
machine code takes ~0.3-1 s of CPU once per process (1.1-1.2 s measured on a loaded 2-core machine),
what the SimPy engine with MCT spends on a few thousand tasks."""


_GATE = ("compiled_gatekernel.py", "compiled_gate.py")  # the gate's kernels and the state layout they read
_INLINED = {"compiled_kernel": ("compiled_view.py", "compiled_jobaware.py", "compiled_heap.py", "compiled_disrupt.py",
                               "compiled_pstate.py", "compiled_minmin.py", "compiled_gang.py", "compiled_queue.py",
                               "compiled_gangfail.py", *_GATE),
            "compiled_minmin": ("compiled_view.py",),
            "compiled_gang": ("compiled_view.py",),
            "compiled_disrupt": ("compiled_view.py", "compiled_jobaware.py", "compiled_gang.py"),
            "compiled_queue": ("compiled_view.py", "compiled_jobaware.py", "compiled_gang.py", "compiled_disrupt.py",
                               "compiled_heap.py", *_GATE),
            "compiled_gangfail": ("compiled_view.py", "compiled_jobaware.py", "compiled_gang.py", "compiled_disrupt.py",
                                  "compiled_heap.py", "compiled_queue.py", *_GATE),
            "compiled_pstate": ("compiled_view.py",),
            "compiled_gatekernel": ("compiled_gate.py",),
            "compiled_jobaware": ("compiled_view.py", "compiled_gang.py", *_GATE)}
"""Modules of compiled kernels and the sibling sources their machine code includes."""

_checked = False
"""Whether :func:`kernel_module` has looked for stale cached machine code in this process."""


def kernel_module():
    """The compiled loop's module (imports numba; ImportError when it fails).  numba keys each cached
    kernel on its own source file only, so the cached machine code of a module whose kernels include
    functions of another file (:data:`_INLINED`) is dropped first when that file is newer (an edit
    since), to be compiled again rather than run stale.  O(1) file operations, once per process."""
    global _checked
    if not _checked:
        drop_stale_machine_code(Path(__file__).parent, _INLINED)
        _checked = True
    from simsched.simulator.engine import compiled_kernel

    return compiled_kernel


def numba_available() -> bool:
    """True when numba is installed (extra ``simsched[fast]``).  O(1)."""
    return importlib.util.find_spec("numba") is not None


class Replay:
    """An online policy that replays recorded decisions, one list of ``(task, processor)`` pairs per
    decision point, in order: run on the problem they were recorded on, an engine meets the same states
    and does the same work with a policy that costs a list read (on SimPy as on the compiled loop).
    O(1) per decision."""

    name = "replay"
    compiled_kernel = "replay"

    def __init__(self, log: list) -> None:
        self.log, self.i = log, 0

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        self.i = 0

    def decide(self, view) -> list:
        if self.i >= len(self.log):
            raise SimschedError(f"replay: the {len(self.log):,} recorded decisions ran out (the run needs more)")
        self.i += 1
        return self.log[self.i - 1]


@dataclass(frozen=True)
class JobTables:
    """What a job-aware policy decides with, for the whole stream (:mod:`~simsched.simulator.engine.compiled_jobaware`):
    ``rule`` (``"srjf"``, ``"srjf-late"``, ``"fair"`` or ``"heft"``); per task its upward ``rank``, dense
    ``job`` id and mean ``cost`` (n,); per job its tasks ``job_task[job_ptr[j]:job_ptr[j + 1]]``
    (ascending), ``priority`` and ``weight`` (fair share; any values for srjf).  ``"heft"`` (online-heft,
    job-blind) reads only the ranks: its jobs are the arrival groups (:func:`rank_tables`), its costs,
    priorities and weights unused."""

    rule: str
    rank: np.ndarray
    job: np.ndarray
    cost: np.ndarray
    job_ptr: np.ndarray
    job_task: np.ndarray
    priority: np.ndarray
    weight: np.ndarray

    def refusal(self, problem: Problem) -> str | None:
        """None when these tables, built once over the whole stream, are those the policy would hold at every
        decision point (it grows them arrival by arrival over what has arrived): every arrival group (the tasks
        that arrive at one instant; those at time 0 or before are one) closed under edges, so a group's
        upward ranks are its own, and every job within one group, so no job's tasks, priority or weight
        change after it arrived.  Else why not (one phrase).  Arrivals must not decrease with the index
        (:func:`compiled_applies` checks it first).  O(n + e)."""
        n = problem.n_tasks
        if self.rule not in JOB_RULES:
            return f"job-aware rule {self.rule!r} has no compiled form (compiled: {', '.join(JOB_RULES)})"
        jobs = self.job_ptr.size - 1
        if any(a.shape != (n,) for a in (self.rank, self.job, self.cost, self.job_task)) or jobs < 0 \
                or any(a.shape != (jobs,) for a in (self.priority, self.weight)) or int(self.job_ptr[0]) != 0 \
                or int(self.job_ptr[-1]) != n or bool((np.diff(self.job_ptr) <= 0).any()) \
                or bool(((self.job < 0) | (self.job >= jobs)).any()) \
                or not np.array_equal(self.job[self.job_task], np.repeat(np.arange(jobs), np.diff(self.job_ptr))) \
                or bool((np.diff(self.job_task)[np.diff(self.job[self.job_task]) == 0] <= 0).any()):
            return "the policy's job tables do not cover the stream's tasks"
        g = problem.graph
        group = arrival_groups(g.arrival)
        if g.n_edges and bool((group[g.edge_src] != group[g.edge_dst]).any()):
            return "edges between tasks that arrive at different times run on the SimPy engine"
        if jobs and bool((group[self.job_task[self.job_ptr[:-1]]] != group[self.job_task[self.job_ptr[1:] - 1]]).any()):
            return "a job whose tasks arrive at different times runs on the SimPy engine"
        return None


def arrival_groups(arrival: np.ndarray) -> np.ndarray:
    """(n,) the arrival group of each task (0, 1, ...: the tasks arriving at one instant; those at time 0
    or before are group 0), for arrivals that never decrease with the index.  O(n)."""
    a = np.maximum(arrival, 0.0)
    group = np.zeros(a.size, dtype=np.int64)
    if a.size > 1:
        np.cumsum(a[1:] != a[:-1], out=group[1:])
    return group


def rank_tables(problem: Problem, rank: np.ndarray) -> JobTables:
    """online-heft's :class:`JobTables` (rule ``"heft"``): the upward ``rank`` (n,), the only table it
    decides with (its ready tasks in a heap by rank); as "jobs" the arrival groups, which makes
    :meth:`JobTables.refusal` ask only that no edge joins two groups.  Arrivals must not decrease with
    the index.  O(n)."""
    n = problem.n_tasks
    job = arrival_groups(problem.graph.arrival)
    ptr = np.append(np.flatnonzero(np.diff(job, prepend=-1)), n).astype(np.int64)
    jobs = ptr.size - 1
    return JobTables("heft", np.asarray(rank, dtype=np.float64), job, np.zeros(n), ptr, np.arange(n, dtype=np.int64),
                     np.zeros(jobs), np.ones(jobs))


def policy_kernel(policy) -> str | None:
    """The compiled rule ``policy`` declares on its own class (``compiled_kernel``), or None: a
    subclass inherits the attribute but may decide differently, so only the declaring class counts."""
    kernel = type(policy).__dict__.get("compiled_kernel")
    return kernel if kernel in KERNELS else None


def compiled_applies(problem: Problem, policy, factors=None, disruptions=None, pstate_slowdown=None, *,
                     extended: bool = False) -> str | None:
    """None when the compiled loop can run this call of ``run_online``, else why not (one phrase).
    ``extended``: the run has workflow-system overheads, storage or host memory, which only SimPy models.
    O(n)."""
    if extended:
        return "workflow-system overheads, storage and host memory run on the SimPy engine"
    if policy_kernel(policy) is None:
        name = getattr(policy, "name", None) or type(policy).__name__
        return f"policy {name!r} has no compiled form (compiled: {', '.join(KERNELS)})"
    if pstate_slowdown is not None and np.ndim(pstate_slowdown) != 2 or \
            pstate_slowdown is not None and np.shape(pstate_slowdown)[0] != problem.n_processors:
        return "a P-state table that is not (processors, P-states) goes to the SimPy engine (which refuses it)"
    g = problem.graph
    if g.gang:
        why = _gang_refusal(problem, policy_kernel(policy))
        if why is not None:
            return why
    a = g.arrival
    if a.size > 1 and not bool((a[1:] >= a[:-1]).all()):
        return "arrivals that decrease with the task index run on the SimPy engine"
    if not numba_available():
        from simsched.extras import install_hint

        return f"numba is not installed ({install_hint('fast')})"
    return None


GANG_BLIND = ("mct", "minmin", "maxmin", "ecs-online", "replay")
"""Kernels whose rule places every task on one processor (a replay of pairs; one of gangs goes to SimPy)."""


def _gang_refusal(problem: Problem, kernel: str | None) -> str | None:
    """None when the compiled loop can run ``kernel`` on ``problem``, whose graph has multi-processor tasks
    (``graph.gang``), else why not.  A rule that places every task on one processor (:data:`GANG_BLIND`)
    runs a moldable task that may take one processor (``procs_min`` 1) as an ordinary task, at its ``k = 1``
    cost, exactly as the SimPy engine runs it (no gang is ever formed, so the schedule names none); the
    job-aware rules (:data:`JOB_KERNELS`, and the gated one) place gangs by gang-aware earliest finish
    (:mod:`~simsched.simulator.engine.compiled_gang`), with failures, repairs and stragglers or without
    (:mod:`~simsched.simulator.engine.compiled_gangfail`; with a power model every task at P-state 0, as on
    SimPy), srjf-eft's late binding every task on one processor, as on SimPy (a task that needs several at
    once stops the loop, and SimPy raises its error); the rest runs on SimPy.  O(n)."""
    if kernel in GANG_BLIND and int(problem.graph.procs_min.max()) <= 1:
        return None
    if kernel not in JOB_KERNELS and kernel != GATE_KERNEL:
        return "multi-processor tasks run on the SimPy engine"
    return None


def _gang_args(problem: Problem, tables: JobTables | None, room: int = 1) -> tuple[tuple, tuple]:
    """The loop's gang data and state (:mod:`~simsched.simulator.engine.compiled_gang`): on for a job-aware
    rule (``tables``) on a graph with multi-processor tasks, else empty tables of the same types.  The store
    holds ``room`` times the members every task may hold once (more than 1 where failures may make gangs be
    placed again).  O(n + m + store)."""
    g, plat = problem.graph, problem.platform
    n, m = problem.n_tasks, problem.n_processors
    i64 = np.zeros(0, dtype=np.int64)
    if tables is None or not g.gang:
        gd = (False, i64, i64, np.zeros(0), np.zeros((0, 2)), np.zeros(0, dtype=np.bool_), i64, i64, i64, i64, 0)
        return gd, (i64.copy(), i64.copy(), i64.copy(), i64.copy(), np.zeros(1, dtype=np.int64))
    kind = np.asarray(plat.type_index, dtype=np.int64)
    pair = kind * (int(plat.host_index.max()) + 1) + np.asarray(plat.host_index, dtype=np.int64)
    hi = g.procs_max.astype(np.int64)
    cap = int(np.minimum(hi[hi > 1], m).sum()) * room
    gd = (True, g.procs_min.astype(np.int64), hi, g.serial.astype(np.float64),
          np.ascontiguousarray(g.downey, dtype=np.float64), g.same_host.astype(np.bool_), kind, pair,
          np.unique(kind), np.unique(pair), cap)
    return gd, (np.zeros(cap, dtype=np.int64), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
                np.zeros(cap, dtype=np.int64), np.zeros(1, dtype=np.int64))


def _link(problem: Problem):
    """``(uniform, same_lat, same_inv, link_lat, link_inv, latency, inv_bw)`` for the kernel: the
    engine's uniform pair when every link is alike (the same floats as the tables), else the tables."""
    from simsched.simulator.engine.common import uniform_link

    link = uniform_link(problem.latency, problem.inv_bandwidth)
    if link is not None:
        empty = np.zeros((1, 1))
        return (True, *map(float, link), empty, empty)
    return (False, 0.0, 0.0, 0.0, 0.0, np.ascontiguousarray(problem.latency, dtype=np.float64),
            np.ascontiguousarray(problem.inv_bandwidth, dtype=np.float64))


def _replay_arrays(decisions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Recorded decisions (a list of lists of ``(task, processor)`` pairs or ``(task, processor, P-state)``
    triples) as ``(ptr, task, processor, P-state)`` (P-states empty when every item is a pair); None when
    an item is neither (a gang: SimPy replays those).  O(items)."""
    try:
        ptr = np.zeros(len(decisions) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, decisions), dtype=np.int64, count=len(decisions)), out=ptr[1:])
        flat = np.fromiter(chain.from_iterable(chain.from_iterable(decisions)), dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        return None
    if flat.size != 2 * int(ptr[-1]):
        return _replay_triples(decisions, ptr)
    pairs = flat.reshape(-1, 2)
    return ptr, np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1]), np.zeros(0, dtype=np.int64)


def _replay_triples(decisions, ptr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`_replay_arrays` of decisions with P-state triples: pairs read as P-state 0; None when an
    item is not a tuple or list of two or three integers (bools refused, as the SimPy engine refuses a
    bool P-state).  O(items), in Python."""
    rows = []
    for item in chain.from_iterable(decisions):
        if not isinstance(item, (tuple, list)) or len(item) not in (2, 3) or \
                any(isinstance(x, bool) or not isinstance(x, (int, np.integer)) for x in item):
            return None
        rows.append((int(item[0]), int(item[1]), int(item[2]) if len(item) == 3 else 0))
    if len(rows) != int(ptr[-1]):
        return None
    a = np.array(rows, dtype=np.int64).reshape(-1, 3)
    return ptr, *(np.ascontiguousarray(a[:, c]) for c in range(3))


def compile_seconds() -> float:
    """Load (or, the first time on a machine, compile) the kernel; the CPU seconds it took (0 once
    loaded in this process).  Lets a benchmark keep compilation out of the rate it reports."""
    c0 = time.process_time()
    k = kernel_module()

    if not getattr(k, "_warm", False):
        p = _tiny_problem()
        _call(p, k.MCT, None, None)
        _call(p, k.REPLAY, [[(0, 0)], [(1, 0)]], None)
        _call(p, k.MINMIN, None, None)
        _call(p, k.REPLAY, [[(0, 0, 1)], [(1, 0)]], None, ps=_pstate_args(p, None, np.ones((2, 2))))
        _call(p, k.ECS, None, None, ps=(*_pstate_args(p, None, np.ones((2, 2)))[:2], np.ones((2, 2)), np.ones((2, 2)),
                                        np.zeros(0, dtype=np.int64)))
        one = np.arange(2, dtype=np.int64)
        for rule in JOB_RULES:
            tables = JobTables(rule, np.zeros(2), np.zeros(2, dtype=np.int64), np.ones(2), np.array([0, 2]), one,
                               np.zeros(1), np.ones(1))
            _call(p, _code(k, None, tables), None, None, tables)
        gate = GateTables(np.zeros(1, dtype=bool), np.ones((1, 5)), np.zeros((1, 1)), np.ones(1), np.ones(1),
                          np.ones(1, dtype=bool), np.array([2]))
        _call(p, k.GATE, None, None, replace(tables, rule="srjf"), gate=gate)
        k._warm = True
    return time.process_time() - c0


def _tiny_problem() -> Problem:
    from simsched.simulator.platform import Platform, Processor
    from simsched.workloads.taskgraph import TaskGraph

    g = TaskGraph(["a", "b"], [(0, 1)], [1.0], work=[1.0, 1.0])
    return Problem(g, Platform.uniform([Processor("p0"), Processor("p1")], bandwidth=1.0, latency=0.1))


def _no_tables() -> tuple:
    """The kernel's job tables for a policy that has none (MCT, a replay): empty, of the same types."""
    f, i = np.zeros(0), np.zeros(0, dtype=np.int64)
    return f, i, f, np.zeros(1, dtype=np.int64), i, f, f


def _tables_tuple(tables: JobTables) -> tuple:
    return (np.ascontiguousarray(tables.rank, dtype=np.float64), np.ascontiguousarray(tables.job, dtype=np.int64),
            np.ascontiguousarray(tables.cost, dtype=np.float64), np.ascontiguousarray(tables.job_ptr, dtype=np.int64),
            np.ascontiguousarray(tables.job_task, dtype=np.int64),
            np.ascontiguousarray(tables.priority, dtype=np.float64),
            np.ascontiguousarray(tables.weight, dtype=np.float64))


def _pstate_args(problem: Problem, policy, pstate_slowdown) -> tuple:
    """The loop's P-state arguments (:mod:`~simsched.simulator.engine.compiled_pstate`) without the replayed
    P-states: the engine's table (``inf`` for NaN, as the SimPy engine reads it; (m, 0) without one), whether
    there is one, and ``ecs-online``'s own tables (``policy.compiled_pstates``; (m, 0) for other policies).
    O(m K)."""
    m = problem.n_processors
    none = np.zeros((m, 0))
    slow = none
    if pstate_slowdown is not None:
        slow = np.asarray(pstate_slowdown, dtype=np.float64)
        slow = np.ascontiguousarray(np.where(np.isnan(slow), np.inf, slow))
    own = policy.compiled_pstates(problem) if policy_kernel(policy) == "ecs-online" else (none, none)
    return (slow, pstate_slowdown is not None, *(np.ascontiguousarray(a, dtype=np.float64) for a in own),
            np.zeros(0, dtype=np.int64))


def _edges(g) -> list[np.ndarray]:
    """The loop's view of graph ``g``: its own CSR lists and edge arrays ``(succ_ptr, succ_edges, pred_ptr,
    pred_edges, edge_src, edge_dst, edge_data)``, read through by the loop rather than gathered into
    successor and predecessor copies (which were 3 x 8 bytes per edge at its peak).  O(1): no copy where
    the arrays are contiguous (float64 data), as ``TaskGraph`` builds them, in its index dtype (int32)."""
    ints = (g.succ_ptr, g.succ_edges, g.pred_ptr, g.pred_edges, g.edge_src, g.edge_dst)
    data = np.ascontiguousarray(g.edge_data, dtype=np.float64)
    return [*(np.ascontiguousarray(a) for a in ints), data]


def _call(problem: Problem, policy: int, replay, factors, tables: JobTables | None = None, world: tuple | None = None,
          ps: tuple | None = None, gang: tuple | None = None, gate: GateTables | None = None, gz=None):
    """The loop's result for these arguments (``world``: :func:`~simsched.simulator.engine.compiled_world.world_args`,
    None without failures or stragglers; ``ps``: :func:`_pstate_args`, None without P-states; ``gang``:
    :func:`_gang_args`, None without gangs, its state filled in; ``gate``, ``gz``: a gated rule's tables and the
    state the loop fills in, :mod:`~simsched.simulator.engine.compiled_gate`), or None when a replay's items are
    neither pairs nor P-state triples."""
    from simsched.simulator.engine.compiled_world import no_world

    k = kernel_module()

    g = problem.graph
    table, key, work, memory = problem.cost_arrays()
    late = np.flatnonzero(g.arrival > 0).astype(np.int64, copy=False)  # passed as is: no second copy
    times, counts = np.unique(g.arrival[late].astype(np.float64, copy=False), return_counts=True)
    group_ptr = np.zeros(times.size + 1, dtype=np.int64)
    np.cumsum(counts, out=group_ptr[1:])
    none = np.zeros(0, dtype=np.int64)
    rep = _replay_arrays(replay) if replay is not None else (np.zeros(1, dtype=np.int64), none, none, none)
    if rep is None:
        return None
    ps = _pstate_args(problem, None, None) if ps is None else ps
    ps = (*ps[:4], rep[3])
    fac = np.zeros(0) if factors is None else np.ascontiguousarray(factors, dtype=np.float64)
    gd, gs = gang if gang is not None else _gang_args(problem, None)
    return k.stream_loop(*read_only([policy, *rep[:3], table, key, work, memory,
                         np.ascontiguousarray(problem.platform.memory, dtype=np.float64), bool(problem.structured),
                         *_edges(g), g.arrival.astype(np.float64, copy=False),
                         times, group_ptr, late, *_link(problem), fac]),
                         tuple(read_only(_no_tables() if tables is None else _tables_tuple(tables))),
                         tuple(read_only(ps)),
                         tuple(read_only(no_world(problem.n_processors) if world is None else world)),
                         (gd[0], *read_only(list(gd[1:10])), gd[10]), gs, gate_args(gate),
                         gate_state(problem.n_processors) if gz is None else gz)


def job_tables(problem: Problem, policy) -> JobTables | str:
    """The tables of a job-aware ``policy`` (kernel in :data:`JOB_KERNELS`) for the whole stream
    (``policy.compiled_tables(problem)``), or why the compiled loop cannot decide with them
    (:meth:`JobTables.refusal`).  The mean transfers the upward ranks were built from are not kept on the
    problem (:meth:`~simsched.simulator.problem.Problem.forget_mean_transfer`): the loop never reads them, and
    at 100k tasks they were 2 MB of its peak.  The policy's cost (O(n m + e) for upward ranks and mean costs)
    plus O(n + e)."""
    tables = policy.compiled_tables(problem)
    problem.forget_mean_transfer()
    why = tables.refusal(problem)
    return tables if why is None else why


def policy_tables(problem: Problem, policy, disruptions=None) -> tuple[JobTables | None, GateTables | None] | str:
    """``(job tables, gate tables)`` of ``policy`` (:func:`job_tables` for the job-aware and gated kernels, then
    a gated one's ``compiled_gate(problem)``, :mod:`~simsched.simulator.engine.compiled_gate`; None where it has
    none), or why the compiled loop cannot decide with them.  The policies' costs plus O(n + e)."""
    kernel = policy_kernel(policy)
    if kernel not in JOB_KERNELS and kernel != GATE_KERNEL:
        return None, None
    tables = job_tables(problem, policy)
    if isinstance(tables, str) or kernel != GATE_KERNEL:
        return tables if isinstance(tables, str) else (tables, None)
    gate = policy.compiled_gate(problem, disruptions is not None and disruptions.active)  # lazy with failures
    why = gate if isinstance(gate, str) else gate.refusal(problem)
    return (tables, gate) if why is None else why


def _code(k, policy, tables: JobTables | None) -> int:
    """The kernel's policy code."""
    if policy_kernel(policy) == GATE_KERNEL:
        return k.GATE
    if tables is not None:
        return {"srjf": k.SRJF, "srjf-late": k.SRJF_LATE, "fair": k.FAIR, "heft": k.HEFT}[tables.rule]
    return {"replay": k.REPLAY, "minmin": k.MINMIN, "maxmin": k.MAXMIN, "ecs-online": k.ECS}.get(policy_kernel(policy),
                                                                                                k.MCT)


def run_compiled(problem: Problem, policy, factors: np.ndarray | None = None, pstate_slowdown: np.ndarray | None = None,
                 tables: JobTables | None = None, disruptions=None,
                 disruption_rng: np.random.Generator | None = None,
                 gate: GateTables | None = None) -> tuple[Schedule, dict] | None:
    """Run ``policy`` (MCT, Min-Min, Max-Min, a :class:`Replay`, srjf-eft, fair-eft, online-heft, ecs-online or a
    gated srjf-eft) on
    the compiled loop; returns the schedule and the :class:`~simsched.simulator.engine.stats.OnlineStats` fields, or
    None when the loop stopped where the SimPy engine raises (run it there for the message; ``disruption_rng``
    is then left as it was).  Callers go through ``run_online``.

    :class:`SimschedError` when the run does not qualify (:func:`compiled_applies`, :func:`job_tables`;
    ``tables``, ``gate``: the job-aware or gated policy's, already checked (:func:`policy_tables`), else built
    here).  A gated policy is handed its late decisions after the run (``compiled_gate_ran``).  ``disruptions``
    (failures, repairs, stragglers; with ``disruption_rng``, default ``default_rng(1)``) are checked and seeded as the
    SimPy engine does (its errors, raised here) and drawn ahead (:mod:`~simsched.simulator.engine.compiled_world`);
    a run whose drawn streams ran out is run again with longer ones, one whose gang store ran out (gangs placed
    again after failures) with a larger one.  ``events`` is the
    SimPy engine's event count for the same run (the loop pushes an entry wherever SimPy would, and
    counts the pushes as SimPy's ``next(env._eid)`` does); ``policy_time_s`` is the whole loop's wall
    time (decisions run inside it, not timed alone).  O((n + e) log n) plus MCT's O(ready x m x
    in-degree) per decision (the job-aware rules: :func:`~simsched.simulator.engine.compiled_jobaware.decide`),
    in compiled code."""
    from simsched.simulator.engine.compiled_world import longer, world_args, world_of, world_stats
    from simsched.simulator.noise import check_factors

    why = compiled_applies(problem, policy, pstate_slowdown=pstate_slowdown)
    if why is not None:
        raise SimschedError(f"engine 'compiled': {why}")
    if factors is not None:
        factors = check_factors(factors, problem.n_tasks)
    k = kernel_module()

    if tables is None or gate is None and policy_kernel(policy) == GATE_KERNEL:
        both = policy_tables(problem, policy, disruptions)
        if isinstance(both, str):
            raise SimschedError(f"engine 'compiled': {both}")
        tables, gate = both
    replay = policy.log if policy_kernel(policy) == "replay" else None
    world = state = None
    if disruptions is not None and disruptions.active:
        state = disruption_rng.bit_generator.state if disruption_rng is not None else None
        world = world_of(problem, disruptions, disruption_rng)
        if world is None:
            return None
    ps = _pstate_args(problem, policy, pstate_slowdown)
    t0 = time.perf_counter()
    room = 1 if world is None else 2  # failures may drop gangs, placed again on new slots of the store
    with lazy_rows(policy, gate) as key:  # a gate whose rows the run fills: the loop asks the policy by this key
        while True:
            gang, gz = _gang_args(problem, tables, room), gate_state(problem.n_processors, key)
            out = _call(problem, _code(k, policy, tables), replay, factors, tables,
                        None if world is None else world_args(world), ps, gang, gate, gz)
            if out is None or out[0] not in (k.NEED_DRAWS, k.NEED_ROOM):
                break
            if out[0] == k.NEED_ROOM:
                room *= 4
            else:
                world = longer(world)
    wall = time.perf_counter() - t0
    if out is None or out[0] != k.OK or np.isnan(out[3]).any():
        if state is not None:  # the SimPy engine runs it again from the same generator
            disruption_rng.bit_generator.state = state
        return None
    _status, proc, start, finish, events, decisions, assignments, _, ws = out
    stats = {"decisions": int(decisions), "policy_time_s": wall, "assignments": int(assignments),
             "events": int(events), "engine": "compiled"}
    if world is not None:
        stats.update(world_stats(ws, pstate_slowdown is not None))
    if pstate_slowdown is not None:  # a power model: the P-state each task (its last attempt) ran at
        stats["pstate"] = ws[17].copy()
    if gate is not None:
        gate_ran(policy, gz)
    proc = proc.astype(np.int64)  # the loop's int32 (4 bytes a task while it runs), the schedule's int64
    for a in (proc, start, finish):  # the loop's own arrays, read-only: the schedule keeps them
        a.setflags(write=False)
    return Schedule(proc, start, finish, gang=_schedule_gang(proc, gang[1])), stats


def _schedule_gang(proc: np.ndarray, gs: tuple):
    """The schedule's :class:`~simsched.simulator.gang.Gang` from the loop's gang state: None when no task ran
    on several processors (as the SimPy engine names none), else each task's members, lead first.  O(n + sum k)."""
    offset, k, members = gs[1], gs[2], gs[3]
    if not k.size or not bool((k > 1).any()):
        return None
    from simsched.simulator.gang import Gang

    count = np.where(k > 1, k, 1)
    ptr = np.zeros(proc.size + 1, dtype=np.int64)
    np.cumsum(count, out=ptr[1:])
    flat = proc[np.repeat(np.arange(proc.size), count)].astype(np.int64)
    multi = np.flatnonzero(k > 1)
    pos = np.concatenate([np.arange(ptr[t], ptr[t + 1]) for t in multi.tolist()])
    src = np.concatenate([np.arange(offset[t], offset[t] + k[t]) for t in multi.tolist()])
    flat[pos] = members[src]
    return Gang(ptr, flat)


def dispatch(engine: str, problem: Problem, policy, factors, disruptions, pstate_slowdown, *, extended=False,
             disruption_rng: np.random.Generator | None = None):
    """``run_online``'s hook: the compiled run's ``(schedule, OnlineStats fields)``, or None to run on
    SimPy.  ``auto``: compiled when :func:`compiled_applies` and the problem has :data:`AUTO_MIN_TASKS`
    tasks (a numba that fails to import counts as missing); ``compiled``: :class:`SimschedError` when it
    does not apply.  O(n) checks."""
    if engine not in ENGINES:
        raise SimschedError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if engine == "auto" and (problem.n_tasks < AUTO_MIN_TASKS or policy_kernel(policy) is None):
        return None
    why = compiled_applies(problem, policy, factors, disruptions, pstate_slowdown, extended=extended)
    if why is not None:
        if engine == "compiled":
            raise SimschedError(f"engine 'compiled': {why}")
        return None
    if engine == "auto":
        try:
            kernel_module()
        except ImportError:  # a broken numba install: the ground truth runs instead
            return None
    both = policy_tables(problem, policy, disruptions)
    if isinstance(both, str):
        if engine == "compiled":
            raise SimschedError(f"engine 'compiled': {both}")
        return None
    return run_compiled(problem, policy, factors, pstate_slowdown, both[0], disruptions, disruption_rng, both[1])
