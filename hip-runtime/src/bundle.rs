//! Clang offload bundles: what `__hipRegisterFatBinary`'s wrapper points to
//! and what `hipModuleLoadData` may be given instead of a bare code object.
//!
//! The layout (clang's `OffloadBundler.cpp`): the 24-byte magic
//! `__CLANG_OFFLOAD_BUNDLE__`, a little-endian `u64` entry count, then per
//! entry a `u64` offset (from the bundle's start), a `u64` size, a `u64`
//! triple length and the triple, e.g. `hipv4-amdgcn-amd-amdhsa--gfx1100`
//! (target-id features such as `:xnack-` may follow the processor). clang
//! compresses bundles only when asked (`--offload-compress`): then the bundle
//! is wrapped in a `CCOB` header (versions 1 to 3) and zlib or zstd data.

use std::fmt;

pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
pub const COMPRESSED_MAGIC: &[u8; 4] = b"CCOB";
const ELF_MAGIC: &[u8; 4] = b"\x7fELF";

/// Why an image could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleError(pub String);

impl fmt::Display for BundleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BundleError {}

fn err<T>(message: impl Into<String>) -> Result<T, BundleError> {
    Err(BundleError(message.into()))
}

/// One entry of a bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleEntry {
    pub triple: String,
    pub data: Vec<u8>,
}

impl BundleEntry {
    /// The processor of a `hipv4-amdgcn-amd-amdhsa--gfxNNNN[:feature±]` entry.
    pub fn amdgcn_processor(&self) -> Option<&str> {
        let rest = self
            .triple
            .strip_prefix("hipv4-amdgcn-amd-amdhsa-")
            .or_else(|| self.triple.strip_prefix("hip-amdgcn-amd-amdhsa-"))?;
        let target_id = rest.strip_prefix('-').unwrap_or(rest);
        Some(target_id.split(':').next().unwrap_or(target_id))
    }
}

fn read_u64(bytes: &[u8], at: usize, what: &str) -> Result<u64, BundleError> {
    match bytes.get(at..at + 8) {
        Some(b) => Ok(u64::from_le_bytes(b.try_into().expect("8 bytes"))),
        None => err(format!(
            "offload bundle truncated: {what} at byte {at} is past the end ({} bytes)",
            bytes.len()
        )),
    }
}

fn read_u32(bytes: &[u8], at: usize, what: &str) -> Result<u32, BundleError> {
    match bytes.get(at..at + 4) {
        Some(b) => Ok(u32::from_le_bytes(b.try_into().expect("4 bytes"))),
        None => err(format!(
            "compressed offload bundle truncated: {what} at byte {at}"
        )),
    }
}

/// Whether `bytes` start like a bundle, compressed or not.
pub fn is_bundle(bytes: &[u8]) -> bool {
    bytes.starts_with(BUNDLE_MAGIC) || bytes.starts_with(COMPRESSED_MAGIC)
}

/// The entries of an uncompressed or compressed bundle.
pub fn parse(bytes: &[u8]) -> Result<Vec<BundleEntry>, BundleError> {
    if bytes.starts_with(COMPRESSED_MAGIC) {
        return parse(&decompress(bytes)?);
    }
    if !bytes.starts_with(BUNDLE_MAGIC) {
        return err("not a clang offload bundle (no __CLANG_OFFLOAD_BUNDLE__ magic)");
    }
    let count = read_u64(bytes, 24, "the entry count")?;
    let mut at = 32usize;
    let mut entries = Vec::new();
    for index in 0..count {
        let offset = read_u64(bytes, at, "an entry offset")? as usize;
        let size = read_u64(bytes, at + 8, "an entry size")? as usize;
        let triple_len = read_u64(bytes, at + 16, "a triple length")? as usize;
        let triple_at = at + 24;
        let Some(triple) = bytes.get(triple_at..triple_at.saturating_add(triple_len)) else {
            return err(format!(
                "offload bundle entry {index}: its triple runs past the end"
            ));
        };
        let triple = String::from_utf8_lossy(triple).into_owned();
        let Some(data) = bytes.get(offset..offset.saturating_add(size)) else {
            return err(format!(
                "offload bundle entry {index} ({triple}): {size} bytes at offset {offset} run past the end ({} bytes)",
                bytes.len()
            ));
        };
        entries.push(BundleEntry {
            triple,
            data: data.to_vec(),
        });
        at = triple_at + triple_len;
    }
    Ok(entries)
}

