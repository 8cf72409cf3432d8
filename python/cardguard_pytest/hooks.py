"""The plugin's hooks."""

from __future__ import annotations

from typing import Any, Optional

import pytest


@pytest.hookspec(firstresult=True)
def pytest_cardguard_classify(item: pytest.Item, excinfo: Any) -> Optional[str]:
    """The failure class of an item's exception: ``device_runtime``, ``result``,
    ``infrastructure`` or ``usage``; ``None`` leaves it to ``cardguard_device_errors``."""


@pytest.hookspec(firstresult=True)
def pytest_cardguard_health_check(device: int) -> Optional[str]:
    """A team's own post-case check of ``device`` (an SDMA probe): a reason when the card is
    unusable, ``None`` when it passed or has nothing to say."""
