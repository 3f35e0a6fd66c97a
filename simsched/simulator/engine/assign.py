"""Assignment and the per-processor queues of the online engine: a policy's assignment checked and
costed, the task's inputs sent to its processor, its place in the processor's FIFO queue, and the
start of a queue's head once the processor is free and the head's data is there.

The mixin :class:`Assignment` of :class:`~simsched.simulator.engine.loop.OnlineRun`.  Multi-processor
tasks go through :class:`~simsched.simulator.engine.gangs.GangAllocation` instead, which reuses the
queues and :meth:`Assignment._release`.
"""

from __future__ import annotations

from collections import deque
from heapq import heappush

import numpy as np
from simpy.events import NORMAL, Event, Timeout

from simsched.errors import SimschedError
from simsched.simulator.engine.common import Tick, uniform_link
from simsched.simulator.noise import check_factors

_INF = float("inf")


class Assignment:
    """Per task: ``processor``/``proc_of`` (its processor, -1 before assignment), ``cost`` (the time it
    holds the processor, before noise), ``pstate``, ``start``, ``data_time``/``data_ok`` (when its
    inputs are, or were, on its processor); per processor: ``queue`` (assigned tasks not started, in
    order), ``running`` (the task running, -1 when none: the processor can start its queue's head),
    ``expected_end`` and ``idle`` (what a :class:`~simsched.simulator.policy.DecisionView` shows).

    The hooks a new part of the model of execution overrides (see :mod:`simsched.simulator.engine`):
    :meth:`_checked_cost` (how long a task holds its processor), :meth:`_input_delay` (where the
    transfers of a task's inputs are started and timed), :meth:`_start_next` (a queue's head starts
    and its duration becomes a finish event) and :meth:`_release` (a processor ended what it ran)."""

    def _init_assignment(self, factors: np.ndarray | None, pstate_slowdown: np.ndarray | None) -> None:
        """Assignment state of a fresh run: nothing assigned, every processor idle.  O(n + e + m)."""
        problem = self.problem
        g = problem.graph
        n, m = problem.n_tasks, problem.n_processors
        self.factors = None if factors is None else check_factors(factors, n).tolist()
        # the hot path reads plain Python lists (an element of a list costs a fraction of a numpy
        # scalar read); the numpy arrays a DecisionView exposes are kept beside them
        self.pred_ptr = g.pred_ptr.tolist()
        self.pred_src = g.edge_src[g.pred_edges].tolist()
        self.pred_data = g.edge_data[g.pred_edges].tolist()
        # Problem.transfer_time's terms: one (latency, 1 / bandwidth) pair for every link when the
        # platform's links are all alike (the same floats, without (m, m) lists whose random reads
        # miss the cache at 1,000 processors), else (m, m) as rows
        self.link = uniform_link(problem.latency, problem.inv_bandwidth)
        if self.link is None:
            self.latency = problem.latency.tolist()
            self.inv_bandwidth = problem.inv_bandwidth.tolist()
        self.processor = np.full(n, -1, dtype=np.int64)
        self.proc_of = [-1] * n  # mirror of ``processor``
        self.cost = [0.0] * n  # execution time of an assigned task on its processor (problem.cost_at)
        self.pstate = [0] * n  # the P-state an assigned task runs at
        self.planned: list[int] | None = None  # processors a plan named before the run (see _sent_ahead)
        self.pslow = None
        if pstate_slowdown is not None:
            slow = np.asarray(pstate_slowdown, dtype=np.float64)
            if slow.ndim != 2 or slow.shape[0] != m:
                raise SimschedError(f"pstate_slowdown must be (processors, P-states), got shape {slow.shape}")
            self.pslow = np.where(np.isnan(slow), np.inf, slow).tolist()
        self.start = [np.nan] * n
        self.data_time = [0.0] * n  # when an assigned task's inputs are (were) on its processor
        self.data_ok = [False] * n
        self.queue: list[deque[int]] = [deque() for _ in range(m)]
        self.running = [-1] * m
        self.n_processors = m
        self.expected_end = np.zeros(m)
        self.idle = np.ones(m, dtype=bool)

    def _assign(self, v: int, p: int, k: int = 0) -> None:
        """Append ready task ``v`` to processor ``p``'s queue, to run at P-state ``k`` (:func:`run_online`),
        and send its inputs there (:meth:`_input_delay`): one data-ready event per task, or, when ``p``
        is idle with an empty queue and nothing can stop it meanwhile (``direct_start``), its finish
        event at once (:meth:`_start_when_data`).  O(in-degree)."""
        w = self._checked_cost(v, p, k)
        now = self.env._now
        self.ready.discard(v)
        self.processor[v] = p
        self.proc_of[v] = p
        self.cost[v] = w
        self.stats.assignments += 1
        delay = self._input_delay(v, p)
        sent = None if self.planned is None else self._sent_ahead(v, p, delay)
        if sent is not None:  # inputs sent to the planned processor as each producer finished
            delay = sent - now if sent > now else 0.0
        if delay > 0.0:
            ready_at = self.data_time[v] = now + delay if sent is None else sent
            if self.direct_start and self.running[p] < 0 and not self.queue[p]:
                self._start_when_data(v, p, ready_at, w)
                return
            tag = v if self.disruptions is None else (v, self.attempt[v])
            heappush(self._events, (now + delay, NORMAL, next(self._eid), Tick(self._on_data, tag)))
        else:
            self.data_ok[v] = True
            self.data_time[v] = now
        ee = self.expected_end
        ee[p] = max(ee.item(p), self.data_time[v]) + w
        self.idle[p] = False
        q = self.queue[p]
        q.append(v)
        if self.running[p] < 0 and len(q) == 1 and self.data_ok[v] and not self.down[p]:
            self._start_next(p)

    def _checked_cost(self, v: int, p: int, k: int) -> float:
        """The time task ``v`` holds processor ``p`` at P-state ``k`` (``W[v, p]`` times the P-state's
        slowdown; noise and stragglers come at the start), after checking the assignment: ``v`` ready
        and unassigned, ``p`` a processor that may run it, ``v`` a single-processor task, ``k`` a P-state
        ``p`` has.  Records ``v``'s P-state.  :class:`SimschedError` naming the policy otherwise.  O(1)."""
        prob = self.problem
        if v not in self.ready:
            g = prob.graph
            what = (f"task index {v}, which does not exist" if not 0 <= v < prob.n_tasks else
                    f"task {g.names[v]!r}, which is " +
                    ("already assigned" if self.proc_of[v] >= 0 else "not ready"))
            raise SimschedError(f"policy {self.policy_name!r} assigned {what}")
        if not 0 <= p < self.n_processors:
            raise SimschedError(f"policy {self.policy_name!r} assigned task {prob.graph.names[v]!r} to processor "
                                f"index {p}, which does not exist")
        if self.min_k is not None and self.min_k[v] > 1:
            raise SimschedError(f"policy {self.policy_name!r} assigned task {prob.graph.names[v]!r} to one processor "
                                f"but it needs {self.min_k[v]} at once: assign (task, (processor, ...))")
        w = prob.cost_at(v, p)
        if not w < _INF:
            raise SimschedError(f"policy {self.policy_name!r} assigned task {prob.graph.names[v]!r} to "
                                f"{prob.platform.names[p]!r}, which may not run it")
        if k or self.pstate[v]:
            if k:
                slow = self.pslow[p][k] if self.pslow is not None and 0 < k < len(self.pslow[p]) else _INF
                if not slow < _INF:
                    raise SimschedError(f"policy {self.policy_name!r} ran task {prob.graph.names[v]!r} at P-state {k} "
                                        f"on {prob.platform.names[p]!r}, which has no such P-state"
                                        + ("" if self.pslow is not None else " (the platform has no power model)"))
                w = w * slow
            self.pstate[v] = k
        return w

    def _sent_ahead(self, v: int, p: int, delay: float) -> float | None:
        """When every input of ``v`` is on ``p`` if the policy named ``p`` for ``v`` before the run
        (``policy.planned_processor[v] == p``, full numbering: a static plan followed online, see
        :class:`~simsched.run.streams.PlanFollower`): each input was sent as its producer finished, so
        it is there at ``max(finish[u] + transfer)``, the closed plan replay's floats; None otherwise
        (inputs are sent now, at the assignment).  Only the plain network path (``_input_delay`` not
        overridden, e.g. by storage).  O(in-degree)."""
        planned = self.planned
        if planned is None or delay <= 0.0 or planned[v] != p or type(self)._input_delay is not \
                Assignment._input_delay:
            return None
        lo, hi = self.pred_ptr[v], self.pred_ptr[v + 1]
        finish, proc_of = self.finish, self.proc_of
        out = None
        for u, x in zip(self.pred_src[lo:hi], self.pred_data[lo:hi]):
            if self.link is not None:
                same_lat, same_inv, dlat, dinv = self.link
                t = same_lat + x * same_inv if proc_of[u] == p else dlat + x * dinv
            else:
                s = proc_of[u]
                t = self.latency[s][p] + x * self.inv_bandwidth[s][p]
            at = float(finish[u]) + t
            if out is None or at > out:
                out = at
        return out

    def _input_delay(self, v: int, p: int) -> float:
        """Time from now until every input of task ``v`` is on processor ``p``: ``max`` over its
        in-edges of ``Problem.transfer_time`` (latency plus data over bandwidth; zero on the same
        processor).  Every input transfer starts now (a policy assigns only ready tasks, so every
        producer has finished), and links are contention-free, so this is one number.  The max is
        unrolled over Python lists (the same two float operations per edge as ``transfer_time``, so
        the same floats).  O(in-degree)."""
        delay = 0.0
        pred_ptr = self.pred_ptr
        lo, hi = pred_ptr[v], pred_ptr[v + 1]
        if hi > lo:
            first = True
            proc_of = self.proc_of
            if self.link is not None:
                same_lat, same_inv, lat, inv = self.link
                for u, x in zip(self.pred_src[lo:hi], self.pred_data[lo:hi]):
                    t = same_lat + x * same_inv if proc_of[u] == p else lat + x * inv
                    if first or t > delay:
                        delay, first = t, False
            else:
                lat, inv = self.latency, self.inv_bandwidth
                for u, x in zip(self.pred_src[lo:hi], self.pred_data[lo:hi]):
                    s = proc_of[u]
                    t = lat[s][p] + x * inv[s][p]
                    if first or t > delay:
                        delay, first = t, False
        return delay

    def _start_when_data(self, v: int, p: int, ready_at: float, w: float) -> None:
        """Task ``v``, just assigned to idle processor ``p`` with an empty queue, starts when its
        data is there (``ready_at``): one event, its finish at ``ready_at + duration``, instead of a
        data-ready event and then a finish event.  Only under ``direct_start`` (nothing can stop ``p``
        meanwhile).  The same floats as the two-event path: the data event would fire at
        ``ready_at`` (SimPy adds the delay to now) and the finish ``duration`` after it; ``p``'s
        expected end ``ready_at + W`` is what the start would refresh it to, since an idle
        processor's expected end is at most now.  Other tasks assigned to ``p`` meanwhile queue
        behind ``v`` as they would behind a task waiting for its data.  O(1)."""
        self.data_ok[v] = True
        self.running[p] = v
        self.start[v] = ready_at
        d = w if self.factors is None else w * self.factors[v]
        ee = self.expected_end
        ee[p] = max(ee.item(p), ready_at) + w
        self.idle[p] = False
        heappush(self._events, (ready_at + d, NORMAL, next(self._eid), Tick(self._on_finish, v)))

    def _on_data(self, ev: Event) -> None:
        """The inputs of a queued task are on its processor: start it if it heads the queue of a free
        processor that is up."""
        v = ev._value
        if self.disruptions is not None:
            v, attempt = v
            if attempt != self.attempt[v]:  # the task was handed back after a failure meanwhile
                return
        self.data_ok[v] = True
        p = self.proc_of[v]
        q = self.queue[p]
        if self.running[p] < 0 and q[0] == v and not self.down[p]:
            self._start_next(p)

    def _start_next(self, p: int) -> None:
        """Start the head of processor ``p``'s queue now (its data is there, ``p`` is free and up): its
        duration is its cost times its noise factor (times the slowdown while ``p`` is slowed down),
        its finish an event that far ahead; refresh ``p``'s expected end from it.  O(queue length)."""
        q = self.queue[p]
        if self.gangs and q[0] in self.gangs:  # a multi-processor task starts on all its members at once
            self._start_gang(q[0])
            return
        v = q.popleft()
        now = self.env._now
        self.running[p] = v
        self.start[v] = now
        d = self.cost[v]
        t = now + d
        if self.factors is not None:
            d = d * self.factors[v]
        if self.disruptions is None:
            heappush(self._events, (now + d, NORMAL, next(self._eid), Tick(self._on_finish, v)))
        else:
            if self.slow[p]:
                d = d * self.disruptions.slowdown
                self.stats.slowed_tasks += 1
            Timeout(self.env, d, (v, self.attempt[v])).callbacks.append(self._on_finish_checked)
        self.expected_end[p] = self._queue_end(p, t)

    def _release(self, p: int) -> None:
        """Processor ``p`` has ended what it ran: start its next task, or mark it idle (a decision
        point) or, while it is down, available at its repair.  O(1) plus the start."""
        now = self.env._now
        self.running[p] = -1
        q = self.queue[p]
        if q:
            if self.data_ok[q[0]] and not self.down[p]:
                self._start_next(p)
        elif self.down[p]:
            self.expected_end[p] = max(now, self.repair_at[p])
        else:
            self.idle[p] = True
            self.expected_end[p] = now
            self._decision_point("idle")

    def _queue_end(self, p: int, t: float) -> float:
        """Expected time processor ``p`` finishes its queue if it starts on it at ``t``.  O(queue length)."""
        cost, data_time = self.cost, self.data_time
        for u in self.queue[p]:
            t = max(t, data_time[u]) + cost[u]
        return t
