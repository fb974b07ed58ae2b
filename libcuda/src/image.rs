//! Module images as the driver receives them (`cuModuleLoadData`,
//! `cuModuleLoadFatBinary`, `cuLinkAddData`): PTX text, an ELF cubin, a
//! fatbinary, or the `__fatBinC_Wrapper_t` nvcc wraps a fatbinary in.
//!
//! Only PTX can be emulated. A fatbinary is searched for a PTX entry, stored
//! plainly or zstd-compressed (nvcc 12.4 and later compress by default);
//! cubins (SASS) and the older LZ4-compressed entries are refused with a
//! message that says so.

/// What an image turned out to hold.
#[derive(Debug, PartialEq, Eq)]
pub enum Image {
    Ptx(String),
    /// Not loadable; the message says why (for the JIT error log and stderr).
    Unsupported(String),
    /// Text that is not UTF-8, or an unrecognised binary.
    Invalid(String),
}

const ELF_MAGIC: [u8; 4] = [0x7f, b'E', b'L', b'F'];
const FATBIN_MAGIC: u32 = 0xBA55_ED50;
const FATBIN_WRAPPER_MAGIC: u32 = 0x4662_43B1;
const FATBIN_ENTRY_PTX: u16 = 1;
/// Entry flag: the payload is LZ4-compressed (nvcc before 12.4).
const FATBIN_FLAG_LZ4: u64 = 0x2000;
/// Entry flag: the payload is a zstd frame (nvcc 12.4 and later).
const FATBIN_FLAG_ZSTD: u64 = 0x8000;
/// Decompressed PTX larger than this is taken to be a corrupt header.
const MAX_PTX_BYTES: u64 = 1 << 30;

/// Classifies the image at `ptr`.
///
/// # Safety
/// `ptr` must point to a NUL-terminated PTX string, an ELF image, a
/// fatbinary, or a fatbinary wrapper, as the driver API requires.
pub unsafe fn read(ptr: *const u8) -> Image {
    // Read the magic a byte at a time, stopping at a NUL, so that a short
    // PTX string is never read past its end (no magic contains a zero byte).
    let mut head = [0u8; 4];
    for (i, slot) in head.iter_mut().enumerate() {
        // SAFETY: bytes up to and including the first NUL are readable.
        *slot = unsafe { *ptr.add(i) };
        if *slot == 0 {
            break;
        }
    }
    let magic = u32::from_le_bytes(head);
    if head == ELF_MAGIC {
        return Image::Unsupported(
            "image is a cubin (machine code for a real GPU); the prlx emulator runs PTX only: \
             load the kernel's PTX instead"
                .to_string(),
        );
    }
    if magic == FATBIN_WRAPPER_MAGIC {
        // __fatBinC_Wrapper_t { int magic; int version; const u64 *data; void *filename_or_fatbins; }
        // SAFETY: the wrapper is 24 bytes; `data` is at offset 8.
        let data = unsafe { std::ptr::read_unaligned(ptr.add(8) as *const *const u8) };
        if data.is_null() {
            return Image::Invalid("fatbinary wrapper with a NULL data pointer".to_string());
        }
        // SAFETY: the wrapper points to a fatbinary.
        return unsafe { read(data) };
    }
    if magic == FATBIN_MAGIC {
        // SAFETY: header: magic u32, version u16, header size u16, payload size u64.
        let (header_size, payload_size) = unsafe {
            (
                std::ptr::read_unaligned(ptr.add(6) as *const u16) as usize,
                std::ptr::read_unaligned(ptr.add(8) as *const u64) as usize,
            )
        };
        // SAFETY: the fatbinary is header_size + payload_size bytes long.
        let bytes = unsafe { std::slice::from_raw_parts(ptr, header_size + payload_size) };
        return ptx_from_fatbin(bytes);
    }
    // SAFETY: anything else must be NUL-terminated PTX text.
    let text = unsafe { std::ffi::CStr::from_ptr(ptr.cast()) };
    match text.to_str() {
        Ok(s) => Image::Ptx(s.to_string()),
        Err(e) => Image::Invalid(format!("image is neither PTX text nor a known binary: {e}")),
    }
}

