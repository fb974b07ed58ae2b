//! Checking a trace without keeping it: what a daemon does with every trace
//! it receives before storing the bytes as they came.
//!
//! [`TraceFile::from_bytes`](crate::TraceFile::from_bytes) owns what it
//! reads and gives each compressed trace a fresh buffer. A
//! [`TraceValidator`] decompresses `FLAG_COMPRESS` traces into one buffer it
//! keeps, in a single zstd call when the frame declares its size, so trace
//! after trace costs no allocation, no zero-fill and no page faults. The
//! checks are the reader's own: what one accepts, the other accepts.

use zstd::bulk::Decompressor;

use crate::error::TraceError;
use crate::geometry::SectionLayout;
use crate::inflate::{ZSTD_MAGIC, bomb, frame_error, no_memory, trailing_bytes};
use crate::layout::{HEADER_SIZE, TraceFileHeader, flags};
use crate::reader::{
    Encoding, check_decoded, check_limit, inflate_payload, inflate_whole_file, truncated_header,
};
use crate::storage::AlignedBuf;

/// Validates traces one after another, reusing its decompression buffer.
pub struct TraceValidator {
    /// Decompressed `FLAG_COMPRESS` traces. Its capacity grows to the
    /// largest trace seen and is reused; bytes are written by zstd into the
    /// spare capacity, never zero-filled first. The checks read unaligned,
    /// so no alignment is needed.
    scratch: Vec<u8>,
    /// Traces whose frame does not declare its size, and whole-file zstd:
    /// decoded by the reader's capped streaming path.
    spill: AlignedBuf,
    decompressor: Option<Decompressor<'static>>,
    /// The largest decoded trace accepted.
    max_decoded: u64,
}

impl Default for TraceValidator {
    fn default() -> TraceValidator {
        TraceValidator {
            scratch: Vec::new(),
            spill: AlignedBuf::default(),
            decompressor: None,
            max_decoded: u64::MAX,
        }
    }
}

/// A trace that passed every check, borrowed from the input (plain) or
/// from the validator (compressed).
#[derive(Debug)]
pub struct ValidTrace<'a> {
    bytes: &'a [u8],
    header: TraceFileHeader,
    layout: SectionLayout,
    encoding: Encoding,
}

