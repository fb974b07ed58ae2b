//! AMDGPU code objects (HSA code object v4/v5 ELF files): kernels by name,
//! their 64-byte kernel descriptors, their `.text`, and the kernarg layout
//! from the `amdhsa.kernels` metadata note.

use std::collections::BTreeMap;

use crate::CodeObjectError;
use crate::elf::{self, Elf};
use crate::msgpack::{self, Lookup, Value};

const NT_AMDGPU_METADATA: u32 = 32;
const STT_OBJECT: u8 = 1;
const STT_FUNC: u8 = 2;
/// `EF_AMDGPU_MACH` field of e_flags, and the gfx11 values we accept.
const EF_AMDGPU_MACH: u32 = 0xFF;

/// The 64-byte `kernel_descriptor_t` (AMDHSA code object v3+), decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelDescriptor {
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    /// Byte offset of the entry point from the descriptor's own address.
    pub kernel_code_entry_byte_offset: i64,
    pub compute_pgm_rsrc3: u32,
    pub compute_pgm_rsrc1: u32,
    pub compute_pgm_rsrc2: u32,
    pub kernel_code_properties: u16,
}

impl KernelDescriptor {
    pub fn parse(b: &[u8]) -> Result<KernelDescriptor, CodeObjectError> {
        if b.len() < 64 {
            return Err(CodeObjectError::Malformed(
                "kernel descriptor shorter than 64 bytes".into(),
            ));
        }
        let u32_at = |o| elf::u32_at(b, o).unwrap();
        Ok(KernelDescriptor {
            group_segment_fixed_size: u32_at(0),
            private_segment_fixed_size: u32_at(4),
            kernarg_size: u32_at(8),
            kernel_code_entry_byte_offset: elf::u64_at(b, 16).unwrap() as i64,
            compute_pgm_rsrc3: u32_at(44),
            compute_pgm_rsrc1: u32_at(48),
            compute_pgm_rsrc2: u32_at(52),
            kernel_code_properties: elf::u16_at(b, 56).unwrap(),
        })
    }
    /// VGPRs per lane: rsrc1 GRANULATED_WORKITEM_VGPR_COUNT (granule 8 in
    /// wave32 and 4 in wave64 on gfx11).
    pub fn vgpr_count(&self) -> u32 {
        let granule = if self.wave32() { 8 } else { 4 };
        ((self.compute_pgm_rsrc1 & 0x3F) + 1) * granule
    }
    /// gfx10+ ignores GRANULATED_WAVEFRONT_SGPR_COUNT: every wave has 106 SGPRs.
    pub fn sgpr_count(&self) -> u32 {
        crate::wave::NUM_SGPRS as u32
    }
    pub fn wave32(&self) -> bool {
        self.kernel_code_properties & (1 << 10) != 0
    }
    pub fn wave_size(&self) -> u32 {
        if self.wave32() { 32 } else { 64 }
    }
    /// COMPUTE_PGM_RSRC2.USER_SGPR_COUNT: where the system SGPRs start.
    pub fn user_sgpr_count(&self) -> u32 {
        (self.compute_pgm_rsrc2 >> 1) & 0x1F
    }
    pub fn enable_private_segment(&self) -> bool {
        self.compute_pgm_rsrc2 & 1 != 0
    }
    pub fn enable_workgroup_id(&self, dim: usize) -> bool {
        self.compute_pgm_rsrc2 & (1 << (7 + dim)) != 0
    }
    pub fn enable_workgroup_info(&self) -> bool {
        self.compute_pgm_rsrc2 & (1 << 10) != 0
    }
    /// ENABLE_VGPR_WORKITEM_ID: 0 = x only, 1 = x,y, 2 = x,y,z.
    pub fn workitem_id_dims(&self) -> u32 {
        (self.compute_pgm_rsrc2 >> 11) & 3
    }
    pub fn user_sgpr_private_segment_buffer(&self) -> bool {
        self.kernel_code_properties & 1 != 0
    }
    pub fn user_sgpr_dispatch_ptr(&self) -> bool {
        self.kernel_code_properties & (1 << 1) != 0
    }
    pub fn user_sgpr_queue_ptr(&self) -> bool {
        self.kernel_code_properties & (1 << 2) != 0
    }
    pub fn user_sgpr_kernarg_segment_ptr(&self) -> bool {
        self.kernel_code_properties & (1 << 3) != 0
    }
    pub fn user_sgpr_dispatch_id(&self) -> bool {
        self.kernel_code_properties & (1 << 4) != 0
    }
    pub fn user_sgpr_flat_scratch_init(&self) -> bool {
        self.kernel_code_properties & (1 << 5) != 0
    }
    pub fn user_sgpr_private_segment_size(&self) -> bool {
        self.kernel_code_properties & (1 << 6) != 0
    }
}

