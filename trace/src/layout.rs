//! The on-disk layout of a `.prlx` v1 trace, field for field.
//!
//! Every struct here is `#[repr(C)]`, `Pod`, and has exactly the size and field
//! offsets of PRLX's `trace_format.h`, so a byte slice of a trace can be viewed
//! as these types without copying. All fields are little-endian; the crate
//! refuses to build for big-endian targets rather than misread traces.

use bytemuck::{Pod, Zeroable};

#[cfg(target_endian = "big")]
compile_error!(
    "prlx-trace views little-endian trace bytes in place; big-endian hosts are unsupported"
);

/// `"PRLX\0\0\0\0"` read as a little-endian u64 (bytes `00 00 00 00 58 4C 52 50`).
pub const PRLX_MAGIC: u64 = 0x50524C58_00000000;
pub const PRLX_VERSION: u32 = 1;
pub use crate::limits::DEFAULT_EVENTS_PER_WARP;
pub const WARP_SIZE: u32 = 32;

/// Header flag bits (`PRLX_FLAG_*`).
pub mod flags {
    /// Compact 8-byte events. Never written by PRLX v1 tools; rejected by the reader.
    pub const COMPACT: u32 = 0x1;
    /// Everything after the 160-byte header is one zstd frame.
    pub const COMPRESS: u32 = 0x2;
    /// A history ring section follows the warp event buffers.
    pub const HISTORY: u32 = 0x4;
    /// Sampling was active (`sample_rate > 1`).
    pub const SAMPLED: u32 = 0x8;
    /// A snapshot ring section follows (after history, if any).
    pub const SNAPSHOT: u32 = 0x10;
    pub const KNOWN: u32 = COMPACT | COMPRESS | HISTORY | SAMPLED | SNAPSHOT;
}

/// Bits of `TraceEvent::_reserved` set by prlx's device runtime.
pub mod event_flags {
    /// A Branch event whose `value_a` is the taken mask: the ballot of the
    /// condition over the active lanes. Two runs whose lanes split
    /// differently at a branch differ here even when `branch_dir` agrees.
    pub const TAKEN_MASK: u16 = 0x1;
    /// An Atomic event whose `value_a` is the value the atomic returned (the
    /// old value: the order lanes and warps reached it in), not its operand.
    pub const RETURNED: u16 = 0x2;
}

/// `TraceEvent::event_type` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum EventType {
    Branch = 0,
    SharedStore = 1,
    Atomic = 2,
    FuncEntry = 3,
    FuncExit = 4,
    Switch = 5,
    GlobalStore = 6,
}

impl EventType {
    pub fn from_u8(raw: u8) -> Option<EventType> {
        Some(match raw {
            0 => EventType::Branch,
            1 => EventType::SharedStore,
            2 => EventType::Atomic,
            3 => EventType::FuncEntry,
            4 => EventType::FuncExit,
            5 => EventType::Switch,
            6 => EventType::GlobalStore,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            EventType::Branch => "Branch",
            EventType::SharedStore => "SharedMemStore",
            EventType::Atomic => "Atomic",
            EventType::FuncEntry => "FuncEntry",
            EventType::FuncExit => "FuncExit",
            EventType::Switch => "Switch",
            EventType::GlobalStore => "GlobalStore",
        }
    }
}

/// The 160-byte file header (`TraceFileHeader`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct TraceFileHeader {
    pub magic: u64,
    pub version: u32,
    pub flags: u32,
    pub kernel_name_hash: u64,
    /// NUL-terminated (or NUL-padded) kernel name, truncated to 63 bytes.
    pub kernel_name: [u8; 64],
    pub grid_dim: [u32; 3],
    pub block_dim: [u32; 3],
    pub warps_per_block: u32,
    pub total_warp_slots: u32,
    pub events_per_warp: u32,
    pub _pad: u32,
    pub timestamp: u64,
    /// e.g. 80 for sm_80.
    pub cuda_arch: u32,
    pub history_depth: u32,
    /// Byte offset of the history section from the start of the (decompressed)
    /// file; 0 means "right after the warp event buffers".
    pub history_section_offset: u32,
    /// 0 or 1 = every event recorded; N = one in N.
    pub sample_rate: u32,
    pub snapshot_depth: u32,
    /// Byte offset of the snapshot section; 0 means "after events and history".
    pub snapshot_section_offset: u32,
}

/// Per-warp buffer header (`WarpBufferHeader`), 16 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct WarpBufferHeader {
    /// Slots claimed on the device, including dropped ones.
    pub write_idx: u32,
    pub overflow_count: u32,
    /// Events actually stored: `min(write_idx, events_per_warp)`.
    pub num_events: u32,
    /// Events seen including sampled-out ones.
    pub total_event_count: u32,
}

