"""The generalisation matrix's safety check (issue 41): on worlds wider than training, a learned stream
scheduler is never significantly worse than srjf-eft, or it is not a default candidate."""

from __future__ import annotations

import subprocess
import sys

import pytest

from simsched.learned.rl.worlds.safety import default_candidate, format_rows, safety_rows, worlds_of
from simsched.learned.rl.worlds.wide import OFF_TRAINING, draw_wide_world


def _row(cell: str, ratio: float, low: float, high: float, verdict: str) -> dict:
    return {"cell": cell, "days": 3, "ratio": ratio, "low": low, "high": high, "verdict": verdict, "fell_back": 0,
            "reasons": []}


def test_one_significantly_worse_world_takes_a_policy_off_the_defaults():
    rows = [_row("a", 0.95, 0.90, 1.01, "tie"), _row("b", 1.08, 1.02, 1.14, "worse"),
            _row("c", 0.9, 0.85, 0.95, "better")]
    ok, why = default_candidate(rows)
    assert not ok and why == "significantly worse than srjf-eft on b (1.080 [1.020, 1.140])"
    ok, why = default_candidate([rows[0], rows[2]])
    assert ok and why == "no world of 2 significantly worse than srjf-eft"
    assert format_rows(rows)[3].startswith("| b | 3 | 1.080 | [1.020, 1.140] | worse | 0/3 | - |")


def test_the_wide_worlds_are_wider_than_training():
    # training: 2 processor types, fast processors 1.5-7x, MTBF >= 3 mean gaps, no held-out family, no 200-task job
    draws = [draw_wide_world(s) for s in range(60)]
    procs = [d["platform"]["processors"] for d, _, _ in draws]
    assert any(len(p) == 3 for p in procs)
    assert max(max(q["speed"] for q in p) for p in procs) > 7.0
    assert min(d["_failures_in_gaps"][0] for d, _, _ in draws if "_failures_in_gaps" in d) < 3.0
    jobs = [j for d, _, _ in draws for j in d["workload"]["stream"]["jobs"]]
    assert any(j.get("tasks") == [60, 200] for j in jobs)
    assert any("stg" in j or "dot" in j or j.get("generator") in ("fork_join", "series_parallel") for j in jobs)
    assert len(OFF_TRAINING) == 6 and len(worlds_of("wide", 4)) == 4


def test_rl_gate_is_never_significantly_worse_than_srjf_eft_on_wider_worlds():
    """Four wide worlds and the six off-training ones, three evaluate days each: no world significantly worse
    (the paired 95% interval of the ratio of mean JCT above 1).  About 25 s (60 engine runs): not marked slow,
    so every lane holds the gate to it."""
    rows = safety_rows("rl-gate", {**worlds_of("wide", 4), **OFF_TRAINING}, days=3)
    ok, why = default_candidate(rows)
    assert ok, why
    assert len(rows) == 10 and all(r["days"] == 3 for r in rows)
    fell = {r["cell"]: r["fell_back"] for r in rows}
    assert fell["3 processor types, STG jobs, burst"] == 3 and fell["rl_dynamic, 5x failures"] == 3


@pytest.mark.parametrize("args", [["--days", "1"], ["--count", "0"], ["--seed", "-1"]])
def test_bad_safety_options_are_one_line_exit_2(args):
    r = subprocess.run([sys.executable, "-m", "simsched.learned.rl.worlds", "safety", *args], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2
    assert len((r.stdout + r.stderr).strip().splitlines()) == 1
