"""The objective language of a capacity question: ``METRIC OP NUMBER[unit]`` clauses joined by ``and``.

E.g. ``"jct_p95 <= 6h"``, ``"makespan <= 120"``, ``"deadline_miss_rate <= 1% and jct_mean <= 2h"``.
Units ``s``, ``min``, ``h``, ``d`` scale to seconds, ``%`` divides by 100.  A day meets the
objective when every clause holds on its metrics (:meth:`Objective.met`); a clause's metric must be
one the model reports (:func:`check_objective`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from simsched import limits
from simsched.errors import SimschedError, shown

_UNITS = {"": 1.0, "s": 1.0, "sec": 1.0, "min": 60.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "%": 0.01}
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": lambda v, t: v <= t * (1 + 1e-12) + 1e-12, "<": lambda v, t: v < t,
    ">=": lambda v, t: v >= t * (1 - 1e-12) - 1e-12, ">": lambda v, t: v > t,
}
_TOKEN = re.compile(r"(?P<space>\s+)|(?P<num>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"
                    r"|(?P<op><=|>=|=<|=>|≤|≥|<|>)|(?P<sep>&&|&|,)|(?P<word>[A-Za-z_][A-Za-z0-9_.\-]*|%)|(?P<bad>.)",
                    re.DOTALL)
"""The objective's tokens.  Every alternative is a run of one character class (no nested repetition),
tried at the current position only, so tokenizing is linear in the text whatever it holds."""
_ALIASES = {"deadline_miss": "deadline_miss_rate", "miss_rate": "deadline_miss_rate",
            "utilisation": "utilization", "turnaround": "avg_turnaround", "waiting": "avg_waiting"}


@dataclass(frozen=True)
class Clause:
    """``metric op threshold`` (threshold already in base units: seconds, fractions)."""

    metric: str
    op: str
    threshold: float
    text: str

    def holds(self, value: float) -> bool:
        """Whether ``value`` meets the clause; NaN never does."""
        return not math.isnan(value) and _OPS[self.op](value, self.threshold)

    @property
    def lower_is_better(self) -> bool:
        return self.op in ("<", "<=")


@dataclass(frozen=True)
class Objective:
    """Clauses that must all hold on a day."""

    clauses: tuple[Clause, ...]
    text: str

    def met(self, metrics: Mapping[str, float]) -> bool:
        """Whether a day with these metrics meets every clause.  O(clauses)."""
        return all(c.holds(float(metrics[c.metric])) for c in self.clauses)

    @property
    def metrics(self) -> list[str]:
        """The metric names the clauses read, each once, in clause order."""
        return list(dict.fromkeys(c.metric for c in self.clauses))

    @property
    def jct_quantiles(self) -> list[float]:
        """The job-completion-time quantiles the clauses name (``jct_p95`` -> 95.0, ``jct_p99_9`` ->
        99.9), in clause order: an autotuning model must measure them."""
        out = []
        for c in self.clauses:
            m = re.fullmatch(r"jct_p(\d+)(?:_(\d+))?", c.metric)
            if m:
                out.append(float(m.group(1) + ("." + m.group(2) if m.group(2) else "")))
        return out

    def as_data(self) -> list[dict[str, Any]]:
        """The clauses as the answer's JSON carries them: ``[{"metric", "op", "threshold"}, ...]``."""
        return [{"metric": c.metric, "op": c.op, "threshold": c.threshold} for c in self.clauses]


def _normal_name(name: str) -> str:
    n = re.sub(r"[\s\-.]+", "_", name.strip().lower())
    m = re.fullmatch(r"p(\d+(?:_\d+)?)_jct", n)  # "p95 JCT" -> jct_p95
    if m:
        n = f"jct_p{m.group(1)}"
    return _ALIASES.get(n, n)


