"""Regression baselines: record the metrics of scenarios, re-run them later and flag what got worse.

A baseline document (JSON) stores, per scenario, the seed and repetitions used and every
repetition's value of each metric for each scheduler::

    {"format": "simsched-baseline", "version": 1, "simsched_version": "0.1.0",
     "metrics": {"makespan": "lower", ...},
     "scenarios": [{"path": "scenarios/quickstart.yaml", "name": "quickstart", "sha256": "...",
                    "seed": 42, "repetitions": 5,
                    "results": {"heft": {"makespan": [101.2, ...], ...}, ...}}]}

Scenario paths are stored relative to the baseline file.  :func:`compare_baseline` re-runs every
scenario with the stored seed and repetitions and, per scheduler and metric, computes a Welch
t confidence interval of the *worsening* (new mean - old mean, signed so that positive is worse).
A metric **regressed** when the whole interval lies above ``tolerance x |old mean|``: the change is
larger than the tolerance and larger than the noise between repetitions can explain.  It
**improved** when the interval lies below ``-tolerance x |old mean|``.  With deterministic runs the
interval is a point and this is a plain relative comparison.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from simsched.errors import SimschedError

FORMAT = "simsched-baseline"
VERSION = 1
DIRECTIONS: dict[str, str] = {
    "makespan": "lower", "avg_turnaround": "lower", "avg_waiting": "lower", "slr": "lower",
    "utilization": "higher", "speedup": "higher", "efficiency": "higher",
}
"""Metrics a baseline may track and which way is better."""
DEFAULT_METRICS = ("makespan", "avg_turnaround", "avg_waiting")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _run(path: Path, seed: int | None, repetitions: int | None) -> Any:
    from simsched.run.runner import run_scenario
    from simsched.scenario import load_scenario

    return run_scenario(load_scenario(path), seed=seed, repetitions=repetitions)


def _values(report: Any, metrics: Sequence[str]) -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = {}
    for label in report.schedulers:
        rows = report.rows_of(label)
        out[label] = {m: [float(r[m]) if r[m] is not None else float("nan") for r in rows] for m in metrics}
    return out


def record_baseline(scenarios: Sequence[str | Path], output: str | Path, *, repetitions: int | None = None,
                    metrics: Sequence[str] = DEFAULT_METRICS) -> dict[str, Any]:
    """Run every scenario (its own seed; ``repetitions`` or its own) and return the baseline
    document for a file at ``output`` (paths relative to it).  Cost: one full run per scenario."""
    from simsched import __version__

    unknown = [m for m in metrics if m not in DIRECTIONS]
    if unknown:
        raise SimschedError(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(DIRECTIONS)}",
                             field="--metric")
    if not scenarios:
        raise SimschedError("name at least one scenario file to record")
    base = Path(output).resolve().parent
    doc: dict[str, Any] = {"format": FORMAT, "version": VERSION, "simsched_version": __version__,
                           "metrics": {m: DIRECTIONS[m] for m in metrics}, "scenarios": []}
    for path in scenarios:
        p = Path(path)
        report = _run(p, None, repetitions)
        doc["scenarios"].append({
            "path": os.path.relpath(p.resolve(), base), "name": report.scenario.name, "sha256": _sha256(p),
            "seed": report.seed, "repetitions": report.repetitions, "results": _values(report, metrics),
        })
    return doc


def write_baseline(doc: dict[str, Any], path: str | Path) -> Path:
    """Write ``doc`` atomically (strict JSON; non-finite numbers as null)."""
    from simsched.outputs import atomic_write, finite

    text = json.dumps(finite(doc), indent=1, allow_nan=False) + "\n"
    return atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))


def load_baseline(path: str | Path) -> dict[str, Any]:
    """Read and check a baseline document; :class:`SimschedError` (naming the file, the field and
    the line) if it is missing, not JSON, not a baseline, of a newer format version, or has an
    unknown metric, a wrong type or a non-finite number (``NaN``, ``Infinity``)."""
    from simsched.workloads.importers._common import parse_json, read_text

    p = Path(path)
    if not p.is_file():
        raise SimschedError(f"{p}: no such baseline file (record one with `simsched baseline record`)")
    text = read_text(p)
    doc = parse_json(text, file=p)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise SimschedError(f"not a simsched baseline file (no \"format\": \"{FORMAT}\")", file=p)
    version = doc.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
        raise SimschedError(f"the baseline has format version {version}, written by a newer simsched; this one "
                            f"reads version {VERSION}: upgrade simsched or record the baseline again",
                            file=p, field="version")
    try:
        _BaselineModel.model_validate(doc)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        field = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in loc).lstrip(".")
        msg = err.get("ctx", {}).get("error") if err["type"] == "value_error" else err["msg"]
        raise SimschedError(f"{msg} (got {str(err.get('input'))[:40]!r})" if err["type"] != "missing"
                            else "this field is required", file=p, line=_json_line(text, loc),
                            field=field) from None
    return doc


def _json_line(text: str, loc: tuple[Any, ...]) -> int | None:
    """Line of the field ``loc`` in a JSON text (JSON is YAML, whose loader keeps lines)."""
    from simsched.yamlio import parse_yaml

    try:
        return parse_yaml(text).line_of(loc)
    except SimschedError:
        return None


def _finite(x: float) -> float:
    if not math.isfinite(x):
        raise ValueError("must be a finite number")
    return x


def _known_metric(name: str) -> str:
    if name not in DIRECTIONS:
        raise ValueError(f"unknown metric {name!r}; known: {', '.join(DIRECTIONS)}")
    return name


Metric = Annotated[StrictStr, AfterValidator(_known_metric)]
Value = Annotated[float, AfterValidator(_finite)] | None


class _Entry(BaseModel):
    """One recorded scenario (extra fields are kept for newer writers of the same version)."""

    model_config = ConfigDict(extra="allow")
    path: StrictStr
    name: StrictStr | None = None
    sha256: StrictStr | None = None
    seed: Annotated[StrictInt, Field(ge=0)]
    repetitions: Annotated[StrictInt, Field(ge=1)]
    results: dict[StrictStr, dict[Metric, list[Value]]]


class _BaselineModel(BaseModel):
    """The checked shape of a baseline document."""

    model_config = ConfigDict(extra="allow")
    format: Literal["simsched-baseline"]
    version: Literal[1]
    simsched_version: StrictStr = ""
    metrics: dict[Metric, Literal["lower", "higher"]] = {}
    scenarios: list[_Entry]


# --------------------------------------------------------------------------- statistics
def welch_interval(old: Sequence[float], new: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """``(difference, low, high)``: mean(new) - mean(old) and its Welch t confidence interval
    (unequal variances; a sample of one contributes no variance; zero spread gives a point).  O(n)."""
    a, b = np.asarray(old, dtype=np.float64), np.asarray(new, dtype=np.float64)
    d = float(b.mean() - a.mean())
    va = a.var(ddof=1) / a.size if a.size > 1 else 0.0
    vb = b.var(ddof=1) / b.size if b.size > 1 else 0.0
    se = math.sqrt(va + vb)
    if se == 0.0 or not math.isfinite(se):
        return d, d, d
    denom = (va * va / (a.size - 1) if a.size > 1 else 0.0) + (vb * vb / (b.size - 1) if b.size > 1 else 0.0)
    df = (va + vb) ** 2 / denom
    from scipy.stats import t

    q = float(t.ppf(0.5 + confidence / 2, df))
    return d, d - q * se, d + q * se


@dataclass
class Change:
    """One scheduler's metric in one scenario, old vs new; ``verdict``: ``regression``,
    ``improvement``, ``unchanged``, ``missing`` (in the baseline, not in the new run) or ``new``."""

    scenario: str
    scheduler: str
    metric: str
    verdict: str
    old_mean: float = float("nan")
    new_mean: float = float("nan")
    low: float = float("nan")
    high: float = float("nan")
    old_n: int = 0
    new_n: int = 0

    @property
    def relative(self) -> float:
        """(new - old) / |old| (nan when old is 0)."""
        return (self.new_mean - self.old_mean) / abs(self.old_mean) if self.old_mean else float("nan")


@dataclass
class Comparison:
    """Everything :func:`compare_baseline` found; ``failed`` when a metric regressed or a
    scheduler of the baseline is missing."""

    tolerance: float
    confidence: float
    changes: list[Change] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> list[Change]:
        return [c for c in self.changes if c.verdict in ("regression", "missing")]

    @property
    def failed(self) -> bool:
        return bool(self.regressions)

    def format(self) -> str:
        """One line per regression or improvement, then a summary line."""
        lines = list(self.warnings)
        for c in self.changes:
            if c.verdict in ("regression", "improvement"):
                lines.append(f"{c.verdict}: {c.scenario} / {c.scheduler} / {c.metric}: {c.old_mean:.6g} -> "
                             f"{c.new_mean:.6g} ({100 * c.relative:+.1f}%)")
            elif c.verdict in ("missing", "new"):
                lines.append(f"{c.verdict}: {c.scenario} / {c.scheduler}")
        lines.append(f"{len(self.changes)} metrics compared, {len(self.regressions)} regression(s) "
                     f"(tolerance {100 * self.tolerance:g}%, {100 * self.confidence:g}% confidence)")
        return "\n".join(lines)


def compare_baseline(path: str | Path, *, tolerance: float = 0.05, confidence: float = 0.95) -> Comparison:
    """Re-run every scenario of the baseline at ``path`` with its stored seed and repetitions and
    compare (see the module docstring).  Cost: one full run per scenario."""
    if not tolerance >= 0:
        raise SimschedError(f"the tolerance must be >= 0, got {tolerance}", field="--tolerance")
    if not 0 < confidence < 1:
        raise SimschedError(f"the confidence must be between 0 and 1, got {confidence}", field="--confidence")
    doc = load_baseline(path)
    base = Path(path).resolve().parent
    directions = doc.get("metrics") or {m: DIRECTIONS[m] for m in DEFAULT_METRICS}
    out = Comparison(tolerance, confidence)
    for entry in doc["scenarios"]:
        scenario_path = base / entry["path"]
        if not scenario_path.is_file():
            raise SimschedError(f"{path}: scenario {entry['path']} (recorded as {entry.get('name')!r}) "
                                f"not found at {scenario_path}")
        if entry.get("sha256") and _sha256(scenario_path) != entry["sha256"]:
            out.warnings.append(f"warning: {entry['path']} changed since the baseline was recorded")
        report = _run(scenario_path, int(entry["seed"]), int(entry["repetitions"]))
        new = _values(report, list(directions))
        name = entry.get("name") or entry["path"]
        for label, old_metrics in entry["results"].items():
            if label not in new:
                out.changes.append(Change(name, label, "-", "missing"))
                continue
            for metric, sign_word in directions.items():
                old_v = [float("nan") if v is None else v for v in old_metrics.get(metric, [])]
                new_v = new[label][metric]
                if not old_v or not np.isfinite(old_v).all() or not np.isfinite(new_v).all():
                    continue
                d, low, high = welch_interval(old_v, new_v, confidence)
                sign = 1.0 if sign_word == "lower" else -1.0
                lo, hi = sorted((sign * low, sign * high))  # the interval of the worsening
                old_mean = float(np.mean(old_v))
                threshold = max(tolerance * abs(old_mean), 1e-9)
                verdict = "regression" if lo > threshold else "improvement" if hi < -threshold else "unchanged"
                out.changes.append(Change(name, label, metric, verdict, old_mean, float(np.mean(new_v)),
                                          lo, hi, len(old_v), len(new_v)))
        for label in new:
            if label not in entry["results"]:
                out.changes.append(Change(name, label, "-", "new"))
    return out
