//! Instruction execution, by family: `scalar` (SALU), `vector` (VALU incl.
//! compares, conversions, transcendentals, DPP and cross-lane ops), `packed`
//! (16-bit VALU and VOP3P packed math),
//! `memory` (SMEM, DS, FLAT/GLOBAL/SCRATCH, atomics) and `control`
//! (branches, EXEC management, waits, barriers, messages). Each family
//! exports an `OPS` table (name -> handler) searched once per decoded
//! instruction; an instruction without a handler faults by name.

pub mod control;
pub mod memory;
pub mod packed;
pub mod scalar;
pub mod vector;

use crate::decode::{Dpp, Inst, src};
use crate::fault::ExecError;
use crate::memory::GlobalMemory;
use crate::wave::Wave;

/// What the scheduler does after an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Next,
    Barrier,
    End,
}

pub type Handler = fn(&mut Ctx<'_>, &Inst) -> Result<Flow, ExecError>;

/// The state an instruction executes against.
pub struct Ctx<'a> {
    pub wave: &'a mut Wave,
    pub mem: &'a mut GlobalMemory,
    pub lds: &'a mut [u8],
    /// Global address of the instruction.
    pub pc: u64,
    /// Where execution continues; branches overwrite it.
    pub next_pc: u64,
}

/// Looks up the handler of a decoded instruction in the family tables.
pub fn handler_for(inst: &Inst) -> Option<Handler> {
    use crate::decode::Format::*;
    let table: &[(&str, Handler)] = match inst.format {
        Sop1 | Sop2 | Sopk | Sopc => {
            if let Some(h) = lookup(control::OPS, inst.name) {
                return Some(h);
            }
            scalar::OPS
        }
        Sopp => control::OPS,
        Smem => memory::OPS,
        Mubuf => {
            if let Some(h) = lookup(memory::OPS, inst.name) {
                return Some(h);
            }
            return memory::handler(inst);
        }
        Ds | Flat | Global | Scratch => return memory::handler(inst),
        Vopd => {
            let known = inst
                .vopd
                .is_some_and(|h| h.iter().all(|x| x.name != "v_dual_dot2acc_f32_bf16"));
            return known.then_some(vector::vopd as Handler);
        }
        Vop1 | Vop2 | Vopc | Vop3 | Vop3p => {
            if inst.name.starts_with("v_cmp") {
                return Some(vector::compare);
            }
            if let Some(h) = lookup(packed::OPS, inst.name) {
                return Some(h);
            }
            vector::OPS
        }
    };
    lookup(table, inst.name)
}

/// Tables are searched once per decoded instruction (the result is cached
/// with the decode), so a linear search is enough.
fn lookup(table: &[(&str, Handler)], name: &str) -> Option<Handler> {
    table.iter().find(|(n, _)| *n == name).map(|(_, h)| *h)
}

/// Inline constant of a source code for a 32-bit operand, if it is one.
pub fn inline_const32(code: u16) -> Option<u32> {
    Some(match code {
        128..=192 => (code - 128) as u32,
        193..=208 => (-((code - 192) as i32)) as u32,
        240 => 0.5f32.to_bits(),
        241 => (-0.5f32).to_bits(),
        242 => 1.0f32.to_bits(),
        243 => (-1.0f32).to_bits(),
        244 => 2.0f32.to_bits(),
        245 => (-2.0f32).to_bits(),
        246 => 4.0f32.to_bits(),
        247 => (-4.0f32).to_bits(),
        248 => 0x3e22_f983, // 1/(2*pi)
        _ => return None,
    })
}

/// Inline constant for a 64-bit operand: integers sign-extended, floats as f64.
pub fn inline_const64(code: u16) -> Option<u64> {
    Some(match code {
        128..=192 => (code - 128) as u64,
        193..=208 => (-((code - 192) as i64)) as u64,
        240 => 0.5f64.to_bits(),
        241 => (-0.5f64).to_bits(),
        242 => 1.0f64.to_bits(),
        243 => (-1.0f64).to_bits(),
        244 => 2.0f64.to_bits(),
        245 => (-2.0f64).to_bits(),
        246 => 4.0f64.to_bits(),
        247 => (-4.0f64).to_bits(),
        248 => 0x3fc4_5f30_6dc9_c882,
        _ => return None,
    })
}

/// Inline constant for a 16-bit operand.
pub fn inline_const16(code: u16) -> Option<u32> {
    Some(match code {
        128..=192 => (code - 128) as u32,
        193..=208 => (-((code - 192) as i32)) as u32 & 0xFFFF,
        240 => 0x3800,
        241 => 0xB800,
        242 => 0x3C00,
        243 => 0xBC00,
        244 => 0x4000,
        245 => 0xC000,
        246 => 0x4400,
        247 => 0xC400,
        248 => 0x3118,
        _ => return None,
    })
}

