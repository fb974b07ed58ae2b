"""Type stubs of the native module (Rust, PyO3). Use the wrappers in ``prlx``."""

from typing import Any, Dict, List, Optional, Tuple

class PrlxError(Exception): ...
class TraceError(PrlxError): ...
class SessionError(PrlxError): ...
class OptionError(PrlxError): ...

def read_trace(path: str) -> Dict[str, Any]: ...
def read_session(path: str) -> str: ...
def diff(
    a: str,
    b: str,
    *,
    map: Optional[str] = ...,
    values: bool = ...,
    max_edits: Optional[int] = ...,
    remap: bool = ...,
    warps: List[Tuple[int, int]] = ...,
    blocks: List[List[int]] = ...,
    kinds: List[str] = ...,
    sites: List[int] = ...,
    functions: List[str] = ...,
    history: Optional[int] = ...,
    classify: bool = ...,
    limit: Optional[int] = ...,
) -> str: ...
def diff_sessions(
    a: str, b: str, *, values: bool = ..., max_edits: Optional[int] = ...
) -> str: ...
