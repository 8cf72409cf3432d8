"""A small device layer over the CANN C ABI with ctypes (``libsim_acl.so`` on simulated cards,
named by ONBOARD_ACL_LIB): set device, a stream, malloc, copies, register and launch the shipped
``vector_add`` kernel, stream sync. Every non-zero return code raises DeviceRuntimeError."""

from __future__ import annotations

import ctypes
import os
import struct

RT_DEV_BINARY_MAGIC_ELF = 1129660997
H2D, D2H = 1, 2
ARG_INPUT, ARG_OUTPUT, ARG_SCALAR = 0, 1, 2
SYNC_TIMEOUT_MS = int(os.environ.get("EXAMPLE_SYNC_TIMEOUT_MS", "3000"))


class DeviceRuntimeError(RuntimeError):
    """A CANN call returned a non-zero code."""

    def __init__(self, call: str, code: int) -> None:
        super().__init__(f"{call} returned {code}")
        self.call = call
        self.code = code


class _DevBinary(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_uint32), ("version", ctypes.c_uint32), ("data", ctypes.c_void_p), ("length", ctypes.c_uint64)]


class _ArgsEx(ctypes.Structure):
    """rtArgsEx_t, 40 bytes, as the runtime reads it (hicann/runtime pkg_inc/runtime/rt_external_kernel.h)."""

    _fields_ = [
        ("args", ctypes.c_void_p),
        ("hostInputInfoPtr", ctypes.c_void_p),
        ("argsSize", ctypes.c_uint32),
        ("tilingAddrOffset", ctypes.c_uint32),
        ("tilingDataOffset", ctypes.c_uint32),
        ("hostInputInfoNum", ctypes.c_uint16),
        ("hasTiling", ctypes.c_uint8),
        ("isNoNeedH2DCopy", ctypes.c_uint8),
        ("reserved", ctypes.c_uint8 * 4),
    ]


assert ctypes.sizeof(_ArgsEx) == 40, "rtArgsEx_t is 40 bytes"


_LIBS: list = []


def _lib():  # type: ignore[no-untyped-def]
    if not _LIBS:
        paths = os.environ.get("ONBOARD_ACL_LIB")
        if not paths:
            raise RuntimeError("ONBOARD_ACL_LIB names no CANN library (libsim_acl.so on simulated cards)")
        _LIBS.extend(ctypes.CDLL(p, mode=ctypes.RTLD_GLOBAL) for p in paths.split(":") if p)
    return _LIBS


def _call(name: str, *args: object) -> None:
    for lib in _lib():
        f = getattr(lib, name, None)
        if f is not None:
            f.restype = ctypes.c_int
            rc = f(*args)
            if rc != 0:
                raise DeviceRuntimeError(name, rc)
            return
    raise RuntimeError(f"no loaded library exports {name}")


def _has(name: str) -> bool:
    return any(getattr(lib, name, None) is not None for lib in _lib())


def kernel_path(name: str) -> str:
    root = os.environ.get("CARDGUARD_LANE_KERNEL_DIR") or os.environ.get("EXAMPLE_KERNEL_DIR")
    if not root:
        raise RuntimeError("no kernel dir: CARDGUARD_LANE_KERNEL_DIR (cardguard sets it) or EXAMPLE_KERNEL_DIR")
    return os.path.join(root, f"{name}.so")


class Worker:
    """One initialised worker of a runtime on a card: its device set, a stream, the kernel registered."""

    _inited = False

    def __init__(self, runtime: str, device: int) -> None:
        self.runtime = runtime
        self.device = device
        if not Worker._inited:
            _call("aclInit", None)
            Worker._inited = True
        _call("aclrtSetDevice", ctypes.c_int32(device))
        self.stream = ctypes.c_void_p()
        _call("aclrtCreateStream", ctypes.byref(self.stream))
        with open(kernel_path("vector_add"), "rb") as f:
            self._blob = f.read()
        buf = ctypes.create_string_buffer(self._blob, len(self._blob))
        self._buf = buf
        bin_ = _DevBinary(RT_DEV_BINARY_MAGIC_ELF, 0, ctypes.cast(buf, ctypes.c_void_p), len(self._blob))
        self.kernel = ctypes.c_void_p()
        _call("rtRegisterAllKernel", ctypes.byref(bin_), ctypes.byref(self.kernel))

    def _malloc(self, n: int) -> ctypes.c_void_p:
        p = ctypes.c_void_p()
        _call("aclrtMalloc", ctypes.byref(p), ctypes.c_size_t(n), ctypes.c_int(0))
        return p

    def vector_add(self, a: list[float], b: list[float], block_dim: int = 2) -> list[float]:
        n = len(a)
        size = 4 * n
        bufs = [self._malloc(size) for _ in range(3)]
        try:
            for p, xs in ((bufs[0], a), (bufs[1], b)):
                host = ctypes.create_string_buffer(struct.pack(f"{n}f", *xs), size)
                _call("aclrtMemcpy", p, ctypes.c_size_t(size), host, ctypes.c_size_t(size), ctypes.c_int(H2D))
            values = (ctypes.c_uint64 * 4)(bufs[0].value, bufs[1].value, bufs[2].value, n)
            if _has("cgSimSetLaunchInfo"):
                roles = (ctypes.c_uint8 * 4)(ARG_INPUT, ARG_INPUT, ARG_OUTPUT, ARG_SCALAR)
                _call("cgSimSetLaunchInfo", ctypes.c_uint32(0), roles, ctypes.c_uint32(4))
            args = _ArgsEx(ctypes.cast(values, ctypes.c_void_p), None, 32)
            _call(
                "rtKernelLaunchWithHandleV2",
                self.kernel,
                ctypes.c_uint64(0),
                ctypes.c_uint32(block_dim),
                ctypes.byref(args),
                None,
                self.stream,
                None,
            )
            _call("aclrtSynchronizeStreamWithTimeout", self.stream, ctypes.c_int32(SYNC_TIMEOUT_MS))
            out = ctypes.create_string_buffer(size)
            _call("aclrtMemcpy", out, ctypes.c_size_t(size), bufs[2], ctypes.c_size_t(size), ctypes.c_int(D2H))
            return list(struct.unpack(f"{n}f", out.raw))
        finally:
            for p in bufs:
                try:
                    _call("aclrtFree", p)
                except DeviceRuntimeError:
                    pass

    def close(self) -> None:
        try:
            _call("aclrtDestroyStream", self.stream)
        finally:
            _call("aclrtResetDevice", ctypes.c_int32(self.device))
