"""The capacity search's walk as states (:mod:`simsched.capacity.bisect`): the fewest passing capacity
of a monotone outcome, the steps ahead, and the path the outcomes take."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.capacity.bisect import Done, Step, ahead, first_step, path, reachable


def _walk(low: int, high: int, passes) -> tuple[int | None, list[int]]:
    step, seen = first_step(low, high), []
    while isinstance(step, Step):
        seen.append(step.capacity)
        step = step.after(passes(step.capacity))
    return step.capacity, seen


@settings(max_examples=200, deadline=None)
@given(low=st.integers(0, 40), span=st.integers(0, 300), need=st.integers(0, 400))
def test_the_walk_finds_the_fewest_passing_capacity(low, span, need) -> None:
    high = max(low, 1) + span
    answer, seen = _walk(low, high, lambda c: c >= need)
    expected = max(need, low) if max(need, low) <= high else None
    assert answer == expected
    assert len(seen) == len(set(seen)) and all(low <= c <= high for c in seen)  # no capacity twice, in range
    if answer is not None and answer > low:
        assert answer - 1 in seen  # the answer is always beside a simulated failure


@settings(max_examples=100, deadline=None)
@given(low=st.integers(0, 10), need=st.integers(0, 100), depth=st.integers(1, 4), known=st.integers(0, 4))
def test_ahead_holds_the_next_steps_and_path_follows_the_known_outcomes(low, need, depth, known) -> None:
    high = 128
    step: Step | Done = first_step(low, high)
    _, walk = _walk(low, high, lambda c: c >= need)
    near = ahead(step, depth)
    assert [d for _c, d in near] == sorted(d for _c, d in near) and near[0] == (step.capacity, 0)
    assert walk[:depth] == [c for c in walk[:depth] if c in dict(near)]  # the true path lies in the tree
    outcome = {c: c >= need for c in walk[:known]}
    reached, through = path(step, outcome.get)
    assert through == walk[:known]
    later = reachable(reached, set(dict(near)))
    assert set(walk[known:depth]) <= later and not later & set(through)