def parse_objective(text: Any, *, field: str = "--objective", file: Any = None, line: int | None = None) -> Objective:
    """Parse ``"METRIC OP NUMBER[unit] [and ...]"`` (see the module doc).  Metric names are
    lower-cased with spaces and dashes as ``_`` (``"p95 JCT"`` reads as ``jct_p95``).  Raises
    :class:`SimschedError` (exit 2) naming ``field``, ``file`` and ``line`` for anything else, and
    :class:`~simsched.limits.LimitError` for a text over ``max_objective`` characters.  O(len): one
    pass of a tokenizer without backtracking (:data:`_TOKEN`), then one pass over the tokens."""
    def bad(why: str) -> SimschedError:
        return SimschedError(f"bad objective {shown(text)}: {why}", field=field, file=file, line=line)

    if not isinstance(text, str) or not text.strip():
        raise bad("write it as METRIC OP NUMBER, e.g. 'jct_p95 <= 6h' or 'makespan <= 120'")
    cap = limits.current().max_objective
    if len(text) > cap:
        raise limits.LimitError(f"the objective is {len(text):,} characters long, more than the limit of {cap:,} "
                                f"(max_objective; to allow more, set SIMSCHED_MAX_OBJECTIVE); write it as "
                                f"METRIC OP NUMBER[unit] [and ...]", field=field, file=file, line=line)
    tokens = [(m.lastgroup, m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text) if m.lastgroup != "space"]
    for kind, tok, at, _ in tokens:
        if kind == "bad":
            raise bad(f"unexpected character {tok!r} at position {at + 1}; write METRIC OP NUMBER[unit] "
                      f"(OP one of <=, <, >=, >), clauses joined by 'and'")
    # clauses: the tokens between separators ('and', '&', '&&', ',')
    groups: list[list[tuple[str, str, int, int]]] = [[]]
    for t in tokens:
        if t[0] == "sep" or (t[0] == "word" and t[1] == "and"):
            groups.append([])
        else:
            groups[-1].append(t)
    clauses = []
    for group in groups:
        part = text[group[0][2]:group[-1][3]] if group else ""
        ops = [k for k, t in enumerate(group) if t[0] == "op"]
        shape = (len(ops) == 1 and ops[0] >= 1 and group[0][0] == "word" and group[0][1] != "%"
                 and all(t[0] in ("word", "num") for t in group[:ops[0]])
                 and len(group) - ops[0] in (2, 3) and group[ops[0] + 1][0] == "num"
                 and (len(group) - ops[0] == 2 or group[-1][0] == "word"))
        if not shape:
            raise bad(f"{shown(part)} is not METRIC OP NUMBER[unit] (OP one of <=, <, >=, >)")
        k = ops[0]
        name = text[group[0][2]:group[k - 1][3]]
        op = {"≤": "<=", "=<": "<=", "≥": ">=", "=>": ">="}.get(group[k][1], group[k][1])
        unit_text = group[-1][1] if len(group) - k == 3 else ""
        unit = unit_text.lower()
        if unit not in _UNITS:
            raise bad(f"unknown unit {unit_text!r} in {part!r}; use s, min, h, d or %")
        value = float(group[k + 1][1]) * _UNITS[unit]
        if not limits.finite_value(value):
            raise bad(f"the threshold in {part!r} is not finite (or above {limits.MAX_VALUE:g})")
        clauses.append(Clause(_normal_name(name), op, value, part.strip()))
    return Objective(tuple(clauses), text.strip())


def check_objective(objective: Objective, metrics: Sequence[str], *, field: str = "--objective",
                    file: Any = None, line: int | None = None) -> None:
    """A :class:`SimschedError` (located) for a clause whose metric is not among ``metrics`` (what
    a model's day reports).  O(clauses x metrics)."""
    for c in objective.clauses:
        if c.metric not in metrics:
            raise SimschedError(f"objective {c.text!r}: no metric {c.metric!r} here; choose from "
                                f"{', '.join(metrics)}", field=field, file=file, line=line)
