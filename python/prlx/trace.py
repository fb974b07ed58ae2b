"""Reading ``.prlx`` traces: :func:`read_trace` and the objects it returns.

The Rust reader (prlx-trace) validates the whole file and decodes it once;
the decoded bytes are kept in :attr:`Trace.data`. Each warp's events are
viewed in place inside those bytes: with NumPy installed, ``Warp.events`` is
a structured ``numpy.ndarray`` (``EVENT_DTYPE``) sharing memory with
``Trace.data`` (no copy); without NumPy it is a list of :class:`Event`
tuples decoded on first access.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import Any, List, NamedTuple, Tuple, Union

from . import _native

try:  # NumPy is optional: events are plain tuples without it.
    import numpy as _np
except ImportError:  # pragma: no cover - exercised only without numpy
    _np = None

EVENT_SIZE = 16
"""Bytes per recorded event (``TraceEvent`` of the v1 format)."""

EVENT_TYPES = (
    "Branch",
    "SharedMemStore",
    "Atomic",
    "FuncEntry",
    "FuncExit",
    "Switch",
    "GlobalStore",
)
"""Names of ``event_type`` values 0..6, as ``prlxctl inspect`` prints them."""

TAKEN_MASK_FLAG = 0x1
"""Bit of ``Event.flags``: a Branch event whose ``value_a`` is the taken mask."""

EVENT_DTYPE: Any = (
    _np.dtype(
        [
            ("site_id", "<u4"),
            ("event_type", "u1"),
            ("branch_dir", "u1"),
            ("flags", "<u2"),
            ("active_mask", "<u4"),
            ("value_a", "<u4"),
        ]
    )
    if _np is not None
    else None
)
"""NumPy structured dtype of one event (None without NumPy)."""

SNAPSHOT_SIZE = 288
"""Bytes per snapshot entry (``SnapshotEntry``: per-lane compare operands)."""

SNAPSHOT_DTYPE: Any = (
    _np.dtype(
        [
            ("site_id", "<u4"),
            ("active_mask", "<u4"),
            ("seq", "<u4"),
            ("cmp_predicate", "<u4"),
            ("lhs", "<u4", (32,)),
            ("rhs", "<u4", (32,)),
            ("_pad", "<u4", (4,)),
        ]
    )
    if _np is not None
    else None
)
"""NumPy structured dtype of one snapshot entry (None without NumPy)."""

_EVENT = struct.Struct("<IBBHII")
_SNAPSHOT = struct.Struct("<IIII32I32I4I")


class Snapshot(NamedTuple):
    """The per-lane operands of the compare that decided a branch (``SnapshotEntry``)."""

    site_id: int
    active_mask: int
    seq: int
    cmp_predicate: int
    """LLVM ``CmpInst::Predicate`` value (e.g. 2 = ``fcmp ogt``, 38 = ``icmp sgt``)."""
    lhs: Tuple[int, ...]
    """Left operand's raw 32 bits per lane (32 lanes)."""
    rhs: Tuple[int, ...]


def _snapshot(raw: Tuple[int, ...]) -> Snapshot:
    return Snapshot(raw[0], raw[1], raw[2], raw[3], raw[4:36], raw[36:68])


class Event(NamedTuple):
    """One recorded event (the 16-byte ``TraceEvent``)."""

    site_id: int
    event_type: int
    branch_dir: int
    flags: int
    active_mask: int
    value_a: int

    @property
    def type_name(self) -> str:
        """The event type's name (``"Branch"``, ``"Atomic"``, ...)."""
        t = self.event_type
        return EVENT_TYPES[t] if t < len(EVENT_TYPES) else f"Unknown({t})"


@dataclass(frozen=True)
class Header:
    """The 160-byte trace file header, field for field."""

    magic: int
    version: int
    flags: int
    kernel_name_hash: int
    kernel_name: str
    grid_dim: Tuple[int, int, int]
    block_dim: Tuple[int, int, int]
    warps_per_block: int
    total_warp_slots: int
    events_per_warp: int
    timestamp: int
    cuda_arch: int
    history_depth: int
    sample_rate: int
    snapshot_depth: int


