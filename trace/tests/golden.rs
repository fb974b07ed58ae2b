//! A trace image assembled field by field (no writer, no layout structs), read
//! back by the reader and compared with the writer's output: byte
//! compatibility with PRLX's `trace_format.h` in both directions.

mod common;

use common::event;
use prlx_trace::{Compression, SnapshotEntry, TraceBuilder, TraceEvent, TraceFile, flags};

const NAME: &str = "golden_kernel";
const TIMESTAMP: u64 = 0x0102_0304_0506_0708;

struct Image(Vec<u8>);

impl Image {
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn zeros(&mut self, n: usize) -> &mut Self {
        self.0.resize(self.0.len() + n, 0);
        self
    }
    /// TraceEvent: site_id u32, event_type u8, branch_dir u8, _reserved u16, active_mask u32, value_a u32.
    fn event(&mut self, site: u32, ty: u8, dir: u8, mask: u32, value: u32) -> &mut Self {
        self.u32(site).u8(ty).u8(dir).u16(0).u32(mask).u32(value)
    }
    /// WarpBufferHeader / ring header: four u32s.
    fn quad(&mut self, a: u32, b: u32, c: u32, d: u32) -> &mut Self {
        self.u32(a).u32(b).u32(c).u32(d)
    }
}

/// grid 2x1x1, block 40x1x1 (2 warps/block, 4 slots), 2 events/warp,
/// history depth 2, snapshot depth 1.
fn golden_image() -> Vec<u8> {
    let mut img = Image(Vec::new());
    // TraceFileHeader, 160 bytes.
    img.u64(0x5052_4C58_0000_0000) // magic "PRLX"
        .u32(1) // version
        .u32(0x4 | 0x10) // flags: HISTORY | SNAPSHOT
        .u64(0xf632_2005_718e_2164); // FNV-1a 64 of "golden_kernel"
    let mut name = [0u8; 64];
    name[..NAME.len()].copy_from_slice(NAME.as_bytes());
    img.0.extend_from_slice(&name);
    img.u32(2)
        .u32(1)
        .u32(1) // grid_dim
        .u32(40)
        .u32(1)
        .u32(1) // block_dim
        .u32(2) // warps_per_block
        .u32(4) // total_warp_slots
        .u32(2) // events_per_warp
        .u32(0) // _pad
        .u64(TIMESTAMP)
        .u32(86) // cuda_arch
        .u32(2) // history_depth
        .u32(0) // history_section_offset: right after the warp buffers
        .u32(1) // sample_rate
        .u32(1) // snapshot_depth
        .u32(0); // snapshot_section_offset: after history
    assert_eq!(img.0.len(), 160);

    // Warp 0: one branch event.
    img.quad(1, 0, 1, 1)
        .event(0xAABB_CCDD, 0, 1, 0xFFFF_FFFF, 42)
        .zeros(16);
    // Warp 1: three claimed, two stored, one overflow.
    img.quad(3, 1, 2, 3)
        .event(1, 1, 0, 0xF, 5)
        .event(2, 2, 0, 0xF0, 6);
    // Warps 2 and 3: untouched.
    img.zeros(2 * (16 + 2 * 16));
    assert_eq!(img.0.len(), 160 + 4 * 48);

    // History rings: warp 0 wrapped (3 writes into depth 2); others empty but initialised.
    img.quad(3, 2, 3, 0)
        .quad(9, 90, 2, 0) // slot 0: third write (seq 2)
        .quad(8, 80, 1, 0); // slot 1: second write (seq 1)
    for _ in 1..4 {
        img.quad(0, 2, 0, 0).zeros(32);
    }
    assert_eq!(img.0.len(), 544);

    // Snapshot rings (depth 1): warp 1 holds one snapshot.
    img.quad(0, 1, 0, 0).zeros(288);
    img.quad(1, 1, 1, 0);
    img.u32(77).u32(0x3).u32(0).u32(32); // site, mask, seq, ICMP_EQ
    img.u32(1).u32(2).zeros(30 * 4); // lhs
    img.u32(1).u32(3).zeros(30 * 4); // rhs
    img.zeros(16); // _pad
    for _ in 2..4 {
        img.quad(0, 1, 0, 0).zeros(288);
    }
    assert_eq!(img.0.len(), 1760);
    img.0
}

fn golden_builder() -> TraceBuilder {
    let mut b = TraceBuilder::new(NAME, [2, 1, 1], [40, 1, 1])
        .unwrap()
        .events_per_warp(2)
        .timestamp(TIMESTAMP)
        .cuda_arch(86)
        .with_history(2)
        .with_snapshots(1);
    b.push_event(0, event(0xAABB_CCDD, 0, true, 42)).unwrap();
    b.push_event(
        1,
        TraceEvent {
            active_mask: 0xF,
            ..event(1, 1, false, 5)
        },
    )
    .unwrap();
    b.push_event(
        1,
        TraceEvent {
            active_mask: 0xF0,
            ..event(2, 2, false, 6)
        },
    )
    .unwrap();
    b.push_event(1, event(3, 0, false, 0)).unwrap(); // overflows
    b.push_history(0, 7, 70).unwrap(); // overwritten by the third write
    b.push_history(0, 8, 80).unwrap();
    b.push_history(0, 9, 90).unwrap();
    let mut snap = SnapshotEntry {
        site_id: 77,
        active_mask: 0x3,
        cmp_predicate: 32,
        ..SnapshotEntry::default()
    };
    snap.lhs_values[..2].copy_from_slice(&[1, 2]);
    snap.rhs_values[..2].copy_from_slice(&[1, 3]);
    b.push_snapshot(1, snap).unwrap();
    b
}

