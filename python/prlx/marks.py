"""Marks: name points and ranges of a captured run (``prlx.mark``, ``prlx.session``).

Under the shim (``python -m prlx run ...`` or ``LD_PRELOAD=libprlx.so``) each
mark is handed to the shim's exported ``prlx_mark`` and lands in the
session's ``session.json`` as ``{"name", "kind", "time_ns", "first_seq"}``
(``kind``: ``point``, ``begin`` or ``end``; ``first_seq``: the seq of the
first launch recorded after it). Without the shim a mark does nothing and
one :class:`MarkWarning` says so.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
import warnings
from typing import Iterator, Optional

__all__ = ["MarkWarning", "mark", "range", "shim_loaded"]

_KIND = {"point": 0, "begin": 1, "end": 2}
_lock = threading.Lock()
_fn: Optional[ctypes._CFuncPtr] = None  # type: ignore[name-defined]
_looked = False
_warned = False


class MarkWarning(UserWarning):
    """A mark was made while the shim is not loaded (it is not recorded)."""


def _prlx_mark():
    global _fn, _looked
    with _lock:
        if not _looked:
            _looked = True
            try:
                # The shim is preloaded into the global scope: look it up there.
                fn = ctypes.CDLL(None).prlx_mark
            except (AttributeError, OSError):
                fn = None
            if fn is not None:
                fn.argtypes = [ctypes.c_char_p, ctypes.c_int]
                fn.restype = ctypes.c_int
            _fn = fn
        return _fn


_site_fn: Optional[ctypes._CFuncPtr] = None  # type: ignore[name-defined]
_site_looked = False


def launch_site(frames: str) -> bool:
    """Hands the shim the host stack of the launch about to be made (one
    ``function<TAB>file<TAB>line`` a line, innermost first): it leads that
    launch's ``cpu_stack``. False when the shim is not loaded."""
    global _site_fn, _site_looked
    if not _site_looked:
        _site_looked = True
        try:
            fn = ctypes.CDLL(None).prlx_launch_site
            fn.argtypes = [ctypes.c_char_p]
            fn.restype = ctypes.c_int
            _site_fn = fn
        except (AttributeError, OSError):
            _site_fn = None
    if _site_fn is None:
        return False
    return _site_fn(frames.encode("utf-8", errors="replace")) == 0


def shim_loaded() -> bool:
    """True when ``libprlx.so`` is loaded in this process (marks are recorded)."""
    return _prlx_mark() is not None


def _record(name: str, kind: str) -> bool:
    global _warned
    if not isinstance(name, str) or not name:
        raise ValueError(f"a mark's name is a non-empty str, not {name!r}")
    fn = _prlx_mark()
    if fn is None:
        if not _warned:
            _warned = True
            warnings.warn(
                "prlx.mark: libprlx.so is not loaded, marks are not recorded "
                "(run under `python -m prlx run -- ...`)",
                MarkWarning,
                stacklevel=3,
            )
        return False
    if fn(name.encode("utf-8", errors="replace"), _KIND[kind]) != 0:
        warnings.warn(f"prlx.mark: the shim refused mark {name!r}", MarkWarning, stacklevel=3)
        return False
    return True


def mark(name: str) -> bool:
    """Marks this point of the run; launches after it have ``seq >= first_seq``.
    Returns whether the shim recorded it."""
    return _record(name, "point")


@contextlib.contextmanager
def range(name: str) -> Iterator[None]:  # noqa: A001 - prlx.range reads well
    """``with prlx.session("warmup"):`` — the launches inside form a named range."""
    _record(name, "begin")
    try:
        yield
    finally:
        _record(name, "end")
