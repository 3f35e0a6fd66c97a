"""The ``deepsched`` static planner: a trained network's decisions turned into a valid plan.

1. features of the problem (:func:`~simsched.learned.deepsched.features.extract`), normalised
   per instance;
2. one forward pass: processor scores per (task, processor) pair and normalised (start, finish);
3. order: predicted start times (never before the task's arrival), made topological by
   :func:`~simsched.simulator.evaluate_batch.sequence_from_keys` (a task's key is raised to the
   largest key of its ancestors) — so each processor's sequence respects precedence and the plan
   cannot deadlock;
4. processors: each task, in that order, on whichever of its ``top_k`` best-scored eligible
   processors finishes it first (:func:`~simsched.learned.deepsched.decode.eft_decode`, one
   numpy step per task position, vectorised over processors and over a batch of instances);
5. times: those of the decode, which is the simulator's own list-schedule rule (a property test
   holds them equal to the SimPy engine's).  The network's time predictions order the tasks and
   nothing else: turnaround always comes from the simulator.

After the DeepSched paper (a deep network trained on HEFT's schedules), with plan repair added.
Cost: O(n m + n log n + e) numpy around an O(n (H^2 + m H)) forward pass; deterministic.
"""

from __future__ import annotations

import numpy as np

from simsched.errors import InfeasibleError
from simsched.learned.deepsched.decode import Decoded
from simsched.learned.training_range import RangeChecked, TrainingRange
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan


def plans(problems: list[Problem], checkpoint: str | None = None, device: str = "cpu",
          top_k: int | None = None, threads: int | None = None, decoder: str = "eft") -> list[Plan]:
    """DeepSched's plans for many problems in one batched forward pass and one batched decode;
    each plan's times from the fast evaluator.  ``device``: cpu, cuda or auto (cuda when present);
    ``threads``: torch CPU threads during inference (None: ``$SIMSCHED_TORCH_THREADS``, else 1 —
    see :mod:`simsched.learned.runtime`); torch's previous count is restored after.  ``decoder``:
    ``eft`` (each task on whichever of its ``top_k`` best-scored processors finishes it first) or
    ``direct`` (:func:`~simsched.learned.deepsched.infer.direct_decode`: the network's processor and
    order as they are, O(n + e) after the forward pass)."""
    from simsched.learned.deepsched.checkpoint import load_checkpoint
    from simsched.learned.deepsched.infer import decode, direct_decode, forward, sequences
    from simsched.learned.runtime import inference_threads, resolve_device, torch_threads

    if not problems:
        return []
    if decoder not in DECODERS:
        raise ValueError(f"decoder must be one of {', '.join(DECODERS)}, got {decoder!r}")
    device = resolve_device(device)
    with torch_threads(inference_threads(threads)):
        net, _ = load_checkpoint(checkpoint, device)
        if decoder == "direct":
            outputs = forward(net, problems, device)
            seqs = sequences(problems, [key for _, key in outputs])
            return [direct_decode(p, s, key, seq) for p, (s, key), seq in zip(problems, outputs, seqs)]
        k = top_k or max(p.n_processors for p in problems)
        return [to_plan(p, d) for p, d in zip(problems, decode(problems, forward(net, problems, device), k))]


DECODERS = ("eft", "direct")


def to_plan(problem: Problem, decoded: Decoded) -> Plan:
    """The plan of a decode: its processors, each running its tasks by decoded start (ties: a
    zero-length task inserted before a task starting at the same time first, then sequence
    position), with the decode's times — exactly the times the
    simulator gives this plan (the decode is the same append-only list schedule; a property test
    holds them equal).  O(n log n)."""
    order = np.empty(problem.n_tasks)
    order[np.lexsort((decoded.position, decoded.finish, decoded.start))] = np.arange(problem.n_tasks)
    return Plan(decoded.processor, order, decoded.start.copy(), decoded.finish.copy())


