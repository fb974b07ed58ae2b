//! Building a trace in memory and writing it in PRLX's byte layout.
//!
//! The builder mirrors what PRLX's device runtime and `prlx_post_launch` do:
//! events claim slots until the buffer is full and then only count as
//! overflow; rings write slot `n % depth` with `seq = n`; on output
//! `num_events = min(write_idx, events_per_warp)`.

use std::io::Write;
use std::path::Path;

use crate::error::TraceError;
use crate::layout::{
    DEFAULT_EVENTS_PER_WARP, HEADER_SIZE, HistoryEntry, PRLX_MAGIC, PRLX_VERSION, RingHeader,
    SnapshotEntry, TraceEvent, TraceFileHeader, WARP_SIZE, WarpBufferHeader, flags,
    kernel_name_hash,
};

/// How [`TraceBuilder::write_to`] encodes the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Header and sections as-is (what PRLX writes by default).
    None,
    /// PRLX's `PRLX_COMPRESS=1`: plain header with `FLAG_COMPRESS`, then one zstd frame.
    FlagCompress { level: i32 },
    /// The whole plain file wrapped in one zstd frame (`.prlx.zst`).
    WholeFile { level: i32 },
}

#[derive(Clone, Debug, Default)]
struct WarpRecord {
    header: WarpBufferHeader,
    events: Vec<TraceEvent>,
}

#[derive(Clone, Debug)]
struct RingRecord<T> {
    header: RingHeader,
    /// Sparse until written out; slots beyond `len` are zero.
    slots: Vec<T>,
}

/// A trace under construction. Warps are addressed by linear warp slot.
#[derive(Clone, Debug)]
pub struct TraceBuilder {
    header: TraceFileHeader,
    warps: Vec<WarpRecord>,
    history: Vec<RingRecord<HistoryEntry>>,
    snapshots: Vec<RingRecord<SnapshotEntry>>,
}

/// The name the writer's API is also known by.
pub type TraceWriter = TraceBuilder;

impl TraceBuilder {
    /// A trace for `kernel_name` launched as `grid` x `block`, with PRLX's
    /// defaults (4096 events per warp, no history, no snapshots, sample rate 1).
    pub fn new(kernel_name: &str, grid: [u32; 3], block: [u32; 3]) -> Result<Self, TraceError> {
        let unrepresentable = |field: &str, problem: String| TraceError::Unrepresentable {
            file: "<builder>".to_owned(),
            field: field.to_owned(),
            problem,
        };
        if grid.contains(&0) || block.contains(&0) {
            return Err(unrepresentable(
                "header.grid_dim",
                format!("grid {grid:?} and block {block:?} must have no zero extent"),
            ));
        }
        let threads = block.iter().try_fold(1u32, |acc, &d| acc.checked_mul(d));
        let blocks = grid.iter().try_fold(1u32, |acc, &d| acc.checked_mul(d));
        let (Some(threads), Some(blocks)) = (threads, blocks) else {
            return Err(unrepresentable(
                "header.total_warp_slots",
                format!("grid {grid:?} x block {block:?} overflows 32-bit counts"),
            ));
        };
        let warps_per_block = threads.div_ceil(WARP_SIZE);
        let Some(slots) = blocks.checked_mul(warps_per_block) else {
            return Err(unrepresentable(
                "header.total_warp_slots",
                format!("{blocks} blocks x {warps_per_block} warps overflows 32 bits"),
            ));
        };
        let mut header: TraceFileHeader = bytemuck::Zeroable::zeroed();
        header.magic = PRLX_MAGIC;
        header.version = PRLX_VERSION;
        header.kernel_name_hash = kernel_name_hash(kernel_name);
        header.set_kernel_name(kernel_name);
        header.grid_dim = grid;
        header.block_dim = block;
        header.warps_per_block = warps_per_block;
        header.total_warp_slots = slots;
        header.events_per_warp = DEFAULT_EVENTS_PER_WARP;
        header.sample_rate = 1;
        Ok(TraceBuilder {
            header,
            warps: vec![WarpRecord::default(); slots as usize],
            history: Vec::new(),
            snapshots: Vec::new(),
        })
    }

    pub fn events_per_warp(mut self, events_per_warp: u32) -> Self {
        self.header.events_per_warp = events_per_warp;
        self
    }

    pub fn timestamp(mut self, unix_seconds: u64) -> Self {
        self.header.timestamp = unix_seconds;
        self
    }

    /// e.g. 80 for sm_80.
    pub fn cuda_arch(mut self, arch: u32) -> Self {
        self.header.cuda_arch = arch;
        self
    }

    /// Records `sample_rate`, setting `FLAG_SAMPLED` when it is above 1 as PRLX does.
    pub fn sample_rate(mut self, rate: u32) -> Self {
        self.header.sample_rate = rate;
        if rate > 1 {
            self.header.flags |= flags::SAMPLED;
        } else {
            self.header.flags &= !flags::SAMPLED;
        }
        self
    }

