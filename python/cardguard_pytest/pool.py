"""The pooled worker, healed: one worker per (runtime, card) for the lane's life, built by the
team's factory; after a device error the workers the failed item used are closed and dropped, so
the next item rebuilds them (the seed's ``_l2_worker_pool`` without its regexes)."""

from __future__ import annotations

from typing import Any, Callable, Hashable


class Pool:
    """Workers by key, built on first use; :meth:`retire_used` drops the current item's."""

    def __init__(self) -> None:
        self._workers: dict[Hashable, Any] = {}
        self._used: set[Hashable] = set()
        self.builds = 0
        self.retired = 0

    def get(self, runtime: str, device: int, factory: Callable[[], Any]) -> Any:
        """The worker of ``(runtime, device)``, built with ``factory()`` when there is none.

        A factory that raises leaves no worker behind (the next call builds again)."""
        key = (runtime, device)
        self._used.add(key)
        w = self._workers.get(key)
        if w is None:
            w = factory()
            self.builds += 1
            self._workers[key] = w
        return w

    def begin_item(self) -> None:
        self._used.clear()

    def retire_used(self) -> list[Hashable]:
        """Closes and drops the workers the current item used (after its device error)."""
        keys = [k for k in self._used if k in self._workers]
        for k in keys:
            _close(self._workers.pop(k))
            self.retired += 1
        return keys

    def retire_all(self) -> None:
        for k in list(self._workers):
            _close(self._workers.pop(k))
            self.retired += 1

    def __len__(self) -> int:
        return len(self._workers)


def _close(worker: Any) -> None:
    close = getattr(worker, "close", None)
    if close is None:
        return
    try:
        close()
    except Exception:  # noqa: BLE001 - a poisoned worker's close may fail; it is dropped anyway
        pass
