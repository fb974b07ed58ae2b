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
- :mod:`prlx.triton`: ``import prlx.triton`` runs Triton kernels on the emulator and instruments them
- :mod:`prlx.cuda`: device arrays for Triton kernels without PyTorch's CUDA
- :func:`mark`, :func:`session` (a named range): annotate a captured run's launches;
  :mod:`prlx.training`: mark training steps and diff step N of two runs;
  ``python -m prlx run -- CMD`` runs CMD under the capture shim
- every error is a :class:`PrlxError` (:class:`TraceError`, :class:`SessionError`,
  :class:`DaemonError`, :class:`OptionError`) carrying the Rust error's message
"""

from . import daemon
from .marks import MarkWarning, mark
from .marks import range as session_range
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


def enable(instrument: bool = True, **options):
    """Installs the Triton hook (PRLX's ``prlx.enable()``): see :func:`prlx.triton.enable`."""
    from . import triton as _triton_hook

    _triton_hook.enable(instrument, **options)


def disable() -> None:
    """Removes the Triton hook (:func:`prlx.triton.disable`)."""
    from . import triton as _triton_hook

    _triton_hook.disable()


def enable_pytorch(**options) -> None:
    """PRLX's ``prlx.enable_pytorch()``: instruments the Triton kernels PyTorch
    compiles (``torch.compile``/Inductor) through the same hook. PyTorch's
    precompiled CUDA kernels are captured by running under the shim
    (``python -m prlx run``), which instruments their PTX at load where they
    carry any."""
    enable(**options)


def pytorch_trace(name: str):
    """PRLX's ``prlx.pytorch_trace(name)``: the same as :func:`session`."""
    return session(name)


def diff_traces(a, b, **options):
    """PRLX's ``prlx.diff_traces(a, b)``: the same as :func:`diff`."""
    return diff(a, b, **options)


def session(name: str):
    """``with prlx.session("warmup"):`` — the launches inside form a named
    range in the captured session's ``session.json`` (see :mod:`prlx.marks`)."""
    return session_range(name)


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
    "MarkWarning",
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
    "diff_traces",
    "disable",
    "enable",
    "enable_pytorch",
    "has_numpy",
    "mark",
    "session",
    "open_session",
    "pytorch_trace",
    "read_trace",
]
