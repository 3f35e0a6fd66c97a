"""``-s`` picks scenario entries by one rule (exact label; a bare name naming one entry; never one of
several silently) and runs ``NAME(param=value)`` without a scenario entry (issue #41)."""

from __future__ import annotations

from pathlib import Path

import pytest

from simsched.errors import SimschedError
from simsched.run.runner import _select
from simsched.scenario import load_scenario, parse_label, scheduler_label

SCENARIO = """\
name: two-fair
seed: 1
platform:
  processors: [{name: cpu, count: 2}]
  network: {bandwidth: 1.0, latency: 0.0}
workload: {generator: random, tasks: 6}
schedulers: [heft, {name: fair-eft, alpha: -0.5}, {name: fair-eft, alpha: 2.0}]
"""


@pytest.fixture
def scenario(tmp_path: Path):
    p = tmp_path / "s.yaml"
    p.write_text(SCENARIO)
    return load_scenario(p)


def test_parse_label_inverts_scheduler_label() -> None:
    assert parse_label("heft") == ("heft", {})
    assert parse_label(" fair-eft( alpha = -1 ) ") == ("fair-eft", {"alpha": -1})
    assert parse_label("x(a=[1, 2], b='p,q', c=true)") == ("x", {"a": [1, 2], "b": "p,q", "c": True})
    name, params = parse_label(scheduler_label("fair-eft", {"alpha": -0.5}))
    assert (name, params) == ("fair-eft", {"alpha": -0.5})


@pytest.mark.parametrize("bad", ["fair-eft(alpha)", "fair-eft(alpha=1", "(alpha=1)", "f(a=1, a=2)"])
def test_parse_label_refuses_malformed_text(bad: str) -> None:
    with pytest.raises(SimschedError):
        parse_label(bad)


def test_a_label_picks_its_entry_whatever_the_spelling(scenario) -> None:
    assert [s.label for s in _select(scenario, ["fair-eft(alpha=2.0)"])] == ["fair-eft(alpha=2.0)"]
    assert [s.label for s in _select(scenario, ["fair-eft( alpha=2 )"])] == ["fair-eft(alpha=2.0)"]
    picked = _select(scenario, ["fair-eft(alpha=-0.5)"])[0]
    assert picked.params == {"alpha": -0.5} and picked.loc[:2] == ("schedulers", 1)


def test_a_bare_name_naming_several_entries_is_refused_with_their_labels(scenario) -> None:
    with pytest.raises(SimschedError) as info:
        _select(scenario, ["fair-eft"])
    text = str(info.value)
    assert "--scheduler" in text and "fair-eft(alpha=-0.5)" in text and "fair-eft(alpha=2.0)" in text


def test_a_bare_name_naming_one_entry_picks_it(scenario) -> None:
    assert _select(scenario, ["heft"])[0].loc[:2] == ("schedulers", 0)


def test_params_run_a_registered_scheduler_without_an_entry(scenario) -> None:
    s = _select(scenario, ["fair-eft(alpha=-1)"])[0]
    assert (s.name, dict(s.params), s.label, s.loc) == ("fair-eft", {"alpha": -1.0}, "fair-eft(alpha=-1.0)",
                                                          ("--scheduler",))
    assert s.create().alpha == -1.0


@pytest.mark.parametrize(("text", "says"), [("fair-eft(alpha=x)", "alpha"), ("fair-eft(beta=1)", "beta"),
                                            ("nosuch(a=1)", "nosuch")])
def test_bad_params_are_one_located_line(scenario, text: str, says: str) -> None:
    with pytest.raises(SimschedError) as info:
        _select(scenario, [text])
    assert "--scheduler" in str(info.value) and says in str(info.value)
