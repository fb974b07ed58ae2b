//! The fatbinary container nvcc embeds in programs (`.nv_fatbin`) and the
//! `__fatBinC_Wrapper_t` that points at it.
//!
//! A fatbinary is a 16-byte header (magic `0xBA55ED50`, version, header
//! size, size of what follows) and a run of entries, each an 80-byte-ish
//! header (kind: 1 PTX, 2 ELF cubin; its header size; padded and stored
//! payload sizes; the architecture; flags; the uncompressed size) and its
//! payload. Payloads may be LZ4-compressed (flag `0x2000`, nvcc 12.0–12.3
//! and `-compress-mode=speed`) or zstd-compressed (flag `0x8000`, nvcc
//! 12.4+'s default). A wrapper of version 2 (`-rdc` programs) also lists
//! further fatbinaries in a NULL-terminated array.
//!
//! One parser for the emulated driver (`prlx-libcuda`, which loads the
//! payloads) and the capture shim (`prlx-preload`, which decides per module
//! how to capture it): both read a fatbinary the same way. Also here: the
//! kernel and variable symbols of an ELF cubin ([`cubin_symbols`], in
//! `cubin`, read through the `object` crate).

mod cubin;

pub use cubin::{CubinSymbols, CubinVariable, cubin_kernels, cubin_symbols, read_cubin_symbols};

/// Fatbinary header magic.
pub const MAGIC: u32 = 0xBA55_ED50;
/// `__fatBinC_Wrapper_t` magic.
pub const WRAPPER_MAGIC: u32 = 0x4662_43B1;
pub const KIND_PTX: u16 = 1;
pub const KIND_ELF: u16 = 2;
/// Entry flag: the payload is LZ4-compressed.
pub const FLAG_LZ4: u64 = 0x2000;
/// Entry flag: the payload is a zstd frame.
pub const FLAG_ZSTD: u64 = 0x8000;
/// Decompressed payloads larger than this are taken to be corrupt headers.
const MAX_PAYLOAD: u64 = 1 << 30;
/// The smallest entry header that holds every field read here.
const ENTRY_HEADER_MIN: usize = 64;

/// One entry of a fatbinary.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    pub kind: u16,
    /// `sm_XY` / `compute_XY` as `XY`.
    pub arch: u32,
    pub flags: u64,
    /// The stored bytes (compressed or not), without padding.
    pub stored: &'a [u8],
    pub uncompressed_size: u64,
    /// Offset of the entry header in the fatbinary, for messages.
    pub offset: usize,
}

fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

/// The total length of the fatbinary starting at `bytes[0]`, from its
/// header, or an error naming the bad field.
pub fn total_len(header: &[u8; 16]) -> Result<usize, String> {
    let magic = u32::from_le_bytes(header[0..4].try_into().expect("4 bytes"));
    if magic != MAGIC {
        return Err(format!(
            "fatbinary magic is {magic:#x}, expected {MAGIC:#x}"
        ));
    }
    let header_size = u16::from_le_bytes([header[6], header[7]]) as u64;
    let size = u64::from_le_bytes(header[8..16].try_into().expect("8 bytes"));
    if header_size < 16 || size > MAX_PAYLOAD {
        return Err(format!(
            "fatbinary header is corrupt (header size {header_size}, payload size {size})"
        ));
    }
    Ok((header_size + size) as usize)
}

