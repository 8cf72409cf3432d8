"""An item's cardguard identity and settings: its class (the module's dotted path, with
``.Class`` for a method), its case name (the function with its parameters), and the
``cardguard`` marker's runtime, cards, timeout and retries (the item's own over its class's)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

import pytest

DEFAULT_RUNTIME = "default"

# Markers that are pytest's own, never tags.
_NOT_TAGS = {"cardguard", "skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings"}

_UNSAFE = re.compile(r"[\s:]")


@dataclass
class Case:
    """One item as cardguard sees it (what the collect plugin writes, one JSON object each)."""

    nodeid: str
    cls: str
    case: str
    module: str
    runtime: str = DEFAULT_RUNTIME
    devices: int = 1
    timeout: Optional[float] = None
    retries: Optional[int] = None
    tags: list[str] = field(default_factory=list)
    skip: Optional[str] = None
    xfail: Optional[str] = None

    @property
    def id(self) -> str:
        """``Class::case``, the id the dispatcher assigns."""
        return f"{self.cls}::{self.case}"

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["class"] = d.pop("cls")
        return d


def _safe(name: str) -> str:
    return _UNSAFE.sub("_", name)


def _module_path(item: pytest.Item) -> str:
    path = item.nodeid.split("::", 1)[0]
    if path.endswith(".py"):
        path = path[:-3]
    return _safe(path.strip("/").replace("/", "."))


def _marker_settings(item: pytest.Item) -> dict[str, Any]:
    """The ``cardguard`` markers' keywords, closest last so they win (class, then function)."""
    merged: dict[str, Any] = {}
    for m in reversed(list(item.iter_markers("cardguard"))):
        merged.update(m.kwargs)
    return merged


def _skip_reason(item: pytest.Item) -> Optional[str]:
    for m in item.iter_markers("skip"):
        return str(m.kwargs.get("reason", m.args[0] if m.args else "skipped"))
    for m in item.iter_markers("skipif"):
        conds = m.args or (m.kwargs.get("condition"),)
        for c in conds:
            if isinstance(c, str):
                continue  # string conditions are pytest's to evaluate in the lane
            if c:
                return str(m.kwargs.get("reason", "skipif"))
    return None


def _xfail_reason(item: pytest.Item) -> Optional[str]:
    for m in item.iter_markers("xfail"):
        return str(m.kwargs.get("reason", "xfail"))
    return None


def case_of(item: pytest.Item) -> Case:
    """The cardguard case of ``item``."""
    module = _module_path(item)
    parts = item.nodeid.split("::")
    cls = module if len(parts) < 3 else module + "." + _safe(".".join(parts[1:-1]))
    s = _marker_settings(item)
    tags = sorted(
        {
            m.name
            for m in item.iter_markers()
            if m.name not in _NOT_TAGS and re.fullmatch(r"[A-Za-z0-9_-]+", m.name)
        }
    )
    timeout = s.get("timeout")
    retries = s.get("retries")
    return Case(
        nodeid=item.nodeid,
        cls=cls,
        case=_safe(parts[-1]),
        module=module,
        runtime=str(s.get("runtime", DEFAULT_RUNTIME)),
        devices=int(s.get("devices", 1)),
        timeout=float(timeout) if timeout is not None else None,
        retries=int(retries) if retries is not None else None,
        tags=tags,
        skip=_skip_reason(item),
        xfail=_xfail_reason(item),
    )
