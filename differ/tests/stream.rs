//! Compressed traces diffed while they decode give the same report as the
//! same traces opened whole; broken ones fall back to the reader's errors.

use prlx_differ::{
    DiffOptions, DiffReport, OpenedTrace, ReportOptions, WarpPairing, diff_files, diff_traces,
};
use prlx_trace::{Compression, EventType, SnapshotEntry, TraceBuilder, TraceEvent, TraceFile};
use std::path::{Path, PathBuf};

/// 40 warps (more than two chunks) of up to 60 events, history and
/// snapshots; `flip` changes warps 3 and 37 and overflows warp 20.
fn builder(flip: bool, warps_x: u32) -> TraceBuilder {
    let mut b = TraceBuilder::new("kern", [warps_x, 1, 1], [64, 1, 1])
        .unwrap()
        .events_per_warp(48)
        .with_history(8)
        .with_snapshots(2);
    for w in 0..b.num_warps() {
        let n = if flip && w == 20 { 60 } else { 40 };
        for i in 0..n as u32 {
            let mut e = TraceEvent {
                site_id: 0x100 + i,
                event_type: EventType::Branch as u8,
                branch_dir: (i % 2) as u8,
                _reserved: 0,
                active_mask: u32::MAX,
                value_a: i,
            };
            if flip && (w == 3 || w == 37) && i == 7 {
                e.branch_dir ^= 1;
            }
            b.push_history(w, e.site_id, i * 2).unwrap();
            if i == 7 {
                let entry = SnapshotEntry {
                    site_id: e.site_id,
                    active_mask: u32::MAX,
                    cmp_predicate: 40,
                    lhs_values: [i + u32::from(e.branch_dir); 32],
                    rhs_values: [8; 32],
                    ..SnapshotEntry::default()
                };
                b.push_snapshot(w, entry).unwrap();
            }
            b.push_event(w, e).unwrap();
        }
    }
    b
}

fn write(dir: &Path, name: &str, b: &TraceBuilder, c: Compression) -> PathBuf {
    let path = dir.join(name);
    b.write_file(&path, c).unwrap();
    path
}

/// The report, minus the trace names (which differ by file).
fn json(r: &DiffReport) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    v["trace_a"] = serde_json::Value::Null;
    v["trace_b"] = serde_json::Value::Null;
    v
}

#[test]
fn streamed_and_whole_reports_agree() {
    let dir = tempfile::tempdir().unwrap();
    let options = ReportOptions {
        history: Some(4),
        classify: true,
        ..ReportOptions::default()
    };
    for (a_x, warps_x, c) in [
        (20, 20, Compression::FlagCompress { level: 3 }),
        (20, 20, Compression::WholeFile { level: 1 }),
        (20, 17, Compression::WholeFile { level: 1 }),
        (17, 20, Compression::FlagCompress { level: 1 }),
    ] {
        let a = write(dir.path(), "a.zst", &builder(false, a_x), c);
        let b = write(dir.path(), "b.zst", &builder(true, warps_x), c);
        let pair = diff_files(&a, &b, &DiffOptions::default(), WarpPairing::BySlot).unwrap();
        assert!(matches!(pair.a, OpenedTrace::Streamed(_)), "{c:?}");
        let streamed = DiffReport::build_with(&pair.a, &pair.b, &pair.diff, None, &options);
        let (ta, tb) = (TraceFile::open(&a).unwrap(), TraceFile::open(&b).unwrap());
        let whole = diff_traces(&ta, &tb, &DiffOptions::default());
        let whole = DiffReport::build_with(&ta, &tb, &whole, None, &options);
        assert_eq!(json(&streamed), json(&whole), "{c:?}");
        // Warps 3 and 37 flip; warp 20 ran 20 events past A's complete end
        // (B kept 8 of them). With 17 blocks on either side, warp 37 is not compared.
        let expected = if a_x.min(warps_x) == 20 { 3 } else { 2 };
        assert_eq!(
            streamed.total_divergences, expected,
            "{c:?}: {:#?}",
            streamed.divergences
        );
        assert_eq!(streamed.warps_overflowed, 1);
        assert!(streamed.snapshot.is_some(), "the rings were kept");
        if let OpenedTrace::Streamed(s) = &pair.b {
            assert_eq!(s.kept_warps(), expected);
        }
    }
}

#[test]
fn plain_and_mixed_pairs_are_opened_whole() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.prlx", &builder(false, 20), Compression::None);
    let b = write(
        dir.path(),
        "b.zst",
        &builder(true, 20),
        Compression::WholeFile { level: 1 },
    );
    let pair = diff_files(&a, &b, &DiffOptions::default(), WarpPairing::BySlot).unwrap();
    assert!(matches!(pair.a, OpenedTrace::File(_)));
    assert_eq!(pair.diff.diverged.len(), 3);
}

#[test]
fn broken_compressed_traces_report_the_readers_error() {
    let dir = tempfile::tempdir().unwrap();
    let c = Compression::FlagCompress { level: 3 };
    let a = write(dir.path(), "a.zst", &builder(false, 20), c);
    let b = write(dir.path(), "b.zst", &builder(true, 20), c);
    let mut bytes = std::fs::read(&b).unwrap();
    bytes.truncate(bytes.len() - 40);
    let cut = dir.path().join("cut.zst");
    std::fs::write(&cut, &bytes).unwrap();
    let err = diff_files(&a, &cut, &DiffOptions::default(), WarpPairing::BySlot)
        .err()
        .expect("a truncated frame is an error")
        .to_string();
    assert!(err.contains("cut.zst"), "{err}");
    // A warp header that disagrees with itself, in an otherwise valid frame.
    let mut plain = builder(true, 20).to_bytes();
    // num_events lives at byte 8 of warp 5's record.
    let at = prlx_trace::HEADER_SIZE + 5 * (16 + 48 * 16) + 8;
    plain[at..at + 4].copy_from_slice(&41u32.to_le_bytes());
    let mut header: prlx_trace::TraceFileHeader =
        bytemuck::pod_read_unaligned(&plain[..prlx_trace::HEADER_SIZE]);
    header.flags |= prlx_trace::flags::COMPRESS;
    let mut file = bytemuck::bytes_of(&header).to_vec();
    file.extend(zstd::bulk::compress(&plain[prlx_trace::HEADER_SIZE..], 1).unwrap());
    let bad = dir.path().join("bad.zst");
    std::fs::write(&bad, &file).unwrap();
    let err = diff_files(&a, &bad, &DiffOptions::default(), WarpPairing::BySlot)
        .err()
        .expect("a bad warp header is an error")
        .to_string();
    assert!(
        err.contains("bad.zst") && err.contains("warp[5].num_events"),
        "{err}"
    );
}
