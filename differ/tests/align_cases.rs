//! The "done when" cases for the per-warp alignment, over plain slices.

use prlx_differ::{AlignOptions, DivergenceKind, EventDivergence, align_warp};
use prlx_trace::{EventType, TraceEvent};

fn ev(site_id: u32, ty: EventType, dir: u8, mask: u32, value: u32) -> TraceEvent {
    TraceEvent {
        site_id,
        event_type: ty as u8,
        branch_dir: dir,
        _reserved: 0,
        active_mask: mask,
        value_a: value,
    }
}

fn branch(site: u32, dir: u8) -> TraceEvent {
    ev(site, EventType::Branch, dir, u32::MAX, 7)
}

fn store(site: u32, value: u32) -> TraceEvent {
    ev(site, EventType::SharedStore, 0, u32::MAX, value)
}

/// A reduction-like warp stream: entry, a strided loop with a bounds check
/// and a store per iteration, then a tail of distinct sites.
fn kernel_stream(iterations: usize) -> Vec<TraceEvent> {
    let mut s = vec![ev(0x1, EventType::FuncEntry, 0, u32::MAX, 0)];
    for it in 0..iterations {
        s.push(branch(0x10, 1)); // loop back-edge: continue
        s.push(branch(0x11, (it % 3 == 0) as u8)); // bounds check
        s.push(store(0x12, it as u32));
    }
    s.push(branch(0x10, 0)); // loop exit
    for k in 0..60u32 {
        s.push(if k % 2 == 0 {
            branch(0x100 + k, (k % 4 == 0) as u8)
        } else {
            store(0x100 + k, k)
        });
    }
    s.push(ev(0x2, EventType::FuncExit, 0, u32::MAX, 0));
    s
}

fn diff(a: &[TraceEvent], b: &[TraceEvent], opts: AlignOptions) -> Vec<EventDivergence> {
    let mut out = Vec::new();
    align_warp(a, b, &opts, &mut out);
    out
}

fn only(divs: &[EventDivergence]) -> EventDivergence {
    assert_eq!(
        divs.len(),
        1,
        "expected exactly one divergence, got {divs:#?}"
    );
    divs[0]
}

#[test]
fn identical_streams_have_no_divergence() {
    let a = kernel_stream(20);
    assert!(diff(&a, &a.clone(), AlignOptions::default()).is_empty());
    assert!(diff(&[], &[], AlignOptions::default()).is_empty());
}

#[test]
fn flipped_branch_is_one_branch_divergence() {
    let a = kernel_stream(20);
    let mut b = a.clone();
    let idx = 62 + 10; // a tail branch (even k): entry, 20 x 3 loop events, exit
    assert_eq!(b[idx].event_type, EventType::Branch as u8);
    b[idx].branch_dir ^= 1;
    let d = only(&diff(&a, &b, AlignOptions::default()));
    assert_eq!(
        (d.kind, d.event_idx, d.event_idx_b),
        (DivergenceKind::Branch, idx as u32, idx as u32)
    );
    assert_eq!(d.site_id, a[idx].site_id);
}

#[test]
fn flipped_bounds_check_inside_loop_is_one_branch_divergence() {
    let a = kernel_stream(20);
    let mut b = a.clone();
    let idx = 1 + 3 * 4 + 1; // iteration 4's bounds check
    b[idx].branch_dir ^= 1;
    let d = only(&diff(&a, &b, AlignOptions::default()));
    assert_eq!((d.kind, d.event_idx), (DivergenceKind::Branch, idx as u32));
}

#[test]
fn changed_mask_is_one_active_mask_divergence() {
    let a = kernel_stream(20);
    let mut b = a.clone();
    b[50].active_mask = 0x0000_ffff;
    let d = only(&diff(&a, &b, AlignOptions::default()));
    assert_eq!(
        (d.kind, d.event_idx, d.event_idx_b),
        (DivergenceKind::ActiveMask, 50, 50)
    );
}

