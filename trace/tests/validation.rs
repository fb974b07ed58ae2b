//! Every validation error: the reader refuses, and the message names the file
//! and the field.

mod common;

use common::{get_u32, header_offset, put_u32, sample_builder};
use prlx_trace::{RingHeader, TraceBuilder, TraceError, TraceFile, WarpBufferHeader, flags};

const FILE: &str = "a.prlx";

fn open(bytes: Vec<u8>) -> TraceError {
    match TraceFile::from_bytes(FILE, bytes) {
        Ok(_) => panic!("expected the reader to reject the trace"),
        Err(e) => e,
    }
}

/// Asserts the one-line message starts with the file and names `field`.
fn assert_names(err: &TraceError, field: &str, detail: &str) {
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("{FILE}: ")),
        "no file name in: {msg}"
    );
    assert!(msg.contains(field), "field {field} not named in: {msg}");
    assert!(msg.contains(detail), "{detail:?} not in: {msg}");
    assert!(!msg.contains('\n'), "message spans lines: {msg}");
}

fn with_u32(field: &str, value: u32) -> Vec<u8> {
    let mut bytes = sample_builder(true, true).to_bytes();
    put_u32(&mut bytes, header_offset(field), value);
    bytes
}

#[test]
fn events_per_warp_zero_has_the_documented_message() {
    let err = open(with_u32("events_per_warp", 0));
    assert_eq!(
        err.to_string(),
        "a.prlx: header.events_per_warp: 0 is not a valid event count"
    );
    assert_eq!(err.field(), Some("header.events_per_warp"));
    assert_eq!(err.file(), FILE);
}

#[test]
fn wrong_magic() {
    let mut bytes = sample_builder(false, false).to_bytes();
    bytes[7] = b'Q';
    assert_names(&open(bytes), "header.magic", "not a .prlx trace");
}

#[test]
fn wrong_version() {
    assert_names(
        &open(with_u32("version", 2)),
        "header.version",
        "version 2 is not supported",
    );
}

#[test]
fn unknown_and_unsupported_flags() {
    let plain = sample_builder(false, false).to_bytes();
    let mut unknown = plain.clone();
    put_u32(&mut unknown, 12, 0x40);
    assert_names(&open(unknown), "header.flags", "unknown flag bits 0x40");
    let mut compact = plain;
    put_u32(&mut compact, 12, flags::COMPACT);
    assert_names(&open(compact), "header.flags", "FLAG_COMPACT");
}

#[test]
fn truncated_files_name_the_first_record_cut_off() {
    let full = sample_builder(true, true).to_bytes();
    assert_names(&open(full[..100].to_vec()), "header", "truncated");
    assert_names(&open(Vec::new()), "header", "truncated");
    // Warp records are 16 + 8 * 16 = 144 bytes from offset 160.
    assert_names(
        &open(full[..160 + 2 * 144 + 5].to_vec()),
        "warp[2]",
        "needs bytes 448..592",
    );
    assert_names(
        &open(full[..full.len() - 1].to_vec()),
        "snapshot[3]",
        "truncated",
    );
    let history_start = 160 + 4 * 144;
    assert_names(
        &open(full[..history_start + 80].to_vec()),
        "history[1]",
        "truncated",
    );
}

#[test]
fn trailing_bytes_are_rejected() {
    let mut bytes = sample_builder(false, false).to_bytes();
    bytes.extend_from_slice(&[0; 16]);
    assert_names(&open(bytes), "file length", "16 unexplained trailing bytes");
}

#[test]
fn empty_file_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.prlx");
    std::fs::write(&path, b"").unwrap();
    let msg = TraceFile::open(&path).unwrap_err().to_string();
    assert!(
        msg.starts_with(&path.display().to_string()) && msg.contains("header"),
        "{msg}"
    );
    let missing = dir.path().join("missing.prlx");
    let msg = TraceFile::open(&missing).unwrap_err().to_string();
    assert!(
        msg.starts_with(&missing.display().to_string()) && msg.contains("cannot open"),
        "{msg}"
    );
}

#[test]
fn sizes_that_overflow_are_caught_in_u64() {
    // 2^26 blocks x 1024 threads = 2^31 warp slots, each claiming u32::MAX events.
    let mut bytes = sample_builder(false, false).to_bytes();
    for (field, v) in [
        ("grid_dim", 1 << 26),
        ("block_dim", 1024),
        ("warps_per_block", 32),
        ("total_warp_slots", 1 << 31),
        ("events_per_warp", u32::MAX),
    ] {
        put_u32(&mut bytes, header_offset(field), v);
    }
    assert_names(&open(bytes.clone()), "header.events_per_warp", "overflow");

    // Same for the snapshot section: u32::MAX entries of 288 bytes per warp.
    put_u32(&mut bytes, header_offset("events_per_warp"), 1);
    put_u32(&mut bytes, 12, flags::SNAPSHOT);
    put_u32(&mut bytes, header_offset("snapshot_depth"), u32::MAX);
    assert_names(&open(bytes), "header.snapshot_depth", "overflow");

    // Thread counts: 2^32 * 2^32 * 2^32 does not fit in 64 bits.
    let mut bytes = sample_builder(false, false).to_bytes();
    for axis in 0..3 {
        put_u32(&mut bytes, header_offset("block_dim") + 4 * axis, u32::MAX);
    }
    assert_names(&open(bytes), "header.block_dim", "overflow");
}

