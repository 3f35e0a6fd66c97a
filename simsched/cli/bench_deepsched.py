"""``simsched bench deepsched``: DeepSched's planning time side by side with HEFT's, in one run.

Rows in the ``simsched bench`` format (what/size/measured/baseline/ratio/target/ok): measured =
DeepSched's ``plan`` (features, forward pass, plan repair and the plan's evaluation) with the shipped
checkpoint already loaded and one warm-up call; baseline = HEFT on the same problem (the spine
benchmark's random DAG on the DeepSched paper's 188 processors).  ``ok`` says whether DeepSched was
the faster one — the paper's claim, which the figures confirm or refute.
"""

from __future__ import annotations

FULL_SIZES = (100, 1_000, 10_000)
QUICK_SIZES = (100, 1_000)
PROCESSORS = 188


def bench_deepsched(quick: bool = False) -> list[dict]:
    """One row per size; torch runs on one CPU thread, like HEFT."""
    from simsched.schedulers.deepsched.evaluate import timing_rows

    rows = []
    for r in timing_rows(None, QUICK_SIZES if quick else FULL_SIZES, PROCESSORS, repeat=2 if quick else 3):
        rows.append(dict(what="DeepSched plan vs HEFT (same run, warm)", size=f"{r['tasks']:,} x {r['processors']}",
                         measured=r["deepsched_s"], baseline=r["heft_s"], ratio=r["ratio"],
                         target="faster than HEFT", ok=bool(r["deepsched_faster"])))
    return rows