/// One entry of a kernel's `.args` metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelArg {
    pub name: Option<String>,
    pub offset: u32,
    pub size: u32,
    /// `.value_kind`: by_value, global_buffer, dynamic_shared_pointer,
    /// hidden_block_count_x, hidden_group_size_x, hidden_remainder_x, ...
    pub value_kind: String,
    pub address_space: Option<String>,
}

impl KernelArg {
    pub fn is_hidden(&self) -> bool {
        self.value_kind.starts_with("hidden_")
    }
}

/// A kernel: descriptor, code, and argument metadata.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub name: String,
    pub descriptor: KernelDescriptor,
    /// Virtual address of the first instruction in the code object.
    pub entry: u64,
    /// All arguments (explicit then hidden) as the metadata lists them.
    pub args: Vec<KernelArg>,
    pub kernarg_segment_size: u32,
    pub kernarg_segment_align: u32,
    /// Static LDS (`.group_segment_fixed_size`).
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub wavefront_size: u32,
    pub max_flat_workgroup_size: u32,
    pub uses_dynamic_stack: bool,
}

impl Kernel {
    pub fn explicit_args(&self) -> impl Iterator<Item = &KernelArg> {
        self.args.iter().filter(|a| !a.is_hidden())
    }
    pub fn hidden_args(&self) -> impl Iterator<Item = &KernelArg> {
        self.args.iter().filter(|a| a.is_hidden())
    }
}

/// A parsed code object. `text` is the `.text` section at `text_addr`.
#[derive(Debug, Clone)]
pub struct CodeObject {
    /// gfx target number from e_flags (0x41 = gfx1100).
    pub mach: u32,
    pub kernels: BTreeMap<String, Kernel>,
    pub text_addr: u64,
    pub text: Vec<u8>,
    /// Loadable bytes by virtual address (every allocated section), for
    /// `s_getpc`-relative reads of `.rodata`/`.data` (globals, constants).
    pub segments: Vec<(u64, Vec<u8>)>,
    /// Function and object symbols (name, address, size).
    pub symbols: Vec<(String, u64, u64)>,
    /// Dynamic relocations to apply when the image is mapped at a base.
    pub relocations: Vec<Relocation>,
}

/// A dynamic relocation of the image (`.rela.dyn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relocation {
    /// R_AMDGPU_RELATIVE64: `*offset = base + addend` (8 bytes).
    Relative64 { offset: u64, addend: i64 },
    /// R_AMDGPU_ABS64 / ABS32 to a symbol defined in the image: `*offset = base + value + addend`.
    Absolute {
        offset: u64,
        value: u64,
        addend: i64,
        bytes: u8,
    },
}

const R_AMDGPU_ABS32: u32 = 2;
const R_AMDGPU_ABS64: u32 = 3;
const R_AMDGPU_RELATIVE64: u32 = 13;

/// e_flags machine values of the RDNA3 family (EF_AMDGPU_MACH_AMDGCN_GFX11xx).
pub fn mach_name(mach: u32) -> Option<&'static str> {
    Some(match mach {
        0x41 => "gfx1100",
        0x44 => "gfx1101",
        0x45 => "gfx1102",
        0x43 => "gfx1103",
        0x46 => "gfx1150",
        0x47 => "gfx1151",
        _ => return None,
    })
}

