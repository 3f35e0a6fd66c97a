"""The one call behind ``simsched capacity``: a scenario file and the command line's choices in, the
answer as data out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simsched.capacity.days import HERE, Where, days_on
from simsched.capacity.question import Choices, question_of
from simsched.capacity.search import Progress
from simsched.fileio import read_set
from simsched.yamlio import load_yaml


@dataclass(frozen=True)
class Asked:
    """What :func:`ask` found: ``answer`` (JSON-ready, :mod:`simsched.capacity.answer`) and ``note``
    (where the days ran and what a results store reused; None when they ran here without one)."""

    answer: dict[str, Any]
    note: str | None


def ask(scenario: Path, choices: Choices, where: Where = HERE, progress: Progress | None = None,
        started: Callable[[str], None] | None = None, notice: Callable[[str], None] | None = None) -> Asked:
    """Read ``scenario``, build and validate its question (:func:`~simsched.capacity.question.question_of`)
    before any day runs, then answer it with the days run where ``where`` says
    (:func:`~simsched.capacity.days.days_on`; ``started`` is told where an executor runs them, ``notice``
    how many days of a results store another code version simulated).  A store identifies the scenario
    by its content and that of every file it read while loading (the command's read set).
    ``progress`` hears of every day folded.  Bad input: :class:`~simsched.errors.SimschedError`
    naming the file, field and line; a lost worker: :class:`~simsched.run.executors.WorkerLost`, the
    days that finished kept in the results store.  The answer is the same whatever ``where``."""
    doc = load_yaml(scenario)
    question = question_of(doc, choices)
    name = str(doc.data.get("name") or scenario.stem) if isinstance(doc.data, dict) else scenario.stem
    inputs = list(read_set() or ())  # the files the scenario read: their content is part of its identity
    with days_on(where, name, started, inputs=inputs, notice=notice) as days:
        answer = question.answer(progress, days.runner)
    return Asked(answer, days.note)
