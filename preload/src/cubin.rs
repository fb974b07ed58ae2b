//! Cubins (ELF images of machine code) that already record events.
//!
//! A module whose PTX was instrumented before ptxas compiled it (Triton's
//! `ptx` stage through `prlx.triton`, or any PTX `prlx-ptx-instrument`
//! rewrote and ptxas then built) reaches the driver as a cubin: no PTX left
//! to instrument, but the recording runtime is in its machine code. Such a
//! cubin defines the runtime's descriptor global `__prlx_desc` (and, when
//! the rewrite embedded it, the site table `__prlx_sites`), so the shim
//! captures it as a pass-built module: it is loaded as the application gave
//! it and the launch's descriptor is filled in through `cuModuleGetGlobal`.

use object::{Object, ObjectSymbol};

const DESCRIPTOR: &str = prlx_ptx_instrument::runtime::DESCRIPTOR;
const SITE_TABLE: &str = "__prlx_sites";

/// What an ELF image says about prlx's runtime in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CubinRuntime {
    /// It defines `__prlx_desc`: its code records events.
    pub descriptor: bool,
    /// It defines `__prlx_sites`: it carries its site table.
    pub site_table: bool,
}

/// Reads the symbols of the ELF image `bytes`.
pub fn runtime_symbols(bytes: &[u8]) -> Result<CubinRuntime, String> {
    let file = object::File::parse(bytes).map_err(|e| format!("not a readable ELF image: {e}"))?;
    let defines = |name: &str| {
        file.symbols()
            .any(|s| s.is_definition() && s.name() == Ok(name))
    };
    Ok(CubinRuntime {
        descriptor: defines(DESCRIPTOR),
        site_table: defines(SITE_TABLE),
    })
}

fn read_u16(b: &[u8], at: usize) -> Option<u64> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?) as u64)
}

fn read_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Largest ELF the shim agrees to size from its headers (1 GiB): beyond
/// that the header is taken to be corrupt.
const MAX_LEN: u64 = 1 << 30;

/// The length of the 64-bit little-endian ELF image at `ptr`: the end of
/// its furthest header table or section. None when the header is not one.
///
/// # Safety
/// `ptr` points at a complete ELF image (its header says how long it is),
/// as the driver API requires of a cubin passed to `cuModuleLoadData`.
pub unsafe fn image_len(ptr: *const u8) -> Option<usize> {
    // SAFETY: an ELF64 header is 64 bytes, and the image starts with one.
    let header = unsafe { std::slice::from_raw_parts(ptr, 64) };
    if header[..4] != [0x7f, b'E', b'L', b'F'] || header[4] != 2 || header[5] != 1 {
        return None; // not ELFCLASS64 / ELFDATA2LSB
    }
    let phoff = read_u64(header, 0x20)?;
    let shoff = read_u64(header, 0x28)?;
    let (phentsize, phnum) = (read_u16(header, 0x36)?, read_u16(header, 0x38)?);
    let (shentsize, shnum) = (read_u16(header, 0x3a)?, read_u16(header, 0x3c)?);
    let tables_end =
        (shoff.checked_add(shentsize * shnum)?).max(phoff.checked_add(phentsize * phnum)?);
    if tables_end > MAX_LEN || (shnum > 0 && shentsize < 64) {
        return None;
    }
    let mut end = tables_end.max(64);
    for i in 0..shnum {
        // SAFETY: the section header table lies within the image.
        let sh =
            unsafe { std::slice::from_raw_parts(ptr.add((shoff + i * shentsize) as usize), 64) };
        const SHT_NOBITS: u32 = 8;
        let kind = u32::from_le_bytes(sh[4..8].try_into().ok()?);
        if kind == SHT_NOBITS {
            continue;
        }
        let section_end = read_u64(sh, 0x18)?.checked_add(read_u64(sh, 0x20)?)?;
        if section_end > MAX_LEN {
            return None;
        }
        end = end.max(section_end);
    }
    usize::try_from(end).ok()
}

/// Whether the cubin at `ptr` records events (defines `__prlx_desc`), and
/// whether it carries its site table.
///
/// # Safety
/// As [`image_len`].
pub unsafe fn recognise(ptr: *const u8) -> Option<CubinRuntime> {
    // SAFETY: per the contract.
    let len = unsafe { image_len(ptr) }?;
    // SAFETY: the image is `len` bytes long, by its own headers.
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
    runtime_symbols(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::process::Command;

    const KERNEL: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry branchy(.param .u64 out, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd2, %rd2, %rd3;
    st.global.u32 [%rd2], %r2;
DONE:
    ret;
}
"#;

    /// ptxas from the toolchain setup.sh installs, or $PTXAS, or PATH.
    fn ptxas() -> Option<PathBuf> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let candidates = [
            std::env::var_os("PTXAS").map(PathBuf::from),
            Some(root.join(".tools/cuda13/nvidia/cu13/bin/ptxas")),
            Some(root.join(".tools/cuda12-nvcc/nvidia/cuda_nvcc/bin/ptxas")),
            std::env::var_os("PATH").and_then(|p| {
                std::env::split_paths(&p)
                    .map(|d| d.join("ptxas"))
                    .find(|f| f.is_file())
            }),
        ];
        candidates.into_iter().flatten().find(|p| p.is_file())
    }

    fn build(ptxas: &PathBuf, ptx: &str, name: &str) -> Vec<u8> {
        let dir = std::env::temp_dir().join(format!("prlx-cubin-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (src, out) = (dir.join("k.ptx"), dir.join("k.cubin"));
        std::fs::write(&src, ptx).unwrap();
        let status = Command::new(ptxas)
            .args(["-arch=sm_90", "-o"])
            .arg(&out)
            .arg(&src)
            .status()
            .unwrap();
        assert!(status.success(), "ptxas failed on {}", src.display());
        let bytes = std::fs::read(&out).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        bytes
    }

    #[test]
    fn ptxas_built_cubins_are_told_apart() {
        let Some(ptxas) = ptxas() else {
            assert!(
                std::env::var_os("PRLX_REQUIRE_TOOLCHAIN").is_none(),
                "PRLX_REQUIRE_TOOLCHAIN is set and no ptxas was found"
            );
            eprintln!(
                "SKIPPED ptxas_built_cubins_are_told_apart: no ptxas (.tools/cuda13, .tools/cuda12-nvcc, $PTXAS or PATH)"
            );
            return;
        };
        let options = prlx_ptx_instrument::Options::default();
        let instrumented = prlx_ptx_instrument::instrument(KERNEL, "k.ptx", &options).unwrap();
        let plain = build(&ptxas, KERNEL, "plain");
        let rewritten = build(&ptxas, &instrumented.ptx, "instrumented");
        for (bytes, descriptor) in [(&plain, false), (&rewritten, true)] {
            // SAFETY: a complete cubin ptxas wrote.
            let len = unsafe { image_len(bytes.as_ptr()) };
            assert_eq!(
                len,
                Some(bytes.len()),
                "the ELF headers give the file's length"
            );
            // SAFETY: as above.
            let found = unsafe { recognise(bytes.as_ptr()) }.unwrap();
            assert_eq!(found.descriptor, descriptor);
        }
    }

    #[test]
    fn non_elf_images_are_not_sized() {
        let ptx = b".version 7.0\n\0";
        let mut padded = [0u8; 64];
        padded[..ptx.len()].copy_from_slice(ptx);
        // SAFETY: 64 readable bytes.
        assert_eq!(unsafe { image_len(padded.as_ptr()) }, None);
        assert!(runtime_symbols(&padded).is_err());
    }
}
