//! Module images as the driver receives them (`cuModuleLoadData`,
//! `cuModuleLoadFatBinary`, `cuLinkAddData`): PTX text, an ELF cubin, a
//! fatbinary, or the `__fatBinC_Wrapper_t` nvcc wraps a fatbinary in.
//!
//! Only PTX can be emulated. A fatbinary (see [`crate::fatbin`]) yields its
//! best PTX entry, decompressed. A fatbinary holding machine code (SASS)
//! but no usable PTX is [`Image::MachineCodeOnly`]: it loads, as a library
//! built for other GPUs loads on a real driver, and its kernels are refused
//! when looked up (see the libcuda README, "SASS-only images"). A bare
//! cubin is one architecture's code and is refused at load, as a real
//! driver refuses a cubin for another architecture.

use prlx_fatbin as fatbin;

/// What an image turned out to hold.
#[derive(Debug, PartialEq, Eq)]
pub enum Image {
    Ptx(String),
    /// A fatbinary with machine code and no PTX the device can run.
    MachineCodeOnly(MachineCode),
    /// Not loadable; the message says why (for the JIT error log and stderr).
    Unsupported(String),
    /// Text that is not UTF-8, or an unrecognised binary.
    Invalid(String),
}

/// What a fatbinary without usable PTX holds: enough to name its kernels
/// and say why they cannot run, read from one cubin entry only (every
/// architecture's cubin of one fatbinary defines the same kernels), so that
/// loading the huge SASS-only fatbinaries of vendor libraries stays cheap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineCode {
    /// Mangled names of the functions of the first cubin; empty when it
    /// could not be read (every name is then taken to be one of them).
    pub kernels: Vec<String>,
    /// Its variables (`__device__`, `__constant__`), named alike.
    pub variables: Vec<String>,
    /// Their sizes and initial contents, read from the same cubin.
    pub variable_defs: Vec<fatbin::CubinVariable>,
    /// The architectures of the cubins, `sm_XY` as `XY`.
    pub archs: Vec<u32>,
    /// PTX entries the device is too old for (`compute_XY` as `XY`).
    pub newer_ptx: Vec<u32>,
    /// The emulated device's architecture, for the suggested `-gencode`.
    pub device_sm: u32,
}

impl MachineCode {
    /// Whether `name` may be a kernel of this image.
    pub fn defines(&self, name: &str) -> bool {
        self.kernels.is_empty() || self.kernels.iter().any(|k| k == name)
    }

    /// Whether `name` may be a variable of this image.
    pub fn defines_variable(&self, name: &str) -> bool {
        self.kernels.is_empty() || self.variables.iter().any(|v| v == name)
    }

    /// Why kernel `name` cannot run, with the fix.
    pub fn refusal(&self, name: &str) -> String {
        self.refusal_of("kernel", name)
    }

    /// Why variable `name` cannot be used (its initial value is in the
    /// machine code), with the fix.
    pub fn variable_refusal(&self, name: &str) -> String {
        self.refusal_of("variable", name)
    }

    fn refusal_of(&self, what: &str, name: &str) -> String {
        let name = fatbin::demangle(name);
        if !self.newer_ptx.is_empty() {
            let list: Vec<String> = self
                .newer_ptx
                .iter()
                .map(|a| format!("compute_{a}"))
                .collect();
            return format!(
                "{what} `{name}`: PTX for {} only, newer than the emulated device: \
                 set PRLX_EMU_SM to at least that architecture",
                list.join(", ")
            );
        }
        format!(
            "{what} `{name}`: {}",
            sass_only_reason(&self.archs, self.device_sm)
        )
    }

