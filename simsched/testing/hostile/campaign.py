"""A hostile-input campaign generated from the scenario schema and the command table (issue #33), and
from the kinds of file simsched reads back (issue 40, :mod:`~.readback`).

This module gathers the cases (:func:`all_cases`), measures what they cover (:func:`coverage`), samples
them (:func:`sample`), prints the summary table and is the campaign's entry (:func:`main`, behind
``python -m simsched.cli.hostile``).  The package's docstring says what the campaign promises.
"""

from __future__ import annotations

import random
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pydantic import BaseModel

from simsched.testing.hostile.commands import (
    COMMAND_BASES,
    UNCHECKED_BASES,
    OptionTarget,
    option_cases,
    option_files,
    prepare,
    walk_commands,
)
from simsched.testing.hostile.documents import BASES, Case, base_files
from simsched.testing.hostile.fields import document_cases, field_cases, mismatch_cases
from simsched.testing.hostile.readback import KINDS, prepare_readbacks, readback_cases, readback_kinds
from simsched.testing.hostile.sandbox import Outcome, run_campaign
from simsched.testing.hostile.schema_walk import FieldTarget, unreached_models, walk_schema

Roots = Sequence[tuple[type[BaseModel], str]]
"""More top-level input models beside the scenario's, each with its base (the study file's)."""


def all_targets(app: Any, roots: Roots = ()) -> tuple[list[FieldTarget], list[OptionTarget]]:
    """Every field (the schema walk) and every option (the command table) the campaign attacks."""
    return walk_schema(roots), walk_commands(app)


def all_cases(app: Any, roots: Roots = ()) -> list[Case]:
    """Every case of the campaign, in a fixed order."""
    fields, options = all_targets(app, roots)
    cases = base_cases()
    cases += [c for t in fields for c in field_cases(t)]
    cases += document_cases()
    cases += mismatch_cases()
    cases += [c for t in options for c in option_cases(t, options)]
    cases += readback_cases()
    return cases


def coverage(app: Any, cases: Sequence[Case], roots: Roots = ()) -> dict[str, Any]:
    """Fields and options and whether each has a case; models the walk does not reach."""
    fields, options = all_targets(app, roots)
    attacked = {c.target for c in cases}
    field_keys = sorted({t.key for t in fields})
    missing_fields = sorted({t.key for t in fields} - {t.key for t in fields
                                                        if f"{t.base}:{t.dotted}" in attacked})
    missing_options = sorted(t.key for t in options if f"option:{t.key}" not in attacked)
    kinds = readback_kinds(list(cases))
    return {"fields": len(field_keys), "field_places": len(fields), "options": len(options),
            "missing_fields": missing_fields, "missing_options": missing_options,
            "unreached_models": unreached_models(roots), "readback_kinds": kinds,
            "missing_readback": [rb.kind for rb in KINDS if rb.kind not in kinds]}


def sample(cases: Sequence[Case], n: int, seed: int = 0) -> list[Case]:
    """A deterministic sample of ``n`` cases that takes at least one case of every target first."""
    rng = random.Random(seed)
    bases = [c for c in cases if c.expect == "run"]
    cases = [c for c in cases if c.expect != "run"]
    n = max(0, n - len(bases))
    by_target: dict[str, list[Case]] = {}
    for c in cases:
        by_target.setdefault(c.target, []).append(c)
    firsts = [rng.choice(v) for v in by_target.values()]
    rng.shuffle(firsts)
    if n <= len(firsts):
        return bases + firsts[:n]
    taken = {id(c) for c in firsts}
    rest = [c for c in cases if id(c) not in taken]
    return bases + firsts + rng.sample(rest, min(n - len(firsts), len(rest)))


def base_cases() -> list[Case]:
    """Each base as it is: it must run (exit 0).  A base that stopped being valid would make every
    case built on it pass for the wrong reason (the base's own error), so this is checked first."""
    out = []
    for base, (make, argv) in BASES.items():
        out.append(Case(f"base:{base}", "as written", list(argv), lambda b=base, m=make: base_files(b, m())[0],
                        expect="run"))
    for command, argv in COMMAND_BASES.items():
        if command.split()[0] not in UNCHECKED_BASES:
            out.append(Case(f"base:{command}", "as written", list(argv), option_files, expect="run"))
    return out


_AT_LINE = r":\d+: "
_OPTION = re.compile(r"(?:^|[\s'\"(])--?[A-Za-z][\w-]*")


def weak(outcome: Outcome) -> bool:
    """Whether a refusal names less than the place that led to it (issue 40's weak messages): a field's
    refusal without its document's ``FILE:LINE:``; a file a scenario names (a trace, a checkpoint) refused
    without that chain (``s.yaml:8: workload.stream.swf: jobs.swf:2: ...``); a named option's refusal
    naming neither an option nor a file's line.  A whole document's refusal, a positional argument's and
    a file given on the command line are judged by their needles alone (``not located``).  O(len(line))."""
    case, line = outcome.case, outcome.line
    group = case.target.split(":")[0]
    if case.expect == "run" or not line.startswith("error: ") or group in ("base", "document"):
        return False
    if group == "option":
        if not case.target.split()[-1].startswith("-"):
            return False  # a positional argument: its value (a path, a name) is the place
        named = any(f"{a}:" in line for a in case.argv if len(a) > 2 and not a.startswith("-"))  # a file given
        return not (named or _OPTION.search(line) or re.search(r"[^\s:]+" + _AT_LINE, line))
    if group == "readback" and not case.named_in:
        return False  # a file named on the command line: naming it is the whole place
    files = [case.named_in] if case.named_in else [*case.needles, *(a for a in case.argv
                                                                    if a.endswith((".yaml", ".yml")))]
    return not any(f and re.search(re.escape(f) + _AT_LINE, line) for f in files)


