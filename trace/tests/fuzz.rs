//! Fuzzing the reader with proptest over mutated valid traces (cargo-fuzz
//! needs nightly), plus replay of `tests/corpus/`.
//!
//! Invariant: the reader returns Ok or Err and never panics; an Ok trace's
//! views all lie inside its bytes and agree with its header. A
//! `TraceValidator`, reused across every input, accepts exactly what the
//! reader accepts and decodes the same bytes.
//!
//! Corpus files are named `ok-*` (must open) or `err-*` (must be refused).
//! When proptest finds a failure, save the minimised input there so it is
//! replayed forever: `std::fs::write("tests/corpus/err-<what>.bin", bytes)`.

mod common;

use std::cell::RefCell;
use std::ops::Range;

use common::{event, sample_builder};
use prlx_trace::{Compression, TraceBuilder, TraceFile, TraceValidator};
use proptest::prelude::*;

thread_local! {
    /// One validator for every input of a thread, as a daemon worker keeps one.
    static VALIDATOR: RefCell<TraceValidator> = RefCell::new(TraceValidator::new());
}

fn well_formed(err: impl std::fmt::Display) -> Result<(), String> {
    let msg = err.to_string();
    if !msg.starts_with("fuzz.prlx") || msg.contains('\n') {
        return Err(format!("badly formed error: {msg:?}"));
    }
    Ok(())
}

/// Opens `bytes` and, if accepted, walks every view checking its bounds.
fn exercise(bytes: Vec<u8>) -> Result<bool, String> {
    let validated = VALIDATOR.with_borrow_mut(|validator| {
        validator
            .validate("fuzz.prlx", &bytes)
            .map(|trace| trace.as_bytes().to_vec())
            .map_err(|e| e.to_string())
    });
    let trace = match TraceFile::from_bytes("fuzz.prlx", bytes) {
        Ok(trace) => trace,
        Err(err) => {
            well_formed(&err)?;
            return match validated {
                Ok(_) => Err(format!(
                    "the validator accepts what the reader refuses: {err}"
                )),
                Err(msg) => well_formed(msg).map(|()| false),
            };
        }
    };
    match validated {
        Err(msg) => {
            return Err(format!(
                "the validator refuses what the reader accepts: {msg}"
            ));
        }
        Ok(decoded) if decoded != trace.as_bytes() => {
            return Err("the validator decoded other bytes than the reader".into());
        }
        Ok(_) => {}
    }
    let all = trace.as_bytes().as_ptr_range();
    let inside = |r: Range<*const u8>| all.start <= r.start && r.end <= all.end;
    let header = *trace.header();
    let epw = header.events_per_warp as usize;
    if trace.warps().len() != trace.num_warps()
        || trace.num_warps() != header.total_warp_slots as usize
    {
        return Err("warp count disagrees with header".into());
    }
    for warp in trace.warps() {
        let events = warp.events;
        if events.len() != warp.header.num_events as usize || events.len() > epw {
            return Err(format!("warp {} has {} events", warp.index, events.len()));
        }
        let header_ptr = warp.header as *const _ as *const u8;
        if !inside(header_ptr..header_ptr.wrapping_add(16)) || !inside(bytes_of(events)) {
            return Err(format!("warp {} view outside the trace", warp.index));
        }
        let _ = warp.overflowed();
        let _ = trace.warp_location(warp.index);
    }
    for idx in 0..trace.num_warps() {
        if let Some(ring) = trace.history(idx) {
            if ring.entries.len() != header.history_depth as usize
                || !inside(bytes_of(ring.entries))
            {
                return Err(format!("history ring {idx} out of shape"));
            }
            if ring.chronological().count() != ring.len() {
                return Err(format!("history ring {idx} chronology miscounted"));
            }
        }
        if let Some(ring) = trace.snapshots(idx) {
            if ring.entries.len() != header.snapshot_depth as usize
                || !inside(bytes_of(ring.entries))
            {
                return Err(format!("snapshot ring {idx} out of shape"));
            }
            if ring.chronological().count() != ring.len() {
                return Err(format!("snapshot ring {idx} chronology miscounted"));
            }
        }
    }
    if trace.warp(trace.num_warps()).is_some() || trace.history(trace.num_warps()).is_some() {
        return Err("view past the last warp".into());
    }
    Ok(true)
}

