"""Workload importers and exporters, by form name.

:data:`IMPORTERS` maps the form a scenario names (``workload: {FORM: path, ...options}``) to a
function ``(path: Path, **options) -> TaskGraph``; :data:`EXPORTERS` maps a form to
``(graph, path) -> None`` (atomic writes).  The ``model`` form is special: its "path" is a model
name (``workload: {model: resnet18, batch: 8}``), see :mod:`simsched.workloads.dlmodels`.

Forms: ``wfcommons`` (WfFormat JSON 1.4-1.6), ``dax`` (Pegasus DAX XML), ``stg`` (Kasahara STG),
``dot``, ``graphml``, ``tasklist`` (CSV/JSON), ``inline`` (simsched's ``{tasks, edges}`` YAML/JSON),
``onnx`` (extra ``onnx``), ``model`` (built-in DL graphs).  :func:`detect_form` guesses a form from
the file name (and, for ``.json``, the content).

Cluster logs are not task graphs: :mod:`~simsched.workloads.importers.swf` (SWF),
:mod:`~simsched.workloads.importers.sacct` (Slurm accounting) and
:mod:`~simsched.workloads.importers.gpu_trace` (GPU-cluster CSV) read rigid jobs into a
:class:`~simsched.workloads.importers.swf.RigidTrace` for the batch engine, reached through a
scenario's ``workload: {stream: {swf: FILE}}``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from simsched import limits
from simsched.errors import SimschedError
from simsched.workloads.dlmodels import read_model
from simsched.workloads.importers.dax import read_dax, write_dax
from simsched.workloads.importers.inline import read_inline, write_inline
from simsched.workloads.importers.nxformats import read_dot, read_graphml, write_dot, write_graphml
from simsched.workloads.importers.onnx_model import read_onnx
from simsched.workloads.importers.stg import read_stg, write_stg
from simsched.workloads.importers.tasklist import read_tasklist, write_tasklist
from simsched.workloads.importers.wfformat import read_wfformat, write_wfformat
from simsched.workloads.taskgraph import TaskGraph

IMPORTERS: dict[str, Callable[..., TaskGraph]] = {
    "wfcommons": read_wfformat,
    "dax": read_dax,
    "stg": read_stg,
    "dot": read_dot,
    "graphml": read_graphml,
    "tasklist": read_tasklist,
    "inline": read_inline,
    "onnx": read_onnx,
    "model": read_model,
}
"""Form name → ``function(path, **options) -> TaskGraph`` (for ``model``, the path is a model name)."""

EXPORTERS: dict[str, Callable[[TaskGraph, Path], None]] = {
    "wfcommons": write_wfformat,
    "dax": write_dax,
    "stg": write_stg,
    "dot": write_dot,
    "graphml": write_graphml,
    "tasklist": write_tasklist,
    "inline": write_inline,
}
"""Form name → ``function(graph, path)`` writing that form atomically."""

_BY_SUFFIX = {".dax": "dax", ".xml": "dax", ".stg": "stg", ".dot": "dot", ".gv": "dot", ".graphml": "graphml",
              ".csv": "tasklist", ".tsv": "tasklist", ".yaml": "inline", ".yml": "inline", ".onnx": "onnx"}


def detect_form(path: str | Path, *, for_writing: bool = False) -> str:
    """The form of ``path`` from its extension; ``.json`` is WfFormat when it has ``schemaVersion``
    (always when writing: use ``--to`` for others), inline when it has ``edges``, else a task list."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in _BY_SUFFIX:
        return _BY_SUFFIX[suffix]
    if suffix == ".json":
        if for_writing or not p.is_file():
            return "wfcommons"
        limits.check_file_size(p)
        with open(p, "rb") as fh:
            head = fh.read(4096).decode("utf-8", errors="replace")
        if '"schemaVersion"' in head or '"workflow"' in head:
            return "wfcommons"
        if '"edges"' in p.read_text(encoding="utf-8", errors="replace"):
            return "inline"
        return "tasklist"
    raise SimschedError(f"cannot tell the format from the extension {suffix or '(none)'!r}; known: "
                        f"{', '.join(sorted({*_BY_SUFFIX, '.json'}))} (or give the form explicitly)", file=p)


def check_form(form: str | None, *, writing: bool = False, option: str | None = None) -> None:
    """Refuse a ``form`` no importer reads (``writing``: no exporter writes), naming ``option`` (the command
    line's ``--from``/``--to``) when given; ``None`` (detect from the name) passes.  O(forms)."""
    table = EXPORTERS if writing else IMPORTERS
    if form is not None and form not in table:
        what = f"cannot write form {form!r}; writable" if writing else f"unknown workload form {form!r}; known"
        raise SimschedError(f"{what}: {', '.join(table)}", field=option)


def load(path: str | Path, form: str | None = None, **options: Any) -> TaskGraph:
    """Read a workload file in ``form`` (detected from the name when ``None``)."""
    form = form or detect_form(path)
    check_form(form)
    try:
        return IMPORTERS[form](Path(path) if form != "model" else str(path), **options)
    except TypeError as e:
        if "unexpected keyword" in str(e):
            raise SimschedError(f"{form}: {e}".replace("() got an", " got an"), file=path) from None
        raise


def save(graph: TaskGraph, path: str | Path, form: str | None = None) -> None:
    """Write ``graph`` to ``path`` in ``form`` (detected from the name when ``None``), atomically."""
    form = form or detect_form(path, for_writing=True)
    check_form(form, writing=True)
    EXPORTERS[form](graph, Path(path))