def summary(outcomes: Sequence[Outcome], cover: dict[str, Any] | None = None) -> str:
    """The summary table: verdicts by kind of target, the expected failures apart, then coverage."""
    rows: Counter[tuple[str, str]] = Counter()
    for o in outcomes:
        group = o.case.target.split(":")[0]
        verdict = o.verdict if o.case.expected_failure is None or o.clean else f"expected: {o.case.expected_failure}"
        rows[(group, verdict)] += 1
    groups = sorted({g for g, _ in rows})
    verdicts = sorted({v for _, v in rows}, key=lambda v: (v != "clean", v))
    width = max(12, *(len(v) for v in verdicts))
    text = [f"{'target':<12} " + " ".join(f"{v:>{width}}" for v in verdicts)]
    for g in groups:
        text.append(f"{g:<12} " + " ".join(f"{rows[(g, v)]:>{width}}" for v in verdicts))
    bad = [o for o in outcomes if not o.clean and o.case.expected_failure is None]
    weak_ones = [o for o in outcomes if o.clean and weak(o)]
    text.append(f"{len(outcomes)} cases: {sum(o.clean for o in outcomes)} clean, {len(bad)} not clean"
                + (f", {sum(1 for o in outcomes if not o.clean and o.case.expected_failure)} expected to pass "
                   f"(marked expected failures)" if any(o.case.expected_failure for o in outcomes) else "")
                + f"; weak messages: {len(weak_ones)} (clean refusals that name less than the place)")
    if cover is not None:
        text.append(f"attacked: {cover['fields']} scenario/study fields ({cover['field_places']} places) and "
                    f"{cover['options']} command options and arguments; not attacked: "
                    f"{len(cover['missing_fields']) + len(cover['missing_options']) + len(cover['unreached_models'])}")
        text.append(f"read back: {len(cover['readback_kinds'])} kinds of file attacked by their contents "
                    f"({', '.join(cover['readback_kinds'])}); not attacked: {len(cover['missing_readback'])}")
        for k in ("missing_fields", "missing_options", "unreached_models", "missing_readback"):
            if cover[k]:
                text.append(f"  {k.replace('_', ' ')}: {', '.join(cover[k])}")
    kinds: Counter[tuple[str, bool]] = Counter()
    for o in outcomes:
        if o.case.target.startswith("readback:") and o.case.expect != "run":
            kinds[(o.case.target.removeprefix("readback:"), o.clean or o.case.expected_failure is not None)] += 1
    attacked = list(dict.fromkeys(k for k, _ in kinds))
    if attacked:
        text.append(f"read-back attacks run: {sum(kinds.values())} on {len(attacked)} kind"
                    f"{'s' if len(attacked) != 1 else ''} of file")
    for kind in attacked:
        text.append(f"  {kind}: {kinds[(kind, True)]} of {kinds[(kind, True)] + kinds[(kind, False)]} attacks clean")
    for o in bad[:200]:
        text.append(f"  {o.verdict}: {o.case.name} [{' '.join(a[:40] for a in o.case.argv)}]: {o.line}")
    for o in weak_ones[:50]:
        text.append(f"  weak: {o.case.name}: {o.line}")
    return "\n".join(text)


def main(app: Any, entry: Callable[[list[str]], Any], argv: Sequence[str] | None = None, *, roots: Roots = (),
         warm: Callable[[], None] | None = None) -> int:
    """``python -m simsched.cli.hostile [--all | --sample N] [--match TEXT] [--list]``: exit 0 when every case
    is clean (expected failures aside) and every field and option was attacked, else 1."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m simsched.cli.hostile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="every case (the default is a sample of 200)")
    parser.add_argument("--sample", type=int, default=200, help="how many cases to sample (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed")
    parser.add_argument("--match", default="", help="only cases whose target or value contains this text")
    parser.add_argument("--list", action="store_true", help="list the cases, run nothing")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    args = parser.parse_args(argv)
    if warm is not None:
        warm()  # modules the commands import lazily, imported once here instead of in every child
    prepare_readbacks(entry)  # the valid stores, documents and CSVs the read-back cases attack
    cases = all_cases(app, roots)
    cover = coverage(app, cases, roots)
    chosen = [c for c in cases if args.match in c.name]
    if not args.all:
        chosen = sample(chosen, args.sample, args.seed)
    if args.list:
        for c in chosen:
            print(f"{c.expect:7} {c.name}")
        print(f"{len(chosen)} of {len(cases)} cases")
        return 0

    def show(i: int, n: int, o: Outcome) -> None:
        if not o.clean:
            print(f"[{i}/{n}] {o.verdict}: {o.case.name}: {o.line}", file=sys.stderr, flush=True)
        elif i % 50 == 0:
            print(f"[{i}/{n}] ...", file=sys.stderr, flush=True)

    prepare(entry)
    outcomes = run_campaign(chosen, entry, jobs=args.jobs, progress=show)
    print(summary(outcomes, cover))
    bad = [o for o in outcomes if not o.clean and o.case.expected_failure is None]
    missing = (cover["missing_fields"] or cover["missing_options"] or cover["unreached_models"]
               or cover["missing_readback"])
    return 1 if bad or missing else 0


def iter_targets(app: Any, roots: Roots = ()) -> Iterator[str]:
    """The names of every field and option the campaign attacks (for listing)."""
    fields, options = all_targets(app, roots)
    yield from (f"field {t.base}:{t.dotted}" for t in fields)
    yield from (f"option {t.key}" for t in options)
