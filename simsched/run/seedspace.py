"""Seed spaces: train, select, evaluate and fresh days that cannot overlap.

Honest evaluation of anything tuned (a learned scheduler, a tuned rule, a parameter grid) needs days
that were not looked at while tuning.  simsched derives them instead of trusting conventions:

* a seed below ``2**40`` is a **scenario** seed (the scenario's ``seed``, ``--seed``): what
  ``simsched run`` uses by default, unchanged;
* each of the four spaces ``train``, ``select``, ``evaluate`` and ``fresh`` owns one disjoint range
  of ``2**40`` seeds above it (:data:`RANGES`), so a seed names its own space (:func:`space_of`)
  and every results row records it (``seed_space``);
* a scenario's days in a space start at an offset hashed from the scenario's seed and the space's
  name (:func:`space_seeds`, BLAKE2b): different scenarios get different days, the same scenario
  always the same ones, and ``2**20`` consecutive days fit in every space;
* ``fresh`` days are drawn at evaluation time from a random seed the run prints
  (:func:`fresh_seed`); nobody could have tuned on them, and the printed seed reproduces them;
* ``simsched train`` refuses seeds of the ``evaluate`` and ``fresh`` spaces
  (:func:`training_refusal`).

O(1) per call.  The spaces follow the train / validation / test discipline of machine learning
(e.g. Hastie, Tibshirani & Friedman, *The Elements of Statistical Learning*, sec. 7.2), applied to
simulated days.
"""

from __future__ import annotations

import hashlib
import secrets

from simsched.errors import SimschedError

SPACES = ("train", "select", "evaluate", "fresh")
"""The derived seed spaces, in the order of their ranges."""

WIDTH = 1 << 40
"""Seeds per space; scenario seeds are those below ``WIDTH``."""

MAX_DAYS = 1 << 20
"""Consecutive days one scenario may draw from one space."""

RANGES = {name: ((i + 1) * WIDTH, (i + 2) * WIDTH) for i, name in enumerate(SPACES)}
"""``space -> [low, high)``: disjoint by construction."""


def space_of(seed: int) -> str:
    """The space a seed belongs to: ``"scenario"`` below ``WIDTH``, a name of :data:`SPACES` inside
    its range, ``"other"`` above them all.  O(1)."""
    seed = int(seed)
    if seed < WIDTH:
        return "scenario"
    i = seed // WIDTH - 1
    return SPACES[i] if i < len(SPACES) else "other"


def space_seeds(base: int, space: str, days: int) -> list[int]:
    """The first ``days`` seeds of ``space`` for a scenario whose seed is ``base``: consecutive,
    starting at ``low + BLAKE2b(base, space) mod (WIDTH - MAX_DAYS)``, so inside the space's range.
    Raises :class:`SimschedError` for an unknown space or more than :data:`MAX_DAYS` days.  O(days)."""
    if space not in RANGES:
        raise SimschedError(f"unknown seed space {space!r}; choose from {', '.join(SPACES)}", field="--seed-space")
    if not 1 <= days <= MAX_DAYS:
        raise SimschedError(f"a seed space holds at most {MAX_DAYS:,} consecutive days, asked for {days:,}",
                            field="--repetitions")
    digest = hashlib.blake2b(f"{int(base)}:{space}".encode(), digest_size=8).digest()
    start = RANGES[space][0] + int.from_bytes(digest, "big") % (WIDTH - MAX_DAYS)
    return list(range(start, start + days))


def check_base(seed: int, *, option: str | None = "--seed") -> None:
    """Refuse ``seed`` as the base a space's days derive from (:func:`space_seeds`) unless it is a
    scenario seed (``0 <= seed < WIDTH``): a seed of a space, or one above every space (``2**63 - 1``),
    names days already, and deriving other days from it would hide which ones ran.  ``option`` names
    where the seed came from (``None``: the caller locates it, e.g. at the scenario's ``seed`` field).
    :class:`SimschedError` otherwise.  O(1)."""
    seed = int(seed)
    if 0 <= seed < WIDTH:
        return
    what = ("negative" if seed < 0 else f"a seed of the {space_of(seed)} seed space" if space_of(seed) in SPACES
            else "above every seed space")
    raise SimschedError(f"{seed} is {what}; a seed space derives its days from a scenario seed "
                        f"(0 ... {WIDTH - 1:,}): give one of those", field=option)


def fresh_seed() -> int:
    """A random seed for fresh days (from the operating system's entropy, not from any seed the
    user or the scenario gave), to be printed so the run can be repeated.  O(1)."""
    return secrets.randbits(32)


def training_refusal(seed: int | None) -> str | None:
    """Why ``seed`` may not be used for training or selection (it lies in the ``evaluate`` or
    ``fresh`` space), or None when it may.  O(1)."""
    if seed is None or space_of(seed) not in ("evaluate", "fresh"):
        return None
    lo, hi = RANGES[space_of(seed)]
    return (f"{seed} lies in the {space_of(seed)} seed space ({lo:,} ... {hi - 1:,}); training and selection "
            f"may not use evaluation days")
