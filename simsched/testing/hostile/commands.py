"""The command table: every option and argument of every command of the Typer app, a valid base
invocation per command, and the hostile cases of one option put onto it.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simsched.testing.hostile.documents import Case, capacity_doc, common_files, dump, graph_doc, stream_doc, study_doc
from simsched.testing.hostile.sandbox import materialise, run_child


@dataclass(frozen=True)
class OptionTarget:
    """One option or argument of one command."""

    command: tuple[str, ...]
    name: str
    opts: tuple[str, ...]
    annotation: Any
    required: bool
    argument: bool
    minimum: Any = None
    maximum: Any = None

    @property
    def key(self) -> str:
        return " ".join(self.command) + " " + (self.opts[0] if self.opts and not self.argument else self.name)


def walk_commands(app: Any) -> list[OptionTarget]:
    """Every parameter of every (sub)command of the Typer ``app``.  O(parameters)."""
    import typer

    out: list[OptionTarget] = []

    def walk(cmd: Any, path: tuple[str, ...]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, (*path, name))
            return
        for p in cmd.params:
            ann = getattr(getattr(p, "type_descriptor", None), "annotation", str)
            argument = type(p).__name__.endswith("Argument")
            out.append(OptionTarget(path, p.name or "", tuple(p.opts or ()), ann, bool(p.required), argument,
                                    getattr(p, "min", None), getattr(p, "max", None)))

    walk(typer.main.get_command(app), ())
    return out


COMMAND_BASES: dict[str, list[str]] = {
    "run": ["run", "s.yaml"], "validate": ["validate", "s.yaml"], "capacity": ["capacity", "c.yaml"],
    "sweep": ["sweep", "study.yaml", "--output", "out.csv"], "summarize": ["summarize", "results.csv"],
    "plot": ["plot", "results.csv", "--x", "seed", "--y", "makespan", "--output", "p.png"],
    "report": ["report", "results.csv", "--output", "r.html"],
    "bench": ["bench", "streams", "--size", "2x2"], "check": ["check", "heft", "--examples", "2"],
    "adversary": ["adversary", "heft", "cpop", "--tasks", "4", "--iterations", "2", "--out", "adv"],
    "baseline record": ["baseline", "record", "s.yaml", "--output", "b.json"],
    "baseline compare": ["baseline", "compare", "b.json"],
    "workload info": ["workload", "info", "w.json"], "workload convert": ["workload", "convert", "w.json", "w2.json"],
    "train deepsched": ["train", "deepsched", "s.yaml"], "train rl": ["train", "rl", "graph.s.yaml"],
    "explain greedy-gap": ["explain", "greedy-gap", "--tasks", "4", "--processors", "2", "--tries", "2"],
    "docs generate": ["docs", "generate", "--check"],
    "generalise": ["generalise", "s.yaml", "-s", "mct", "--cell", "fresh days", "--days", "2"],
    "explain gantt": ["explain", "gantt", "graph.s.yaml", "--out", "g.html"],
    "explain graph": ["explain", "graph", "graph.s.yaml", "--out", "g.png"],
    "calibrate": ["calibrate", "wf.json", "-o", "p.yaml", "--budget", "1"],
    "fidelity": ["fidelity", "wf.json"],
}
"""A valid-looking invocation per command, onto which one hostile option is put (replacing the option
when the base has it).  ``train rl`` on a stream scenario (``s.yaml``) trains for its budget, so its
base is the graph scenario, read as a training config: every option is checked before it is refused.
A command not named here gets its required arguments filled by their kind
(a path: the scenario ``s.yaml``; a string: ``x``) and its required options likewise (a path: a fresh
output ``out.json``; anything else: ``x``)."""

UNCHECKED_BASES = ("bench", "train", "docs", "check", "adversary", "baseline")
"""Commands whose base invocation is not required to run: benchmarks, trainings and searches take
minutes, ``baseline compare`` needs a recorded baseline; their options are attacked all the same."""


def _command_base(t: OptionTarget, targets: Sequence[OptionTarget]) -> list[str]:
    key = " ".join(t.command)
    if key in COMMAND_BASES:
        return list(COMMAND_BASES[key])
    if t.command and t.command[0] == "explain":
        return ["explain", *t.command[1:], "graph.s.yaml"]
    argv = list(t.command)
    for other in targets:
        if other.command == t.command and other.argument and other.required:
            argv.append("s.yaml" if "Path" in str(other.annotation) else "x")
    for other in targets:  # a required option the attacked one is not: filled so the attack is what fails
        if other.command == t.command and not other.argument and other.required and other.name != t.name:
            argv += [other.opts[0], "out.json" if "Path" in str(other.annotation) else "x"]
    return argv


OPTION_VALUES: dict[str, list[tuple[str, str, bool]]] = {
    "int": [("zero", "0", False), ("minus one", "-1", False), ("2**63", str(2**63), True),
            ("10**9", "1000000000", False), ("1e9", "1e9", True), ("superscript", "²", True), ("NaN", "nan", True),
            ("empty", "", True), ("string", "x", True)],
    "float": [("zero", "0", False), ("minus one", "-1", False), ("NaN", "nan", True), ("+inf", "inf", True),
              ("-inf", "-inf", True), ("1e300", "1e300", True), ("string", "x", True), ("empty", "", True),
              ("superscript", "²", True)],
    "str": [("empty", "", False), ("1 MB", "x" * 1_000_000, False), ("control characters", "\x07\x1b[31m", False),
            ("superscript digits", "²x³", False), ("non-UTF-8", "\udcff\udcfe", False),
            ("huge size", "1000000000x10", False), ("300 bytes", "a" * 300, False)],
    "path": [("missing", "nope/missing.yaml", True), ("directory", "adir", True), ("fifo", "afifo", True),
             ("/dev/zero", "/dev/zero", True), ("300-byte name", "n" * 300, True), ("symlink loop", "loop", True),
             ("binary", "binary.bin", True), ("the scenario itself", "s.yaml", True),
             ("a file the scenario reads indirectly", "down.csv", True)],
    "bool": [("given a value", "=x", True)],
}
"""Hostile option values per kind: ``(what, text, refuse)``; ``refuse``: only exit 2 is right."""

OUTPUT_HINTS = ("output", "out", "json", "gantt", "plot", "html", "csv", "trace", "save", "target", "report")


def option_kind(t: OptionTarget) -> str:
    """The kind of an option from its annotation: ``bool``, ``path``, ``int``, ``float`` or ``str``."""
    ann = t.annotation
    text = str(ann)
    if ann is bool:
        return "bool"
    if "Path" in text:
        return "path"
    if ann is int or text in ("int | None", "typing.Optional[int]"):
        return "int"
    if ann is float or text in ("float | None", "typing.Optional[float]"):
        return "float"
    return "str"


def option_cases(t: OptionTarget, targets: Sequence[OptionTarget]) -> list[Case]:
    """The hostile cases of one option or argument on its command's base invocation."""
    kind = option_kind(t)
    base = _command_base(t, targets)
    cases = []
    for what, text, refuse in OPTION_VALUES[kind]:
        argv = list(base)
        if t.argument:
            args = [a for a in argv[len(t.command):] if not a.startswith("-")]
            position = [o for o in targets if o.command == t.command and o.argument].index(t)
            if position < len(args):
                argv[argv.index(args[position], len(t.command))] = text
            else:
                argv.append(text)
        elif kind == "bool":
            argv.append(t.opts[0] + text)
        else:
            opt = t.opts[0]
            if opt in argv:
                i = argv.index(opt)
                del argv[i:i + 2]
            argv += [opt, text]
        case = Case(f"option:{t.key}", what, argv, option_files, expect="refuse" if refuse else "either",
                    needles=(*t.opts, t.name, t.name.replace("_", "-"), repr(text[:20])[1:-1] or "''",
                             *(a + ":" for a in base if a in OPTION_FILES)))
        if kind == "path":
            is_output = any(h in t.name.lower() for h in OUTPUT_HINTS) and not t.argument
            inputs = [a for a in base if a in OPTION_FILES]
            if what == "a file the scenario reads indirectly":
                if not is_output or "s.yaml" not in inputs:
                    continue  # only the stream scenario s.yaml reads down.csv
            if what == "the scenario itself":
                if not is_output or not inputs:
                    continue
                case.argv[-1] = inputs[0]  # the command's own input file, as its output
            if is_output and what in ("missing", "directory", "binary"):
                case.expect = "either"  # an output directory may be created or reused; a file replaced
                case.outputs = (text,)
        cases.append(case)
    return cases