#[test]
fn three_inserted_events_are_one_extra_events() {
    let a = kernel_stream(20);
    let mut b = a.clone();
    let at = 70;
    b.splice(at..at, [store(0x900, 1), branch(0x901, 1), store(0x902, 2)]);
    let d = only(&diff(&a, &b, AlignOptions::default()));
    assert_eq!(
        (d.kind, d.event_idx, d.event_idx_b),
        (DivergenceKind::ExtraEvents, 70, 70)
    );
    assert_eq!((d.events_a, d.events_b), (0, 3));
    assert_eq!(d.site_id, 0x900);
}

#[test]
fn three_deleted_events_are_one_extra_events_on_a() {
    let a = kernel_stream(20);
    let mut b = a.clone();
    b.drain(80..83);
    let d = only(&diff(&a, &b, AlignOptions::default()));
    assert_eq!(
        (d.kind, d.event_idx, d.event_idx_b),
        (DivergenceKind::ExtraEvents, 80, 80)
    );
    assert_eq!((d.events_a, d.events_b), (3, 0));
}

/// A loop whose only event is its back-edge, run 40 more times in B.
#[test]
fn loop_forty_more_iterations_is_one_extra_events() {
    let build = |iters: usize| {
        let mut s = vec![store(0x50, 0)];
        s.extend(std::iter::repeat_n(branch(0x51, 1), iters));
        s.push(branch(0x51, 0));
        s.extend((0..30).map(|k| store(0x60 + k, k)));
        s
    };
    let (a, b) = (build(10), build(50));
    let d = only(&diff(&a, &b, AlignOptions::default()));
    // Where A leaves the loop, B runs 40 more back-edges, then both exit.
    assert_eq!(
        (d.kind, d.event_idx, d.event_idx_b),
        (DivergenceKind::ExtraEvents, 11, 11)
    );
    assert_eq!((d.events_a, d.events_b), (0, 40));
}

/// The three-event loop body of `kernel_stream`, 40 more iterations: 120 events.
#[test]
fn loop_body_forty_more_iterations_is_one_extra_events() {
    let (a, b) = (kernel_stream(20), kernel_stream(60));
    let d = only(&diff(&a, &b, AlignOptions::default()));
    assert_eq!(d.kind, DivergenceKind::ExtraEvents);
    assert_eq!((d.events_a, d.events_b), (0, 120));
}

#[test]
fn path_change_is_one_path_divergence() {
    let a = kernel_stream(20);
    let mut b = a[..100].to_vec();
    b.extend((0..25u32).map(|k| store(0x700 + k, k)));
    let d = only(&diff(&a, &b, AlignOptions::default()));
    assert_eq!(
        (d.kind, d.event_idx, d.event_idx_b),
        (DivergenceKind::Path, 100, 100)
    );
}

#[test]
fn path_change_past_the_edit_bound_is_one_path_divergence() {
    let a = kernel_stream(200);
    let mut b = a[..100].to_vec();
    b.extend((0..600u32).map(|k| store(0x7000 + k, k)));
    let opts = AlignOptions {
        max_edits: 64,
        ..AlignOptions::default()
    };
    let d = only(&diff(&a, &b, opts));
    assert_eq!(
        (d.kind, d.event_idx, d.event_idx_b),
        (DivergenceKind::Path, 100, 100)
    );
}

#[test]
fn coincidental_shared_site_does_not_split_a_path() {
    let a = kernel_stream(20);
    let mut b = a[..100].to_vec();
    b.extend((0..10u32).map(|k| store(0x700 + k, k)));
    b.push(a[110]); // one event that happens to match A's tail
    b.extend((10..20u32).map(|k| store(0x700 + k, k)));
    let d = only(&diff(&a, &b, AlignOptions::default()));
    assert_eq!((d.kind, d.event_idx), (DivergenceKind::Path, 100));
}

#[test]
fn values_are_compared_only_when_asked() {
    let a = kernel_stream(20);
    let mut b = a.clone();
    b[30].value_a ^= 0xdead;
    assert!(diff(&a, &b, AlignOptions::default()).is_empty());
    let opts = AlignOptions {
        compare_values: true,
        ..AlignOptions::default()
    };
    let d = only(&diff(&a, &b, opts));
    assert_eq!((d.kind, d.event_idx), (DivergenceKind::Value, 30));
}