    /// The module the emulator holds for this image: no functions, and its
    /// variables declared with their sizes and initial contents, so that
    /// `cuModuleGetGlobal`/`cuLibraryGetGlobal` find them as on a GPU
    /// (`cublasCreate` reads `cublas::internal::deviceConstants`). A variable
    /// whose name PTX cannot spell, or beyond [`MAX_VARIABLE_BYTES`] in all,
    /// is left out and stays refused at lookup.
    pub fn variables_ptx(&self) -> String {
        let mut ptx = String::from(".version 7.0\n.target sm_50\n.address_size 64\n");
        let mut budget = MAX_VARIABLE_BYTES;
        for v in &self.variable_defs {
            if v.size == 0 || v.size > budget || !is_ptx_identifier(&v.name) {
                continue;
            }
            budget -= v.size;
            let space = if v.constant { ".const" } else { ".global" };
            let align = v.align.next_power_of_two();
            ptx.push_str(&format!(
                ".visible {space} .align {align} .b8 {}[{}]",
                v.name, v.size
            ));
            if let Some(init) = v.init.as_ref().filter(|b| b.iter().any(|x| *x != 0)) {
                let bytes: Vec<String> = init.iter().map(|b| b.to_string()).collect();
                ptx.push_str(" = {");
                ptx.push_str(&bytes.join(","));
                ptx.push('}');
            }
            ptx.push_str(";\n");
        }
        ptx
    }

    /// The load-time refusal of the whole image (`cuLinkAddData`).
    pub fn describe(&self) -> String {
        sass_only_message(&self.kernels, &self.archs, self.device_sm)
    }
}

/// The most variable bytes a machine-code-only module declares.
pub const MAX_VARIABLE_BYTES: u64 = 16 << 20;

/// Whether `name` is a PTX identifier (`[a-zA-Z_$%][a-zA-Z0-9_$]*`).
fn is_ptx_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

const ELF_MAGIC: [u8; 4] = [0x7f, b'E', b'L', b'F'];

/// Classifies the image at `ptr`; a fatbinary yields its best PTX for a
/// device of compute capability `sm` (`80` for 8.0).
///
/// # Safety
/// `ptr` must point to a NUL-terminated PTX string, an ELF image, a
/// fatbinary, or a fatbinary wrapper, as the driver API requires.
pub unsafe fn read(ptr: *const u8, sm: u32) -> Image {
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
        // SAFETY: an ELF image starts with its 64-byte header.
        let kernels = unsafe { elf_kernels(ptr) };
        return Image::Unsupported(sass_only_message(&kernels, &[], sm));
    }
    if magic == fatbin::WRAPPER_MAGIC {
        // SAFETY: the caller passed a __fatBinC_Wrapper_t.
        return unsafe { read_wrapper(ptr, sm) };
    }
    if magic == fatbin::MAGIC {
        // SAFETY: the caller passed a fatbinary.
        return match unsafe { fatbin_slice(ptr) } {
            Ok(bytes) => best_ptx(&[bytes], sm),
            Err(m) => Image::Invalid(m),
        };
    }
    // SAFETY: anything else must be NUL-terminated PTX text.
    let text = unsafe { std::ffi::CStr::from_ptr(ptr.cast()) };
    match text.to_str() {
        Ok(s) => Image::Ptx(s.to_string()),
        Err(e) => Image::Invalid(format!("image is neither PTX text nor a known binary: {e}")),
    }
}

