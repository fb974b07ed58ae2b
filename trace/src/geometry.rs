//! Where each section of a trace lives, derived from the header alone.
//!
//! This is the one place that turns header fields into byte ranges. Every
//! product and sum is checked in `u64`, so a hostile header yields an error
//! naming the field instead of a wrapped offset.

use std::ops::Range;

use crate::error::TraceError;
use crate::layout::{
    EVENT_SIZE, HEADER_SIZE, HISTORY_ENTRY_SIZE, PRLX_MAGIC, PRLX_VERSION, RING_HEADER_SIZE,
    SNAPSHOT_ENTRY_SIZE, TraceFileHeader, WARP_HEADER_SIZE, WARP_SIZE, flags,
};

/// One per-warp array of equally sized records (warp buffers or rings).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// Byte offset of the first record from the start of the (decompressed) file.
    pub offset: u64,
    /// Bytes per warp: a 16-byte header plus its entries.
    pub stride: u64,
    /// Entries per warp (events_per_warp, history_depth or snapshot_depth).
    pub depth: u32,
    /// `stride * total_warp_slots`.
    pub len: u64,
}

impl Section {
    pub fn end(&self) -> u64 {
        // Cannot overflow: `SectionLayout::from_header` checked it.
        self.offset + self.len
    }

    pub fn range(&self) -> Range<u64> {
        self.offset..self.end()
    }

    /// Byte offset of warp `warp`'s record.
    pub fn record_offset(&self, warp: usize) -> u64 {
        self.offset + warp as u64 * self.stride
    }
}

/// The byte ranges a valid header implies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionLayout {
    pub num_warps: usize,
    pub warps: Section,
    pub history: Option<Section>,
    pub snapshots: Option<Section>,
    /// Where the last section ends: the exact size of a plain (or decompressed) file.
    pub total_len: u64,
}

impl SectionLayout {
    /// Validates every header field that shapes the file and computes the layout.
    ///
    /// `allow_compress_flag` is false when the header itself came out of a
    /// zstd frame, where a second level of compression is not part of the format.
    pub fn from_header(
        file: &str,
        header: &TraceFileHeader,
        allow_compress_flag: bool,
    ) -> Result<SectionLayout, TraceError> {
        check_identity(file, header, allow_compress_flag)?;
        let num_warps = check_grid(file, header)?;

        if header.events_per_warp == 0 {
            return Err(TraceError::invalid(
                file,
                "header.events_per_warp",
                "0 is not a valid event count",
            ));
        }
        let warps = section(
            file,
            "header.events_per_warp",
            HEADER_SIZE as u64,
            header.events_per_warp,
            EVENT_SIZE,
            header.total_warp_slots,
        )?;
        let mut end = warps.end();

        let history = if header.has_flag(flags::HISTORY) {
            if header.history_depth == 0 {
                return Err(TraceError::invalid(
                    file,
                    "header.history_depth",
                    "0, but FLAG_HISTORY (0x4) is set",
                ));
            }
            let offset = section_offset(
                file,
                "header.history_section_offset",
                header.history_section_offset,
                end,
            )?;
            let ring = section(
                file,
                "header.history_depth",
                offset,
                header.history_depth,
                HISTORY_ENTRY_SIZE,
                header.total_warp_slots,
            )?;
            end = ring.end();
            Some(ring)
        } else {
            None
        };

        let snapshots = if header.has_flag(flags::SNAPSHOT) {
            if header.snapshot_depth == 0 {
                return Err(TraceError::invalid(
                    file,
                    "header.snapshot_depth",
                    "0, but FLAG_SNAPSHOT (0x10) is set",
                ));
            }
            let offset = section_offset(
                file,
                "header.snapshot_section_offset",
                header.snapshot_section_offset,
                end,
            )?;
            let ring = section(
                file,
                "header.snapshot_depth",
                offset,
                header.snapshot_depth,
                SNAPSHOT_ENTRY_SIZE,
                header.total_warp_slots,
            )?;
            Some(ring)
        } else {
            None
        };

        check_no_overlap(file, &warps, history.as_ref(), snapshots.as_ref())?;
        let total_len = [Some(&warps), history.as_ref(), snapshots.as_ref()]
            .into_iter()
            .flatten()
            .map(Section::end)
            .max()
            .unwrap_or(HEADER_SIZE as u64);
        if usize::try_from(total_len).is_err() {
            return Err(TraceError::invalid(
                file,
                "header.total_warp_slots",
                format!("the trace would be {total_len} bytes, more than this host can address"),
            ));
        }
        Ok(SectionLayout {
            num_warps,
            warps,
            history,
            snapshots,
            total_len,
        })
    }
}