class Warp:
    """One warp slot: its buffer header counters and its recorded events."""

    __slots__ = (
        "index",
        "write_idx",
        "overflow_count",
        "num_events",
        "total_event_count",
        "history",
        "_snapshot_ring",
        "block",
        "warp_in_block",
        "_trace",
        "_offset",
        "_events",
    )

    def __init__(
        self,
        trace: "Trace",
        fields: Tuple[Any, ...],
        history: List[Tuple[int, int, int]],
        snapshot_ring: Any = None,
    ) -> None:
        (
            self.index,
            self.write_idx,
            self.overflow_count,
            self.num_events,
            self.total_event_count,
            self._offset,
            block,
            self.warp_in_block,
        ) = fields
        self.block: Tuple[int, int, int] = tuple(block)  # type: ignore[assignment]
        """The block this warp slot ran in, (x, y, z)."""
        self.history: List[Tuple[int, int, int]] = history
        """History ring entries ``(site_id, value, seq)``, oldest first."""
        self._snapshot_ring = snapshot_ring
        self._trace = trace
        self._events: Any = None

    @property
    def overflowed(self) -> bool:
        """True when the device dropped events because the buffer was full."""
        return self.overflow_count > 0 or self.write_idx > self.num_events

    @property
    def raw_events(self) -> memoryview:
        """The warp's events as raw little-endian bytes (16 per event), no copy."""
        start = self._offset
        return memoryview(self._trace.data)[start : start + self.num_events * EVENT_SIZE]

    @property
    def events(self) -> Union["Any", List[Event]]:
        """The recorded events: a NumPy structured array viewing the trace's
        bytes when NumPy is installed, else a list of :class:`Event`."""
        if self._events is None:
            if _np is not None:
                self._events = _np.frombuffer(
                    self._trace.data,
                    dtype=EVENT_DTYPE,
                    count=self.num_events,
                    offset=self._offset,
                )
            else:
                self._events = [Event(*e) for e in _EVENT.iter_unpack(self.raw_events)]
        return self._events

    def _snapshot_slots(self) -> List[int]:
        """Storage slots of the written snapshot entries, oldest first (as the
        device writes slot ``n % depth`` for its n-th record)."""
        if self._snapshot_ring is None:
            return []
        total, depth, _ = self._snapshot_ring
        if depth == 0:
            return []
        if total <= depth:
            return list(range(total))
        oldest = total % depth
        return list(range(oldest, depth)) + list(range(oldest))

    @property
    def snapshots(self) -> Union["Any", List[Snapshot]]:
        """Snapshot ring entries (per-lane compare operands), oldest first: a
        NumPy structured array (``SNAPSHOT_DTYPE``) with NumPy, else a list of
        :class:`Snapshot`. Empty when the trace has no snapshot section."""
        slots = self._snapshot_ring and self._snapshot_slots()
        if not slots:
            if _np is not None:
                return _np.empty(0, dtype=SNAPSHOT_DTYPE)
            return []
        _, depth, offset = self._snapshot_ring
        if _np is not None:
            ring = _np.frombuffer(self._trace.data, dtype=SNAPSHOT_DTYPE, count=depth, offset=offset)
            return ring[slots]
        return [
            _snapshot(_SNAPSHOT.unpack_from(self._trace.data, offset + i * SNAPSHOT_SIZE))
            for i in slots
        ]

    def event(self, i: int) -> Event:
        """Event ``i`` as an :class:`Event` tuple, with or without NumPy."""
        if not 0 <= i < self.num_events:
            raise IndexError(f"warp {self.index} has {self.num_events} events, not {i + 1}")
        return Event(*_EVENT.unpack_from(self._trace.data, self._offset + i * EVENT_SIZE))

    def __len__(self) -> int:
        return self.num_events

    def __repr__(self) -> str:
        return (
            f"Warp(index={self.index}, num_events={self.num_events}, "
            f"overflow_count={self.overflow_count})"
        )


class Trace:
    """A validated ``.prlx`` trace: :attr:`header`, :attr:`warps`, the decoded bytes."""

    def __init__(self, raw: dict) -> None:
        self.path: str = raw["path"]
        """The path as given."""
        self.encoding: str = raw["encoding"]
        """``"plain"``, ``"flag-compressed"`` or ``"zstd"`` (``.prlx.zst``)."""
        h = raw["header"]
        h["grid_dim"] = tuple(h["grid_dim"])
        h["block_dim"] = tuple(h["block_dim"])
        self.header: Header = Header(**h)
        self.data: bytes = raw["data"]
        """The whole decoded trace, header included."""
        self.warps: List[Warp] = [
            Warp(self, fields, history, snapshots)
            for fields, history, snapshots in zip(raw["warps"], raw["history"], raw["snapshots"])
        ]

    @property
    def kernel_name(self) -> str:
        return self.header.kernel_name

    @property
    def num_events(self) -> int:
        """Events stored over all warps."""
        return sum(w.num_events for w in self.warps)

    def warp(self, index: int) -> Warp:
        """Warp slot ``index``."""
        return self.warps[index]

    def __len__(self) -> int:
        return len(self.warps)

    def __iter__(self):
        return iter(self.warps)

    def __repr__(self) -> str:
        return (
            f"Trace({self.path!r}, kernel={self.kernel_name!r}, "
            f"warps={len(self.warps)}, events={self.num_events})"
        )


def read_trace(path: Union[str, "os.PathLike[str]"]) -> Trace:
    """Reads and validates a ``.prlx`` trace (plain, flag-compressed or ``.prlx.zst``).

    Raises :class:`prlx.TraceError` naming the file and field when the trace
    is missing, truncated or invalid.
    """
    return Trace(_native.read_trace(os.fspath(path)))


def has_numpy() -> bool:
    """True when ``Warp.events`` are NumPy arrays."""
    return _np is not None


__all__ = [
    "EVENT_DTYPE",
    "EVENT_SIZE",
    "EVENT_TYPES",
    "Event",
    "Header",
    "SNAPSHOT_DTYPE",
    "SNAPSHOT_SIZE",
    "Snapshot",
    "Trace",
    "Warp",
    "has_numpy",
    "read_trace",
]
