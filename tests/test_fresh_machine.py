"""A fresh machine (issue 29): declared dependencies that hold, and a command line that keeps its promises
whatever versions of typer/click pip picks.

* no module of simsched assigns into another package's modules or classes (the private typer attribute
  that broke every command with typer 0.27 is the case that made this a rule);
* usage mistakes (unknown option, missing argument, bad value, unknown command) end as ONE line
  ``error: ...`` and exit code 2, not a boxed panel;
* ``.ci/lowest_constraints.py`` pins every floor of pyproject.toml (CI's lowest-versions lane installs them);
* the build-system floor holds for what pyproject.toml uses.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simsched.cli.main import app

tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11+")
ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def foreign_assignments(source: str, filename: str = "<string>") -> list[str]:
    """Assignments (``=``, ``+=``, ``setattr``/``delattr``) whose target is an attribute reached from a name
    imported from another package than simsched: ``typer.core.TyperOption.x = ...``, ``setattr(np, ...)``.
    O(size of the source)."""
    tree = ast.parse(source, filename)
    imported: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "simsched":
                    imported[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] != "simsched":
            for alias in node.names:
                imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def root(expr: ast.expr) -> str | None:
        while isinstance(expr, ast.Attribute):
            expr = expr.value
        return expr.id if isinstance(expr, ast.Name) else None

    def spine(target: ast.expr) -> list[ast.expr]:  # what an assignment rebinds (not what an index reads)
        if isinstance(target, (ast.Tuple, ast.List)):
            return [t for e in target.elts for t in spine(e)]
        return spine(target.value) if isinstance(target, ast.Starred) else [target]

    hits = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("setattr", "delattr") and node.args:
            targets = [ast.Attribute(value=node.args[0], attr="(setattr)")]
        for target in targets:
            for sub in spine(target):
                if isinstance(sub, ast.Attribute) and root(sub) in imported:
                    hits.append(f"{filename}:{node.lineno}: {ast.unparse(sub)} (from {imported[root(sub)]})")
    return hits


def test_the_check_finds_the_assignment_that_broke_typer_027() -> None:
    patched = ("import typer.core\n"
               "def f(self, ctx):\n    return None\n"
               "typer.core.TyperOption.display_type_rich = f\n")
    assert len(foreign_assignments(patched)) == 1
    assert len(foreign_assignments("from rich import console\nsetattr(console, 'x', 1)\n")) == 1
    assert len(foreign_assignments("import numpy as np\nnp.seterr = None\n")) == 1
    # our own objects, locals and instances are fine
    assert foreign_assignments("import numpy as np\nclass A:\n    pass\na = A()\na.x = np.zeros(3)\n") == []
    assert foreign_assignments("from simsched import limits\nlimits.X = 1\n") == []


def test_no_module_assigns_into_another_package() -> None:
    hits = [h for f in sorted((ROOT / "simsched").rglob("*.py"))
            for h in foreign_assignments(f.read_text(encoding="utf-8"), str(f.relative_to(ROOT)))]
    assert hits == [], "\n".join(hits)


@pytest.mark.parametrize(("args", "says"), [
    (["run", "--bogus", "x.yaml"], "No such option"),
    (["run"], "scenario"),
    (["run", "scenarios/quickstart.yaml", "--repetitions", "abc"], "--repetitions"),
    (["no-such-command"], "no-such-command"),
    (["--bogus"], "--bogus"),
    (["workload", "info"], "source"),
])
def test_usage_mistakes_end_as_one_error_line(args: list[str], says: str) -> None:
    result = CliRunner().invoke(app, args)
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert says.lower() in lines[0].lower() and "--help" in lines[0]  # what was wrong, and where to look


def test_no_arguments_still_shows_the_help() -> None:
    result = CliRunner().invoke(app, [])
    assert "run" in result.output and "validate" in result.output and not result.output.startswith("error:")


def test_usage_mistake_in_a_real_process_is_one_line() -> None:
    proc = subprocess.run([sys.executable, "-m", "simsched.cli.main", "validate"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: "), proc.stderr


def _floors(requirements: list[str]) -> dict[str, str]:
    out = {}
    for req in requirements:
        m = re.match(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*(?:>=|==)\s*([0-9][0-9A-Za-z.]*)", req)
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def test_lowest_constraints_pin_every_declared_floor() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / ".ci" / "lowest_constraints.py"), "testing"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    pins = dict(line.split("==", 1) for line in proc.stdout.splitlines() if line and not line.startswith("#"))
    project = PYPROJECT["project"]
    wanted = _floors(project["dependencies"] + project["optional-dependencies"]["testing"])
    assert pins == wanted
    assert {"typer", "numpy", "pydantic", "pytest", "hypothesis"} <= set(pins)


def test_lowest_constraints_refuse_an_unknown_extra() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / ".ci" / "lowest_constraints.py"), "nosuch"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.startswith("error: no extra 'nosuch'")


def test_build_system_floor_holds_for_the_license_field() -> None:
    requires = " ".join(PYPROJECT["build-system"]["requires"])
    floor = re.search(r"setuptools\s*>=\s*(\d+)", requires)
    assert floor, requires
    if isinstance(PYPROJECT["project"].get("license"), str):  # an SPDX expression (PEP 639): setuptools 77+
        assert int(floor.group(1)) >= 77


def test_ci_runs_the_readme_command_verbatim_in_its_own_venv() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = "pip install torch==2.13.0 && pip install -e '.[dev]' && pytest -q -n auto"
    assert f"\n{command}\n" in readme and f"  {command}\n" in ci
    assert "-m venv" in ci and "lowest_constraints.py" in ci and "-m smoke" in ci


def test_slow_and_smoke_lists_name_tests_that_exist() -> None:
    from conftest import SLOW, SMOKE_FILES

    tests = ROOT / "tests"
    for entry in SLOW:
        file, name = entry.split("::")
        tree = ast.parse((tests / file).read_text(encoding="utf-8"))
        assert name in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}, entry
    assert all((tests / f).is_file() for f in SMOKE_FILES)
    pyproject_markers = " ".join(PYPROJECT["tool"]["pytest"]["ini_options"]["markers"])
    assert all(f"{m}:" in pyproject_markers or f"{m}(" in pyproject_markers for m in ("slow", "smoke", "extra"))


IMPORT_NAMES = {"yaml": "pyyaml", "distributed": "dask", "importlinter": "import-linter"}
"""Import names whose distribution on the registry is called otherwise."""


def test_every_package_simsched_imports_is_declared() -> None:
    """An import of a package pyproject.toml does not declare works only where something else brought it
    (``click``, which typer 0.2x no longer installs, broke ``simsched explain cpop`` on a fresh venv)."""
    project = PYPROJECT["project"]
    declared = {re.split(r"[\[<>=!~ ;]", r, maxsplit=1)[0].lower()
                for r in project["dependencies"] + [r for rs in project["optional-dependencies"].values() for r in rs]}
    undeclared = set()
    for f in sorted((ROOT / "simsched").rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top != "simsched" and top not in sys.stdlib_module_names \
                        and IMPORT_NAMES.get(top, top).lower() not in declared:
                    undeclared.add(f"{f.relative_to(ROOT)}: {top}")
    assert not undeclared, sorted(undeclared)
