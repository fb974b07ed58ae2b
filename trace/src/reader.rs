//! Opening a trace: pick the encoding, validate every byte range, then hand
//! out zero-copy views.
//!
//! All checks run once in [`TraceFile::open`] / [`TraceFile::from_bytes`];
//! afterwards the views cannot fail, because every range they touch was
//! proven in bounds, aligned and consistent with the header.

use std::fs::File;
use std::path::Path;

use memmap2::Mmap;

use crate::error::TraceError;
use crate::geometry::{Section, SectionLayout, WarpLocation};
use crate::inflate::{FrameInflater, ZSTD_MAGIC};
use crate::layout::{
    HEADER_SIZE, HistoryEntry, RingHeader, SnapshotEntry, TraceEvent, TraceFileHeader,
    WarpBufferHeader, flags,
};
use crate::storage::{AlignedBuf, Storage};
use crate::views::{Ring, Warp};

/// How the trace bytes were stored on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// Header and sections as-is.
    Plain,
    /// Uncompressed header with `FLAG_COMPRESS`, then one zstd frame of everything after it.
    FlagCompressed,
    /// The whole file is one zstd frame (`.prlx.zst`).
    WholeFileZstd,
}

/// A validated `.prlx` v1 trace, open for reading.
pub struct TraceFile {
    name: String,
    storage: Storage,
    header: TraceFileHeader,
    layout: SectionLayout,
    encoding: Encoding,
}

impl std::fmt::Debug for TraceFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceFile")
            .field("name", &self.name)
            .field("encoding", &self.encoding)
            .field("kernel", &self.kernel_name())
            .field("num_warps", &self.num_warps())
            .finish()
    }
}

