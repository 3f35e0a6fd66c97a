"""The house cannot silently decay: every import inside simsched goes down a floor (docs/architecture.md).

An ``ast`` walk over every module of the package — module-level and function-local imports alike,
relative ones resolved — maps each import to the floor of its package and fails on an upward import,
on an import between two packages of one floor, and on any import cycle (between packages, or between
modules).  The same floors are an import-linter ``layers`` contract in ``pyproject.toml``, checked here
too when import-linter is installed (an independent import graph: grimp's).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "simsched"

FLOORS: dict[str, int] = {
    "cli": 9,
    "report": 8, "bench": 8,
    "study": 7, "testing": 7, "learned": 7, "analysis": 7,
    "capacity": 6, "fidelity": 6,
    "run": 5,
    "scenario": 4,
    "schedulers": 3,
    "simulator": 2,
    "workloads": 1,
    "ground": 0,
}
GROUND = ("errors", "limits", "fileio", "outputlock", "outputs", "yamlio", "extras", "checkpoints", "stats", "readonly")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_of(module: str) -> str:
    """``cli``, ``report``, ... for a module of a floor package; ``ground`` for the ground modules and
    the package root (which holds only the version)."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in GROUND:
        return "ground"
    if parts[1] not in FLOORS:
        raise AssertionError(f"{module}: package {parts[1]!r} has no floor: add it to the house "
                             f"(tests/test_layers.py, pyproject.toml, docs/architecture.md)")
    return parts[1]


def imports_of(path: Path, modules: set[str]) -> list[tuple[int, str]]:
    """``(line, module)`` of every simsched module ``path`` imports, wherever the import statement is."""
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from simsched.x import y``: y may be a module of its own
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # ``import simsched.a.b`` names a module or its parent
                target = target.rpartition(".")[0]
            if target and target != me:
                found.append((node.lineno, target))
    return found


def import_graph() -> dict[str, list[tuple[int, str]]]:
    files = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(f) for f in files}
    return {module_name(f): imports_of(f, modules) for f in files}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative).  O(V + E)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def violations(graph: dict[str, list[tuple[int, str]]]) -> list[str]:
    """Every upward or sideways import of ``graph`` (module -> ``(line, imported module)``), as text."""
    bad = []
    for module, imports in graph.items():
        src = package_of(module)
        for line, target in imports:
            dst = package_of(target)
            if dst == src:
                continue
            if FLOORS[dst] > FLOORS[src]:
                bad.append(f"{module}:{line} imports {target}: up from floor {FLOORS[src]} to {FLOORS[dst]}")
            elif FLOORS[dst] == FLOORS[src]:
                bad.append(f"{module}:{line} imports {target}: sideways on floor {FLOORS[src]} ({src} -> {dst})")
    return bad


def test_every_import_goes_down_a_floor() -> None:
    bad = violations(import_graph())
    assert not bad, "imports against the house:\n" + "\n".join(bad)


def test_the_rule_catches_up_and_sideways_imports() -> None:
    graph = {"simsched.run.runner": [(3, "simsched.learned.training_range"), (4, "simsched.simulator.engine"),
                                     (5, "simsched.errors"), (6, "simsched.run.results")],
             "simsched.bench.dispatch": [(9, "simsched.report.numbers")],
             "simsched.errors": [], "simsched.limits": [(1, "simsched.errors")]}
    assert violations(graph) == [
        "simsched.run.runner:3 imports simsched.learned.training_range: up from floor 5 to 7",
        "simsched.bench.dispatch:9 imports simsched.report.numbers: sideways on floor 8 (bench -> report)"]
    with pytest.raises(AssertionError, match="package 'plugins' has no floor"):
        package_of("simsched.plugins.x")


def test_no_import_cycles() -> None:
    graph = import_graph()
    modules = {m: {t for _, t in imports} for m, imports in graph.items()}
    packages: dict[str, set[str]] = {}
    for m, targets in modules.items():
        src = package_of(m)
        packages.setdefault(src, set()).update(package_of(t) for t in targets if package_of(t) != src)
    assert _cycles(packages) == [], "import cycles between packages"
    # a package importing its own modules in a circle is a knot too (function-local imports included);
    # a package's __init__ importing its submodules is not a cycle back to itself
    no_init_edges = {m: {t for t in ts if not t.startswith(m + ".") and not m.startswith(t + ".")}
                     for m, ts in modules.items()}
    assert _cycles(no_init_edges) == [], "import cycles between modules"


def test_the_package_root_holds_only_the_version() -> None:
    assert import_graph()["simsched"] == []


def test_the_walk_sees_function_local_and_relative_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "simsched"
    (pkg / "run").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "run" / "__init__.py").write_text("")
    (pkg / "cli.py").write_text("")
    (pkg / "run" / "x.py").write_text("def f():\n    from simsched import cli\n    from . import y\n")
    (pkg / "run" / "y.py").write_text("")
    modules = {"simsched", "simsched.run", "simsched.cli", "simsched.run.x", "simsched.run.y"}
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert imports_of(pkg / "run" / "x.py", modules) == [(2, "simsched.cli"), (3, "simsched.run.y")]
    finally:
        ROOT = saved
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_import_linter_contract_holds() -> None:
    pytest.importorskip("importlinter")
    import subprocess

    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = config["contracts"][0]["layers"]
    # "(name)": an optional layer, a package that may not exist yet
    named = [{name.strip().strip("()") for name in layer.replace(":", "|").split("|")} for layer in layers]
    expected = [{p for p, f in FLOORS.items() if f == floor and p != "ground"} or set(GROUND)
                for floor in range(max(FLOORS.values()), -1, -1)]
    assert named == expected, "pyproject.toml's layers differ from this test's floors"
    result = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
                             "lint_imports_command()", "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
