"""The workload section's forms: inline tasks and edges, ``generator: NAME`` with its
parameters, or ``FORM: path`` for every importer.  Each becomes a :class:`WorkloadSpec` that
builds the task graph on demand."""


from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from simsched.errors import cut
from simsched.fileio import not_a_file, note_read
from simsched.scenario.locate import Loc, Problems, _accepts, _closest, _short, check_params
from simsched.scenario.schema import InlineWorkload
from simsched.workloads.taskgraph import TaskGraph


# --------------------------------------------------------------------------- results of loading
@dataclass(frozen=True)
class WorkloadSpec:
    """A validated workload section: its ``form`` (``inline``, ``generator`` or an importer name),
    the checked options, and how to build the graph."""

    form: str
    options: Mapping[str, Any]
    build: Callable[[int, np.random.Generator], TaskGraph] = field(repr=False)
    loc: Loc = ("workload",)

    @property
    def written_inline(self) -> bool:
        """True for tasks and edges written in the scenario itself (not the ``inline: FILE`` form)."""
        return self.form == "inline" and "tasks" in self.options

    def describe(self) -> str:
        if self.written_inline:
            return f"inline graph of {len(self.options['tasks'])} tasks"
        if self.form == "generator":
            return f"generator {self.options['generator']!r}"
        if self.form == "stream":
            return self.options["stream"].describe()
        if self.form == "batch":
            return self.options["batch"].describe()
        return f"{self.form} file {self.options.get('path')}"


# --------------------------------------------------------------------------- workload forms
def _importers() -> Mapping[str, Callable[..., TaskGraph]]:
    """``simsched.workloads.importers.IMPORTERS`` if that module is available, else nothing."""
    try:
        from simsched.workloads.importers import IMPORTERS
    except ImportError:
        return {}
    return IMPORTERS


def _parse_workload(raw: Mapping[str, Any], m: int, base: Path, problems: Problems) -> WorkloadSpec | None:
    """Choose the workload form from its keys and validate it (see the module docstring)."""
    top: Loc = ("workload",)
    if "generator" in raw:
        from simsched.workloads.generators import GENERATORS

        return _parse_generator(raw, m, GENERATORS, problems)
    if isinstance(raw.get("tasks"), list) or "edges" in raw:
        return _parse_inline(raw, m, problems)
    importers = _importers()
    forms = [k for k in raw if k in importers]
    if len(forms) == 1:
        return _parse_import(forms[0], raw, importers[forms[0]], base, problems)
    if len(forms) > 1:
        problems.add(top, f"give one workload form, not several ({', '.join(forms)})")
        return None
    from simsched.workloads.generators import GENERATORS

    file_forms = ", ".join(f"{k}: PATH" for k in importers) or "none installed"
    problems.add(top, f"the workload needs inline 'tasks' (and 'edges'), 'generator: NAME' "
                      f"(one of: {', '.join(GENERATORS)}), or a file form ({file_forms})")
    return None


def _parse_generator(raw: Mapping[str, Any], m: int, generators: Mapping[str, Callable[..., TaskGraph]],
                     problems: Problems) -> WorkloadSpec | None:
    name = raw["generator"]
    if not isinstance(name, str) or name not in generators:
        problems.add(("workload", "generator"), f"unknown generator {name!r}{_closest(str(name), list(generators))}; "
                                                f"known: {', '.join(generators)}")
        return None
    func = generators[name]
    given = {k: v for k, v in raw.items() if k != "generator"}
    params, found = check_params(func, given, what=f"generator {name!r}")
    for loc, msg in found:
        problems.add(("workload", *loc), msg)
    if found:
        return None
    if "processors" not in given and _accepts(func, "processors"):
        params["processors"] = m

    def build(_m: int, rng: np.random.Generator) -> TaskGraph:
        return func(**params, rng=rng)

    return WorkloadSpec("generator", {"generator": name, **params}, build, ("workload",))


def _parse_inline(raw: Mapping[str, Any], m: int, problems: Problems) -> WorkloadSpec | None:
    try:
        spec = InlineWorkload.model_validate(raw)
    except ValidationError as exc:
        problems.add_validation(("workload",), exc, InlineWorkload)
        return None
    ok = True
    for i, task in enumerate(spec.tasks):
        if task.cost is not None and len(task.cost) != m:
            problems.add(("workload", "tasks", i, "cost"),
                         f"task {task.name!r} gives {len(task.cost)} costs but the platform has {m} processors; "
                         f"give one cost per processor, in the platform's order")
            ok = False
    if not ok:
        return None
    tasks = []
    for t in spec.tasks:
        rec = t.model_dump(exclude_none=True)
        if t.cost is not None:
            rec["cost"] = [float("inf") if c is None else c for c in t.cost]
        tasks.append(rec)
    edges = [(e.from_, e.to, e.data) for e in spec.edges]

    def build(_m: int, _rng: np.random.Generator) -> TaskGraph:
        return TaskGraph.from_named(tasks, edges)

    return WorkloadSpec("inline", {"tasks": tasks, "edges": edges}, build, ("workload", "tasks"))


def _parse_import(form: str, raw: Mapping[str, Any], func: Callable[..., TaskGraph], base: Path,
                  problems: Problems) -> WorkloadSpec | None:
    value = raw[form]
    params = list(inspect.signature(func, eval_str=True).parameters.values())
    first = params[0].name if params else None
    # an importer whose first parameter is a ``str`` takes a name (e.g. ``model: resnet18``);
    # any other takes a file, relative to the scenario
    takes_name = bool(params) and params[0].annotation is str
    if not isinstance(value, str) or not value:
        wanted = "a name" if takes_name else "a file path"
        problems.add(("workload", form), f"{form} needs {wanted} (got {_short(value)})")
        return None
    if takes_name:
        source: Any = value
    else:
        source = Path(value) if Path(value).is_absolute() else base / value
        if (why := not_a_file(source)) is not None:  # never opened: a FIFO or a device cannot block
            problems.add(("workload", form), f"{cut(str(source), 200)}: {why}")
            return None
        note_read(source)  # read when the workload is built; an input of the command from now on
    given = {k: v for k, v in raw.items() if k != form}
    options, found = check_params(func, given, what=f"importer {form!r}", skip=("rng", first))
    for loc, msg in found:
        problems.add(("workload", *loc), msg)
    if found:
        return None

    def build(_m: int, _rng: np.random.Generator) -> TaskGraph:
        return func(source, **options)

    return WorkloadSpec(form, {"name" if takes_name else "path": str(source), **options}, build, ("workload", form))


