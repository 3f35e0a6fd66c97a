"""One registry: a scheduler is one module plus one SchedulerSpec, and list, check, bench and the docs
table see it with nothing else changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import SimschedError
from simsched.schedulers import registry
from simsched.schedulers.registry import BenchSpec, SchedulerSpec

FAKE_STATIC = '''
from simsched.schedulers.heft import HEFT


class FakeHEFT(HEFT):
    """Fake HEFT registered by a test (one module, one spec)."""
'''

FAKE_POLICY = '''
from simsched.schedulers.loadaware import Uncontrolled


class Crowding(Uncontrolled):
    """Claims to be conflict-free but starts every stage at once (a test's defective policy)."""

    name = "crowding"
    conflict_free = True
'''


@pytest.fixture
def fake_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "fake_sched_mod.py").write_text(FAKE_STATIC + FAKE_POLICY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "SPECS", dict(registry.SPECS))  # restored after the test
    return "fake_sched_mod"


def _row(out: str, name: str) -> list[str]:
    line = next(line for line in out.splitlines() if f" {name} " in line)
    return [c.strip() for c in line.strip("│┃ ").split("│")]


def test_a_registered_spec_is_listed_checked_and_benched(fake_module: str) -> None:
    registry.register(SchedulerSpec("fake-heft", f"{fake_module}:FakeHEFT", "static", check={"examples": 3},
                                    bench=BenchSpec(sizes=(12,), quick_sizes=(12,)),
                                    description="a fake for the registry test"))
    assert "fake-heft" in registry.names() and registry.origin("fake-heft") == "builtin"
    listed = CliRunner().invoke(app, ["list"])
    assert listed.exit_code == 0
    assert _row(listed.stdout, "fake-heft")[1:3] == ["static", "a fake for the registry test"]

    checked = CliRunner().invoke(app, ["check", "fake-heft", "-n", "3"])
    assert checked.exit_code == 0, checked.output
    assert "fake-heft: passed" in checked.output

    from simsched.bench.quality import static_schedulers
    from simsched.bench.schedulers import time_schedulers

    assert "fake-heft" in static_schedulers()
    keep = {k: v for k, v in registry.SPECS.items() if k in ("heft", "fake-heft")}
    registry.SPECS.clear()
    registry.SPECS.update(keep)
    rows = time_schedulers((20,), m=4, quick=True)
    assert [(r["scheduler"], r["tasks"]) for r in rows] == [("fake-heft", 12), ("heft", 20)]
    assert all(r["makespan"] > 0 for r in rows)


def test_an_autotune_spec_is_listed_and_its_contract_finds_the_defect(fake_module: str) -> None:
    registry.register(SchedulerSpec("crowding", f"{fake_module}:Crowding", "autotune"))
    assert "crowding" not in registry.names()  # not a task-graph scheduler
    assert "crowding" in registry.names(registry.KINDS) and "crowding" in registry.AUTOTUNE_POLICIES
    listed = CliRunner().invoke(app, ["list"])
    assert _row(listed.stdout, "crowding")[1] == "autotune"
    checked = CliRunner().invoke(app, ["check", "crowding", "-n", "30"])
    assert checked.exit_code == 1, checked.output
    assert "conflict-free" in checked.output and "defect" in checked.output


def test_every_builtin_autotune_policy_meets_its_contract() -> None:
    from simsched.testing.autotune_contract import check_autotune_policy

    policies = registry.names(("autotune",))
    assert policies == ["sequential", "uncontrolled", "dedicated", "load-aware", "predictive"]
    for name in policies:
        check_autotune_policy(name, examples=6, seed=2).raise_if_failed()


def test_kinds_do_not_mix() -> None:
    with pytest.raises(SimschedError, match="'load-aware' is an autotuning policy: name it in an autotuning"):
        registry.create("load-aware")
    with pytest.raises(SimschedError, match="'heft' is a static scheduler"):
        registry.create("heft", kinds=("autotune",))
    assert registry.create("load-aware", kinds=("autotune",)).name == "load-aware"


def test_specs_are_checked_when_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "SPECS", dict(registry.SPECS))
    with pytest.raises(ValueError, match="kind 'gang'"):
        SchedulerSpec("x", "m:C", "gang")
    with pytest.raises(ValueError, match="not 'module:Class'"):
        SchedulerSpec("x", "m.C", "static")
    with pytest.raises(ValueError, match="already registered"):
        registry.register(SchedulerSpec("heft", "m:C", "static"))
    registry.register(SchedulerSpec("heft", "simsched.schedulers.cpop:CPOP", "static"), replace=True)
    assert type(registry.create("heft")).__name__ == "CPOP"


def test_every_fact_lives_in_the_spec() -> None:
    ga, optimal, lst = registry.spec("ga"), registry.spec("optimal"), registry.spec("list")
    assert registry.check_hints("ga") == {"max_tasks": 8, "max_processors": 3, "examples": 4}
    assert registry.check_params("ga") == {"population": 16, "generations": 15}
    assert registry.check_params("heft") == {}
    assert ga.bench.sizes_for(True) == (100,) and ga.bench.sizes_for(False) == (100, 486)
    assert ga.bench.params_for(True)["generations"] == 5 and ga.quality_params(True)["population"] == 16
    assert optimal.quality is None and lst.quality is None  # references / named points, not quality rows
    assert [s.name for s in registry.specs() if "learned" in s.extras] == ["deepsched", "rl", "rl-world"]
    assert list(registry.BUILTIN) == registry.names()[:len(registry.BUILTIN)]


def test_the_docs_table_lists_every_spec() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "schedulers.md").read_text(encoding="utf-8")
    for spec in registry.specs():
        assert f"| `{spec.name}` | {spec.kind} |" in text


def test_a_scenario_cannot_name_an_autotuning_policy(tmp_path: Path) -> None:
    scenario = tmp_path / "mixed.yaml"
    scenario.write_text("name: mixed\nplatform:\n  processors: [{name: p0}, {name: p1}]\n"
                        "workload:\n  generator: random\n  tasks: 5\nschedulers: [heft, load-aware]\n")
    result = CliRunner().invoke(app, ["validate", str(scenario)])
    assert result.exit_code == 2
    assert f"{scenario}:7: schedulers[1]: 'load-aware' is an autotuning policy" in result.stderr
    fixed = scenario.read_text().replace(", load-aware", "")
    scenario.write_text(fixed)
    run = CliRunner().invoke(app, ["run", str(scenario), "-s", "predictive"])
    assert run.exit_code == 2 and "--scheduler: 'predictive' is an autotuning policy" in run.stderr