OPTION_FILES = ("s.yaml", "c.yaml", "study.yaml", "graph.s.yaml", "results.csv", "w.json", "b.json", "wf.json")
"""The input files of the option bases: an error located in one of them is located."""

_PREPARED: dict[str, bytes] = {}
"""Files only a run can make (a sweep's results), made once by :func:`prepare` before the cases run."""


def prepare(entry: Callable[[list[str]], Any]) -> None:
    """Make the files the option bases read that only a command can write: ``results.csv`` from a
    sweep of the study base (in a forked child, like every case)."""
    if "results.csv" in _PREPARED:
        return
    with tempfile.TemporaryDirectory(prefix="simsched-hostile-prepare-") as tmp:
        root = Path(tmp) / "case"
        root.mkdir()
        out = Path(tmp) / "out"
        out.mkdir()
        materialise(Case("prepare", "results", [], lambda: {**common_files(), "s.yaml": dump(graph_doc()),
                                                            "study.yaml": dump(study_doc())}), root)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            run_child(entry, ["sweep", "study.yaml", "--output", "results.csv"], root, out)
        os.waitpid(pid, 0)
        if (root / "results.csv").is_file():
            _PREPARED["results.csv"] = (root / "results.csv").read_bytes()


def option_files() -> dict[str, bytes]:
    """The files of an option case's directory: every input file the command bases name."""
    scenario = stream_doc()
    files = common_files()
    files["s.yaml"] = dump(scenario)
    files["c.yaml"] = dump(capacity_doc())
    files["study.yaml"] = dump({**study_doc(), "scenario": "graph.s.yaml"})
    files["binary.bin"] = bytes(range(256)) * 4
    files["w.json"] = b'{"tasks": [{"name": "a", "work": 1}], "edges": []}'
    files["results.csv"] = _PREPARED.get("results.csv", b"task_id,point,point_id,scheduler,seed,makespan,error\n")
    files["b.json"] = b"{}"
    files["wf.json"] = json.dumps(RECORDED_RUN).encode()
    return files


RECORDED_RUN = {
    "name": "chain", "schemaVersion": "1.5", "runtimeSystem": {"name": "Pegasus", "version": "5.0"},
    "workflow": {
        "specification": {"tasks": [
            {"name": "a", "id": "a_ID01", "parents": [], "children": ["b_ID02"], "inputFiles": [],
             "outputFiles": ["x"]},
            {"name": "b", "id": "b_ID02", "parents": ["a_ID01"], "children": [], "inputFiles": ["x"],
             "outputFiles": []}], "files": [{"id": "x", "sizeInBytes": 1000}]},
        "execution": {"makespanInSeconds": 30.0, "machines": [{"nodeName": "n1", "cpu": {"coreCount": 2}}],
                      "tasks": [{"id": "a_ID01", "runtimeInSeconds": 5.0, "machines": ["n1"]},
                                {"id": "b_ID02", "runtimeInSeconds": 7.0, "machines": ["n1"]}]}}}
"""A recorded run (WfFormat 1.5, two tasks on one machine): the corpus of ``calibrate`` and ``fidelity``."""
