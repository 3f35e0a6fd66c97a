"""Capacity what-if: the fewest processors (or servers, or the cheapest mix of processor types) that
meet a service objective on enough simulated days, with confidence.  Floor 6, above ``run/``.

Question: "how many processors of type T (or autotuning servers) does scheduler S need so that the
objective holds on at least ``on_days`` of simulated days?"  One room per concern:

* :mod:`~simsched.capacity.objective` — the objective language (``"jct_p95 <= 6h and energy_kwh <= 5"``);
* :mod:`~simsched.capacity.models` — what a search can ask: a day of a task graph or job stream, an
  autotuning section, a cluster log, a mix of processor types;
* :mod:`~simsched.capacity.search` — levels, early stopping, doubling then bisection, the days folded
  in seed order whatever runs them; :mod:`~simsched.capacity.mix` — the cheapest mix and its front;
* :mod:`~simsched.capacity.days` — where the days run: here, on an executor, in a resumable store;
* :mod:`~simsched.capacity.question` — the question a scenario asks (count, mix, ``--over``);
* :mod:`~simsched.capacity.answer` — the answer as data (its tables, sentences and plots:
  :mod:`simsched.report.capacity`);
* :mod:`~simsched.capacity.ask` — :func:`ask`, the one call of ``simsched capacity``.

Imports only from ``run`` and the floors below it.
"""

from simsched.capacity.ask import Asked, ask
from simsched.capacity.days import Where, where_days_run
from simsched.capacity.mix import find_mix, pareto_front
from simsched.capacity.models import AutotuneModel, BatchCapacityModel, MixModel, TaskGraphModel
from simsched.capacity.objective import Objective, parse_objective
from simsched.capacity.question import (
    CapacityQuestion,
    Choices,
    MixQuestion,
    OverQuestion,
    mix_question,
    parse_over,
    question_from,
)
from simsched.capacity.search import IN_PROCESS, evaluate_levels, find_capacity, search_capacity

__all__ = ["IN_PROCESS", "Asked", "AutotuneModel", "BatchCapacityModel", "CapacityQuestion", "Choices", "MixModel",
           "MixQuestion", "Objective", "OverQuestion", "TaskGraphModel", "Where", "ask", "evaluate_levels",
           "find_capacity", "find_mix", "mix_question", "pareto_front", "parse_objective", "parse_over",
           "question_from", "search_capacity", "where_days_run"]
