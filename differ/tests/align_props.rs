//! Properties of the alignment: a stream against itself is empty, and any two
//! streams diff without panicking into in-bounds, ordered divergences.

use prlx_differ::{AlignOptions, Cut, DivergenceKind, align_warp, align_warp_cut};
use prlx_trace::TraceEvent;
use proptest::prelude::*;

fn event() -> impl Strategy<Value = TraceEvent> {
    // Few sites and masks so random streams share structure and exercise Myers.
    (
        0u32..6,
        0u8..3,
        0u8..2,
        prop_oneof![Just(u32::MAX), Just(0xffffu32)],
        0u32..3,
    )
        .prop_map(
            |(site_id, event_type, branch_dir, active_mask, value_a)| TraceEvent {
                site_id,
                event_type,
                branch_dir,
                _reserved: 0,
                active_mask,
                value_a,
            },
        )
}

fn stream() -> impl Strategy<Value = Vec<TraceEvent>> {
    prop::collection::vec(event(), 0..300)
}

proptest! {
    #[test]
    fn aligning_a_stream_with_itself_is_empty(a in stream(), values in any::<bool>()) {
        let mut out = Vec::new();
        let opts = AlignOptions { compare_values: values, ..AlignOptions::default() };
        align_warp(&a, &a, &opts, &mut out);
        prop_assert!(out.is_empty());
    }

    #[test]
    fn diffs_never_panic_and_stay_in_bounds(
        a in stream(), b in stream(), max_edits in 0usize..64, min_resync in 1usize..5,
        values in any::<bool>(),
    ) {
        let mut out = Vec::new();
        let opts = AlignOptions { max_edits, min_resync, compare_values: values };
        align_warp(&a, &b, &opts, &mut out);
        let mut last = (0u32, 0u32);
        for (n, d) in out.iter().enumerate() {
            prop_assert!((d.event_idx as usize) <= a.len() && (d.event_idx_b as usize) <= b.len());
            prop_assert!((d.event_idx, d.event_idx_b) >= last, "out of order: {out:?}");
            last = (d.event_idx, d.event_idx_b);
            if d.kind == DivergenceKind::Path {
                prop_assert_eq!(n, out.len() - 1, "a Path must be the warp's last divergence");
            }
            if !values {
                prop_assert!(d.kind != DivergenceKind::Value);
            }
        }
    }

    #[test]
    fn one_mutation_gives_a_divergence(a in prop::collection::vec(event(), 1..200), at in any::<prop::sample::Index>(), new in event()) {
        let i = at.index(a.len());
        let mut b = a.clone();
        b[i] = new;
        let mut out = Vec::new();
        let opts = AlignOptions { compare_values: true, ..AlignOptions::default() };
        align_warp(&a, &b, &opts, &mut out);
        prop_assert_eq!(out.is_empty(), a[i] == new);
    }

}

proptest! {
    // Each case aligns twice; fewer cases keep the suite at a few seconds.
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A stream cut anywhere is never "diverged" from its own full run:
    /// whatever the full run has past the cut is unknown, not extra.
    #[test]
    fn a_cut_prefix_of_the_same_run_has_no_divergence(a in stream(), at in any::<prop::sample::Index>()) {
        let cut_at = at.index(a.len() + 1);
        let mut out = Vec::new();
        let unknown = align_warp_cut(&a[..cut_at], &a, Cut { a: true, b: false }, &AlignOptions::default(), &mut out);
        prop_assert!(out.is_empty(), "{out:?}");
        let unknown_b = unknown.map_or(0, |u| u.events_b as usize);
        prop_assert_eq!(unknown_b, a.len() - cut_at);
    }

    /// Cut streams diff in bounds, and the unknown tail ends both streams.
    #[test]
    fn cut_diffs_stay_in_bounds(a in stream(), b in stream(), cut_a in any::<bool>(), cut_b in any::<bool>()) {
        let mut out = Vec::new();
        let unknown = align_warp_cut(&a, &b, Cut { a: cut_a, b: cut_b }, &AlignOptions::default(), &mut out);
        for d in &out {
            prop_assert!((d.event_idx + d.events_a) as usize <= a.len().max(d.event_idx as usize + 1));
            prop_assert!((d.event_idx_b + d.events_b) as usize <= b.len().max(d.event_idx_b as usize + 1));
        }
        if let Some(u) = unknown {
            prop_assert!(cut_a || cut_b);
            prop_assert_eq!((u.event_idx + u.events_a) as usize, a.len());
            prop_assert_eq!((u.event_idx_b + u.events_b) as usize, b.len());
        }
        if !cut_a && !cut_b {
            let mut plain = Vec::new();
            align_warp(&a, &b, &AlignOptions::default(), &mut plain);
            prop_assert_eq!(plain, out);
        }
    }
}
