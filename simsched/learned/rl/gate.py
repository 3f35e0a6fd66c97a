"""``rl-gate``: a learned decision of *when to wait*, trained across worlds (registry name ``rl-gate``).

The agent orders ready tasks as ``srjf-eft`` does (shortest remaining job first, then priority, then
upward rank) and places them one at a time while a processor is idle.  Where the rule's processor
(earliest expected finish over *all* processors) is idle, both ways of binding agree and the task goes
there.  Where it is **busy**, there is a decision: bind the task into that processor's queue (what
``srjf-eft`` does) or *wait* for it and take the best idle processor instead (what ``srjf-eft`` with
``late_binding`` does; Decima's executor assignment is late-bound the same way, Mao et al., SIGCOMM
2019).  A small learned gate makes it: with ``gain`` the fraction of the idle processor's time to
finish that the busy one saves,

    bind into the queue  iff  gain >= sigmoid(w . [1, world, local])

where ``world`` is :func:`~simsched.learned.rl.features.world_description` (offered load estimated from
the arrived work only, processor count, fast share and speed ratio, job sizes, widths and work spread of
the arrived jobs, failures seen so far) and ``local`` three numbers of the decision (idle share, backlog
of arrived unassigned work, the task's job's remaining work).  ``w`` always binding gives ``srjf-eft``'s
schedule and never binding ``srjf-eft(late_binding=true)``'s (tests check both, float for float).

**The shipped gate is a predictor** (a checkpoint with a ``model``): at every decision it predicts,
from the world description alone, the expected log ratio of late binding's mean JCT over ``srjf-eft``'s
in a world like this one, with the standard deviation of that expectation (a Bayesian ridge regression
on :func:`basis`, fitted by :func:`simsched.learned.rl.worlds.fit_predictor` on both rules' results on
world-days of the ``train`` space), and picks one of the gate's two extremes: never queue (late
binding) where ``mean + k sd < -margin``, always queue (``srjf-eft``) otherwise.  Where the predictor is
unsure, or has seen nothing like the world, it is the rule.  ``k`` and ``margin`` are selected on the
``select`` space.  A checkpoint without a ``model`` uses ``w`` directly (the earlier cross-entropy search,
``python -m simsched.learned.rl.worlds cem``: Rubinstein 1999; Szita & Lorincz 2006).  The checkpoint
(``data/rl_gate.json``) holds ``w``, the predictor, the feature names and the span of every world
feature met in training.

**Envelope** (checked first, from the first job): a checkpoint with an ``envelope``
(:mod:`simsched.learned.rl.envelope`) judges the world known at every arrival — platform, the failure
rate the scenario declares (the runner hands it over by the ``use_failures`` hook), the arrived jobs'
shape — against its training worlds (per-feature span and Mahalanobis distance, calibrated on held-out
training worlds).  Outside it, every decision from that arrival on is ``srjf-eft``'s: the predictor,
confidently wrong off its data, is never asked.  **Guard**: once the world description lies outside the
span met in training (widened by :data:`WIDEN` of the span each way), every later decision goes to
``srjf-eft`` likewise.  Either way the agent degrades to the rule, never below it; one warning says
which rule and why, and :attr:`GatedBinding.fallback_reason` (the results row's ``fallback`` field)
holds the same.  Gang tasks (several processors at once) are placed by the rule.

Cost per decision: ``srjf-eft``'s, plus O(n) for the failures seen, O(N_BASIS^2) for the prediction and
O(m) per gated placement; the world description, kept arrival by arrival
(:class:`~simsched.learned.rl.description.RunningWorld`, the same floats as from scratch), O(new tasks x m + J + n)
per arrival of whole new jobs (O(n m + J) when the job tables are built anew), until the gate falls back.

**Compiled** (``compiled_kernel = "gated-srjf"``, :mod:`simsched.simulator.engine.compiled_gate`): the compiled
stream loop runs the gate with the tables :meth:`GatedBinding.compiled_gate` fills per arrival state, this policy
grown arrival by arrival as the SimPy engine's decisions grow it (the world, the guard and envelope, the
predictor's choice per arrival; before the run when nothing fails, else as the loop reaches each state, with the
failures it has counted as :meth:`GatedBinding._count_failures` counts them), and the decision's own features in
numba, float for float; hence the gate's dot product summed from the left (:func:`_dot`) and ``math.log1p``, the
same floats on every machine.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from simsched.errors import SimschedError
from simsched.learned.rl.description import WORLD_FEATURES, RunningWorld
from simsched.learned.rl.features import processors_down
from simsched.schedulers.jobaware import Assignments, ShortestJobEFT
from simsched.simulator.policy import DecisionView
from simsched.simulator.problem import Problem

LOCAL_FEATURES = ("idle share", "log1p backlog per processor", "log1p job remaining / mean job work")
"""Features of one decision, after the world description, in this order."""

N_WEIGHTS = 1 + len(WORLD_FEATURES) + len(LOCAL_FEATURES)
"""Length of ``w``: a bias, the world, the decision."""

WIDEN = 0.25
"""The guard's margin: a world feature outside ``[lo - WIDEN x span, hi + WIDEN x span]`` of its
training span is outside the range."""

SHIPPED = "rl_gate.json"

ALWAYS_QUEUE = np.array([-800.0] + [0.0] * (N_WEIGHTS - 1))
"""Weights whose gate always queues: ``srjf-eft``'s schedule."""
NEVER_QUEUE = np.array([800.0] + [0.0] * (N_WEIGHTS - 1))
"""Weights whose gate never queues: ``srjf-eft(late_binding=true)``'s schedule."""

