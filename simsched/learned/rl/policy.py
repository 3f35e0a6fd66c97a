"""The trained agents as :class:`~simsched.simulator.policy.OnlinePolicy` classes (registry names
``rl`` and ``rl-world``), so they run through :func:`~simsched.simulator.engine.run_online` like
MCT.  At a decision point they place ready tasks one at a time, as in the env, while an idle
processor remains (:func:`~simsched.learned.rl.features.assume_assigned` updates the view between
placements); the remaining ready tasks wait for the next decision point.  Greedy (deterministic)
actions.  Cost per placement: one GNN forward, O(layers x (n + e) x hidden^2).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from simsched.errors import DataRepairWarning
from simsched.learned.rl.features import StaticInfo, WorldSeen, observe
from simsched.learned.training_range import RangeChecked, feature_names, range_detail
from simsched.schedulers.jobaware import OneByOne
from simsched.simulator.policy import DecisionView
from simsched.simulator.problem import Problem


@functools.lru_cache(maxsize=8)
def _load(kind: str, path: str):
    from simsched.learned.rl import checkpoint

    ck = checkpoint.load(path, kind)
    if kind == "rl":
        from simsched.checkpoints import check_weights, load_checked_state, planned_weights
        from simsched.learned.rl.nets import network_for

        cfg = checkpoint.config_of(ck, path, kind)
        # the network's shapes first, on the meta device; the real one only once they are the file's
        check_weights(planned_weights(lambda: network_for(cfg), file=path, what=kind, field="config.ppo"),
                      ck["state"], file=path, what=kind, retrain=checkpoint.RETRAIN[kind])
        net = network_for(cfg)
        load_checked_state(net, ck["state"], file=path, what=kind, retrain=checkpoint.RETRAIN[kind])
        net.eval()
        net.arrived_only = cfg.arrived_only
        net.world_obs = cfg.world_obs
        from simsched.learned.rl.fastnet import NumpyActor

        net.numpy_actor = NumpyActor(net.state_dict(), cfg.ppo.layers)  # the run path's forward
        return net
    from simsched.learned.rl.world_model import WorldAgent

    return WorldAgent.from_checkpoint(ck, path)


@functools.lru_cache(maxsize=8)
def _dag_range(checkpoint: str, scenario: str | None, tasks: tuple[int, int] | None, search: Path):
    """:func:`~simsched.learned.training_range.scenario_range`, cached per checkpoint (every
    repetition's fresh instance asks for it)."""
    from simsched.learned.training_range import scenario_range

    return scenario_range(checkpoint, scenario, tasks, (search,))


RANGE_DRAWS = 48
"""Training episodes drawn to measure a stream checkpoint's range (job sizes, offered load)."""

LOAD_WIDEN = 2.0
"""The offered-load span of the training streams is widened by this factor each way."""


def episodes_range(ident: str, episodes) -> dict:
    """The range of training episodes (:class:`~simsched.learned.rl.family.Episode` s, each on its own
    platform or one shared): job sizes (tasks per job), processor counts, speed ratios and the offered
    load after every arrival (:func:`~simsched.learned.training_range.prefix_loads`, widened by
    :data:`LOAD_WIDEN`), as a mapping for :func:`range_of` (what a worlds checkpoint stores in its
    metadata).  O(sum of episode sizes)."""
    from simsched.learned.training_range import prefix_loads, speed_ratio

    episodes = list(episodes)
    sizes = np.concatenate([np.bincount(ep.jobs) for ep in episodes])
    # what the guard observes during a day: the load after every arrival from the 8th job on
    loads = np.concatenate([prefix_loads(ep.problem, ep.jobs, ep.job_arrival) for ep in episodes])
    procs = [ep.problem.platform.n_processors for ep in episodes]
    ratios = [speed_ratio(ep.problem.platform) for ep in episodes]
    out = {"tasks": [int(sizes[sizes > 0].min()), int(sizes.max())], "processors": [min(procs), max(procs)],
           "speed_ratio": [float(min(ratios)), float(max(ratios))]}
    if loads.size:
        out["load"] = [float(loads.min()) / LOAD_WIDEN, float(loads.max()) * LOAD_WIDEN]
    return out


def range_of(ident: str, doc: dict):  # -> TrainingRange
    """The :class:`~simsched.learned.training_range.TrainingRange` of an :func:`episodes_range` mapping
    (a malformed one is unknown: never checked).  O(1)."""
    from simsched.learned.training_range import TrainingRange

    def pair(key: str, kind=float):
        v = doc.get(key) if isinstance(doc, dict) else None
        ok = isinstance(v, list | tuple) and len(v) == 2 and all(isinstance(x, int | float) for x in v)
        return (kind(v[0]), kind(v[1])) if ok else None

    return TrainingRange(ident, pair("tasks", int), pair("processors", int), speed_ratio=pair("speed_ratio"),
                         load=pair("load"))


@functools.lru_cache(maxsize=8)
def _stream_range(checkpoint: str, scenario: Path):  # -> TrainingRange
    """The range of a checkpoint trained in a stream scenario's world: :func:`episodes_range` of
    :data:`RANGE_DRAWS` of its training episodes; unknown if the scenario cannot be read.
    O(RANGE_DRAWS draws), cached per checkpoint."""
    from simsched.errors import SimschedError
    from simsched.learned.rl.family import StreamFamily
    from simsched.learned.training_range import TrainingRange, checkpoint_id

    ident = checkpoint_id(checkpoint)
    try:
        fam = StreamFamily.from_scenario(scenario)
    except (SimschedError, OSError):
        return TrainingRange(ident)
    return range_of(ident, episodes_range(ident, (fam.draw(s) for s in range(RANGE_DRAWS))))


STREAM_DEFAULT: str | None = None
"""The shipped checkpoint ``rl`` would switch to on a job stream when no checkpoint is named (single
DAGs keep ``rl.pt``); ``None``: none, so plain ``rl`` on a stream keeps ``rl.pt``, whose guard hands
the stream to ``srjf-eft``.  ``rl_worlds`` (trained across worlds) is not the default: rechecked on
fresh days it leans worse than the rule where fast processors are twice as fast (docs/rl.md, "`rl`
across worlds"), and a default must degrade to the rule, not below it."""


def _one_job(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """``(jobs, job_arrival)`` of one task graph taken as one job arriving at 0.  O(n)."""
    return np.zeros(problem.n_tasks, dtype=np.int64), np.zeros(1)


def _whole_graph(problem: Problem) -> bool:
    """``problem`` is one whole task graph: no task arrives after 0 and no task is named as a job of a
    stream (``j<k>.``, :func:`~simsched.workloads.jobs.merge_jobs`), so it is not the first job of a
    stream either, which looks like one DAG until the next job arrives.  O(n)."""
    from simsched.workloads.jobs import stream_job_keys

    return not (problem.n_tasks and float(problem.graph.arrival.max()) > 0.0) \
        and stream_job_keys(problem.graph.names) is None


class GuardWarning(DataRepairWarning):
    """A learned agent met a world outside its training range and handed its decisions to the rule
    (printed by the command line as one plain ``warning:`` line, like an importer's repairs)."""


class _Agent(OneByOne, RangeChecked):
    """A learned agent placing one task at a time (:class:`~simsched.schedulers.jobaware.OneByOne`)."""

    name = ""
    kind = ""

    def __init__(self, *, checkpoint: str | None = None, threads: int | None = None, guard: bool = True) -> None:
        from simsched.errors import SimschedError
        from simsched.learned.rl.checkpoint import shipped_path
        from simsched.learned.runtime import inference_threads

        if not isinstance(guard, bool):
            raise SimschedError(f"{self.name}: guard must be true or false, got {guard!r}")
        self.guard = guard

        self.threads = inference_threads(threads)  # default 1: $SIMSCHED_TORCH_THREADS, else one thread

        path = Path(checkpoint) if checkpoint else shipped_path(self.kind)
        if checkpoint and not path.exists() and Path(checkpoint).name == checkpoint:
            data = shipped_path(self.kind).parent  # a checkpoint shipped with simsched, by name
            for bundled in (data / checkpoint, data / f"{checkpoint}.pt"):
                if bundled.is_file():
                    path = bundled
                    break
        self.checkpoint = str(path)
        self.default_checkpoint = checkpoint is None
        """No checkpoint named: ``rl`` switches to :data:`STREAM_DEFAULT` on a job stream."""
        model = _load(self.kind, self.checkpoint)  # a bad checkpoint fails here, so `validate` agrees with `run`
        self.arrived_only = bool(getattr(model, "arrived_only", False))  # as the network was trained
        self.world_obs = bool(getattr(model, "world_obs", False))
        self.model = None
        self.info: StaticInfo | None = None

    torch_forward = False
    """Decide with the torch network instead of its numpy forward (:mod:`~simsched.learned.rl.fastnet`,
    the same actions); for tests and the rollout's candidate scores."""

    actor = None
    """The :class:`~simsched.learned.rl.fastnet.NumpyActor` that decides (None: the checkpoint's shared
    one, compiled when numba is installed); the bench and tests set one that goes through numpy calls."""

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        if self.torch_forward or getattr(self, "rollout", 0) or self.kind != "rl":
            import torch

            if torch.get_num_threads() != self.threads:  # for the whole run: one small forward per placement
                torch.set_num_threads(self.threads)
        self.model = _load(self.kind, self.checkpoint)
        self.info = StaticInfo.of(problem, arrived_only=self.arrived_only,
                                  world=WorldSeen() if self.world_obs else None)
        self.n_seen = problem.n_tasks
        self.rule = None  # the fallback rule, once the world is found outside the training range
        self.rng = rng
        self._guard(problem)

    def grow(self, problem: Problem) -> None:
        """Tasks arrived (the view's problem has only arrived tasks): the static features again,
        over the arrived tasks, and the world checked again.  O(n m + e) per arrival."""
        self.info = StaticInfo.of(problem, arrived_only=self.arrived_only, world=self.info.world)
        self._guard(problem)

    def _guard(self, problem: Problem) -> None:
        """The guard for worlds outside the training range: when the world seen so far (platform,
        job sizes, offered load: :meth:`TrainingRange.outside_stream`) lies outside the checkpoint's
        range, hand every later decision to the best rule, ``srjf-eft``, so the agent degrades to the
        rule and not below it; one :class:`GuardWarning` says so, unless the run's range warning
        already does (:meth:`_range_said`).  A task graph is a stream only when it holds several jobs or
        tasks that arrive after 0 (:func:`~simsched.workloads.jobs.is_job_stream`); one task graph is
        one job, whatever its weakly connected components.  O(n + m)."""
        from simsched.workloads.jobs import is_job_stream

        stream = is_job_stream(problem.graph)  # not a single DAG's components (job_ids' jobs)
        if self.default_checkpoint and stream and self._use_stream_default():
            # a job stream and no checkpoint named: the one trained on streams, observing as it was
            # trained, and its range decides from here on (rl.pt's fallback, if any, is lifted)
            self.info = StaticInfo.of(problem, arrived_only=self.arrived_only,
                                      world=WorldSeen() if self.world_obs else None)
            self.rule, self.fallback_reasons = None, []
        if not self.guard or self.rule is not None:
            return
        jobs, job_arrival = (self.info.jobs, self.info.job_arrival) if stream else _one_job(problem)
        reasons = self._range().outside_stream(problem, jobs, job_arrival)
        cfg = self._config()
        streams = int(cfg.get("jobs") or 1) > 1 or bool(cfg.get("stream_scenario")) or bool(cfg.get("worlds"))
        if not streams and stream:
            reasons.append("job streams (trained on single DAGs)")
        if streams and not cfg.get("arrived_only"):
            reasons.append("a checkpoint trained on observations of jobs not yet arrived (withdrawn)")
        if not reasons:
            return
        import warnings

        from simsched.schedulers.jobaware import ShortestJobEFT

        self.rule = ShortestJobEFT(late_binding=bool(getattr(self, "late_binding", False)))
        self.rule.reset(problem, self.rng)
        self.fallback_reasons = reasons
        said = self._range_said(problem, _whole_graph(problem))
        reasons = [r for r in reasons if r not in said]
        if not reasons:  # the run's range warning already says so (range_warning)
            return
        # what is outside, without this day's numbers: the same warning on every day, shown once
        warnings.warn(GuardWarning(
            f"{self.name} falls back to srjf-eft: {', '.join(sorted(feature_names(reasons)))} outside its "
            f"training range\n{range_detail(self._range())}"), stacklevel=2)

    def decide(self, view: DecisionView):
        if view.problem.n_tasks != self.n_seen:
            self.grow(view.problem)
            self.n_seen = view.problem.n_tasks
        if self.rule is not None:
            return self.rule.decide(view)
        if self.kind != "rl" or self.torch_forward or (self.actor or self.model.numpy_actor).compiled:
            return super().decide(view)  # the compiled forward calls no BLAS: no thread limit to set
        from simsched.learned.rl.fastnet import single_threaded_blas

        with single_threaded_blas():  # tiny matrices: one BLAS thread (once per decision point)
            return super().decide(view)

    def range_warning(self, problem: Problem, label: str, workload: tuple[dict, str] | None = None,
                      stream: bool = False) -> str | None:
        """The runner's one range warning (:class:`RangeChecked`), saying that the agent falls back
        to srjf-eft when its platform lies outside the range (the guard then decides nothing else to
        warn about).  On a job stream (``stream``, or ``problem`` holds several jobs) the range is the
        stream checkpoint's, the one that will decide.  O(n m + e)."""
        from simsched.workloads.jobs import is_job_stream

        stream = stream or is_job_stream(problem.graph)
        if stream:
            self._use_stream_default()
        return super().range_warning(problem, label, workload, stream)

    def range_consequence(self, problem: Problem, stream: bool = False) -> str:
        """Where the guard will hand every decision to srjf-eft for what the range warning names
        (:meth:`_range_said`), the range warning says so (and the guard says nothing more)."""
        if self.guard and self._range_said(problem, not stream and _whole_graph(problem)):
            return "falls back to srjf-eft"
        return super().range_consequence(problem, stream)

    def _range_said(self, problem: Problem, whole_graph: bool) -> list[str]:
        """The guard's reasons to fall back that the run's range warning names already: the platform
        (:meth:`TrainingRange.outside_platform`) and, on one whole task graph (``whole_graph``:
        :func:`_whole_graph`; the runner checks its range on the same graph), the graph's size (its
        one job's).  O(n + m)."""
        rng = self._range()
        said = rng.outside_platform(problem.platform)
        if whole_graph:
            said += [r for r in rng.outside_stream(problem, *_one_job(problem)) if r.startswith("job sizes")]
        return said

    def _use_stream_default(self) -> bool:
        """When no checkpoint was named and the agent is ``rl``, switch (once, for good) to the
        shipped :data:`STREAM_DEFAULT` checkpoint, trained on job streams: its network, observation
        flags and range.  True if it switched.  O(1) after the first load."""
        if not (self.default_checkpoint and self.kind == "rl" and STREAM_DEFAULT):
            return False
        from simsched.learned.rl.checkpoint import shipped_path

        self.default_checkpoint = False
        self.checkpoint = str(shipped_path("rl").parent / f"{STREAM_DEFAULT}.pt")
        for cache in ("_config_cache", "_training_range_cache"):
            self.__dict__.pop(cache, None)
        self.model = _load(self.kind, self.checkpoint)
        self.arrived_only = bool(getattr(self.model, "arrived_only", False))
        self.world_obs = bool(getattr(self.model, "world_obs", False))
        return True

    def _config(self) -> dict:
        """The checkpoint's training config (cached per instance)."""
        if "_config_cache" not in self.__dict__:
            from simsched.learned.rl import checkpoint

            self.__dict__["_config_cache"] = checkpoint.load(self.checkpoint, self.kind).get("config") or {}
        return self.__dict__["_config_cache"]

    def training_range(self):  # -> simsched.learned.training_range.TrainingRange
        """What the checkpoint was trained on: its config's task range and scenario family."""
        cfg = self._config()
        scenarios = Path(__file__).resolve().parents[3] / "scenarios" / "rl"
        if cfg.get("worlds"):  # trained across worlds: the range measured at training time
            from simsched.learned.rl import checkpoint
            from simsched.learned.training_range import checkpoint_id

            meta = checkpoint.load(self.checkpoint, self.kind).get("meta") or {}
            return range_of(checkpoint_id(self.checkpoint), meta.get("range"))
        if cfg.get("stream_scenario"):
            return _stream_range(self.checkpoint, scenarios / cfg["stream_scenario"])
        tasks = cfg.get("tasks")
        return _dag_range(self.checkpoint, cfg.get("scenario"), (int(tasks[0]), int(tasks[1])) if tasks else None,
                          scenarios)

    def choose(self, view: DecisionView) -> tuple[int, int]:
        raise NotImplementedError


class RLPolicy(_Agent):
    """PPO-trained GNN agent (task head, then processor head), shipped checkpoint by default, with
    optional decision-time search (rollout).

    Model-free: PPO (Schulman et al. 2017) with GAE (Schulman et al. 2016) on the SimPy-driven
    gymnasium env, as READYS (Grinsztajn et al. 2021) / Decima (Mao et al. 2019).  One GNN forward
    per placement.  ``checkpoint``: path of a ``simsched train rl`` checkpoint, or the name of one
    shipped with simsched (default: ``rl``, trained on single DAGs, which hands a job stream to
    srjf-eft; ``rl_worlds``: trained across worlds; ``rl_dynamic``: trained on the bar's stream).
    ``threads``: torch CPU threads while it runs (default ``$SIMSCHED_TORCH_THREADS``, else 1).

    Decision-time search, Bertsekas' rollout at every placement (:mod:`simsched.learned.rl.rollout`):
    the network proposes its most likely tasks, each on its earliest-finish processor, plus its own
    greedy action; with the base policy's action they are scored by simulating the arrived work
    forward with expected costs (no noise, no future arrivals) under the base policy; the lowest sum
    of job completion times wins.  Deterministic.  Cost per placement: one GNN forward plus up to
    ``rollout + 2`` simulations of O(horizon (log horizon + m + d)) each.

    ``rollout``: candidate tasks the network proposes (0, the default: the network alone, no search).
    ``base``: ``srjf`` (shortest remaining job first, earliest finish) or ``network`` (the network's
    task scores at the decision point, frozen over the simulation, earliest finish).
    ``horizon``: placements simulated per candidate (0: all arrived work).
    ``margin``: the best candidate replaces the base action only if its simulated cost is lower by
    more than this fraction (model error makes small simulated gains unreliable).
    ``guard``: hand every decision to srjf-eft once the world lies outside the checkpoint's training
    range (platform, job sizes, offered load; see the evaluation guide); default true.
    ``late_binding``: the network chooses among *idle* processors only (busy ones masked, as the
    rule ``srjf-eft`` with ``late_binding``, which is then also the guard's fallback): no task is
    committed to a busy processor's queue.  Default false (the network's own choice, as trained).
    """

    name = "rl"
    kind = "rl"

    def __init__(self, *, checkpoint: str | None = None, threads: int | None = None, rollout: int = 0,
                 base: str = "srjf", horizon: int = 0, margin: float = 0.0, guard: bool = True,
                 late_binding: bool = False) -> None:
        from simsched.errors import SimschedError

        if not isinstance(late_binding, bool):
            raise SimschedError(f"rl: late_binding must be true or false, got {late_binding!r}")
        self.late_binding = late_binding
        super().__init__(checkpoint=checkpoint, threads=threads, guard=guard)
        if not (isinstance(rollout, int) and 0 <= rollout <= 64):
            raise SimschedError(f"rl: rollout must be an integer from 0 to 64 (candidate tasks), got {rollout!r}")
        if base not in ("srjf", "network"):
            raise SimschedError(f"rl: base must be 'srjf' or 'network', got {base!r}")
        if not (isinstance(horizon, int) and horizon >= 0):
            raise SimschedError(f"rl: horizon must be an integer >= 0 (0: no bound), got {horizon!r}")
        if not (isinstance(margin, (int, float)) and 0.0 <= margin < 1.0):
            raise SimschedError(f"rl: margin must be a fraction in [0, 1), got {margin!r}")
        self.rollout, self.base, self.horizon, self.margin = rollout, base, horizon, float(margin)

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        super().reset(problem, rng)
        self._rollout_tables(problem)

    def grow(self, problem: Problem) -> None:
        super().grow(problem)
        self._rollout_tables(problem)

    def _rollout_tables(self, problem: Problem) -> None:
        """Job ids, costs, priorities and arrivals of the arrived tasks for the rollout's forward
        model.  O(n)."""
        if self.rollout:
            from simsched.workloads.jobs import job_ids

            g = problem.graph
            self.jobs = job_ids(g)
            n_jobs = int(self.jobs.max()) + 1 if self.jobs.size else 0
            self.cost = np.nan_to_num(problem.mean_cost, posinf=0.0)
            self.job_priority = np.full(n_jobs, -np.inf)
            np.maximum.at(self.job_priority, self.jobs, g.priority)
            self.job_arrival = np.full(n_jobs, np.inf)
            np.minimum.at(self.job_arrival, self.jobs, g.arrival)
            self.rank = self.info.rank

    def choose(self, view: DecisionView) -> tuple[int, int]:
        obs = observe(self.info, view)
        if self.late_binding:  # idle processors only; a task no idle processor may run is not offered
            mask = obs.proc_mask & view.idle[None, :]
            runnable = obs.task_mask & mask.any(axis=1)
            if runnable.any():
                obs.proc_mask, obs.task_mask = mask, runnable
        if not self.rollout and not self.torch_forward:
            t, p = (self.actor or self.model.numpy_actor).act(obs)
            task = obs.task_of(t)
            self._finish = (task, int(p), float(obs.completion[t, p]))  # for assume(): computed already
            return task, int(p)
        if not self.rollout:
            import torch

            from simsched.learned.rl.nets import collate

            with torch.no_grad():
                t, p, *_ = self.model(collate([obs]), greedy=True)
            return obs.task_of(int(t[0])), int(p[0])
        return self._search(view, obs)

    _finish: tuple[int, int, float] | None = None
    """``(task, processor, expected finish)`` of the last numpy-forward choice (the observation's
    completion time, which :meth:`assume` would otherwise compute again)."""

    def assume(self, view: DecisionView, task: int, processor: int) -> DecisionView:
        """:meth:`OneByOne.assume` with the expected finish the observation already holds (the same
        number: ``view.completion_times`` of the ready tasks, row for row).  O(n + k)."""
        from simsched.schedulers.jobaware import assume_assigned

        known = self._finish
        self._finish = None
        if known is not None and known[:2] == (task, processor):
            return assume_assigned(view, task, processor, known[2])
        return assume_assigned(view, task, processor)

    def _search(self, view: DecisionView, obs) -> tuple[int, int]:
        import torch

        from simsched.learned.rl import rollout as ro
        from simsched.learned.rl.nets import collate

        with torch.no_grad():
            tlogp, top, plogp = self.model.scores(collate([obs]), self.rollout)
        tasks = np.array([obs.task_of(int(r)) for r in top])
        eft = np.argmin(view.completion_times(tasks), axis=1)
        net_action = (int(tasks[0]), int(np.argmax(plogp[0])))
        if self.base == "srjf":
            choose = ro.srjf_choice(self.jobs, self.rank, self.job_priority)
            rem = np.bincount(self.jobs, weights=np.isnan(view.finish) * (view.processor < 0) * self.cost,
                              minlength=self.job_arrival.size)
            r = view.ready
            bt = int(r[choose(r, rem)])
            base_action = (bt, int(np.argmin(view.completion_times(np.array([bt]))[0])))
        else:
            score = np.full(view.problem.n_tasks, -np.inf)
            rows = np.arange(obs.nodes.shape[0]) if obs.tasks is None else obs.tasks
            score[rows] = tlogp
            choose = ro.score_choice(score)
            base_action = (int(tasks[0]), int(eft[0]))
        candidates = [base_action, net_action] + [(t, int(eft[i])) for i, t in enumerate(tasks.tolist())]
        unique = list(dict.fromkeys(candidates))
        if len(unique) == 1:
            return unique[0]
        model = ro.ForwardModel(view, self.jobs, self.rank, self.cost, self.job_priority, self.job_arrival)
        best, costs = ro.best_candidate(model, unique, choose, self.horizon)
        if costs.min() > costs[0] * (1.0 - self.margin):  # not clearly better than the base: keep it
            return base_action
        return best


class RLWorldPolicy(_Agent):
    """Model-based agent: controller trained by PPO inside an MDN-RNN world model.

    World Models (Ha & Schmidhuber 2018) over the GNN latent state; actions are (task slot by upward
    rank, processor slot by expected finish).  One GNN forward and one LSTM step per placement.
    ``checkpoint``: path of a ``simsched train rl`` world-model checkpoint.
    ``guard``: hand every decision to srjf-eft once the world lies outside the checkpoint's training
    range (see the evaluation guide); default true.
    """

    name = "rl-world"
    kind = "rl-world"

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        super().reset(problem, rng)
        self.state = self.model.initial_state()

    def choose(self, view: DecisionView) -> tuple[int, int]:
        (t, p), self.state = self.model.act(self.info, view, self.state)
        return t, p
