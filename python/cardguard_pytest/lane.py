"""A pytest lane (``python -m pytest -p cardguard_pytest.lane ARGS --cardguard-device N``): it
speaks cardguard's lane protocol on the descriptor ``ONBOARD_PROTOCOL_FD`` names, runs each
assigned item through pytest's own run protocol, checks its card after each item, force-resets an
unusable card, and when the card cannot be recovered in-process writes its remaining items to the
poison sink and exits 75 (the dispatcher starts a fresh lane)."""

from __future__ import annotations

import json
import os
import queue
import socket
import sys
import threading
import time
from typing import Any, Optional

import pytest
from _pytest.runner import runtestprotocol

from cardguard_pytest import classify, health
from cardguard_pytest.ids import case_of
from cardguard_pytest.plugin import CLASS, code_of, forget_attempt, pool_of

EXIT_NEEDS_FRESH_PROCESS = 75
EXIT_USAGE = 2
ENV_PROTOCOL_FD = "ONBOARD_PROTOCOL_FD"
ENV_OUTPUT_MARK = "ONBOARD_OUTPUT_MARK"
ENV_POISON_SINK = "ONBOARD_POISON_SINK"
ENV_HEALTH_CHECK = "CARDGUARD_LANE_HEALTH_CHECK"
ENV_ARCH = "CARDGUARD_LANE_ARCH"
ENV_HARDWARE_CODES = "CARDGUARD_LANE_HARDWARE_CODES"


def hardware_codes(text: str) -> frozenset[int]:
    """The codes of ``CARDGUARD_LANE_HARDWARE_CODES`` (comma-separated; cardguard's code table)."""
    return frozenset(int(c) for c in text.split(",") if c.strip().lstrip("-").isdigit())


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("cardguard lane")
    g.addoption("--cardguard-device", type=int, default=None, help="the lane's card (set by cardguard)")
    g.addoption("--cardguard-preflight", action="store_true", help="probe the card and exit")


class Channel:
    """The lane's end of its channel: JSON lines, one write per message, writers take turns."""

    def __init__(self, fd: int) -> None:
        self.sock = socket.socket(fileno=fd)
        self.lock = threading.Lock()

    def send(self, tag: str, **fields: Any) -> None:
        line = (json.dumps({"t": tag, "c": fields}) + "\n").encode()
        with self.lock:
            self.sock.sendall(line)


class Marks:
    """Output marks between items (the dispatcher splits the captured output at them)."""

    def __init__(self) -> None:
        self.nonce = os.environ.get(ENV_OUTPUT_MARK) or None
        self.last = 0

    def mark(self) -> int:
        sys.stdout.flush()
        sys.stderr.flush()
        if self.nonce is None:
            return 0
        self.last += 1
        b = f"\x1b_cgmark:{self.nonce}:{self.last}\x1b\\".encode()
        os.write(1, b)
        os.write(2, b)
        return self.last