    /// Adds a history section with `depth` entries per warp (`FLAG_HISTORY`).
    pub fn with_history(mut self, depth: u32) -> Self {
        self.header.flags |= flags::HISTORY;
        self.header.history_depth = depth;
        self.history = empty_rings(self.warps.len(), depth);
        self
    }

    /// Adds a snapshot section with `depth` entries per warp (`FLAG_SNAPSHOT`).
    pub fn with_snapshots(mut self, depth: u32) -> Self {
        self.header.flags |= flags::SNAPSHOT;
        self.header.snapshot_depth = depth;
        self.snapshots = empty_rings(self.warps.len(), depth);
        self
    }

    pub fn header(&self) -> &TraceFileHeader {
        &self.header
    }

    /// Raw access for tests that need a header the builder would not produce.
    pub fn header_mut(&mut self) -> &mut TraceFileHeader {
        &mut self.header
    }

    pub fn num_warps(&self) -> usize {
        self.warps.len()
    }

    /// Records one event for `warp` the way the device does: it takes the next
    /// slot, or, once `events_per_warp` slots are used, only bumps `overflow_count`.
    pub fn push_event(&mut self, warp: usize, event: TraceEvent) -> Result<(), TraceError> {
        let epw = self.header.events_per_warp;
        let record = self.warp_mut(warp)?;
        record.header.total_event_count = record.header.total_event_count.wrapping_add(1);
        let idx = record.header.write_idx;
        record.header.write_idx = idx.wrapping_add(1);
        if idx >= epw {
            record.header.overflow_count = record.header.overflow_count.wrapping_add(1);
        } else {
            record.events.push(event);
        }
        Ok(())
    }

    /// Counts an event the sampler skipped (`total_event_count` only).
    pub fn push_sampled_out(&mut self, warp: usize) -> Result<(), TraceError> {
        let record = self.warp_mut(warp)?;
        record.header.total_event_count = record.header.total_event_count.wrapping_add(1);
        Ok(())
    }

    /// Appends a value to `warp`'s history ring (as `__prlx_record_value`).
    pub fn push_history(
        &mut self,
        warp: usize,
        site_id: u32,
        value: u32,
    ) -> Result<(), TraceError> {
        let ring = ring_mut(&mut self.history, warp, "history")?;
        let seq = ring.header.total_writes;
        ring.write(HistoryEntry {
            site_id,
            value,
            seq,
            _pad: 0,
        });
        Ok(())
    }

    /// Appends a snapshot to `warp`'s snapshot ring; its `seq` is assigned here.
    pub fn push_snapshot(
        &mut self,
        warp: usize,
        mut entry: SnapshotEntry,
    ) -> Result<(), TraceError> {
        let ring = ring_mut(&mut self.snapshots, warp, "snapshot")?;
        entry.seq = ring.header.total_writes;
        ring.write(entry);
        Ok(())
    }

    /// Overrides a warp's buffer header as written (for crafting invalid traces in tests).
    pub fn set_warp_header(
        &mut self,
        warp: usize,
        header: WarpBufferHeader,
    ) -> Result<(), TraceError> {
        self.warp_mut(warp)?.header = header;
        Ok(())
    }

    /// Overrides a ring header as written (for crafting invalid traces in tests).
    pub fn set_history_header(
        &mut self,
        warp: usize,
        header: RingHeader,
    ) -> Result<(), TraceError> {
        ring_mut(&mut self.history, warp, "history")?.header = header;
        Ok(())
    }