N_BASIS = 1 + 2 * len(WORLD_FEATURES) - 1
"""Length of the predictor's basis (:func:`basis`): a constant, the standardised world features, and
the offered load times each other one."""


def basis(world: np.ndarray, mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The predictor's inputs for one world description (or a (rows, features) array of them):
    ``[1, z, z_load * z_rest]`` with ``z = (world - mean) / scale``.  O(features)."""
    z = (np.asarray(world, dtype=np.float64) - mean) / scale
    one = np.ones(z.shape[:-1] + (1,))
    return np.concatenate([one, z, z[..., :1] * z[..., 1:]], axis=-1)


def _numbers(v: Any, n: int | None = None) -> bool:
    return (isinstance(v, list) and (n is None or len(v) == n)
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v))


def _check_model(p: Path, model: Any) -> None:
    """The predictor's fields (see :func:`load_gate`), or a :class:`SimschedError` naming the field."""
    k = len(WORLD_FEATURES)
    if not isinstance(model, dict):
        raise SimschedError(f"{p}: field 'model': expected a mapping (mean, scale, coef, cov, k, margin)")
    if not (_numbers(model.get("mean"), k) and _numbers(model.get("scale"), k)
            and all(v > 0 for v in model["scale"])):
        raise SimschedError(f"{p}: field 'model.mean'/'model.scale': expected {k} finite numbers each, "
                            "scales positive")
    if not _numbers(model.get("coef"), N_BASIS):
        raise SimschedError(f"{p}: field 'model.coef': expected {N_BASIS} finite numbers")
    cov = model.get("cov")
    if not (isinstance(cov, list) and len(cov) == N_BASIS and all(_numbers(r, N_BASIS) for r in cov)):
        raise SimschedError(f"{p}: field 'model.cov': expected {N_BASIS} rows of {N_BASIS} finite numbers")
    c = np.asarray(cov)
    if not (np.allclose(c, c.T, rtol=1e-6, atol=1e-12) and (np.diag(c) >= 0).all()):
        raise SimschedError(f"{p}: field 'model.cov': expected a symmetric covariance (non-negative diagonal)")
    for key in ("k", "margin"):
        v = model.get(key)
        if not (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and 0 <= v <= 100):
            raise SimschedError(f"{p}: field 'model.{key}': expected a number from 0 to 100")


def shipped_path() -> Path:
    """The checkpoint shipped with simsched."""
    return Path(__file__).resolve().parent / "data" / SHIPPED


def load_gate(path: str | Path, envelope: bool = True) -> dict[str, Any]:
    """A gate checkpoint ``{"kind": "rl-gate", "weights", "world_features", "range": {"lo", "hi"},
    "config", "meta"}`` and, optionally, ``"model"``: the predictor ``{"mean", "scale", "coef", "cov",
    "k", "margin"}`` (see :class:`GatedBinding`), read by :func:`simsched.checkpoints.read_checkpoint` (a
    regular file, JSON within the depth and size limits, of kind ``rl-gate``: a torch checkpoint given here
    is refused by name) and checked (``envelope`` False: an ``envelope`` field is dropped unread, for
    recalibrating it): weights of the wrong length or not finite, or feature names other
    than this version's, is a :class:`SimschedError` naming the file and the field.  O(size of the file)."""
    from simsched.checkpoints import read_checkpoint

    p = Path(path)
    data = read_checkpoint(p, "rl-gate", retrain="retrain it with `python -m simsched.learned.rl.worlds train`")
    if data.get("world_features") != list(WORLD_FEATURES) + list(LOCAL_FEATURES):
        raise SimschedError(f"{p}: field 'world_features': made for other features than this version's; "
                            "retrain it with `python -m simsched.learned.rl.worlds train`")
    w = data.get("weights")
    if not (isinstance(w, list) and len(w) == N_WEIGHTS
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in w)):
        raise SimschedError(f"{p}: field 'weights': expected {N_WEIGHTS} finite numbers")
    rng = data.get("range")
    k = len(WORLD_FEATURES)
    ok = isinstance(rng, dict) and all(
        isinstance(rng.get(key), list) and len(rng[key]) == k
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in rng[key])
        for key in ("lo", "hi"))
    if not ok:
        raise SimschedError(f"{p}: field 'range': expected 'lo' and 'hi', {k} finite numbers each")
    if data.get("model") is not None:
        _check_model(p, data["model"])
    if not envelope:
        data.pop("envelope", None)
    if data.get("envelope") is not None:
        from simsched.learned.rl.envelope import check_envelope

        bad = check_envelope(data["envelope"])
        if bad:
            raise SimschedError(f"{p}: field '{bad.split(':')[0]}':{bad.split(':', 1)[1]}")
    return data


