"""The docs cannot rot: generated pages are current, runnable blocks run, links and images resolve.

Runnable blocks: a fenced ``bash`` block right after ``<!-- runnable -->`` (or
``<!-- runnable: VAR=value ... -->``, whose variables are set for the block so that it runs a small
setting) is executed with ``bash -e`` in a scratch directory holding a copy of ``scenarios/`` and
``docs/img/``; it must exit 0 and write only under ``out/`` (or a temporary folder outside the
repository): a block that creates or changes any other file there fails.  User pages (docs/ and the
README) never mention the project's issues ("issue 7").  See docs/index.md, "Conventions".
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from simsched.report import reference_docs as docs_gen

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
USER_PAGES = [*PAGES, ROOT / "README.md"]
ISSUE = re.compile(r"\bissues?\s*#?\s*\d+", re.I)
RUNNABLE = re.compile(r"^<!-- runnable(?::(?P<env>[^>]*))? -->\n```bash\n(?P<body>.*?)^```", re.M | re.S)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
PENDING = {"studies.md", "deepsched.md", "rl.md"}
"""Pages other issues are writing; a link to one is allowed until it exists."""


def _blocks() -> list[tuple[str, dict[str, str], str]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for k, m in enumerate(RUNNABLE.finditer(text)):
            env = dict(item.split("=", 1) for item in (m.group("env") or "").split())
            found.append((f"{page.relative_to(DOCS)}#{k + 1}", env, m.group("body")))
    return found


BLOCKS = _blocks()


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory that looks like the repository root for the commands of the docs."""
    root = tmp_path_factory.mktemp("docs-run")
    shutil.copytree(ROOT / "scenarios", root / "scenarios")
    shutil.copytree(ROOT / "docs" / "img", root / "docs" / "img")
    return root


def _files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` outside ``out/``: relative path -> (size, mtime in ns)."""
    found = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if path.is_file() and rel.parts[0] != "out" and "__pycache__" not in rel.parts:
            stat = path.stat()
            found[str(rel)] = (stat.st_size, stat.st_mtime_ns)
    return found


def test_generated_pages_are_current() -> None:
    from simsched.cli.main import app

    stale = docs_gen.check(app)
    assert not stale, f"stale generated docs {[p.name for p in stale]}: run `simsched docs generate`"


def test_cli_reference_covers_every_command() -> None:
    from simsched.cli.main import app
    from simsched.report.reference_docs import _click_commands

    page = (DOCS / "cli.md").read_text()
    paths = [path for path, _ in _click_commands(app)]
    assert {"simsched run", "simsched validate", "simsched sweep", "simsched train deepsched"} <= set(paths)
    for path in paths:
        assert f"`{path}`" in page and f"Usage: {path}" in page, f"docs/cli.md has no section for {path}"


def test_scenario_reference_examples_validate() -> None:
    from simsched.scenario import schema as scenario

    for name, text in docs_gen.EXAMPLES.items():
        getattr(scenario, name).model_validate(yaml.safe_load(text))


def test_every_builtin_scheduler_is_described() -> None:
    from simsched.schedulers import registry

    text = (DOCS / "schedulers.md").read_text(encoding="utf-8")
    prose = text[:text.index(docs_gen.BEGIN)]
    for name in registry.BUILTIN:
        assert f"`{name}`" in prose, f"docs/schedulers.md has no prose for scheduler {name!r}"
        assert f"#### `{name}` (" in text, f"docs/schedulers.md has no parameter table for {name!r}"


def test_there_are_runnable_blocks() -> None:
    assert len(BLOCKS) >= 10


@pytest.mark.parametrize("label,env,body", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_runnable_block(label: str, env: dict[str, str], body: str, scratch: Path) -> None:
    run_env = {**os.environ, "COLUMNS": "120", **env}
    before = _files(scratch)
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", body], cwd=scratch, env=run_env,
                          capture_output=True, text=True, timeout=300)
    output = f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert done.returncode == 0, f"{label} failed ({done.returncode}):\n{body}\n{output}"
    after = _files(scratch)
    written = sorted(p for p in after if before.get(p) != after[p])
    assert not written, f"{label} writes into the repository ({', '.join(written[:5])}): write to out/ or a temp dir"


@pytest.mark.parametrize("page", USER_PAGES, ids=[str(p.relative_to(ROOT)) for p in USER_PAGES])
def test_user_pages_do_not_mention_issues(page: Path) -> None:
    hits = [m.group(0) for m in ISSUE.finditer(page.read_text(encoding="utf-8"))]
    assert not hits, f"{page.relative_to(ROOT)} mentions {hits[:3]}: docs speak to users, not of the project's history"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_links_and_images_resolve(page: Path) -> None:
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        resolved = (page.parent / path).resolve()
        if not resolved.exists() and resolved.name in PENDING and resolved.parent == DOCS:
            continue
        assert resolved.exists(), f"{page.relative_to(DOCS)}: broken link {target}"
        if path.lower().endswith((".png", ".svg")):
            assert resolved.stat().st_size < 150_000, f"{target}: image too large"


def test_readme_links_to_the_docs() -> None:
    assert "](docs/index.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
