"""A pytest helper: fail a test when two runs diverge.

::

    from prlx.testing import assert_no_divergence

    def test_kernel_is_deterministic(tmp_path):
        run_twice(tmp_path)  # your capture, e.g. under LD_PRELOAD=libprlx.so
        assert_no_divergence(tmp_path / "a", tmp_path / "b")

The verdict is ``prlxctl assert``'s: at most ``max_divergences``
divergences (ActiveMask ones not counted with ``ignore_active_mask``), and no
overflowed warp unless ``allow_overflow`` (what a full buffer dropped was not
compared). For sessions, every launch must also run and be traced in both.
"""

from __future__ import annotations

import os
from typing import Any, List, Optional

from .diff import DiffResult, PathLike, SessionDiffResult, diff, diff_sessions

__tracebackhide__ = True


def _describe(result: DiffResult, listed: int = 5) -> List[str]:
    lines = []
    first = result.first_divergence
    if first is not None:
        lines.append(f"  first: {first!r}")
    for d in result.divergences[:listed]:
        lines.append(f"  {d!r}")
    if result.total_divergences > listed:
        lines.append(f"  ... {result.total_divergences - listed} more")
    return lines


def assert_no_divergence(
    a: PathLike,
    b: PathLike,
    *,
    max_divergences: int = 0,
    ignore_active_mask: bool = False,
    allow_overflow: bool = False,
    map: Optional[PathLike] = None,
    **options: Any,
) -> Any:
    """Raises ``AssertionError`` (a pytest failure) when runs ``a`` and ``b`` diverge.

    ``a`` and ``b`` are two traces, or two session directories (a directory
    holding ``session.json``). Other keyword options go to :func:`prlx.diff`
    (or :func:`prlx.diff_sessions`). Returns the diff result when the runs
    pass, so a test can look further.
    """
    __tracebackhide__ = True
    if os.path.isdir(a) or os.path.isdir(b):
        if map is not None:
            raise TypeError("map does not apply to sessions: each session carries its site maps")
        if ignore_active_mask:
            raise TypeError("ignore_active_mask applies to two traces, not to sessions")
        session = diff_sessions(a, b, **options)
        return _check_sessions(session, max_divergences, allow_overflow)
    result = diff(a, b, map=map, **options)
    counted = result.gating_divergences(ignore_active_mask)
    problems = []
    if counted > max_divergences:
        problems.append(
            f"{counted} divergence(s) in kernel {result.kernel!r} "
            f"(allowed {max_divergences}): {os.fspath(a)} vs {os.fspath(b)}"
        )
        problems += _describe(result)
    if result.overflowed and not allow_overflow:
        overflow = result.data["overflow"]
        problems.append(
            f"{result.data['warps_overflowed']} warp(s) overflowed their event buffer, "
            f"so not every event was compared: raise {overflow['setting']} to at least "
            f"{overflow['needed_events_per_warp']} (or pass allow_overflow=True)"
        )
    if problems:
        raise AssertionError("runs diverge:\n" + "\n".join(problems))
    return result


def _check_sessions(
    session: SessionDiffResult, max_divergences: int, allow_overflow: bool
) -> SessionDiffResult:
    __tracebackhide__ = True
    problems = []
    counted = session.total_divergences
    if counted > max_divergences:
        problems.append(f"{counted} divergence(s) (allowed {max_divergences})")
        for launch in session.launches:
            first = launch.get("first_divergence")
            if first is None:
                continue
            where = first.get("source_location") or f"site {first['site_id']}"
            problems.append(
                f"  {launch['kernel']} launch {launch['launch_index']}: "
                f"{launch['total_divergences']} divergence(s), first {first['kind']} "
                f"in warp {first['warp_idx']} at {where}"
            )
    problems += [f"  {u}" for u in session.unmatched]
    problems += [
        f"  {l['kernel']} launch {l['launch_index']}: {l.get('error', 'unreadable trace')}"
        for l in session.launches
        if l["status"] == "error"
    ]
    if session.data["launches_overflowed"] > 0 and not allow_overflow:
        problems.append(
            f"  {session.data['launches_overflowed']} launch(es) overflowed their event "
            f"buffers; raise {session.data.get('overflow_setting')} to at least "
            f"{session.data.get('needed_events_per_warp')} (or pass allow_overflow=True)"
        )
    if problems:
        raise AssertionError(
            f"sessions {session.data['session_a']} and {session.data['session_b']} diverge:\n"
            + "\n".join(problems)
        )
    return session


__all__ = ["assert_no_divergence"]
