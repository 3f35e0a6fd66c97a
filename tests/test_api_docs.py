"""The API reference (docs/api/, mkdocs + mkdocstrings): every example runs, every documented class has one,
every public name it shows has a docstring, and ``mkdocs build --strict`` succeeds without a warning."""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api"
PAGES = sorted(API.glob("*.md"))
DIRECTIVE = re.compile(r"^::: ([\w.]+)\s*$", re.M)
CLASSES = {"Problem", "Plan", "Schedule", "DecisionView", "StaticPlanner", "OnlinePolicy", "ProblemSpace"}
"""The classes a scheduler author meets; each needs a runnable example in the reference."""


def _documented() -> list[str]:
    return [name for page in PAGES for name in DIRECTIVE.findall(page.read_text(encoding="utf-8"))]


def _resolve(dotted: str) -> object:
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for attr in parts[k:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_example_on_the_page_runs(page: Path) -> None:
    result = doctest.testfile(str(page), module_relative=False, verbose=False, report=True,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 3, f"{page.name} has no examples"
    assert result.failed == 0, f"{page.name}: {result.failed} of {result.attempted} examples failed"


def test_the_author_facing_names_are_on_pages_with_examples() -> None:
    documented = _documented()
    for name in ("simsched.simulator.problem.Problem", "simsched.simulator.schedule.Plan",
                 "simsched.simulator.schedule.Schedule", "simsched.simulator.policy.DecisionView",
                 "simsched.simulator.policy.StaticPlanner", "simsched.simulator.policy.OnlinePolicy",
                 "simsched.schedulers.registry", "simsched.testing.contract.check_scheduler",
                 "simsched.testing.strategies"):
        assert name in documented, f"{name} has no page"
    examples = {page.name: "\n".join(line for line in page.read_text(encoding="utf-8").splitlines()
                                     if line.startswith((">>>", "...")))
                for page in PAGES}
    for cls in CLASSES:
        pages = [p.name for p in PAGES if re.search(rf"^::: [\w.]*\b{cls}\b", p.read_text(), re.M) or
                 (cls == "ProblemSpace" and "::: simsched.testing.strategies" in p.read_text())]
        assert pages, f"{cls} is on no page"
        assert any(re.search(rf"\b{cls}\b", examples[p]) for p in pages), f"{cls}: no example uses it"


def test_every_public_name_shown_has_a_docstring() -> None:
    missing = []
    for dotted in _documented():
        obj = _resolve(dotted)
        if not inspect.getdoc(obj):
            missing.append(dotted)
        if inspect.ismodule(obj):
            members = [(n, m) for n, m in vars(obj).items() if not n.startswith("_") and
                       (inspect.isfunction(m) or inspect.isclass(m)) and getattr(m, "__module__", "") == obj.__name__]
        elif inspect.isclass(obj):
            members = [(n, m) for n, m in vars(obj).items() if not n.startswith("_") and
                       (inspect.isfunction(m) or isinstance(m, (property, staticmethod, classmethod)))]
        else:
            members = []
        for name, member in members:
            target = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
            if not (target.__doc__ or "").strip():
                missing.append(f"{dotted}.{name}")
    assert not missing, f"public names without a docstring: {missing}"


def test_mkdocs_build_is_strict_and_silent(tmp_path: Path) -> None:
    pytest.importorskip("mkdocstrings", reason="the `docs` extra (in `dev`) installs mkdocs + mkdocstrings")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    assert "WARNING" not in log, log
    html = (tmp_path / "site" / "interfaces" / "index.html").read_text(encoding="utf-8")
    for name in ("StaticPlanner", "OnlinePolicy", "DecisionView", "completion_times", "data_ready"):
        assert name in html
    assert "check_scheduler" in (tmp_path / "site" / "testing" / "index.html").read_text(encoding="utf-8")
    leaks = [f"{page.relative_to(tmp_path)}: {m.group(0)}" for page in (tmp_path / "site").rglob("*.html")
             for m in RST_LEAK.finditer(page.read_text(encoding="utf-8"))]
    assert not leaks, f"reStructuredText markup on the API site: {leaks[:5]}"


RST_LEAK = re.compile(r":(?:meth|func|class|mod|data|attr|exc|obj):(?:<code>|`)|``")
"""RST roles and double-backtick literals as they would show on a rendered page or in a terminal."""