impl TraceFile {
    /// Opens a plain trace by memory-mapping it, or decompresses a
    /// `FLAG_COMPRESS` / whole-file zstd trace into one aligned buffer.
    pub fn open(path: impl AsRef<Path>) -> Result<TraceFile, TraceError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| TraceError::io(&name, "cannot open", e))?;
        let len = file
            .metadata()
            .map_err(|e| TraceError::io(&name, "cannot stat", e))?
            .len();
        if len == 0 {
            return Err(truncated_header(&name, len, "file"));
        }
        // SAFETY: the map is read-only and private to this process. Like every
        // mmap-based reader we rely on the trace not being truncated or
        // rewritten by another process while it is open; all reads are still
        // bounds-checked against the length validated here.
        let map =
            unsafe { Mmap::map(&file) }.map_err(|e| TraceError::io(&name, "cannot mmap", e))?;
        Self::from_source(name, Source::Mapped(map))
    }

    /// Reads a trace already in memory (plain, `FLAG_COMPRESS`, or whole-file zstd).
    ///
    /// A plain trace is kept as given when the vector is 16-byte aligned (the
    /// usual case), else copied once into an aligned buffer and the input dropped.
    pub fn from_bytes(name: impl Into<String>, bytes: Vec<u8>) -> Result<TraceFile, TraceError> {
        Self::from_source(name.into(), Source::Owned(bytes))
    }

    fn from_source(name: String, source: Source) -> Result<TraceFile, TraceError> {
        let raw = source.bytes();
        if raw.starts_with(&ZSTD_MAGIC) {
            let (buf, header, layout) = inflate_whole_file(&name, raw, u64::MAX)?;
            drop(source); // Only the decompressed copy is kept.
            return Self::validated(
                name,
                Storage::Inflated(buf),
                header,
                layout,
                Encoding::WholeFileZstd,
            );
        }
        if raw.len() < HEADER_SIZE {
            return Err(truncated_header(&name, raw.len() as u64, "file"));
        }
        let header: TraceFileHeader = bytemuck::pod_read_unaligned(&raw[..HEADER_SIZE]);
        let layout = SectionLayout::from_header(&name, &header, true)?;
        if header.has_flag(flags::COMPRESS) {
            let buf = inflate_payload(&name, raw, &layout)?;
            drop(source);
            return Self::validated(
                name,
                Storage::Inflated(buf),
                header,
                layout,
                Encoding::FlagCompressed,
            );
        }
        let storage = match source {
            Source::Mapped(map) => Storage::Mapped(map),
            Source::Owned(bytes) => Storage::from_vec(bytes).map_err(|_| {
                TraceError::invalid(
                    &name,
                    "file length",
                    "cannot allocate a buffer for the trace",
                )
            })?,
        };
        Self::validated(name, storage, header, layout, Encoding::Plain)
    }

    fn validated(
        name: String,
        storage: Storage,
        header: TraceFileHeader,
        layout: SectionLayout,
        encoding: Encoding,
    ) -> Result<TraceFile, TraceError> {
        let bytes = storage.bytes();
        check_alignment(&name, bytes)?;
        check_decoded(&name, bytes, &header, &layout, encoding)?;
        Ok(TraceFile {
            name,
            storage,
            header,
            layout,
            encoding,
        })
    }

    /// The path or name as given, for messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn header(&self) -> &TraceFileHeader {
        &self.header
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The byte ranges of the sections, as validated.
    pub fn layout(&self) -> &SectionLayout {
        &self.layout
    }

    /// The whole (decompressed) trace, header included, as validated.
    pub fn as_bytes(&self) -> &[u8] {
        self.storage.bytes()
    }

    pub fn kernel_name(&self) -> String {
        self.header.kernel_name()
    }

    pub fn num_warps(&self) -> usize {
        self.layout.num_warps
    }

    /// Warp slot `idx`: its buffer header and exactly its `num_events` events.
    pub fn warp(&self, idx: usize) -> Option<Warp<'_>> {
        if idx >= self.layout.num_warps {
            return None;
        }
        let (header, entries) =
            self.record::<WarpBufferHeader, TraceEvent>(&self.layout.warps, idx)?;
        let events = entries.get(..header.num_events as usize)?;
        Some(Warp {
            index: idx,
            header,
            events,
        })
    }

    pub fn warps(&self) -> impl ExactSizeIterator<Item = Warp<'_>> + '_ {
        (0..self.layout.num_warps).map(move |idx| {
            // Validation at open guarantees `warp(idx)` is Some; the fallback
            // keeps this path panic-free even so.
            self.warp(idx).unwrap_or(Warp {
                index: idx,
                header: &EMPTY_WARP_HEADER,
                events: &[],
            })
        })
    }

    pub fn warp_location(&self, idx: usize) -> WarpLocation {
        WarpLocation::of(&self.header, idx)
    }

    /// Warp `warp`'s history ring; `None` when the trace has no history section.
    pub fn history(&self, warp: usize) -> Option<Ring<'_, HistoryEntry>> {
        self.ring(self.layout.history.as_ref()?, warp)
    }

    /// Warp `warp`'s snapshot ring; `None` when the trace has no snapshot section.
    pub fn snapshots(&self, warp: usize) -> Option<Ring<'_, SnapshotEntry>> {
        self.ring(self.layout.snapshots.as_ref()?, warp)
    }

    fn ring<T: bytemuck::Pod>(&self, section: &Section, warp: usize) -> Option<Ring<'_, T>> {
        if warp >= self.layout.num_warps {
            return None;
        }
        let (header, entries) = self.record::<RingHeader, T>(section, warp)?;
        Some(Ring { header, entries })
    }

    /// The 16-byte header and `section.depth` entries of one warp's record.
    fn record<H: bytemuck::Pod, T: bytemuck::Pod>(
        &self,
        section: &Section,
        warp: usize,
    ) -> Option<(&H, &[T])> {
        let bytes = self.storage.bytes();
        let start = usize::try_from(section.record_offset(warp)).ok()?;
        let end = start.checked_add(usize::try_from(section.stride).ok()?)?;
        let record = bytes.get(start..end)?;
        let (head, body) = record.split_at_checked(16)?;
        let header = bytemuck::try_from_bytes::<H>(head).ok()?;
        let entries = bytemuck::try_cast_slice::<u8, T>(body).ok()?;
        Some((header, entries))
    }
}

const EMPTY_WARP_HEADER: WarpBufferHeader = WarpBufferHeader {
    write_idx: 0,
    overflow_count: 0,
    num_events: 0,
    total_event_count: 0,
};

