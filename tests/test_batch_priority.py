"""Priority-function batch policies (RLScheduler's heuristics, issue #41): every score and every
schedule below is computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simsched.schedulers import registry
from simsched.schedulers.batch_easy import EASYBackfill
from simsched.schedulers.batch_fcfs import FCFS
from simsched.schedulers.batch_priority import F1, UNI, WFP3, FCFSPriority, SJFPriority, priority_scores
from simsched.schedulers.batch_sjf import SJF
from simsched.simulator.batch import simulate_batch
from simsched.workloads.importers.swf import make_trace

TINY = make_trace([0, 10, 20], [100, 10, 50], [1, 2, 4])  # requested = run (perfect estimates)
JOBS = np.arange(3)


def scores(rule: str, waiting: str = "current") -> list[float]:
    return priority_scores(rule, JOBS, TINY, 100.0, waiting).tolist()


def test_fcfs_and_sjf_scores() -> None:
    assert scores("fcfs") == [0, 10, 20]
    assert scores("sjf") == [100, 10, 50]


def test_f1_score_by_hand() -> None:
    # log10(r) * n + 870 log10(s); a submit time of 0 counts as 0.1
    assert scores("f1") == pytest.approx([2 * 1 + 870 * -1, 1 * 2 + 870 * 1, math.log10(50) * 4 + 870 * math.log10(20)])


def test_wfp3_score_by_hand() -> None:
    # waits at t = 100: 100, 90, 80; -(w / r)^3 * n
    assert scores("wfp3") == pytest.approx([-1.0, -(9.0 ** 3) * 2, -(1.6 ** 3) * 4])
    # RLScheduler's code: w = -1 - s for a waiting job
    assert scores("wfp3", "rlscheduler") == pytest.approx([0.01 ** 3, 1.1 ** 3 * 2, 0.42 ** 3 * 4])


def test_uni_score_by_hand() -> None:
    # -(w + 1e-15) / (log2(n + 1e-15) * r): one processor makes log2 ~ 1.44e-15, so job 0 goes first
    got = scores("uni")
    assert got[1:] == pytest.approx([-90 / (1 * 10), -80 / (2 * 50)])
    assert got[0] == pytest.approx(-100 / (math.log2(1 + 1e-15) * 100)) and got[0] < -1e14
    assert scores("uni", "rlscheduler")[1:] == pytest.approx([11 / (1 * 10), 21 / (2 * 50)])


# one processor: job 0 runs 0-10, job 1 (submitted at 2) is the head and runs 10-30; at 30 jobs 2
# (submitted 3, 100 s) and 3 (submitted 5, 10 s) wait 27 and 25 s: which goes first is the rule's
ORDER = make_trace([0, 2, 3, 5], [10, 20, 100, 10], [1, 1, 1, 1])
SECOND_FIRST = [0.0, 10.0, 40.0, 30.0]  # job 3 at 30, job 2 at 40
SUBMIT_ORDER = [0.0, 10.0, 30.0, 130.0]


@pytest.mark.parametrize(("policy", "starts"), [
    (FCFSPriority(), SUBMIT_ORDER),
    (SJFPriority(), SECOND_FIRST),                      # 10 s before 100 s
    (WFP3(), SECOND_FIRST),                             # -(25/10)^3 = -15.6 < -(27/100)^3 = -0.020
    (WFP3(waiting="rlscheduler"), SUBMIT_ORDER),        # -(-6/10)^3 = 0.216 > -(-4/100)^3 = 6.4e-5
    (UNI(), SECOND_FIRST),                              # -25/(eps*10) < -27/(eps*100)
    (UNI(waiting="rlscheduler"), SUBMIT_ORDER),         # 6/(eps*10) > 4/(eps*100)
    (F1(), SUBMIT_ORDER),                               # 2 + 870 log10(3) = 417.1 < 1 + 870 log10(5) = 609.1
])
def test_each_rule_orders_the_queue_by_its_score(policy, starts) -> None:
    assert simulate_batch(ORDER, 1, policy).start.tolist() == starts


def test_the_head_is_kept_until_it_starts() -> None:
    # two processors: job 1 (50 s, 2 procs) becomes the head at 1; job 2 (1 s) arrives at 5, shorter,
    # but the head is kept: job 1 at 10, job 2 at 60.  Plain sjf re-sorts at 10 and starts job 2 first.
    tr = make_trace([0, 1, 5], [10, 50, 1], [2, 2, 2])
    assert simulate_batch(tr, 2, SJFPriority()).start.tolist() == [0.0, 10.0, 60.0]
    assert simulate_batch(tr, 2, SJF()).start.tolist() == [0.0, 11.0, 10.0]


def test_greedy_backfilling_needs_an_end_strictly_before_the_shadow_time() -> None:
    # 2 processors; job 1 (2 procs) waits for job 0 until 10 (its shadow time); job 2 (1 proc) at 2:
    # 8 s would end at 10 = the shadow time: held back (EASY backfills it); 7 s ends at 9: backfilled
    tr = make_trace([0, 1, 2], [10, 5, 8], [1, 2, 1])
    assert simulate_batch(tr, 2, FCFSPriority(backfill=True)).start.tolist() == [0.0, 10.0, 15.0]
    assert simulate_batch(tr, 2, EASYBackfill()).start.tolist() == [0.0, 10.0, 2.0]
    tr = make_trace([0, 1, 2], [10, 5, 7], [1, 2, 1])
    assert simulate_batch(tr, 2, FCFSPriority(backfill=True)).start.tolist() == [0.0, 10.0, 2.0]


def test_greedy_backfilling_has_no_extra_processors() -> None:
    # 4 processors; job 1 (3 procs) waits for job 0 until 10, leaving 1 processor spare there; job 2
    # (1 proc, 100 s) would run past it: EASY starts it on that extra processor, the greedy rule only at
    # 10, beside job 1
    tr = make_trace([0, 1, 2], [10, 5, 100], [2, 3, 1])
    assert simulate_batch(tr, 4, FCFSPriority(backfill=True)).start.tolist() == [0.0, 10.0, 10.0]
    assert simulate_batch(tr, 4, EASYBackfill()).start.tolist() == [0.0, 10.0, 2.0]


def test_fcfs_priority_without_backfilling_is_fcfs() -> None:
    rng = np.random.default_rng(3)
    n = 300
    tr = make_trace(np.sort(rng.integers(0, 5000, n)), rng.integers(1, 400, n), rng.integers(1, 9, n))
    assert simulate_batch(tr, 8, FCFSPriority()).start.tolist() == simulate_batch(tr, 8, FCFS()).start.tolist()


@pytest.mark.parametrize("name", ["fcfs-priority", "sjf-priority", "wfp3", "uni", "f1"])
def test_every_rule_is_a_registered_batch_policy(name: str) -> None:
    assert registry.spec(name).kind == "batch"
    policy = registry.create(name, kinds=("batch",), backfill=True)
    assert policy.backfill and policy.name == name
