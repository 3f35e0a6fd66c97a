"""Training ``rl-gate`` across worlds: job-stream worlds drawn from the ``train`` seed space, a predictor
of whether waiting pays fitted on both rules' results there, its caution selected on the ``select`` space.

``python -m simsched.learned.rl.worlds train -o DIR [--drawn N] [--bar-like N] [--bar N] [--select-drawn N]
[--select-bar-like N] [--select-bar N] [--seed S]`` writes ``DIR/rl_gate.json`` (loadable with
``{name: rl-gate, checkpoint: DIR/rl_gate.json}``), ``DIR/train_history.json`` and the two rule tables
``DIR/days_train.npz`` and ``DIR/days_select.npz`` (a rerun with the same sizes reuses them).
``python -m simsched.learned.rl.worlds cem -o DIR ...`` runs the earlier black-box search (:func:`~.cem.train`).

One module per concern: the worlds and their days (:mod:`~.sampler`), the predictor route
(:mod:`~.predictor`), the earlier black-box search (:mod:`~.cem`), worlds wider than training
(:mod:`~.wide`) and the safety check on them (:mod:`~.safety`), the command line (``__main__``).
``python -m simsched.learned.rl.worlds envelope CHECKPOINT -o OUT`` adds the envelope of its training
worlds to a gate checkpoint (:mod:`simsched.learned.rl.envelope`); ``python -m simsched.learned.rl.worlds
safety -s rl-gate [--worlds wide|off-training] [--count N] [--days D] [--space evaluate|fresh]`` runs the
safety check and exits 1 when the policy is not a default candidate.

**Worlds** (:func:`~.sampler.draw_world`, one per seed; every draw is a scenario mapping parsed like a scenario
file): 2-10 CPUs and 1-4 fast processors 1.5-6x as fast (log-uniform), bandwidth 1-20; 8-32 jobs a day
from a mix of one to three families with weights 1-4, drawn from random layered DAGs of varied sizes and
CCRs, ``layered``, ``erdos_renyi``, Gaussian elimination and FFT graphs, and the shipped Montage and
Epigenomics workflows; Poisson arrivals or a burst (rate x3 in the middle of the day) at an offered load
of 50-120% (the rate set from the mean job work of the world's own draw); lognormal noise sigma 0.1-0.7;
failures and stragglers each on with probability 1/2, scaled to the mean inter-arrival gap.
:func:`~.sampler.draw_bar_world` draws worlds near ``scenarios/streams/rl_dynamic.yaml`` (its families and burst,
the fast processors' count and speed, the load, the day's length and failures perturbed).  **Held
out** of training, so that they stay unseen for the generalisation matrix: the Kasahara STG and pipeline
DOT workflows and the fork-join and series-parallel generators.

**Training** (:func:`~.predictor.train_predictor`): direct supervision instead of a whole-day black-box search.
Both rules the gate contains (always queue = ``srjf-eft``, never queue = late binding) run on every
train world-day (:func:`~.predictor.collect`); the label is the day's ``log(late binding's mean JCT / srjf-eft's)``,
the inputs the world description (:func:`~simsched.learned.rl.features.world_description`, arrived work
only) at several points of the day.  A Bayesian ridge regression (:func:`~.predictor.fit_predictor`) predicts the
expected log ratio and its standard deviation; the gate late-binds only where ``mean + k sd < -margin``
(waiting pays even at the pessimistic end) and queues as ``srjf-eft`` otherwise, so where it is unsure
it *is* the rule.  ``k`` and ``margin`` are selected on the ``select`` space's world-days and the bar's
select days, beside the two rules.  Cost: two engine runs per train or select world-day, one per select
day and candidate; each run one day of O((n + e) log n) events.
"""

from __future__ import annotations

from simsched.learned.rl.worlds.cem import score, train
from simsched.learned.rl.worlds.predictor import (
    LABEL_CLIP,
    POINTS,
    RIDGE,
    collect,
    fit_predictor,
    rule_day,
    train_predictor,
)
from simsched.learned.rl.worlds.sampler import (
    BAR,
    DATA,
    HELD_OUT,
    SOURCES,
    bar_days,
    bar_world_scenario,
    day_jct,
    draw_bar_world,
    draw_world,
    source_days,
    world_days,
    world_scenario,
)

__all__ = ["BAR", "DATA", "HELD_OUT", "LABEL_CLIP", "POINTS", "RIDGE", "SOURCES", "bar_days", "bar_world_scenario",
           "collect", "day_jct", "draw_bar_world", "draw_world", "fit_predictor", "rule_day", "score",
           "source_days", "train", "train_predictor", "world_days", "world_scenario"]
