//! Opening the two traces of a diff together, in parallel.
//!
//! A plain trace is memory-mapped (`TraceFile::open`). A compressed one
//! (`FLAG_COMPRESS`, or a whole-file `.prlx.zst`) whose zstd frame declares
//! its size is decoded here in one zstd call straight into the spare
//! capacity of a buffer of exactly that size (no zero-fill, no growth, no
//! copy); the decoded bytes (the header's `FLAG_COMPRESS` cleared) are then
//! validated by `TraceFile::from_bytes` like any plain trace. (Diffing two
//! compressed traces does not even do that: [`crate::stream`] compares them
//! while they decode.)
//!
//! Anything unusual (a frame without a declared size, a size that does not
//! match what the header implies, corrupt data) goes to `TraceFile`'s own
//! capped streaming decoder, whose errors name the file and field.

use prlx_trace::{
    HEADER_SIZE, SectionLayout, TraceError, TraceFile, TraceFileHeader, ZSTD_MAGIC, flags,
};
use std::io::Cursor;
use std::path::Path;

/// Opens `a` and `b` at once; each result names its own file.
pub fn open_pair(
    a: &Path,
    b: &Path,
) -> (Result<TraceFile, TraceError>, Result<TraceFile, TraceError>) {
    rayon::join(|| open(a), || open(b))
}

/// Opens one trace: mapped when plain, decoded as described above when compressed.
pub fn open(path: &Path) -> Result<TraceFile, TraceError> {
    let name = path.display().to_string();
    if !is_compressed(path) {
        return TraceFile::open(path);
    }
    let Ok(raw) = std::fs::read(path) else {
        return TraceFile::open(path); // which says why it cannot be read
    };
    match decode(&name, &raw) {
        Some(plain) => TraceFile::from_bytes(name, plain),
        // The reader's own path reports what is wrong, naming the field.
        None => TraceFile::from_bytes(name, raw),
    }
}

/// Whether the file starts like a compressed trace (a zstd frame, or a
/// header with `FLAG_COMPRESS`), from its first 160 bytes only.
pub(crate) fn is_compressed(path: &Path) -> bool {
    let mut head = [0u8; HEADER_SIZE];
    read_head(path, &mut head).is_some_and(|n| {
        head[..n].starts_with(&ZSTD_MAGIC)
            || (n == HEADER_SIZE && header_of(&head).has_flag(flags::COMPRESS))
    })
}

/// Reads up to a header's worth of bytes; None when the file cannot be read
/// (then `TraceFile::open` reports why).
fn read_head(path: &Path, buf: &mut [u8; HEADER_SIZE]) -> Option<usize> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(n)
}

fn header_of(bytes: &[u8; HEADER_SIZE]) -> TraceFileHeader {
    bytemuck::pod_read_unaligned(&bytes[..])
}

/// The plain trace inside `raw`, or None when the fast path does not apply.
fn decode(name: &str, raw: &[u8]) -> Option<Vec<u8>> {
    let whole_file = raw.starts_with(&ZSTD_MAGIC);
    let (prefix, frame) = if whole_file {
        (&[][..], raw)
    } else {
        raw.split_at_checked(HEADER_SIZE)?
    };
    let declared = zstd::zstd_safe::get_frame_content_size(frame).ok()??;
    let header = if whole_file {
        first_header(frame)?
    } else {
        header_of(prefix.try_into().ok()?)
    };
    let layout = SectionLayout::from_header(name, &header, !whole_file).ok()?;
    // The frame must hold exactly what the header implies: no more (a small
    // file cannot make us allocate more than its header promises), no less.
    if declared + prefix.len() as u64 != layout.total_len {
        return None;
    }
    let total = usize::try_from(layout.total_len).ok()?;
    let mut plain: Vec<u8> = Vec::new();
    plain.try_reserve_exact(total).ok()?;
    plain.extend_from_slice(prefix);
    if !whole_file {
        // What follows is decoded: the buffer is a plain trace now.
        let mut h = header;
        h.flags &= !flags::COMPRESS;
        plain.copy_from_slice(bytemuck::bytes_of(&h));
    }
    let mut out = Cursor::new(&mut plain);
    out.set_position(prefix.len() as u64);
    let mut decoder = zstd::bulk::Decompressor::new().ok()?;
    let produced = decoder.decompress_to_buffer(frame, &mut out).ok()?;
    (produced as u64 == declared && plain.len() == total).then_some(plain)
}

