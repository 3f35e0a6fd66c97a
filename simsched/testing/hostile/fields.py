"""The cases of the scenario and study fields (one per hostile value of the field's kind, or per hostile
file for a path) and of whole documents (aliases, nesting, binary bytes, size).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simsched.testing.hostile.documents import (
    BASES,
    Case,
    autotuning_doc,
    base_files,
    common_files,
    dump,
    get_at,
    graph_doc,
    set_at,
    stream_doc,
)
from simsched.testing.hostile.schema_walk import FieldTarget
from simsched.testing.hostile.values import CSV_CASES, PATH_CASES, VALUES, expected_refusal, kind_of


def field_cases(target: FieldTarget) -> list[Case]:
    """The hostile cases of one schema field (its kind's values; a path or CSV kind's files)."""
    kind = kind_of(target.annotation, target.key)
    needles = (target.dotted.split(".")[0].split("[")[0], "input.file")
    cases = []
    doc_file = "study.yaml" if target.base == "study" else "s.yaml"
    if kind.startswith("csv") or kind == "path":
        contents = CSV_CASES.get(kind, {})
        for what in [*PATH_CASES, *contents]:
            case = Case(f"{target.base}:{target.dotted}", what, list(BASES[target.base][1]),
                        _maker(target, "input.file"), expect="either", needles=needles)
            _path_case(case, "input.file", what, contents)
            if what in PATH_CASES:
                case.expect = "refuse"
            cases.append(case)
        return cases
    for what, value in VALUES[kind]:
        cases.append(Case(f"{target.base}:{target.dotted}", what, list(BASES[target.base][1]), _maker(target, value),
                          expect="refuse" if expected_refusal(target, value) else "either",
                          needles=(doc_file, *needles)))
    return cases


REPLACES: dict[str, tuple[str, ...]] = {"BatchTraceSection.gpu_trace": ("swf",), "BatchTraceSection.sacct": ("swf",)}
"""Fields that stand instead of others of the base (exactly one of them is allowed): a case of the field
drops those, or every case would be refused for the pair, not for its own value, and the field's
contents would never be read (a GPU trace's were not, in the cluster base that names an SWF log)."""

NEEDS_POWER = ("carbon", "prices")
"""Platform sections that need a power model beside them: a case of one of their fields gets a valid
``platform.power`` (the graph base has none, so every carbon case was refused for that, and the carbon
trace's contents were never read)."""


def _maker(target: FieldTarget, value: Any) -> Callable[[], dict[str, bytes]]:
    def make() -> dict[str, bytes]:
        doc = BASES[target.base][0]()
        set_at(doc, target.path, value)
        parent = get_at(doc, target.path[:-1])
        for other in REPLACES.get(target.key, ()):
            if isinstance(parent, dict):
                parent.pop(other, None)
        platform = doc.get("platform") if isinstance(doc, dict) else None
        if (isinstance(platform, dict) and "power" not in platform and target.path[:1] == ("platform",)
                and any(p in NEEDS_POWER for p in target.path[1:2])):
            platform["power"] = {"types": {"cpu": {"idle": 10.0, "busy": 100.0}, "gpu": {"idle": 30.0, "busy": 250.0}}}
        return base_files(target.base, doc)[0]
    return make


def _path_case(case: Case, name: str, what: str, contents: dict[str, bytes]) -> None:
    """Make ``name`` in the case directory the hostile path ``what``."""
    if what == "missing":
        return
    if what in contents:
        case.extra[name] = contents[what]
    elif what in ("directory", "fifo", "symlink loop"):
        case.special[name] = what
    elif what == "/dev/zero":
        case.special[name] = "link:/dev/zero"
    elif what == "300-byte name":
        case.special[name] = "link:" + "n" * 300
    elif what == "binary":
        case.extra[name] = bytes(range(256)) * 4
    elif what == "non-UTF-8":
        case.extra[name] = b"\xff\xfe\x00bad"


def document_cases() -> list[Case]:
    """Hostile scenario documents as a whole: anchors and aliases (a billion laughs), nesting deeper
    than ``max_depth``, a binary file, non-UTF-8 bytes, duplicated keys, a file over ``max_yaml_mb``."""
    files = common_files()
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(8))
    docs = {
        "anchors and aliases (billion laughs)": laughs.encode(),
        "nested 10,000 deep": ("x: " + "[" * 10_000 + "]" * 10_000 + "\n").encode(),
        "binary": bytes(range(256)) * 16,
        "non-UTF-8": dump(graph_doc()) + b"\n# \xff\xfe\n",
        "duplicated keys": dump(graph_doc()) + b"seed: 2\n",
        "5 MB": dump(graph_doc()) + b"#" + b"x" * (5 * 2**20) + b"\n",
        "empty": b"",
    }
    out = []
    for what, data in docs.items():
        for command in ("run", "validate"):
            out.append(Case(f"document:{command}", what, [command, "s.yaml"], lambda d=data: {**files, "s.yaml": d},
                            expect="refuse", needles=("s.yaml",)))
    return out


def mismatch_cases() -> list[Case]:
    """Valid sections that do not fit together, refused before any run (exit 2, one line located at the
    place named, nothing written): gang tasks (``procs`` > 1) for a scheduler that places every task on
    one processor, in a stream as in a task graph; failures or stragglers in an autotuning scenario,
    whose engine models none (issue #43: nothing changes silently)."""
    stream = stream_doc()
    stream["workload"]["stream"]["jobs"] = [{"generator": "random", "tasks": [3, 6], "weight": 1},
                                            {"generator": "random", "tasks": 2, "procs": [2, 2], "weight": 5}]
    graph = graph_doc()
    graph["workload"]["tasks"][1]["procs"] = 2
    graph["schedulers"] = ["cpop"]
    docs = {"gang tasks in a stream for mct": (stream, ("s.yaml", "schedulers[0]", "workload.stream.jobs[1].procs")),
            "gang tasks in a graph for cpop": (graph, ("s.yaml", "schedulers[0]", "workload")),
            "failures in an autotuning scenario": ({**autotuning_doc(), "failures": {"mtbf": 10.0, "mttr": 1.0}},
                                                   ("s.yaml", "failures")),
            "stragglers in an autotuning scenario": ({**autotuning_doc(), "stragglers": {"rate": 0.1, "duration": 1.0,
                                                                                       "slowdown": 2.0}},
                                                     ("s.yaml", "stragglers"))}
    files = common_files()
    return [Case("mismatch:run", what, ["run", "s.yaml", "--json", "r.json"],
                 lambda d=doc: {**files, "s.yaml": dump(d)}, expect="refuse", needles=needles)
            for what, (doc, needles) in docs.items()]
