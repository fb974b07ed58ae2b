"""Diffing two traces or two sessions, with the results of ``prlxctl diff --json``.

:func:`diff` and :func:`diff_sessions` call the Rust differ (prlx-differ,
prlx-session-diff) that ``prlxctl`` uses and get back the very JSON
document ``prlxctl diff --json`` (``--session``) prints. The result objects
keep that text (:attr:`DiffResult.json`) and its parsed form
(:attr:`DiffResult.data`), and give the most used fields as attributes.
"""

from __future__ import annotations

import json as _json
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _native

PathLike = Union[str, "os.PathLike[str]"]

DIVERGENCE_KINDS = ("Branch", "ActiveMask", "Value", "Path", "ExtraEvents")
"""The kinds a divergence can have, as the differ names them."""


class Divergence:
    """One divergence of a trace diff (a ``divergences[]`` entry of the JSON).

    Every JSON field is an attribute (``warp_idx``, ``block``, ``event_idx``,
    ``kind``, ``branch_dir_a``, ``source_location``, ...); ``site_id`` and the
    masks are ints here (hex strings in the JSON).
    """

    __slots__ = ("data",)

    _HEX = ("site_id", "active_mask_a", "active_mask_b", "taken_mask_a", "taken_mask_b")

    def __init__(self, data: Dict[str, Any]) -> None:
        self.data: Dict[str, Any] = data
        """The JSON object as parsed."""

    def __getattr__(self, name: str) -> Any:
        try:
            value = self.data[name]
        except KeyError:
            raise AttributeError(name) from None
        if name in self._HEX and isinstance(value, str):
            return int(value, 16)
        return value

    def __repr__(self) -> str:
        where = f" at {self.data['source_location']}" if self.data.get("source_location") else ""
        return (
            f"Divergence({self.data['kind']}, warp {self.data['warp_idx']}, "
            f"block {tuple(self.data['block'])}, event {self.data['event_idx']}, "
            f"site {self.data['site_id']}{where})"
        )


class _JsonReport:
    """A report as ``prlxctl`` prints it with ``--json``: the text and its parsed form."""

    def __init__(self, text: str) -> None:
        self.json: str = text
        """The JSON text, byte for byte as ``prlxctl`` prints it."""
        self.data: Dict[str, Any] = _json.loads(text)
        """The JSON document as Python objects."""

    @property
    def status(self) -> str:
        """``"diverged"``, ``"identical"`` or ``"unknown"`` (none found, but a warp overflowed)."""
        return self.data["status"]

    @property
    def diverged(self) -> bool:
        return self.status == "diverged"

    def to_dict(self) -> Dict[str, Any]:
        return self.data

    def to_json(self) -> str:
        return self.json


class DiffResult(_JsonReport):
    """The report of one trace diff: what ``prlxctl diff A B --json`` prints."""

    @property
    def identical(self) -> bool:
        return self.status == "identical"

    @property
    def overflowed(self) -> bool:
        """True when a warp overflowed its buffer: unrecorded events were not compared."""
        return self.data.get("overflow") is not None

    @property
    def kernel(self) -> str:
        return self.data["kernel"]

    @property
    def total_divergences(self) -> int:
        return self.data["total_divergences"]

    @property
    def breakdown(self) -> Dict[str, int]:
        """Divergences per kind; every kind is present."""
        return self.data["divergence_breakdown"]

    @property
    def first_divergence(self) -> Optional[Divergence]:
        """The root-cause candidate: lowest event index, then block, then warp."""
        first = self.data.get("first_divergence")
        return Divergence(first) if first is not None else None

    @property
    def divergences(self) -> List[Divergence]:
        """Every divergence (cut to ``limit`` if one was given), by warp then event."""
        return [Divergence(d) for d in self.data["divergences"]]

    def gating_divergences(self, ignore_active_mask: bool = False) -> int:
        """Divergences that count against a CI threshold (as ``prlxctl assert``)."""
        masks = self.breakdown.get("ActiveMask", 0) if ignore_active_mask else 0
        return self.total_divergences - masks

    def __repr__(self) -> str:
        return (
            f"DiffResult(status={self.status!r}, kernel={self.kernel!r}, "
            f"total_divergences={self.total_divergences})"
        )


