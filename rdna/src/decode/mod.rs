//! The gfx1100 machine-code decoder: one [`Inst`] per instruction, from the
//! raw encoding (SOP1/SOP2/SOPK/SOPC/SOPP, SMEM, VOP1/VOP2/VOPC/VOP3/VOP3P,
//! VOPD, DPP16/DPP8, DS, FLAT/GLOBAL/SCRATCH, MUBUF cache controls), with
//! literal constants. Mnemonics come from `opcodes.rs`, generated from LLVM's
//! disassembler; `format.rs` prints LLVM's syntax (the decoder's test oracle
//! is `llvm-objdump-19`).

pub mod format;
pub mod opcodes;

use std::fmt;

/// Encoding family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Sop1,
    Sop2,
    Sopk,
    Sopc,
    Sopp,
    Smem,
    Vop1,
    Vop2,
    Vopc,
    Vop3,
    Vop3p,
    Vopd,
    Ds,
    Flat,
    Global,
    Scratch,
    Mubuf,
}

/// Source operand codes (9 bits; 256.. are VGPRs).
pub mod src {
    pub const VCC_LO: u16 = 106;
    pub const VCC_HI: u16 = 107;
    pub const NULL: u16 = 124;
    pub const M0: u16 = 125;
    pub const EXEC_LO: u16 = 126;
    pub const EXEC_HI: u16 = 127;
    pub const ZERO: u16 = 128;
    pub const SHARED_BASE: u16 = 235;
    pub const SHARED_LIMIT: u16 = 236;
    pub const PRIVATE_BASE: u16 = 237;
    pub const PRIVATE_LIMIT: u16 = 238;
    pub const POPS_EXITING_WAVE_ID: u16 = 239;
    pub const DPP8: u16 = 233;
    pub const DPP8FI: u16 = 234;
    pub const DPP16: u16 = 250;
    pub const VCCZ: u16 = 251;
    pub const EXECZ: u16 = 252;
    pub const SCC: u16 = 253;
    pub const LITERAL: u16 = 255;
    pub const VGPR0: u16 = 256;
}

/// DPP control of a VALU instruction (the extra dword).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dpp {
    /// DPP16: dpp_ctrl, row/bank masks, bound_ctrl, fetch-inactive.
    Dpp16 {
        ctrl: u16,
        row_mask: u8,
        bank_mask: u8,
        bound_ctrl: bool,
        fi: bool,
    },
    /// DPP8: lane selects within each group of 8.
    Dpp8 { sel: [u8; 8], fi: bool },
}

/// One half of a VOPD dual-issue pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VopdHalf {
    pub name: &'static str,
    pub op: u8,
    pub vdst: u16,
    pub src0: u16,
    pub vsrc1: u16,
}

/// A decoded instruction. Field meaning depends on `format`; unused fields
/// are zero. Register fields hold operand codes (see [`src`]) except the
/// VGPR-only ones (`vdst`, `addr`, `data0`, `data1`), which are VGPR numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inst {
    pub format: Format,
    /// Opcode within `format`. For VALU (VOP1/VOP2/VOPC/VOP3) the VOP3-space
    /// opcode: VOPC 0..=255, VOP2 256 + op, VOP1 384 + op.
    pub op: u16,
    pub name: &'static str,
    /// Size in bytes, literal and DPP dwords included.
    pub len: u8,
    /// Destination: SGPR code for SALU/SMEM, VGPR number for VALU/memory.
    pub dst: u16,
    /// Scalar destination of VOP3 SD forms (carry/VCC out) and VOP3 VOPC.
    pub sdst: u16,
    pub src: [u16; 3],
    pub literal: Option<u32>,
    pub simm16: u16,
    /// VOP3/VOP3P/DPP modifiers: bit i = source i.
    pub abs: u8,
    pub neg: u8,
    pub neg_hi: u8,
    pub opsel: u8,
    pub opsel_hi: u8,
    pub clamp: bool,
    pub omod: u8,
    pub dpp: Option<Dpp>,
    /// Memory: signed byte offset (FLAT/SMEM), offset0/offset1 (DS).
    pub offset: i32,
    pub offset1: u8,
    pub glc: bool,
    pub slc: bool,
    pub dlc: bool,
    pub gds: bool,
    /// Memory: VGPR numbers of address, data, data1; SGPR base/`saddr` code
    /// (124 = none/"off"); scratch SVE bit.
    pub addr: u16,
    pub data0: u16,
    pub data1: u16,
    pub saddr: u16,
    pub sve: bool,
    /// MUBUF addressing: VGPR offset (`offen`) and/or index (`idxen`).
    pub offen: bool,
    pub idxen: bool,
    pub vopd: Option<[VopdHalf; 2]>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    Truncated {
        pc: u64,
    },
    Unknown {
        pc: u64,
        word: u32,
        format: &'static str,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated { pc } => {
                write!(f, "instruction at {pc:#x} runs past the end of the code")
            }
            DecodeError::Unknown { pc, word, format } => {
                write!(f, "unknown {format} opcode in {word:#010x} at {pc:#x}")
            }
        }
    }
}