#[test]
fn flipped_branch_into_other_block_then_rejoin() {
    // if (x) { two stores } -- A takes it, B does not; then both carry on.
    let a = kernel_stream(20);
    let mut b = a.clone();
    let at = 90;
    let mut a = a;
    a.splice(at..at, [branch(0x880, 1), store(0x881, 1), store(0x882, 2)]);
    b.splice(at..at, [branch(0x880, 0)]);
    let divs = diff(&a, &b, AlignOptions::default());
    assert_eq!(divs.len(), 2, "{divs:#?}");
    assert_eq!(
        (divs[0].kind, divs[0].event_idx),
        (DivergenceKind::Branch, at as u32)
    );
    assert_eq!(
        (divs[1].kind, divs[1].event_idx),
        (DivergenceKind::ExtraEvents, at as u32 + 1)
    );
    assert_eq!((divs[1].events_a, divs[1].events_b), (2, 0));
}

#[test]
fn trailing_extra_events_are_extra_events() {
    let a = kernel_stream(20);
    let mut b = a.clone();
    b.extend([store(0x990, 0), store(0x991, 0)]);
    let d = only(&diff(&a, &b, AlignOptions::default()));
    assert_eq!(
        (d.kind, d.event_idx, d.events_b),
        (DivergenceKind::ExtraEvents, a.len() as u32, 2)
    );
}

#[test]
fn adjacent_flipped_branches_are_two_branch_divergences() {
    let a = kernel_stream(20);
    let mut b = a.clone();
    // Tail branches at 72 and 74 with one store between them.
    for idx in [72, 74] {
        b[idx].branch_dir ^= 1;
    }
    let divs = diff(&a, &b, AlignOptions::default());
    let got: Vec<(DivergenceKind, u32)> = divs.iter().map(|d| (d.kind, d.event_idx)).collect();
    assert_eq!(
        got,
        vec![(DivergenceKind::Branch, 72), (DivergenceKind::Branch, 74)]
    );
}

#[test]
fn back_to_back_flips_are_branch_divergences_before_and_after_an_insertion() {
    let mut a: Vec<TraceEvent> = (0..40).map(|k| branch(0x300 + k, 0)).collect();
    a.extend((0..40).map(|k| store(0x400 + k, k)));
    a.extend((0..40).map(|k| branch(0x500 + k, 0)));
    let mut b = a.clone();
    b[10].branch_dir = 1;
    b[11].branch_dir = 1;
    b.splice(60..60, [store(0x999, 0)]);
    b[101].branch_dir = 1; // A's 100
    b[102].branch_dir = 1; // A's 101
    let divs = diff(&a, &b, AlignOptions::default());
    let got: Vec<(DivergenceKind, u32, u32)> = divs
        .iter()
        .map(|d| (d.kind, d.event_idx, d.event_idx_b))
        .collect();
    assert_eq!(
        got,
        vec![
            (DivergenceKind::Branch, 10, 10),
            (DivergenceKind::Branch, 11, 11),
            (DivergenceKind::ExtraEvents, 60, 60),
            (DivergenceKind::Branch, 100, 101),
            (DivergenceKind::Branch, 101, 102),
        ]
    );
}

/// 150 flipped branches after an insertion would cost 300 direction-aware
/// edits (over the default 256): the site-only retry keeps them Branches.
#[test]
fn many_flips_after_an_insertion_stay_branch_divergences() {
    let a: Vec<TraceEvent> = (0..400u32).map(|k| branch(0x1000 + k, 0)).collect();
    let mut b = a.clone();
    for k in (100..400).step_by(2) {
        b[k].branch_dir = 1;
    }
    b.splice(50..50, [store(0x999, 0)]);
    let divs = diff(&a, &b, AlignOptions::default());
    assert_eq!(divs.len(), 151, "{:#?}", &divs[..3]);
    assert_eq!(
        (divs[0].kind, divs[0].event_idx, divs[0].events_b),
        (DivergenceKind::ExtraEvents, 50, 1)
    );
    assert!(
        divs[1..]
            .iter()
            .all(|d| d.kind == DivergenceKind::Branch && d.event_idx_b == d.event_idx + 1)
    );
}

