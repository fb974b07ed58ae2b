//! Writer → reader round trips in every encoding, with and without rings.

mod common;

use common::{event, sample_builder, snapshot};
use prlx_trace::{Compression, Encoding, TraceBuilder, TraceFile, flags};

const ENCODINGS: [(Compression, Encoding); 3] = [
    (Compression::None, Encoding::Plain),
    (
        Compression::FlagCompress { level: 3 },
        Encoding::FlagCompressed,
    ),
    (Compression::WholeFile { level: 3 }, Encoding::WholeFileZstd),
];

fn check_sample(trace: &TraceFile, history: bool, snapshots: bool) {
    let h = trace.header();
    assert_eq!(trace.kernel_name(), "sample_kernel");
    assert_eq!(h.grid_dim, [2, 1, 1]);
    assert_eq!(h.block_dim, [40, 1, 1]);
    assert_eq!(h.warps_per_block, 2);
    assert_eq!(h.total_warp_slots, 4);
    assert_eq!(h.events_per_warp, 8);
    assert_eq!(h.timestamp, 1_700_000_000);
    assert_eq!(h.cuda_arch, 80);
    assert_eq!(
        h.kernel_name_hash,
        prlx_trace::kernel_name_hash("sample_kernel")
    );
    assert_eq!(trace.num_warps(), 4);

    let warps: Vec<_> = trace.warps().collect();
    assert_eq!(trace.warps().len(), 4);
    assert_eq!(warps[0].events.len(), 3);
    assert_eq!(warps[0].events[2], event(102, 0, true, 2));
    assert!(!warps[0].overflowed());

    let w1 = &warps[1];
    assert_eq!(w1.events.len(), 8);
    assert_eq!(w1.header.write_idx, 11);
    assert_eq!(w1.header.overflow_count, 3);
    assert_eq!(w1.header.num_events, 8);
    assert_eq!(w1.header.total_event_count, 11);
    assert!(w1.overflowed());
    let sites: Vec<u32> = w1.events.iter().map(|e| e.site_id).collect();
    assert_eq!(sites, (200..208).collect::<Vec<_>>());

    assert!(warps[2].events.is_empty());
    assert_eq!(warps[3].events, &[event(400, 2, false, 7)]);
    assert!(trace.warp(4).is_none());

    assert_eq!(h.has_flag(flags::HISTORY), history);
    if history {
        let ring = trace.history(0).expect("history section");
        assert_eq!(ring.entries.len(), 4);
        assert!(ring.wrapped());
        let order: Vec<(u32, u32)> = ring.chronological().map(|e| (e.site_id, e.seq)).collect();
        assert_eq!(order, vec![(12, 2), (13, 3), (14, 4), (15, 5)]);

        let ring = trace.history(1).unwrap();
        assert!(!ring.wrapped());
        assert_eq!(ring.len(), 2);
        let values: Vec<u32> = ring.chronological().map(|e| e.value).collect();
        assert_eq!(values, vec![200, 201]);

        assert!(trace.history(2).unwrap().chronological().next().is_none());
        assert!(trace.history(4).is_none());
    } else {
        assert!(trace.history(0).is_none());
    }

    assert_eq!(h.has_flag(flags::SNAPSHOT), snapshots);
    if snapshots {
        let ring = trace.snapshots(3).expect("snapshot section");
        let got: Vec<_> = ring.chronological().copied().collect();
        let mut first = snapshot(31, 1);
        first.seq = 1;
        let mut second = snapshot(32, 2);
        second.seq = 2;
        assert_eq!(got, vec![first, second]);
        assert!(trace.snapshots(0).unwrap().is_empty());
    } else {
        assert!(trace.snapshots(3).is_none());
    }
}

#[test]
fn every_encoding_round_trips_in_memory() {
    for (history, snapshots) in [(false, false), (true, false), (false, true), (true, true)] {
        let builder = sample_builder(history, snapshots);
        for (compression, encoding) in ENCODINGS {
            let bytes = builder.to_bytes_with(compression).unwrap();
            let trace = TraceFile::from_bytes("mem.prlx", bytes)
                .unwrap_or_else(|e| panic!("{compression:?} h={history} s={snapshots}: {e}"));
            assert_eq!(trace.encoding(), encoding);
            check_sample(&trace, history, snapshots);
        }
    }
}

#[test]
fn every_encoding_round_trips_through_files() {
    let dir = tempfile::tempdir().unwrap();
    for (compression, encoding) in ENCODINGS {
        let path = dir.path().join(match encoding {
            Encoding::WholeFileZstd => "t.prlx.zst",
            _ => "t.prlx",
        });
        sample_builder(true, true)
            .write_file(&path, compression)
            .unwrap();
        let trace = TraceFile::open(&path).unwrap();
        assert_eq!(trace.encoding(), encoding);
        assert_eq!(trace.name(), path.display().to_string());
        check_sample(&trace, true, true);
    }
}