/// The bundle inside a `CCOB` header. Version 1: magic, u16 version, u16
/// method, u32 uncompressed size, u64 hash; version 2 adds a u32 total size
/// before the uncompressed size; version 3 widens both sizes to u64. Method
/// 0 is zlib, 1 zstd (`llvm::compression::Format`).
fn decompress(bytes: &[u8]) -> Result<Vec<u8>, BundleError> {
    let Some(header) = bytes.get(4..8) else {
        return err("compressed offload bundle truncated: no version");
    };
    let version = u16::from_le_bytes([header[0], header[1]]);
    let method = u16::from_le_bytes([header[2], header[3]]);
    let (uncompressed, data_at) = match version {
        1 => (read_u32(bytes, 8, "the uncompressed size")? as u64, 20),
        2 => (read_u32(bytes, 12, "the uncompressed size")? as u64, 24),
        3 => (read_u64(bytes, 16, "the uncompressed size")?, 32),
        v => {
            return err(format!(
                "compressed offload bundle version {v} is not supported (1 to 3 are)"
            ));
        }
    };
    let Some(data) = bytes.get(data_at..) else {
        return err("compressed offload bundle truncated: no data");
    };
    let out = match method {
        0 => miniz_oxide::inflate::decompress_to_vec_zlib(data)
            .map_err(|e| BundleError(format!("compressed offload bundle: zlib data: {e:?}")))?,
        1 => zstd::bulk::decompress(data, uncompressed as usize)
            .map_err(|e| BundleError(format!("compressed offload bundle: zstd data: {e}")))?,
        m => {
            return err(format!(
                "compressed offload bundle: unknown compression method {m}"
            ));
        }
    };
    if out.len() as u64 != uncompressed {
        return err(format!(
            "compressed offload bundle: {} bytes decompressed, the header says {uncompressed}",
            out.len()
        ));
    }
    Ok(out)
}

/// The code object for `processor` in an image: a bare ELF is taken as is;
/// a bundle yields its entry for `processor`. The error lists what the
/// bundle holds instead.
pub fn code_object_for(image: &[u8], processor: &str) -> Result<Vec<u8>, BundleError> {
    if image.starts_with(ELF_MAGIC) {
        return Ok(image.to_vec());
    }
    let entries = parse(image)?;
    if let Some(entry) = entries
        .iter()
        .find(|e| e.amdgcn_processor() == Some(processor))
    {
        return Ok(entry.data.clone());
    }
    // Another processor of the same family (gfx1101, gfx1102, gfx11-generic
    // … for a gfx1100): the same ISA, which the emulator runs alike.
    let family = processor.get(..5).filter(|f| f.len() == 5);
    if let Some(entry) = entries.iter().find(|e| {
        !e.data.is_empty()
            && family.is_some_and(|f| e.amdgcn_processor().is_some_and(|p| p.starts_with(f)))
    }) {
        return Ok(entry.data.clone());
    }
    let held: Vec<&str> = entries
        .iter()
        .filter(|e| !e.data.is_empty())
        .map(|e| e.triple.as_str())
        .collect();
    err(format!(
        "no code object for {processor} in the offload bundle (it holds: {})",
        if held.is_empty() {
            "nothing".to_string()
        } else {
            held.join(", ")
        }
    ))
}