impl CodeObject {
    pub fn parse(data: &[u8]) -> Result<CodeObject, CodeObjectError> {
        let elf = Elf::parse(data)?;
        let mach = gfx11_mach(&elf)?;
        let text_sec = elf
            .section(".text")
            .ok_or_else(|| CodeObjectError::Malformed("no .text section".into()))?;
        let text = elf.section_data(text_sec)?.to_vec();
        let segments = loadable_segments(&elf)?;
        let syms = elf.symbols()?;
        let symbols = syms
            .iter()
            .filter(|s| s.kind == STT_FUNC || s.kind == STT_OBJECT)
            .map(|s| (s.name.clone(), s.value, s.size))
            .collect::<Vec<_>>();
        let metadata = amdgpu_metadata(&elf)?;
        let kernel_list = metadata
            .get("amdhsa.kernels")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                CodeObjectError::Malformed("metadata has no amdhsa.kernels array".into())
            })?;
        let mut kernels = BTreeMap::new();
        for (i, k) in kernel_list.iter().enumerate() {
            let kernel = parse_kernel(&elf, &syms, text_sec, i, k)?;
            kernels.insert(kernel.name.clone(), kernel);
        }
        let relocations = dynamic_relocations(&elf)?;
        Ok(CodeObject {
            mach,
            kernels,
            text_addr: text_sec.addr,
            text,
            segments,
            symbols,
            relocations,
        })
    }

    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.get(name)
    }

    /// The code bytes of a function symbol (or kernel) from `.text`.
    pub fn code_of(&self, addr: u64, size: u64) -> Option<&[u8]> {
        let start = addr.checked_sub(self.text_addr)? as usize;
        self.text.get(start..start.checked_add(size as usize)?)
    }
}

/// The e_flags machine of an AMDGPU ELF of the RDNA3 family, or why it is not one.
fn gfx11_mach(elf: &Elf) -> Result<u32, CodeObjectError> {
    if elf.machine != elf::EM_AMDGPU {
        return Err(CodeObjectError::Malformed(format!(
            "ELF e_machine is {:#x}, not EM_AMDGPU (0xe0)",
            elf.machine
        )));
    }
    let mach = elf.flags & EF_AMDGPU_MACH;
    if mach_name(mach).is_none() {
        return Err(CodeObjectError::UnsupportedTarget(mach));
    }
    Ok(mach)
}

/// Every allocated section with an address, as (address, bytes); NOBITS
/// sections become zeros.
fn loadable_segments(elf: &Elf) -> Result<Vec<(u64, Vec<u8>)>, CodeObjectError> {
    let mut segments = Vec::new();
    // Loaded images of real code objects are a few megabytes at most.
    const MAX_IMAGE: u64 = 1 << 30;
    for s in &elf.sections {
        if s.addr != 0 && s.size > 0 && s.addr.checked_add(s.size).is_none_or(|end| end > MAX_IMAGE)
        {
            return Err(CodeObjectError::Malformed(format!(
                "section {} at {:#x} ({} bytes) lies beyond the 1 GiB an image may span",
                s.name, s.addr, s.size
            )));
        }
        // SHF_ALLOC sections with an address; NOBITS become zeros.
        if s.addr != 0 && s.size > 0 && s.size < (1 << 30) {
            let bytes = if s.kind == 8 {
                vec![0; s.size as usize]
            } else {
                elf.section_data(s)?.to_vec()
            };
            segments.push((s.addr, bytes));
        }
    }
    Ok(segments)
}

/// The decoded `NT_AMDGPU_METADATA` note (code object v3+).
fn amdgpu_metadata(elf: &Elf) -> Result<Value, CodeObjectError> {
    elf.notes()?
        .into_iter()
        .find(|(owner, kind, _)| owner == "AMDGPU" && *kind == NT_AMDGPU_METADATA)
        .map(|(_, _, desc)| msgpack::parse(desc))
        .transpose()
        .map_err(|e| CodeObjectError::Malformed(format!("NT_AMDGPU_METADATA: {e}")))?
        .ok_or_else(|| {
            CodeObjectError::Malformed(
                "no NT_AMDGPU_METADATA note (code object v3+ expected)".into(),
            )
        })
}

/// `len` bytes at virtual address `addr` from the file contents of the
/// section holding them (NOBITS sections have none).
fn read_at<'a>(elf: &Elf<'a>, addr: u64, len: usize) -> Option<&'a [u8]> {
    elf.sections.iter().filter(|s| s.kind != 8).find_map(|s| {
        if addr >= s.addr && addr + len as u64 <= s.addr + s.size && s.addr != 0 {
            let off = (s.offset + addr - s.addr) as usize;
            elf.data.get(off..off + len)
        } else {
            None
        }
    })
}

