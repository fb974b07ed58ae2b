//! Warps whose event buffers overflowed: the recorded prefixes are diffed,
//! what lies past the shorter one is unknown, never identical.

use prlx_differ::{DiffOptions, DiffReport, DivergenceKind, diff_traces};
use prlx_trace::{Compression, EventType, TraceBuilder, TraceEvent, TraceFile};
use std::path::Path;

/// Events each warp runs, and the slots its buffer has: every warp overflows.
const RUN: u32 = 200;
const SLOTS: u32 = 180;

fn ev(site_id: u32, dir: u8, mask: u32) -> TraceEvent {
    TraceEvent {
        site_id,
        event_type: EventType::Branch as u8,
        branch_dir: dir,
        _reserved: 0,
        active_mask: mask,
        value_a: 0,
    }
}

/// Distinct sites per position, so an insertion or deletion re-joins at once.
fn stream(warp: usize) -> Vec<TraceEvent> {
    (0..RUN)
        .map(|i| ev(0x1000 + i * 3 + warp as u32, (i % 2) as u8, u32::MAX))
        .collect()
}

/// One planted divergence: where (index in A's stream) and what.
#[derive(Clone, Copy, Debug)]
enum Plant {
    Flip(usize),
    Mask(usize),
    /// Three events only B ran, before A's event at this index.
    Insert(usize),
    /// Three events only A ran, starting at this index.
    Delete(usize),
}

impl Plant {
    fn at(self) -> usize {
        match self {
            Plant::Flip(i) | Plant::Mask(i) | Plant::Insert(i) | Plant::Delete(i) => i,
        }
    }
}

/// Per warp, planted from the back so earlier indices stay put; many of them
/// close to the end of the 180 recorded events, all inside what both runs
/// recorded (warp 2's mask change is B's event 179, after the insertion).
fn plants(warp: usize) -> Vec<Plant> {
    let all: [&[Plant]; 8] = [
        &[Plant::Flip(10), Plant::Flip(170)],
        &[Plant::Mask(60), Plant::Flip(176)],
        &[Plant::Insert(120), Plant::Mask(176)],
        &[Plant::Delete(40), Plant::Flip(150), Plant::Mask(172)],
        &[Plant::Flip(178)],
        &[Plant::Insert(168)],
        &[Plant::Delete(165), Plant::Flip(100)],
        &[Plant::Mask(5), Plant::Mask(174), Plant::Flip(177)],
    ];
    let mut p = all[warp].to_vec();
    p.sort_by_key(|p| std::cmp::Reverse(p.at()));
    p
}

fn planted(warp: usize) -> Vec<TraceEvent> {
    let mut s = stream(warp);
    for p in plants(warp) {
        match p {
            Plant::Flip(i) => s[i].branch_dir ^= 1,
            Plant::Mask(i) => s[i].active_mask = 0x0000_ffff,
            Plant::Insert(i) => {
                let extra = (0..3).map(|k| ev(0x9000 + k, 0, u32::MAX));
                s.splice(i..i, extra);
            }
            Plant::Delete(i) => {
                s.drain(i..i + 3);
            }
        }
    }
    s
}

fn write(
    dir: &Path,
    name: &str,
    slots: u32,
    warp_events: impl Fn(usize) -> Vec<TraceEvent>,
) -> TraceFile {
    // 4 blocks x 64 threads: 8 warps.
    let mut b = TraceBuilder::new("kern", [4, 1, 1], [64, 1, 1])
        .unwrap()
        .events_per_warp(slots);
    for w in 0..b.num_warps() {
        for e in warp_events(w) {
            b.push_event(w, e).unwrap();
        }
    }
    let path = dir.join(name);
    b.write_file(&path, Compression::None).unwrap();
    TraceFile::open(&path).unwrap()
}

fn report(a: &TraceFile, b: &TraceFile) -> DiffReport {
    DiffReport::build(a, b, &diff_traces(a, b, &DiffOptions::default()), None)
}