impl std::error::Error for DecodeError {}

impl Inst {
    fn new(format: Format, op: u16, name: &'static str) -> Inst {
        Inst {
            format,
            op,
            name,
            len: 4,
            dst: 0,
            sdst: src::NULL,
            src: [0; 3],
            literal: None,
            simm16: 0,
            abs: 0,
            neg: 0,
            neg_hi: 0,
            opsel: 0,
            opsel_hi: 0,
            clamp: false,
            omod: 0,
            dpp: None,
            offset: 0,
            offset1: 0,
            glc: false,
            slc: false,
            dlc: false,
            gds: false,
            addr: 0,
            data0: 0,
            data1: 0,
            saddr: src::NULL,
            sve: false,
            offen: false,
            idxen: false,
            vopd: None,
        }
    }

    pub fn is_valu(&self) -> bool {
        matches!(
            self.format,
            Format::Vop1
                | Format::Vop2
                | Format::Vopc
                | Format::Vop3
                | Format::Vop3p
                | Format::Vopd
        )
    }

    /// The signed branch target of a SOPP branch, relative to the next instruction.
    pub fn branch_target(&self, pc: u64) -> u64 {
        (pc + 4).wrapping_add(((self.simm16 as i16 as i64) * 4) as u64)
    }
}

fn sext(v: u32, bits: u32) -> i32 {
    ((v << (32 - bits)) as i32) >> (32 - bits)
}

fn table_name(t: &'static [Option<&'static str>], op: usize) -> Option<&'static str> {
    t.get(op).copied().flatten()
}

/// VOP2 opcodes that carry a literal after the instruction word (madmk/madak forms).
fn vop2_has_inline_literal(name: &str) -> bool {
    matches!(
        name,
        "v_fmamk_f32" | "v_fmaak_f32" | "v_fmamk_f16" | "v_fmaak_f16"
    )
}

/// Bits `hi..=lo` of `v`.
#[inline]
fn bits(v: u32, hi: u32, lo: u32) -> u32 {
    (v >> lo) & ((1u32 << (hi - lo + 1)) - 1)
}

/// The instruction being decoded: its code (from its first byte), its
/// address, and its first dword.
struct Words<'a> {
    code: &'a [u8],
    pc: u64,
    w0: u32,
}

impl Words<'_> {
    /// Dword `i` of the instruction, or `Truncated` past the end of the code.
    #[inline]
    fn word(&self, i: usize) -> Result<u32, DecodeError> {
        self.code
            .get(i * 4..i * 4 + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .ok_or(DecodeError::Truncated { pc: self.pc })
    }

    /// The error for an opcode `format`'s table does not name.
    fn unknown(&self, format: &'static str) -> DecodeError {
        DecodeError::Unknown {
            pc: self.pc,
            word: self.w0,
            format,
        }
    }

    /// The name of opcode `op` in `format`'s table `t`.
    #[inline]
    fn name(
        &self,
        t: &'static [Option<&'static str>],
        op: usize,
        format: &'static str,
    ) -> Result<&'static str, DecodeError> {
        table_name(t, op).ok_or_else(|| self.unknown(format))
    }
}