/// Splits one fatbinary into its entries.
pub fn entries(bytes: &[u8]) -> Result<Vec<Entry<'_>>, String> {
    let (Some(magic), Some(header_size), Some(size)) =
        (u32_at(bytes, 0), u16_at(bytes, 6), u64_at(bytes, 8))
    else {
        return Err("truncated fatbinary header".to_string());
    };
    if magic != MAGIC {
        return Err(format!(
            "fatbinary magic is {magic:#x}, expected {MAGIC:#x}"
        ));
    }
    let end = (header_size as u64)
        .checked_add(size)
        .filter(|e| *e <= bytes.len() as u64)
        .ok_or_else(|| {
            format!(
                "fatbinary says it holds {size} bytes after its header, only {} are there",
                bytes.len().saturating_sub(header_size as usize)
            )
        })? as usize;
    let mut out = Vec::new();
    let mut at = header_size as usize;
    while at < end {
        if end - at < ENTRY_HEADER_MIN {
            return Err(format!(
                "fatbinary entry header at offset {at} is truncated"
            ));
        }
        let kind = u16_at(bytes, at).unwrap_or(0);
        let entry_header = u32_at(bytes, at + 4).unwrap_or(0) as usize;
        let padded = u32_at(bytes, at + 8).unwrap_or(0) as usize;
        let stored = u32_at(bytes, at + 16).unwrap_or(0) as usize;
        let arch = u32_at(bytes, at + 28).unwrap_or(0);
        let flags = u64_at(bytes, at + 40).unwrap_or(0);
        let uncompressed_size = u64_at(bytes, at + 56).unwrap_or(0);
        if entry_header < ENTRY_HEADER_MIN {
            return Err(format!(
                "fatbinary entry at offset {at} has a header size of {entry_header} bytes"
            ));
        }
        let start = at + entry_header;
        let next = start
            .checked_add(padded)
            .filter(|n| *n <= end)
            .ok_or_else(|| format!("fatbinary entry at offset {at} overruns the fatbinary"))?;
        // Uncompressed entries may leave the stored size 0: all the padded
        // payload is the entry.
        let len = if stored == 0 || stored > padded {
            padded
        } else {
            stored
        };
        out.push(Entry {
            kind,
            arch,
            flags,
            stored: &bytes[start..start + len],
            uncompressed_size,
            offset: at,
        });
        at = next;
    }
    Ok(out)
}

impl Entry<'_> {
    /// The payload, decompressed.
    pub fn payload(&self) -> Result<Vec<u8>, String> {
        let limit = self.uncompressed_size.min(MAX_PAYLOAD) as usize;
        if self.flags & FLAG_ZSTD != 0 {
            zstd::bulk::decompress(self.stored, limit).map_err(|e| {
                format!(
                    "fatbinary entry at offset {} (zstd) does not decompress: {e}",
                    self.offset
                )
            })
        } else if self.flags & FLAG_LZ4 != 0 {
            lz4_block_decompress(self.stored, limit).map_err(|e| {
                format!(
                    "fatbinary entry at offset {} (LZ4) does not decompress: {e}",
                    self.offset
                )
            })
        } else {
            Ok(self.stored.to_vec())
        }
    }

    pub fn describe(&self) -> String {
        match self.kind {
            KIND_PTX => format!("PTX compute_{}", self.arch),
            KIND_ELF => format!("SASS sm_{}", self.arch),
            k => format!("entry kind {k} arch {}", self.arch),
        }
    }
}

/// Decompresses one LZ4 block (the LZ4 block format, without a frame or a
/// size prefix) into at most `limit` bytes, or an error naming what is wrong
/// with it: a literal run or a length past the input, a match offset of 0 or
/// before the start of the output, or output beyond `limit`.
pub fn lz4_block_decompress(src: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    use lz4_flex::block::DecompressError as E;
    // A block never expands more than 255-fold (a length byte of 255 adds
    // 255 bytes of match), so a corrupt header declaring a gigabyte for a
    // few stored bytes gets a buffer the size the block can fill.
    let cap = limit.min(src.len().saturating_mul(255).saturating_add(16));
    let mut out = vec![0u8; cap];
    match lz4_flex::block::decompress_into(src, &mut out) {
        Ok(len) => {
            out.truncate(len);
            Ok(out)
        }
        Err(e) => Err(match e {
            E::OutputTooSmall { .. } => format!("output exceeds the declared {limit} bytes"),
            E::LiteralOutOfBounds => "literals run past the input".to_string(),
            E::ExpectedAnotherByte => "a length or match offset runs past the input".to_string(),
            E::OffsetZero => "match offset 0".to_string(),
            E::OffsetOutOfBounds => "a match offset points before the output".to_string(),
            other => format!("corrupt LZ4 block: {other}"),
        }),
    }
}