def save_gate(path: str | Path, weights: np.ndarray, lo: np.ndarray, hi: np.ndarray, config: dict,
              meta: dict | None = None, model: dict | None = None, envelope: dict | None = None) -> None:
    """Write a gate checkpoint atomically (:func:`simsched.fileio.atomic_path`); ``model``: the
    predictor's fields, plain lists and numbers (see :func:`load_gate`); ``envelope``:
    :meth:`simsched.learned.rl.envelope.Envelope.to_dict`'s fields."""
    from simsched.fileio import atomic_path

    doc = {"kind": "rl-gate", "weights": [float(v) for v in weights],
           "world_features": list(WORLD_FEATURES) + list(LOCAL_FEATURES),
           "range": {"lo": [float(v) for v in lo], "hi": [float(v) for v in hi]},
           "config": config, "meta": meta or {}}
    if model is not None:
        doc["model"] = model
    if envelope is not None:
        doc["envelope"] = envelope
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


class GatedBinding(ShortestJobEFT):
    """``srjf-eft``'s order with a learned choice between queueing on a busy processor and waiting
    (see the module docstring).

    Parameters:
        checkpoint: a gate checkpoint file, or the name of one shipped with simsched (default the shipped rl_gate);
        weights: the gate's weights instead of a checkpoint, a list of N_WEIGHTS numbers (for training, no guard);
        guard: hand every later decision to srjf-eft once the world lies outside the checkpoint's
            envelope or training range (false: never fall back)
    """

    name = "rl-gate"
    compiled_kernel = "gated-srjf"  # the compiled stream engine's form (simsched.simulator.engine.compiled_gate)

    def __init__(self, *, checkpoint: str | None = None, weights: list[float] | None = None,
                 guard: bool = True) -> None:
        super().__init__(late_binding=False)
        if not isinstance(guard, bool):
            raise SimschedError(f"rl-gate: guard must be true or false, got {guard!r}")
        self.guard = guard
        self.lo = self.hi = None
        if weights is not None:
            ok = isinstance(weights, (list, tuple)) and len(weights) == N_WEIGHTS and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in weights)
            w = np.asarray(weights if ok else [np.nan], dtype=np.float64)
            if not ok or not np.isfinite(w).all():
                raise SimschedError(f"rl-gate: weights must be {N_WEIGHTS} finite numbers")
            self.weights, self.checkpoint = w, None
            return
        path = Path(checkpoint) if checkpoint else shipped_path()
        if checkpoint and not path.exists() and Path(checkpoint).name == checkpoint:
            for bundled in (shipped_path().parent / checkpoint, shipped_path().parent / f"{checkpoint}.json"):
                if bundled.is_file():
                    path = bundled
                    break
        data = load_gate(path)
        self.checkpoint = str(path)
        self.weights = np.asarray(data["weights"], dtype=np.float64)
        self.lo, self.hi = np.asarray(data["range"]["lo"]), np.asarray(data["range"]["hi"])
        if data.get("model") is not None:
            m = data["model"]
            self.model = {key: np.asarray(m[key], dtype=np.float64) for key in ("mean", "scale", "coef", "cov")}
            self.k, self.margin = float(m["k"]), float(m["margin"])
        if data.get("envelope") is not None:
            from simsched.learned.rl.envelope import Envelope

            self.envelope = Envelope.from_dict(data["envelope"])

    model: dict[str, np.ndarray] | None = None
    envelope = None  # an Envelope (simsched.learned.rl.envelope) from the checkpoint, or None
    declared = (0.0, 0.0)  # the declared failure rate and down share (simsched.learned.rl.envelope)
    fallback_reason: str | None = None
    """Why the gate handed its decisions to srjf-eft on the last run (``"srjf-eft: ..."``), or None."""
    k = margin = 0.0
    late_decisions = 0

    def predict(self, world: np.ndarray) -> tuple[float, float]:
        """The predictor's expected log ratio of late binding's mean JCT over ``srjf-eft``'s for a
        world like ``world``, and the standard deviation of that expectation.  O(N_BASIS^2)."""
        m = self.model
        phi = basis(world, m["mean"], m["scale"])
        return float(phi @ m["coef"]), float(math.sqrt(max(float(phi @ m["cov"] @ phi), 0.0)))

    def waits(self, world: np.ndarray) -> bool:
        """Late-bind (wait for busy processors) in this world: only where even the pessimistic end of
        the prediction says waiting pays, ``mean + k sd < -margin``; otherwise queue as ``srjf-eft``."""
        mu, sd = self.predict(world)
        return mu + self.k * sd < -self.margin

    def use_failures(self, disruptions) -> None:  # disruptions: simsched.simulator.engine.Disruptions | None
        """The failures the scenario declares (its disruptions, None: none), handed over by the runner
        before a run: part of the world known at time 0 that the envelope judges.  O(1)."""
        self._disruptions = disruptions

    # ------------------------------------------------------------------ world
    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        from simsched.learned.rl.envelope import declared_failures

        super().reset(problem, rng)
        self.fallback: str | None = None
        self.fallback_reason = None
        self.declared = declared_failures(getattr(self, "_disruptions", None), problem.n_processors)
        self._head: np.ndarray | None = None  # the decision's gate inputs; None: the rule places alone
        self.failures, self.first_arrival = 0, None
        self._down = np.zeros(problem.n_processors, dtype=bool)
        self.worlds: list[np.ndarray] = []  # every world description met (for the training range)
        self._running = RunningWorld()  # this run's own (a copy of this policy makes its own at its reset)
        self._world(problem)

    def grow(self, problem: Problem) -> None:
        """Tasks arrived: srjf-eft's tables grown, and the world described and judged again until the gate fell
        back (from then on nothing of the gate is read: the rule decides alone, at the rule's cost)."""
        super().grow(problem)
        if self.fallback is None:
            self._world(problem)

    _extended: int | None = None
    """The tasks the job tables covered before they were extended by whole new jobs (:meth:`_job_weights`), or
    None when they were built anew: what :meth:`_world` may extend its running description from."""

    def _job_weights(self, first: int, seen: int) -> None:
        super()._job_weights(first, seen)
        self._extended = seen or None

    def _world(self, problem: Problem) -> None:
        """The world description after an arrival (:func:`~simsched.learned.rl.features.world_description`, the
        same floats, kept arrival by arrival: :class:`~simsched.learned.rl.description.RunningWorld`), and the
        guard.  O(new tasks x m + J + n) per arrival of whole new jobs, else O(n m + J)."""
        running = self._running
        running.update(problem, self.jobs, self.cost, self.rank, self._extended)
        self._extended = None
        self.job_arrival = running.job_arrival
        t0 = running.first if self.n_jobs else 0.0
        now = running.last if problem.n_tasks else 0.0
        self.world = running.describe(self.failures, now - t0)
        self.worlds.append(self.world)
        self.job_work = running.work
        self.mean_job_work = float(self.job_work.mean()) if self.job_work.size else 1.0
        self.mean_task = running.mean_task if self.cost.size else 1.0
        self.problem_seen = problem
        self._check_range()

    def _check_range(self) -> None:
        if not self.guard or self.fallback is not None or self.lo is None:
            return
        if self.envelope is not None:
            from simsched.learned.rl.envelope import prior_of, shape_rows

            w = self._running
            shape = shape_rows(w.size, w.work, w.path) if self.problem_seen.n_tasks else None
            prior = prior_of(self.problem_seen.platform, w.mean_task, shape, *self.declared)
            why = self.envelope.outside(prior, shape if shape is not None else np.zeros((0, 2)))
            if why is not None:
                self._fall_back("envelope", why)
                return
        span = self.hi - self.lo
        out = (self.world < self.lo - WIDEN * span - 1e-9) | (self.world > self.hi + WIDEN * span + 1e-9)
        if out.any():
            i = int(np.argmax(out))
            self._fall_back(WORLD_FEATURES[i], f"the world's {WORLD_FEATURES[i]} {self.world[i]:.3g} lies outside "
                                               f"what it was trained on ({self.lo[i]:.3g} to {self.hi[i]:.3g})")

    def _fall_back(self, what: str, why: str) -> None:
        """Hand every decision from now on to srjf-eft, say so once (a :class:`GuardWarning`) and keep the
        reason for the results row.  O(1)."""
        self.fallback = what
        n_jobs = int(np.count_nonzero(np.isfinite(self.job_arrival)))
        self.fallback_reason = f"srjf-eft from job {n_jobs}: {why}"
        warnings.warn(_guard_warning(f"rl-gate falls back to srjf-eft from job {n_jobs} of the day: {why}"),
                      stacklevel=3)

    def _count_failures(self, view: DecisionView) -> None:
        """A processor whose queue ends later than now with nothing assigned to it is down (the engine
        shows a failed processor's repair time, :func:`~simsched.learned.rl.features.processors_down`); count
        the processors that went down, then :meth:`_seen_failures`.  O(n)."""
        down = processors_down(view)
        self.failures += int((down & ~self._down).sum())
        self._down = down
        self._seen_failures(view.now, view.available.size)

    def _seen_failures(self, now: float, m: int) -> None:
        """Once failures were seen and the world's failure rate is still 0 (:meth:`_rate_unknown`): the rate from
        the failures per processor per mean task time since the first job arrived (when time has passed since),
        until the next arrival describes the world again.  O(features)."""
        if self.failures and self._rate_unknown():
            self.world = self.world.copy()
            t0 = float(self.job_arrival.min())
            if now > t0 and self.mean_task > 0:
                self.world[8] = float(np.log1p(100.0 * self.failures / (m * (now - t0)) * self.mean_task))

    def _rate_unknown(self) -> bool:
        """The world's failure rate is 0 and a job has arrived: failures seen at a decision would set it."""
        return bool(self.world[8] == 0.0 and self.job_arrival.size)

    # ------------------------------------------------------------------ the compiled loop
    def compiled_tables(self, problem: Problem):
        """srjf-eft's tables for the compiled stream engine (:meth:`ShortestJobEFT.compiled_tables`), from a twin
        whose guard is off (its world over the whole stream is never judged, nor warned about).  This policy is
        not changed.  O(n log n + n m + e)."""
        import copy

        quiet = copy.copy(self)
        quiet.guard = False
        return ShortestJobEFT.compiled_tables(quiet, problem)

    def compiled_gate(self, problem: Problem, lazy: bool = False):
        """The gate's tables per arrival state for the compiled stream engine
        (:class:`~simsched.simulator.engine.compiled_gate.GateTables`), each state's row filled by
        :meth:`compiled_gate_row` as the SimPy engine's decisions would grow this policy: before the run, state
        after state, when nothing fails (no failure is ever seen, so no row depends on the run); ``lazy`` (the run
        may have failures, which the gate counts as it sees them, and its world, guard and predictor with them)
        left to the compiled loop, which asks for each row at the first decision of its state, and again when
        failures seen may change it (:attr:`GateTables.lazy`).  Once the policy fell back, nothing of the gate is
        read again and it is grown no further (its world and :attr:`fallback_reason` are the SimPy run's, its
        srjf-eft tables stop there).  :attr:`late_decisions`, the predictor's last weights and the failures seen
        are handed back by :meth:`compiled_gate_ran`.  Arrivals must not decrease with the index (the engine
        checks it first).  O(arrivals x (new tasks x m + J + n)) up to the fallback, the world descriptions' (what a
        SimPy run spends on them)."""
        from simsched.simulator.arrived import ArrivedProblems
        from simsched.simulator.engine.compiled_gate import GateTables, arrival_states

        counts = arrival_states(problem)
        states = counts.size
        tables = GateTables(np.zeros(states, dtype=bool), np.zeros((states, N_WEIGHTS)),
                            np.zeros((states, len(WORLD_FEATURES))), np.ones(states), np.ones(states),
                            np.zeros(states, dtype=bool), counts, lazy)
        self._compiled = (ArrivedProblems(problem), tables, problem.n_processors)
        first = True
        for a, k in enumerate(counts.tolist() if not lazy else ()):
            if k == 0:
                continue  # nothing there from the start: the policy is reset at the first arrival
            done, _ = self.compiled_gate_row(a, 0, first)
            first = False
            if done:  # srjf-eft's for good: the gate is neither read nor grown (as in grow)
                tables.fallen[a:] = True
                break
        return tables

    def compiled_gate_row(self, a: int, failures: int, first: bool = False,
                          now: float | None = None) -> tuple[bool, bool]:
        """Fill arrival state ``a``'s row of :meth:`compiled_gate`'s tables as ``decide`` leaves this policy at a
        decision in that state, ``failures`` processor failures seen before it: with ``now`` None the state's first
        decision, where ``decide`` resets it (``first``: the run's first decision) or grows it on the tasks arrived
        (its world, guard and envelope, with their warning); else a later decision at time ``now``, where the
        failures seen may set the world's failure rate (:meth:`_seen_failures`).  Per row: whether the rule decides
        alone (fallen back, or gang tasks arrived: the rule places them), the world, the weights (the predictor's
        extreme where there is one), the local features' divisors, whether a decision counts as a late one.
        Returns ``(fallen back: no later row is read, the row may change when failures are seen at a decision:
        :meth:`_rate_unknown`)``.  :meth:`_world`'s cost a first decision, else O(N_BASIS^2)."""
        arrived, tables, m = self._compiled
        if now is None:
            problem = arrived.visible(int(tables.n_arrived[a]))
            if first:
                self.reset(problem, np.random.default_rng(0))
            else:
                self.failures = failures
                self.grow(problem)
                self.n_seen = problem.n_tasks
            self._gangs = problem.graph.gang
        else:
            self.failures = failures
            self._seen_failures(now, m)
        alone = self.fallback is not None or self._gangs
        tables.fallen[a], tables.world[a] = alone, self.world
        tables.backlog_scale[a], tables.job_scale[a] = m * max(self.mean_task, 1e-12), max(self.mean_job_work, 1e-12)
        tables.late[a] = not alone and self.model is not None and self.waits(self.world)
        tables.weights[a] = self.weights if self.model is None else NEVER_QUEUE if tables.late[a] else ALWAYS_QUEUE
        return self.fallback is not None, self._rate_unknown()

    def compiled_gate_ran(self, late: int, last_state: int, failures: int = 0) -> None:
        """The compiled loop ran with :meth:`compiled_gate`'s tables: ``late`` decisions were late ones, the gate
        last decided in arrival state ``last_state`` (-1: never), which leaves the predictor's weights as that
        decision left them, and it saw ``failures`` processors go down.  O(1)."""
        self.late_decisions += late
        self.failures = failures
        if self.model is not None and last_state >= 0:
            self.weights = NEVER_QUEUE if self._compiled[1].late[last_state] else ALWAYS_QUEUE

    # ------------------------------------------------------------------ decisions
    def decide(self, view: DecisionView) -> Assignments:
        if view.problem.n_tasks != self.n_seen:
            self.grow(view.problem)
            self.n_seen = view.problem.n_tasks
        if self.fallback is not None or view.problem.graph.gang:
            self._head = None  # the rule's own placement (a graph with gang columns: the rule places it)
            return super().decide(view)
        self._count_failures(view)
        if self.model is not None:  # the predictor picks one of the gate's two extremes, per decision
            wait = self.waits(self.world)
            self.weights = NEVER_QUEUE if wait else ALWAYS_QUEUE
            self.late_decisions += int(wait)
        ready = view.ready
        n_idle = int(np.count_nonzero(view.idle))
        if not n_idle or not ready.size:
            return []
        unassigned = (view.processor < 0) & np.isnan(view.finish)
        m = view.available.size
        backlog = math.log1p(float((unassigned * self.cost).sum()) / (m * max(self.mean_task, 1e-12)))
        self._head = np.concatenate([[1.0], self.world, [n_idle / m, backlog, 0.0]])
        return self._decide_by_task(view)  # srjf-eft's placement loop; the gate is _processor_for

    def _processor_for(self, view: DecisionView, task: int, ct: np.ndarray, p: int, idle: np.ndarray,
                       n_idle: int, placed: list[int]) -> int:
        """Queue ``task`` on its earliest-finish processor ``p`` when that one is idle or the gate opens
        (``gain >= sigmoid(w . head)``); otherwise the best idle processor, or -1 (it waits) when no
        idle one may run it and the gate never queues.  O(m)."""
        if self.fallback is not None or self._head is None or idle[p]:
            return p
        row = np.where(idle, ct, np.inf)
        q = int(row.argmin())
        head = self._head
        head[-3] = n_idle / idle.size
        head[-1] = math.log1p(self._job_sum(view, int(self.jobs[task]), placed) / max(self.mean_job_work, 1e-12))
        threshold = _sigmoid(_dot(head, self.weights))
        if np.isfinite(row[q]):
            gain = (row[q] - ct[p]) / max(row[q] - view.now, 1e-12)
            return p if gain >= threshold else q  # else wait for the busy one: take the best idle processor
        return -1 if threshold >= 1.0 else p  # no idle processor may run it: queue, or wait if the gate never queues


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """``a . b`` summed from the left, one product after another: the same float on every machine (a BLAS dot
    sums in an order of its own, per CPU) and in the compiled loop
    (:func:`~simsched.simulator.engine.compiled_gatekernel.threshold`).  O(len(a))."""
    s = 0.0
    for x, y in zip(a.tolist(), b.tolist()):
        s += x * y
    return s


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _guard_warning(text: str) -> Warning:
    from simsched.learned.rl.policy import GuardWarning

    return GuardWarning(text)