impl Ctx<'_> {
    /// A scalar 32-bit source (SALU or a uniform VALU operand).
    pub fn scalar32(&self, inst: &Inst, code: u16) -> u32 {
        match code {
            src::LITERAL => inst.literal.unwrap_or(0),
            src::SHARED_BASE => (crate::memory::SHARED_APERTURE >> 32) as u32,
            src::SHARED_LIMIT => {
                ((crate::memory::SHARED_APERTURE + crate::memory::APERTURE_SIZE - 1) >> 32) as u32
            }
            src::PRIVATE_BASE => (crate::memory::PRIVATE_APERTURE >> 32) as u32,
            src::PRIVATE_LIMIT => {
                ((crate::memory::PRIVATE_APERTURE + crate::memory::APERTURE_SIZE - 1) >> 32) as u32
            }
            _ => inline_const32(code).unwrap_or_else(|| self.wave.sreg(code)),
        }
    }

    /// A scalar 64-bit source. `fp`: the operand is an f64 (literal is the high half).
    pub fn scalar64(&self, inst: &Inst, code: u16, fp: bool) -> u64 {
        match code {
            src::LITERAL => {
                let l = inst.literal.unwrap_or(0);
                if fp {
                    (l as u64) << 32
                } else {
                    l as i32 as i64 as u64
                }
            }
            src::SHARED_BASE => crate::memory::SHARED_APERTURE,
            src::SHARED_LIMIT => crate::memory::SHARED_APERTURE + crate::memory::APERTURE_SIZE - 1,
            src::PRIVATE_BASE => crate::memory::PRIVATE_APERTURE,
            src::PRIVATE_LIMIT => {
                crate::memory::PRIVATE_APERTURE + crate::memory::APERTURE_SIZE - 1
            }
            src::SCC | src::VCCZ | src::EXECZ => self.wave.sreg(code) as u64,
            _ => inline_const64(code).unwrap_or_else(|| self.wave.sreg64(code)),
        }
    }

    pub fn set_scc(&mut self, v: bool) {
        self.wave.scc = v;
    }

    pub fn exec(&self) -> u64 {
        self.wave.exec()
    }

    /// The lane a DPP source operand reads for `lane`: `Some(src)`, or
    /// `None` when the lane gets `bound_ctrl` zero / is not written.
    pub fn dpp_source(&self, dpp: &Dpp, lane: usize) -> DppSource {
        let exec = self.wave.exec();
        let n = self.wave.wave_size as usize;
        let (src_lane, fi) = match *dpp {
            Dpp::Dpp8 { sel, fi } => ((lane & !7) | sel[lane & 7] as usize, fi),
            Dpp::Dpp16 { ctrl, fi, .. } => {
                let row = lane & !15;
                let r = lane & 15;
                let s: Option<usize> = match ctrl {
                    0x000..=0x0FF => Some((lane & !3) | ((ctrl as usize >> ((lane & 3) * 2)) & 3)),
                    0x101..=0x10F => {
                        let k = (ctrl & 0xF) as usize;
                        (r + k < 16).then_some(lane + k)
                    }
                    0x111..=0x11F => {
                        let k = (ctrl & 0xF) as usize;
                        (r >= k).then(|| lane - k)
                    }
                    0x121..=0x12F => Some(row | ((r + 16 - (ctrl & 0xF) as usize) & 15)),
                    0x140 => Some(row | (15 - r)),
                    0x141 => Some((lane & !7) | (7 - (lane & 7))),
                    0x150..=0x15F => Some(row | (ctrl & 0xF) as usize),
                    0x160..=0x16F => Some(row | (r ^ (ctrl & 0xF) as usize)),
                    _ => None,
                };
                match s {
                    Some(s) => (s, fi),
                    None => return DppSource::Invalid,
                }
            }
        };
        if src_lane >= n || (!fi && exec >> src_lane & 1 == 0) {
            DppSource::Invalid
        } else {
            DppSource::Lane(src_lane)
        }
    }

    /// Whether DPP row/bank masks let `lane` be written.
    pub fn dpp_writes(dpp: &Dpp, lane: usize) -> bool {
        match *dpp {
            Dpp::Dpp16 {
                row_mask,
                bank_mask,
                ..
            } => row_mask >> ((lane >> 4) & 3) & 1 == 1 && bank_mask >> ((lane >> 2) & 3) & 1 == 1,
            Dpp::Dpp8 { .. } => true,
        }
    }

    /// A 32-bit VALU source for `lane` (DPP applies to source 0).
    #[inline]
    pub fn vsrc32(&self, inst: &Inst, i: usize, lane: usize) -> u32 {
        let code = inst.src[i];
        if code >= src::VGPR0 {
            let mut l = lane;
            if i == 0
                && let Some(d) = &inst.dpp
            {
                match self.dpp_source(d, lane) {
                    DppSource::Lane(s) => l = s,
                    DppSource::Invalid => return 0,
                }
            }
            self.wave.vgpr(code - src::VGPR0, l)
        } else {
            self.scalar32(inst, code)
        }
    }

    /// A 64-bit VALU source for `lane`.
    #[inline]
    pub fn vsrc64(&self, inst: &Inst, i: usize, lane: usize, fp: bool) -> u64 {
        let code = inst.src[i];
        if code >= src::VGPR0 {
            self.wave.vgpr64(code - src::VGPR0, lane)
        } else {
            self.scalar64(inst, code, fp)
        }
    }

    /// A 16-bit VALU source: the low or (op_sel) high half of a VGPR.
    pub fn vsrc16(&self, inst: &Inst, i: usize, lane: usize) -> u32 {
        let code = inst.src[i];
        if code >= src::VGPR0 || (code < 128 && code != src::NULL) || code == src::LITERAL {
            let v = self.vsrc32(inst, i, lane);
            if inst.opsel >> i & 1 == 1 {
                v >> 16
            } else {
                v & 0xFFFF
            }
        } else {
            inline_const16(code).unwrap_or(0)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DppSource {
    Lane(usize),
    Invalid,
}
