"""mkdocs hook for the API site: docstrings are written with reStructuredText roles (``:meth:`~a.b.c```),
which markdown renders as ``:meth:`` before a code span; this shows the code span alone, with the last
component for a ``~`` target, as Sphinx would (``tests/test_api_docs.py`` greps the built pages)."""

from __future__ import annotations

import re
from typing import Any

ROLE = re.compile(r":(?:py:)?(?:meth|func|class|mod|data|attr|exc|obj|const|ref|doc|term):<code>(~?)([^<]*)</code>")


def _code(m: re.Match[str]) -> str:
    target = m.group(2)
    return f"<code>{target.rsplit('.', 1)[-1] if m.group(1) else target}</code>"


def on_page_content(html: str, **_: Any) -> str:
    """The page's HTML with every RST role prefix removed (O(len(html)))."""
    return ROLE.sub(_code, html)
