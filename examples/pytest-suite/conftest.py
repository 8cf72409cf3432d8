"""The pooled worker: one Worker per (runtime, card) for the life of a process.

Under cardguard (or with pytest-cardguard installed) it is the plugin's healed ``cardguard_pool``.
Without the plugin (``-p no:cardguard``) it is the seed's cache as it was: kept for the life of
the xdist worker, never dropped, so one op-timeout poisons every later test of that worker."""

from __future__ import annotations

import os
from typing import Any

import pytest

from device import Worker

_SEED_POOL: dict = {}


def _device(config: pytest.Config) -> int:
    dev = config.getoption("cardguard_device", default=None) if config.pluginmanager.has_plugin("cardguard_pytest.lane") else None
    if dev is not None:
        return int(dev)
    wid = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(wid[2:]) if wid.startswith("gw") else 0


def _runtime(request: pytest.FixtureRequest) -> str:
    for m in request.node.iter_markers("cardguard"):
        if "runtime" in m.kwargs:
            return str(m.kwargs["runtime"])
    return "default"


@pytest.fixture
def worker(request: pytest.FixtureRequest) -> Any:
    runtime, device = _runtime(request), _device(request.config)
    if request.config.pluginmanager.has_plugin("cardguard"):
        pool = request.getfixturevalue("cardguard_pool")
        return pool.get(runtime, device, lambda: Worker(runtime, device))
    key = (runtime, device)
    if key not in _SEED_POOL:
        _SEED_POOL[key] = Worker(runtime, device)
    return _SEED_POOL[key]
