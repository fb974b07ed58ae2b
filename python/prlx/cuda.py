"""A small CUDA driver binding and device-array type (ctypes over ``libcuda.so.1``).

Enough to run Triton kernels without PyTorch's CUDA build: allocate device
memory, copy NumPy arrays in and out, and pass arrays to ``kernel[grid](...)``
(Triton takes any object with ``data_ptr()`` and ``dtype``).

The driver is the ``libcuda.so.1`` the process resolves: prlx's emulator when
its directory is first on ``LD_LIBRARY_PATH`` (or named by
``$TRITON_LIBCUDA_PATH``), the vendor's driver on a GPU machine. Every
object here works in the device's primary context, the one Triton uses, so
pointers are shared with Triton's launches.

- :func:`driver` → the loaded :class:`Driver` (``is_emulator``, ``device_name``)
- :class:`DeviceArray`: :func:`to_device`, :func:`empty`, :func:`zeros`,
  ``.numpy()``, ``.data_ptr()``, ``.shape``, ``.dtype``, ``.stride(d)``
- :func:`register`: host memory (a CPU tensor, a NumPy array) the device
  reads and writes in place (``cuMemHostRegister``); registered CPU tensors
  can be passed to Triton kernels as they are
- every failing driver call raises :class:`CudaError` naming the call and the error
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any, Optional, Sequence, Tuple, Union

from ._native import PrlxError

__all__ = [
    "CudaError",
    "DeviceArray",
    "Driver",
    "Registered",
    "driver",
    "empty",
    "register",
    "synchronize",
    "to_device",
    "zeros",
]

EMULATOR_NAME_PREFIX = "prlx PTX emulator"


class CudaError(PrlxError):
    """A CUDA driver call failed (or no driver could be loaded)."""


def _candidates() -> list:
    """Where to load the driver from, in order: $PRLX_LIBCUDA (a file),
    $TRITON_LIBCUDA_PATH (a directory, as Triton reads it), the loader's search."""
    out = []
    explicit = os.environ.get("PRLX_LIBCUDA")
    if explicit:
        out.append(explicit)
    triton_dir = os.environ.get("TRITON_LIBCUDA_PATH")
    if triton_dir:
        out.append(os.path.join(triton_dir, "libcuda.so.1"))
    out.append("libcuda.so.1")
    return out


class Driver:
    """The loaded CUDA driver, initialised, with device 0's primary context current."""

    def __init__(self, lib: ctypes.CDLL, path: str) -> None:
        self.lib = lib
        self.path = path
        self._ctx_lock = threading.Lock()
        self._ctx: Optional[ctypes.c_void_p] = None
        self.check("cuInit", lib.cuInit(0))
        dev = ctypes.c_int()
        self.check("cuDeviceGet", lib.cuDeviceGet(ctypes.byref(dev), 0))
        self.device = dev.value
        name = ctypes.create_string_buffer(256)
        self.check("cuDeviceGetName", lib.cuDeviceGetName(name, 256, self.device))
        self.device_name: str = name.value.decode(errors="replace")

    @property
    def is_emulator(self) -> bool:
        """True when the driver is prlx's PTX emulator (it runs PTX, not cubins)."""
        return self.device_name.startswith(EMULATOR_NAME_PREFIX)

    def error_text(self, code: int) -> str:
        name = ctypes.c_char_p()
        if self.lib.cuGetErrorName(code, ctypes.byref(name)) == 0 and name.value:
            return name.value.decode(errors="replace")
        return f"CUresult {code}"

    def check(self, call: str, code: int) -> None:
        if code != 0:
            raise CudaError(f"{call} failed: {self.error_text(code)} ({code}) [driver {self.path}]")

    def make_current(self) -> None:
        """Makes device 0's primary context current on this thread (Triton's context)."""
        with self._ctx_lock:
            if self._ctx is None:
                ctx = ctypes.c_void_p()
                self.check(
                    "cuDevicePrimaryCtxRetain",
                    self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), self.device),
                )
                self._ctx = ctx
        self.check("cuCtxSetCurrent", self.lib.cuCtxSetCurrent(self._ctx))

    def synchronize(self) -> None:
        self.make_current()
        self.check("cuCtxSynchronize", self.lib.cuCtxSynchronize())


_driver: Optional[Driver] = None
_driver_lock = threading.Lock()


def driver() -> Driver:
    """The process's CUDA driver, loaded and initialised once.

    Raises :class:`CudaError` naming every place looked at when none loads."""
    global _driver
    with _driver_lock:
        if _driver is not None:
            return _driver
        tried = []
        for cand in _candidates():
            try:
                lib = ctypes.CDLL(cand, mode=ctypes.RTLD_GLOBAL)
            except OSError as e:
                tried.append(f"{cand}: {e}")
                continue
            _declare(lib)
            _driver = Driver(lib, cand)
            return _driver
        raise CudaError(
            "no CUDA driver could be loaded (put the prlx emulator's directory first on "
            "LD_LIBRARY_PATH, e.g. after libcuda/build.sh, or set PRLX_LIBCUDA): " + "; ".join(tried)
        )


