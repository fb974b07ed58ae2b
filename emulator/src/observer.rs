//! The observer hook: a callback before every warp-instruction, for tracing
//! and interactive stepping (`prlxctl emu run --trace/--step`).

use std::fmt;

use crate::semantics::ScalarType;

/// Receives every warp-instruction before it executes.
pub trait Observer {
    fn on_warp_instruction(&mut self, step: &WarpStep<'_>) -> Control;
}

/// What the launch does after an observer call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Continue,
    /// Stop the launch; it returns [`crate::LaunchError::Aborted`].
    Abort,
}

/// A register's value as a lane sees it, with its declared type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegValue {
    /// The value in the low bits (a predicate is 0 or 1).
    pub bits: u64,
    pub ty: ScalarType,
}

impl fmt::Display for RegValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.bits & self.ty.mask();
        match self.ty {
            ScalarType::Pred => write!(f, "{}", v & 1),
            ScalarType::F32 => write!(f, "{} (0x{v:08x})", f32::from_bits(v as u32)),
            ScalarType::F64 => write!(f, "{} (0x{v:016x})", f64::from_bits(v)),
            ScalarType::S8 => write!(f, "{}", v as u8 as i8),
            ScalarType::S16 => write!(f, "{}", v as u16 as i16),
            ScalarType::S32 => write!(f, "{}", v as u32 as i32),
            ScalarType::S64 => write!(f, "{}", v as i64),
            ScalarType::U8 | ScalarType::U16 | ScalarType::U32 | ScalarType::U64 => {
                write!(f, "{v}")
            }
            _ => write!(f, "0x{v:x}"),
        }
    }
}

/// Where a named register lives in a warp's register file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RegSlot {
    pub name: String,
    pub ty: ScalarType,
    /// Row in the value file, or in the predicate file for `.pred`.
    pub index: u32,
}

/// Read access to one warp's registers, for observers.
#[derive(Clone, Copy)]
pub(crate) struct RegisterView<'a> {
    pub slots: &'a [RegSlot],
    /// `values[row * 32 + lane]`.
    pub values: &'a [u64],
    /// `preds[row]`: one bit per lane.
    pub preds: &'a [u32],
}

impl RegisterView<'_> {
    fn read(&self, slot: &RegSlot, lane: u32) -> Option<RegValue> {
        let bits = if slot.ty == ScalarType::Pred {
            (*self.preds.get(slot.index as usize)? >> lane) as u64 & 1
        } else {
            *self.values.get(slot.index as usize * 32 + lane as usize)?
        };
        Some(RegValue { bits, ty: slot.ty })
    }
}

/// One warp-instruction about to execute.
pub struct WarpStep<'a> {
    pub block: [u32; 3],
    pub warp_in_block: u32,
    /// Index of the instruction in its module's decoded code.
    pub pc: usize,
    pub ptx_line: u32,
    /// Lanes that execute this instruction (before its guard predicate).
    pub active_mask: u32,
    /// The instruction as printed.
    pub text: &'a str,
    /// Name of the function the instruction belongs to.
    pub function: &'a str,
    /// The CUDA/Triton source position from the last `.loc`: `(path, line)`.
    pub source: Option<(&'a str, u32)>,
    pub(crate) regs: RegisterView<'a>,
}

impl WarpStep<'_> {
    /// The value of register `name` (`%r1`, `%p2`) in `lane`, if the current
    /// function declares it.
    pub fn register(&self, lane: u32, name: &str) -> Option<RegValue> {
        if lane >= 32 {
            return None;
        }
        let slot = self.regs.slots.iter().find(|s| s.name == name)?;
        self.regs.read(slot, lane)
    }

    /// Every register of the current function in `lane`, in declaration order.
    pub fn registers(&self, lane: u32) -> Vec<(String, RegValue)> {
        if lane >= 32 {
            return Vec::new();
        }
        self.regs
            .slots
            .iter()
            .filter_map(|s| Some((s.name.clone(), self.regs.read(s, lane)?)))
            .collect()
    }
}