class Lane:
    def __init__(self, session: pytest.Session, device: int) -> None:
        self.session = session
        self.config = session.config
        self.device = device
        fd = os.environ.get(ENV_PROTOCOL_FD, "")
        if not fd.isdigit():
            raise pytest.UsageError(f"{ENV_PROTOCOL_FD}={fd!r}: not set: a lane is started by cardguard")
        self.chan = Channel(int(fd))
        self.marks = Marks()
        self.acl = health.from_env()
        self.check = os.environ.get(ENV_HEALTH_CHECK, "each")
        self.arch = os.environ.get(ENV_ARCH, "a5")
        self.sink = os.environ.get(ENV_POISON_SINK) or None
        self.items = {case_of(i).id: i for i in session.items}
        self.current: Optional[str] = None
        self.runs: "queue.Queue[Optional[list[str]]]" = queue.Queue()
        self.closed = threading.Event()
        self.hardware = hardware_codes(os.environ.get(ENV_HARDWARE_CODES, ""))
        # Set when the card reported a hardware fault: the lane runs nothing more on it.
        self.out_of_service = False

    def reader(self) -> None:
        f = self.chan.sock.makefile("rb")
        for raw in f:
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            if msg.get("t") == "run":
                self.runs.put(list(msg.get("cases", [])))
            elif msg.get("t") == "where":
                self.chan.send("where", case=self.current, in_call=None, since_ms=None, launch=0, launches=None)
        # The dispatcher closed the channel: it gives no more work, and what it gave and this
        # lane has not started it hands to other lanes (a card taken out at once: "needs service").
        self.closed.set()
        self.runs.put(None)

    def run(self) -> int:
        self.chan.send("ready", pid=os.getpid())
        threading.Thread(target=self.reader, name="cardguard-channel", daemon=True).start()
        while True:
            cases = self.runs.get()
            if cases is None:
                return 0
            for i, case in enumerate(cases):
                pending = len(cases) - i
                if self.out_of_service:
                    sys.stderr.write(
                        f"the card reported a hardware fault: {pending} case(s) pending go back to the dispatcher; exiting\n"
                    )
                    return 0
                if self.closed.is_set():
                    sys.stderr.write(f"the channel closed with {pending} case(s) pending: the dispatcher is gone; exiting\n")
                    return 0
                esc = self.run_one(case, cases[i + 1] if i + 1 < len(cases) else None)
                if esc is not None:
                    self.escalate(esc, cases[i + 1 :])
                    return EXIT_NEEDS_FRESH_PROCESS

    def run_one(self, case: str, next_case: Optional[str]) -> Optional[str]:
        """Runs one item; returns why the lane must escalate, if it must."""
        item = self.items.get(case)
        self.current = case
        self.chan.send("started", case=case, mark=self.marks.mark())
        if item is None:
            self.finish(case, "failed", 0, classify.USAGE, f"no collected item has cardguard id {case}")
            return None
        nxt = self.items.get(next_case) if next_case else None
        forget_attempt(item)
        t0 = time.monotonic()
        reports = runtestprotocol(item, nextitem=nxt, log=True)
        dur = int((time.monotonic() - t0) * 1e6)
        outcome, cls, msg = judge(item, reports)
        code = code_of(item) if cls == classify.DEVICE else None
        setup_failed = any(r.when == "setup" and r.failed for r in reports)
        escalate: Optional[str] = None
        if cls == classify.DEVICE and setup_failed:
            # The worker's (re)build failed with a device error: in-process healing is over.
            escalate = f"rebuilding the worker failed with a device error: {msg.splitlines()[-1] if msg else ''}"
        post = False
        # A device error poisoned the card (by its code, when it declared one, as a Rust lane's
        # runner records it: the dispatcher and the card's story name the fault by it). The card
        # is reset and the reset proven by the probe whatever a check would say of it (a drain can
        # lie); a passing or plainly failing item's card is checked as --health-check says.
        device_error = outcome == "failed" and cls == classify.DEVICE
        if device_error:
            last = msg.strip().splitlines()[-1] if msg.strip() else ""
            fields: dict[str, Any] = {} if code is None else {"code": {"space": "acl", "raw": code}}
            self.health("poisoned", f"{case} failed: {last}"[:500], **fields)
            pool_of(self.config).retire_all()
        if device_error and code in self.hardware:
            # A hardware fault: no reset fixes it (none is tried); the dispatcher takes the card
            # out on this attempt's code and hands what this lane has not started to others.
            self.out_of_service = True
            escalate = None
        elif escalate is None and self.acl is not None:
            needs_reset = device_error
            if not device_error and self.wants_check(outcome):
                why = self.acl.check(self.device) or self.config.hook.pytest_cardguard_health_check(device=self.device)
                if why is not None:
                    self.health("poisoned", f"post-case check of {case}: {why}")
                    pool_of(self.config).retire_all()
                    if outcome == "passed":
                        outcome, cls, msg, post = "failed", classify.DEVICE, f"post-case check: {why}", True
                    needs_reset = True
            if needs_reset:
                escalate = self.reset_card()
        self.finish(case, outcome, dur, cls, msg, post, code)
        self.current = None
        return escalate

    def reset_card(self) -> Optional[str]:
        """Force-resets the lane's card and proves it with the probe; returns why the lane must
        escalate when the reset was not confirmed."""
        assert self.acl is not None
        t_reset = time.monotonic()
        bad = self.acl.force_reset(self.device)
        took = int((time.monotonic() - t_reset) * 1000)
        self.health("force_reset", "aclrtResetDeviceForce and its probe", attempt=1, duration_ms=took)
        self.health("probe", bad or "the card syncs, a stream and 64 bytes", attempt=1, ok=bad is None)
        if bad is not None:
            self.health("reset_failed", bad, attempt=1)
            return f"the force reset was not confirmed: {bad}"
        self.health("recovered", "the probe confirmed the card", attempt=1)
        return None

    def health(self, kind: str, detail: str, **fields: Any) -> None:
        """A health event of the lane's card, as a Rust lane's runner sends it."""
        event = {"device": self.device, "arch": self.arch, "event": kind, "detail": detail}
        event.update(fields)
        event["unix_ms"] = int(time.time() * 1000)
        self.chan.send("health", event=event, mono_ns=time.clock_gettime_ns(time.CLOCK_MONOTONIC))

    def wants_check(self, outcome: str) -> bool:
        return self.check == "each" or (self.check == "on-failure" and outcome == "failed")

    def finish(
        self,
        case: str,
        outcome: str,
        dur: int,
        cls: Optional[str],
        msg: str,
        post: bool = False,
        code: Optional[int] = None,
    ) -> None:
        error: Optional[dict[str, Any]] = None
        if outcome != "passed":
            # A declared code is CANN's (ACL numbering): the dispatcher names the fault by it and
            # takes a card with a hardware code out at once.
            wire_code = None if code is None else {"space": "acl", "raw": code}
            failure: dict[str, Any] = {
                "class": cls or classify.RESULT,
                "call": None,
                "code": wire_code,
                "name": None,
                "message": msg,
            }
            if post:
                failure["post_case_check"] = True
            error = failure
        self.chan.send("finished", case=case, outcome=outcome, duration_us=dur, error=error, mark=self.marks.mark())

    def escalate(self, reason: str, remaining: list[str]) -> None:
        pool_of(self.config).retire_all()
        if self.sink is not None:
            fd = os.open(self.sink, os.O_WRONLY | os.O_APPEND)
            try:
                for case in remaining:
                    item = self.items.get(case)
                    rec = {
                        "selector": case,
                        "case": case,
                        "runtime": case_of(item).runtime if item else "",
                        "device": self.device,
                        "code": None,
                        "reason": reason,
                    }
                    os.write(fd, (json.dumps(rec) + "\n").encode())
            finally:
                os.close(fd)
        self.chan.send("escalating", reason=reason, cases=len(remaining) if self.sink else 0)


