"""The question a scenario asks ``simsched capacity``, with the command line's choices applied.

Three shapes, each validated whole before a day is simulated, each answered by its ``answer`` method:

* :class:`CapacityQuestion` (:func:`question_from`): the fewest processors of one entry, servers of
  an autotuning section, or processors of a cluster log, meeting the objective on ``on_days`` of the
  days;
* :class:`MixQuestion` (:func:`mix_question`): the cheapest mix of processor types (``capacity.mix``,
  ``capacity.cheapest_by``: prices, energy or carbon);
* :class:`OverQuestion` (:func:`over_question`, ``--over FIELD=V1,V2``): one capacity question per
  value of a scenario field, set in the raw data as a study's grid sets it
  (:func:`simsched.scenario.overrides.apply_overrides`), over the same days for every value.

The command line's values win over the scenario's ``capacity:`` section (:func:`section`), which wins
over the defaults.  Errors are :class:`SimschedError` naming the file, field and line.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from simsched import limits
from simsched.capacity.answer import over_answer
from simsched.capacity.mix import find_mix
from simsched.capacity.models import AutotuneModel, BatchCapacityModel, MixModel, TaskGraphModel, model_source
from simsched.capacity.objective import Objective, check_objective, parse_objective
from simsched.capacity.search import DEFAULT_DAYS, DEFAULT_MAX, DEFAULT_ON_DAYS, DayRunner, Progress, find_capacity
from simsched.errors import SimschedError, shown
from simsched.limits import not_a_number_check
from simsched.run.batch import is_batch
from simsched.scenario import parse_scenario
from simsched.scenario.autotuning import validate_section
from simsched.scenario.overrides import apply_overrides, parse_path
from simsched.yamlio import YamlDocument

SECTION_FIELDS = {"objective": str, "resource": str, "days": int, "on_days": float, "max": int, "schedulers": list,
                  "mix": dict, "cheapest_by": str}
"""The fields of a scenario's ``capacity:`` section and their types; ``mix`` and ``cheapest_by`` ask
:class:`MixQuestion` (the cheapest mix of processor types)."""


@dataclass(frozen=True)
class Choices:
    """What the command line chose; ``None`` leaves it to the scenario's ``capacity:`` section, then
    to the default.  ``over``: ``--over``'s field and values (:func:`parse_over`)."""

    objective: str | None = None
    resource: str | None = None
    days: int | None = None
    on_days: float | None = None
    seed: int | None = None
    high: int | None = None
    variants: Sequence[str] | None = None
    all_days: bool = False
    over: tuple[str, list[Any]] | None = None


def section(doc: Any) -> dict[str, Any]:
    """The top-level ``capacity:`` section, checked field by field (located errors)."""
    raw = doc.data.get("capacity") or {}
    if not isinstance(raw, dict):
        raise SimschedError("must be a mapping (objective: ..., days: ...)", field="capacity", file=doc.file,
                            line=doc.line_of(("capacity",)))
    for key, value in raw.items():
        where = {"field": f"capacity.{key}", "file": doc.file, "line": doc.line_of(("capacity", key))}
        kind = SECTION_FIELDS.get(key)
        if kind is None:
            raise SimschedError(f"unknown field; known: {', '.join(SECTION_FIELDS)}", **where)
        ok = isinstance(value, kind) or (kind is float and isinstance(value, int))
        if not ok or isinstance(value, bool):
            raise SimschedError(f"must be {kind.__name__}, got {shown(value)}", **where)
        if kind in (int, float):
            try:
                not_a_number_check(value, integer=kind is int)
            except ValueError as exc:
                raise SimschedError(str(exc), **where) from None
        if key in ("days", "max") and value < 1:
            raise SimschedError(f"must be >= 1, got {value}", **where)
        if key == "on_days" and not 0 < value <= 1:
            raise SimschedError(f"must be in (0, 1], got {value}", **where)
    return raw


def _objective_text(doc: Any, sec: dict[str, Any], objective: str | None) -> tuple[Any, str, int | None]:
    """``(text, field, line)`` of the objective: the command line's, else the section's (at its line);
    text ``None`` when neither gives one."""
    if objective is None and "objective" in sec:
        return sec["objective"], "capacity.objective", doc.line_of(("capacity", "objective"))
    return objective, "--objective", None