fn check_golden(trace: &TraceFile) {
    let h = trace.header();
    assert_eq!(trace.kernel_name(), NAME);
    assert_eq!(h.kernel_name_hash, 0xf632_2005_718e_2164);
    assert_eq!((h.grid_dim, h.block_dim), ([2, 1, 1], [40, 1, 1]));
    assert_eq!(
        (h.warps_per_block, h.total_warp_slots, h.events_per_warp),
        (2, 4, 2)
    );
    assert_eq!(
        (h.timestamp, h.cuda_arch, h.sample_rate),
        (TIMESTAMP, 86, 1)
    );
    assert_eq!((h.history_depth, h.snapshot_depth), (2, 1));

    let w0 = trace.warp(0).unwrap();
    assert_eq!(w0.events, &[event(0xAABB_CCDD, 0, true, 42)]);
    let w1 = trace.warp(1).unwrap();
    assert_eq!(
        (
            w1.header.write_idx,
            w1.header.overflow_count,
            w1.header.num_events
        ),
        (3, 1, 2)
    );
    assert!(w1.overflowed());
    assert_eq!(w1.events[1].active_mask, 0xF0);
    assert_eq!(w1.events[1].event_type, 2);
    assert!(trace.warp(2).unwrap().events.is_empty());

    let hist: Vec<(u32, u32, u32)> = trace
        .history(0)
        .unwrap()
        .chronological()
        .map(|e| (e.site_id, e.value, e.seq))
        .collect();
    assert_eq!(hist, vec![(8, 80, 1), (9, 90, 2)]);
    assert_eq!(trace.history(3).unwrap().header.depth, 2);

    let snaps: Vec<_> = trace
        .snapshots(1)
        .unwrap()
        .chronological()
        .copied()
        .collect();
    assert_eq!(snaps.len(), 1);
    assert_eq!(
        (
            snaps[0].site_id,
            snaps[0].active_mask,
            snaps[0].cmp_predicate
        ),
        (77, 3, 32)
    );
    assert_eq!(&snaps[0].lhs_values[..3], &[1, 2, 0]);
    assert_eq!(&snaps[0].rhs_values[..3], &[1, 3, 0]);
    assert_eq!(trace.layout().history.as_ref().unwrap().offset, 352);
    assert_eq!(trace.layout().snapshots.as_ref().unwrap().offset, 544);
}

#[test]
fn reader_reads_the_hand_assembled_image() {
    check_golden(&TraceFile::from_bytes("golden.prlx", golden_image()).unwrap());
}

#[test]
fn writer_produces_the_hand_assembled_image() {
    assert_eq!(golden_builder().to_bytes(), golden_image());
}

#[test]
fn prlx_style_compressed_image_reads_back() {
    // What prlx_post_launch writes with PRLX_COMPRESS=1: header with the flag, then
    // ZSTD_compress(level 3) of everything after it.
    let image = golden_image();
    let mut file = image[..160].to_vec();
    let flags_at = 12;
    let f = u32::from_le_bytes(file[flags_at..flags_at + 4].try_into().unwrap()) | flags::COMPRESS;
    file[flags_at..flags_at + 4].copy_from_slice(&f.to_le_bytes());
    file.extend(zstd::bulk::compress(&image[160..], 3).unwrap());
    check_golden(&TraceFile::from_bytes("golden.prlx", file).unwrap());
}

#[test]
fn writer_compressed_output_is_header_plus_frame_of_the_image() {
    let image = golden_image();
    let bytes = golden_builder()
        .to_bytes_with(Compression::FlagCompress { level: 3 })
        .unwrap();
    let mut expected_header = image[..160].to_vec();
    expected_header[12] |= flags::COMPRESS as u8;
    assert_eq!(&bytes[..160], &expected_header[..]);
    assert_eq!(zstd::decode_all(&bytes[160..]).unwrap(), &image[160..]);

    let whole = golden_builder()
        .to_bytes_with(Compression::WholeFile { level: 3 })
        .unwrap();
    assert_eq!(zstd::decode_all(&whole[..]).unwrap(), image);
}

#[test]
fn explicit_section_offsets_are_honoured() {
    // Same sections, but history placed after a 32-byte gap via an explicit offset.
    let image = golden_image();
    let mut moved = image[..352].to_vec();
    moved.extend_from_slice(&[0xEE; 32]);
    moved.extend_from_slice(&image[352..]);
    moved[144..148].copy_from_slice(&384u32.to_le_bytes()); // history_section_offset
    let trace = TraceFile::from_bytes("moved.prlx", moved).unwrap();
    assert_eq!(trace.layout().history.as_ref().unwrap().offset, 384);
    assert_eq!(trace.layout().snapshots.as_ref().unwrap().offset, 576);
    let hist: Vec<u32> = trace
        .history(0)
        .unwrap()
        .chronological()
        .map(|e| e.value)
        .collect();
    assert_eq!(hist, vec![80, 90]);
}