def judge(item: pytest.Item, reports: list[pytest.TestReport]) -> tuple[str, Optional[str], str]:
    """The attempt's outcome, failure class and message from pytest's reports."""
    for r in reports:
        if r.failed:
            cls = item.stash.get(CLASS, classify.RESULT)
            return "failed", cls, f"{r.when}: {r.longreprtext}"[-8000:]
    for r in reports:
        if r.skipped:
            if hasattr(r, "wasxfail"):
                return "passed", None, ""  # an expected failure, as pytest counts it
            reason = r.longrepr[2] if isinstance(r.longrepr, tuple) else str(r.longrepr)
            return "skipped", classify.USAGE, str(reason)
    return "passed", None, ""


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    # Nothing is deselected: the dispatcher chooses.
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool:
    device = session.config.getoption("cardguard_device")
    if device is None:
        raise pytest.UsageError("a cardguard lane needs --cardguard-device (cardguard starts lanes)")
    if session.config.getoption("cardguard_preflight"):
        acl = health.from_env()
        why = acl.probe(device) if acl is not None else None
        os._exit(0 if why is None else EXIT_NEEDS_FRESH_PROCESS)
    code = Lane(session, device).run()
    sys.stdout.flush()
    sys.stderr.flush()
    pool_of(session.config).retire_all()
    os._exit(code)