def _seed_days(doc: Any, sec: dict[str, Any], seed: int | None, days: int | None,
               on_days: float | None) -> tuple[int, int, float]:
    """The first day's seed (the scenario's, else 0), the number of days and the fraction to meet."""
    return (int(seed if seed is not None else doc.data.get("seed", 0) or 0),
            int(days if days is not None else sec.get("days", DEFAULT_DAYS)),
            float(on_days if on_days is not None else sec.get("on_days", DEFAULT_ON_DAYS)))


# ------------------------------------------------------------------ the fewest capacity
@dataclass(frozen=True)
class CapacityQuestion:
    """A scenario's capacity question, with the command line's choices applied."""

    model: Any
    objective: Objective
    seed: int
    days: int
    on_days: float
    high: int
    variants: list[str] | None
    all_days: bool = False

    def answer(self, progress: Progress | None = None, runner: DayRunner | None = None) -> dict[str, Any]:
        """:func:`~simsched.capacity.search.find_capacity` for this question, its days simulated by
        ``runner`` (default: here, in order)."""
        return find_capacity(self.model, self.objective, seed=self.seed, days=self.days, on_days=self.on_days,
                             variants=self.variants, high=self.high, progress=progress, all_days=self.all_days,
                             runner=runner)


def question_from(doc: Any, *, objective: str | None = None, resource: str | None = None, days: int | None = None,
                  on_days: float | None = None, seed: int | None = None, high: int | None = None,
                  variants: Sequence[str] | None = None, all_days: bool = False) -> CapacityQuestion:
    """The capacity question of a loaded scenario document: the command line's values win over the
    ``capacity:`` section's, which win over the defaults; an autotuning scenario's old
    ``autotuning.objective: {quantile: q, within_h: T}`` reads as ``jct_p{100q} <= T h``.  Errors are
    :class:`SimschedError` naming the file, field and line."""
    if not isinstance(doc.data, dict):
        raise SimschedError("the top level must be a mapping", file=doc.file)
    auto = doc.data.get("autotuning")
    autotuning_only = isinstance(auto, dict) and not doc.data.get("platform")
    if autotuning_only:  # the scenario's own errors first, then the question's
        validate_section(auto, line_of=doc.line_of, file=doc.file)
    else:
        parse_scenario(doc)
    sec = section(doc)
    text, field_, line = _objective_text(doc, sec, objective)
    if text is None and isinstance(auto, dict) and isinstance(auto.get("objective"), dict):
        o = auto["objective"]
        q = float(o.get("quantile", 0.95)) * 100
        text, field_, line = (f"jct_p{q:g} <= {o.get('within_h')}h".replace(".", "_", 1) if q != int(q)
                              else f"jct_p{int(q)} <= {o.get('within_h')}h",
                              "autotuning.objective", doc.line_of(("autotuning", "objective")))
    if text is None:
        raise SimschedError("no service objective: give --objective 'METRIC <= NUMBER' or capacity.objective "
                            "in the scenario", field="--objective", file=doc.file)
    obj = parse_objective(text, field=field_, file=doc.file, line=line)
    if autotuning_only:
        model: Any = AutotuneModel(auto, line_of=doc.line_of, quantiles=obj.jct_quantiles)
        default_high = model.cfg.capacity.max_servers
    else:
        res = resource if resource is not None else sec.get("resource")
        parsed = parse_scenario(doc)
        if is_batch(parsed):  # a cluster log: the machine's processors, under each batch policy
            model = BatchCapacityModel(parsed, source=model_source("batch", doc))
            default_high = max(DEFAULT_MAX, 4 * parsed.platform.n_processors)
        else:
            model = TaskGraphModel(doc, res, from_option=resource is not None)
            default_high = DEFAULT_MAX
    sec_vars = section_schedulers(doc, sec, model) if not variants else None  # before any day is simulated
    check_objective(obj, model.metrics, field=field_, file=doc.file, line=line)
    question = CapacityQuestion(
        model, obj, *_seed_days(doc, sec, seed, days, on_days),
        int(high if high is not None else sec.get("max", default_high)),
        list(variants) if variants else sec_vars, all_days)
    days_where = ({"field": "--days"} if days is not None else
                  {"field": "capacity.days", "file": doc.file, "line": doc.line_of(("capacity", "days"))})
    try:
        limits.check_amount(simulations_bound(question), "max_runs",
                            what="the simulations of this capacity search (schedulers x days x 2 log2(max) + 2)")
    except SimschedError as exc:
        raise exc.located(**days_where) from None
    return question