/// Kernel `i` of `amdhsa.kernels` from its metadata `k` and the descriptor
/// its `.symbol` names.
fn parse_kernel(
    elf: &Elf,
    syms: &[elf::Symbol],
    text_sec: &elf::Section,
    i: usize,
    k: &Value,
) -> Result<Kernel, CodeObjectError> {
    let field = |f: &str| {
        CodeObjectError::Malformed(format!("amdhsa.kernels[{i}]: missing or invalid {f}"))
    };
    let name = k
        .get(".name")
        .and_then(Value::as_str)
        .ok_or_else(|| field(".name"))?
        .to_string();
    let symbol = k
        .get(".symbol")
        .and_then(Value::as_str)
        .ok_or_else(|| field(".symbol"))?;
    let (descriptor, entry) = kernel_descriptor(elf, syms, text_sec, &name, symbol)?;
    let mut args = Vec::new();
    if let Some(list) = k.get(".args").and_then(Value::as_array) {
        for (j, a) in list.iter().enumerate() {
            args.push(parse_kernel_arg(&name, j, a)?);
        }
    }
    // Fields the metadata may omit fall back to the descriptor's values.
    let num = |f: &str| k.get(f).and_then(Value::as_u64);
    Ok(Kernel {
        name,
        entry,
        args,
        kernarg_segment_size: num(".kernarg_segment_size").unwrap_or(descriptor.kernarg_size as u64)
            as u32,
        kernarg_segment_align: num(".kernarg_segment_align").unwrap_or(8) as u32,
        group_segment_fixed_size: num(".group_segment_fixed_size")
            .unwrap_or(descriptor.group_segment_fixed_size as u64)
            as u32,
        private_segment_fixed_size: num(".private_segment_fixed_size")
            .unwrap_or(descriptor.private_segment_fixed_size as u64)
            as u32,
        wavefront_size: num(".wavefront_size").unwrap_or(descriptor.wave_size() as u64) as u32,
        max_flat_workgroup_size: num(".max_flat_workgroup_size").unwrap_or(1024) as u32,
        uses_dynamic_stack: k
            .get(".uses_dynamic_stack")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        descriptor,
    })
}

/// The descriptor of kernel `name` at symbol `symbol`, and the kernel's
/// entry point, which must lie in `.text`.
fn kernel_descriptor(
    elf: &Elf,
    syms: &[elf::Symbol],
    text_sec: &elf::Section,
    name: &str,
    symbol: &str,
) -> Result<(KernelDescriptor, u64), CodeObjectError> {
    let kd_sym = syms.iter().find(|s| s.name == symbol).ok_or_else(|| {
        CodeObjectError::Malformed(format!(
            "kernel {name}: descriptor symbol {symbol} not found"
        ))
    })?;
    let kd_bytes = read_at(elf, kd_sym.value, 64).ok_or_else(|| {
        CodeObjectError::Malformed(format!("kernel {name}: descriptor {symbol} out of bounds"))
    })?;
    let descriptor = KernelDescriptor::parse(kd_bytes)?;
    let entry = kd_sym
        .value
        .wrapping_add(descriptor.kernel_code_entry_byte_offset as u64);
    if entry < text_sec.addr || entry >= text_sec.addr + text_sec.size {
        return Err(CodeObjectError::Malformed(format!(
            "kernel {name}: entry {entry:#x} lies outside .text"
        )));
    }
    Ok((descriptor, entry))
}