/// One recorded event (`TraceEvent`), 16 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
#[repr(C)]
pub struct TraceEvent {
    pub site_id: u32,
    pub event_type: u8,
    /// 0 = not taken, 1 = taken (by any active lane, for prlx's runtime).
    pub branch_dir: u8,
    /// PRLX leaves this zero; prlx's runtime sets [`event_flags`] bits here,
    /// which PRLX's readers ignore.
    pub _reserved: u16,
    pub active_mask: u32,
    pub value_a: u32,
}

/// Per-warp ring header for both history and snapshot rings, 16 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct RingHeader {
    pub write_idx: u32,
    pub depth: u32,
    /// Monotonic; `total_writes > depth` means the ring wrapped.
    pub total_writes: u32,
    pub _reserved: u32,
}

/// One history entry (`HistoryEntry`), 16 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct HistoryEntry {
    pub site_id: u32,
    pub value: u32,
    pub seq: u32,
    pub _pad: u32,
}

/// Per-lane compare operands at one site (`SnapshotEntry`), 288 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct SnapshotEntry {
    pub site_id: u32,
    pub active_mask: u32,
    pub seq: u32,
    /// LLVM `CmpInst::Predicate` value.
    pub cmp_predicate: u32,
    pub lhs_values: [u32; 32],
    pub rhs_values: [u32; 32],
    pub _pad: [u32; 4],
}

impl Default for SnapshotEntry {
    fn default() -> Self {
        Zeroable::zeroed()
    }
}

pub const HEADER_SIZE: usize = 160;
pub const WARP_HEADER_SIZE: usize = 16;
pub const EVENT_SIZE: usize = 16;
pub const RING_HEADER_SIZE: usize = 16;
pub const HISTORY_ENTRY_SIZE: usize = 16;
pub const SNAPSHOT_ENTRY_SIZE: usize = 288;

const _: () = {
    assert!(std::mem::size_of::<TraceFileHeader>() == HEADER_SIZE);
    assert!(std::mem::offset_of!(TraceFileHeader, kernel_name) == 24);
    assert!(std::mem::offset_of!(TraceFileHeader, grid_dim) == 88);
    assert!(std::mem::offset_of!(TraceFileHeader, warps_per_block) == 112);
    assert!(std::mem::offset_of!(TraceFileHeader, timestamp) == 128);
    assert!(std::mem::offset_of!(TraceFileHeader, snapshot_section_offset) == 156);
    assert!(std::mem::size_of::<WarpBufferHeader>() == WARP_HEADER_SIZE);
    assert!(std::mem::size_of::<TraceEvent>() == EVENT_SIZE);
    assert!(std::mem::size_of::<RingHeader>() == RING_HEADER_SIZE);
    assert!(std::mem::size_of::<HistoryEntry>() == HISTORY_ENTRY_SIZE);
    assert!(std::mem::size_of::<SnapshotEntry>() == SNAPSHOT_ENTRY_SIZE);
};

impl TraceEvent {
    /// The lanes that took the branch, when the event records them.
    pub fn taken_mask(&self) -> Option<u32> {
        (self.event_type == EventType::Branch as u8
            && self._reserved & event_flags::TAKEN_MASK != 0)
            .then_some(self.value_a)
    }
}

impl TraceFileHeader {
    /// The kernel name up to its first NUL, lossily decoded.
    pub fn kernel_name(&self) -> String {
        let end = self.kernel_name.iter().position(|&b| b == 0).unwrap_or(64);
        String::from_utf8_lossy(&self.kernel_name[..end]).into_owned()
    }

    /// Stores `name` truncated to 63 bytes (at a char boundary) and NUL-padded.
    pub fn set_kernel_name(&mut self, name: &str) {
        self.kernel_name = [0; 64];
        let mut end = name.len().min(63);
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        self.kernel_name[..end].copy_from_slice(&name.as_bytes()[..end]);
    }

    pub fn has_flag(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }
}

/// 64-bit FNV-1a over the kernel name, as PRLX's host runtime (`fnv1a_hash`
/// in `prlx_host.cu`) computes `kernel_name_hash`.
///
/// PRLX hashes `(uint64_t)(char)`, and `char` is signed on x86-64, so bytes
/// from 0x80 up are sign-extended; this does the same so non-ASCII names hash
/// identically to traces captured on x86-64 hosts.
pub fn kernel_name_hash(name: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in name.as_bytes() {
        hash ^= i64::from(b as i8) as u64;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}