def section_schedulers(doc: Any, sec: dict[str, Any], model: Any) -> list[str] | None:
    """The ``capacity.schedulers`` of the section (None when it names none), each checked up front: one of
    the model's variants (the scenario's schedulers); an energy-aware scheduler (registry ``needs=("power",)``)
    on a platform without a power model is refused as ``run`` refuses it, not run as its twin.
    :class:`SimschedError` naming the file, line and entry (``capacity.schedulers[1]``).  O(entries)."""
    from simsched.schedulers.registry import unmet_needs

    names = sec.get("schedulers")
    if not names:
        return None
    base = getattr(model, "base", None)
    for i, name in enumerate(map(str, names)):
        if name in model.variants:
            continue
        where = {"file": doc.file, "line": doc.line_of(("capacity", "schedulers", i)),
                 "field": f"capacity.schedulers[{i}]"}
        why = unmet_needs(name, power=getattr(base, "energy", None) is not None) if base is not None else None
        if why is not None:
            raise SimschedError(f"{why}: add platform.power or choose another scheduler", **where)
        raise SimschedError(f"{shown(name, 40)} is not one of the scenario's schedulers; choose from "
                            f"{', '.join(model.variants)}", **where)
    return [str(v) for v in names]


def simulations_bound(question: CapacityQuestion) -> float:
    """An upper bound on the simulated days of :meth:`CapacityQuestion.answer`: per variant, doubling
    then bisection evaluate at most ``2 ceil(log2 max) + 2`` capacities of ``days`` days each.  O(1)."""
    variants = len(question.variants) if question.variants else len(question.model.variants)
    steps = 2 * math.ceil(math.log2(max(question.high, 2))) + 2
    return float(variants) * float(question.days) * steps


# ------------------------------------------------------------------ the cheapest mix
@dataclass(frozen=True)
class MixQuestion:
    """A scenario's ``capacity.mix`` question with the command line's choices applied."""

    model: MixModel
    objective: Objective
    variant: str
    seed: int
    days: int
    on_days: float
    cheapest_by: str | None

    def answer(self, progress: Progress | None = None, runner: DayRunner | None = None) -> dict[str, Any]:
        """:func:`~simsched.capacity.mix.find_mix` for this question, its days simulated by ``runner``."""
        return find_mix(self.model, self.objective, variant=self.variant, seed=self.seed, days=self.days,
                        on_days=self.on_days, cheapest_by=self.cheapest_by, progress=progress, runner=runner)


def mix_question(doc: Any, *, objective: str | None = None, resource: str | None = None, days: int | None = None,
                 on_days: float | None = None, seed: int | None = None,
                 variants: Sequence[str] | None = None) -> MixQuestion | None:
    """The mix question of a loaded scenario document, or None when it has no ``capacity.mix`` or the
    command line names one ``--resource`` to size (then it is :func:`question_from`'s).  The command
    line's values win over the section's; the scheduler is the first chosen (default: the scenario's
    first).  Errors name the file, field and line."""
    if not isinstance(doc.data, dict) or resource is not None:
        return None
    sec = section(doc)
    if "mix" not in sec:
        return None
    text, field, line = _objective_text(doc, sec, objective)
    if text is None:
        raise SimschedError("no service objective: give --objective 'METRIC <= NUMBER' or capacity.objective",
                            field="--objective", file=doc.file)
    obj = parse_objective(text, field=field, file=doc.file, line=line)
    model = MixModel(doc, sec["mix"])
    chosen = list(variants) if variants else section_schedulers(doc, sec, model) or model.variants
    return MixQuestion(model, obj, chosen[0], *_seed_days(doc, sec, seed, days, on_days), sec.get("cheapest_by"))


