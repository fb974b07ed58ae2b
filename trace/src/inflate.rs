//! Decompressing one zstd frame straight into an aligned buffer, with a hard cap.
//!
//! The cap is the size the trace header implies, so a small file cannot
//! claim a small trace and then expand without bound (a decompression bomb),
//! and memory grows with the bytes actually produced, not with what a header
//! or frame claims.

use zstd::stream::raw::{Decoder, Operation};

use crate::error::TraceError;
use crate::storage::AlignedBuf;

/// The four bytes every zstd frame starts with (`0xFD2FB528` little-endian).
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Growth step for the output buffer when the frame does not declare its size.
const MIN_GROWTH: usize = 1 << 20;

pub(crate) struct FrameInflater<'a> {
    file: &'a str,
    decoder: Decoder<'static>,
    input: &'a [u8],
    pos: usize,
    frame_done: bool,
}

impl<'a> FrameInflater<'a> {
    pub fn new(file: &'a str, input: &'a [u8]) -> Result<Self, TraceError> {
        let decoder = Decoder::new().map_err(|e| TraceError::Decompress {
            file: file.to_owned(),
            field: "zstd frame",
            problem: format!("cannot create a zstd decoder: {e}"),
        })?;
        Ok(FrameInflater {
            file,
            decoder,
            input,
            pos: 0,
            frame_done: false,
        })
    }

    /// The content size the frame header declares, if it declares one.
    pub fn declared_size(&self) -> Option<u64> {
        zstd::zstd_safe::get_frame_content_size(self.input)
            .ok()
            .flatten()
    }

    /// Rejects a frame that declares more than `cap` bytes before anything is
    /// allocated, and reserves (without touching) what it declares otherwise.
    pub fn reserve_declared(
        &self,
        out: &mut AlignedBuf,
        prefix: usize,
        cap: u64,
    ) -> Result<(), TraceError> {
        let Some(declared) = self.declared_size() else {
            return Ok(());
        };
        if declared > cap {
            return Err(self.bomb(cap));
        }
        let total = usize::try_from(declared)
            .ok()
            .and_then(|d| d.checked_add(prefix))
            .ok_or_else(|| self.bomb(cap))?;
        out.try_reserve(total)
            .map_err(|_| self.no_memory(total as u64))
    }

    /// Appends up to `want` decompressed bytes to `out`; fewer only if the frame ends.
    pub fn append(&mut self, out: &mut AlignedBuf, want: u64) -> Result<u64, TraceError> {
        let start = out.len();
        let mut produced: u64 = 0;
        while produced < want && !self.frame_done {
            let filled = start + produced as usize;
            if filled == out.len() {
                let left = usize::try_from(want - produced).unwrap_or(usize::MAX);
                let step = left.min(MIN_GROWTH.max(out.len()));
                let new_len = filled
                    .checked_add(step)
                    .ok_or_else(|| self.no_memory(want))?;
                out.try_resize(new_len)
                    .map_err(|_| self.no_memory(new_len as u64))?;
            }
            let dst = &mut out.as_bytes_mut()[filled..];
            let written = self.step(dst)?;
            produced += written as u64;
        }
        out.truncate(start + produced as usize);
        Ok(produced)
    }

    /// Confirms the frame ends exactly here: no more output (else it outgrew
    /// `cap`), and no bytes after the frame.
    pub fn finish(mut self, cap: u64) -> Result<(), TraceError> {
        let mut scratch = [0u8; 64];
        while !self.frame_done {
            if self.step(&mut scratch)? > 0 {
                return Err(self.bomb(cap));
            }
        }
        let trailing = self.input.len() - self.pos;
        if trailing > 0 {
            return Err(trailing_bytes(self.file, trailing));
        }
        Ok(())
    }

    /// One decoder call; errors when the input ends mid-frame.
    fn step(&mut self, dst: &mut [u8]) -> Result<usize, TraceError> {
        let status = self
            .decoder
            .run_on_buffers(&self.input[self.pos..], dst)
            .map_err(|e| TraceError::Decompress {
                file: self.file.to_owned(),
                field: "zstd frame",
                problem: format!("corrupt zstd data at compressed byte {}: {e}", self.pos),
            })?;
        self.pos += status.bytes_read;
        if status.remaining == 0 {
            self.frame_done = true;
        } else if status.bytes_read == 0 && status.bytes_written == 0 {
            return Err(TraceError::Decompress {
                file: self.file.to_owned(),
                field: "zstd frame",
                problem: format!(
                    "the zstd frame is truncated after {} compressed bytes",
                    self.input.len()
                ),
            });
        }
        Ok(status.bytes_written)
    }

    fn bomb(&self, cap: u64) -> TraceError {
        bomb(self.file, cap)
    }

    fn no_memory(&self, bytes: u64) -> TraceError {
        no_memory(self.file, bytes)
    }
}

pub(crate) fn frame_error(file: &str, problem: String) -> TraceError {
    TraceError::Decompress {
        file: file.to_owned(),
        field: "zstd frame",
        problem,
    }
}

pub(crate) fn bomb(file: &str, cap: u64) -> TraceError {
    frame_error(
        file,
        format!("decompresses to more than the {cap} bytes the trace header implies"),
    )
}

pub(crate) fn no_memory(file: &str, bytes: u64) -> TraceError {
    frame_error(
        file,
        format!("cannot allocate {bytes} bytes for the decompressed trace"),
    )
}

pub(crate) fn trailing_bytes(file: &str, trailing: usize) -> TraceError {
    frame_error(
        file,
        format!("{trailing} bytes follow the zstd frame; a trace is exactly one frame"),
    )
}
