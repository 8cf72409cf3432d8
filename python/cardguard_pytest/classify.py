"""What is a device error: declared, never guessed from text. The ``cardguard_device_errors`` ini
key lists exception types (``mypkg.DeviceRuntimeError``); the ``pytest_cardguard_classify`` hook
decides anything finer. An assertion error is a result failure."""

from __future__ import annotations

import importlib
from typing import Any, Optional

import pytest

DEVICE = "device_runtime"
RESULT = "result"
INFRA = "infrastructure"
USAGE = "usage"
CLASSES = (DEVICE, RESULT, INFRA, USAGE)


def _bad_entry(text: str) -> pytest.UsageError:
    """A ``cardguard_device_errors`` entry that names no exception type: a usage error."""
    return pytest.UsageError(text)


def load_types(names: list[str]) -> tuple[type[BaseException], ...]:
    out: list[type[BaseException]] = []
    for name in names:
        mod, _, attr = name.rpartition(".")
        if not mod:
            raise _bad_entry(f"cardguard_device_errors: {name!r} is not module.Type")
        try:
            t = getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError) as e:
            raise _bad_entry(f"cardguard_device_errors: {name!r}: {e}") from None
        if not (isinstance(t, type) and issubclass(t, BaseException)):
            raise _bad_entry(f"cardguard_device_errors: {name!r} is not an exception type")
        out.append(t)
    return tuple(out)


def classify(item: pytest.Item, excinfo: Any, device_types: tuple[type[BaseException], ...]) -> str:
    """The failure class of ``excinfo`` raised by ``item``."""
    hooked: Optional[str] = item.config.hook.pytest_cardguard_classify(item=item, excinfo=excinfo)
    if hooked is not None:
        if hooked not in CLASSES:
            raise pytest.UsageError(
                f"pytest_cardguard_classify returned {hooked!r}; expected one of {', '.join(CLASSES)}"
            )
        return hooked
    if device_types and excinfo.errisinstance(device_types):
        return DEVICE
    return RESULT


def code_of(exc: BaseException, attr: str) -> Optional[int]:
    """The CANN code ``exc`` holds in its attribute ``attr`` (``cardguard_error_code_attr``):
    an int that fits a 32-bit code, else none."""
    v = getattr(exc, attr, None) if attr else None
    if isinstance(v, int) and not isinstance(v, bool) and -(2**31) <= v < 2**31:
        return v
    return None