class SessionDiffResult(_JsonReport):
    """The report of a session diff: what ``prlxctl diff --session A B --json`` prints."""

    @property
    def launches(self) -> List[Dict[str, Any]]:
        """Every matched launch in run A's order, with its status and first divergence."""
        return self.data["launches"]

    @property
    def kernels(self) -> List[Dict[str, Any]]:
        """Kernels with divergences, the earliest-parting first."""
        return self.data["kernels"]

    @property
    def unmatched(self) -> List[str]:
        """Launches that ran in one session only, or were traced in one only."""
        out = [
            f"{l['kernel']} launch {l['launch_index']} ran in {side} only"
            for side, key in (("A", "only_in_a"), ("B", "only_in_b"))
            for l in self.data[key]
        ]
        out += [
            f"{l['kernel']} launch {l['launch_index']} was traced in one run only"
            for l in self.launches
            if l["status"] == "missing-trace"
        ]
        return out

    @property
    def total_divergences(self) -> int:
        return sum(l["total_divergences"] for l in self.launches)

    def __repr__(self) -> str:
        return (
            f"SessionDiffResult(status={self.status!r}, "
            f"launches_compared={self.data['launches_compared']}, "
            f"launches_diverged={self.data['launches_diverged']})"
        )


def _warp_ranges(warps: Union[int, Iterable[Any], None]) -> List[Tuple[int, int]]:
    if warps is None:
        return []
    if isinstance(warps, int):
        return [(warps, warps)]
    out = []
    for w in warps:
        if isinstance(w, int):
            out.append((w, w))
        elif isinstance(w, range):
            if len(w):
                out.append((w[0], w[-1]) if w.step > 0 else (w[-1], w[0]))
        else:
            lo, hi = w
            out.append((int(lo), int(hi)))
    return out


def _blocks(blocks: Union[int, Sequence[Any], None]) -> List[List[int]]:
    if blocks is None:
        return []
    if isinstance(blocks, int):
        return [[blocks]]
    return [[b] if isinstance(b, int) else [int(c) for c in b] for b in blocks]


def _names(value: Union[str, Iterable[str], None]) -> List[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v for v in value.split(",") if v.strip()]
    return list(value)


def _sites(value: Union[int, str, Iterable[Union[int, str]], None]) -> List[int]:
    if value is None:
        return []
    if isinstance(value, (int, str)):
        value = [value]
    return [int(s, 0) if isinstance(s, str) else int(s) for s in value]


def diff(
    a: PathLike,
    b: PathLike,
    *,
    map: Optional[PathLike] = None,
    values: bool = False,
    max_edits: Optional[int] = None,
    remap: bool = False,
    warps: Union[int, Iterable[Any], None] = None,
    blocks: Union[int, Sequence[Any], None] = None,
    kinds: Union[str, Iterable[str], None] = None,
    sites: Union[int, str, Iterable[Union[int, str]], None] = None,
    functions: Union[str, Iterable[str], None] = None,
    history: Optional[int] = None,
    classify: bool = False,
    limit: Optional[int] = None,
) -> DiffResult:
    """Diffs trace ``b`` against the reference ``a``, as ``prlxctl diff A B --json``.

    Options, each the ``prlxctl diff`` flag of the same name:
    ``map`` (site map ``prlx-sites.json`` for source lines), ``values``
    (also report operand differences), ``max_edits`` (aligner budget per
    warp, at most 4096), ``remap`` (pair warps by thread id), filters
    ``warps`` (slot, ``(lo, hi)`` inclusive or ``range``), ``blocks`` (linear
    index or ``(x, y[, z])``), ``kinds`` (see :data:`DIVERGENCE_KINDS`),
    ``sites`` (ids, int or ``"0x1a2b"``), ``functions`` (``*`` wildcard;
    needs ``map``), ``history`` (last N recorded values before each
    divergence), ``classify`` (heuristic cause), ``limit`` (``-n``: list at
    most N divergences; counts are unaffected).

    Raises :class:`prlx.TraceError` for an unreadable trace or site map and
    :class:`prlx.OptionError` for an option out of range.
    """
    text = _native.diff(
        os.fspath(a),
        os.fspath(b),
        map=os.fspath(map) if map is not None else None,
        values=values,
        max_edits=max_edits,
        remap=remap,
        warps=_warp_ranges(warps),
        blocks=_blocks(blocks),
        kinds=_names(kinds),
        sites=_sites(sites),
        functions=_names(functions),
        history=history,
        classify=classify,
        limit=limit,
    )
    return DiffResult(text)


def diff_sessions(
    a: PathLike, b: PathLike, *, values: bool = False, max_edits: Optional[int] = None
) -> SessionDiffResult:
    """Diffs two session directories, as ``prlxctl diff --session A B --json``.

    Launches are paired by (kernel, launch index) and each pair is diffed;
    kernels are ranked by their first divergence. Raises
    :class:`prlx.SessionError` when a directory or its ``session.json``
    cannot be read (a trace that cannot be read is a launch with status
    ``"error"`` in the result, as in ``prlxctl``).
    """
    return SessionDiffResult(
        _native.diff_sessions(os.fspath(a), os.fspath(b), values=values, max_edits=max_edits)
    )


__all__ = [
    "DIVERGENCE_KINDS",
    "DiffResult",
    "Divergence",
    "SessionDiffResult",
    "diff",
    "diff_sessions",
]