impl ValidTrace<'_> {
    /// The whole decoded trace, header included.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes
    }

    pub fn header(&self) -> &TraceFileHeader {
        &self.header
    }

    pub fn layout(&self) -> &SectionLayout {
        &self.layout
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

impl TraceValidator {
    pub fn new() -> TraceValidator {
        TraceValidator::default()
    }

    /// Refuses traces whose header implies more than `bytes` decoded (any
    /// encoding), before decompressing anything: a small upload cannot make
    /// a daemon inflate gigabytes.
    pub fn set_max_decoded(&mut self, bytes: u64) {
        self.max_decoded = bytes;
    }

    /// Bytes held between calls; a caller pooling validators drops one that
    /// a huge trace has left large.
    pub fn retained_bytes(&self) -> usize {
        self.scratch.capacity() + self.spill.len()
    }

    /// Checks `raw` (plain, `FLAG_COMPRESS`, or whole-file zstd) exactly as
    /// `TraceFile::from_bytes` would, and hands out the decoded bytes.
    pub fn validate<'a>(
        &'a mut self,
        name: &str,
        raw: &'a [u8],
    ) -> Result<ValidTrace<'a>, TraceError> {
        self.spill = AlignedBuf::default();
        if raw.starts_with(&ZSTD_MAGIC) {
            let (buf, header, layout) = inflate_whole_file(name, raw, self.max_decoded)?;
            self.spill = buf;
            return finish(
                name,
                self.spill.as_bytes(),
                header,
                layout,
                Encoding::WholeFileZstd,
            );
        }
        if raw.len() < HEADER_SIZE {
            return Err(truncated_header(name, raw.len() as u64, "file"));
        }
        let header: TraceFileHeader = bytemuck::pod_read_unaligned(&raw[..HEADER_SIZE]);
        let layout = SectionLayout::from_header(name, &header, true)?;
        check_limit(name, &layout, self.max_decoded)?;
        if !header.has_flag(flags::COMPRESS) {
            return finish(name, raw, header, layout, Encoding::Plain);
        }
        let payload_cap = layout.total_len - HEADER_SIZE as u64;
        let frame = &raw[HEADER_SIZE..];
        let declared = zstd::zstd_safe::get_frame_content_size(frame)
            .ok()
            .flatten();
        let bytes = match declared {
            Some(size) if size > payload_cap => return Err(bomb(name, payload_cap)),
            Some(size) => self.inflate_declared(name, raw, size)?,
            None => {
                self.spill = inflate_payload(name, raw, &layout)?;
                self.spill.as_bytes()
            }
        };
        finish(name, bytes, header, layout, Encoding::FlagCompressed)
    }

    /// One zstd call straight into the kept buffer's spare capacity; zstd
    /// itself holds the output to the declared size and fails on anything else.
    fn inflate_declared(
        &mut self,
        name: &str,
        raw: &[u8],
        declared: u64,
    ) -> Result<&[u8], TraceError> {
        let frame = &raw[HEADER_SIZE..];
        let frame_len = zstd::zstd_safe::find_frame_compressed_size(frame).map_err(|code| {
            frame_error(
                name,
                format!(
                    "corrupt or truncated zstd frame ({} compressed bytes): {}",
                    frame.len(),
                    zstd::zstd_safe::get_error_name(code)
                ),
            )
        })?;
        if frame_len < frame.len() {
            return Err(trailing_bytes(name, frame.len() - frame_len));
        }
        let total = usize::try_from(declared)
            .ok()
            .and_then(|d| d.checked_add(HEADER_SIZE))
            .ok_or_else(|| no_memory(name, declared))?;
        self.scratch.clear();
        self.scratch
            .try_reserve_exact(total)
            .map_err(|_| no_memory(name, total as u64))?;
        self.scratch.extend_from_slice(&raw[..HEADER_SIZE]);
        let decompressor = match &mut self.decompressor {
            Some(decompressor) => decompressor,
            slot @ None => slot
                .insert(Decompressor::new().map_err(|e| {
                    frame_error(name, format!("cannot create a zstd decoder: {e}"))
                })?),
        };
        // Written after the header, into capacity reserved above.
        let mut out = std::io::Cursor::new(&mut self.scratch);
        out.set_position(HEADER_SIZE as u64);
        let produced = decompressor
            .decompress_to_buffer(frame, &mut out)
            .map_err(|e| frame_error(name, format!("corrupt zstd data: {e}")))?;
        if produced as u64 != declared || self.scratch.len() != total {
            return Err(frame_error(
                name,
                format!("the zstd frame declares {declared} bytes but holds {produced}"),
            ));
        }
        Ok(&self.scratch)
    }
}