fn check_identity(
    file: &str,
    header: &TraceFileHeader,
    allow_compress_flag: bool,
) -> Result<(), TraceError> {
    if header.magic != PRLX_MAGIC {
        return Err(TraceError::invalid(
            file,
            "header.magic",
            format!(
                "found {:#018x}, expected {PRLX_MAGIC:#018x} (\"PRLX\"); not a .prlx trace",
                header.magic
            ),
        ));
    }
    if header.version != PRLX_VERSION {
        return Err(TraceError::invalid(
            file,
            "header.version",
            format!(
                "version {} is not supported (this reader reads version {PRLX_VERSION})",
                header.version
            ),
        ));
    }
    let unknown = header.flags & !flags::KNOWN;
    if unknown != 0 {
        return Err(TraceError::invalid(
            file,
            "header.flags",
            format!(
                "unknown flag bits {unknown:#x} (flags = {:#x})",
                header.flags
            ),
        ));
    }
    if header.has_flag(flags::COMPACT) {
        return Err(TraceError::invalid(
            file,
            "header.flags",
            "FLAG_COMPACT (0x1, 8-byte events) is not supported by PRLX v1 readers",
        ));
    }
    if !allow_compress_flag && header.has_flag(flags::COMPRESS) {
        return Err(TraceError::invalid(
            file,
            "header.flags",
            "FLAG_COMPRESS (0x2) inside a file that is already one zstd frame",
        ));
    }
    Ok(())
}

/// Checks grid/block dims against the warp counts; returns the number of warp slots.
fn check_grid(file: &str, header: &TraceFileHeader) -> Result<usize, TraceError> {
    for (name, dims) in [
        ("grid_dim", header.grid_dim),
        ("block_dim", header.block_dim),
    ] {
        if let Some(axis) = dims.iter().position(|&d| d == 0) {
            return Err(TraceError::invalid(
                file,
                format!("header.{name}"),
                format!(
                    "{dims:?} has a zero extent on axis {}",
                    ['x', 'y', 'z'][axis]
                ),
            ));
        }
    }
    let product = |dims: [u32; 3]| {
        dims.iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(u64::from(d)))
    };
    let threads_per_block = product(header.block_dim).ok_or_else(|| {
        TraceError::invalid(
            file,
            "header.block_dim",
            format!("{:?} threads per block overflow 64 bits", header.block_dim),
        )
    })?;
    let expected_wpb = threads_per_block.div_ceil(u64::from(WARP_SIZE));
    if u64::from(header.warps_per_block) != expected_wpb {
        return Err(TraceError::invalid(
            file,
            "header.warps_per_block",
            format!(
                "{} disagrees with block_dim {:?} ({threads_per_block} threads = {expected_wpb} warps)",
                header.warps_per_block, header.block_dim
            ),
        ));
    }
    let expected_slots = product(header.grid_dim)
        .and_then(|blocks| blocks.checked_mul(expected_wpb))
        .ok_or_else(|| {
            TraceError::invalid(
                file,
                "header.grid_dim",
                format!(
                    "{:?} blocks times {expected_wpb} warps overflow 64 bits",
                    header.grid_dim
                ),
            )
        })?;
    if u64::from(header.total_warp_slots) != expected_slots {
        return Err(TraceError::invalid(
            file,
            "header.total_warp_slots",
            format!(
                "{} disagrees with grid_dim {:?} x {expected_wpb} warps per block = {expected_slots}",
                header.total_warp_slots, header.grid_dim
            ),
        ));
    }
    usize::try_from(header.total_warp_slots).map_err(|_| {
        TraceError::invalid(
            file,
            "header.total_warp_slots",
            "more warp slots than this host can index",
        )
    })
}

