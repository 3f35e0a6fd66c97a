"""DAgger-style relabelling for DeepSched (Ross, Gordon & Bagnell, "A Reduction of Imitation
Learning and Structured Prediction to No-Regret Online Learning", AISTATS 2011).

Plain imitation trains on the states HEFT's own schedule passes through; at inference the network
meets the states *its* earlier choices lead to, and errors compound.  Here the network decodes every
training instance itself (:func:`~simsched.learned.deepsched.infer.decode`) and, in each state
it reached, the expert — HEFT's earliest-finish rule over all eligible processors — names the
processor it would pick; those labels, with HEFT's times, form a new set of records that training
aggregates with the earlier ones.  Cost: one batched forward pass and one batched decode per call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simsched.learned.deepsched.features import extract
from simsched.simulator.problem import Problem


def relabel(net: Any, problems: list[Problem], records: list[dict], top_k: int, device: str = "cpu",
            chunk: int = 64) -> tuple[list[dict], float]:
    """Copies of ``records`` (the features of ``problems``) whose processor labels are the expert's
    choices in the states the network's own decode reached; and the share of tasks where the
    network's decode already agreed with the expert."""
    from simsched.learned.deepsched.infer import decode, forward

    net.eval()
    out, agree, total = [], 0, 0
    for lo in range(0, len(problems), chunk):
        probs = problems[lo:lo + chunk]
        feats = [extract(p) for p in probs]
        decoded = decode(probs, forward(net, probs, device, feats), top_k, expert=True)
        for f, d, rec in zip(feats, decoded, records[lo:lo + chunk]):
            new = dict(rec)
            new["proc"] = d.expert[f.order].astype(np.int64)
            out.append(new)
            agree += int((d.expert == d.processor).sum())
            total += d.expert.size
    return out, agree / max(total, 1)
