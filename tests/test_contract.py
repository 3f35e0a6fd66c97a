"""Every registered scheduler meets the contract of :func:`simsched.testing.check_scheduler`."""

from __future__ import annotations

import pytest

from simsched.schedulers import registry
from simsched.testing import check_scheduler

EXAMPLES = 8
"""Examples per property; slow schedulers get fewer and smaller ones (their registry spec's check hints),
and cheaper parameters where their defaults are tuned for quality (the spec's ``check_params``)."""


@pytest.mark.parametrize("name", registry.names())
def test_scheduler_meets_the_contract(name: str) -> None:
    check_scheduler(name, examples=EXAMPLES, seed=1, params=registry.check_params(name)).raise_if_failed()
