"""Days of a task-graph or stream scenario on a mix of processor types: each sized entry at its count."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from simsched import limits
from simsched.capacity.models.base import entries_matching, model_source, row_metrics
from simsched.errors import SimschedError
from simsched.run.runner import run_scenario
from simsched.scenario import parse_scenario
from simsched.yamlio import YamlDocument

MAX_MIXES = 400


def _strip_type(data: dict[str, Any], ptype: str) -> None:
    """Remove every per-type entry of ``ptype`` (power, prices, carbon, affinity) from a scenario."""
    plat = data["platform"]
    for key in ("power", "prices", "carbon"):
        sec = plat.get(key)
        if isinstance(sec, dict) and isinstance(sec.get("types"), dict):
            sec["types"].pop(ptype, None)
    for per in (plat.get("affinity") or {}).values():
        if isinstance(per, dict):
            per.pop(ptype, None)


class MixModel:
    """Days of a task-graph or stream scenario on a platform whose sized entries get the counts of a
    mix (``{entry: count}``); a day is one :func:`~simsched.run.runner.run_scenario` repetition whose
    numeric row fields are its metrics, with ``energy_kwh`` and ``carbon_kg`` beside ``energy_j`` and
    ``carbon_g``.  Every mix of the ranges is in :attr:`mixes` (at most :data:`MAX_MIXES`); a count
    of 0 drops the entry, and with it its type's power, price, carbon and affinity entries."""

    def __init__(self, doc: Any, mix: Mapping[str, Any], *, field: str = "capacity.mix") -> None:
        self.doc = doc
        where = {"field": field, "file": doc.file, "line": doc.line_of(tuple(field.split(".")))}
        procs = (doc.data.get("platform") or {}).get("processors") or []
        if not isinstance(mix, Mapping) or not mix:
            raise SimschedError("give each processor entry to size and its range: {cpu: [2, 8], gpu: [0, 3]}",
                                **where)
        self.entries: list[tuple[str, int, str, range]] = []
        for key, span in mix.items():
            matches = entries_matching(procs, key)
            if len(matches) != 1:
                raise SimschedError(f"{key!r} must name exactly one processor entry (its type or name); "
                                    f"{len(matches)} match", **where)
            ok = (isinstance(span, list) and len(span) == 2 and all(isinstance(x, int) and not isinstance(x, bool)
                                                                   for x in span) and 0 <= span[0] <= span[1])
            if not ok:
                raise SimschedError(f"{key}: a range is [lowest, highest] counts, integers with 0 <= lowest <= "
                                    f"highest, got {span!r}", **where)
            entry = procs[matches[0]]
            self.entries.append((str(key), matches[0], str(entry.get("type", "cpu")), range(span[0], span[1] + 1)))
        # before any mix is listed (one more: the mix of no processor at all is dropped below)
        limits.check_product([len(r) for *_, r in self.entries], MAX_MIXES + 1, what="mixes",
                             hint=f"narrow the ranges (at most {MAX_MIXES} mixes)", **where)
        self.mixes = [tuple(c) for c in itertools.product(*(r for *_, r in self.entries))]
        self.mixes = [c for c in self.mixes if sum(c) > 0 or len(procs) > len(self.entries)]
        if not self.mixes:
            raise SimschedError("every mix of these ranges has no processor", **where)
        if len(self.mixes) > MAX_MIXES:
            raise SimschedError(f"{len(self.mixes)} mixes is more than {MAX_MIXES}: narrow the ranges", **where)
        self.base = parse_scenario(doc)
        self.variants = list(self.base.scheduler_labels)
        self._scenarios: dict[tuple[int, ...], Any] = {}
        self.source = model_source("mix", doc, mix=dict(mix), field=field)

    def label(self, counts: Sequence[int]) -> str:
        """``"4 cpu + 2 gpu"``: a mix's counts, named by the entries they size."""
        return " + ".join(f"{c} {key}" for (key, *_), c in zip(self.entries, counts))

    def scenario(self, counts: tuple[int, ...]) -> Any:
        """The scenario with the sized entries at ``counts`` (a zero drops the entry and its type's
        per-type entries), validated once per mix."""
        if counts not in self._scenarios:
            data = copy.deepcopy(self.doc.data)
            procs = data["platform"]["processors"]
            drop = []
            for (_key, index, _type, _r), c in zip(self.entries, counts):
                if c == 0:
                    drop.append(index)
                else:
                    procs[index]["count"] = int(c)
            data["platform"]["processors"] = [p for i, p in enumerate(procs) if i not in drop]
            left = {p.get("type", "cpu") for p in data["platform"]["processors"] if isinstance(p, dict)}
            for index in drop:
                ptype = procs[index].get("type", "cpu")
                if ptype not in left:
                    _strip_type(data, ptype)
            self._scenarios[counts] = parse_scenario(YamlDocument(data, self.doc.lines, self.doc.file))
        return self._scenarios[counts]

    def __call__(self, variant: str, counts: tuple[int, ...], seed: int) -> dict[str, float]:
        row = run_scenario(self.scenario(counts), schedulers=[variant], seed=seed, repetitions=1).rows[0]
        return row_metrics(row)