#[test]
fn every_divergence_inside_the_recorded_events_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.prlx", SLOTS, stream);
    let b = write(dir.path(), "b.prlx", SLOTS, planted);
    assert!(a.warps().chain(b.warps()).all(|w| w.overflowed()));
    let r = report(&a, &b);
    let mut missed = Vec::new();
    let mut expected = 0;
    for w in 0..8 {
        for p in plants(w) {
            expected += 1;
            let found = r
                .divergences
                .iter()
                .find(|d| d.warp_idx == w && d.event_idx as usize == p.at());
            let kind_ok = |k: DivergenceKind| match p {
                Plant::Flip(_) => k == DivergenceKind::Branch,
                Plant::Mask(_) => k == DivergenceKind::ActiveMask,
                // Close to the end, the re-join may lie past what was recorded.
                Plant::Insert(i) | Plant::Delete(i) if i + 6 >= SLOTS as usize => {
                    matches!(k, DivergenceKind::ExtraEvents | DivergenceKind::Path)
                }
                Plant::Insert(_) | Plant::Delete(_) => k == DivergenceKind::ExtraEvents,
            };
            if !found.is_some_and(|d| kind_ok(d.kind)) {
                missed.push((w, p, found.map(|d| d.kind)));
            }
        }
    }
    assert!(
        missed.is_empty(),
        "missed {missed:?} in {:#?}",
        r.divergences
    );
    // Nothing but the planted divergences: the cut itself is not one.
    assert_eq!(r.total_divergences, expected, "{:#?}", r.divergences);
    assert_eq!(r.status, "diverged");
    assert_eq!(r.warps_overflowed, 8);
}

#[test]
fn two_slot_buffers_are_never_identical() {
    // PRLX_EVENTS_PER_WARP=2: every warp keeps 2 of its 200 events.
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.prlx", 2, stream);
    let b = write(dir.path(), "b.prlx", 2, planted);
    let r = report(&a, &b);
    assert_eq!(r.status, "unknown", "{r:#?}");
    assert_eq!(
        (r.total_divergences, r.warps_compared, r.warps_overflowed),
        (0, 8, 8)
    );
    let o = r.overflow.as_ref().unwrap();
    assert_eq!(
        (o.setting, o.needed_events_per_warp),
        ("PRLX_EVENTS_PER_WARP", 203)
    );
    assert_eq!(o.events_per_warp, [2, 2]);
    let ran_b: usize = (0..8).map(|w| planted(w).len()).sum();
    assert_eq!((o.dropped_a, o.dropped_b), (8 * 198, ran_b as u64 - 16));
    let text = prlx_differ::render::render_text(&r, 10);
    assert!(text.contains("status: unknown (overflowed)"), "{text}");
    assert!(
        text.contains("raise PRLX_EVENTS_PER_WARP to at least 203"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(json["status"], "unknown");
    assert_eq!(json["overflow"]["warps"], 8);
}

#[test]
fn events_past_a_cut_are_unknown_but_past_a_complete_end_are_extra() {
    let dir = tempfile::tempdir().unwrap();
    let first = |n: usize| move |w: usize| stream(w)[..n].to_vec();
    // A recorded everything (150 events); B ran 200 but kept 120.
    let a = write(dir.path(), "a.prlx", 160, first(150));
    let b = write(dir.path(), "b.prlx", 120, stream);
    let r = report(&a, &b);
    assert_eq!(
        (r.status, r.total_divergences),
        ("unknown", 0),
        "{:#?}",
        r.divergences
    );
    let o = r.overflowed_warps[0];
    assert_eq!((o.unknown_from_a, o.unknown_events_a), (Some(120), 30));
    assert_eq!((o.unknown_from_b, o.unknown_events_b), (Some(120), 0));
    // The other way round: B ran past A's complete end, so B's recorded
    // events past it are extra for certain.
    let a = write(dir.path(), "a2.prlx", 160, first(100));
    let r = report(&a, &b);
    assert_eq!(r.status, "diverged");
    let d = &r.divergences[0];
    assert_eq!(
        (d.kind, d.event_idx, d.events_a, d.events_b),
        (DivergenceKind::ExtraEvents, 100, 0, 20)
    );
    assert_eq!(r.total_divergences, 8);
}