/// Input bytes before decoding: the caller's memory map or vector.
enum Source {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl Source {
    fn bytes(&self) -> &[u8] {
        match self {
            Source::Mapped(map) => map,
            Source::Owned(bytes) => bytes,
        }
    }
}

pub(crate) fn truncated_header(file: &str, len: u64, what: &'static str) -> TraceError {
    TraceError::Truncated {
        file: file.to_owned(),
        field: "header".to_owned(),
        start: 0,
        end: HEADER_SIZE as u64,
        len,
        what,
    }
}

/// `FLAG_COMPRESS`: the 160-byte header as-is, then one frame holding the rest.
pub(crate) fn inflate_payload(
    file: &str,
    raw: &[u8],
    layout: &SectionLayout,
) -> Result<AlignedBuf, TraceError> {
    let mut inflater = FrameInflater::new(file, &raw[HEADER_SIZE..])?;
    let payload_cap = layout.total_len - HEADER_SIZE as u64;
    let mut buf = AlignedBuf::default();
    inflater.reserve_declared(&mut buf, HEADER_SIZE, payload_cap)?;
    buf.try_resize(HEADER_SIZE)
        .map_err(|_| TraceError::invalid(file, "header", "cannot allocate the trace buffer"))?;
    buf.as_bytes_mut().copy_from_slice(&raw[..HEADER_SIZE]);
    let produced = inflater.append(&mut buf, payload_cap)?;
    if produced == payload_cap {
        inflater.finish(payload_cap)?;
    }
    // A short payload is reported by the length check, naming the section cut off.
    Ok(buf)
}

/// The decoded size the header implies must be within `max_decoded`.
pub(crate) fn check_limit(
    name: &str,
    layout: &SectionLayout,
    max_decoded: u64,
) -> Result<(), TraceError> {
    if layout.total_len > max_decoded {
        return Err(TraceError::invalid(
            name,
            "header",
            format!(
                "the trace decodes to {} bytes, over the {max_decoded}-byte limit",
                layout.total_len
            ),
        ));
    }
    Ok(())
}

/// Whole-file zstd: the header comes out of the frame, then bounds the rest
/// (and must imply at most `max_decoded` bytes).
pub(crate) fn inflate_whole_file(
    file: &str,
    raw: &[u8],
    max_decoded: u64,
) -> Result<(AlignedBuf, TraceFileHeader, SectionLayout), TraceError> {
    let mut inflater = FrameInflater::new(file, raw)?;
    let mut buf = AlignedBuf::default();
    let got = inflater.append(&mut buf, HEADER_SIZE as u64)?;
    if got < HEADER_SIZE as u64 {
        return Err(truncated_header(file, got, "decompressed trace"));
    }
    let header: TraceFileHeader = bytemuck::pod_read_unaligned(&buf.as_bytes()[..HEADER_SIZE]);
    let layout = SectionLayout::from_header(file, &header, false)?;
    check_limit(file, &layout, max_decoded)?;
    inflater.reserve_declared(&mut buf, 0, layout.total_len)?;
    let rest = layout.total_len - HEADER_SIZE as u64;
    let produced = inflater.append(&mut buf, rest)?;
    if produced == rest {
        inflater.finish(layout.total_len)?;
    }
    Ok((buf, header, layout))
}

/// Every check on decoded trace bytes (the header and layout already parsed):
/// section bounds and lengths, each warp's event count, each ring's depth.
/// Reads through unaligned loads, so any byte slice will do.
pub(crate) fn check_decoded(
    name: &str,
    bytes: &[u8],
    header: &TraceFileHeader,
    layout: &SectionLayout,
    encoding: Encoding,
) -> Result<(), TraceError> {
    let what = match encoding {
        Encoding::Plain => "file",
        Encoding::FlagCompressed | Encoding::WholeFileZstd => "decompressed trace",
    };
    check_offsets_inside(name, bytes.len() as u64, header, what)?;
    check_length(name, bytes.len() as u64, layout, what)?;
    check_warps(name, bytes, header, &layout.warps, layout.num_warps)?;
    for (kind, section) in [
        ("history", &layout.history),
        ("snapshot", &layout.snapshots),
    ] {
        if let Some(section) = section {
            check_rings(name, bytes, kind, section, layout.num_warps)?;
        }
    }
    Ok(())
}

fn check_alignment(file: &str, bytes: &[u8]) -> Result<(), TraceError> {
    if bytes.as_ptr().align_offset(16) != 0 {
        return Err(TraceError::invalid(
            file,
            "file buffer",
            "trace bytes are not 16-byte aligned in memory; cannot view them in place",
        ));
    }
    Ok(())
}

/// An explicit section offset must at least point into the file.
fn check_offsets_inside(
    file: &str,
    len: u64,
    header: &TraceFileHeader,
    what: &'static str,
) -> Result<(), TraceError> {
    for (flag, field, offset) in [
        (
            flags::HISTORY,
            "header.history_section_offset",
            header.history_section_offset,
        ),
        (
            flags::SNAPSHOT,
            "header.snapshot_section_offset",
            header.snapshot_section_offset,
        ),
    ] {
        if header.has_flag(flag) && offset != 0 && u64::from(offset) >= len {
            return Err(TraceError::invalid(
                file,
                field,
                format!("{offset} is outside the {what} ({len} bytes)"),
            ));
        }
    }
    Ok(())
}

/// The bytes must hold every section the header implies, and nothing else.
fn check_length(
    file: &str,
    len: u64,
    layout: &SectionLayout,
    what: &'static str,
) -> Result<(), TraceError> {
    let sections = [
        ("warp", Some(&layout.warps)),
        ("history", layout.history.as_ref()),
        ("snapshot", layout.snapshots.as_ref()),
    ];
    let mut sections: Vec<(&str, &Section)> = sections
        .into_iter()
        .filter_map(|(kind, s)| s.map(|s| (kind, s)))
        .collect();
    sections.sort_by_key(|(_, s)| s.offset);
    for (kind, section) in sections {
        if section.end() <= len {
            continue;
        }
        // Name the first record that does not fit.
        let first_cut = len.saturating_sub(section.offset) / section.stride;
        let start = section.offset + first_cut * section.stride;
        return Err(TraceError::Truncated {
            file: file.to_owned(),
            field: format!("{kind}[{first_cut}]"),
            start,
            end: start + section.stride,
            len,
            what,
        });
    }
    if len > layout.total_len {
        return Err(TraceError::invalid(
            file,
            "file length",
            format!(
                "{len} bytes, but the header accounts for {} bytes ({} unexplained trailing bytes)",
                layout.total_len,
                len - layout.total_len
            ),
        ));
    }
    Ok(())
}

fn check_warps(
    file: &str,
    bytes: &[u8],
    header: &TraceFileHeader,
    section: &Section,
    num_warps: usize,
) -> Result<(), TraceError> {
    let epw = header.events_per_warp;
    for warp in 0..num_warps {
        let at = section.record_offset(warp) as usize;
        let wh: WarpBufferHeader = bytemuck::pod_read_unaligned(&bytes[at..at + 16]);
        if wh.num_events > epw {
            return Err(TraceError::invalid(
                file,
                format!("warp[{warp}].num_events"),
                format!("{} exceeds header.events_per_warp {epw}", wh.num_events),
            ));
        }
        let expected = wh.write_idx.min(epw);
        if wh.num_events != expected {
            return Err(TraceError::invalid(
                file,
                format!("warp[{warp}].num_events"),
                format!(
                    "{} disagrees with write_idx {} (expected min(write_idx, events_per_warp) = {expected})",
                    wh.num_events, wh.write_idx
                ),
            ));
        }
    }
    Ok(())
}

fn check_rings(
    file: &str,
    bytes: &[u8],
    kind: &str,
    section: &Section,
    num_warps: usize,
) -> Result<(), TraceError> {
    for warp in 0..num_warps {
        let at = section.record_offset(warp) as usize;
        let rh: RingHeader = bytemuck::pod_read_unaligned(&bytes[at..at + 16]);
        if rh.depth != section.depth {
            return Err(TraceError::invalid(
                file,
                format!("{kind}[{warp}].depth"),
                format!(
                    "{} disagrees with header.{kind}_depth {}",
                    rh.depth, section.depth
                ),
            ));
        }
    }
    Ok(())
}