#[test]
fn compressed_traces_keep_compress_flag_only_in_flag_mode() {
    let builder = sample_builder(false, false);
    let flagged = builder
        .to_bytes_with(Compression::FlagCompress { level: 1 })
        .unwrap();
    let trace = TraceFile::from_bytes("f.prlx", flagged).unwrap();
    assert!(trace.header().has_flag(flags::COMPRESS));
    let whole = builder
        .to_bytes_with(Compression::WholeFile { level: 1 })
        .unwrap();
    assert_eq!(&whole[..4], &prlx_trace::ZSTD_MAGIC);
    let trace = TraceFile::from_bytes("w.prlx.zst", whole).unwrap();
    assert!(!trace.header().has_flag(flags::COMPRESS));
    // The plain writer never sets it.
    assert!(
        !TraceFile::from_bytes("p", builder.to_bytes())
            .unwrap()
            .header()
            .has_flag(flags::COMPRESS)
    );
}

#[test]
fn plain_file_is_mapped_and_views_point_into_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mapped.prlx");
    let bytes = sample_builder(false, false).to_bytes();
    std::fs::write(&path, &bytes).unwrap();
    let trace = TraceFile::open(&path).unwrap();
    let w = trace.warp(1).unwrap();
    // Events are 16-byte records at 160 + 1 * (16 + 8 * 16) + 16.
    let events_at = w.events.as_ptr() as usize;
    let header_at = w.header as *const _ as usize;
    assert_eq!(events_at - header_at, 16);
    assert_eq!(events_at % 16, 0);
}

#[test]
fn ring_chronology_across_many_wraps() {
    for depth in [1u32, 3, 4] {
        for writes in 0u32..12 {
            let mut b = TraceBuilder::new("r", [1, 1, 1], [32, 1, 1])
                .unwrap()
                .events_per_warp(1)
                .with_history(depth);
            for i in 0..writes {
                b.push_history(0, i, i * 10).unwrap();
            }
            let trace = TraceFile::from_bytes("r.prlx", b.to_bytes()).unwrap();
            let ring = trace.history(0).unwrap();
            let seqs: Vec<u32> = ring.chronological().map(|e| e.seq).collect();
            let expected: Vec<u32> = (writes.saturating_sub(depth)..writes).collect();
            assert_eq!(seqs, expected, "depth {depth}, writes {writes}");
            assert_eq!(ring.wrapped(), writes > depth);
        }
    }
}

#[test]
fn warp_locations_invert_prlx_warp_id() {
    let b = TraceBuilder::new("grid3d", [3, 2, 2], [16, 4, 1])
        .unwrap()
        .events_per_warp(1);
    let trace = TraceFile::from_bytes("g.prlx", b.to_bytes()).unwrap();
    assert_eq!(trace.header().warps_per_block, 2);
    assert_eq!(trace.num_warps(), 24);
    for idx in 0..24 {
        let loc = trace.warp_location(idx);
        let [x, y, z] = loc.block;
        let linear = x + y * 3 + z * 3 * 2;
        assert_eq!(linear, loc.block_linear);
        assert_eq!(linear * 2 + loc.warp_in_block, idx as u32);
        assert!(x < 3 && y < 2 && z < 2 && loc.warp_in_block < 2);
    }
    let loc = trace.warp_location(15);
    assert_eq!(
        (loc.block, loc.block_linear, loc.warp_in_block),
        ([1, 0, 1], 7, 1)
    );
}

#[test]
fn sampled_out_events_count_but_are_not_stored() {
    let mut b = TraceBuilder::new("s", [1, 1, 1], [32, 1, 1])
        .unwrap()
        .events_per_warp(4)
        .sample_rate(2);
    b.push_event(0, event(1, 0, true, 0)).unwrap();
    b.push_sampled_out(0).unwrap();
    let trace = TraceFile::from_bytes("s.prlx", b.to_bytes()).unwrap();
    assert!(trace.header().has_flag(flags::SAMPLED));
    assert_eq!(trace.header().sample_rate, 2);
    let w = trace.warp(0).unwrap();
    assert_eq!(
        (
            w.header.total_event_count,
            w.header.write_idx,
            w.events.len()
        ),
        (2, 1, 1)
    );
}