/// Finds the first PTX entry of a fatbinary that can be read.
pub fn ptx_from_fatbin(bytes: &[u8]) -> Image {
    let u16_at = |o: usize| {
        bytes
            .get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u32_at = |o: usize| {
        bytes
            .get(o..o + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    };
    let u64_at = |o: usize| {
        bytes
            .get(o..o + 8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    };
    let Some(header_size) = u16_at(6) else {
        return Image::Invalid("truncated fatbinary header".to_string());
    };
    let mut at = header_size as usize;
    let mut saw_compressed_ptx = false;
    let mut kinds = Vec::new();
    // Entry header: kind u16, unknown u16, header size u32, payload size u64,
    // compressed size u32, options offset u32, minor u16, major u16, arch u32,
    // name offset u32, name size u32, flags u64, ...
    while at < bytes.len() {
        let (Some(kind), Some(entry_header), Some(size), Some(flags)) =
            (u16_at(at), u32_at(at + 4), u64_at(at + 8), u64_at(at + 40))
        else {
            return Image::Invalid(format!(
                "fatbinary entry header at offset {at} is truncated"
            ));
        };
        let start = at + entry_header as usize;
        let Some(end) = start
            .checked_add(size as usize)
            .filter(|e| *e <= bytes.len())
        else {
            return Image::Invalid(format!("fatbinary entry at offset {at} overruns the image"));
        };
        let arch = u32_at(at + 28).unwrap_or(0);
        kinds.push(format!(
            "{} sm_{arch}",
            if kind == FATBIN_ENTRY_PTX {
                "PTX"
            } else {
                "cubin"
            }
        ));
        if kind == FATBIN_ENTRY_PTX {
            let payload = &bytes[start..end];
            let text = if flags & FATBIN_FLAG_ZSTD != 0 {
                let compressed_size = u32_at(at + 16).unwrap_or(0) as usize;
                let frame = &payload[..compressed_size.min(payload.len())];
                let capacity = u64_at(at + 56).unwrap_or(0).min(MAX_PTX_BYTES) as usize;
                match zstd::bulk::decompress(frame, capacity) {
                    Ok(t) => Some(t),
                    Err(e) => {
                        return Image::Invalid(format!(
                            "fatbinary PTX entry at offset {at} does not decompress: {e}"
                        ));
                    }
                }
            } else if flags & FATBIN_FLAG_LZ4 != 0 {
                saw_compressed_ptx = true;
                None
            } else {
                Some(payload.to_vec())
            };
            if let Some(text) = text {
                let text = text.split(|b| *b == 0).next().unwrap_or_default();
                return match std::str::from_utf8(text) {
                    Ok(s) => Image::Ptx(s.to_string()),
                    Err(e) => Image::Invalid(format!("fatbinary PTX entry is not UTF-8: {e}")),
                };
            }
        }
        if entry_header == 0 {
            break;
        }
        at = end;
    }
    let why = if saw_compressed_ptx {
        "its PTX is LZ4-compressed (rebuild with nvcc --no-compress, or load the PTX itself)"
    } else {
        "it holds no PTX"
    };
    Image::Unsupported(format!(
        "fatbinary [{}] cannot run on the prlx emulator: {why}",
        kinds.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fatbin(entries: &[(u16, u64, &[u8])]) -> Vec<u8> {
        let mut payload = Vec::new();
        for (kind, flags, data) in entries {
            let mut h = vec![0u8; 64];
            h[0..2].copy_from_slice(&kind.to_le_bytes());
            h[4..8].copy_from_slice(&64u32.to_le_bytes());
            h[8..16].copy_from_slice(&(data.len() as u64).to_le_bytes());
            h[28..32].copy_from_slice(&80u32.to_le_bytes());
            h[40..48].copy_from_slice(&flags.to_le_bytes());
            payload.extend(h);
            payload.extend(*data);
        }
        let mut out = Vec::new();
        out.extend(FATBIN_MAGIC.to_le_bytes());
        out.extend(1u16.to_le_bytes());
        out.extend(16u16.to_le_bytes());
        out.extend((payload.len() as u64).to_le_bytes());
        out.extend(payload);
        out
    }

    #[test]
    fn finds_uncompressed_ptx_after_a_cubin() {
        let f = fatbin(&[(2, 0, b"\x7fELF...."), (1, 0, b".version 8.0\0\0\0")]);
        assert_eq!(
            unsafe { read(f.as_ptr()) },
            Image::Ptx(".version 8.0".into())
        );
    }

    #[test]
    fn compressed_or_missing_ptx_is_reported() {
        let f = fatbin(&[(1, FATBIN_FLAG_LZ4, b"xxxx")]);
        match ptx_from_fatbin(&f) {
            Image::Unsupported(m) => assert!(m.contains("compressed"), "{m}"),
            other => panic!("{other:?}"),
        }
        let f = fatbin(&[(2, 0, b"\x7fELF")]);
        match ptx_from_fatbin(&f) {
            Image::Unsupported(m) => assert!(m.contains("no PTX") && m.contains("cubin"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn zstd_compressed_ptx_is_decompressed() {
        let ptx = b"\n\n.version 8.0\n.target sm_80\0";
        let frame = zstd::bulk::compress(ptx, 3).unwrap();
        let mut f = fatbin(&[(1, FATBIN_FLAG_ZSTD, &frame)]);
        // Entry header: compressed size at +16, decompressed size at +56.
        f[16 + 16..16 + 20].copy_from_slice(&(frame.len() as u32).to_le_bytes());
        f[16 + 56..16 + 64].copy_from_slice(&(ptx.len() as u64).to_le_bytes());
        assert_eq!(
            ptx_from_fatbin(&f),
            Image::Ptx("\n\n.version 8.0\n.target sm_80".into())
        );
        let mut bad = fatbin(&[(1, FATBIN_FLAG_ZSTD, b"not zstd")]);
        bad[16 + 16..16 + 20].copy_from_slice(&8u32.to_le_bytes());
        bad[16 + 56..16 + 64].copy_from_slice(&100u64.to_le_bytes());
        assert!(matches!(ptx_from_fatbin(&bad), Image::Invalid(_)));
    }

    #[test]
    fn truncated_fatbin_is_invalid_not_a_crash() {
        let mut f = fatbin(&[(1, 0, b".version 8.0\0")]);
        f.truncate(40);
        assert!(matches!(ptx_from_fatbin(&f), Image::Invalid(_)));
    }

    #[test]
    fn elf_and_text() {
        assert!(matches!(
            unsafe { read(c"\x7fELF".as_ptr().cast()) },
            Image::Unsupported(_)
        ));
        assert_eq!(
            unsafe { read(c".version 7.5".as_ptr().cast()) },
            Image::Ptx(".version 7.5".into())
        );
    }
}
