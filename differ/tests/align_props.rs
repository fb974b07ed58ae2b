//! Properties of the alignment: a stream against itself is empty, and any two
//! streams diff without panicking into in-bounds, ordered divergences.

use prlx_differ::{AlignOptions, DivergenceKind, align_warp};
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