fn finish<'a>(
    name: &str,
    bytes: &'a [u8],
    header: TraceFileHeader,
    layout: SectionLayout,
    encoding: Encoding,
) -> Result<ValidTrace<'a>, TraceError> {
    check_decoded(name, bytes, &header, &layout, encoding)?;
    Ok(ValidTrace {
        bytes,
        header,
        layout,
        encoding,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::TraceEvent;
    use crate::writer::{Compression, TraceBuilder};

    fn builder(grid: u32, events: u32) -> TraceBuilder {
        let mut b = TraceBuilder::new("k", [grid, 1, 1], [64, 1, 1])
            .unwrap()
            .events_per_warp(events);
        for warp in 0..b.num_warps() {
            for i in 0..events {
                let event = TraceEvent {
                    site_id: i,
                    active_mask: u32::MAX,
                    value_a: i ^ warp as u32,
                    ..TraceEvent::default()
                };
                b.push_event(warp, event).unwrap();
            }
        }
        b
    }

    #[test]
    fn the_buffer_is_kept_and_reused_across_traces() {
        let large = builder(8, 64);
        let small = builder(1, 4);
        let mut validator = TraceValidator::new();
        let flagged = large
            .to_bytes_with(Compression::FlagCompress { level: 1 })
            .unwrap();
        let expected = crate::TraceFile::from_bytes("large", flagged.clone()).unwrap();
        let trace = validator.validate("large", &flagged).unwrap();
        assert_eq!(trace.encoding(), Encoding::FlagCompressed);
        assert!(trace.as_bytes() == expected.as_bytes());
        let first = trace.as_bytes().as_ptr();
        let kept = validator.retained_bytes();
        assert!(kept >= expected.as_bytes().len());

        let flagged = small
            .to_bytes_with(Compression::FlagCompress { level: 1 })
            .unwrap();
        let expected = crate::TraceFile::from_bytes("small", flagged.clone()).unwrap();
        let trace = validator.validate("small", &flagged).unwrap();
        assert!(trace.as_bytes() == expected.as_bytes());
        assert_eq!(
            trace.as_bytes().as_ptr(),
            first,
            "same buffer, not a new one"
        );
        assert_eq!(validator.retained_bytes(), kept);
    }

    #[test]
    fn traces_over_the_decoded_limit_are_refused_before_decompressing() {
        let b = builder(4, 64);
        let plain_len = b.to_bytes().len() as u64;
        for compression in [
            Compression::None,
            Compression::FlagCompress { level: 1 },
            Compression::WholeFile { level: 1 },
        ] {
            let bytes = b.to_bytes_with(compression).unwrap();
            let mut validator = TraceValidator::new();
            validator.set_max_decoded(plain_len - 1);
            let err = validator.validate("big", &bytes).unwrap_err().to_string();
            assert!(
                err.contains(&format!("over the {}-byte limit", plain_len - 1)),
                "{compression:?}: {err}"
            );
            assert_eq!(validator.retained_bytes(), 0, "{compression:?}");
            validator.set_max_decoded(plain_len);
            assert!(validator.validate("big", &bytes).is_ok(), "{compression:?}");
        }
    }

    #[test]
    fn plain_traces_are_checked_in_place() {
        let plain = builder(2, 8).to_bytes();
        let mut validator = TraceValidator::new();
        let trace = validator.validate("plain", &plain).unwrap();
        assert_eq!(trace.encoding(), Encoding::Plain);
        assert_eq!(trace.as_bytes().as_ptr(), plain.as_ptr());
        assert_eq!(validator.retained_bytes(), 0);
    }

    /// A frame written by a streaming encoder that never learnt the size
    /// goes through the reader's capped streaming path instead.
    #[test]
    fn frames_without_a_declared_size_are_streamed() {
        let plain = builder(2, 8).to_bytes();
        let mut flagged = plain[..HEADER_SIZE].to_vec();
        let mut header: TraceFileHeader = bytemuck::pod_read_unaligned(&flagged);
        header.flags |= flags::COMPRESS;
        flagged.copy_from_slice(bytemuck::bytes_of(&header));
        let mut encoder = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
        std::io::Write::write_all(&mut encoder, &plain[HEADER_SIZE..]).unwrap();
        let frame = encoder.finish().unwrap();
        assert_eq!(
            zstd::zstd_safe::get_frame_content_size(&frame).unwrap(),
            None
        );
        flagged.extend_from_slice(&frame);
        let mut validator = TraceValidator::new();
        let trace = validator.validate("streamed", &flagged).unwrap();
        assert!(trace.as_bytes()[HEADER_SIZE..] == plain[HEADER_SIZE..]);
    }

    #[test]
    fn a_frame_declaring_more_than_the_header_allows_is_refused_before_allocating() {
        let b = builder(1, 4);
        let mut bigger = builder(1, 4).events_per_warp(1 << 20);
        bigger.push_event(0, TraceEvent::default()).unwrap();
        let mut flagged = b.to_bytes()[..HEADER_SIZE].to_vec();
        let mut header: TraceFileHeader = bytemuck::pod_read_unaligned(&flagged);
        header.flags |= flags::COMPRESS;
        flagged.copy_from_slice(bytemuck::bytes_of(&header));
        let frame = zstd::bulk::compress(&bigger.to_bytes()[HEADER_SIZE..], 1).unwrap();
        flagged.extend_from_slice(&frame);
        let mut validator = TraceValidator::new();
        let err = validator
            .validate("bomb", &flagged)
            .unwrap_err()
            .to_string();
        assert!(err.contains("decompresses to more than"), "{err}");
        assert_eq!(validator.retained_bytes(), 0);
    }
}
