"""prlx: a differential debugger for GPU kernels, from Python.

Read ``.prlx`` traces, diff two runs warp by warp, diff whole capture
sessions, and fail a test when two runs diverge. Everything runs in the Rust
crates ``prlxctl`` uses (through the native module ``prlx._native``), so the
results are those of ``prlxctl diff --json``.

- :func:`read_trace` → :class:`Trace` (header, per-warp events as NumPy arrays)
- :func:`open_session` → :class:`Session` (a session directory's launches and traces)
- :func:`diff` → :class:`DiffResult`; :func:`diff_sessions` → :class:`SessionDiffResult`
- :func:`prlx.testing.assert_no_divergence` for pytest
- :mod:`prlx.daemon`: sessions stored by prlxd (list, show)
- every error is a :class:`PrlxError` (:class:`TraceError`, :class:`SessionError`,
  :class:`DaemonError`, :class:`OptionError`) carrying the Rust error's message
"""

from . import daemon
from ._native import DaemonError, OptionError, PrlxError, SessionError, TraceError
from .diff import (
    DIVERGENCE_KINDS,
    DiffResult,
    Divergence,
    SessionDiffResult,
    diff,
    diff_sessions,
)
from .session import Launch, Session, open_session
from .trace import (
    EVENT_DTYPE,
    SNAPSHOT_DTYPE,
    Event,
    Header,
    Snapshot,
    Trace,
    Warp,
    has_numpy,
    read_trace,
)

try:
    from importlib.metadata import version as _version

    __version__ = _version("prlx")
except Exception:  # not installed as a distribution (e.g. a source checkout)
    __version__ = "0+unknown"

__all__ = [
    "DIVERGENCE_KINDS",
    "DaemonError",
    "EVENT_DTYPE",
    "DiffResult",
    "Divergence",
    "Event",
    "Header",
    "Launch",
    "OptionError",
    "PrlxError",
    "Session",
    "SessionDiffResult",
    "SessionError",
    "SNAPSHOT_DTYPE",
    "Snapshot",
    "Trace",
    "TraceError",
    "Warp",
    "daemon",
    "diff",
    "diff_sessions",
    "has_numpy",
    "open_session",
    "read_trace",
]
