"""Atomic output: complete files with ordinary permissions, nothing left behind on failure."""

from __future__ import annotations

import os
import stat

import pytest

from simsched.fileio import atomic_path, atomic_write_text


def test_written_file_has_ordinary_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        target = atomic_write_text(tmp_path / "out.json", "{}")
    finally:
        os.umask(old)
    assert target.read_text() == "{}"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644  # not mkstemp's private 0600


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "results.json"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]
