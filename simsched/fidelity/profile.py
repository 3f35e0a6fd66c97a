"""The calibrated profile: one YAML file holding each installation's fitted parameters.

``simsched calibrate`` writes it (:func:`write_profile`); ``simsched fidelity --profile`` reads it
(:func:`read_profile`).  It is input as much as output, so reading checks everything and refuses with
file, line and field: the format marker, every installation's identity (its label must be the one
its workflow system and machines give, as :func:`~simsched.workloads.recorded.installations` labels
them), each parameter's name, type (a finite number; ``slots`` a whole number >= 1 or null) and range
(the model's own checks), the training runs as a list of names with their files' SHA-256 digests (a run
is "trained on" exactly when its content is one of them, whatever its folder or name; a profile without
digests matches file names), the range they span (:mod:`~simsched.fidelity.extent`) and each one's
error under the entry's parameters, from which the prediction intervals of runs scored later are drawn
(:mod:`~simsched.fidelity.intervals`) and its mix, the quantities each mechanism's time grows with per
second of its makespan, from which a run scored later is told whether it varies what the training runs
could not tell apart (:mod:`~simsched.fidelity.identify`; all three absent in an older profile).  Each
entry also holds its parameters as a scenario's ``platform`` section
(:func:`~simsched.fidelity.model.scenario_platform`), for a scenario of that installation's workflows to
paste in; it is written for people and not read back (the ``parameters`` are the calibration).  An example::

    simsched_profile: 1
    seed: 0
    split_kind: per-application        # the split (corpus.SPLITS; absent: alternate, the earlier one)
    budget_s: 600.0                    # or evaluations: 300 (calibrate --evaluations)
    installations:
    - installation: pegasus@cc-worker-4+7
      wms: pegasus
      machines: [cc-worker-1, cc-worker-2, ...]
      parameters: {slots: 7, runtime_factor: 1.41, submit: 3.3, ...}
      platform:                      # the same as a scenario's platform section, to paste in
        processors: [{name: cc-worker-1, cores: 7, speed: 0.709}, ...]
        overheads: {submit: 3.3, ...}
        storage: {bandwidth: 1.7e+09, latency: 0.0}
      train_error: 0.12
      evaluations: 103
      cpu_s: 56.3
      stopped: budget
      train: [pegasus/cycles/cycles-chameleon-1l-1c-9p-001.json, ...]
      train_sha256: [9f2c..., ...]      # each training file's SHA-256: how fidelity knows them again
      train_range: {tasks: [67, 1097], levels: [4, 4], critical_path_s: [...], work_s: [...], bytes: [...]}
      train_errors: [0.031, ...]        # each training run's |log(simulated / recorded)|: the intervals
      train_mix: [[0.0021, 0.84, 0.0085, 0.19, 1.9e+05], ...]  # each training run's mix: what it pinned down

An entry with an ``application`` is that application's refinement within its installation
(:func:`~simsched.fidelity.calibrate.calibrate`); every such entry needs its installation's own entry
beside it, the fallback for the installation's other applications.

An installation of a corpus is matched to the entry of its workflow system whose machines it shares
(:meth:`Profile.entry_for`): a corpus may hold fewer runs of an installation than the one calibrated
on, hence a smaller pool and another label.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from simsched.errors import SimschedError, did_you_mean, number_value, shown
from simsched.fidelity.bottleneck import COLUMNS, run_features
from simsched.fidelity.calibrate import Calibration
from simsched.fidelity.corpus import SPLITS, Corpus
from simsched.fidelity.extent import FEATURES, training_range
from simsched.fidelity.model import NAMES, Parameters, scenario_platform, task_io
from simsched.fidelity.search import SEARCH, SEARCHES
from simsched.fileio import atomic_write_text
from simsched.yamlio import YamlDocument, load_yaml

FORMAT = 1
"""The ``simsched_profile`` marker this version writes and reads."""
_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class ProfileEntry:
    """One installation's calibration as a profile holds it."""

    installation: str
    wms: str
    machines: tuple[str, ...]
    parameters: Parameters
    train: tuple[str, ...]
    train_error: float | None = None
    application: str | None = None
    train_sha256: tuple[str, ...] = ()
    """The SHA-256 of each training run's file, beside ``train`` (empty in a profile written before
    simsched recorded them: its runs are then known by file name)."""
    train_range: dict[str, tuple[float, float]] | None = None
    """The range its training runs span (:mod:`~simsched.fidelity.extent`); None in a profile written
    before simsched recorded it."""
    train_errors: tuple[float, ...] = ()
    """Each training run's ``|log(simulated / recorded)|`` under ``parameters``, beside ``train`` (empty in
    a profile written before simsched recorded them)."""
    train_mix: tuple[tuple[float, ...], ...] = ()
    """Each training run's mix (:mod:`~simsched.fidelity.identify`: start-up, critical path,
    levels, tasks and bytes per second of its recorded makespan), beside ``train`` (empty in a profile
    written before simsched recorded them)."""


