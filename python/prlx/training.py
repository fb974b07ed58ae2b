"""Training loops: mark each step, then diff step N of two runs.

What PRLX's training monitor does, on prlx's sessions:

- in the training script, ``for step, batch in prlx.training.steps(loader):``
  (or ``with prlx.training.step(n):``) makes each step a named range
  (``step 0``, ``step 1``, ...) in the session's marks;
- :func:`step_launches` gives the launches of one step of a session;
- :func:`diff_step` diffs step N of two sessions: the step's launches are
  paired by kernel and their index within the step, so the steps before it
  (which may have launched more or fewer kernels) do not shift the pairing;
- :func:`compare_runs` runs a training command twice under the shim (each
  run with its own extra environment, e.g. another seed or schedule) and
  returns :func:`diff_step`'s result.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

from ._native import SessionError
from .diff import SessionDiffResult, diff_sessions
from .marks import range as _range

__all__ = ["compare_runs", "diff_step", "step", "step_launches", "steps"]

PathLike = Union[str, "os.PathLike[str]"]
T = TypeVar("T")


def step_name(n: int) -> str:
    return f"step {n}"


@contextlib.contextmanager
def step(n: int) -> Iterator[None]:
    """The launches inside form training step ``n`` (a ``step n`` range)."""
    with _range(step_name(n)):
        yield


def steps(iterable: Iterable[T], start: int = 0) -> Iterator[Tuple[int, T]]:
    """``enumerate`` whose every iteration's body is marked as one step."""
    for n, item in enumerate(iterable, start):
        with step(n):
            yield n, item


def _manifest(session: PathLike) -> Tuple[Path, Dict[str, Any]]:
    d = Path(os.fspath(session))
    d = d if d.is_dir() else d.parent
    path = d / "session.json"
    try:
        return d, json.loads(path.read_text())
    except FileNotFoundError:
        raise SessionError(f"{path}: no session manifest") from None
    except ValueError as e:
        raise SessionError(f"{path}: not JSON: {e}") from None


def marks(session: PathLike) -> List[Dict[str, Any]]:
    """The session's marks (``session.json``'s ``marks``), in the order made."""
    return list(_manifest(session)[1].get("marks", []))


def _step_bounds(path: Path, manifest: Dict[str, Any], n: int) -> Tuple[int, Optional[int]]:
    name = step_name(n)
    begin = end = None
    for m in manifest.get("marks", []):
        if m.get("name") == name and m.get("kind") == "begin" and begin is None:
            begin = m["first_seq"]
        elif m.get("name") == name and m.get("kind") == "end" and begin is not None and end is None:
            end = m["first_seq"]
    if begin is None:
        have = sorted({m["name"] for m in manifest.get("marks", []) if m.get("name", "").startswith("step ")})
        raise SessionError(
            f"{path / 'session.json'}: no mark {name!r} "
            f"({'steps marked: ' + ', '.join(have) if have else 'no steps marked: was it run under the shim with prlx.training.steps?'})"
        )
    return begin, end


def step_launches(session: PathLike, n: int) -> List[Dict[str, Any]]:
    """The launch records of step ``n`` (``session.json`` entries), in order."""
    path, manifest = _manifest(session)
    begin, end = _step_bounds(path, manifest, n)
    return [l for l in manifest["launches"] if l["seq"] >= begin and (end is None or l["seq"] < end)]


def _step_session(session: PathLike, n: int, into: Path) -> Path:
    """A session directory holding only step ``n``'s launches, launch indices
    counted from the step's start."""
    path, manifest = _manifest(session)
    begin, end = _step_bounds(path, manifest, n)
    out = into / manifest.get("session", path.name)
    out.mkdir(parents=True)
    counts: Dict[str, int] = {}
    launches = []
    for l in manifest["launches"]:
        if l["seq"] < begin or (end is not None and l["seq"] >= end):
            continue
        l = dict(l)
        l["launch"] = counts.get(l["kernel"], 0)
        counts[l["kernel"]] = l["launch"] + 1
        launches.append(l)
        for key in ("file", "site_map"):
            f = l.get(key)
            if f and not (out / f).exists() and (path / f).exists():
                os.symlink((path / f).resolve(), out / f)
    manifest = dict(manifest, launches=launches)
    manifest.pop("marks", None)
    (out / "session.json").write_text(json.dumps(manifest))
    return out


def diff_step(session_a: PathLike, session_b: PathLike, n: int, **options: Any) -> SessionDiffResult:
    """Diffs training step ``n`` of two sessions (options as :func:`prlx.diff_sessions`)."""
    tmp = Path(tempfile.mkdtemp(prefix="prlx-step-"))
    try:
        a = _step_session(session_a, n, tmp / "a")
        b = _step_session(session_b, n, tmp / "b")
        return diff_sessions(a, b, **options)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def compare_runs(
    command: Sequence[str],
    step: int,
    trace_dir: PathLike,
    *,
    env_a: Optional[Mapping[str, str]] = None,
    env_b: Optional[Mapping[str, str]] = None,
    names: Tuple[str, str] = ("run-a", "run-b"),
    emulator: Optional[PathLike] = None,
    **options: Any,
) -> SessionDiffResult:
    """Runs ``command`` twice under the shim (run B with ``env_b``), and diffs step ``step``."""
    from .run import run

    a = run(command, names[0], trace_dir, emulator=emulator, extra=env_a)
    b = run(command, names[1], trace_dir, emulator=emulator, extra=env_b)
    return diff_step(a, b, step, **options)
