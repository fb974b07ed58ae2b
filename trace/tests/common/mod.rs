//! Shared fixtures for the trace tests.
#![allow(dead_code)] // Each test binary uses a different subset.

use prlx_trace::{SnapshotEntry, TraceBuilder, TraceEvent};

pub fn event(site_id: u32, event_type: u8, taken: bool, value_a: u32) -> TraceEvent {
    TraceEvent {
        site_id,
        event_type,
        branch_dir: u8::from(taken),
        _reserved: 0,
        active_mask: 0xFFFF_FFFF,
        value_a,
    }
}

/// A small trace: 2 blocks x 40 threads (2 warps per block, 4 slots), 8
/// events per warp. Warp 0 has 3 events, warp 1 overflows (11 pushed),
/// warp 2 is empty, warp 3 has 1. With history (depth 4) warp 0 wraps
/// (6 writes) and warp 1 does not (2 writes); with snapshots (depth 2)
/// warp 3 wraps (3 writes).
pub fn sample_builder(history: bool, snapshots: bool) -> TraceBuilder {
    let mut b = TraceBuilder::new("sample_kernel", [2, 1, 1], [40, 1, 1])
        .expect("valid launch")
        .events_per_warp(8)
        .timestamp(1_700_000_000)
        .cuda_arch(80);
    if history {
        b = b.with_history(4);
    }
    if snapshots {
        b = b.with_snapshots(2);
    }
    for i in 0..3 {
        b.push_event(0, event(100 + i, 0, i % 2 == 0, i)).unwrap();
    }
    for i in 0..11 {
        b.push_event(1, event(200 + i, 1, false, 1000 + i)).unwrap();
    }
    b.push_event(3, event(400, 2, false, 7)).unwrap();
    if history {
        for i in 0..6 {
            b.push_history(0, 10 + i, 100 + i).unwrap();
        }
        for i in 0..2 {
            b.push_history(1, 20 + i, 200 + i).unwrap();
        }
    }
    if snapshots {
        for i in 0..3 {
            b.push_snapshot(3, snapshot(30 + i, i)).unwrap();
        }
    }
    b
}

pub fn snapshot(site_id: u32, salt: u32) -> SnapshotEntry {
    let mut s = SnapshotEntry {
        site_id,
        active_mask: 0x0000_FFFF,
        cmp_predicate: 40, // ICMP_SLT
        ..SnapshotEntry::default()
    };
    for lane in 0..32 {
        s.lhs_values[lane] = salt * 1000 + lane as u32;
        s.rhs_values[lane] = salt * 1000 + 500 + lane as u32;
    }
    s
}

/// Byte offset of header field `name` (PRLX `trace_format.h`).
pub fn header_offset(name: &str) -> usize {
    match name {
        "magic" => 0,
        "version" => 8,
        "flags" => 12,
        "kernel_name_hash" => 16,
        "kernel_name" => 24,
        "grid_dim" => 88,
        "block_dim" => 100,
        "warps_per_block" => 112,
        "total_warp_slots" => 116,
        "events_per_warp" => 120,
        "timestamp" => 128,
        "cuda_arch" => 136,
        "history_depth" => 140,
        "history_section_offset" => 144,
        "sample_rate" => 148,
        "snapshot_depth" => 152,
        "snapshot_section_offset" => 156,
        other => panic!("unknown header field {other}"),
    }
}

pub fn put_u32(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

pub fn get_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}
