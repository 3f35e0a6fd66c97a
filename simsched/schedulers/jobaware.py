"""Job-aware online heuristics for streams of DAG jobs, and the one-task-at-a-time placement loop
they share with the RL agents.

A job stream (:mod:`simsched.workloads.jobs`) merges its jobs into one task graph whose task names
carry a ``j<k>.`` prefix; these policies recover each task's job from it
(:func:`~simsched.workloads.jobs.job_ids`) and choose *which job* to serve next, then place that
job's most urgent ready task (highest upward rank, Topcuoglu et al. 2002) on the processor expected
to finish it first (HEFT's processor rule applied online, late binding):

* :class:`OnlineHEFT` (``online-heft``) — job-blind: the ready task of highest upward rank.
* :class:`ShortestJobEFT` (``srjf-eft``) — shortest remaining job first: the job with the least
  remaining mean work (not yet assigned), the rule that minimises mean flow time on one machine
  (Schrage 1968, SRPT); ties by higher priority, then by rank.
* :class:`FairShareEFT` (``fair-eft``) — weighted fair share (least attained service): the job whose
  assigned mean work so far, divided by its weight ``1 + max(priority, 0)``, is smallest, so
  concurrent jobs progress at rates proportional to their weights (the "fair" baseline of Decima,
  Mao et al. SIGCOMM 2019; generalised processor sharing, Parekh & Gallager 1993); ties by the
  earlier job.  ``alpha`` (default 0) makes it Decima's *tuned weighted fair* rule: each job's
  weight is further multiplied by its total mean work to the power ``alpha`` (``alpha < 0`` favours
  small jobs, ``alpha > 0`` large ones), ``alpha`` tuned per workload by a grid search.

All place one task at a time while some processor is idle (:class:`OneByOne`), updating the view
between placements with :func:`assume_assigned`.  Cost per placement O(n + k m) for n tasks and k
ready tasks (a bincount over the tasks, then vectorised completion times).
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.gang_eft import gang_choice
from simsched.simulator.arrived import Appender, grown
from simsched.simulator.policy import DecisionView
from simsched.simulator.problem import Problem

Assignments = list[tuple[int, int]]


def _rank(problem: Problem) -> np.ndarray:
    """(n,) upward rank (HEFT's, Topcuoglu et al. 2002), ``nan``/``inf`` read as 0.  O(n m + e)."""
    from simsched.schedulers.heft import upward_rank

    return np.nan_to_num(upward_rank(problem), nan=0.0, posinf=0.0)


def assume_assigned(view: DecisionView, task: int, processor: int, finish: float | None = None) -> DecisionView:
    """The view after assigning ``task`` to ``processor`` without running the simulation (the
    engine's own update of ``available``), for policies that place several tasks in one ``decide``
    call.  ``finish``: the task's expected finish there, ``view.completion_times([task])[0,
    processor]``, when the caller has it already (else computed).  O(in-degree x m + k)."""
    ct = view.completion_times(np.array([task]))[0, processor] if finish is None else finish
    proc = np.array(view.processor)
    proc[task] = processor
    available = np.array(view.available)
    available[processor] = ct
    idle = np.array(view.idle)
    idle[processor] = False
    return DecisionView(view.problem, view.now, view.ready[view.ready != task], proc, view.finish,
                        available, idle, view.trigger)


class OneByOne:
    """Place ready tasks one at a time (:meth:`choose`) while a processor is idle, updating the
    view between placements (:func:`assume_assigned`).

    Subclasses that only choose the task (:meth:`pick_task`, the heuristics below) take a faster,
    equivalent path: each placement computes the chosen task's completion times alone and updates
    ``available``/``idle`` of one processor instead of copying the view's (n,) arrays.  O(k) per
    decision (the eligibility of the ready set is checked only when a chosen task has no finite
    completion time, i.e. may run nowhere) plus O(in-degree x m) and :meth:`pick_task`'s cost per
    placement, for k ready tasks and m processors (the view-copying path is O(n + k m) per
    placement).
    """

    name = ""

    n_seen = 0
    """Tasks of the visible problem the per-task tables cover (set by ``reset`` and :meth:`grow`)."""

    _tables: Appender | None = None
    """Where the per-task tables grow (set by ``reset``; None: each arrival copies them)."""

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        self.rank = _rank(problem)
        self.n_seen = problem.n_tasks
        self._tables = Appender()  # the per-task tables, grown in amortised O(new tasks) per arrival

    def grow(self, problem: Problem) -> None:
        """Tasks arrived: ``problem`` (the view's, :mod:`simsched.simulator.arrived`) has more tasks
        than the tables; extend them.  Upward ranks of the new tasks are computed on their own block
        when no edge joins it to the old tasks (a job stream), so O(new tasks x m) per arrival."""
        self.rank = grown(self.rank, problem, _rank, tables=self._tables, key="rank")

    def decide(self, view: DecisionView) -> Assignments:
        if view.problem.n_tasks != self.n_seen:
            self.grow(view.problem)
            self.n_seen = view.problem.n_tasks
        ready = view.ready
        if type(self).choose is OneByOne.choose:
            return self._decide_by_task(view)
        stuck = ready[~view.problem.eligible_rows(ready).any(axis=1)]
        if stuck.size:  # no processor may run it: the engine rejects this with a SimschedError
            return [(int(stuck[0]), 0)]
        out: Assignments = []
        while view.ready.size and view.idle.any():
            t, p = self.choose(view)
            out.append((t, p))
            view = self.assume(view, t, p)
        return out

    def assume(self, view: DecisionView, task: int, processor: int) -> DecisionView:
        """The view after :meth:`choose` placed ``task`` on ``processor``: :func:`assume_assigned`
        (a subclass that knows the expected finish passes it on).  O(in-degree x m + k)."""
        return assume_assigned(view, task, processor)

    def _decide_by_task(self, view: DecisionView) -> Assignments:
        """:meth:`decide` for :meth:`pick_task` subclasses (see the class docstring); the same
        assignments as the view-copying loop, float for float."""
        ready = view.ready
        available = np.array(view.available, dtype=np.float64)
        idle = np.array(view.idle)
        left = np.ones(ready.size, dtype=bool)
        placed: list[int] = []
        out: Assignments = []
        n_idle = int(idle.sum())
        multi = view.problem.graph.procs_max if view.problem.graph.gang else None
        self._begin_decision(view, ready)
        while n_idle and left.any():
            t = self.pick_task(view, ready[left], placed)
            self._after_placement(t)
            if multi is not None and multi[t] > 1:  # a gang: the k processors of one type that finish it first
                choice = gang_choice(view.problem, t, view.data_ready_row(t), available)
                if choice is None:  # the engine refuses it, naming the task
                    self._end_decision()
                    return [(t, 0)]
                members = choice[2]
                out.append((t, tuple(members.tolist())))
                placed.append(t)
                left[np.searchsorted(ready, t)] = False
                available[members] = choice[1]
                n_idle -= int(idle[members].sum())
                idle[members] = False
                continue
            # the chosen task's row only: a backlog of ready tasks costs nothing per placement
            ct = np.maximum(available, view.data_ready_row(t)) + view.problem.cost_row(t)
            p = int(ct.argmin())
            if not ct[p] < np.inf:  # only when a ready task may run nowhere: checked here, not per decision
                stuck = ~view.problem.eligible_rows(ready).any(axis=1)
                self._end_decision()  # the first such task, as the view-copying loop returns it
                return [(int(ready[np.argmax(stuck)]), 0)]
            left[np.searchsorted(ready, t)] = False
            p = self._processor_for(view, t, ct, p, idle, n_idle, placed)
            if p < 0:
                continue  # the subclass keeps it for a later decision point
            out.append((t, p))
            placed.append(t)
            available[p] = ct[p]
            if idle[p]:
                idle[p] = False
                n_idle -= 1
        self._end_decision()
        return out

    def _begin_decision(self, view: DecisionView, ready: np.ndarray) -> None:
        """Hook: a fast-path decision starts (``ready`` are its ready tasks)."""

    def _processor_for(self, view: DecisionView, task: int, ct: np.ndarray, p: int, idle: np.ndarray,
                       n_idle: int, placed: list[int]) -> int:
        """Hook: the processor ``task`` goes to in a fast-path decision, given its expected completion
        times ``ct`` (m,) and their argmin ``p`` (finite), the processors still ``idle`` (``n_idle``
        of them) and the tasks ``placed`` so far at this instant; -1 leaves it waiting for a later
        decision point.  Default ``p``: the earliest expected finish.  O(1)."""
        return p

    def _after_placement(self, task: int) -> None:
        """Hook: ``task`` was just chosen by :meth:`pick_task` in a fast-path decision."""

    def _end_decision(self) -> None:
        """Hook: a fast-path decision ends."""

    def choose(self, view: DecisionView) -> tuple[int, int]:
        """The next ``(task, processor)``: :meth:`pick_task`, on its earliest expected finish."""
        t = self.pick_task(view, view.ready, ())
        return t, int(np.argmin(view.completion_times(np.array([t]))[0]))

    def pick_task(self, view: DecisionView, ready: np.ndarray, placed) -> int:
        """The ready task to place next among ``ready`` (ascending), given that the tasks ``placed``
        were assigned at this instant after ``view`` was taken."""
        raise NotImplementedError


class OnlineHEFT(OneByOne):
    """Highest upward rank first, earliest expected finish (job-blind online HEFT).  O(k) per
    placement."""

    name = "online-heft"
    compiled_kernel = "online-heft"  # the compiled stream engine's form (simsched.simulator.engine.compiled_jobaware)
    multiprocessor_tasks = True  # gang tasks by gang-aware EFT (simsched.schedulers.gang_eft)

    def pick_task(self, view: DecisionView, ready: np.ndarray, placed) -> int:
        return int(ready[np.argmax(self.rank[ready])])

    def compiled_tables(self, problem: Problem):
        """The tables the compiled stream engine decides with
        (:func:`~simsched.simulator.engine.compiled.rank_tables`): the upward ranks of the whole
        ``problem``, which are those this policy grows arrival by arrival on a stream whose arrival
        groups share no edge (the engine checks that; a test holds them equal).  O(n m + e)."""
        from simsched.simulator.engine.compiled import rank_tables

        return rank_tables(problem, _rank(problem))


class _JobAware(OneByOne):
    """Knows each task's job (from the stream's name prefixes) and each job's mean work.  A task
    that needs several processors goes to the gang that finishes it first
    (:func:`~simsched.schedulers.gang_eft.gang_choice`, over the processors' expected free times).

    A job's remaining (fair-eft: attained) work is summed over that job's tasks only, in index
    order and one after another — the very additions ``np.bincount`` over all tasks makes, so the
    same floats — for the jobs of the ready tasks: O(size of those jobs) per placement instead of
    O(n)."""

    multiprocessor_tasks = True

    def _job_tables(self, problem: Problem) -> None:
        """Job ids and per-job tables of the visible (arrived) problem, built anew.  O(n log n + n m)."""
        from simsched.workloads.jobs import dense_job_ids, job_ids

        self.jobs = dense_job_ids(self._keys) if self._keys is not None else job_ids(problem.graph)
        self.n_jobs = int(self.jobs.max()) + 1 if self.jobs.size else 0
        mean = problem.mean_cost  # read-only; shared when finite (nan_to_num would copy it unchanged)
        self.cost = mean if np.isfinite(mean).all() else np.nan_to_num(mean, posinf=0.0)
        self.job_priority = np.full(self.n_jobs, -np.inf)
        np.maximum.at(self.job_priority, self.jobs, problem.graph.priority)
        order = np.argsort(self.jobs, kind="stable")  # each job's tasks, ascending
        bounds = np.searchsorted(self.jobs[order], np.arange(self.n_jobs + 1))
        self.job_tasks = [order[a:b] for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
        self._sums = np.zeros(self.n_jobs)  # per job, valid where _valid (inside fast-path decisions)
        self._valid = np.zeros(self.n_jobs, dtype=bool)
        self._key_ids: dict[int, int] | None = None  # job key -> dense id, made at the first arrival
        self._job_weights(0, 0)

    def _job_weights(self, first: int, seen: int) -> None:
        """Hook: a subclass's per-job tables extended to the jobs ``first ..``, whose tasks are the tasks
        ``seen ..`` (:attr:`cost`, :attr:`jobs` and :attr:`job_priority` cover them already; ``0, 0``:
        build them anew).  O(those tasks)."""

    def _new_jobs(self, problem: Problem, seen: int, block: Problem | None) -> bool:
        """Extend the per-job tables by the tasks ``seen ..`` of ``problem`` when they are whole new jobs
        (``j<k>.`` keys no arrived task had: a job stream's arrival) and ``block`` (those tasks alone,
        :func:`~simsched.simulator.arrived.new_block`) is not joined to the old tasks; False (nothing
        changed) otherwise.  The tables are the ones :meth:`_job_tables` builds for the whole problem,
        float for float: dense ids in order of first appearance, each job's tasks ascending, the
        maximum priority, and each task's mean cost, a sum over its own row alone
        (:attr:`~simsched.simulator.problem.Problem.mean_cost`).  O(new tasks x m) per arrival,
        instead of the rebuild's O(n log n + n m)."""
        if block is None or self._keys is None or self._keys.size != problem.n_tasks:
            return False
        new = self._keys[seen:]
        ids = self._key_ids
        if ids is None:  # the old tasks' keys, once: O(n) at the first arrival only
            ids = self._key_ids = dict(zip(self._keys[:seen].tolist(), self.jobs.tolist()))
        first = self.n_jobs
        fresh: dict[int, int] = {}
        for key in new.tolist():
            if key in ids:
                return False  # a task of a job already here (its sums and priority would change)
            if key not in fresh:
                fresh[key] = first + len(fresh)
        ids.update(fresh)
        jobs = np.fromiter((fresh[key] for key in new.tolist()), dtype=np.int64, count=new.size)
        extend = self._tables.extend
        self.jobs = extend("jobs", self.jobs, jobs)
        self.n_jobs = first + len(fresh)
        self.cost = extend("cost", self.cost, np.nan_to_num(block.mean_cost, posinf=0.0))
        priority = np.full(len(fresh), -np.inf)
        np.maximum.at(priority, jobs - first, block.graph.priority)
        self.job_priority = extend("job_priority", self.job_priority, priority)
        order = np.argsort(jobs, kind="stable")  # the new jobs' tasks, ascending
        bounds = np.searchsorted(jobs[order], np.arange(first, self.n_jobs + 1))
        order += seen
        self.job_tasks.extend(order[a:b] for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()))
        self._sums = extend("_sums", self._sums, np.zeros(len(fresh)))
        self._valid = np.zeros(self.n_jobs, dtype=bool)  # as after a rebuild: every sum recomputed when asked
        self._job_weights(first, seen)
        return True

    served = False
    """What :meth:`job_sums` adds up: ``False`` the work not yet assigned, ``True`` the work assigned."""

    compiled_rule = ""
    """The rule of :meth:`compiled_tables` (:data:`~simsched.simulator.engine.compiled.JOB_RULES`)."""

    def compiled_tables(self, problem: Problem):
        """The tables the compiled stream engine decides with
        (:class:`~simsched.simulator.engine.compiled.JobTables`): those of a twin of this policy reset on
        the whole ``problem`` (ranks, job ids, mean costs, each job's tasks, priority and weight), which
        are the tables this policy holds at every decision point of a stream whose arrival groups share
        no edge and no job (the engine checks that; a test holds them equal).  This policy is not
        changed.  O(n log n + n m + e)."""
        import copy

        from simsched.simulator.engine.compiled import JobTables

        twin = copy.copy(self)
        twin.reset(problem, np.random.default_rng(0))
        ptr = np.zeros(twin.n_jobs + 1, dtype=np.int64)
        np.cumsum([t.size for t in twin.job_tasks], out=ptr[1:])
        task = np.concatenate(twin.job_tasks) if twin.job_tasks else np.zeros(0, dtype=np.int64)
        weight = getattr(twin, "weight", None)
        return JobTables(self.compiled_rule, twin.rank, twin.jobs, twin.cost, ptr, task.astype(np.int64, copy=False),
                         twin.job_priority, np.ones(twin.n_jobs) if weight is None else weight)

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        from simsched.workloads.jobs import stream_job_keys

        super().reset(problem, rng)
        self._keys = stream_job_keys(problem.graph.names)  # j<k>. prefixes, parsed once per task
        self._mine = np.zeros(problem.n_tasks, dtype=bool)
        self._caching = False
        self._job_tables(problem)

    def grow(self, problem: Problem) -> None:
        """Tasks arrived: extend the ranks, parse the new names' job prefixes only, and extend the
        per-job tables by the new jobs (:meth:`_new_jobs`), or rebuild them when the new tasks join a
        job or a task already here.  O(new tasks x m) per arrival of whole new jobs (plus the numpy
        cut of the new block, :func:`~simsched.simulator.arrived.new_block`)."""
        from simsched.simulator.arrived import new_block
        from simsched.workloads.jobs import stream_job_keys

        seen = self.rank.shape[0]
        block = new_block(problem, seen) if 0 < seen < problem.n_tasks else None
        self.rank = grown(self.rank, problem, _rank, block, self._tables, "rank")
        if self._keys is not None:  # the block's names: the visible graph's are O(n) to gather
            more = stream_job_keys(problem.graph.names[seen:] if block is None else block.graph.names)
            self._keys = None if more is None else self._tables.extend("_keys", self._keys, more)
        self._mine = self._tables.extend("_mine", self._mine, np.zeros(problem.n_tasks - seen, dtype=bool))
        if not self._new_jobs(problem, seen, block):
            self._job_tables(problem)

    def _begin_decision(self, view: DecisionView, ready: np.ndarray) -> None:
        # a job's sum changes only when one of its tasks is assigned (here) or handed back after a
        # failure (a ready task this policy placed before): forget exactly those jobs' sums
        back = ready[self._mine[ready]]
        self._valid[self.jobs[back]] = False
        self._mine[back] = False
        self._caching = True

    def _after_placement(self, task: int) -> None:
        self._valid[self.jobs[task]] = False
        self._mine[task] = True

    def _end_decision(self) -> None:
        self._caching = False

    def _job_sum(self, view: DecisionView, j: int, placed) -> float:
        tasks = self.job_tasks[j]
        mask = view.processor[tasks] >= 0
        if len(placed):  # the placed tasks of job j, located in its ascending task list
            mine = np.asarray(placed, dtype=np.int64)
            mask[np.searchsorted(tasks, mine[self.jobs[mine] == j])] = True
        if not self.served:
            mask = ~mask & np.isnan(view.finish[tasks])
        w = mask * self.cost[tasks]
        return float(np.cumsum(w)[-1]) if w.size else 0.0  # one addition after another, as bincount's

    def job_sums(self, view: DecisionView, job_of: np.ndarray, placed) -> np.ndarray:
        """For each job in ``job_of`` (one entry per ready task): the mean work of its tasks not yet
        assigned and not finished (:attr:`served` false) or of its tasks assigned so far (true),
        counting ``placed`` as assigned.  O(total size of those jobs); inside a fast-path decision
        only the jobs whose sum changed since it was last computed are summed again (O(their size)
        + O(len(job_of)))."""
        if not self._caching:
            jobs, inv = np.unique(job_of, return_inverse=True)
            return np.array([self._job_sum(view, j, placed) for j in jobs.tolist()])[inv]
        stale = job_of[~self._valid[job_of]]
        if stale.size:
            for j in set(stale.tolist()):
                self._sums[j] = self._job_sum(view, j, placed)
            self._valid[stale] = True
        return self._sums[job_of]


class ShortestJobEFT(_JobAware):
    """Shortest remaining job first, earliest expected finish (job-aware; see the module docstring).

    ``late_binding``: place tasks on *idle* processors only, never in the queue of a busy one: the
    ready tasks in shortest-remaining-job order each take the idle processor where they are expected
    to finish first, until no idle processor is left; the rest wait for the next decision point, so
    a job arriving meanwhile is not stuck behind work committed before it came (late binding, as in
    Decima's executor assignment, Mao et al., SIGCOMM 2019).  Default false (queueing, as before).
    O(k log k + k m) per decision for k ready tasks, m processors."""

    name = "srjf-eft"
    compiled_kernel = "srjf-eft"  # the compiled stream engine's form (simsched.simulator.engine.compiled_jobaware)

    def __init__(self, late_binding: bool = False) -> None:
        from simsched.errors import SimschedError

        if not isinstance(late_binding, bool):
            raise SimschedError(f"srjf-eft: late_binding must be true or false, got {late_binding!r}")
        self.late_binding = late_binding

    @property
    def compiled_rule(self) -> str:  # type: ignore[override]
        return "srjf-late" if self.late_binding else "srjf"

    def decide(self, view: DecisionView) -> Assignments:
        if not self.late_binding:
            return super().decide(view)
        if view.problem.n_tasks != self.n_seen:
            self.grow(view.problem)
            self.n_seen = view.problem.n_tasks
        ready, idle = view.ready, np.flatnonzero(view.idle)
        if not ready.size or not idle.size:
            return []
        job_of = self.jobs[ready]
        order = ready[np.lexsort((-self.rank[ready], -self.job_priority[job_of], self.job_sums(view, job_of, [])))]
        # placing a job's task only lowers that job's remaining work: the order holds through the decision
        ct = view.completion_times(order)[:, idle]
        free = np.ones(idle.size, dtype=bool)
        out: Assignments = []
        for i, t in enumerate(order.tolist()):
            row = np.where(free, ct[i], np.inf)
            j = int(np.argmin(row))
            if not np.isfinite(row[j]):
                continue  # may run on no idle processor: it waits
            out.append((t, int(idle[j])))
            free[j] = False
            if not free.any():
                break
        return out

    def pick_task(self, view: DecisionView, ready: np.ndarray, placed) -> int:
        job_of = self.jobs[ready]
        remaining = self.job_sums(view, job_of, placed)
        key = np.lexsort((-self.rank[ready], -self.job_priority[job_of], remaining))
        return int(ready[key[0]])


class FairShareEFT(_JobAware):
    """Weighted fair share between jobs (least attained service), earliest expected finish;
    ``alpha``: weights times (job's total mean work) ** alpha (Decima's tuned weighted fair)."""

    name = "fair-eft"
    served = True
    compiled_kernel = "fair-eft"  # the compiled stream engine's form (simsched.simulator.engine.compiled_jobaware)
    compiled_rule = "fair"

    def __init__(self, alpha: float = 0.0) -> None:
        from simsched.errors import SimschedError

        if not (isinstance(alpha, (int, float)) and np.isfinite(alpha) and -10 <= alpha <= 10):
            raise SimschedError(f"fair-eft: alpha must be a number in [-10, 10], got {alpha!r}")
        self.alpha = float(alpha)

    def _job_weights(self, first: int, seen: int) -> None:
        weight = 1.0 + np.maximum(self.job_priority[first:], 0.0)
        if self.alpha != 0.0:  # a job's total work is known once it has arrived
            work = np.bincount(self.jobs[seen:] - first, weights=self.cost[seen:], minlength=self.n_jobs - first)
            weight = weight * np.maximum(work, 1e-12) ** self.alpha
        if first:  # the old jobs' weights are unchanged: append (in place when there is room)
            old = self.weight if self.weight.shape[0] == first else self.weight[:first]
            self.weight = self._tables.extend("weight", old, weight)
        else:
            self.weight = weight

    def pick_task(self, view: DecisionView, ready: np.ndarray, placed) -> int:
        job_of = self.jobs[ready]
        served = self.job_sums(view, job_of, placed)
        key = np.lexsort((-self.rank[ready], job_of, served / self.weight[job_of]))
        return int(ready[key[0]])
