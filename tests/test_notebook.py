"""The Python entry point for notebooks: ``simsched.run(path_or_dict) -> Results``.  docs/notebooks.md's code
blocks run in order in one namespace (as a notebook's cells), and the promises they do not show: ``import
simsched`` stays light, ``simsched.run`` is still the package, a missing pandas names its extra, the HTML table
escapes what it shows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import simsched
from simsched.errors import SimschedError

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "notebooks.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)
TINY = {"name": "<tiny & odd>", "platform": {"processors": [{"name": "cpu", "count": 2}]},
        "workload": {"generator": "random", "tasks": 8}, "schedulers": ["heft", "mct"]}


@pytest.mark.extra("notebook")
@pytest.mark.filterwarnings("ignore::simsched.errors.DataRepairWarning")
def test_the_page_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 6
    monkeypatch.chdir(ROOT)
    # hypothesis tests on another xdist worker write their database (.hypothesis) meanwhile: not the page's
    def ours(p: Path) -> bool:
        return p.is_file() and ".git" not in p.parts and ".hypothesis" not in p.parts

    before = {p: p.stat().st_mtime_ns for p in ROOT.rglob("*") if ours(p)}
    namespace: dict = {}
    for k, code in enumerate(blocks):
        exec(compile(code, f"{PAGE.name} block {k + 1}", "exec"), namespace)  # noqa: S102
    after = {p: p.stat().st_mtime_ns for p in ROOT.rglob("*") if ours(p)}
    assert {p for p in after if before.get(p) != after[p] and "__pycache__" not in p.parts} == set()
    import matplotlib.pyplot as plt

    plt.close("all")


def test_import_simsched_stays_light_and_run_is_reached_lazily() -> None:
    code = ("import sys, simsched; "
            "print(sorted(m for m in ('torch', 'matplotlib', 'pandas', 'numpy', 'simsched.run') if m in sys.modules)); "
            "print(callable(simsched.run), type(simsched.run).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split("\n")[:2] == ["[]", "True _CallablePackage"]


def test_the_package_stays_a_package_beside_the_call() -> None:
    from simsched.run.runner import run_scenario

    assert callable(simsched.run) and simsched.run.runner.run_scenario is run_scenario
    results = simsched.run(TINY, seed=2)
    assert [r["scheduler"] for r in results.rows] == ["heft", "mct"] and results.kind == "graph"
    assert results.document()["results"][0]["schedule"][0]["task"]  # the --json document, records as dicts
    html = results._repr_html_()
    assert "&lt;tiny &amp; odd&gt;" in html and "<tiny" not in html and html.count("<tr>") == 3


def test_bad_arguments_are_refused_like_the_command_line() -> None:
    with pytest.raises(SimschedError, match="path or a dict"):
        simsched.run(42)
    with pytest.raises(SimschedError, match="repetitions must be >= 1"):
        simsched.run(TINY, repetitions=0)
    with pytest.raises(SimschedError, match="no such file"):
        simsched.run("no/such/scenario.yaml")
    with pytest.raises(SimschedError, match=r"to_pandas\('jobs'\): this run \(graph\) has results, schedule"):
        simsched.run(TINY).to_pandas("jobs")


def test_to_pandas_without_pandas_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    results = simsched.run(TINY)
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` now raises ImportError
    with pytest.raises(SimschedError, match=r"optional package 'pandas': pip install -e '.*\[notebook\]'"):
        results.to_pandas()
    assert results.rows and results.summary()  # everything else works without it