/// The header at the start of a whole-file frame, decoded on its own.
pub(crate) fn first_header(frame: &[u8]) -> Option<TraceFileHeader> {
    use zstd::stream::raw::{Decoder, Operation};
    let mut decoder = Decoder::new().ok()?;
    let mut header = [0u8; HEADER_SIZE];
    let (mut read, mut written) = (0, 0);
    while written < HEADER_SIZE {
        let status = decoder
            .run_on_buffers(&frame[read..], &mut header[written..])
            .ok()?;
        read += status.bytes_read;
        written += status.bytes_written;
        if status.bytes_read == 0 && status.bytes_written == 0 {
            return None;
        }
    }
    Some(header_of(&header))
}

#[cfg(test)]
mod tests {
    use super::*;
    use prlx_trace::{Compression, EventType, TraceBuilder, TraceEvent};

    fn builder() -> TraceBuilder {
        let mut b = TraceBuilder::new("k", [2, 1, 1], [64, 1, 1])
            .unwrap()
            .events_per_warp(32)
            .with_history(4);
        for w in 0..b.num_warps() {
            for i in 0..20u32 {
                let e = TraceEvent {
                    site_id: i + w as u32,
                    event_type: EventType::Branch as u8,
                    branch_dir: (i % 2) as u8,
                    active_mask: u32::MAX,
                    ..TraceEvent::default()
                };
                b.push_event(w, e).unwrap();
                b.push_history(w, i, i * 3).unwrap();
            }
        }
        b
    }

    #[test]
    fn compressed_traces_decode_to_the_plain_trace() {
        let dir = tempfile::tempdir().unwrap();
        let b = builder();
        let plain_path = dir.path().join("plain.prlx");
        b.write_file(&plain_path, Compression::None).unwrap();
        let plain = TraceFile::open(&plain_path).unwrap();
        for (file, compression) in [
            ("flag.prlx", Compression::FlagCompress { level: 3 }),
            ("whole.prlx.zst", Compression::WholeFile { level: 3 }),
        ] {
            let path = dir.path().join(file);
            b.write_file(&path, compression).unwrap();
            let raw = std::fs::read(&path).unwrap();
            let decoded = decode(file, &raw).expect("the fast path applies");
            assert_eq!(decoded, plain.as_bytes(), "{file}");
            let (x, y) = open_pair(&path, &plain_path);
            let (x, y) = (x.unwrap(), y.unwrap());
            assert_eq!(x.as_bytes(), y.as_bytes());
            assert_eq!(x.name(), path.display().to_string());
        }
    }

    #[test]
    fn unusual_or_broken_frames_fall_back_to_the_reader() {
        let dir = tempfile::tempdir().unwrap();
        let b = builder();
        let path = dir.path().join("whole.prlx.zst");
        b.write_file(&path, Compression::WholeFile { level: 3 })
            .unwrap();
        let raw = std::fs::read(&path).unwrap();
        // Truncated: the reader reports it, naming the file.
        let cut = dir.path().join("cut.prlx.zst");
        std::fs::write(&cut, &raw[..raw.len() / 2]).unwrap();
        assert!(decode("cut", &raw[..raw.len() / 2]).is_none());
        let err = open(&cut).unwrap_err().to_string();
        assert!(err.contains("cut.prlx.zst"), "{err}");
        // Corrupted payload bytes.
        let mut bad = raw.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 0xff;
        bad[mid + 1] ^= 0x55;
        let bad_path = dir.path().join("bad.prlx.zst");
        std::fs::write(&bad_path, &bad).unwrap();
        assert!(open(&bad_path).is_err());
        // A missing file is the reader's error too.
        let err = open(&dir.path().join("nope.prlx")).unwrap_err().to_string();
        assert!(err.contains("nope.prlx"), "{err}");
    }
}