/// Entry `j` of kernel `kernel`'s `.args` metadata.
fn parse_kernel_arg(kernel: &str, j: usize, a: &Value) -> Result<KernelArg, CodeObjectError> {
    let field = |f: &str| {
        CodeObjectError::Malformed(format!(
            "kernel {kernel}: .args[{j}]: missing or invalid {f}"
        ))
    };
    Ok(KernelArg {
        name: a.get(".name").and_then(Value::as_str).map(str::to_string),
        offset: a
            .get(".offset")
            .and_then(Value::as_u64)
            .ok_or_else(|| field(".offset"))? as u32,
        size: a
            .get(".size")
            .and_then(Value::as_u64)
            .ok_or_else(|| field(".size"))? as u32,
        value_kind: a
            .get(".value_kind")
            .and_then(Value::as_str)
            .ok_or_else(|| field(".value_kind"))?
            .to_string(),
        address_space: a
            .get(".address_space")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// The relocations of every SHT_RELA section in the loaded image; only
/// RELATIVE64, and ABS32/ABS64 to symbols the image defines, are supported.
fn dynamic_relocations(elf: &Elf) -> Result<Vec<Relocation>, CodeObjectError> {
    let mut relocations = Vec::new();
    for sec in elf.sections.iter().filter(|x| x.kind == 4 && x.addr != 0) {
        // SHT_RELA in the loaded image: (offset, info, addend) triples.
        let dynsyms = match elf.sections.get(sec.link as usize) {
            Some(d) => elf.section_data(d)?,
            None => &[],
        };
        for ent in elf.section_data(sec)?.chunks_exact(24) {
            let offset = elf::u64_at(ent, 0).unwrap();
            let info = elf::u64_at(ent, 8).unwrap();
            let addend = elf::u64_at(ent, 16).unwrap() as i64;
            let (kind, sym) = (info as u32, (info >> 32) as usize);
            let value = dynsyms
                .get(sym * 24 + 8..sym * 24 + 16)
                .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
                .filter(|&v| v != 0);
            match (kind, value) {
                (R_AMDGPU_RELATIVE64, _) => {
                    relocations.push(Relocation::Relative64 { offset, addend })
                }
                (R_AMDGPU_ABS64 | R_AMDGPU_ABS32, Some(value)) => {
                    let bytes = if kind == R_AMDGPU_ABS64 { 8 } else { 4 };
                    relocations.push(Relocation::Absolute {
                        offset,
                        value,
                        addend,
                        bytes,
                    })
                }
                _ => {
                    return Err(CodeObjectError::Malformed(format!(
                        "{}: relocation type {kind} at {offset:#x} is not supported \
                         (only RELATIVE64, and ABS32/ABS64 to symbols the image defines)",
                        sec.name
                    )));
                }
            }
        }
    }
    Ok(relocations)
}

/// Launch geometry the hidden kernargs describe.
#[derive(Debug, Clone, Copy)]
pub struct LaunchDims {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_lds: u32,
}

/// Fills the hidden arguments of `kernel` into `kernarg` (which must be at
/// least `kernarg_segment_size` long) from the launch geometry, following
/// the AMDGPU ABI (code object v5 implicit arguments). Hidden arguments the
/// emulator has no meaning for (hostcall, printf buffers, queue pointers,
/// multigrid) are zeroed. Returns the names of those it zeroed.
pub fn fill_hidden_args(kernel: &Kernel, dims: &LaunchDims, kernarg: &mut [u8]) -> Vec<String> {
    let mut zeroed = Vec::new();
    let grid_dims = if dims.grid[2] > 1 || dims.block[2] > 1 {
        3
    } else if dims.grid[1] > 1 || dims.block[1] > 1 {
        2
    } else {
        1
    };
    for a in kernel.hidden_args() {
        let d = |s: &str| match s.as_bytes().last() {
            Some(b'x') => 0,
            Some(b'y') => 1,
            _ => 2,
        };
        let value: u64 = match a.value_kind.as_str() {
            k if k.starts_with("hidden_block_count_") => dims.grid[d(k)] as u64,
            k if k.starts_with("hidden_group_size_") => dims.block[d(k)] as u64,
            // v5: the size of the last (partial) workgroup; 0 = uniform.
            k if k.starts_with("hidden_remainder_") => 0,
            k if k.starts_with("hidden_global_offset_") => 0,
            "hidden_grid_dims" => grid_dims,
            "hidden_dynamic_lds_size" => dims.dynamic_lds as u64,
            other => {
                zeroed.push(other.to_string());
                0
            }
        };
        let start = a.offset as usize;
        let end = (start + a.size as usize).min(kernarg.len());
        if start < end {
            let bytes = value.to_le_bytes();
            kernarg[start..end].copy_from_slice(&bytes[..end - start]);
        }
    }
    zeroed
}