#[test]
fn a_tiny_file_claiming_an_enormous_trace_is_truncated_not_allocated() {
    let mut bytes = sample_builder(false, false).to_bytes();
    put_u32(&mut bytes, header_offset("grid_dim"), 1 << 26);
    put_u32(&mut bytes, header_offset("block_dim"), 1024);
    put_u32(&mut bytes, header_offset("warps_per_block"), 32);
    put_u32(&mut bytes, header_offset("total_warp_slots"), 1 << 31);
    put_u32(&mut bytes, header_offset("events_per_warp"), 1 << 20);
    assert_names(&open(bytes.clone()), "warp[0]", "truncated");

    // The same header compressed: the frame is short, memory stays small.
    let mut flagged = bytes[..160].to_vec();
    put_u32(&mut flagged, 12, flags::COMPRESS);
    flagged.extend(zstd::bulk::compress(&bytes[160..], 3).unwrap());
    assert_names(&open(flagged), "warp[0]", "decompressed trace");
}

#[test]
fn offsets_outside_the_file() {
    let err = open(with_u32("history_section_offset", 0x0100_0000));
    assert_names(&err, "header.history_section_offset", "outside the file");
    let err = open(with_u32("snapshot_section_offset", 0x7FFF_FFF0));
    assert_names(&err, "header.snapshot_section_offset", "outside the file");
}

#[test]
fn misaligned_section_offset() {
    let err = open(with_u32("history_section_offset", 161 + 4 * 144));
    assert_names(&err, "header.history_section_offset", "multiple of 16");
}

#[test]
fn overlapping_sections() {
    let err = open(with_u32("history_section_offset", 160 + 16));
    assert_names(
        &err,
        "header.history_section_offset",
        "overlaps the warp event buffers",
    );
    let history_start = 160 + 4 * 144;
    let err = open(with_u32("snapshot_section_offset", history_start + 16));
    assert_names(
        &err,
        "header.snapshot_section_offset",
        "overlaps the history section",
    );
    let err = open(with_u32("snapshot_section_offset", 64));
    assert_names(
        &err,
        "header.snapshot_section_offset",
        "overlaps the header",
    );
}

#[test]
fn num_events_beyond_events_per_warp() {
    let mut b = sample_builder(false, false);
    b.set_warp_header(
        1,
        WarpBufferHeader {
            write_idx: 9,
            overflow_count: 1,
            num_events: 9,
            total_event_count: 9,
        },
    )
    .unwrap();
    // The writer recomputes num_events; patch the bytes as a broken tool would.
    let mut bytes = b.to_bytes();
    put_u32(&mut bytes, 160 + 144 + 8, 9);
    assert_names(
        &open(bytes),
        "warp[1].num_events",
        "9 exceeds header.events_per_warp 8",
    );
}

#[test]
fn num_events_inconsistent_with_write_idx() {
    let mut bytes = sample_builder(false, false).to_bytes();
    let warp0 = 160;
    assert_eq!(get_u32(&bytes, warp0), 3); // write_idx
    put_u32(&mut bytes, warp0 + 8, 2); // num_events
    assert_names(
        &open(bytes),
        "warp[0].num_events",
        "disagrees with write_idx 3",
    );
}

#[test]
fn warp_slots_disagreeing_with_grid_and_block() {
    assert_names(
        &open(with_u32("total_warp_slots", 5)),
        "header.total_warp_slots",
        "disagrees with grid_dim",
    );
    assert_names(
        &open(with_u32("warps_per_block", 1)),
        "header.warps_per_block",
        "disagrees with block_dim",
    );
}

#[test]
fn zero_grid_and_block_dims() {
    let mut bytes = sample_builder(false, false).to_bytes();
    put_u32(&mut bytes, header_offset("grid_dim") + 8, 0);
    assert_names(&open(bytes), "header.grid_dim", "zero extent on axis z");
    let mut bytes = sample_builder(false, false).to_bytes();
    put_u32(&mut bytes, header_offset("block_dim") + 4, 0);
    assert_names(&open(bytes), "header.block_dim", "zero extent on axis y");
}

#[test]
fn flagged_sections_with_zero_depth() {
    let mut bytes = sample_builder(false, false).to_bytes();
    put_u32(&mut bytes, 12, flags::HISTORY);
    assert_names(&open(bytes), "header.history_depth", "FLAG_HISTORY");
    let mut bytes = sample_builder(false, false).to_bytes();
    put_u32(&mut bytes, 12, flags::SNAPSHOT);
    assert_names(&open(bytes), "header.snapshot_depth", "FLAG_SNAPSHOT");
}

