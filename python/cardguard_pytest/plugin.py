"""The always-loaded part (entry point ``cardguard``): the ``cardguard`` marker, the
``cardguard_device_errors`` and ``cardguard_error_code_attr`` ini keys, the hooks, and the
``cardguard_pool`` fixture. Under plain
pytest the pool heals too (a worker that raised a declared device error is dropped); the lane
(:mod:`cardguard_pytest.lane`) adds the card's check, its reset and the fresh-process exit."""

from __future__ import annotations

from typing import Any, Generator, Optional

import pytest

from cardguard_pytest import classify, hooks
from cardguard_pytest.pool import Pool

_POOL = pytest.StashKey[Pool]()
_TYPES = pytest.StashKey[tuple[type[BaseException], ...]]()
CLASS = pytest.StashKey[str]()
CODE = pytest.StashKey[int]()


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
    parser.addini(
        "cardguard_error_code_attr",
        "the attribute of a device error that holds its CANN code (an int): the attempt carries "
        "it, so cardguard names the fault and takes a card with a hardware fault out at once",
        default="code",
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


def device_types(config: pytest.Config) -> tuple[type[BaseException], ...]:
    return config.stash[_TYPES]


def pool_of(config: pytest.Config) -> Pool:
    return config.stash[_POOL]


@pytest.fixture
def cardguard_pool(request: pytest.FixtureRequest) -> Pool:
    """The lane's worker pool: ``cardguard_pool.get(runtime, device, factory)``."""
    return pool_of(request.config)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    rep = outcome.get_result()
    if call.excinfo is None or not rep.failed:
        return
    cls = classify.classify(item, call.excinfo, device_types(item.config))
    if CLASS not in item.stash:
        item.stash[CLASS] = cls
        code = classify.code_of(call.excinfo.value, str(item.config.getini("cardguard_error_code_attr")))
        if cls == classify.DEVICE and code is not None:
            item.stash[CODE] = code
    if cls == classify.DEVICE:
        pool_of(item.config).retire_used()


def forget_attempt(item: pytest.Item) -> None:
    """Drops what an earlier run of ``item`` left in its stash (a lane runs a retried item
    again): each attempt is judged on its own failure."""
    if CLASS in item.stash:
        del item.stash[CLASS]
    if CODE in item.stash:
        del item.stash[CODE]


def code_of(item: pytest.Item) -> Optional[int]:
    """The CANN code of the attempt's device error, when its exception declared one."""
    return item.stash.get(CODE, None)


def pytest_runtest_setup(item: pytest.Item) -> None:
    pool_of(item.config).begin_item()