@dataclass(frozen=True)
class Profile:
    """A read profile: its ``seed``, ``hold_out`` and ``split_kind`` (the split it was calibrated
    with; ``alternate`` in a profile written before simsched recorded it) and entries."""

    seed: int
    entries: tuple[ProfileEntry, ...]
    file: str | None = None
    hold_out: tuple[str, ...] = ()
    split_kind: str = "alternate"

    def entry_for(self, wms: str, machines: Sequence[str], application: str | None = None) -> ProfileEntry | None:
        """The entry of workflow system ``wms`` sharing a machine with ``machines`` (both without
        machines: the system's machine-less entry), or None: that installation's refinement for
        ``application`` where the profile holds one, else the installation's own entry.
        :class:`SimschedError` when two installations match (the corpus joins installations the profile
        keeps apart).  O(entries x machines)."""
        mine = set(machines)
        found = [e for e in self.entries
                 if e.wms == wms and ((mine & set(e.machines)) or (not mine and not e.machines))]
        own = [e for e in found if e.application is None]
        if len(own) > 1:
            raise SimschedError(f"the corpus's {wms} runs on {', '.join(sorted(mine)[:4])} match two calibrated "
                                f"installations ({own[0].installation}, {own[1].installation})", file=self.file)
        if application is not None:
            for e in found:
                if e.application == application and (not own or e.installation == own[0].installation):
                    return e
        return own[0] if own else None

    @property
    def train(self) -> frozenset[str]:
        """Every run some entry was calibrated on."""
        return frozenset(name for e in self.entries for name in e.train)


def label_of(wms: str, machines: Sequence[str]) -> str:
    """The installation label :func:`~simsched.workloads.recorded.installations` gives a pool."""
    pool = sorted(machines)
    return f"{wms}@{pool[0] if pool else '(no machines)'}" + (f"+{len(pool) - 1}" if len(pool) > 1 else "")