# ------------------------------------------------------------------ one search per value of a field
def parse_over(text: str) -> tuple[str, list[Any]]:
    """``"workload.stream.arrivals.poisson=0.01,0.02"`` -> the field and its values, each read as
    YAML (numbers stay numbers).  :class:`SimschedError` (field ``--over``) for text without ``=``,
    a malformed path, no value, an empty value or a repeated one.  O(len(text))."""
    if not isinstance(text, str) or "=" not in text:
        raise SimschedError(f"expected FIELD=V1,V2,... (e.g. workload.stream.arrivals.poisson=0.01,0.02), "
                            f"got {text!r}", field="--over")
    name, _, raw = text.partition("=")
    name = name.strip()
    try:
        parse_path(name)
    except SimschedError as exc:
        raise SimschedError(exc.message, field="--over") from None
    parts = [p.strip() for p in raw.split(",")]
    if not raw.strip() or any(not p for p in parts):
        raise SimschedError(f"{name}: give one or more comma-separated values, none empty (got {raw!r})",
                            field="--over")
    values = []
    for p in parts:
        try:
            values.append(yaml.safe_load(p))
        except yaml.YAMLError:
            values.append(p)
    if len({repr(v) for v in values}) < len(values):
        raise SimschedError(f"{name}: a value is listed twice ({raw})", field="--over")
    return name, values


@dataclass(frozen=True)
class OverQuestion:
    """One :class:`CapacityQuestion` per value of ``field`` ("how many GPUs for each arrival rate?"),
    all over the same days (common random numbers).  A full grid of capacity x field with intervals
    per cell is a study (docs/capacity.md); this gives the fewest capacity per value."""

    field: str
    values: list[Any]
    questions: list[CapacityQuestion]

    def answer(self, progress: Progress | None = None, runner: DayRunner | None = None) -> dict[str, Any]:
        """The ``"capacity-over"`` answer (:func:`~simsched.capacity.answer.over_answer`): each value's
        search in turn, its progress lines prefixed with ``FIELD=VALUE``, its days simulated by
        ``runner``.  O(values x variants x days x log answer) simulations."""
        cells = []
        for value, q in zip(self.values, self.questions):
            def tagged(text: str, sims: int, done: bool, value: Any = value) -> None:
                if progress is not None:
                    progress(f"{self.field}={value}: {text}", sims, done)
            cells.append({"value": value, "result": q.answer(tagged, runner)})
        return over_answer(self.field, self.values, cells)


def over_question(doc: Any, field: str, values: Sequence[Any],
                  question: Callable[[Any], CapacityQuestion]) -> OverQuestion:
    """The question of scenario ``doc`` (a :class:`~simsched.yamlio.YamlDocument`) for each value of
    ``field``, ``question(doc)`` building it with the command line's choices.  Every value is
    validated before the first search runs, so a bad value fails at once (naming ``--over``, the
    value and the field it broke), and the searches together must stay within ``max_runs``."""
    limits.check_amount(len(values), "max_grid_points", what="the values of --over", where="--over")
    questions = []
    for value in values:
        try:
            data = apply_overrides(doc.data, {field: value})
            questions.append(question(YamlDocument(data, doc.lines, doc.file)))
        except SimschedError as exc:
            where = f"{exc.field}: " if exc.field and exc.field != field else ""
            raise SimschedError(f"{field}={shown(value)}: {where}{exc.message}", field="--over",
                                file=doc.file) from None
        if len(questions) == 1:  # the first value's search, times the values: refused before the others are built
            limits.check_amount(simulations_bound(questions[0]) * len(values), "max_runs",
                                what="the simulations of the --over searches (values x schedulers x days x "
                                     "2 log2(max) + 2)", where="--over")
    return OverQuestion(field, list(values), questions)


def question_of(doc: Any, choices: Choices) -> CapacityQuestion | MixQuestion | OverQuestion:
    """The question ``doc`` asks with the command line's ``choices``: per value of ``--over``, the
    cheapest mix (a ``capacity.mix`` section and no ``--resource``), or the fewest capacity."""
    def ask(d: Any) -> CapacityQuestion:
        return question_from(d, objective=choices.objective, resource=choices.resource, days=choices.days,
                             on_days=choices.on_days, seed=choices.seed, high=choices.high,
                             variants=choices.variants or None, all_days=choices.all_days)

    if choices.over is not None:
        return over_question(doc, *choices.over, ask)
    mix = mix_question(doc, objective=choices.objective, resource=choices.resource, days=choices.days,
                       on_days=choices.on_days, seed=choices.seed, variants=choices.variants or None)
    return ask(doc) if mix is None else mix
