"""The always-loaded part (entry point ``cardguard``): the ``cardguard`` marker, the
``cardguard_device_errors`` ini key, the hooks, and the ``cardguard_pool`` fixture. Under plain
pytest the pool heals too (a worker that raised a declared device error is dropped); the lane
(:mod:`cardguard_pytest.lane`) adds the card's check, its reset and the fresh-process exit."""

from __future__ import annotations

from typing import Any, Generator

import pytest

from cardguard_pytest import classify, hooks
from cardguard_pytest.pool import Pool

_POOL = pytest.StashKey[Pool]()
_TYPES = pytest.StashKey[tuple]()
CLASS = pytest.StashKey[str]()


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hooks)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "cardguard_device_errors",
        "exception types (module.Type) that are device errors: the pool drops the worker, "
        "cardguard retries the item",
        type="linelist",
        default=[],
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "cardguard(runtime=..., devices=1, timeout=None, retries=None): the item's cardguard settings",
    )
    config.stash[_POOL] = Pool()
    names = [n for line in config.getini("cardguard_device_errors") for n in line.replace(",", " ").split()]
    config.stash[_TYPES] = classify.load_types(names)


def pytest_unconfigure(config: pytest.Config) -> None:
    pool = config.stash.get(_POOL, None)
    if pool is not None:
        pool.retire_all()


def device_types(config: pytest.Config) -> tuple:
    return config.stash[_TYPES]


def pool_of(config: pytest.Config) -> Pool:
    return config.stash[_POOL]


@pytest.fixture
def cardguard_pool(request: pytest.FixtureRequest) -> Pool:
    """The lane's worker pool: ``cardguard_pool.get(runtime, device, factory)``."""
    return pool_of(request.config)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Generator[None, Any, None]:
    outcome = yield
    rep = outcome.get_result()
    if call.excinfo is None or not rep.failed:
        return
    cls = classify.classify(item, call.excinfo, device_types(item.config))
    if CLASS not in item.stash:
        item.stash[CLASS] = cls
    if cls == classify.DEVICE:
        pool_of(item.config).retire_used()


def pytest_runtest_setup(item: pytest.Item) -> None:
    pool_of(item.config).begin_item()