def _declare(lib: ctypes.CDLL) -> None:
    c_int, c_uint, c_size, c_void_p = ctypes.c_int, ctypes.c_uint, ctypes.c_size_t, ctypes.c_void_p
    u64 = ctypes.c_uint64
    sigs = {
        "cuInit": [c_uint],
        "cuDeviceGet": [ctypes.POINTER(c_int), c_int],
        "cuDeviceGetName": [ctypes.c_char_p, c_int, c_int],
        "cuGetErrorName": [c_int, ctypes.POINTER(ctypes.c_char_p)],
        "cuDevicePrimaryCtxRetain": [ctypes.POINTER(c_void_p), c_int],
        "cuCtxSetCurrent": [c_void_p],
        "cuCtxSynchronize": [],
        "cuMemAlloc_v2": [ctypes.POINTER(u64), c_size],
        "cuMemFree_v2": [u64],
        "cuMemcpyHtoD_v2": [u64, c_void_p, c_size],
        "cuMemcpyDtoH_v2": [c_void_p, u64, c_size],
        "cuMemcpyDtoD_v2": [u64, u64, c_size],
        "cuMemsetD8_v2": [u64, ctypes.c_ubyte, c_size],
        "cuMemHostRegister_v2": [c_void_p, c_size, c_uint],
        "cuMemHostUnregister": [c_void_p],
        "cuMemHostGetDevicePointer_v2": [ctypes.POINTER(u64), c_void_p, c_uint],
    }
    for name, args in sigs.items():
        f = getattr(lib, name)
        f.argtypes = args
        f.restype = c_int


def synchronize() -> None:
    """Waits for all work of the primary context (``cuCtxSynchronize``)."""
    driver().synchronize()


Shape = Union[int, Sequence[int]]


def _np():
    try:
        import numpy
    except ImportError as e:  # pragma: no cover - numpy is a dependency of the tests
        raise PrlxError("prlx.cuda device arrays need NumPy (pip install numpy)") from e
    return numpy


