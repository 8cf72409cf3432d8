"""The collection plugin (``-p cardguard_pytest.collect``): after collection, one JSON object per
item to the file ``CARDGUARD_COLLECT_OUT`` names."""

from __future__ import annotations

import json
import os

import pytest

from cardguard_pytest.ids import case_of

ENV_COLLECT_OUT = "CARDGUARD_COLLECT_OUT"


def pytest_collection_finish(session: pytest.Session) -> None:
    path = os.environ.get(ENV_COLLECT_OUT)
    if not path:
        return
    with open(path, "w", encoding="utf-8") as f:
        for item in session.items:
            f.write(json.dumps(case_of(item).to_json()) + "\n")