#[test]
fn kernel_name_hash_is_prlx_fnv1a_64() {
    use prlx_trace::kernel_name_hash;
    assert_eq!(kernel_name_hash(""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(kernel_name_hash("a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(kernel_name_hash("golden_kernel"), 0xf632_2005_718e_2164);
    // PRLX hashes signed chars (x86-64): 0xC3 0xA9 are sign-extended.
    assert_eq!(kernel_name_hash("kern\u{e9}"), 0x53f4_d892_f89a_d1b5);
}

#[test]
fn long_kernel_names_truncate_to_63_bytes_and_hash_in_full() {
    let long = "k".repeat(100);
    let b = TraceBuilder::new(&long, [1, 1, 1], [1, 1, 1])
        .unwrap()
        .events_per_warp(1);
    let trace = TraceFile::from_bytes("l.prlx", b.to_bytes()).unwrap();
    assert_eq!(trace.kernel_name(), "k".repeat(63));
    assert_eq!(
        trace.header().kernel_name_hash,
        prlx_trace::kernel_name_hash(&long)
    );
}

mod random_traces {
    //! Random valid traces (shapes, overflow, wrapping rings, all encodings)
    //! read back exactly as a simple model predicts.

    use super::common::{event, snapshot};
    use prlx_trace::{Compression, TraceBuilder, TraceFile};
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Op {
        Event(usize, u32),
        History(usize, u32),
        Snapshot(usize, u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0usize..64, any::<u32>()).prop_map(|(w, v)| Op::Event(w, v)),
            (0usize..64, any::<u32>()).prop_map(|(w, v)| Op::History(w, v)),
            (0usize..64, any::<u32>()).prop_map(|(w, v)| Op::Snapshot(w, v)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        #[test]
        fn random_valid_traces_round_trip(
            grid in (1u32..3, 1u32..3, 1u32..3),
            block in (1u32..70, 1u32..3, 1u32..2),
            epw in 1u32..6,
            history in prop::option::of(1u32..5),
            snapshots in prop::option::of(1u32..4),
            ops in prop::collection::vec(op(), 0..80),
            encoding in 0usize..3,
        ) {
            let mut b = TraceBuilder::new("prop", [grid.0, grid.1, grid.2], [block.0, block.1, block.2])
                .unwrap()
                .events_per_warp(epw);
            if let Some(d) = history { b = b.with_history(d); }
            if let Some(d) = snapshots { b = b.with_snapshots(d); }
            let n = b.num_warps();
            let mut events = vec![Vec::new(); n];
            let mut hist = vec![Vec::new(); n];
            let mut snaps = vec![Vec::new(); n];
            for op in &ops {
                match *op {
                    Op::Event(w, v) => {
                        let w = w % n;
                        b.push_event(w, event(v, (v % 7) as u8, v % 2 == 0, v)).unwrap();
                        events[w].push(v);
                    }
                    Op::History(w, v) if history.is_some() => {
                        let w = w % n;
                        b.push_history(w, v, v ^ 1).unwrap();
                        hist[w].push(v);
                    }
                    Op::Snapshot(w, v) if snapshots.is_some() => {
                        let w = w % n;
                        b.push_snapshot(w, snapshot(v, 1)).unwrap();
                        snaps[w].push(v);
                    }
                    _ => {}
                }
            }
            let compression = [
                Compression::None,
                Compression::FlagCompress { level: 1 },
                Compression::WholeFile { level: 1 },
            ][encoding];
            let trace = TraceFile::from_bytes("prop.prlx", b.to_bytes_with(compression).unwrap()).unwrap();
            prop_assert_eq!(trace.num_warps(), n);
            for w in 0..n {
                let warp = trace.warp(w).unwrap();
                let kept = events[w].len().min(epw as usize);
                let got: Vec<u32> = warp.events.iter().map(|e| e.site_id).collect();
                prop_assert_eq!(&got[..], &events[w][..kept]);
                prop_assert_eq!(warp.header.overflow_count as usize, events[w].len() - kept);
                prop_assert_eq!(warp.overflowed(), events[w].len() > kept);
                if let Some(depth) = history {
                    let skip = hist[w].len().saturating_sub(depth as usize);
                    let got: Vec<u32> = trace.history(w).unwrap().chronological().map(|e| e.site_id).collect();
                    prop_assert_eq!(&got[..], &hist[w][skip..]);
                } else {
                    prop_assert!(trace.history(w).is_none());
                }
                if let Some(depth) = snapshots {
                    let skip = snaps[w].len().saturating_sub(depth as usize);
                    let got: Vec<u32> = trace.snapshots(w).unwrap().chronological().map(|e| e.site_id).collect();
                    prop_assert_eq!(&got[..], &snaps[w][skip..]);
                }
            }
        }
    }
}

#[test]
fn open_traces_can_be_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<TraceFile>();
    assert_send_sync::<prlx_trace::SiteMap>();
    let trace = TraceFile::from_bytes("t.prlx", sample_builder(true, false).to_bytes()).unwrap();
    let counts: Vec<usize> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..trace.num_warps())
            .map(|w| {
                let trace = &trace;
                s.spawn(move || trace.warp(w).unwrap().events.len())
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(counts, vec![3, 8, 0, 1]);
}
