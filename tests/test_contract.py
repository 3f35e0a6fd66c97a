"""Every registered scheduler meets the contract of :func:`simsched.testing.check_scheduler`."""

from __future__ import annotations

import pytest

from simsched.schedulers import registry
from simsched.testing import check_scheduler

EXAMPLES = 8
"""Examples per property; slow schedulers get fewer and smaller ones (registry.CHECK_HINTS)."""

PARAMS = {"ga": {"population": 16, "generations": 15}}
"""Cheaper settings for schedulers whose defaults are tuned for quality, not for many small runs."""


@pytest.mark.parametrize("name", registry.names())
def test_scheduler_meets_the_contract(name: str) -> None:
    check_scheduler(name, examples=EXAMPLES, seed=1, params=PARAMS.get(name)).raise_if_failed()