/// A symbol name as C++ source spells it, or unchanged.
pub fn demangle(name: &str) -> String {
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|s| s.demangle().ok())
        .unwrap_or_else(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lz4_literals_and_overlapping_matches() {
        // "abcabcabcabcX": literals "abc", then a match of 9 at offset 3
        // (overlapping), then a final literal.
        let block = [0x35, b'a', b'b', b'c', 3, 0, 0x10, b'X'];
        assert_eq!(
            lz4_block_decompress(&block, 100).unwrap(),
            b"abcabcabcabcX".to_vec()
        );
    }

    #[test]
    fn lz4_bad_input_is_an_error() {
        let e = lz4_block_decompress(&[0x10, b'a', 9, 0], 100).unwrap_err();
        assert!(e.contains("before the output"), "{e}");
        let e = lz4_block_decompress(&[0xf0], 100).unwrap_err();
        assert!(e.contains("past the input"), "{e}");
        let e = lz4_block_decompress(&[0x35, b'a', b'b', b'c', 3, 0], 5).unwrap_err();
        assert!(e.contains("declared 5 bytes"), "{e}");
        let e = lz4_block_decompress(&[0x50, b'a', b'b'], 100).unwrap_err();
        assert!(e.contains("literals run past"), "{e}");
    }

    #[test]
    fn lz4_round_trips_what_the_compressor_wrote() {
        let text: Vec<u8> = (0..5000u32).flat_map(|i| (i % 97).to_le_bytes()).collect();
        let block = lz4_flex::block::compress(&text);
        assert!(block.len() < text.len() / 2, "{} bytes", block.len());
        assert_eq!(lz4_block_decompress(&block, text.len()).unwrap(), text);
        let e = lz4_block_decompress(&block, text.len() - 1).unwrap_err();
        assert!(e.contains("exceeds"), "{e}");
        // The most compressible input: the bound on the buffer still holds it.
        let zeros = vec![0u8; 1 << 20];
        let block = lz4_flex::block::compress(&zeros);
        assert!(block.len() * 250 < zeros.len(), "{} bytes", block.len());
        assert_eq!(lz4_block_decompress(&block, 1 << 30).unwrap(), zeros);
    }

    /// An LZ4 fatbinary entry of `stored` bytes declaring `uncompressed`.
    fn lz4_fatbin(stored: &[u8], uncompressed: u64) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[0..2].copy_from_slice(&KIND_PTX.to_le_bytes());
        h[4..8].copy_from_slice(&64u32.to_le_bytes());
        h[8..12].copy_from_slice(&(stored.len() as u32).to_le_bytes());
        h[16..20].copy_from_slice(&(stored.len() as u32).to_le_bytes());
        h[28..32].copy_from_slice(&80u32.to_le_bytes());
        h[40..48].copy_from_slice(&FLAG_LZ4.to_le_bytes());
        h[56..64].copy_from_slice(&uncompressed.to_le_bytes());
        h.extend_from_slice(stored);
        let mut f = Vec::new();
        f.extend(MAGIC.to_le_bytes());
        f.extend(1u16.to_le_bytes());
        f.extend(16u16.to_le_bytes());
        f.extend((h.len() as u64).to_le_bytes());
        f.extend(h);
        f
    }

    #[test]
    fn lz4_entries_decompress_and_name_their_offset_when_corrupt() {
        let ptx = b".version 8.0\n.target sm_80\n.address_size 64\n".repeat(20);
        let f = lz4_fatbin(&lz4_flex::block::compress(&ptx), ptx.len() as u64);
        let all = entries(&f).unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].payload().unwrap(), ptx);
        let f = lz4_fatbin(&[0x10, b'a', 9, 0], 100);
        let e = entries(&f).unwrap()[0].payload().unwrap_err();
        assert!(e.contains("offset 16 (LZ4)"), "{e}");
    }

    proptest::proptest! {
        /// Arbitrary bytes as an LZ4 block, or as a fatbinary, give a
        /// result or an error, never a panic or output past the limit.
        #[test]
        fn arbitrary_input_never_panics(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512),
            limit in 0usize..4096,
        ) {
            if let Ok(out) = lz4_block_decompress(&bytes, limit) {
                proptest::prop_assert!(out.len() <= limit);
            }
            let f = lz4_fatbin(&bytes, limit as u64);
            for e in entries(&f).unwrap() {
                let _ = e.payload();
            }
            let _ = entries(&bytes);
            let _ = cubin_symbols(&bytes);
        }
    }

    #[test]
    fn short_or_lying_fatbinaries_are_errors() {
        assert!(entries(&[0u8; 4]).is_err());
        let mut f = Vec::new();
        f.extend(MAGIC.to_le_bytes());
        f.extend(1u16.to_le_bytes());
        f.extend(16u16.to_le_bytes());
        f.extend(1000u64.to_le_bytes());
        let e = entries(&f).unwrap_err();
        assert!(e.contains("1000 bytes"), "{e}");
    }
}
