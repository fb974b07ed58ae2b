//! From received trace bytes to the bytes stored: validate, and compress a
//! trace that came plain.
//!
//! Ingest is the daemon's hot path, so the expensive state is kept between
//! launches: each worker borrows a [`Codec`] — a `TraceValidator` holding
//! its decompression buffer and a zstd compression context — and gives it
//! back. A `FLAG_COMPRESS` trace (what the shim sends) is decompressed once
//! into that buffer, checked, and stored exactly as it came; no copy of the
//! input is made. A trace passed as a sealed memfd is mapped, not copied
//! ([`map_memfd`]).

use std::os::fd::{AsFd, OwnedFd};
use std::sync::Mutex;

use memmap2::{Mmap, MmapOptions};
use prlx_trace::{Encoding, TraceValidator};
use zstd::bulk::Compressor;

use crate::error::StoreError;

/// A launch's trace as received: read off the socket, or mapped from the
/// sealed memfd the client passed.
pub enum Received {
    Bytes(Vec<u8>),
    Mapped(Mmap),
}

impl Received {
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Received::Bytes(bytes) => bytes,
            Received::Mapped(map) => map,
        }
    }
}

/// What to write for a validated trace.
pub enum Prepared {
    /// The trace as received (it came compressed).
    AsReceived,
    /// The trace came plain; these are its zstd-compressed bytes.
    Compressed(Vec<u8>),
}

/// Maps the trace part of a memfd upload (`trace_bytes`, then
/// `site_table_bytes`) and copies out the small site table, after checking
/// the seals that make the mapping safe to read.
pub fn map_memfd(
    fd: OwnedFd,
    trace_bytes: u64,
    site_table_bytes: u64,
) -> Result<(Received, Vec<u8>), String> {
    let total = trace_bytes
        .checked_add(site_table_bytes)
        .ok_or("the announced payload size overflows")?;
    prlx_proto::memfd::check_sealed(fd.as_fd(), total)?;
    let file = std::fs::File::from(fd);
    let trace = match trace_bytes {
        0 => Received::Bytes(Vec::new()),
        n => {
            let len = usize::try_from(n).map_err(|_| "the trace does not fit in memory")?;
            // SAFETY: the file is sealed against writes and shrinking
            // (checked above), so the mapped bytes cannot change or vanish.
            let map = unsafe { MmapOptions::new().len(len).map(&file) }
                .map_err(|e| format!("cannot map the payload memfd: {e}"))?;
            Received::Mapped(map)
        }
    };
    let sites = match site_table_bytes {
        0 => Vec::new(),
        n => {
            let mut sites = vec![0u8; usize::try_from(n).map_err(|_| "site table too large")?];
            std::os::unix::fs::FileExt::read_exact_at(&file, &mut sites, trace_bytes)
                .map_err(|e| format!("cannot read the site table from the memfd: {e}"))?;
            sites
        }
    };
    Ok((trace, sites))
}

/// Codecs kept for reuse; more than the worker count is never needed.
const MAX_POOLED: usize = 16;
/// A codec left holding more than this (after a huge trace) is dropped, not pooled.
const MAX_RETAINED_BYTES: usize = 256 << 20;

#[derive(Default)]
pub struct CodecPool {
    free: Mutex<Vec<Codec>>,
}

#[derive(Default)]
struct Codec {
    validator: TraceValidator,
    compressor: Option<(i32, Compressor<'static>)>,
}

impl CodecPool {
    /// Validates a trace — refusing one that decodes to more than
    /// `max_decoded` bytes before inflating it — and says what to store:
    /// compressed traces as they came, plain ones zstd-compressed whole at
    /// `level` (the reader opens both).
    pub fn prepare(
        &self,
        name: &str,
        bytes: &[u8],
        level: i32,
        max_decoded: u64,
    ) -> Result<Prepared, StoreError> {
        let mut codec = self.take();
        codec.validator.set_max_decoded(max_decoded);
        let prepared = codec.prepare(name, bytes, level);
        self.give_back(codec);
        prepared
    }

    fn take(&self) -> Codec {
        self.lock().pop().unwrap_or_default()
    }

