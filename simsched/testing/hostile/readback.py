"""The files simsched reads back, attacked by their contents (issue 40): one :class:`ReadBack` per kind.

A kind names the file read back, the command that reads it, the files beside it, how to make a valid
one, and its attacks (:mod:`~.contents`: tampered, truncated, deep, huge, foreign, wrong kind).  Each
kind's valid file must run as written (its ``base`` case, when ``runs``), and each attack must end as its
:class:`~.contents.Attack` says: a located exit 2 naming the file read back (or, for ``refuse-or-warn``,
exit 0 with a ``warning:`` line).  :func:`readback_cases` makes every case; the campaign's summary
counts the kinds attacked.  A new file format is covered by adding its kind to :data:`KINDS`.

Kinds: checkpoints (``rl``, ``rl`` resumed by ``train rl --resume``, ``rl-world``, ``deepsched``,
``rl-gate`` in ``run`` and in ``generalise``), traces (SWF, GPU CSV, arrival and down-interval CSV),
a capacity search's results store (``capacity --results --resume``), results documents of ``run
--json`` (a task graph's and a cluster log's), a sweep's results CSV and a calibrated profile
(``fidelity --profile``).  The valid stores, documents
and CSVs are written once by the commands themselves (:func:`prepare_readbacks`); checkpoints are
the ones shipped with simsched.  Cost: one fork per case, as every case of the campaign.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simsched.testing.hostile.commands import RECORDED_RUN
from simsched.testing.hostile.contents import (
    Attack,
    json_attacks,
    table_attacks,
    torch_attacks,
    trace_attacks,
)
from simsched.testing.hostile.documents import (
    ARRIVALS_CSV,
    DOWN_CSV,
    JOBS_SWF,
    Case,
    capacity_doc,
    cluster_doc,
    common_files,
    dump,
    graph_doc,
    stream_doc,
    study_doc,
    traced_doc,
)
from simsched.testing.hostile.sandbox import materialise, run_child

PACKAGE = Path(__file__).resolve().parents[2]
"""The simsched package folder: shipped checkpoints are read as data files, not imported."""

SHIPPED = {"rl": PACKAGE / "learned" / "rl" / "data" / "rl.pt",
           "rl-world": PACKAGE / "learned" / "rl" / "data" / "rl_world.pt",
           "deepsched": PACKAGE / "learned" / "deepsched" / "checkpoints" / "deepsched-general.pt",
           "rl-gate": PACKAGE / "learned" / "rl" / "data" / "rl_gate.json"}

GPU_CSV = "job,submit,gpus,duration,user,requested\nj1,0,2,30,u1,60\nj2,5,4,20,u2,\nj3,9,1,10,u1,15\n"


@dataclass(frozen=True)
class ReadBack:
    """One kind of file read back: ``file`` (its path in the case directory) read by ``argv``, beside the
    files ``around()`` makes; ``valid()`` its valid bytes; ``attacks(valid)`` its hostile versions;
    ``runs``: the valid file must run (exit 0) as written; ``outputs``: what the command may rewrite
    when it runs; ``needles``: words one of which the refusal must hold (default: the file's name)."""

    kind: str
    file: str
    argv: tuple[str, ...]
    around: Callable[[], dict[str, bytes]]
    valid: Callable[[], bytes]
    attacks: Callable[[bytes], dict[str, Attack]]
    runs: bool = True
    outputs: tuple[str, ...] = ()
    needles: tuple[str, ...] = field(default=())
    named_in: str = ""
    """The scenario file that names the file read back (a trace, a checkpoint in a scheduler entry), whose
    ``FILE:LINE: field:`` the refusal must begin with (a chain, :func:`~.campaign.weak`); empty for a file
    named on the command line."""
    setup: tuple[str, ...] = ()
    """A command that writes the valid file in the case's own folder first (a results store's identity
    names the scenario's absolute path, so a store written elsewhere belongs to another search); the
    attack is then made from what it wrote.  ``valid()`` still gives a file of the same shape, for the
    attacks' names."""


# --------------------------------------------------------------------------- the files around
def _with(doc: dict[str, Any], scheduler: Any = None, stream: dict[str, Any] | None = None) -> Callable[[], dict]:
    def make() -> dict[str, bytes]:
        d = copy.deepcopy(doc)
        if scheduler is not None:
            d["schedulers"] = [scheduler]
        if stream is not None:
            d["workload"] = {"stream": stream}
        return {**common_files(), "s.yaml": dump(d)}
    return make


def _shipped(kind: str) -> Callable[[], bytes]:
    return lambda: SHIPPED[kind].read_bytes()


def _others(kind: str) -> dict[str, Callable[[], bytes]]:
    """The valid checkpoints of every other kind, each a wrong kind for ``kind``."""
    return {k: _shipped(k) for k in SHIPPED if k != kind}


def _checkpoint(kind: str, width: tuple[str, ...], layers: tuple[str, ...]) -> Callable[[bytes], dict]:
    weights = "model" if kind == "deepsched" else "state"
    return lambda valid: torch_attacks(valid, weights=weights, width=("config", *width), layers=("config", *layers),
                                       others=_others(kind))


def _gate_attacks(valid: bytes) -> dict[str, Attack]:
    return json_attacks(valid, fields={"huge: a 400-digit weight": ("weights", [10**400] * 3),
                                       "huge: 10^6 weights": ("weights", [0.0] * 10**6),
                                       "tampered: weights as text": ("weights", "fast"),
                                       "foreign: another kind's JSON": ("kind", "rl")},
                        others=_others("rl-gate"))


def _first_number(valid: str, row: int, column: int, sep: str = ",") -> Callable[[str], bytes]:
    """The valid text with cell ``column`` of line ``row`` (0-based) replaced."""
    def put(text: str) -> bytes:
        lines = valid.split("\n")
        cells = lines[row].split(sep)
        cells[column] = text
        lines[row] = sep.join(cells)
        return "\n".join(lines).encode()
    return put


def _prepared(name: str) -> Callable[[], bytes]:
    return lambda: _PREPARED[name]


def _store_around() -> dict[str, bytes]:
    return {**common_files(), "c.yaml": dump(capacity_doc())}


def _document_attacks(valid: bytes) -> dict[str, Attack]:
    return json_attacks(valid, fields={"tampered: per_user as text": ("per_user", "everyone"),
                                       "tampered: processors 0": ("processors", 0),
                                       "tampered: a metric as text": ("makespan", "fast"),
                                       "tampered: a list for a metric": ("makespan", [1, 2]),
                                       "huge: a 400-digit metric": ("makespan", 10**400)},
                        others={"a sweep's CSV": _prepared("results.csv"), "a scenario": lambda: dump(graph_doc())})


def _sweep_attacks(valid: bytes) -> dict[str, Attack]:
    """A results table's attacks, and its rows as an earlier simsched wrote them (no version nor digest
    column): read with a warning, or recomputed on ``--resume`` with a line saying how many."""
    out = table_attacks(valid, metric="makespan", identity=("scheduler", "seed", "point_id", "digest"))
    rows = list(csv.reader(io.StringIO(valid.decode("utf-8"), newline="")))
    if rows and "version" in rows[0] and "digest" in rows[0]:
        keep = [k for k, c in enumerate(rows[0]) if c not in ("version", "digest")]
        text = io.StringIO(newline="")
        csv.writer(text, lineterminator="\n").writerows([[r[k] for k in keep] for r in rows])
        out["identity: an earlier simsched's rows (no version nor digest)"] = Attack(text.getvalue().encode(),
                                                                                     expect="refuse-or-warn")
    return out


def _corpus_around() -> dict[str, bytes]:
    return {**common_files(), "wf.json": json.dumps(RECORDED_RUN).encode()}


def _profile_json() -> bytes:
    """The profile ``calibrate`` wrote (:data:`PREPARE`), as JSON text: YAML reads it as it is, and the
    JSON attacks can set its fields."""
    import yaml

    return json.dumps(yaml.safe_load(_PREPARED["p.yaml"])).encode()


def _profile_attacks(valid: bytes) -> dict[str, Attack]:
    return json_attacks(valid, fields={"tampered: the seed as text": ("seed", "three"),
                                       "tampered: an unknown search": ("search", "bayes"),
                                       "tampered: an unknown split": ("split_kind", "halves"),
                                       "tampered: the split as a number": ("split_kind", 2),
                                       "tampered: the evaluations as text": ("evaluations", "many"),
                                       "tampered: regression_start as text": ("regression_start", "maybe"),
                                       "tampered: the training digests as text": ("train_sha256", "abc"),
                                       "tampered: a training digest not hex": ("train_sha256", ["z" * 64]),
                                       "tampered: the training range as text": ("train_range", "wide"),
                                       "tampered: a training range upside down": ("critical_path_s", [5.0, 1.0]),
                                       "tampered: the training errors as text": ("train_errors", "small"),
                                       "tampered: a negative training error": ("train_errors", [-1.0]),
                                       "tampered: the training mix as text": ("train_mix", "even"),
                                       "tampered: a training mix one short": ("train_mix", [[0.01, 0.5, 0.001, 0.02]]),
                                       "tampered: a negative training mix": ("train_mix", [[0.01, -0.5, 0, 0, 0]]),
                                       "tampered: no installations": ("installations", []),
                                       "tampered: slots 0": ("slots", 0),
                                       "tampered: a negative bandwidth": ("bandwidth", -1.0),
                                       "tampered: a parameter as text": ("runtime_factor", "fast"),
                                       "huge: a 400-digit pre-execution time": ("pre", 10**400)},
                        others={"a scenario": lambda: dump(graph_doc()),
                                "a results document": _prepared("results.json")})


def _study_around() -> dict[str, bytes]:
    return {**common_files(), "s.yaml": dump(graph_doc()), "study.yaml": dump(study_doc())}


GRAPH_RL = graph_doc()
KINDS: tuple[ReadBack, ...] = (
    ReadBack("checkpoint rl", "ck.pt", ("run", "s.yaml"), _with(GRAPH_RL, {"name": "rl", "checkpoint": "ck.pt"}),
             _shipped("rl"), _checkpoint("rl", ("ppo", "hidden"), ("ppo", "layers")), named_in="s.yaml"),
    ReadBack("checkpoint rl (train rl --resume)", "out/rl.pt",
             ("train", "rl", "s.yaml", "--budget-min", "0.01", "-o", "out", "--resume"),
             _with(stream_doc()), _shipped("rl"), _checkpoint("rl", ("ppo", "hidden"), ("ppo", "layers")), runs=False,
             needles=("rl.pt",)),
    ReadBack("checkpoint rl-world", "ck.pt", ("run", "s.yaml"),
             _with(GRAPH_RL, {"name": "rl-world", "checkpoint": "ck.pt"}), _shipped("rl-world"),
             _checkpoint("rl-world", ("world", "lstm"), ("world", "ensemble")), named_in="s.yaml"),
    ReadBack("checkpoint deepsched", "ck.pt", ("run", "s.yaml"),
             _with(GRAPH_RL, {"name": "deepsched", "checkpoint": "ck.pt"}), _shipped("deepsched"),
             _checkpoint("deepsched", ("model", "hidden"), ("model", "dag_layers")), named_in="s.yaml"),
    ReadBack("checkpoint rl-gate", "g.json", ("run", "s.yaml"),
             _with(stream_doc(), {"name": "rl-gate", "checkpoint": "g.json"}), _shipped("rl-gate"), _gate_attacks,
             named_in="s.yaml"),
    ReadBack("checkpoint rl-gate (generalise)", "g.json",
             ("generalise", "s.yaml", "-s", "rl-gate:checkpoint=g.json", "--cell", "fresh days", "--days", "2"),
             _with(stream_doc()), _shipped("rl-gate"), _gate_attacks, runs=False),
    ReadBack("trace swf", "jobs.swf", ("run", "s.yaml"), _with(cluster_doc()), lambda: JOBS_SWF.encode(),
             lambda v: trace_attacks(v, tiny=("; MaxProcs: 4\n", "1 0 0 1 1 -1 -1 1 1 -1 1 1 1 -1 -1 -1 -1 -1\n"),
                                     number_cell=_first_number(JOBS_SWF, 1, 3, " "),
                                     header=lambda text: JOBS_SWF.replace("MaxProcs: 4", f"MaxProcs: {text}").encode(),
                                     others={"a GPU CSV": lambda: GPU_CSV.encode()}), named_in="s.yaml"),
    ReadBack("trace gpu csv", "g.csv", ("run", "s.yaml"),
             _with(cluster_doc(), stream={"gpu_trace": "g.csv"}), lambda: GPU_CSV.encode(),
             lambda v: trace_attacks(v, tiny=("job,submit,gpus,duration\n", "j,0,1,1\n"),
                                     number_cell=_first_number(GPU_CSV, 1, 2),
                                     others={"an SWF log": lambda: JOBS_SWF.encode()}), named_in="s.yaml"),
    ReadBack("trace arrivals csv", "arrivals.csv", ("run", "s.yaml"), _with(traced_doc()),
             lambda: ARRIVALS_CSV.encode(),
             lambda v: trace_attacks(v, tiny=("time,job\n", "0,j\n"), number_cell=_first_number(ARRIVALS_CSV, 1, 0),
                                     others={"a down-interval trace": lambda: DOWN_CSV.encode()}),
             named_in="s.yaml"),
    ReadBack("trace down-interval csv", "down.csv", ("run", "s.yaml"), _with(stream_doc()), lambda: DOWN_CSV.encode(),
             lambda v: trace_attacks(v, tiny=("processor,start,end\n", "P0,5,6\n"),
                                     number_cell=_first_number(DOWN_CSV, 1, 1),
                                     others={"an arrival trace": lambda: ARRIVALS_CSV.encode()}),
             named_in="s.yaml"),
    ReadBack("store capacity days", "days.csv", ("capacity", "c.yaml", "--results", "days.csv", "--resume"),
             _store_around, _prepared("days.csv"),
             lambda v: table_attacks(v, metric="makespan", identity=("task_id", "point_id", "seed", "capacity"),
                                     json_cell="metrics"),
             outputs=("days.csv", "days.csv.parts", "days.csv.study.json"),
             setup=("capacity", "c.yaml", "--results", "days.csv")),
    ReadBack("document run --json", "results.json", ("report", "results.json", "-o", "r.html"), common_files,
             _prepared("results.json"), _document_attacks, outputs=("r.html",)),
    ReadBack("document batch run --json", "results.json", ("report", "results.json", "-o", "r.html"), common_files,
             _prepared("batch.json"), _document_attacks, outputs=("r.html",)),
    ReadBack("csv sweep results", "results.csv", ("summarize", "results.csv"), common_files,
             _prepared("results.csv"), _sweep_attacks),
    ReadBack("csv sweep results (sweep --resume)", "results.csv",
             ("sweep", "study.yaml", "--output", "results.csv", "--resume", "--workers", "1"), _study_around,
             _prepared("results.csv"), _sweep_attacks,
             outputs=("results.csv", "results.csv.parts", "results.csv.study.json")),
    ReadBack("profile (fidelity --profile)", "p.yaml", ("fidelity", "wf.json", "--profile", "p.yaml"), _corpus_around,
             _profile_json, _profile_attacks),
)
"""Every kind of file read back that the campaign attacks."""


# --------------------------------------------------------------------------- cases
def _option_naming(rb: ReadBack) -> tuple[str, ...]:
    """The option that names ``rb``'s file on its command line (``--profile`` of ``fidelity --profile
    p.yaml``), or nothing."""
    argv = list(rb.argv)
    k = argv.index(rb.file) if rb.file in argv else 0
    return (argv[k - 1],) if k > 0 and argv[k - 1].startswith("--") else ()


def readback_cases(kinds: tuple[ReadBack, ...] = KINDS) -> list[Case]:
    """Every case of every kind: its valid base (``expect="run"``, when ``runs``), then one per attack.
    A kind whose valid file could not be made (:func:`prepare_readbacks` not run) gets no case."""
    out: list[Case] = []
    for rb in kinds:
        try:
            valid = rb.valid()
        except KeyError:
            continue
        target = f"readback:{rb.kind}"
        needles = rb.needles or (Path(rb.file).name,)
        if rb.runs:
            out.append(Case(target, "as written", list(rb.argv), rb.around if rb.setup else _files(rb, Attack(valid)),
                            expect="run", outputs=rb.outputs, setup=list(rb.setup)))
        for what, attack in rb.attacks(valid).items():
            says = {"directory": ("is a directory",), "fifo": ("is a FIFO",)}.get(attack.special)
            if says:  # the refusal says what the path is, never "does not exist", after the option naming it
                options = ("--resume", *_option_naming(rb))
                needles_of = tuple(f"{n}: {s}" for n in needles for s in says) + tuple(
                    f"{n}: {o}: {s}" for n in needles for o in options for s in says)
            else:
                needles_of = needles
            if rb.setup:
                case = Case(target, what, list(rb.argv), rb.around, expect=attack.expect, needles=needles_of,
                            outputs=rb.outputs, setup=list(rb.setup), transform=_attack_there(rb, what))
            else:
                case = Case(target, what, list(rb.argv), _files(rb, attack), expect=attack.expect, needles=needles_of,
                            outputs=rb.outputs, named_in=rb.named_in)
                if attack.special:
                    case.special[rb.file] = attack.special
            out.append(case)
    return out


def _attack_there(rb: ReadBack, what: str) -> Callable[[Path], None]:
    """Attack ``what`` made from the valid file the setup command wrote in the case's folder."""
    def transform(root: Path) -> None:
        path = root / rb.file
        attack = rb.attacks(path.read_bytes())[what]
        path.unlink()
        if attack.special == "directory":
            path.mkdir()
        elif attack.special == "fifo":
            os.mkfifo(path)
        else:
            path.write_bytes(attack.content())
    return transform


def _files(rb: ReadBack, attack: Attack) -> Callable[[], dict[str, bytes]]:
    def make() -> dict[str, bytes]:
        files = rb.around()
        if not attack.special:
            files[rb.file] = attack.content()
        return files
    return make


def readback_kinds(cases: list[Case]) -> list[str]:
    """The read-back kinds that have at least one attack among ``cases``, in :data:`KINDS` order."""
    attacked = {c.target for c in cases if c.expect != "run"}
    return [rb.kind for rb in KINDS if f"readback:{rb.kind}" in attacked]


# --------------------------------------------------------------------------- the valid files a command writes
_PREPARED: dict[str, bytes] = {}

PREPARE: dict[str, tuple[Callable[[], dict[str, bytes]], list[str], tuple[str, ...]]] = {
    "days": (lambda: {**common_files(), "c.yaml": dump(capacity_doc())},
             ["capacity", "c.yaml", "--results", "days.csv"], ("days.csv", "days.csv.study.json")),
    "run": (lambda: {**common_files(), "s.yaml": dump(graph_doc())}, ["run", "s.yaml", "--json", "results.json"],
            ("results.json",)),
    "batch": (lambda: {**common_files(), "s.yaml": dump(cluster_doc())}, ["run", "s.yaml", "--json", "batch.json"],
              ("batch.json",)),
    "sweep": (lambda: {**common_files(), "s.yaml": dump(graph_doc()), "study.yaml": dump(study_doc())},
              ["sweep", "study.yaml", "--output", "results.csv"], ("results.csv",)),
    "profile": (_corpus_around, ["calibrate", "wf.json", "-o", "p.yaml", "--budget", "1"], ("p.yaml",)),
}
"""The valid stores, documents and CSVs, each written by its own command: files, command, what it writes."""


def prepare_readbacks(entry: Callable[[list[str]], Any]) -> None:
    """Write the valid read-back files that only a command can make (:data:`PREPARE`), each in a forked
    child like every case; a command that fails leaves its kinds without cases (reported as not
    attacked).  Once per process."""
    for files, argv, writes in PREPARE.values():
        if all(name in _PREPARED for name in writes):
            continue
        with tempfile.TemporaryDirectory(prefix="simsched-hostile-readback-") as tmp:
            root, out = Path(tmp) / "case", Path(tmp) / "out"
            root.mkdir()
            out.mkdir()
            materialise(Case("prepare", "valid", [], files), root)
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                run_child(entry, argv, root, out)
            os.waitpid(pid, 0)
            for name in writes:
                if (root / name).is_file():
                    _PREPARED[name] = (root / name).read_bytes()