    /// The plain file bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.plain_len());
        self.write_plain(&mut out)
            .unwrap_or_else(|e| unreachable!("writing to a Vec cannot fail: {e}"));
        out
    }

    /// The file bytes in the given encoding.
    pub fn to_bytes_with(&self, compression: Compression) -> Result<Vec<u8>, TraceError> {
        let mut out = Vec::new();
        self.write_to(&mut out, compression)
            .map_err(|e| TraceError::io("<memory>", "cannot encode trace", e))?;
        Ok(out)
    }

    /// Writes the file to `path` in the given encoding.
    pub fn write_file(
        &self,
        path: impl AsRef<Path>,
        compression: Compression,
    ) -> Result<(), TraceError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let file =
            std::fs::File::create(path).map_err(|e| TraceError::io(&name, "cannot create", e))?;
        let mut out = std::io::BufWriter::new(file);
        self.write_to(&mut out, compression)
            .and_then(|()| out.flush())
            .map_err(|e| TraceError::io(&name, "cannot write", e))
    }

    /// Streams the file in the given encoding.
    pub fn write_to<W: Write>(&self, out: &mut W, compression: Compression) -> std::io::Result<()> {
        match compression {
            Compression::None => self.write_plain(out),
            Compression::FlagCompress { level } => {
                let mut header = self.header;
                header.flags |= flags::COMPRESS;
                out.write_all(bytemuck::bytes_of(&header))?;
                let mut encoder = zstd::stream::write::Encoder::new(&mut *out, level)?;
                encoder.set_pledged_src_size(Some((self.plain_len() - HEADER_SIZE) as u64))?;
                encoder.include_contentsize(true)?;
                self.write_sections(&mut encoder)?;
                encoder.finish()?;
                Ok(())
            }
            Compression::WholeFile { level } => {
                let mut encoder = zstd::stream::write::Encoder::new(&mut *out, level)?;
                encoder.set_pledged_src_size(Some(self.plain_len() as u64))?;
                encoder.include_contentsize(true)?;
                self.write_plain(&mut encoder)?;
                encoder.finish()?;
                Ok(())
            }
        }
    }

    fn write_plain<W: Write>(&self, out: &mut W) -> std::io::Result<()> {
        let mut header = self.header;
        header.flags &= !flags::COMPRESS;
        out.write_all(bytemuck::bytes_of(&header))?;
        self.write_sections(out)
    }

    /// Everything after the header: warp buffers, then history, then snapshots.
    fn write_sections<W: Write>(&self, out: &mut W) -> std::io::Result<()> {
        let epw = self.header.events_per_warp as usize;
        for record in &self.warps {
            let mut header = record.header;
            header.num_events = header.write_idx.min(self.header.events_per_warp);
            out.write_all(bytemuck::bytes_of(&header))?;
            let stored = record.events.len().min(epw);
            out.write_all(bytemuck::cast_slice(&record.events[..stored]))?;
            write_zeros(out, (epw - stored) * std::mem::size_of::<TraceEvent>())?;
        }
        if self.header.has_flag(flags::HISTORY) {
            write_rings(out, &self.history, self.header.history_depth)?;
        }
        if self.header.has_flag(flags::SNAPSHOT) {
            write_rings(out, &self.snapshots, self.header.snapshot_depth)?;
        }
        Ok(())
    }

    /// Size of the plain file.
    pub fn plain_len(&self) -> usize {
        let slots = self.warps.len();
        let mut len = HEADER_SIZE + slots * (16 + self.header.events_per_warp as usize * 16);
        if self.header.has_flag(flags::HISTORY) {
            len += slots * (16 + self.header.history_depth as usize * 16);
        }
        if self.header.has_flag(flags::SNAPSHOT) {
            len += slots * (16 + self.header.snapshot_depth as usize * 288);
        }
        len
    }

    fn warp_mut(&mut self, warp: usize) -> Result<&mut WarpRecord, TraceError> {
        let slots = self.warps.len();
        self.warps
            .get_mut(warp)
            .ok_or_else(|| out_of_range("warp", warp, slots))
    }
}

impl<T: bytemuck::Pod> RingRecord<T> {
    fn write(&mut self, entry: T) {
        let depth = self.header.depth as usize;
        if depth == 0 {
            return;
        }
        let slot = self.header.write_idx as usize % depth;
        if self.slots.len() <= slot {
            self.slots.resize(slot + 1, T::zeroed());
        }
        self.slots[slot] = entry;
        self.header.write_idx = self.header.write_idx.wrapping_add(1);
        self.header.total_writes = self.header.total_writes.wrapping_add(1);
    }
}

fn empty_rings<T>(warps: usize, depth: u32) -> Vec<RingRecord<T>> {
    (0..warps)
        .map(|_| RingRecord {
            header: RingHeader {
                depth,
                ..RingHeader::default()
            },
            slots: Vec::new(),
        })
        .collect()
}

fn ring_mut<'r, T>(
    rings: &'r mut [RingRecord<T>],
    warp: usize,
    kind: &str,
) -> Result<&'r mut RingRecord<T>, TraceError> {
    let len = rings.len();
    if len == 0 {
        return Err(TraceError::Unrepresentable {
            file: "<builder>".to_owned(),
            field: format!("{kind}[{warp}]"),
            problem: format!(
                "the trace has no {kind} section; call with_{kind}{}",
                if kind == "history" { "" } else { "s" }
            ),
        });
    }
    rings
        .get_mut(warp)
        .ok_or_else(|| out_of_range(kind, warp, len))
}

fn write_rings<W: Write, T: bytemuck::Pod>(
    out: &mut W,
    rings: &[RingRecord<T>],
    depth: u32,
) -> std::io::Result<()> {
    // The file header's depth fixes the layout, whatever a ring header says.
    let depth = depth as usize;
    for ring in rings {
        out.write_all(bytemuck::bytes_of(&ring.header))?;
        let stored = ring.slots.len().min(depth);
        out.write_all(bytemuck::cast_slice(&ring.slots[..stored]))?;
        write_zeros(out, (depth - stored) * std::mem::size_of::<T>())?;
    }
    Ok(())
}

/// Unwritten slots are zero on the device (`cudaMemset`), so they are zero here.
fn write_zeros<W: Write>(out: &mut W, mut len: usize) -> std::io::Result<()> {
    const ZEROS: [u8; 4096] = [0; 4096];
    while len > 0 {
        let n = len.min(ZEROS.len());
        out.write_all(&ZEROS[..n])?;
        len -= n;
    }
    Ok(())
}

fn out_of_range(kind: &str, index: usize, len: usize) -> TraceError {
    TraceError::Unrepresentable {
        file: "<builder>".to_owned(),
        field: format!("{kind}[{index}]"),
        problem: format!("the trace has {len} warp slots"),
    }
}
