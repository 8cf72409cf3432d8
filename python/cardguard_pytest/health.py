"""Card health from Python: the post-case check and, on an unusable card, the force reset with
its probe, through the C ABI the team's code uses (``ctypes`` on the loaded CANN library, or
``libsim_acl.so`` on simulated cards), in the lane's own process and thread."""

from __future__ import annotations

import ctypes
import os
from typing import Optional

ENV_ACL_LIB = "ONBOARD_ACL_LIB"
SYNC_TIMEOUT_MS = 2000


class Acl:
    """The few ``aclrt*`` calls the check and the reset need."""

    def __init__(self, paths: str) -> None:
        self.libs = [ctypes.CDLL(p, mode=ctypes.RTLD_GLOBAL) for p in paths.split(":") if p]

    def _fn(self, name: str):  # type: ignore[no-untyped-def]
        for lib in self.libs:
            f = getattr(lib, name, None)
            if f is not None:
                f.restype = ctypes.c_int
                return f
        raise OSError(f"{name} is in none of {ENV_ACL_LIB}'s libraries")

    def check(self, device: int) -> Optional[str]:
        """``None`` when the card's context syncs; else the failing call and code."""
        rc = self._fn("aclrtSetDevice")(ctypes.c_int32(device))
        if rc != 0:
            return f"aclrtSetDevice({device}) returned {rc}"
        rc = self._fn("aclrtSynchronizeDeviceWithTimeout")(ctypes.c_int32(SYNC_TIMEOUT_MS))
        if rc != 0:
            return f"aclrtSynchronizeDeviceWithTimeout returned {rc}"
        return None

    def force_reset(self, device: int) -> Optional[str]:
        """Force reset (the lane holds the card's lease), then the probe: ``None`` when it passed."""
        rc = self._fn("aclrtResetDeviceForce")(ctypes.c_int32(device))
        if rc != 0:
            return f"aclrtResetDeviceForce({device}) returned {rc}"
        return self.probe(device)

    def probe(self, device: int) -> Optional[str]:
        why = self.check(device)
        if why is not None:
            return why
        stream = ctypes.c_void_p()
        rc = self._fn("aclrtCreateStream")(ctypes.byref(stream))
        if rc != 0:
            return f"aclrtCreateStream returned {rc}"
        self._fn("aclrtDestroyStream")(stream)
        ptr = ctypes.c_void_p()
        rc = self._fn("aclrtMalloc")(ctypes.byref(ptr), ctypes.c_size_t(64), ctypes.c_int(0))
        if rc != 0:
            return f"aclrtMalloc returned {rc}"
        self._fn("aclrtFree")(ptr)
        return None


def from_env() -> Optional[Acl]:
    paths = os.environ.get(ENV_ACL_LIB)
    return Acl(paths) if paths else None