class DeviceArray:
    """A C-contiguous array in device memory (``cuMemAlloc``), freed with the object.

    Pass it to a Triton kernel as a pointer argument: Triton reads
    :meth:`data_ptr` and :attr:`dtype`. ``.numpy()`` copies it back.
    """

    def __init__(self, shape: Shape, dtype: Any = "float32") -> None:
        np = _np()
        self.shape: Tuple[int, ...] = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
        if any(s < 0 for s in self.shape):
            raise ValueError(f"negative dimension in shape {self.shape}")
        self.dtype = np.dtype(dtype)
        self.nbytes: int = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        self._drv = driver()
        self._drv.make_current()
        ptr = ctypes.c_uint64()
        # cuMemAlloc refuses 0 bytes; an empty array still gets an address.
        self._drv.check("cuMemAlloc", self._drv.lib.cuMemAlloc_v2(ctypes.byref(ptr), max(self.nbytes, 1)))
        self._ptr: int = ptr.value

    def data_ptr(self) -> int:
        """The device address (what Triton passes to the kernel)."""
        return self._ptr

    def numel(self) -> int:
        return self.nbytes // self.dtype.itemsize if self.dtype.itemsize else 0

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 1

    def stride(self, dim: Optional[int] = None):
        """Strides in elements (PyTorch's convention); one dimension's, or all."""
        strides = []
        acc = 1
        for s in reversed(self.shape):
            strides.append(acc)
            acc *= s
        strides = tuple(reversed(strides))
        return strides if dim is None else strides[dim]

    def copy_from(self, array: Any) -> "DeviceArray":
        """Copies a host array of the same size in (converted to this dtype)."""
        np = _np()
        host = np.ascontiguousarray(array, dtype=self.dtype)
        if host.nbytes != self.nbytes:
            raise ValueError(f"size mismatch: device array holds {self.nbytes} bytes, host array {host.nbytes}")
        self._drv.make_current()
        self._drv.check(
            "cuMemcpyHtoD", self._drv.lib.cuMemcpyHtoD_v2(self._ptr, host.ctypes.data_as(ctypes.c_void_p), self.nbytes)
        )
        return self

    def numpy(self):
        """A new NumPy array with the device contents (waits for pending work)."""
        np = _np()
        host = np.empty(self.shape, dtype=self.dtype)
        self._drv.make_current()
        self._drv.check(
            "cuMemcpyDtoH", self._drv.lib.cuMemcpyDtoH_v2(host.ctypes.data_as(ctypes.c_void_p), self._ptr, self.nbytes)
        )
        return host

    def zero_(self) -> "DeviceArray":
        self._drv.make_current()
        self._drv.check("cuMemsetD8", self._drv.lib.cuMemsetD8_v2(self._ptr, 0, self.nbytes))
        return self

    def free(self) -> None:
        """Frees the memory now (also done when the object is collected)."""
        if self._ptr:
            ptr, self._ptr = self._ptr, 0
            try:
                self._drv.make_current()
                self._drv.lib.cuMemFree_v2(ptr)
            except Exception:
                pass  # at interpreter exit the driver may already be gone

    def __del__(self) -> None:
        if getattr(self, "_ptr", 0):
            self.free()

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, ptr={self._ptr:#x})"


def empty(shape: Shape, dtype: Any = "float32") -> DeviceArray:
    """An uninitialised device array."""
    return DeviceArray(shape, dtype)


def zeros(shape: Shape, dtype: Any = "float32") -> DeviceArray:
    """A device array of zero bytes."""
    return DeviceArray(shape, dtype).zero_()


def to_device(array: Any, dtype: Any = None) -> DeviceArray:
    """A device copy of a NumPy array (or anything ``numpy.asarray`` takes, e.g. a CPU tensor)."""
    np = _np()
    if hasattr(array, "detach") and hasattr(array, "numpy"):  # a CPU torch tensor
        array = array.detach().numpy()
    host = np.ascontiguousarray(array, dtype=dtype)
    return DeviceArray(host.shape, host.dtype).copy_from(host)


#: CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
_ALREADY_REGISTERED = 712
#: CU_MEMHOSTREGISTER_DEVICEMAP
_DEVICEMAP = 0x02


class Registered:
    """Host memory mapped into the device (``cuMemHostRegister``) until
    :meth:`close` (or the end of a ``with`` block).

    ``data_ptr()`` is the device address and ``dtype`` the host object's,
    so the handle itself is a Triton pointer argument; a registered CPU
    tensor may also be passed as it is (with prlx's emulator, and with
    unified addressing on a GPU, the device address is the host address).
    Kernels then read and write the host memory in place.
    """

    def __init__(self, obj: Any) -> None:
        self.obj = obj  # kept alive while registered
        if hasattr(obj, "data_ptr") and hasattr(obj, "element_size"):  # a torch tensor
            if hasattr(obj, "is_contiguous") and not obj.is_contiguous():
                raise ValueError("register: the tensor is not contiguous")
            if getattr(getattr(obj, "device", None), "type", "cpu") != "cpu":
                raise ValueError(f"register: the tensor is on {obj.device}, not in host memory")
            host, nbytes, self.dtype = obj.data_ptr(), obj.numel() * obj.element_size(), obj.dtype
        elif hasattr(obj, "__array_interface__"):
            np = _np()
            arr = obj if isinstance(obj, np.ndarray) else np.asarray(obj)
            if not arr.flags.c_contiguous:
                raise ValueError("register: the array is not C-contiguous")
            host, nbytes, self.dtype = arr.ctypes.data, arr.nbytes, arr.dtype
        else:
            raise TypeError(f"register: {type(obj).__name__} is neither a CPU tensor nor an array")
        self._drv = driver()
        self._drv.make_current()
        self._host = host
        self._owned = False
        if nbytes:
            code = self._drv.lib.cuMemHostRegister_v2(host, nbytes, _DEVICEMAP)
            if code != _ALREADY_REGISTERED:  # e.g. a view of registered memory
                self._drv.check("cuMemHostRegister", code)
                self._owned = True
        dptr = ctypes.c_uint64(host)
        if nbytes:
            self._drv.check(
                "cuMemHostGetDevicePointer", self._drv.lib.cuMemHostGetDevicePointer_v2(ctypes.byref(dptr), host, 0)
            )
        self._ptr: int = dptr.value

    def data_ptr(self) -> int:
        return self._ptr

    def close(self) -> None:
        """Unmaps the memory (after waiting for the device's work on it)."""
        if self._owned:
            self._owned = False
            try:
                self._drv.synchronize()
                self._drv.lib.cuMemHostUnregister(self._host)
            except Exception:
                pass  # at interpreter exit the driver may be gone

    def __enter__(self) -> "Registered":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_owned", False):
            self.close()

    def __repr__(self) -> str:
        return f"Registered({type(self.obj).__name__}, dtype={self.dtype}, ptr={self._ptr:#x})"


def register(obj: Any) -> Registered:
    """Maps a contiguous CPU tensor or NumPy array into the device (see :class:`Registered`)."""
    return Registered(obj)
