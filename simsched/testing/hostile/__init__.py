"""A hostile-input campaign generated from the scenario schema and the command table (issue #33).

Nothing here is written per field or per option.  The campaign

* walks every pydantic model reachable from the scenario's top level (:class:`ScenarioModel`), from the
  sections the top level keeps as plain mappings (:data:`~.schema_walk.SECTIONS`: ``workload`` forms,
  ``workload.stream``, ``failures``, ``stragglers``, ``autotuning``), from the ``capacity:`` section's field
  table and from the study file (:class:`StudyModel`), and every option and argument of every command of
  the Typer app;
* gives each field or option hostile values *of its kind*, the kind read from its annotation
  (:func:`~.values.kind_of`; :data:`~.values.FIELD_KINDS` overrides only where the type says too little: a
  ``str`` that is a path to a CSV file);
* runs each case in a forked child (the command's real entry point, ``resource.setrlimit`` of
  :data:`~.sandbox.MEMORY_MB` more address space than the child starts with, killed after
  :data:`~.sandbox.TIME_S` seconds) in a fresh directory, and holds it to the contract of
  ``docs/robustness.md``: exit 2 with ONE ``error:`` line that names the file, field or option, or (only
  when the value is legal by the field's own declared constraints) exit 0; never a traceback, a hang or a
  memory blow-up; nothing written on exit 2; every input byte-identical afterwards;
* counts fields and options and FAILS when one of them got no case (a field added tomorrow is
  attacked tomorrow: a new model reachable from the schema is walked; a new mapping section that the
  walk cannot type is reported as not attacked until it is named in :data:`~.schema_walk.SECTIONS`).

``python -m simsched.cli.hostile --all`` runs all of it and prints the summary table; ``--sample N``
runs a deterministic sample (the CI sample of ``tests/test_hostile.py``).  Outputs onto a file the
scenario reads indirectly (a stream's down-interval trace) must be refused like the rest: the read set
of :mod:`simsched.fileio`.

One module per concern, each importing only those listed before it:

* :mod:`~.documents`: the valid base documents, the files beside them, :class:`Case`;
* :mod:`~.schema_walk`: every field of every input model, placed in a base;
* :mod:`~.values`: the kind of a field and the hostile values of each kind;
* :mod:`~.fields`: the cases of fields and of whole documents;
* :mod:`~.sandbox`: one case run in a forked child under bounds, and judged;
* :mod:`~.commands`: the command table's options and their cases;
* :mod:`~.contents`: the hostile contents of a file read back (tampered, truncated, deep, huge,
  foreign, wrong kind), by family: torch checkpoints, JSON, CSV traces, results tables;
* :mod:`~.readback`: every kind of file simsched reads back (checkpoints, traces, results stores,
  documents, sweep CSVs), the command that reads it, its valid file and its cases (issue 40);
* :mod:`~.campaign`: all cases, their coverage (read-back kinds counted), a sample, the summary table
  (weak messages counted: :func:`~.campaign.weak`), :func:`main`.

Cost: one fork per case (about 0.05-0.5 s each for the small bases used); the whole campaign is
``len(all_cases(app))`` cases (about 3,400).
"""

from __future__ import annotations

from simsched.testing.hostile.campaign import (
           all_cases,
           all_targets,
           coverage,
           iter_targets,
           main,
           sample,
           summary,
           weak,
)
from simsched.testing.hostile.commands import OptionTarget, prepare, walk_commands
from simsched.testing.hostile.documents import Case
from simsched.testing.hostile.fields import mismatch_cases
from simsched.testing.hostile.readback import KINDS as READBACK_KINDS
from simsched.testing.hostile.readback import prepare_readbacks, readback_cases, readback_kinds
from simsched.testing.hostile.sandbox import Outcome, judge, run_campaign, run_case
from simsched.testing.hostile.schema_walk import FieldTarget, unreached_models, walk_schema
from simsched.testing.hostile.values import expected_refusal, kind_of

__all__ = ["READBACK_KINDS", "Case", "FieldTarget", "OptionTarget", "Outcome", "all_cases", "all_targets",
           "coverage", "expected_refusal", "iter_targets", "judge", "kind_of", "main", "mismatch_cases", "prepare",
           "prepare_readbacks",
           "readback_cases", "readback_kinds", "run_campaign", "run_case", "sample", "summary", "unreached_models",
           "walk_commands", "walk_schema", "weak"]
