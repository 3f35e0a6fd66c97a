"""``simsched/Scheduling-v0``: a gymnasium environment driven by the SimPy engine.

Each episode draws a problem from a :class:`~simsched.learned.rl.family.Family` (random DAGs of 20-50 tasks
on 4 heterogeneous processors with lognormal noise, by default; optionally Poisson job streams,
failures and stragglers).  The engine (:class:`~simsched.simulator.engine.OnlineSession`) runs
until a decision point — an instant with a ready task and an idle processor — and the agent picks
one ``(task, processor)`` pair; the task joins the processor's queue.  Several decisions may
happen at one instant; the simulation only advances when no processor is idle or no task is ready.

Observation (a ``Dict`` of padded ``Box`` es, see :mod:`simsched.learned.rl.features`): ``nodes``
(N, 12), ``edges`` (2, E) with ``n_edges``, ``procs`` (M, 4), ``pairs`` (N, M, 4), ``jobs`` (J, 4),
``task_job`` (N,), ``globals`` (4,; 13 with ``world_obs``: the world block of
:func:`~simsched.learned.rl.features.world_block` after the four), ``n_tasks``/``n_procs``/``n_jobs``.
Action: ``MultiDiscrete([N, M])`` = (task, processor), chosen in two steps; ``info["action_mask"]``
holds ``"task"`` (N,) and ``"processor"`` (N, M) int8 masks.  An invalid action is replaced by the ready task of highest
upward rank on its earliest-finish processor, flagged ``info["invalid_action"]`` and penalised by
``invalid_penalty``.

Rewards (``reward=``):

* ``"heft"`` (READYS, Grinsztajn et al. 2021): 0 until the end, then ``(M_heft - M) / M_heft``
  where ``M_heft`` is HEFT's plan executed by the engine under the same noise;
* ``"makespan"``: the negative increment of the expected makespan, divided by ``M_heft`` (dense;
  its sum is ``-M / M_heft``);
* ``"jobs"`` (Decima, Mao et al. 2019): minus the time-integrated number of jobs in the system since
  the previous decision, divided by the sum of job flow times of HEFT's static plan followed under
  the same noise and disruptions (its sum is ``-JCT / JCT_heft``, JCT = mean job completion time).

The episode's *score* (:meth:`SchedulingEnv.score`) is the makespan, or the mean job completion
time for the ``jobs`` reward; ``baseline_score`` is HEFT's static plan's.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from simsched.errors import SimschedError
from simsched.learned.rl.family import Episode, Family
from simsched.learned.rl.features import (
    GLOBAL_FEATURES,
    JOB_FEATURES,
    NODE_FEATURES,
    PAIR_FEATURES,
    PROC_FEATURES,
    WORLD_OBS,
    Observation,
    StaticInfo,
    WorldSeen,
    observe,
)
from simsched.simulator.arrived import arrival_order
from simsched.simulator.engine import OnlineSession, execute_plan
from simsched.simulator.jobmetrics import job_completion, jobs_in_system
from simsched.simulator.policy import DecisionView

REWARDS = ("heft", "makespan", "jobs")
BOUND = 1e6


def default_family() -> Family:
    """The bundled family (``scenarios/rl/random_dag_4p.yaml`` in code form): random DAGs (Topcuoglu
    2002 generator, heterogeneity 1) of 20-50 tasks, 4 processors, unit bandwidth, lognormal noise
    sigma = 0.3."""
    from simsched.simulator.platform import Platform, Processor

    platform = Platform.uniform([Processor(f"p{i}") for i in range(4)], bandwidth=1.0, latency=0.0)
    return Family(platform, "random", {"ccr": 0.5, "out_degree": 3, "heterogeneity": 1.0, "processors": 4},
                  (20, 50))


def heft_makespan(ep: Episode) -> float:
    """HEFT's plan executed by the engine under the episode's noise: the baseline.  O(n m + e)."""
    from simsched.schedulers.heft import heft_schedule

    s = execute_plan(ep.problem, heft_schedule(ep.problem), ep.factors)
    return float(s.finish.max() - ep.problem.graph.arrival.min())


class SchedulingEnv(gym.Env):
    """Two-step (task, processor) scheduling on the SimPy engine; see the module docstring.

    Parameters: ``family`` (default :func:`default_family`), ``reward`` (one of :data:`REWARDS`),
    ``max_tasks``/``max_procs``/``max_jobs``/``max_edges`` (padding; ``max_edges`` defaults to
    ``6 * max_tasks``), ``fixed_seed`` (draw the same problem every episode; the noise still follows
    the reset seed), ``invalid_penalty``, ``arrived_only`` (observe only the tasks and jobs that have
    arrived, :mod:`simsched.learned.rl.features`; actions then index the observation's rows, which
    :meth:`step` maps to tasks with ``Observation.task_of``).
    """

    metadata = {"render_modes": []}

    def __init__(self, family: Family | None = None, reward: str = "makespan", max_tasks: int = 64,
                 max_procs: int = 4, max_jobs: int = 4, max_edges: int | None = None,
                 fixed_seed: int | None = None, invalid_penalty: float = 0.1, arrived_only: bool = False,
                 world_obs: bool = False) -> None:
        if reward not in REWARDS:
            raise SimschedError(f"unknown reward {reward!r}; choose one of {', '.join(REWARDS)}")
        self.family = family or default_family()
        self.reward_kind = reward
        self.N, self.M, self.J = int(max_tasks), int(max_procs), int(max_jobs)
        self.E = int(max_edges or 6 * max_tasks)
        self.fixed_seed = fixed_seed
        self.invalid_penalty = float(invalid_penalty)
        self.arrived_only = bool(arrived_only)
        self.world_obs = bool(world_obs)
        self.G = GLOBAL_FEATURES + (WORLD_OBS if self.world_obs else 0)
        m = getattr(self.family, "max_processors", None) or self.family.platform.n_processors
        if m > self.M:
            raise SimschedError(f"the platform has {m} processors; max_procs is {self.M}")
        box = lambda *shape: spaces.Box(-BOUND, BOUND, shape, np.float32)  # noqa: E731
        self.observation_space = spaces.Dict({
            "nodes": box(self.N, NODE_FEATURES),
            "edges": spaces.Box(0, self.N - 1, (2, self.E), np.int64),
            "procs": box(self.M, PROC_FEATURES),
            "pairs": box(self.N, self.M, PAIR_FEATURES),
            "jobs": box(self.J, JOB_FEATURES),
            "task_job": spaces.Box(0, self.J - 1, (self.N,), np.int64),
            "globals": box(self.G),
            "n_tasks": spaces.Box(0, self.N, (1,), np.int64),
            "n_edges": spaces.Box(0, self.E, (1,), np.int64),
            "n_procs": spaces.Box(0, self.M, (1,), np.int64),
            "n_jobs": spaces.Box(0, self.J, (1,), np.int64),
        })
        self.action_space = spaces.MultiDiscrete([self.N, self.M])
        self.episode: Episode | None = None
        self.session: OnlineSession | None = None
        self.view: DecisionView | None = None
        self.obs: Observation | None = None
        self.info_static: StaticInfo | None = None
        self.baseline = 1.0
        self.baseline_score = 1.0
        self.expected = 0.0
        self.real_steps = 0

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        draw_seed = self.fixed_seed if self.fixed_seed is not None else int(self.np_random.integers(2**31))
        ep = self.family.draw(draw_seed)
        if self.fixed_seed is not None:  # same graph, fresh noise from the reset seed
            ep.factors = (None if self.family.noise.deterministic else
                          self.family.noise.factors(ep.problem.n_tasks, self.np_random))
        return self.load(ep)

    def load(self, ep: Episode) -> tuple[dict, dict]:
        """Start an episode on a given :class:`Episode` (used by evaluation on fixed seeds)."""
        g = ep.problem.graph
        if g.n_tasks > self.N or g.n_edges > self.E or len(ep.job_arrival) > self.J:
            raise SimschedError(f"episode too large for the env's padding ({g.n_tasks} tasks, {g.n_edges} "
                                f"edges, {len(ep.job_arrival)} jobs; max {self.N}, {self.E}, {self.J})")
        self.episode = ep
        self.info_static = StaticInfo.of(ep.problem, ep.jobs, arrived_only=self.arrived_only,
                                         world=WorldSeen() if self.world_obs else None)
        order = arrival_order(ep.problem)  # the engine's visible numbering (None: the task index)
        self._visible_jobs = ep.jobs if order is None else ep.jobs[order]
        self.baseline = heft_makespan(ep)
        if self.reward_kind == "jobs":
            from simsched.learned.rl.baselines import heft_static_jct

            self.baseline_score = heft_static_jct(ep, self.disruptions(ep))
        else:
            self.baseline_score = self.baseline
        self.session = OnlineSession(ep.problem, ep.factors, self.disruptions(ep),
                                     np.random.default_rng(ep.disruption_seed))
        self.view = self.session.reset()
        self.expected = 0.0
        self.last_time = float(ep.problem.graph.arrival.min())
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        if self.view is None or self.session is None:
            raise SimschedError("call reset() before step(), and again after an episode ended")
        task, proc = (int(x) for x in np.asarray(action).reshape(-1)[:2])
        obs = self.obs
        invalid = not (0 <= task < obs.task_mask.size and 0 <= proc < obs.proc_mask.shape[1]
                       and obs.proc_mask[task, proc])
        if invalid:
            task, proc = self.fallback_action()
        task = obs.task_of(task)
        t0 = self.session.now
        self.view = self.session.assign(task, proc)
        self.real_steps += 1
        terminated = self.view is None
        reward = self._reward(t0, terminated) - (self.invalid_penalty if invalid else 0.0)
        observation = self._terminal_observation() if terminated else self._observation()
        info = self._info()
        info["invalid_action"] = invalid
        if terminated:
            info["makespan"] = self.makespan()
            info["score"] = self.score()
        return observation, reward, terminated, False, info

    # ------------------------------------------------------------------ helpers
    def disruptions(self, ep: Episode):  # -> simsched.simulator.engine.Disruptions
        """The episode's own failures and stragglers (a world's), else the family's."""
        return ep.disruptions if ep.disruptions is not None else self.family.disruptions

    def fallback_action(self) -> tuple[int, int]:
        """The ready task of highest upward rank on its earliest expected finish processor (as an
        observation row)."""
        obs = self.obs
        ready = np.flatnonzero(obs.task_mask)
        tasks = ready if obs.tasks is None else obs.tasks[ready]
        t = int(ready[np.argmax(self.info_static.rank[tasks])])
        return t, int(np.argmin(obs.completion[t]))

    def makespan(self) -> float:
        """Makespan of the finished episode (last finish minus first arrival)."""
        s = self.session.schedule()
        return float(s.finish.max() - self.episode.problem.graph.arrival.min())

    def score(self) -> float:
        """The finished episode's objective: mean job completion time (``jobs`` reward) or makespan."""
        if self.reward_kind != "jobs":
            return self.makespan()
        from simsched.simulator.jobmetrics import job_metrics

        ep = self.episode
        return job_metrics(self.session.schedule(), ep.jobs, ep.job_arrival).mean_flow_time

    def _expected_makespan(self) -> float:
        view, origin = self.view, float(self.episode.problem.graph.arrival.min())
        done = self.session.finish
        last = float(np.nanmax(done)) if (~np.isnan(done)).any() else origin
        return max(last, float(view.available.max())) - origin

    def _reward(self, t0: float, terminated: bool) -> float:
        b = self.baseline if self.baseline > 0 else 1.0
        if self.reward_kind == "heft":
            return (b - self.makespan()) / b if terminated else 0.0
        if self.reward_kind == "makespan":
            new = self.makespan() if terminated else self._expected_makespan()
            r = -(new - self.expected) / b
            self.expected = new
            return float(r)
        ep = self.episode
        end = job_completion(np.asarray(self.session.finish), ep.jobs, len(ep.job_arrival))
        t1 = float(np.nanmax(self.session.finish)) if terminated else self.session.now
        flow = self.baseline_score * len(ep.job_arrival)
        r = -jobs_in_system(ep.job_arrival, end, self.last_time, t1) / (flow if flow > 0 else 1.0)
        self.last_time = t1
        return r

    def _observation(self) -> dict:
        if self.view.problem is not self.info_static.problem:  # tasks arrived: the agent sees them now
            self.info_static = StaticInfo.of(self.view.problem, self._visible_jobs[:self.view.problem.n_tasks],
                                             arrived_only=self.arrived_only, world=self.info_static.world)
        self.obs = observe(self.info_static, self.view)
        return self.pad(self.obs)

    def _terminal_observation(self) -> dict:
        obs = self.pad(self.obs)
        obs["nodes"][:, 0] = 0.0
        obs["nodes"][: self.episode.problem.n_tasks, 0] = 1.0
        obs["nodes"][:, 1:4] = 0.0
        self.obs = None
        return obs

    def pad(self, o: Observation) -> dict:
        """The padded gymnasium observation of ``o``.  O(N M)."""
        n, m = o.pairs.shape[:2]
        e, J = o.edges.shape[1], o.jobs.shape[0]
        nodes = np.zeros((self.N, NODE_FEATURES), np.float32)
        nodes[:n] = o.nodes
        edges = np.zeros((2, self.E), np.int64)
        edges[:, :e] = o.edges
        procs = np.zeros((self.M, PROC_FEATURES), np.float32)
        procs[:m] = o.procs
        pairs = np.zeros((self.N, self.M, PAIR_FEATURES), np.float32)
        pairs[:n, :m] = o.pairs
        jobs = np.zeros((self.J, JOB_FEATURES), np.float32)
        jobs[:J] = o.jobs
        task_job = np.zeros(self.N, np.int64)
        task_job[:n] = o.task_job
        return {"nodes": nodes, "edges": edges, "procs": procs, "pairs": pairs, "jobs": jobs,
                "task_job": task_job, "globals": o.globals.astype(np.float32),
                "n_tasks": np.array([n], np.int64), "n_edges": np.array([e], np.int64),
                "n_procs": np.array([m], np.int64), "n_jobs": np.array([J], np.int64)}

    def _info(self) -> dict:
        task = np.zeros(self.N, np.int8)
        proc = np.zeros((self.N, self.M), np.int8)
        if self.view is not None and self.obs is not None:
            n, m = self.obs.proc_mask.shape
            task[:n] = self.obs.task_mask
            proc[:n, :m] = self.obs.proc_mask
        return {"action_mask": {"task": task, "processor": proc}, "time": float(self.session.now),
                "heft_makespan": self.baseline, "baseline_score": self.baseline_score}
