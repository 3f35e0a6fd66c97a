"""Every install hint simsched prints or documents is a command that works from the checkout.

simsched is not on a package registry, so ``pip install 'simsched[x]'`` fails for a user; hints must be
``pip install -e '<checkout>[x]'`` (PyTorch's pinned CPU build first for the extras that bring torch), and the
extra named must exist in pyproject.toml and hold the package the feature needs.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest
import tomllib

from simsched import extras
from simsched.errors import SimschedError

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
EXTRAS: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]

# the pip distribution that provides each module a hint is printed for
PROVIDES = {"torch": "torch", "ortools": "ortools", "distributed": "dask", "pyarrow": "pyarrow", "onnx": "onnx",
            "pydot": "pydot", "wfcommons": "wfcommons", "gymnasium": "gymnasium", "hypothesis": "hypothesis",
            "pandas": "pandas", "sb3_contrib": "sb3-contrib", "stable_baselines3": "stable-baselines3"}


def _dist(requirement: str) -> str:
    return re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0].lower()


def _sources() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "simsched").rglob("*.py"))]
    # extras.py writes the hints from parts (checked through install_hint below)
    return [f for f in files if f.is_file() and f.name != "extras.py"]


def _hints_in_text() -> list[tuple[Path, str]]:
    """Every ``pip install ...`` command written in the docs, the README and the package's source."""
    found = []
    for f in _sources():
        for match in re.finditer(r"pip install [^`\n\"]*", f.read_text(encoding="utf-8")):
            found.append((f, match.group(0).strip()))
    return found


def _hints_in_code() -> list[tuple[str, str]]:
    """(extra, hint) for every extra the code asks for through :mod:`simsched.extras`."""
    asked = {extras.LEARNED[1]}
    for f in (ROOT / "simsched").rglob("*.py"):
        text = f.read_text(encoding="utf-8")
        asked |= set(re.findall(r"install_hint\(['\"](\w+)['\"]\)", text))
        asked |= set(re.findall(r"require_extra\(\s*['\"][\w.]+['\"],\s*['\"](\w+)['\"]", text))
    return [(extra, extras.install_hint(extra)) for extra in sorted(asked)]


def _check_command(command: str, where: str) -> list[str]:
    """The extras a hint installs, after checking each step of it is an installable command."""
    named = []
    for step in command.split("&&"):
        words = shlex.split(step.split(" #")[0].strip().rstrip(".,;:)"))
        if words[:1] != ["pip"]:
            continue  # the command the install is chained to (`&& pytest -q`)
        assert words[:2] == ["pip", "install"], f"{where}: {command!r} is not a pip install"
        args = [w for w in words[2:] if not w.startswith("-")]
        for arg in args:
            assert not arg.startswith("simsched["), f"{where}: {command!r} names a package no registry holds"
            target = re.fullmatch(r"(.*?)(?:\[([\w,]+)\])?", arg)
            path, extra_list = target.group(1), target.group(2)
            if path.startswith("torch"):
                continue  # the pinned CPU build: an ordinary registry package
            if path in (".", str(ROOT)) or path.startswith("tests/fixtures/"):
                assert "-e" in words, f"{where}: {command!r} installs the checkout without -e"
                assert (ROOT / path / "pyproject.toml").is_file() or path == str(ROOT)
                named += (extra_list or "").split(",") if extra_list else []
            else:
                pytest.fail(f"{where}: {command!r} installs {arg!r}, which is neither the checkout nor torch")
    return named


def test_every_documented_hint_installs_from_the_checkout() -> None:
    hints = _hints_in_text()
    assert len(hints) >= 8  # README, getting-started, rl.md, workloads.md, studies.md ... all collected
    for f, command in hints:
        for extra in _check_command(command, str(f.relative_to(ROOT))):
            assert extra in EXTRAS, f"{f}: {command!r} names extra {extra!r}, not in pyproject.toml"
            if extra in extras.TORCH_EXTRAS:
                assert command.startswith(f"pip install {extras.TORCH_PIN} && "), f"{f}: {command!r}"


def test_every_printed_hint_names_an_extra_holding_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    code_hints = _hints_in_code()
    assert {"learned", "exact", "study", "workflows", "onnx", "dot"} <= {e for e, _ in code_hints}
    for extra, hint in code_hints:
        assert _check_command(hint, f"install_hint({extra!r})") == [extra]
        assert extra in EXTRAS
    # the module each require_extra call imports is provided by the extra its hint names
    for f in (ROOT / "simsched").rglob("*.py"):
        for module, extra in re.findall(r"require_extra\(\s*['\"]([\w.]+)['\"],\s*['\"](\w+)['\"]",
                                        f.read_text(encoding="utf-8")):
            dist = PROVIDES[module.split(".")[0]]
            assert dist in {_dist(r) for r in EXTRAS[extra]}, f"{f}: extra {extra!r} lacks {dist}"
    assert {"torch", "gymnasium"} <= {_dist(r) for r in EXTRAS["rl"]}  # the rl extra brings torch
    assert "torch" in {_dist(r) for r in EXTRAS["learned"]}
    for extra in ("exact", "study"):
        assert {"exact": "ortools", "study": "dask"}[extra] in {_dist(r) for r in EXTRAS[extra]}
    # dev holds every other extra's packages
    dev = {_dist(r) for r in EXTRAS["dev"]}
    for extra, reqs in EXTRAS.items():
        if extra != "dev":
            assert {_dist(r) for r in reqs} <= dev, f"dev lacks {extra}"


def test_hint_uses_dot_inside_the_checkout_and_its_path_elsewhere(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert extras.install_hint("exact") == "pip install -e '.[exact]'"
    assert extras.install_hint("rl") == "pip install torch==2.13.0 && pip install -e '.[rl]'"
    monkeypatch.chdir(tmp_path)
    assert extras.install_hint("exact") == f"pip install -e '{ROOT}[exact]'"


def test_missing_module_error_ends_with_the_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pydot", None)
    with pytest.raises(SimschedError) as info:
        extras.require_extra("pydot", "dot", "reading DOT files")
    assert str(info.value).endswith(extras.install_hint("dot"))
    assert "\n" not in str(info.value)