#[test]
fn ring_depth_disagreeing_with_file_header() {
    let mut b = sample_builder(true, false);
    b.set_history_header(
        2,
        RingHeader {
            depth: 3,
            ..RingHeader::default()
        },
    )
    .unwrap();
    assert_names(
        &open(b.to_bytes()),
        "history[2].depth",
        "3 disagrees with header.history_depth 4",
    );

    let mut bytes = sample_builder(false, true).to_bytes();
    let snapshot_start = 160 + 4 * 144;
    put_u32(&mut bytes, snapshot_start + 4, 7);
    assert_names(
        &open(bytes),
        "snapshot[0].depth",
        "7 disagrees with header.snapshot_depth 2",
    );
}

fn flag_compressed(plain: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut out = plain[..160].to_vec();
    let f = get_u32(&out, 12) | flags::COMPRESS;
    put_u32(&mut out, 12, f);
    out.extend_from_slice(payload);
    out
}

#[test]
fn decompression_bomb_is_capped_at_the_implied_size() {
    let plain = sample_builder(true, true).to_bytes();
    let mut oversized = plain[160..].to_vec();
    oversized.resize(oversized.len() + (8 << 20), 0);

    // Frame declaring its (too large) size: rejected before allocating.
    let declared = zstd::bulk::compress(&oversized, 3).unwrap();
    let err = open(flag_compressed(&plain, &declared));
    assert_names(&err, "zstd frame", "more than the");

    // Streamed frame without a declared size: stopped at the cap.
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    std::io::Write::write_all(&mut enc, &oversized).unwrap();
    let streamed = enc.finish().unwrap();
    assert_eq!(
        zstd::zstd_safe::get_frame_content_size(&streamed).unwrap(),
        None
    );
    let err = open(flag_compressed(&plain, &streamed));
    assert_names(&err, "zstd frame", "more than the");

    // Whole-file form: the cap comes from the header inside the frame.
    let mut whole_plain = plain.clone();
    whole_plain.resize(whole_plain.len() + (1 << 20), 0);
    let err = open(zstd::bulk::compress(&whole_plain, 3).unwrap());
    assert_names(&err, "zstd frame", "more than the");
}

#[test]
fn corrupt_truncated_and_trailing_frames() {
    let plain = sample_builder(true, false).to_bytes();
    let frame = zstd::bulk::compress(&plain[160..], 3).unwrap();

    let err = open(flag_compressed(&plain, &frame[..frame.len() / 2]));
    assert!(
        matches!(
            err,
            TraceError::Decompress { .. } | TraceError::Truncated { .. }
        ),
        "{err}"
    );
    assert!(err.to_string().starts_with("a.prlx: "), "{err}");

    let mut corrupt = frame.clone();
    let mid = corrupt.len() / 2;
    corrupt[mid] ^= 0xFF;
    corrupt[mid + 1] ^= 0x55;
    if let Err(err) = TraceFile::from_bytes(FILE, flag_compressed(&plain, &corrupt)) {
        assert!(err.to_string().starts_with("a.prlx: "), "{err}");
    }

    let mut trailing = frame.clone();
    trailing.extend_from_slice(b"junk");
    assert_names(
        &open(flag_compressed(&plain, &trailing)),
        "zstd frame",
        "4 bytes follow the zstd frame",
    );

    assert_names(
        &open(flag_compressed(&plain, b"")),
        "zstd frame",
        "truncated",
    );
    assert_names(&open(vec![0x28, 0xB5, 0x2F, 0xFD]), "zstd frame", "");
}

#[test]
fn compress_flag_inside_a_whole_file_frame() {
    let plain = sample_builder(false, false).to_bytes();
    let inner = flag_compressed(&plain, &zstd::bulk::compress(&plain[160..], 1).unwrap());
    let err = open(zstd::bulk::compress(&inner, 1).unwrap());
    assert_names(&err, "header.flags", "already one zstd frame");
}

#[test]
fn short_decompressed_payload_names_the_missing_section() {
    let plain = sample_builder(true, true).to_bytes();
    let short = zstd::bulk::compress(&plain[160..plain.len() - 288], 3).unwrap();
    let err = open(flag_compressed(&plain, &short));
    assert_names(&err, "snapshot[3]", "decompressed trace");
}

#[test]
fn builder_refuses_unrepresentable_launches() {
    let err = TraceBuilder::new("k", [0, 1, 1], [32, 1, 1]).unwrap_err();
    assert_eq!(err.field(), Some("header.grid_dim"));
    let err = TraceBuilder::new("k", [u32::MAX, 2, 1], [1024, 1, 1]).unwrap_err();
    assert_eq!(err.field(), Some("header.total_warp_slots"));
    let mut b = TraceBuilder::new("k", [1, 1, 1], [32, 1, 1]).unwrap();
    assert_eq!(
        b.push_event(1, Default::default()).unwrap_err().field(),
        Some("warp[1]")
    );
    assert!(
        b.push_history(0, 1, 1)
            .unwrap_err()
            .to_string()
            .contains("with_history")
    );
}