def profile_text(calibrations: Sequence[Calibration], corpus: Corpus, *, budget_s: float, prior: float = 0.0,
                 search: str = SEARCH, regression: bool = True, evaluations: int | None = None) -> str:
    """The YAML text of a profile of ``calibrations`` (made on ``corpus`` with ``budget_s`` or, when given,
    ``evaluations`` per installation, ``prior``, the global search ``search`` and the ``regression`` start
    or not).  O(runs)."""
    groups = corpus.installations()
    entries = []
    for c in calibrations:
        runs = groups[c.installation]
        digest = {e.name: e.digest for e in runs}
        names = set(c.train)
        trained = [e for e in runs if e.name in names]
        row = [run_features(e, task_io(e.run)) for e in trained]  # once per run, for the range and the mix
        span = training_range(trained, row)
        mix = {e.name: r / e.run.makespan for e, r in zip(trained, row)}
        pool = {m.name: m for e in runs for m in e.run.machines}
        machines = sorted(pool)
        entries.append({
            "installation": c.installation, **({"application": c.application} if c.application else {}),
            "wms": runs[0].wms, "machines": machines,
            "parameters": {k: v for k, v in c.parameters.as_dict().items()},
            "platform": scenario_platform([pool[name] for name in machines], c.parameters),
            "train_error": round(c.train_error, 6), "train_error_at_start": round(c.start_error, 6),
            "evaluations": c.evaluations, "cpu_s": round(c.cpu_s, 3), "stopped": c.stopped,
            "train": list(c.train), "train_sha256": [digest[name] for name in c.train],
            "train_range": {f: [float(lo), float(hi)] for f, (lo, hi) in span.items()},
            **({"train_errors": list(c.train_errors)} if c.train_errors else {}),
            "train_mix": [[float(v) for v in mix[name]] for name in c.train]})
    doc = {"simsched_profile": FORMAT, "seed": corpus.seed, "split_kind": corpus.split_kind,
           **({"hold_out": sorted(corpus.hold_out)} if corpus.hold_out else {}),
           **({"budget_s": float(budget_s)} if evaluations is None else {"evaluations": int(evaluations)}),
           "prior": float(prior), "search": search,
           "regression_start": bool(regression), "installations": entries}
    head = ("# Calibrated by `simsched calibrate` on the training runs of each installation; read by\n"
            "# `simsched fidelity --profile`.  docs/fidelity.md says what each parameter means.\n")
    return head + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=100)


def write_profile(path: str | Path, calibrations: Sequence[Calibration], corpus: Corpus, *, budget_s: float,
                  prior: float = 0.0, search: str = SEARCH, regression: bool = True,
                  evaluations: int | None = None) -> Path:
    """Write the profile atomically (a reader never sees half a file)."""
    return atomic_write_text(path, profile_text(calibrations, corpus, budget_s=budget_s, prior=prior, search=search,
                                                regression=regression, evaluations=evaluations))


TOP_KEYS = ("simsched_profile", "seed", "split_kind", "hold_out", "budget_s", "evaluations", "prior", "search",
            "regression_start", "installations")
ENTRY_KEYS = ("installation", "application", "wms", "machines", "parameters", "platform", "train_error",
              "train_error_at_start", "evaluations", "cpu_s", "stopped", "train", "train_sha256", "train_range",
              "train_errors", "train_mix")


