//! `prlxctl inspect`: a trace's header, per-warp counts, overflow, and the
//! first events of one warp.

use prlx_trace::{EventType, TraceFile, flags};
use std::fmt::Write;

/// Per-warp rows printed before eliding the rest.
const WARP_ROWS: usize = 64;

pub fn describe(trace: &TraceFile, events: usize, warp: Option<usize>) -> anyhow::Result<String> {
    let h = trace.header();
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(
        w,
        "{}: kernel `{}` (hash {:#018x})",
        trace.name(),
        trace.kernel_name(),
        h.kernel_name_hash
    );
    let _ = writeln!(
        w,
        "  version {}, sm_{}, timestamp {}",
        h.version, h.cuda_arch, h.timestamp
    );
    let _ = writeln!(
        w,
        "  grid {:?} x block {:?}, {} warps per block",
        h.grid_dim, h.block_dim, h.warps_per_block
    );
    let _ = writeln!(
        w,
        "  {} warp slots, {} events per warp, sample rate 1/{}",
        trace.num_warps(),
        h.events_per_warp,
        h.sample_rate.max(1)
    );
    let named = [
        (flags::COMPRESS, "compressed"),
        (flags::HISTORY, "history"),
        (flags::SAMPLED, "sampled"),
        (flags::SNAPSHOT, "snapshot"),
    ];
    let set: Vec<&str> = named
        .iter()
        .filter(|(f, _)| h.has_flag(*f))
        .map(|(_, n)| *n)
        .collect();
    let _ = writeln!(w, "  flags {:#x} [{}]", h.flags, set.join(", "));
    if h.has_flag(flags::HISTORY) {
        let _ = writeln!(w, "  history depth {}", h.history_depth);
    }
    if h.has_flag(flags::SNAPSHOT) {
        let _ = writeln!(w, "  snapshot depth {}", h.snapshot_depth);
    }

    let (mut total, mut overflowed) = (0u64, 0usize);
    for warp in trace.warps() {
        total += warp.events.len() as u64;
        overflowed += usize::from(warp.overflowed());
    }
    let _ = writeln!(
        w,
        "  {total} events stored, {overflowed} warp(s) overflowed"
    );
    let _ = writeln!(
        w,
        "\n  warp  block        w   events  write_idx  overflow  total_seen"
    );
    for warp in trace.warps().take(WARP_ROWS) {
        let loc = trace.warp_location(warp.index);
        let block = format!("({},{},{})", loc.block[0], loc.block[1], loc.block[2]);
        let _ = writeln!(
            w,
            "  {:<5} {:<12} {:<3} {:<7} {:<10} {:<9} {}",
            warp.index,
            block,
            loc.warp_in_block,
            warp.events.len(),
            warp.header.write_idx,
            warp.header.overflow_count,
            warp.header.total_event_count
        );
    }
    if trace.num_warps() > WARP_ROWS {
        let _ = writeln!(w, "  ... {} more warps", trace.num_warps() - WARP_ROWS);
    }

    let shown = match warp {
        Some(idx) => Some(trace.warp(idx).ok_or_else(|| {
            anyhow::anyhow!(
                "{}: --warp {idx}: the trace has {} warp slots",
                trace.name(),
                trace.num_warps()
            )
        })?),
        None => trace.warps().find(|w| !w.events.is_empty()),
    };
    if let Some(warp) = shown {
        let n = events.min(warp.events.len());
        let _ = writeln!(
            w,
            "\n  first {n} of {} events of warp {}:",
            warp.events.len(),
            warp.index
        );
        let _ = writeln!(
            w,
            "  idx    site        type            dir  mask        value"
        );
        for (i, e) in warp.events.iter().take(n).enumerate() {
            let ty = EventType::from_u8(e.event_type)
                .map_or(format!("?{}", e.event_type), |t| t.name().to_owned());
            let _ = writeln!(
                w,
                "  {:<6} {:#010x}  {:<15} {:<4} {:#010x}  {}",
                i, e.site_id, ty, e.branch_dir, e.active_mask, e.value_a
            );
        }
    }
    Ok(out)
}