/// How many bytes the image at `image` spans, found from its own headers:
/// C callers (`__hipRegisterFatBinary`, `hipModuleLoadData`) pass no size.
/// A bare ELF ends at the furthest of its section contents and header
/// tables; a bundle at its furthest entry; a compressed bundle (version 2
/// and 3) says its total size.
///
/// # Safety
/// `image` must point to a complete code object, bundle or compressed
/// bundle, as the HIP API requires.
pub unsafe fn image_len(image: *const u8) -> Result<usize, BundleError> {
    // SAFETY: every read below lies inside the headers the image's own
    // fields describe, which the caller guarantees are present.
    let bytes = |at: usize, len: usize| unsafe { std::slice::from_raw_parts(image.add(at), len) };
    let u64_at = |at: usize| u64::from_le_bytes(bytes(at, 8).try_into().expect("8 bytes"));
    let u32_at = |at: usize| u32::from_le_bytes(bytes(at, 4).try_into().expect("4 bytes"));
    let u16_at = |at: usize| u16::from_le_bytes(bytes(at, 2).try_into().expect("2 bytes"));
    let magic = bytes(0, 4);
    if magic == ELF_MAGIC {
        if bytes(4, 1)[0] != 2 {
            return err("code object is not a 64-bit ELF");
        }
        let phoff = u64_at(0x20) as usize;
        let shoff = u64_at(0x28) as usize;
        let phentsize = u16_at(0x36) as usize;
        let phnum = u16_at(0x38) as usize;
        let shentsize = u16_at(0x3a) as usize;
        let shnum = u16_at(0x3c) as usize;
        let mut end = (phoff + phnum * phentsize)
            .max(shoff + shnum * shentsize)
            .max(64);
        for index in 0..shnum {
            let header = shoff + index * shentsize;
            let kind = u32_at(header + 4);
            let offset = u64_at(header + 0x18) as usize;
            let size = u64_at(header + 0x20) as usize;
            if kind != 8 {
                end = end.max(offset + size);
            }
        }
        for index in 0..phnum {
            let header = phoff + index * phentsize;
            end = end.max(u64_at(header + 8) as usize + u64_at(header + 0x20) as usize);
        }
        return Ok(end);
    }
    if magic == COMPRESSED_MAGIC {
        return match u16_at(4) {
            2 => Ok(u32_at(8) as usize),
            3 => Ok(u64_at(8) as usize),
            v => err(format!(
                "compressed offload bundle version {v} does not state its size; pass version 2 or 3"
            )),
        };
    }
    if bytes(0, 24) != BUNDLE_MAGIC {
        return err("image is neither an AMDGPU code object (ELF) nor a clang offload bundle");
    }
    let count = u64_at(24) as usize;
    if count > 4096 {
        return err(format!("offload bundle claims {count} entries"));
    }
    let mut at = 32;
    let mut end = at;
    for _ in 0..count {
        let offset = u64_at(at) as usize;
        let size = u64_at(at + 8) as usize;
        let triple_len = u64_at(at + 16) as usize;
        at += 24 + triple_len;
        end = end.max(at).max(offset + size);
    }
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut header = BUNDLE_MAGIC.to_vec();
        header.extend((entries.len() as u64).to_le_bytes());
        let table_len: usize = entries.iter().map(|(t, _)| 24 + t.len()).sum();
        let mut offset = header.len() + table_len;
        let mut data: Vec<u8> = Vec::new();
        for (triple, bytes) in entries {
            header.extend((offset as u64).to_le_bytes());
            header.extend((bytes.len() as u64).to_le_bytes());
            header.extend((triple.len() as u64).to_le_bytes());
            header.extend(triple.as_bytes());
            data.extend_from_slice(bytes);
            offset += bytes.len();
        }
        header.extend(data);
        header
    }

    #[test]
    fn picks_the_entry_for_the_processor() {
        let b = bundle(&[
            ("host-x86_64-unknown-linux--", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx1030", b"\x7fELF1030"),
            ("hipv4-amdgcn-amd-amdhsa--gfx1100:xnack-", b"\x7fELF1100"),
        ]);
        assert_eq!(code_object_for(&b, "gfx1100").unwrap(), b"\x7fELF1100");
        assert_eq!(code_object_for(&b, "gfx1030").unwrap(), b"\x7fELF1030");
        let e = code_object_for(&b, "gfx90a").unwrap_err();
        assert!(e.0.contains("gfx1030") && e.0.contains("gfx90a"), "{e}");
        // The same family stands in: gfx1101 code for a gfx1100.
        let b = bundle(&[
            ("hipv4-amdgcn-amd-amdhsa--gfx1030", b"\x7fELF1030"),
            ("hipv4-amdgcn-amd-amdhsa--gfx1101", b"\x7fELF1101"),
        ]);
        assert_eq!(code_object_for(&b, "gfx1100").unwrap(), b"\x7fELF1101");
        let e = code_object_for(&b, "gfx90a").unwrap_err();
        assert!(e.0.contains("gfx1030") && e.0.contains("gfx90a"), "{e}");
    }

    #[test]
    fn the_length_of_a_bundle_comes_from_its_entries() {
        let mut b = bundle(&[
            ("host-x86_64-unknown-linux--", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx1100", b"\x7fELF1100"),
        ]);
        let len = b.len();
        b.extend(b"trailing bytes of the section");
        // SAFETY: `b` holds the whole bundle.
        assert_eq!(unsafe { image_len(b.as_ptr()) }.unwrap(), len);
    }

    #[test]
    fn a_bare_code_object_is_taken_as_is() {
        assert_eq!(
            code_object_for(b"\x7fELFxyz", "gfx1100").unwrap(),
            b"\x7fELFxyz"
        );
    }

    #[test]
    fn truncation_is_named() {
        let mut b = bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx1100", b"\x7fELF1234")]);
        b.truncate(b.len() - 3);
        let e = parse(&b).unwrap_err();
        assert!(e.0.contains("run past the end"), "{e}");
        assert!(parse(b"junk").is_err());
    }

    #[test]
    fn compressed_bundles_decompress() {
        let inner = bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx1100", b"\x7fELFzstd")]);
        let packed = zstd::bulk::compress(&inner, 3).unwrap();
        let mut v2 = COMPRESSED_MAGIC.to_vec();
        v2.extend(2u16.to_le_bytes());
        v2.extend(1u16.to_le_bytes());
        v2.extend(((24 + packed.len()) as u32).to_le_bytes());
        v2.extend((inner.len() as u32).to_le_bytes());
        v2.extend(0u64.to_le_bytes());
        v2.extend(&packed);
        assert_eq!(code_object_for(&v2, "gfx1100").unwrap(), b"\x7fELFzstd");
        let zlib = miniz_oxide::deflate::compress_to_vec_zlib(&inner, 6);
        let mut v1 = COMPRESSED_MAGIC.to_vec();
        v1.extend(1u16.to_le_bytes());
        v1.extend(0u16.to_le_bytes());
        v1.extend((inner.len() as u32).to_le_bytes());
        v1.extend(0u64.to_le_bytes());
        v1.extend(&zlib);
        assert_eq!(code_object_for(&v1, "gfx1100").unwrap(), b"\x7fELFzstd");
    }
}
