//! Errors: code-object parsing, and faults raised while a kernel runs
//! (precise: kernel, workgroup, wave, lane, PC, address, instruction).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodeObjectError {
    #[error("not an ELF file")]
    NotElf,
    #[error("malformed code object: {0}")]
    Malformed(String),
    #[error("code object targets EF_AMDGPU_MACH {0:#x}, not an RDNA3 (gfx11) GPU")]
    UnsupportedTarget(u32),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultKind {
    /// An access outside every allocation (global/flat), LDS or scratch bounds.
    Memory {
        space: &'static str,
        write: bool,
        size: u32,
    },
    /// A misaligned access the hardware would not complete.
    Misaligned {
        space: &'static str,
    },
    /// The decoder met bytes that are not a gfx1100 instruction.
    Decode(String),
    /// A real instruction this emulator does not execute (named).
    Unsupported(String),
    /// `s_trap`, or a kernel that runs away / deadlocks at a barrier.
    Trap(String),
    Timeout(u64),
    Deadlock(String),
    /// Launch-time errors: unknown module or kernel, bad geometry.
    Launch(String),
    /// The tracing hook asked to stop.
    Aborted,
    /// The host service ([`crate::device::Service`]) refused a request.
    Service(String),
}

/// A fault with everything needed to find it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub kernel: String,
    pub workgroup: Option<[u32; 3]>,
    pub wave: Option<u32>,
    pub lane: Option<u32>,
    /// Address of the faulting instruction, as an offset in the code object
    /// (the address `llvm-objdump` prints).
    pub pc: Option<u64>,
    pub addr: Option<u64>,
    /// The instruction in LLVM syntax.
    pub inst: Option<String>,
    /// Where a faulting global address lies relative to the nearest allocation.
    pub detail: Option<String>,
}

impl Fault {
    pub fn launch(kernel: &str, msg: impl Into<String>) -> Fault {
        Fault {
            kind: FaultKind::Launch(msg.into()),
            kernel: kernel.to_string(),
            workgroup: None,
            wave: None,
            lane: None,
            pc: None,
            addr: None,
            inst: None,
            detail: None,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel {}", self.kernel)?;
        if let Some([x, y, z]) = self.workgroup {
            write!(f, ", workgroup ({x},{y},{z})")?;
        }
        if let Some(w) = self.wave {
            write!(f, ", wave {w}")?;
        }
        if let Some(l) = self.lane {
            write!(f, ", lane {l}")?;
        }
        if let Some(pc) = self.pc {
            write!(f, ", pc {pc:#x}")?;
        }
        if let Some(i) = &self.inst {
            write!(f, " ({i})")?;
        }
        write!(f, ": ")?;
        match &self.kind {
            FaultKind::Memory { space, write, size } => {
                write!(
                    f,
                    "{space} memory fault: {} of {size} bytes at {:#x} is outside every allocation",
                    if *write { "write" } else { "read" },
                    self.addr.unwrap_or(0)
                )?;
                if let Some(d) = &self.detail {
                    write!(f, " ({d})")?;
                }
                Ok(())
            }
            FaultKind::Misaligned { space } => {
                write!(
                    f,
                    "misaligned {space} access at {:#x}",
                    self.addr.unwrap_or(0)
                )
            }
            FaultKind::Decode(m) => write!(f, "cannot decode: {m}"),
            FaultKind::Unsupported(n) => {
                write!(f, "instruction {n} is not supported by the emulator")
            }
            FaultKind::Trap(m) => write!(f, "trap: {m}"),
            FaultKind::Timeout(n) => {
                write!(f, "gave up after {n} wave-instructions (runaway loop?)")
            }
            FaultKind::Deadlock(m) => write!(f, "deadlock: {m}"),
            FaultKind::Launch(m) => write!(f, "{m}"),
            FaultKind::Aborted => write!(f, "stopped by the debugger"),
            FaultKind::Service(m) => write!(f, "host service: {m}"),
        }
    }
}

impl std::error::Error for Fault {}

/// A fault raised inside an instruction handler; the scheduler adds the
/// wave, PC and kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecError {
    pub kind: FaultKind,
    pub lane: Option<u32>,
    pub addr: Option<u64>,
}

impl ExecError {
    pub fn unsupported(name: &str) -> ExecError {
        ExecError {
            kind: FaultKind::Unsupported(name.to_string()),
            lane: None,
            addr: None,
        }
    }
    pub fn memory(
        space: &'static str,
        write: bool,
        size: u32,
        lane: Option<u32>,
        addr: u64,
    ) -> ExecError {
        ExecError {
            kind: FaultKind::Memory { space, write, size },
            lane,
            addr: Some(addr),
        }
    }
}
