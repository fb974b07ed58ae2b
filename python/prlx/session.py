"""Capture sessions on disk: a directory holding ``session.json`` and the traces.

:func:`open_session` reads and validates the manifest with the Rust session
crate (prlx's format, or PRLX's original list) and gives its launches;
:meth:`Session.trace` opens a launch's trace, :meth:`Session.diff` diffs two
sessions as ``prlxctl diff --session`` does.
"""

from __future__ import annotations

import json as _json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from . import _native
from .diff import SessionDiffResult, diff_sessions
from .trace import Trace, read_trace

PathLike = Union[str, "os.PathLike[str]"]


class Launch:
    """One kernel launch of a session (an entry of ``session.json``'s ``launches``).

    Every manifest field is an attribute: ``seq``, ``kernel``, ``launch``
    (the launch index), ``grid``, ``block``, ``file`` (the trace, relative to
    the session directory; None when the launch was not traced), ``site_map``,
    ``cpu_stack``, ...
    """

    __slots__ = ("data", "_session")

    def __init__(self, session: "Session", data: Dict[str, Any]) -> None:
        self.data: Dict[str, Any] = data
        self._session = session

    def __getattr__(self, name: str) -> Any:
        try:
            return self.data[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def launch_index(self) -> int:
        return self.data["launch"]

    @property
    def trace_path(self) -> Optional[Path]:
        """The trace's path, or None when the launch carries no trace."""
        f = self.data.get("file")
        return self._session.path / f if f else None

    @property
    def site_map_path(self) -> Optional[Path]:
        f = self.data.get("site_map")
        return self._session.path / f if f else None

    def trace(self) -> Trace:
        """Reads this launch's trace; :class:`prlx.SessionError` when it has none."""
        path = self.trace_path
        if path is None:
            raise _native.SessionError(
                f"{self._session.path}: {self.kernel} launch {self.launch_index} has no trace "
                "(metadata only)"
            )
        return read_trace(path)

    def __repr__(self) -> str:
        return f"Launch({self.kernel!r}, launch={self.launch_index}, file={self.data.get('file')!r})"


class Session:
    """A session directory: its manifest (:attr:`data`) and :attr:`launches`."""

    def __init__(self, path: PathLike) -> None:
        p = Path(os.fspath(path))
        self.path: Path = p if p.is_dir() else p.parent
        """The session directory."""
        self.data: Dict[str, Any] = _json.loads(_native.read_session(os.fspath(path)))
        """``session.json`` as parsed (and validated) by the session crate."""
        self.launches: List[Launch] = [Launch(self, l) for l in self.data["launches"]]
        """Every recorded launch, in launch order."""

    @property
    def name(self) -> str:
        return self.data["session"]

    @property
    def marks(self) -> List[Dict[str, Any]]:
        """The marks made while recording (``prlx.mark``, ``prlx.session``):
        ``name``, ``kind`` (point/begin/end), ``time_ns``, ``first_seq``."""
        try:
            raw = _json.loads((self.path / "session.json").read_text())
        except (OSError, ValueError):
            return []
        return list(raw.get("marks", [])) if isinstance(raw, dict) else []

    def launches_in(self, name: str) -> List[Launch]:
        """The launches of the range ``name`` (its first begin/end marks; to the end when it was never closed)."""
        begin = end = None
        for m in self.marks:
            if m.get("name") != name:
                continue
            if m.get("kind") == "begin" and begin is None:
                begin = m["first_seq"]
            elif m.get("kind") == "end" and begin is not None and end is None:
                end = m["first_seq"]
        if begin is None:
            raise KeyError(f"{self.path}: no range {name!r} among the marks")
        return [l for l in self.launches if l.seq >= begin and (end is None or l.seq < end)]

    def kernels(self) -> List[str]:
        """Kernel names in order of their first launch."""
        return list(dict.fromkeys(l.kernel for l in self.launches))

    def launch(self, kernel: str, launch_index: int = 0) -> Launch:
        """The ``launch_index``-th launch of ``kernel``; KeyError when there is none."""
        for l in self.launches:
            if l.kernel == kernel and l.launch_index == launch_index:
                return l
        raise KeyError(f"{self.path}: no launch {launch_index} of kernel {kernel!r}")

    def trace(self, kernel: str, launch_index: int = 0) -> Trace:
        """Reads the trace of the ``launch_index``-th launch of ``kernel``."""
        return self.launch(kernel, launch_index).trace()

    def diff(self, other: Union["Session", PathLike], **options: Any) -> SessionDiffResult:
        """Diffs ``other`` against this session (see :func:`prlx.diff_sessions`)."""
        other_path = other.path if isinstance(other, Session) else other
        return diff_sessions(self.path, other_path, **options)

    def __len__(self) -> int:
        return len(self.launches)

    def __iter__(self):
        return iter(self.launches)

    def __repr__(self) -> str:
        return f"Session({self.name!r}, {str(self.path)!r}, launches={len(self.launches)})"


def open_session(path: PathLike) -> Session:
    """Opens a session directory (or its ``session.json``).

    Raises :class:`prlx.SessionError` naming the file when the manifest is
    missing or invalid.
    """
    return Session(path)


__all__ = ["Launch", "Session", "open_session"]
