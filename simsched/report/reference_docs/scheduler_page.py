"""The block between the ``GENERATED`` markers of ``docs/schedulers.md``: the table of every registered
scheduler (name, kind, extras, description, from the registry's specs) and every built-in task-graph
scheduler's parameters, from the class signature and the ``Parameters:`` section of its docstring.
"""

from __future__ import annotations

import inspect
import re

from simsched.report.reference_docs.tables import cell, default_text, type_name

BEGIN, END = "<!-- BEGIN GENERATED: scheduler parameters -->", "<!-- END GENERATED: scheduler parameters -->"
"""The markers around the generated block of ``docs/schedulers.md``."""


def _params_section(doc: str) -> dict[str, str]:
    """Parameter descriptions of a class docstring, by name: the ``Parameters:`` section (entries
    ``name: text`` or ``a, b (note), c: text``, several per line when separated by ``;`` or ``.``),
    else ````name``: text`` sentences anywhere."""
    out: dict[str, str] = {}
    match = re.search(r"^Parameters:\n((?:[ \t]+.*\n?)+)", doc, re.M)
    if match:
        text = " ".join(match.group(1).split())
        for part in re.split(r"[;.]\s+(?=[a-z_]\w*(?:\s*\([^)]*\))?\s*[,:])", text):
            names, sep, rest = part.partition(": ")
            if not sep:
                names, rest = part, ""
            for piece in re.finditer(r"(\w+)(?:\s*\(([^)]*)\))?", names):
                out.setdefault(piece.group(1), (rest or piece.group(2) or "").strip().rstrip(".;"))
    for piece in re.finditer(r"``(\w+)``:\s*([^.]+)", doc):
        out.setdefault(piece.group(1), " ".join(piece.group(2).split()))
    return out


def scheduler_parameters() -> str:
    """The generated block of ``docs/schedulers.md``: the registry's table of every scheduler, then a
    parameter table per built-in task-graph scheduler.  O(schedulers) class imports."""
    from simsched.schedulers import registry

    out = [BEGIN, "\n#### Every registered scheduler\n",
           "Generated from the registry (`simsched/schedulers/registry.py`), as `simsched list` shows it.\n",
           "| name | kind | extras | description |\n|---|---|---|---|"]
    for spec in registry.specs():
        description = registry.summary(registry.load_class(spec.name), spec.name)
        extras = ", ".join(f"`{e}`" for e in spec.extras) or "-"
        out.append(f"| `{spec.name}` | {spec.kind} | {extras} | {cell(description)} |")
    for name in registry.BUILTIN:
        cls = registry.load_class(name)
        sig = inspect.signature(cls, eval_str=True)
        params = {k: p for k, p in sig.parameters.items() if k not in ("self", "args", "kwargs")}
        out.append(f"\n#### `{name}` ({registry.kind(cls, name)}): parameters\n")
        if not params:
            out.append("No parameters.")
            continue
        docs = _params_section(inspect.getdoc(cls) or "")
        out.append("| parameter | type | default | meaning |\n|---|---|---|---|")
        for key, p in params.items():
            ann = "" if p.annotation is inspect.Parameter.empty else cell(type_name(p.annotation))
            default = "**required**" if p.default is inspect.Parameter.empty else default_text(p.default)
            out.append(f"| `{key}` | {ann} | {default} | {cell(docs.get(key, ''))} |")
    out.append("\n" + END)
    return "\n".join(out)


def with_block(text: str, block: str) -> str:
    """``text`` with what lies between the markers (:data:`BEGIN` and :data:`END` included) replaced by ``block``."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < 0:
        raise ValueError(f"docs/schedulers.md lacks the markers {BEGIN} ... {END}")
    return text[:start] + block + text[end + len(END):]