/// The fatbinary at `ptr`, as long as its header says.
///
/// # Safety
/// `ptr` must point to a fatbinary (at least its 16-byte header, and as
/// many bytes as the header announces).
unsafe fn fatbin_slice<'a>(ptr: *const u8) -> Result<&'a [u8], String> {
    // SAFETY: the header is 16 bytes.
    let header: [u8; 16] = unsafe { std::ptr::read_unaligned(ptr.cast()) };
    let len = fatbin::total_len(&header)?;
    // SAFETY: the fatbinary is as long as its header says.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// `__fatBinC_Wrapper_t { int magic; int version; const u64 *data; void
/// *filename_or_fatbins; }`: version 1 points at one fatbinary; version 2
/// (`-rdc`) may also list prelinked fatbinaries in a NULL-terminated array.
///
/// # Safety
/// `ptr` must point to a wrapper.
unsafe fn read_wrapper(ptr: *const u8, sm: u32) -> Image {
    // SAFETY: the wrapper is 24 bytes.
    let (version, data, extra) = unsafe {
        (
            std::ptr::read_unaligned(ptr.add(4) as *const u32),
            std::ptr::read_unaligned(ptr.add(8) as *const *const u8),
            std::ptr::read_unaligned(ptr.add(16) as *const *const *const u8),
        )
    };
    if version != 1 && version != 2 {
        return Image::Invalid(format!(
            "fatbinary wrapper has version {version}, expected 1 or 2"
        ));
    }
    let mut fatbins = Vec::new();
    if !data.is_null() {
        // SAFETY: the wrapper's data is a fatbinary.
        match unsafe { fatbin_slice(data) } {
            Ok(b) => fatbins.push(b),
            Err(m) => return Image::Invalid(m),
        }
    }
    if version == 2 && !extra.is_null() {
        for i in 0..4096 {
            // SAFETY: a NULL-terminated array of fatbinary pointers.
            let f = unsafe { *extra.add(i) };
            if f.is_null() {
                break;
            }
            // SAFETY: each element is a fatbinary.
            match unsafe { fatbin_slice(f) } {
                Ok(b) => fatbins.push(b),
                Err(m) => return Image::Invalid(m),
            }
        }
    }
    if fatbins.is_empty() {
        return Image::Invalid("fatbinary wrapper with a NULL data pointer".to_string());
    }
    linked_ptx(&fatbins, sm)
}

/// The PTX of several fatbinaries that make one program (an `-rdc` build
/// registers each translation unit's relocatable fatbinary beside the
/// device-linked one, which holds SASS only or nothing): each one's best
/// PTX, linked as `cuLink*` links PTX. With one PTX, that PTX.
pub fn linked_ptx(fatbins: &[&[u8]], sm: u32) -> Image {
    let mut inputs = Vec::new();
    for (i, bytes) in fatbins.iter().enumerate() {
        match best_ptx(&[bytes], sm) {
            Image::Ptx(ptx) => inputs.push(crate::link::LinkInput {
                name: format!("fatbinary{i}.ptx"),
                ptx,
            }),
            Image::Invalid(m) => return Image::Invalid(m),
            Image::Unsupported(_) | Image::MachineCodeOnly(_) => {}
        }
    }
    match inputs.len() {
        0 => best_ptx(fatbins, sm),
        1 => Image::Ptx(inputs.remove(0).ptx),
        _ => Image::Ptx(crate::link::link(&inputs)),
    }
}

/// The kernels an ELF image at `ptr` defines.
///
/// # Safety
/// `ptr` must point to a complete ELF image.
unsafe fn elf_kernels(ptr: *const u8) -> Vec<String> {
    // SAFETY: an ELF64 header is 64 bytes.
    let header = unsafe { std::slice::from_raw_parts(ptr, 64) };
    if header[4] != 2 {
        return Vec::new();
    }
    let shoff = u64::from_le_bytes(header[0x28..0x30].try_into().expect("8 bytes"));
    let shentsize = u16::from_le_bytes([header[0x3a], header[0x3b]]) as u64;
    let shnum = u16::from_le_bytes([header[0x3c], header[0x3d]]) as u64;
    let len = shoff.saturating_add(shentsize * shnum);
    if len > 1 << 30 {
        return Vec::new();
    }
    // SAFETY: the section header table ends the image.
    let elf = unsafe { std::slice::from_raw_parts(ptr, len as usize) };
    fatbin::cubin_kernels(elf)
}

/// The refusal for machine code without PTX, naming the kernels.
/// The suggested PTX target is the newest the code was built for that the
/// device `sm` can run.
fn sass_only_message(kernels: &[String], archs: &[u32], sm: u32) -> String {
    let names: Vec<String> = kernels.iter().map(|k| fatbin::demangle(k)).collect();
    let what = match names.len() {
        0 => "this module".to_string(),
        1 => format!("kernel `{}`", names[0]),
        _ => format!("kernels `{}`", names.join("`, `")),
    };
    format!("{what}: {}", sass_only_reason(archs, sm))
}

/// Why machine code of `archs` cannot run, and the `-gencode` that fixes it.
fn sass_only_reason(archs: &[u32], sm: u32) -> String {
    let arch = archs.iter().max().copied().unwrap_or(sm).min(sm);
    let sass = if archs.is_empty() {
        "a cubin".to_string()
    } else {
        let list: Vec<String> = archs.iter().map(|a| format!("sm_{a}")).collect();
        format!("SASS only ({})", list.join(", "))
    };
    format!(
        "{sass}, no PTX; the prlx emulator runs PTX: rebuild with \
         -gencode arch=compute_{arch},code=compute_{arch}"
    )
}

/// The PTX to run from a set of fatbinaries: as a driver picks a JIT
/// target, the entry of the highest architecture the device supports.
pub fn best_ptx(fatbins: &[&[u8]], sm: u32) -> Image {
    let mut all = Vec::new();
    for bytes in fatbins {
        match fatbin::entries(bytes) {
            Ok(e) => all.extend(e),
            Err(m) => return Image::Invalid(m),
        }
    }
    let usable = all
        .iter()
        .filter(|e| e.kind == fatbin::KIND_PTX && e.arch <= sm)
        .max_by_key(|e| e.arch);
    if let Some(entry) = usable {
        return match entry.payload() {
            Ok(text) => {
                let text = text.split(|b| *b == 0).next().unwrap_or_default();
                match std::str::from_utf8(text) {
                    Ok(s) => Image::Ptx(s.to_string()),
                    Err(e) => Image::Invalid(format!(
                        "fatbinary PTX entry at offset {} is not UTF-8: {e}",
                        entry.offset
                    )),
                }
            }
            Err(m) => Image::Invalid(m),
        };
    }
    let newer_ptx: Vec<u32> = all
        .iter()
        .filter(|e| e.kind == fatbin::KIND_PTX)
        .map(|e| e.arch)
        .collect();
    let cubins: Vec<&fatbin::Entry> = all.iter().filter(|e| e.kind == fatbin::KIND_ELF).collect();
    if cubins.is_empty() {
        if !newer_ptx.is_empty() {
            let list: Vec<String> = newer_ptx.iter().map(|a| format!("compute_{a}")).collect();
            return Image::Unsupported(format!(
                "fatbinary holds PTX for {} only, newer than the emulated sm_{sm}: \
                 set PRLX_EMU_SM to at least that architecture",
                list.join(", ")
            ));
        }
        return Image::Unsupported("fatbinary holds no PTX and no kernels".to_string());
    }
    // One cubin names the kernels; decompressing every architecture's
    // would cost seconds on vendor libraries that are never launched.
    let symbols = cubins[0]
        .payload()
        .map(|elf| fatbin::cubin_symbols(&elf))
        .unwrap_or_default();
    let mut archs: Vec<u32> = cubins.iter().map(|e| e.arch).collect();
    archs.sort_unstable();
    archs.dedup();
    Image::MachineCodeOnly(MachineCode {
        kernels: symbols.functions,
        variables: symbols.variables,
        variable_defs: symbols.variable_defs,
        archs,
        newer_ptx,
        device_sm: sm,
    })
}

/// The PTX of one fatbinary given as bytes (`cuLinkAddData` inputs).
pub fn ptx_from_fatbin(bytes: &[u8], sm: u32) -> Image {
    best_ptx(&[bytes], sm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use prlx_fatbin::{FLAG_LZ4, FLAG_ZSTD, MAGIC as FATBIN_MAGIC};

    /// Entries: (kind, flags, arch, stored bytes, uncompressed size).
    fn fatbin(entries: &[(u16, u64, u32, &[u8], u64)]) -> Vec<u8> {
        let mut payload = Vec::new();
        for (kind, flags, arch, data, unc) in entries {
            let mut h = vec![0u8; 64];
            h[0..2].copy_from_slice(&kind.to_le_bytes());
            h[4..8].copy_from_slice(&64u32.to_le_bytes());
            h[8..12].copy_from_slice(&(data.len() as u32).to_le_bytes());
            h[16..20].copy_from_slice(&(data.len() as u32).to_le_bytes());
            h[28..32].copy_from_slice(&arch.to_le_bytes());
            h[40..48].copy_from_slice(&flags.to_le_bytes());
            h[56..64].copy_from_slice(&unc.to_le_bytes());
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
        let f = fatbin(&[
            (2, 0, 80, b"\x7fELF....", 0),
            (1, 0, 80, b".version 8.0\0\0\0", 0),
        ]);
        assert_eq!(
            // SAFETY: `f` is a live, complete fatbinary (header and entries), which is all `read` reads.
            unsafe { read(f.as_ptr(), 80) },
            Image::Ptx(".version 8.0".into())
        );
    }

    #[test]
    fn picks_the_newest_ptx_the_device_supports() {
        let f = fatbin(&[
            (1, 0, 52, b"old\0", 0),
            (1, 0, 90, b"new\0", 0),
            (1, 0, 75, b"mid\0", 0),
        ]);
        assert_eq!(best_ptx(&[&f], 80), Image::Ptx("mid".into()));
        assert_eq!(best_ptx(&[&f], 90), Image::Ptx("new".into()));
        let only_new = fatbin(&[(1, 0, 90, b"new\0", 0)]);
        match best_ptx(&[&only_new], 80) {
            Image::Unsupported(m) => {
                assert!(m.contains("compute_90") && m.contains("PRLX_EMU_SM"), "{m}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rdc_translation_units_are_linked() {
        let main = fatbin(&[(
            1,
            0,
            80,
            b".version 8.0\n.target sm_80\n.address_size 64\n.extern .func (.param .b32 r) f(.param .b32 x);\n.visible .entry k() { ret; }\n\0",
            0,
        )]);
        let helper = fatbin(&[(
            1,
            0,
            80,
            b".version 8.0\n.target sm_80\n.address_size 64\n.visible .func (.param .b32 r) f(.param .b32 x) { ret; }\n\0",
            0,
        )]);
        let empty = fatbin(&[]);
        match linked_ptx(&[&empty, &main, &helper], 80) {
            Image::Ptx(p) => {
                assert!(
                    p.contains(".entry k()") && p.contains(".visible .func"),
                    "{p}"
                );
                assert!(
                    !p.contains(".extern .func"),
                    "the resolved extern is dropped: {p}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sass_only_loads_and_names_the_fix_per_kernel() {
        let f = fatbin(&[(2, 0, 75, b"\x7fELF", 0), (2, 0, 86, b"\x7fELF", 0)]);
        match best_ptx(&[&f], 80) {
            Image::MachineCodeOnly(mc) => {
                assert_eq!(mc.archs, vec![75, 86]);
                // An unreadable cubin names no kernels: any name may be one.
                assert!(mc.defines("anything"));
                let m = mc.refusal("_Z1kv");
                // The fix names PTX the emulated sm_80 runs, not sm_86's.
                assert!(
                    m.contains("`k()`") && m.contains("sm_86") && m.contains("code=compute_80"),
                    "{m}"
                );
            }
            other => panic!("{other:?}"),
        }
        // SASS beside PTX for a newer device: the fix is PRLX_EMU_SM.
        let f = fatbin(&[(2, 0, 75, b"\x7fELF", 0), (1, 0, 90, b"new\0", 0)]);
        match best_ptx(&[&f], 80) {
            Image::MachineCodeOnly(mc) => {
                let v = mc.variable_refusal("table");
                assert!(v.starts_with("variable `table`"), "{v}");
                let m = mc.refusal("k");
                assert!(m.contains("compute_90") && m.contains("PRLX_EMU_SM"), "{m}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn machine_code_variables_become_a_module_of_variables() {
        let var = |name: &str, constant, init: Option<Vec<u8>>| fatbin::CubinVariable {
            name: name.to_string(),
            size: 4,
            align: 4,
            constant,
            init,
        };
        let mc = MachineCode {
            kernels: vec!["k".into()],
            variables: vec![],
            variable_defs: vec![
                var(
                    "_ZN6cublas8internal15deviceConstantsE",
                    true,
                    Some(vec![1, 0, 0, 2]),
                ),
                var("zeroed", false, None),
                var("bad.name", false, None),
            ],
            archs: vec![90],
            newer_ptx: vec![],
            device_sm: 80,
        };
        let ptx = mc.variables_ptx();
        assert!(
            ptx.contains(
                ".visible .const .align 4 .b8 _ZN6cublas8internal15deviceConstantsE[4] = {1,0,0,2};"
            ),
            "{ptx}"
        );
        assert!(
            ptx.contains(".visible .global .align 4 .b8 zeroed[4];"),
            "{ptx}"
        );
        assert!(!ptx.contains("bad.name"), "{ptx}");
        let mut dev = prlx_emulator::Device::new(Default::default());
        let m = dev
            .load_module(&ptx, "vars.ptx")
            .expect("the variables load");
        let (addr, size) = dev
            .get_global(m, "_ZN6cublas8internal15deviceConstantsE")
            .unwrap();
        assert_eq!(size, 4);
        assert_ne!(addr, 0);
    }

    #[test]
    fn compressed_ptx_is_decompressed() {
        let ptx = b"\n\n.version 8.0\n.target sm_80\0";
        let frame = zstd::bulk::compress(ptx, 3).unwrap();
        let f = fatbin(&[(1, FLAG_ZSTD, 80, &frame, ptx.len() as u64)]);
        assert_eq!(
            best_ptx(&[&f], 80),
            Image::Ptx("\n\n.version 8.0\n.target sm_80".into())
        );
        // LZ4: ".version 8.0" as literals, a 4-byte match at offset 3, a NUL.
        let block = [
            0xc0, b'.', b'v', b'e', b'r', b's', b'i', b'o', b'n', b' ', b'8', b'.', b'0', 3, 0,
            0x10, 0,
        ];
        let f = fatbin(&[(1, FLAG_LZ4, 80, &block, 100)]);
        assert_eq!(best_ptx(&[&f], 80), Image::Ptx(".version 8.08.08".into()));
        let bad = fatbin(&[(1, FLAG_ZSTD, 80, b"not zstd", 100)]);
        assert!(matches!(best_ptx(&[&bad], 80), Image::Invalid(_)));
    }

    #[test]
    fn truncated_fatbin_is_invalid_not_a_crash() {
        let mut f = fatbin(&[(1, 0, 80, b".version 8.0\0", 0)]);
        f.truncate(40);
        assert!(matches!(best_ptx(&[&f], 80), Image::Invalid(_)));
    }

    #[test]
    fn elf_and_text() {
        let mut elf = [0u8; 64];
        elf[..5].copy_from_slice(b"\x7fELF\x02");
        assert!(matches!(
            // SAFETY: `elf` is a live 64-byte buffer starting with an ELF header, longer than the header
            // `read` inspects.
            unsafe { read(elf.as_ptr(), 80) },
            Image::Unsupported(_)
        ));
        assert_eq!(
            // SAFETY: a static NUL-terminated PTX string.
            unsafe { read(c".version 7.5".as_ptr().cast(), 80) },
            Image::Ptx(".version 7.5".into())
        );
    }
}