fn bytes_of<T>(slice: &[T]) -> Range<*const u8> {
    let r = slice.as_ptr_range();
    r.start as *const u8..r.end as *const u8
}

fn seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (h, s) in [(false, false), (true, true)] {
        let b = sample_builder(h, s);
        for c in [
            Compression::None,
            Compression::FlagCompress { level: 1 },
            Compression::WholeFile { level: 1 },
        ] {
            out.push(b.to_bytes_with(c).unwrap());
        }
    }
    let mut tiny = TraceBuilder::new("t", [1, 1, 1], [1, 1, 1])
        .unwrap()
        .events_per_warp(1)
        .with_history(1);
    tiny.push_event(0, event(1, 0, true, 1)).unwrap();
    tiny.push_history(0, 1, 1).unwrap();
    out.push(tiny.to_bytes());
    out
}

fn seed() -> impl Strategy<Value = Vec<u8>> {
    let seeds = seeds();
    (0..seeds.len()).prop_map(move |i| seeds[i].clone())
}

fn interesting_u32() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(0u32),
        Just(1),
        Just(2),
        Just(8),
        Just(16),
        Just(160),
        Just(0x8000_0000),
        Just(u32::MAX),
        any::<u32>(),
        0u32..4096,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn bit_flips_never_panic(bytes in seed(), flips in prop::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..8)) {
        let mut bytes = bytes;
        for (index, bit) in flips {
            let at = index.index(bytes.len());
            bytes[at] ^= 1 << bit;
        }
        prop_assert!(exercise(bytes).is_ok());
    }

    #[test]
    fn truncations_never_panic(bytes in seed(), cut in any::<prop::sample::Index>()) {
        let len = cut.index(bytes.len());
        let accepted = exercise(bytes[..len].to_vec());
        prop_assert_eq!(accepted, Ok(false), "a truncated trace must be refused");
    }

    #[test]
    fn header_field_overwrites_never_panic(
        bytes in seed(),
        writes in prop::collection::vec((0usize..40, interesting_u32()), 1..4),
    ) {
        let mut bytes = bytes;
        for (word, value) in writes {
            // 4-byte words of the header (or of the zstd frame's first bytes).
            let at = (word * 4).min(bytes.len().saturating_sub(4));
            if bytes.len() >= 4 {
                bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
            }
        }
        prop_assert!(exercise(bytes).is_ok());
    }

    #[test]
    fn record_header_overwrites_never_panic(
        bytes in seed(),
        writes in prop::collection::vec((any::<prop::sample::Index>(), interesting_u32()), 1..6),
    ) {
        let mut bytes = bytes;
        for (index, value) in writes {
            // Aligned words anywhere after the header: warp and ring headers included.
            let words = bytes.len().saturating_sub(160) / 4;
            if words > 0 {
                let at = 160 + 4 * index.index(words);
                bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
            }
        }
        prop_assert!(exercise(bytes).is_ok());
    }

    #[test]
    fn random_bytes_never_panic(prefix in prop_oneof![
            Just(Vec::new()),
            Just(0x5052_4C58_0000_0000u64.to_le_bytes().to_vec()),
            Just(vec![0x28, 0xB5, 0x2F, 0xFD]),
        ],
        tail in prop::collection::vec(any::<u8>(), 0..600),
    ) {
        let mut bytes = prefix;
        bytes.extend(tail);
        prop_assert!(exercise(bytes).is_ok());
    }
}

#[test]
fn unmutated_seeds_are_accepted() {
    for bytes in seeds() {
        assert_eq!(exercise(bytes), Ok(true));
    }
}

#[test]
fn corpus_replays() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("tests/corpus exists") {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let expect_ok = if name.starts_with("ok-") {
            true
        } else if name.starts_with("err-") {
            false
        } else {
            continue;
        };
        let bytes = std::fs::read(&path).unwrap();
        let accepted = exercise(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(accepted, expect_ok, "{name}");
        // The mmap path must agree with the in-memory path.
        assert_eq!(
            TraceFile::open(&path).is_ok(),
            expect_ok,
            "{name} via open()"
        );
        seen += 1;
    }
    assert!(seen >= 8, "corpus has only {seen} files");
}
