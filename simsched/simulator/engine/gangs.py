"""Multi-processor (gang) tasks in the online engine: allocation, start, release and failure of a
task that holds several processors at once (:mod:`simsched.simulator.gang` states the rule).

A mixin of :class:`~simsched.simulator.engine.loop.OnlineRun` (it reads and writes the assignment
state of :class:`~simsched.simulator.engine.assign.Assignment`: ``queue``, ``running``, ``ready``,
``cost``, ``data_ok`` ...), kept in its own module so the single-processor engine stays as it was;
the run enters here only for a task assigned to a tuple of processors (``gangs`` empty: never).
"""

from __future__ import annotations

from heapq import heappush

import numpy as np
from simpy.events import NORMAL, Event, Timeout

from simsched.errors import PlanError, SimschedError
from simsched.simulator.engine.common import Tick
from simsched.simulator.gang import Gang, check_gang, gang_durations

_INF = float("inf")


class GangAllocation:
    """Methods of the online run for multi-processor tasks (see the module docstring).  Owns
    ``min_k`` (processors each task needs at least; None without multi-processor tasks), ``gangs``
    (assigned multi-processor tasks -> members, lead first) and ``members_of`` (every gang a task ran
    on: the schedule's record)."""

    def _init_gangs(self) -> None:
        g = self.problem.graph
        self.min_k = g.procs_min.tolist() if g.gang else None
        self.gangs: dict[int, tuple[int, ...]] = {}
        self.members_of: dict[int, tuple[int, ...]] = {}

    def _assign_gang(self, v: int, members: tuple[int, ...]) -> None:
        """Append ready task ``v`` to the queue of every processor in ``members`` (lead first) and send
        its inputs to the lead.  It starts when it heads every member's queue, every member is free
        and its data is there (:meth:`_start_gang`); its duration is
        :func:`~simsched.simulator.gang.gang_durations` on the members.  O(in-degree + k)."""
        prob = self.problem
        if v not in self.ready or not 0 <= v < prob.n_tasks:
            self._assign(v, members[0])  # raises the not-ready / does-not-exist error
        lead = members[0]
        if not all(0 <= q < self.n_processors for q in members):
            raise SimschedError(f"policy {self.policy_name!r} assigned task {prob.graph.names[v]!r} to processor "
                                f"indices {list(members)}, some of which do not exist")
        one, gang = np.array([v]), Gang(np.array([0, len(members)]), np.array(members))
        try:
            check_gang(prob, np.array([lead]), gang, one)
        except PlanError as exc:
            raise SimschedError(f"policy {self.policy_name!r}: {exc}") from None
        w = float(gang_durations(prob, np.array([lead]), gang, one)[0])
        if not w < _INF:
            raise SimschedError(f"policy {self.policy_name!r} assigned task {prob.graph.names[v]!r} to processors "
                                f"{[prob.platform.names[q] for q in members]}, not all of which may run it")
        w = self._gang_cost(v, w)
        now = self.env._now
        self.ready.discard(v)
        self.processor[v] = lead
        self.proc_of[v] = lead
        self.cost[v] = w
        self.gangs[v] = self.members_of[v] = members
        self.stats.assignments += 1
        delay = self._gang_input_delay(v, lead)
        tag = v if self.disruptions is None else (v, self.attempt[v])
        if delay > 0.0:
            self.data_time[v] = now + delay
            heappush(self._events, (now + delay, NORMAL, next(self._eid), Tick(self._on_data, tag)))
        else:
            self.data_ok[v] = True
            self.data_time[v] = now
        ee = self.expected_end
        begin = max(max(ee.item(q) for q in members), self.data_time[v])
        for q in members:
            ee[q] = begin + w
            self.idle[q] = False
            self.queue[q].append(v)
        if self.data_ok[v]:
            self._start_gang(v)

    def _gang_input_delay(self, v: int, lead: int) -> float:
        """Time from now until every input of gang task ``v`` is on its lead ``lead``: the max of
        ``Problem.transfer_time`` over its in-edges (0 without any).  O(in-degree)."""
        prob = self.problem
        g = prob.graph
        edges = g.pred_edges[g.pred_ptr[v]:g.pred_ptr[v + 1]]
        return float(prob.transfer_time(edges, self.processor[g.edge_src[edges]], lead).max()) if edges.size else 0.0

    def _gang_cost(self, v: int, w: float) -> float:
        """How long multi-processor task ``v`` holds its members, given its runtime ``w`` on them: ``w``
        (the hook where workflow-system overheads add their ``pre``).  O(1)."""
        return w

    def _start_gang(self, v: int) -> None:
        """Start gang task ``v`` now if it heads the queue of every member, none runs anything or is
        down, and its data is there; otherwise do nothing (the last of these to happen calls again).
        O(k + queue lengths)."""
        if not self._gang_can_start(v):
            return
        members = self.gangs[v]
        running, queue = self.running, self.queue
        now = self.env._now
        self.start[v] = now
        w = self.cost[v]
        for q in members:
            queue[q].popleft()
            running[q] = v
            self.expected_end[q] = self._queue_end(q, now + w)
        self._hold_gang(v, now)

    def _gang_can_start(self, v: int) -> bool:
        """Whether gang task ``v`` may start now: its data is there and it heads the queue of every
        member, none of which runs anything or is down.  O(k)."""
        running, queue, down = self.running, self.queue, self.down
        return self.data_ok[v] and all(running[q] < 0 and queue[q] and queue[q][0] == v and not down[q]
                                       for q in self.gangs[v])

    def _hold_gang(self, v: int, now: float) -> None:
        """Gang task ``v`` took its members at ``now``: its finish event, its cost times its noise factor
        (times the slowdown while a member is slowed down) ahead (the hook where workflow-system
        overheads and storage time its phases).  O(k)."""
        w = self.cost[v]
        d = w if self.factors is None else w * self.factors[v]
        if self.disruptions is None:
            heappush(self._events, (now + d, NORMAL, next(self._eid), Tick(self._on_gang_finish, v)))
        else:
            if any(self.slow[q] for q in self.gangs[v]):
                d = d * self.disruptions.slowdown
                self.stats.slowed_tasks += 1
            Timeout(self.env, d, (v, self.attempt[v])).callbacks.append(self._on_gang_finish)

    def _on_gang_finish(self, ev: Event) -> None:
        """All members of gang task ``v`` are released together: the others here, the lead (and the
        task's successors) by the ordinary finish."""
        v = ev._value
        if self.disruptions is not None:
            v, attempt = v
            if attempt != self.attempt[v]:
                return
            self.remaining -= 1
            for q in self.gangs[v]:  # one attempt per processor held (energy counts each)
                self.stats.log.attempts.append((v, q, float(self.start[v]), self.env._now, True))
            ev._value = v
        members = self.gangs.pop(v)
        for q in members[1:]:
            self._release(q)
        self._on_finish(ev)

    def _drop_gangs(self, tasks: list[int], failed: int) -> None:
        """Tasks handed back by the failure of processor ``failed``: take every gang task among them
        off its other members (running or queued), which then go on with their queues.  O(k x queue)."""
        for v in tasks:
            members = self.gangs.pop(v, None)
            if members is None:
                continue
            self.members_of.pop(v, None)
            log = self.stats.log.attempts
            for q in members:
                if q == failed:
                    continue
                if self.running[q] == v:  # its time here is lost too (the failed member's is logged)
                    started = log[-1][2] if log and log[-1][0] == v and not log[-1][4] else self.env._now
                    log.append((v, q, started, self.env._now, False))
                    self.stats.lost_work += self.env._now - started
                    self._release(q)
                elif v in self.queue[q]:
                    self.queue[q].remove(v)
                    if self.running[q] < 0 and not self.down[q]:
                        if self.queue[q]:
                            if self.data_ok[self.queue[q][0]]:
                                self._start_next(q)
                        else:
                            self._release(q)