/// Decodes the instruction at the start of `code` (which sits at `pc`).
pub fn decode(code: &[u8], pc: u64) -> Result<Inst, DecodeError> {
    let truncated = DecodeError::Truncated { pc };
    let w0 = code
        .get(..4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .ok_or(truncated)?;
    let words = Words { code, pc, w0 };
    let mut inst = decode_encoding(&words)?;
    // DPP extra dword (VOP1/VOP2/VOPC and VOP3 forms), then the literal.
    if inst.is_valu() && inst.format != Format::Vopd && inst.format != Format::Vop3p {
        attach_dpp(&mut inst, &words)?;
    }
    if uses_literal(&inst) && inst.literal.is_none() {
        inst.literal = Some(words.word((inst.len / 4) as usize)?);
        inst.len += 4;
    }
    Ok(inst)
}

/// The encoding family `w0` selects, decoded from its fixed dwords (the
/// first, and the second of the 64-bit encodings). The tests overlap
/// (SOPK's and SOP1/SOPC/SOPP's prefixes start with SOP2's), so their order
/// matters.
fn decode_encoding(words: &Words) -> Result<Inst, DecodeError> {
    let w0 = words.w0;
    if w0 >> 23 == 0x17D {
        decode_sop1(words)
    } else if w0 >> 23 == 0x17E {
        decode_sopc(words)
    } else if w0 >> 23 == 0x17F {
        decode_sopp(words)
    } else if w0 >> 28 == 0xB {
        decode_sopk(words)
    } else if w0 >> 30 == 0b10 {
        decode_sop2(words)
    } else if w0 >> 25 == 0x3F {
        decode_vop1(words)
    } else if w0 >> 25 == 0x3E {
        decode_vopc(words)
    } else if w0 >> 31 == 0 {
        decode_vop2(words)
    } else {
        decode_64bit_encoding(words)
    }
}

/// The encodings with a second fixed dword: VOP3, VOPD, SMEM, DS,
/// FLAT/SCRATCH/GLOBAL, MUBUF, VOP3P.
fn decode_64bit_encoding(words: &Words) -> Result<Inst, DecodeError> {
    let w0 = words.w0;
    match w0 >> 26 {
        0x35 => decode_vop3(w0, words.word(1)?).ok_or_else(|| words.unknown("VOP3")),
        0x32 => decode_vopd(w0, words.word(1)?).ok_or_else(|| words.unknown("VOPD")),
        0x3D => decode_smem(words),
        0x36 => decode_ds(words),
        0x37 => decode_flat(words),
        0x38 => decode_mubuf(words),
        _ if w0 >> 24 == 0xCC => {
            decode_vop3p(w0, words.word(1)?).ok_or_else(|| words.unknown("VOP3P"))
        }
        _ => Err(words.unknown("instruction")),
    }
}

fn decode_sop1(words: &Words) -> Result<Inst, DecodeError> {
    let w0 = words.w0;
    let op = bits(w0, 15, 8) as usize;
    let name = words.name(&opcodes::SOP1, op, "SOP1")?;
    let mut i = Inst::new(Format::Sop1, op as u16, name);
    i.dst = bits(w0, 22, 16) as u16;
    i.src[0] = bits(w0, 7, 0) as u16;
    Ok(i)
}

fn decode_sopc(words: &Words) -> Result<Inst, DecodeError> {
    let w0 = words.w0;
    let op = bits(w0, 22, 16) as usize;
    let name = words.name(&opcodes::SOPC, op, "SOPC")?;
    let mut i = Inst::new(Format::Sopc, op as u16, name);
    i.src[0] = bits(w0, 7, 0) as u16;
    i.src[1] = bits(w0, 15, 8) as u16;
    Ok(i)
}

fn decode_sopp(words: &Words) -> Result<Inst, DecodeError> {
    let w0 = words.w0;
    let op = bits(w0, 22, 16) as usize;
    let name = words.name(&opcodes::SOPP, op, "SOPP")?;
    let mut i = Inst::new(Format::Sopp, op as u16, name);
    i.simm16 = w0 as u16;
    Ok(i)
}

fn decode_sopk(words: &Words) -> Result<Inst, DecodeError> {
    let w0 = words.w0;
    let op = bits(w0, 27, 23) as usize;
    let name = words.name(&opcodes::SOPK, op, "SOPK")?;
    let mut i = Inst::new(Format::Sopk, op as u16, name);
    i.dst = bits(w0, 22, 16) as u16;
    i.simm16 = w0 as u16;
    if name == "s_setreg_imm32_b32" {
        i.literal = Some(words.word(1)?);
        i.len = 8;
    }
    Ok(i)
}

fn decode_sop2(words: &Words) -> Result<Inst, DecodeError> {
    let w0 = words.w0;
    let op = bits(w0, 29, 23) as usize;
    let name = words.name(&opcodes::SOP2, op, "SOP2")?;
    let mut i = Inst::new(Format::Sop2, op as u16, name);
    i.dst = bits(w0, 22, 16) as u16;
    i.src[0] = bits(w0, 7, 0) as u16;
    i.src[1] = bits(w0, 15, 8) as u16;
    Ok(i)
}

fn decode_vop1(words: &Words) -> Result<Inst, DecodeError> {
    let w0 = words.w0;
    let op = bits(w0, 16, 9) as usize;
    let name = words.name(&opcodes::VOP1, op, "VOP1")?;
    let mut i = Inst::new(Format::Vop1, 384 + op as u16, name);
    i.dst = bits(w0, 24, 17) as u16;
    i.src[0] = bits(w0, 8, 0) as u16;
    Ok(i)
}

fn decode_vopc(words: &Words) -> Result<Inst, DecodeError> {
    let w0 = words.w0;
    let op = bits(w0, 24, 17) as usize;
    let name = words.name(&opcodes::VOPC, op, "VOPC")?;
    let mut i = Inst::new(Format::Vopc, op as u16, name);
    i.sdst = src::VCC_LO;
    i.src[0] = bits(w0, 8, 0) as u16;
    i.src[1] = src::VGPR0 + bits(w0, 16, 9) as u16;
    Ok(i)
}

fn decode_vop2(words: &Words) -> Result<Inst, DecodeError> {
    let w0 = words.w0;
    let op = bits(w0, 30, 25) as usize;
    let name = words.name(&opcodes::VOP2, op, "VOP2")?;
    let mut i = Inst::new(Format::Vop2, 256 + op as u16, name);
    i.dst = bits(w0, 24, 17) as u16;
    i.src[0] = bits(w0, 8, 0) as u16;
    i.src[1] = src::VGPR0 + bits(w0, 16, 9) as u16;
    if vop2_has_inline_literal(name) {
        i.literal = Some(words.word(1)?);
        i.len = 8;
    }
    Ok(i)
}

fn decode_smem(words: &Words) -> Result<Inst, DecodeError> {
    let w0 = words.w0;
    let op = bits(w0, 25, 18) as usize;
    let name = words.name(&opcodes::SMEM, op, "SMEM")?;
    let w1 = words.word(1)?;
    let mut i = Inst::new(Format::Smem, op as u16, name);
    i.len = 8;
    i.dst = bits(w0, 12, 6) as u16;
    i.saddr = (bits(w0, 5, 0) << 1) as u16;
    i.glc = w0 & (1 << 14) != 0;
    i.dlc = w0 & (1 << 13) != 0;
    i.offset = sext(bits(w1, 20, 0), 21);
    i.src[0] = bits(w1, 31, 25) as u16; // soffset
    Ok(i)
}

fn decode_ds(words: &Words) -> Result<Inst, DecodeError> {
    let w0 = words.w0;
    let op = bits(w0, 25, 18) as usize;
    let name = words.name(&opcodes::DS, op, "DS")?;
    let w1 = words.word(1)?;
    let mut i = Inst::new(Format::Ds, op as u16, name);
    i.len = 8;
    i.offset = bits(w0, 7, 0) as i32;
    i.offset1 = bits(w0, 15, 8) as u8;
    i.gds = w0 & (1 << 17) != 0;
    i.addr = bits(w1, 7, 0) as u16;
    i.data0 = bits(w1, 15, 8) as u16;
    i.data1 = bits(w1, 23, 16) as u16;
    i.dst = bits(w1, 31, 24) as u16;
    Ok(i)
}

/// FLAT, SCRATCH and GLOBAL share one encoding; bits 17:16 select the segment.
fn decode_flat(words: &Words) -> Result<Inst, DecodeError> {
    let w0 = words.w0;
    let op = bits(w0, 24, 18) as usize;
    let (format, table, fname) = match bits(w0, 17, 16) {
        0 => (Format::Flat, &opcodes::FLAT[..], "FLAT"),
        1 => (Format::Scratch, &opcodes::SCRATCH[..], "SCRATCH"),
        2 => (Format::Global, &opcodes::GLOBAL[..], "GLOBAL"),
        _ => return Err(words.unknown("FLAT")),
    };
    let name = words.name(table, op, fname)?;
    let w1 = words.word(1)?;
    let mut i = Inst::new(format, op as u16, name);
    i.len = 8;
    i.offset = sext(bits(w0, 12, 0), 13);
    i.dlc = w0 & (1 << 13) != 0;
    i.glc = w0 & (1 << 14) != 0;
    i.slc = w0 & (1 << 15) != 0;
    i.addr = bits(w1, 7, 0) as u16;
    i.data0 = bits(w1, 15, 8) as u16;
    i.saddr = bits(w1, 22, 16) as u16;
    i.sve = w1 & (1 << 23) != 0;
    i.dst = bits(w1, 31, 24) as u16;
    Ok(i)
}

fn decode_mubuf(words: &Words) -> Result<Inst, DecodeError> {
    let w0 = words.w0;
    let op = bits(w0, 25, 18) as usize;
    let name = words.name(&opcodes::MUBUF, op, "MUBUF")?;
    let w1 = words.word(1)?;
    let mut i = Inst::new(Format::Mubuf, op as u16, name);
    i.len = 8;
    i.offset = bits(w0, 11, 0) as i32;
    i.slc = w0 & (1 << 12) != 0;
    i.dlc = w0 & (1 << 13) != 0;
    i.glc = w0 & (1 << 14) != 0;
    i.addr = bits(w1, 7, 0) as u16;
    i.data0 = bits(w1, 15, 8) as u16;
    // vdata is the destination of loads and returning atomics too.
    i.dst = i.data0;
    i.saddr = (bits(w1, 20, 16) << 2) as u16;
    i.offen = w1 & (1 << 22) != 0;
    i.idxen = w1 & (1 << 23) != 0;
    i.src[0] = bits(w1, 31, 24) as u16;
    Ok(i)
}

/// Reads the DPP dword a VALU instruction's `src0` of DPP16/DPP8 announces
/// (after its fixed dwords) and puts the real `src0` VGPR in its place.
fn attach_dpp(inst: &mut Inst, words: &Words) -> Result<(), DecodeError> {
    let dpp_at = (inst.len / 4) as usize;
    match inst.src[0] {
        src::DPP16 => {
            let d = words.word(dpp_at)?;
            inst.src[0] = src::VGPR0 + (d & 0xFF) as u16;
            inst.dpp = Some(Dpp::Dpp16 {
                ctrl: bits(d, 16, 8) as u16,
                fi: d & (1 << 18) != 0,
                bound_ctrl: d & (1 << 19) != 0,
                row_mask: bits(d, 31, 28) as u8,
                bank_mask: bits(d, 27, 24) as u8,
            });
            if inst.format != Format::Vop3 {
                inst.neg |= (bits(d, 20, 20) | (bits(d, 22, 22) << 1)) as u8;
                inst.abs |= (bits(d, 21, 21) | (bits(d, 23, 23) << 1)) as u8;
            }
            inst.len += 4;
        }
        src::DPP8 | src::DPP8FI => {
            let d = words.word(dpp_at)?;
            let fi = inst.src[0] == src::DPP8FI;
            inst.src[0] = src::VGPR0 + (d & 0xFF) as u16;
            let mut sel = [0u8; 8];
            for (k, s) in sel.iter_mut().enumerate() {
                *s = ((d >> (8 + 3 * k)) & 7) as u8;
            }
            inst.dpp = Some(Dpp::Dpp8 { sel, fi });
            inst.len += 4;
        }
        _ => {}
    }
    Ok(())
}

/// Whether a literal dword follows the instruction: a source names it, or a
/// VOPD half is a madmk/madak form (whose constant is always the literal).
fn uses_literal(inst: &Inst) -> bool {
    match inst.format {
        Format::Sop1
        | Format::Sop2
        | Format::Sopc
        | Format::Vop1
        | Format::Vop2
        | Format::Vopc
        | Format::Vop3
        | Format::Vop3p => inst.src.contains(&src::LITERAL),
        Format::Vopd => inst.vopd.as_ref().is_some_and(|h| {
            h.iter().any(|x| {
                x.src0 == src::LITERAL || x.name.contains("fmaak") || x.name.contains("fmamk")
            })
        }),
        _ => false,
    }
}

/// Names of VOP3 opcodes with a scalar destination (VOP3 SD encoding).
pub fn is_vop3_sd(name: &str) -> bool {
    matches!(
        name,
        "v_add_co_u32"
            | "v_sub_co_u32"
            | "v_subrev_co_u32"
            | "v_add_co_ci_u32"
            | "v_sub_co_ci_u32"
            | "v_subrev_co_ci_u32"
            | "v_div_scale_f32"
            | "v_div_scale_f64"
            | "v_mad_u64_u32"
            | "v_mad_i64_i32"
    )
}

fn decode_vop3(w0: u32, w1: u32) -> Option<Inst> {
    let op = ((w0 >> 16) & 0x3FF) as u16;
    let name = table_name(&opcodes::VOP3, op as usize)?;
    let mut i = Inst::new(Format::Vop3, op, name);
    i.len = 8;
    i.dst = (w0 & 0xFF) as u16;
    i.clamp = w0 & (1 << 15) != 0;
    if is_vop3_sd(name) {
        i.sdst = ((w0 >> 8) & 0x7F) as u16;
    } else {
        i.abs = ((w0 >> 8) & 7) as u8;
        i.opsel = ((w0 >> 11) & 0xF) as u8;
    }
    if op < 256 {
        // VOPC promoted: vdst is an SGPR (pair) code.
        i.sdst = i.dst;
    }
    i.src = [
        (w1 & 0x1FF) as u16,
        ((w1 >> 9) & 0x1FF) as u16,
        ((w1 >> 18) & 0x1FF) as u16,
    ];
    i.omod = ((w1 >> 27) & 3) as u8;
    i.neg = ((w1 >> 29) & 7) as u8;
    Some(i)
}

fn decode_vop3p(w0: u32, w1: u32) -> Option<Inst> {
    let op = ((w0 >> 16) & 0x7F) as u16;
    let name = table_name(&opcodes::VOP3P, op as usize)?;
    let mut i = Inst::new(Format::Vop3p, op, name);
    i.len = 8;
    i.dst = (w0 & 0xFF) as u16;
    i.neg_hi = ((w0 >> 8) & 7) as u8;
    i.opsel = ((w0 >> 11) & 7) as u8;
    i.opsel_hi = (((w1 >> 27) & 3) | (((w0 >> 14) & 1) << 2)) as u8;
    i.clamp = w0 & (1 << 15) != 0;
    i.src = [
        (w1 & 0x1FF) as u16,
        ((w1 >> 9) & 0x1FF) as u16,
        ((w1 >> 18) & 0x1FF) as u16,
    ];
    i.neg = ((w1 >> 29) & 7) as u8;
    Some(i)
}

fn decode_vopd(w0: u32, w1: u32) -> Option<Inst> {
    let opx = ((w0 >> 22) & 0xF) as u8;
    let opy = ((w0 >> 17) & 0x1F) as u8;
    let namex = table_name(&opcodes::VOPD_X, opx as usize)?;
    let namey = table_name(&opcodes::VOPD_Y, opy as usize)?;
    let vdstx = ((w1 >> 24) & 0xFF) as u16;
    let vdsty = ((((w1 >> 17) & 0x7F) << 1) as u16) | ((vdstx & 1) ^ 1);
    let x = VopdHalf {
        name: namex,
        op: opx,
        vdst: vdstx,
        src0: (w0 & 0x1FF) as u16,
        vsrc1: ((w0 >> 9) & 0xFF) as u16,
    };
    let y = VopdHalf {
        name: namey,
        op: opy,
        vdst: vdsty,
        src0: (w1 & 0x1FF) as u16,
        vsrc1: ((w1 >> 9) & 0xFF) as u16,
    };
    let mut i = Inst::new(Format::Vopd, 0, "v_dual");
    i.len = 8;
    i.vopd = Some([x, y]);
    Some(i)
}

/// Decodes a whole code range linearly (AMDGPU `.text` holds no data).
pub fn decode_all(code: &[u8], base: u64) -> Vec<(u64, Result<Inst, DecodeError>)> {
    let mut out = Vec::new();
    let mut off = 0usize;
    while off + 4 <= code.len() {
        let pc = base + off as u64;
        let r = decode(&code[off..], pc);
        let len = r.as_ref().map(|i| i.len as usize).unwrap_or(4);
        out.push((pc, r));
        off += len;
    }
    out
}