/// A branch that records its taken lanes (prlx's runtime): one lane going the
/// other way is a Branch divergence even though "any lane took it" agrees.
#[test]
fn a_lane_split_at_a_taken_mask_branch_is_a_branch_divergence() {
    let taken = |mask: u32| TraceEvent {
        _reserved: prlx_trace::event_flags::TAKEN_MASK,
        ..ev(0x20, EventType::Branch, 1, u32::MAX, mask)
    };
    let mut a = kernel_stream(4);
    let mut b = kernel_stream(4);
    a.insert(5, taken(u32::MAX));
    b.insert(5, taken(!(1 << 8)));
    let d = only(&diff(&a, &b, AlignOptions::default()));
    assert_eq!(
        (d.kind, d.event_idx, d.event_idx_b, d.site_id),
        (DivergenceKind::Branch, 5, 5, 0x20)
    );

    // Without the flag, value_a is an operand (PRLX): only --values sees it.
    a[5]._reserved = 0;
    b[5]._reserved = 0;
    assert!(diff(&a, &b, AlignOptions::default()).is_empty());
    let values = AlignOptions {
        compare_values: true,
        ..AlignOptions::default()
    };
    assert_eq!(only(&diff(&a, &b, values)).kind, DivergenceKind::Value);

    // A changed active mask is the earlier cause: ActiveMask, not Branch.
    a[5]._reserved = prlx_trace::event_flags::TAKEN_MASK;
    b[5] = TraceEvent {
        active_mask: 0xffff,
        ..taken(0xffff)
    };
    assert_eq!(
        only(&diff(&a, &b, AlignOptions::default())).kind,
        DivergenceKind::ActiveMask
    );
}

/// A branch event recording its taken mask, as both capture paths write them.
fn masked_branch(site: u32, active: u32, taken: u32) -> TraceEvent {
    TraceEvent {
        _reserved: prlx_trace::event_flags::TAKEN_MASK,
        ..ev(site, EventType::Branch, (taken != 0) as u8, active, taken)
    }
}

/// A loop test reached by lanes 8 and 24 in both runs: in A both leave, in
/// B lane 8 stays for 3 more iterations. The lane that went the other way
/// is a Branch divergence at the split, then B's extra iterations, then the
/// exits' different lanes — what the same runs give when the build groups
/// lanes so that another lane keeps both runs in the loop (the pass-built
/// `steps` of tests/e2e/app), where the split is a matched pair whose
/// taken masks differ.
#[test]
fn loop_exit_split_differently_is_a_branch_then_extra_iterations() {
    let (l8, l24) = (1u32 << 8, 1u32 << 24);
    let head = vec![masked_branch(0x70, u32::MAX, u32::MAX); 3];
    let mut a = head.clone();
    a.push(masked_branch(0x70, l8 | l24, 0));
    a.push(store(0x71, 1));
    let mut b = head;
    b.push(masked_branch(0x70, l8 | l24, l8));
    b.extend(std::iter::repeat_n(masked_branch(0x70, l8, l8), 2));
    b.push(masked_branch(0x70, l8, 0));
    b.push(store(0x71, 1));
    let divs = diff(&a, &b, AlignOptions::default());
    let kinds: Vec<(DivergenceKind, u32, u32)> = divs
        .iter()
        .map(|d| (d.kind, d.event_idx, d.event_idx_b))
        .collect();
    assert_eq!(
        kinds,
        [
            (DivergenceKind::Branch, 3, 3),
            (DivergenceKind::ExtraEvents, 3, 3),
            (DivergenceKind::ActiveMask, 3, 6),
        ],
        "{divs:#?}"
    );
    // The whole warp staying on is extra iterations only (no split).
    let mut whole = a[..3].to_vec();
    whole.push(masked_branch(0x70, l8 | l24, l8 | l24));
    whole.extend_from_slice(&a[3..]);
    let divs = diff(&a, &whole, AlignOptions::default());
    assert_eq!(only(&divs).kind, DivergenceKind::ExtraEvents, "{divs:#?}");
}
