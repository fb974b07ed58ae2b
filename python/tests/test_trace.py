"""prlx.read_trace: header fields, per-warp events, every encoding, bad input."""

import struct

import pytest

import prlx


def test_header_fields(run_a):
    t = prlx.read_trace(run_a)
    h = t.header
    assert h.kernel_name == "reduce_clamped"
    assert h.version == 1
    assert h.magic == 0x50524C58_00000000
    assert h.grid_dim == (4, 1, 1) and h.block_dim == (128, 1, 1)
    assert h.warps_per_block == 4 and h.total_warp_slots == 16
    assert h.events_per_warp == 96 and h.cuda_arch == 80
    assert h.history_depth == 16 and h.snapshot_depth == 8
    assert t.encoding == "plain"
    assert len(t) == 16 and t.num_events == 465


def test_events_match_the_raw_bytes(run_a):
    t = prlx.read_trace(run_a)
    raw = run_a.read_bytes()
    # Plain trace: 160-byte header, then per warp a 16-byte header and
    # events_per_warp 16-byte slots.
    slot = 16 + t.header.events_per_warp * 16
    for w in t.warps:
        start = 160 + w.index * slot
        write_idx, overflow, num, total = struct.unpack_from("<IIII", raw, start)
        assert (w.write_idx, w.overflow_count, w.num_events, w.total_event_count) == (
            write_idx,
            overflow,
            num,
            total,
        )
        for i in (0, w.num_events - 1):
            expect = struct.unpack_from("<IBBHII", raw, start + 16 + i * 16)
            assert tuple(w.event(i)) == expect
            if prlx.has_numpy():
                assert tuple(int(x) for x in w.events[i]) == expect
    assert t.warps[13].block == (3, 0, 0) and t.warps[13].warp_in_block == 1
    assert all(len(h) <= 16 for h in (w.history for w in t.warps))
    assert any(w.history for w in t.warps)


def test_numpy_events_view_the_trace_in_place(run_a):
    np = pytest.importorskip("numpy")
    t = prlx.read_trace(run_a)
    ev = t.warps[2].events
    assert isinstance(ev, np.ndarray) and ev.dtype == prlx.EVENT_DTYPE
    assert len(ev) == t.warps[2].num_events
    assert not ev.flags.owndata  # a view of Trace.data, not a copy
    assert set(np.unique(ev["event_type"])) <= set(range(7))
    assert ev["active_mask"].dtype == np.uint32


@pytest.mark.parametrize(
    "name,encoding",
    [
        ("ok-minimal.prlx.zst", "zstd"),
        ("ok-rings-flag-compressed.prlx", "flag-compressed"),
        ("ok-minimal-overflowed.prlx", "plain"),
    ],
)
def test_corpus_traces_read(corpus, name, encoding):
    t = prlx.read_trace(corpus / name)
    assert t.encoding == encoding
    assert len(t.warps) == t.header.total_warp_slots
    for w in t.warps:
        assert len(w.events) == w.num_events


def test_overflow_is_visible(corpus):
    t = prlx.read_trace(corpus / "ok-minimal-overflowed.prlx")
    assert any(w.overflowed for w in t.warps)


@pytest.mark.parametrize(
    "name",
    [
        "err-bomb-undeclared-size.bin",
        "err-empty.bin",
        "err-header-only-events-per-warp-0.bin",
        "err-huge-claim-compressed.bin",
        "err-huge-claim.bin",
        "err-ring-depth-mismatch.bin",
        "err-zstd-magic-only.bin",
    ],
)
def test_bad_traces_raise_trace_error_naming_the_file(corpus, name):
    with pytest.raises(prlx.TraceError) as info:
        prlx.read_trace(corpus / name)
    assert name in str(info.value)
    assert isinstance(info.value, prlx.PrlxError)


def test_missing_file(tmp_path):
    with pytest.raises(prlx.TraceError, match="nope.prlx"):
        prlx.read_trace(tmp_path / "nope.prlx")


def test_every_truncation_is_an_error_not_a_crash(tmp_path, run_a):
    raw = run_a.read_bytes()
    path = tmp_path / "cut.prlx"
    for n in list(range(0, 200, 7)) + list(range(200, len(raw), 997)):
        path.write_bytes(raw[:n])
        with pytest.raises(prlx.TraceError, match="cut.prlx"):
            prlx.read_trace(path)


def test_snapshots_hold_the_operands_the_differ_reports(run_a, run_b):
    """The diff's snapshot context of the first divergence is warp 13's
    entry at that site: read_trace gives the same lanes' operands."""
    ctx = prlx.diff(run_a, run_b).data["snapshot"]
    w = prlx.read_trace(run_a).warps[ctx["warp_idx"]]
    site = int(ctx["site_id"], 16)
    entries = [s for s in w.snapshots if int(s["site_id"] if prlx.has_numpy() else s.site_id) == site]
    want = ctx["a"]
    match = [
        s
        for s in entries
        if int(s["seq"] if prlx.has_numpy() else s.seq) == want["seq"]
    ]
    assert len(match) == 1
    s = match[0]
    if prlx.has_numpy():
        assert [int(x) for x in s["lhs"]] == want["lhs"]
        assert [int(x) for x in s["rhs"]] == want["rhs"]
        assert int(s["cmp_predicate"]) == want["cmp_predicate"]
    else:
        assert list(s.lhs) == want["lhs"] and list(s.rhs) == want["rhs"]
    assert len(w.snapshots) <= prlx.read_trace(run_a).header.snapshot_depth


def test_snapshots_are_oldest_first(run_a, corpus):
    t = prlx.read_trace(run_a)
    assert any(len(w.snapshots) for w in t.warps)
    for w in t.warps:
        seqs = [int(s["seq"] if prlx.has_numpy() else s.seq) for s in w.snapshots]
        assert seqs == sorted(seqs)
    no_snapshots = prlx.read_trace(corpus / "ok-minimal.prlx.zst")
    assert no_snapshots.header.snapshot_depth == 0
    assert all(len(w.snapshots) == 0 for w in no_snapshots.warps)


NO_NUMPY = """
import sys
sys.modules["numpy"] = None  # import numpy now raises ImportError
import prlx
t = prlx.read_trace(sys.argv[1])
w = t.warps[13]
assert not prlx.has_numpy() and prlx.EVENT_DTYPE is None
assert isinstance(w.events, list) and len(w.events) == w.num_events
assert w.events[0] == w.event(0) and w.events[0].type_name == "FuncEntry"
s = w.snapshots
assert isinstance(s, list) and all(len(x.lhs) == 32 for x in s)
print(len(w.events), len(s))
"""


def test_without_numpy_events_are_tuples(run_a):
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", NO_NUMPY, str(run_a)], check=True, capture_output=True, text=True
    ).stdout.split()
    t = prlx.read_trace(run_a)
    assert out == [str(t.warps[13].num_events), str(len(t.warps[13].snapshots))]