class _Reader:
    def __init__(self, doc: YamlDocument) -> None:
        self.doc = doc

    def fail(self, message: str, path: tuple[Any, ...]) -> SimschedError:
        field = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path).replace(".[", "[")
        return SimschedError(message, file=self.doc.file, line=self.doc.line_of(path), field=field or None)

    def known(self, value: dict, keys: tuple[str, ...], path: tuple[Any, ...]) -> None:
        for key in value:
            if key not in keys:
                raise self.fail(f"unknown field{did_you_mean(str(key), keys)}; fields: {', '.join(keys)}", (*path, key))

    def number(self, value: Any, path: tuple[Any, ...]) -> float:
        x = number_value(value)
        if not math.isfinite(x):
            raise self.fail(f"must be a finite number, got {shown(value)}", path)
        return x

    def names(self, value: Any, path: tuple[Any, ...]) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail("must be a list of names", path)
        return tuple(value)

    def parameters(self, value: Any, path: tuple[Any, ...]) -> Parameters:
        if not isinstance(value, dict):
            raise self.fail("must be a mapping of parameter names to values", path)
        values: dict[str, Any] = {}
        for key, v in value.items():
            where = (*path, key)
            if key not in NAMES:
                raise self.fail(f"unknown parameter{did_you_mean(str(key), NAMES)}; parameters: {', '.join(NAMES)}",
                                where)
            if key == "slots":
                if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                    raise self.fail(f"must be a whole number >= 1 (or null: every core), got {v!r}", where)
                values[key] = v
            elif key == "bandwidth" and v is None:  # no storage model
                values[key] = v
            else:
                values[key] = self.number(v, where)
        try:
            return Parameters(**values)
        except SimschedError as exc:
            raise self.fail(exc.message, (*path, exc.field) if exc.field else path) from None

    def entry(self, value: Any, path: tuple[Any, ...]) -> ProfileEntry:
        if not isinstance(value, dict):
            raise self.fail("must be a mapping (installation, wms, machines, parameters, train)", path)
        for key in ("installation", "wms", "machines", "parameters", "train"):
            if key not in value:
                raise self.fail(f"lacks {key!r}", path)
        self.known(value, ENTRY_KEYS, path)
        for key in ("train_error", "train_error_at_start", "cpu_s", "evaluations"):
            if value.get(key) is not None:
                self.number(value[key], (*path, key))
        label, wms = value["installation"], value["wms"]
        for key in ("installation", "wms"):
            if not isinstance(value[key], str) or not value[key]:
                raise self.fail("must be a non-empty text", (*path, key))
        machines = self.names(value["machines"], (*path, "machines"))
        if label != label_of(wms, machines):
            raise self.fail(f"{label!r} is not the installation of {wms} on these {len(machines)} machines "
                            f"({label_of(wms, machines)!r}): the entry was edited", (*path, "installation"))
        error = value.get("train_error")
        app = value.get("application")
        if app is not None and (not isinstance(app, str) or not app):
            raise self.fail("must be a non-empty text (an application of the installation)", (*path, "application"))
        train = self.names(value["train"], (*path, "train"))
        return ProfileEntry(label, wms, machines, self.parameters(value["parameters"], (*path, "parameters")),
                            train, None if error is None else self.number(error, (*path, "train_error")), app,
                            self.digests(value.get("train_sha256"), len(train), (*path, "train_sha256")),
                            self.span(value.get("train_range"), (*path, "train_range")),
                            self.errors(value.get("train_errors"), len(train), (*path, "train_errors")),
                            self.mix(value.get("train_mix"), len(train), (*path, "train_mix")))

    def errors(self, value: Any, n: int, path: tuple[Any, ...]) -> tuple[float, ...]:
        """The training runs' errors: absent (an older profile), or one finite number >= 0 per run."""
        items = self.per_run(value, n, "number", path, " >= 0") or []
        out = tuple(self.number(v, (*path, i)) for i, v in enumerate(items))
        for i, x in enumerate(out):
            if x < 0:
                raise self.fail(f"must be >= 0 (|log(simulated / recorded)|), got {shown(items[i])}", (*path, i))
        return out

    def mix(self, value: Any, n: int, path: tuple[Any, ...]) -> tuple[tuple[float, ...], ...]:
        """The training runs' mix: absent (an older profile), or per run a list of one finite number >= 0
        per column of :data:`~simsched.fidelity.bottleneck.COLUMNS`, the first > 0 (per second of a
        makespan > 0)."""
        k = len(COLUMNS)
        items = self.per_run(value, n, "row", path, f" of {k} numbers ({', '.join(COLUMNS)} per second)") or []
        out = []
        for i, row in enumerate(items):
            if not isinstance(row, list) or len(row) != k:
                raise self.fail(f"must be a list of {k} numbers ({', '.join(COLUMNS)} per second of the "
                                f"run's makespan), got {shown(row)}", (*path, i))
            values = tuple(self.number(v, (*path, i, j)) for j, v in enumerate(row))
            if min(values) < 0 or values[0] <= 0:
                raise self.fail(f"must be >= 0, the first > 0 (1 / the run's makespan), got {shown(row)}", (*path, i))
            out.append(values)
        return tuple(out)

    def span(self, value: Any, path: tuple[Any, ...]) -> dict[str, tuple[float, float]] | None:
        """The training range: absent (an older profile), or ``{feature: [lowest, highest]}`` over known
        features with finite ``0 <= lowest <= highest``."""
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.fail(f"must be a mapping of {', '.join(FEATURES)} to [lowest, highest]", path)
        out: dict[str, tuple[float, float]] = {}
        for key, ends in value.items():
            where = (*path, key)
            if key not in FEATURES:
                raise self.fail(f"unknown feature{did_you_mean(str(key), FEATURES)}; features: {', '.join(FEATURES)}",
                                where)
            if not isinstance(ends, list) or len(ends) != 2:
                raise self.fail(f"must be [lowest, highest], got {shown(ends)}", where)
            low, high = (self.number(v, (*where, i)) for i, v in enumerate(ends))
            if not 0.0 <= low <= high:
                raise self.fail(f"must be [lowest, highest] with 0 <= lowest <= highest, got {shown(ends)}", where)
            out[key] = (low, high)
        return out

    def per_run(self, value: Any, n: int, what: str, path: tuple[Any, ...], tail: str = "") -> list[Any] | None:
        """A list beside ``train``: None when absent (an older profile), else exactly ``n`` items (``what``:
        one item's name, plural with an ``s``, then ``tail``)."""
        if value is None:
            return None
        if not isinstance(value, list) or len(value) != n:
            raise self.fail(f"must be a list of {n} {what}{'' if n == 1 else 's'}{tail}, one per training run", path)
        return value

    def digests(self, value: Any, n: int, path: tuple[Any, ...]) -> tuple[str, ...]:
        """The training runs' SHA-256 digests: absent, or one 64-digit lower-case hex text per run."""
        items = self.per_run(value, n, "SHA-256 digest", path) or []
        for i, v in enumerate(items):
            if not isinstance(v, str) or _HEX64.fullmatch(v) is None:
                raise self.fail(f"must be a SHA-256 digest (64 hex digits), got {shown(v)}", (*path, i))
        return tuple(items)

