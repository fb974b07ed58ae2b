"""Sessions stored by prlxd, the capture daemon: list them and show one.

The socket is ``socket`` when given, else ``PRLX_SOCKET``, the user socket
(``$XDG_RUNTIME_DIR/prlx/prlxd.sock``) or the system socket, as for
``prlxctl``. A daemon that is not running raises :class:`prlx.DaemonError`
naming the socket.
"""

from __future__ import annotations

import json as _json
import os
from typing import Any, Dict, List, Optional, Union

from . import _native

PathLike = Union[str, "os.PathLike[str]"]


def _socket(socket: Optional[PathLike]) -> Optional[str]:
    return os.fspath(socket) if socket is not None else None


def list_sessions(
    socket: Optional[PathLike] = None, timeout: float = 120.0
) -> List[Dict[str, Any]]:
    """The sessions prlxd stores (as ``prlxctl session list --json``): one dict
    per session with its ``name``, ``uid``, launch counts and stored bytes."""
    return _json.loads(_native.daemon_sessions(socket=_socket(socket), timeout=timeout))


def show_session(
    session: str, socket: Optional[PathLike] = None, timeout: float = 120.0
) -> Dict[str, Any]:
    """One stored session (as ``prlxctl session show --json``):
    ``{"info": ..., "manifest": ...}``, the manifest being its ``session.json``."""
    return _json.loads(
        _native.daemon_show_session(session, socket=_socket(socket), timeout=timeout)
    )


__all__ = ["list_sessions", "show_session"]
