"""The capacity search's doubling-then-bisection as states, so that the next rounds can be seen ahead.

A :class:`Step` is where one variant's search stands: the capacity it evaluates next, and the step a
pass or a fail of that capacity leads to (:meth:`Step.after`), or the answer once the search is over
(:class:`Done`).  The walk is :func:`~simsched.capacity.search.search_capacity`'s: from ``low``, double
until a capacity passes (or ``high`` fails), then bisect between the last failure and the first success.

:func:`ahead` lists the capacities of the next ``depth`` steps whatever their outcomes (the binary tree
of the walk, breadth first: 1, 3, 7, ... capacities): the speculative rounds of a parallel search
evaluate them together, and keep only those on the path the outcomes take (:func:`path`), so the
answer is the one a search that evaluates one capacity at a time gives.  Capacities off the path lie
outside the interval the search narrows to, so they are never asked for again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Done:
    """The search is over: ``capacity`` is the answer (None: even ``high`` fails)."""

    capacity: int | None


@dataclass(frozen=True)
class Step:
    """The search evaluates :attr:`capacity` next.  ``hi`` None: still doubling from ``lo`` (the last
    failure, ``low - 1`` at the start) at ``n``; else bisecting the open interval ``(lo, hi)``."""

    lo: int
    n: int
    hi: int | None
    high: int

    @property
    def capacity(self) -> int:
        return self.n if self.hi is None else (self.lo + self.hi) // 2

    def after(self, passed: bool) -> Step | Done:
        """The step that follows this capacity passing (or failing).  O(1)."""
        c = self.capacity
        if self.hi is None:  # doubling
            if passed:
                return _bisecting(self.lo, c, self.high)
            if c >= self.high:
                return Done(None)
            return Step(c, 1 if c == 0 else min(2 * c, self.high), None, self.high)
        return _bisecting(self.lo, c, self.high) if passed else _bisecting(c, self.hi, self.high)


def _bisecting(lo: int, hi: int, high: int) -> Step | Done:
    return Step(lo, hi, hi, high) if hi - lo > 1 else Done(hi)


def first_step(low: int, high: int) -> Step:
    """Where a search of ``[low, high]`` starts: ``low`` itself (0 included)."""
    return Step(low - 1, low, None, high)


def ahead(step: Step, depth: int) -> list[tuple[int, int]]:
    """``(capacity, how many steps ahead)`` of every capacity the next ``depth`` steps may evaluate,
    nearest first, each once.  O(2 ** depth)."""
    out: dict[int, int] = {}
    frontier: list[Step] = [step]
    for d in range(depth):
        following: list[Step] = []
        for s in frontier:
            out.setdefault(s.capacity, d)
            following += [t for t in (s.after(True), s.after(False)) if isinstance(t, Step)]
        frontier = following
    return list(out.items())


def path(step: Step | Done, verdict: Callable[[int], bool | None]) -> tuple[Step | Done, list[int]]:
    """Follow the outcomes known so far from ``step``: ``verdict(capacity)`` is True (passes), False
    (fails) or None (not known yet, or not evaluated).  Returns the step reached (the first whose
    outcome is not known, or :class:`Done`) and the capacities passed through on the way.  O(steps)."""
    through: list[int] = []
    while isinstance(step, Step):
        v = verdict(step.capacity)
        if v is None:
            break
        through.append(step.capacity)
        step = step.after(v)
    return step, through


def reachable(step: Step | Done, within: set[int]) -> set[int]:
    """The capacities of ``within`` that the walk from ``step`` can still reach through capacities of
    ``within`` (whatever their outcomes).  O(len(within))."""
    out: set[int] = set()
    frontier = [step]
    while frontier:
        s = frontier.pop()
        if isinstance(s, Step) and s.capacity in within and s.capacity not in out:
            out.add(s.capacity)
            frontier += [s.after(True), s.after(False)]
    return out