fn section(
    file: &str,
    depth_field: &str,
    offset: u64,
    depth: u32,
    entry_size: usize,
    slots: u32,
) -> Result<Section, TraceError> {
    let overflow = || {
        TraceError::invalid(
            file,
            depth_field,
            format!(
                "{depth} entries of {entry_size} bytes for {slots} warps overflow 64-bit sizes"
            ),
        )
    };
    // WARP_HEADER_SIZE == RING_HEADER_SIZE: every per-warp record starts with 16 bytes.
    debug_assert_eq!(WARP_HEADER_SIZE, RING_HEADER_SIZE);
    let stride = u64::from(depth)
        .checked_mul(entry_size as u64)
        .and_then(|b| b.checked_add(RING_HEADER_SIZE as u64))
        .ok_or_else(overflow)?;
    let len = stride.checked_mul(u64::from(slots)).ok_or_else(overflow)?;
    offset.checked_add(len).ok_or_else(overflow)?;
    Ok(Section {
        offset,
        stride,
        depth,
        len,
    })
}

/// Resolves an optional section offset (0 = directly after what precedes it).
fn section_offset(file: &str, field: &str, raw: u32, auto: u64) -> Result<u64, TraceError> {
    if raw == 0 {
        return Ok(auto);
    }
    let offset = u64::from(raw);
    if offset % 16 != 0 {
        return Err(TraceError::invalid(
            file,
            field,
            format!("{offset} is not a multiple of 16; PRLX sections are 16-byte aligned"),
        ));
    }
    Ok(offset)
}

fn check_no_overlap(
    file: &str,
    warps: &Section,
    history: Option<&Section>,
    snapshots: Option<&Section>,
) -> Result<(), TraceError> {
    let overlaps = |a: &Range<u64>, b: &Range<u64>| a.start < b.end && b.start < a.end;
    let header = 0..HEADER_SIZE as u64;
    let mut placed: Vec<(&str, Range<u64>)> = vec![
        ("the header", header),
        ("the warp event buffers", warps.range()),
    ];
    for (field, name, section) in [
        (
            "header.history_section_offset",
            "the history section",
            history,
        ),
        (
            "header.snapshot_section_offset",
            "the snapshot section",
            snapshots,
        ),
    ] {
        let Some(section) = section else { continue };
        let range = section.range();
        if let Some((other, other_range)) = placed
            .iter()
            .find(|(_, r)| !range.is_empty() && overlaps(&range, r))
        {
            return Err(TraceError::invalid(
                file,
                field,
                format!(
                    "{name} at bytes {}..{} overlaps {other} at bytes {}..{}",
                    range.start, range.end, other_range.start, other_range.end
                ),
            ));
        }
        placed.push((name, range));
    }
    Ok(())
}

/// Where warp `index` ran: its block and its warp number within the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WarpLocation {
    pub block: [u32; 3],
    pub block_linear: u32,
    pub warp_in_block: u32,
}

impl WarpLocation {
    /// Inverts PRLX's `__prlx_warp_id`: `linear_block * warps_per_block + warp_in_block`,
    /// with `linear_block = x + y * grid.x + z * grid.x * grid.y`.
    pub fn of(header: &TraceFileHeader, index: usize) -> WarpLocation {
        let wpb = u64::from(header.warps_per_block.max(1));
        let index = index as u64;
        let block_linear = index / wpb;
        let warp_in_block = index % wpb;
        let gx = u64::from(header.grid_dim[0].max(1));
        let gy = u64::from(header.grid_dim[1].max(1));
        let block = [
            block_linear % gx,
            (block_linear / gx) % gy,
            block_linear / (gx * gy),
        ];
        let narrow = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        WarpLocation {
            block: block.map(narrow),
            block_linear: narrow(block_linear),
            warp_in_block: narrow(warp_in_block),
        }
    }
}