def repair(problem: Problem, scores: np.ndarray, start_key: np.ndarray, top_k: int = 1) -> Plan:
    """A valid plan of one problem from any (n, m) processor scores and (n,) start keys (the decode
    of :func:`plans` without the network)."""
    from simsched.learned.deepsched.infer import decode

    return to_plan(problem, decode([problem], [(scores, start_key)], top_k)[0])


class DeepSched(RangeChecked):
    """Neural scheduler trained to imitate HEFT (DeepSched): network processors, predicted-start order, repaired plan.

    After the DeepSched paper (machine Conv1D encoder, task bidirectional GRU, Conv1D classifier and
    regressor), with per-task encodings, normalised features, masks, variable sizes and a plan
    repair that keeps every plan valid.  Deterministic (``rng`` unused).

    The checkpoint is loaded (and cached per file) when the scheduler is constructed, so ``plan``
    times exclude file I/O and torch's start-up; a bad checkpoint raises :class:`SimschedError`.

    Parameters:
        checkpoint: a checkpoint written by ``simsched train deepsched`` (default: the shipped
            ``deepsched-general.pt``).
        device: ``cpu``, ``cuda`` or ``auto`` (cuda when torch sees a GPU, else cpu).
        threads: torch CPU threads for inference (default: ``$SIMSCHED_TORCH_THREADS``, else 1 —
            see :mod:`simsched.learned.runtime`).
        top_k: processors considered per task: 1 takes the classifier's choice as is (the paper);
            k > 1 places each task, in predicted-start order, on whichever of its k best-scored
            processors finishes it first; unset (default): every eligible processor — the network
            then orders the tasks and earliest finish places them (the most accurate decode).
        decoder: ``eft`` (default; the decode above) or ``direct``: the network's processor and
            order taken as they are, times from the fast evaluator, O(n + e) after the forward pass
            (:func:`~simsched.learned.deepsched.infer.direct_decode`).
    """

    name = "deepsched"
    check_hints = {"examples": 6}

    def __init__(self, *, checkpoint: str | None = None, device: str = "cpu", top_k: int | None = None,
                 threads: int | None = None, decoder: str = "eft") -> None:
        from simsched.learned.runtime import check_device, inference_threads

        if top_k is not None and top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {top_k}")
        if decoder not in DECODERS:
            raise ValueError(f"decoder must be one of {', '.join(DECODERS)}, got {decoder!r}")
        if decoder == "direct" and top_k is not None:
            raise ValueError("top_k chooses among processors in the eft decoder; the direct decoder takes the "
                             "network's processor as it is")
        self.decoder = decoder
        self.checkpoint = checkpoint
        self.device = check_device(device)
        self.top_k = top_k
        self.threads = inference_threads(threads)  # a bad value or environment fails here, not in plan()
        from simsched.learned.deepsched.checkpoint import load_checkpoint

        load_checkpoint(checkpoint, self._device())  # file I/O and torch set-up now, not in plan()

    def _device(self) -> str:
        from simsched.learned.runtime import resolve_device

        return resolve_device(self.device)

    def training_range(self) -> TrainingRange:
        """What the checkpoint was trained on (stored in it) and its content id."""
        from simsched.learned.deepsched.checkpoint import load_checkpoint, shipped_checkpoint
        from simsched.learned.training_range import checkpoint_id

        _, meta = load_checkpoint(self.checkpoint, self._device())
        return TrainingRange.from_dict(checkpoint_id(self.checkpoint or shipped_checkpoint()),
                                       meta.get("training_range"))

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        stuck = np.flatnonzero(~problem.eligible.any(axis=1))
        if stuck.size:
            raise InfeasibleError(f"no processor may run task {problem.graph.names[int(stuck[0])]!r}")
        plan = plans([problem], self.checkpoint, self._device(), self.top_k, self.threads, self.decoder)[0]
        return Plan(plan.processor, plan.order, plan.start, plan.finish,
                    {"model": "deepsched", "top_k": self.top_k, "decoder": self.decoder})
