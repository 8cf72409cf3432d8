"""The plugin's pieces under pytest's own pytester: ids and marker settings, the device-error
declaration and the classify hook, the healed pool."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cardguard_pytest import classify
from cardguard_pytest.plugin import CLASS, CODE, code_of, forget_attempt
from cardguard_pytest.pool import Pool

SUITE = """
import pytest

class DevErr(RuntimeError):
    pass

@pytest.mark.cardguard(runtime="rt_a", retries=1)
class TestA:
    @pytest.mark.sdma
    def test_x(self):
        pass

    @pytest.mark.cardguard(runtime="rt_a", devices=2, timeout=60)
    @pytest.mark.parametrize("n", ["a b", "c:d"])
    def test_y(self, n):
        pass

@pytest.mark.xfail(reason="known")
def test_z():
    assert False

@pytest.mark.skip(reason="no card")
def test_w():
    pass
"""


def collect(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    pytester.makepyfile(test_mod=SUITE)
    out = pytester.path / "items.jsonl"
    pytester._monkeypatch.setenv("CARDGUARD_COLLECT_OUT", str(out))
    r = pytester.runpytest("-p", "cardguard_pytest.collect", "--collect-only", "-q")
    assert r.ret == 0, r.stdout.str()
    return [json.loads(l) for l in out.read_text().splitlines()]


def test_collection_writes_one_object_per_item_with_its_settings(pytester: pytest.Pytester) -> None:
    items = collect(pytester)
    by = {i["nodeid"]: i for i in items}
    assert len(items) == 5
    x = by["test_mod.py::TestA::test_x"]
    assert (x["class"], x["case"], x["runtime"], x["retries"], x["tags"]) == (
        "test_mod.TestA",
        "test_x",
        "rt_a",
        1,
        ["sdma"],
    )
    y = [i for i in items if i["case"].startswith("test_y")]
    assert sorted(i["case"] for i in y) == ["test_y[a_b]", "test_y[c_d]"], "no ':' or space in an id"
    assert all(i["devices"] == 2 and i["timeout"] == 60.0 for i in y)
    z = by["test_mod.py::test_z"]
    assert (z["class"], z["xfail"], z["skip"]) == ("test_mod", "known", None)
    assert by["test_mod.py::test_w"]["skip"] == "no card"


def test_a_declared_device_error_retires_the_worker_and_an_assertion_does_not(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\npythonpath = .\ncardguard_device_errors = devlib.DevErr\n")
    pytester.makepyfile(
        devlib="class DevErr(RuntimeError):\n    pass\n",
        test_pool="""
import devlib

class W:
    closed = 0
    def close(self):
        W.closed += 1

def test_device(cardguard_pool):
    cardguard_pool.get("rt", 0, W)
    raise devlib.DevErr("op timeout")

def test_rebuilt(cardguard_pool):
    w = cardguard_pool.get("rt", 0, W)
    assert cardguard_pool.builds == 2 and W.closed == 1
    assert False, "a wrong answer"

def test_kept(cardguard_pool):
    cardguard_pool.get("rt", 0, W)
    assert cardguard_pool.builds == 2, "an assertion failure keeps the worker"
""",
    )
    r = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    r.assert_outcomes(passed=1, failed=2)


def test_a_bad_device_error_name_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ncardguard_device_errors = nosuchmod.Err\n")
    pytester.makepyfile(test_a="def test_a():\n    pass\n")
    r = pytester.runpytest_subprocess()
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    assert "cardguard_device_errors: 'nosuchmod.Err'" in r.stderr.str()


def test_the_classify_hook_decides_first(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
def pytest_cardguard_classify(item, excinfo):
    return "device_runtime" if excinfo.errisinstance(KeyError) else None
"""
    )
    pytester.makepyfile(
        test_h="""
class W:
    pass

def test_key(cardguard_pool):
    cardguard_pool.get("rt", 0, W)
    raise KeyError("x")

def test_after(cardguard_pool):
    cardguard_pool.get("rt", 0, W)
    assert cardguard_pool.builds == 2
"""
    )
    r = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    r.assert_outcomes(passed=1, failed=1)


def test_a_failed_factory_leaves_no_worker() -> None:
    p = Pool()

    def bad() -> object:
        raise RuntimeError("init")

    with pytest.raises(RuntimeError):
        p.get("rt", 0, bad)
    assert len(p) == 0
    p.get("rt", 0, object)
    assert (len(p), p.builds) == (1, 1)


class _CodedError(RuntimeError):
    def __init__(self, code: object) -> None:
        super().__init__(f"returned {code}")
        self.code = code
        self.rc = 507054


def test_a_device_errors_code_is_read_from_the_declared_attribute() -> None:
    assert classify.code_of(_CodedError(507000), "code") == 507000
    assert classify.code_of(_CodedError(507000), "rc") == 507054
    assert classify.code_of(_CodedError(507000), "") is None
    assert classify.code_of(_CodedError("507000"), "code") is None, "only an int is a code"
    assert classify.code_of(_CodedError(True), "code") is None, "a bool is no code"
    assert classify.code_of(_CodedError(2**40), "code") is None, "a code fits 32 bits"
    assert classify.code_of(RuntimeError("x"), "code") is None


def test_an_items_class_and_code_are_its_attempts_own(pytester: pytest.Pytester) -> None:
    """A lane runs a retried item again in one session: the first run's device error (and its
    code) must not be the second run's class when the second fails with a wrong answer."""
    pytester.makeini(
        "[pytest]\npythonpath = .\ncardguard_device_errors = devlib.DevErr\ncardguard_error_code_attr = rc\n"
    )
    pytester.makepyfile(devlib="class DevErr(RuntimeError):\n    def __init__(self, rc):\n        self.rc = rc\n")
    pytester.makeconftest(
        """
import pytest
from _pytest.runner import runtestprotocol
from cardguard_pytest.plugin import CLASS, forget_attempt, code_of

SEEN = []

@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    item = session.items[0]
    for _ in range(2):
        forget_attempt(item)
        runtestprotocol(item, nextitem=None, log=False)
        SEEN.append((item.stash.get(CLASS, None), code_of(item)))
    assert SEEN == [("device_runtime", 507901), ("result", None)], SEEN
    return True
"""
    )
    pytester.makepyfile(
        test_twice="""
import devlib

RUNS = []

def test_flips():
    RUNS.append(1)
    if len(RUNS) == 1:
        raise devlib.DevErr(507901)
    assert False, "a wrong answer"
"""
    )
    r = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    assert r.ret == 0, r.stdout.str()


def test_forget_attempt_without_a_run_is_harmless(pytester: pytest.Pytester) -> None:
    item = pytester.getitem("def test_func():\n    pass\n")
    forget_attempt(item)
    assert CLASS not in item.stash and CODE not in item.stash and code_of(item) is None