def read_profile(path: str | Path) -> Profile:
    """Read and check a profile (see the module docstring); :class:`SimschedError` with file, line and
    field for anything wrong.  O(size of the file)."""
    doc = load_yaml(path)
    r = _Reader(doc)
    data = doc.data
    if data.get("simsched_profile") != FORMAT:
        raise r.fail(f"not a simsched profile of format {FORMAT} (simsched_profile: {FORMAT} missing); write one "
                     f"with `simsched calibrate`", ("simsched_profile",))
    r.known(data, TOP_KEYS, ())
    seed = data.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise r.fail(f"must be a whole number >= 0, got {seed!r}", ("seed",))
    hold_out = r.names(data.get("hold_out", []), ("hold_out",))
    split_kind = data.get("split_kind", "alternate")
    if split_kind not in SPLITS:
        raise r.fail(f"must be one of {', '.join(SPLITS)}, got {split_kind!r}", ("split_kind",))
    for key in ("budget_s", "prior"):  # what it was calibrated with: read for the record, checked all the same
        if key in data and r.number(data[key], (key,)) < 0:
            raise r.fail(f"must be >= 0, got {data[key]!r}", (key,))
    if "evaluations" in data and (isinstance(data["evaluations"], bool) or not isinstance(data["evaluations"], int)
                                  or data["evaluations"] < 1):
        raise r.fail(f"must be a whole number >= 1, got {data['evaluations']!r}", ("evaluations",))
    if "search" in data and data["search"] not in SEARCHES:
        raise r.fail(f"must be one of {', '.join(SEARCHES)}, got {data['search']!r}", ("search",))
    if "regression_start" in data and not isinstance(data["regression_start"], bool):
        raise r.fail(f"must be true or false, got {data['regression_start']!r}", ("regression_start",))
    items = data.get("installations")
    if not isinstance(items, list) or not items:
        raise r.fail("must be a non-empty list of calibrated installations", ("installations",))
    entries = tuple(r.entry(v, ("installations", i)) for i, v in enumerate(items))
    seen: dict[tuple[str, str | None], int] = {}
    for i, e in enumerate(entries):
        key = (e.installation, e.application)
        what = e.installation if e.application is None else f"{e.installation} / {e.application}"
        if key in seen:
            raise r.fail(f"{what!r} is calibrated twice (also installations[{seen[key]}])",
                         ("installations", i, "installation"))
        seen[key] = i
    for i, e in enumerate(entries):
        if e.application is not None and (e.installation, None) not in seen:
            raise r.fail(f"application {e.application!r} of {e.installation!r} has no entry of its installation to "
                         f"fall back on", ("installations", i, "application"))
    return Profile(seed, entries, str(path), hold_out, split_kind)