    fn give_back(&self, codec: Codec) {
        if codec.validator.retained_bytes() > MAX_RETAINED_BYTES {
            return;
        }
        let mut free = self.lock();
        if free.len() < MAX_POOLED {
            free.push(codec);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Codec>> {
        self.free.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Codec {
    fn prepare(&mut self, name: &str, bytes: &[u8], level: i32) -> Result<Prepared, StoreError> {
        let trace = self
            .validator
            .validate(name, bytes)
            .map_err(|e| StoreError::Invalid(e.to_string()))?;
        if trace.encoding() != Encoding::Plain {
            return Ok(Prepared::AsReceived);
        }
        let compressor = match &mut self.compressor {
            Some((have, compressor)) if *have == level => compressor,
            slot => {
                let compressor = Compressor::new(level).map_err(|e| {
                    StoreError::Invalid(format!("{name}: cannot compress at level {level}: {e}"))
                })?;
                &mut slot.insert((level, compressor)).1
            }
        };
        let plain = trace.as_bytes();
        let mut out = Vec::new();
        out.try_reserve_exact(zstd::zstd_safe::compress_bound(plain.len()))
            .map_err(|_| {
                StoreError::Invalid(format!(
                    "{name}: cannot allocate memory to compress {} bytes",
                    plain.len()
                ))
            })?;
        compressor
            .compress_to_buffer(plain, &mut out)
            .map_err(|e| StoreError::Invalid(format!("{name}: cannot compress: {e}")))?;
        Ok(Prepared::Compressed(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prlx_trace::{Compression, TraceBuilder, TraceEvent, TraceFile};

    fn trace(compression: Compression) -> Vec<u8> {
        let mut b = TraceBuilder::new("k", [2, 1, 1], [64, 1, 1])
            .unwrap()
            .events_per_warp(32);
        for warp in 0..b.num_warps() {
            for i in 0..32 {
                let event = TraceEvent {
                    site_id: i,
                    active_mask: u32::MAX,
                    value_a: i * 7 + warp as u32,
                    ..TraceEvent::default()
                };
                b.push_event(warp, event).unwrap();
            }
        }
        b.to_bytes_with(compression).unwrap()
    }

    #[test]
    fn compressed_traces_are_stored_as_they_came_and_plain_ones_compressed() {
        let pool = CodecPool::default();
        let flagged = trace(Compression::FlagCompress { level: 3 });
        assert!(matches!(
            pool.prepare("f", &flagged, 1, u64::MAX).unwrap(),
            Prepared::AsReceived
        ));
        let plain = trace(Compression::None);
        for level in [1, 3, 1] {
            let Prepared::Compressed(stored) = pool.prepare("p", &plain, level, u64::MAX).unwrap()
            else {
                panic!("a plain trace is compressed");
            };
            assert!(stored.starts_with(&prlx_trace::ZSTD_MAGIC));
            assert!(stored.len() < plain.len());
            let reopened = TraceFile::from_bytes("p", stored).unwrap();
            assert!(reopened.as_bytes() == plain.as_slice());
        }
        assert_eq!(pool.lock().len(), 1, "one codec, reused");
    }

    #[test]
    fn a_corrupt_trace_is_refused_naming_it_and_the_codec_stays_usable() {
        let pool = CodecPool::default();
        let mut flagged = trace(Compression::FlagCompress { level: 1 });
        let last = flagged.len() - 1;
        flagged[last] ^= 0xff;
        flagged.truncate(last - 8);
        let Err(err) = pool.prepare("launch-7.prlx", &flagged, 1, u64::MAX) else {
            panic!("a corrupt trace is refused");
        };
        assert!(err.to_string().starts_with("launch-7.prlx: "), "{err}");
        let good = trace(Compression::FlagCompress { level: 1 });
        assert!(pool.prepare("ok", &good, 1, u64::MAX).is_ok());
    }

    /// `max_trace_bytes` bounds what a trace inflates to, not only what
    /// arrives: a small compressed upload cannot claim gigabytes.
    #[test]
    fn the_decoded_size_is_held_to_the_limit() {
        let pool = CodecPool::default();
        let flagged = trace(Compression::FlagCompress { level: 1 });
        let plain_len = trace(Compression::None).len() as u64;
        let Err(err) = pool.prepare("small.prlx", &flagged, 1, plain_len - 1) else {
            panic!("over the limit");
        };
        assert!(err.to_string().contains("byte limit"), "{err}");
        assert!(pool.prepare("small.prlx", &flagged, 1, plain_len).is_ok());
    }
}
