//! A loaded module: decoded code, register-file layout, variables and
//! kernel metadata. Built once by the decoder (`crate::decode::load`); the
//! machine only reads it.

use std::collections::HashMap;

use prlx_ptx::ast;

use crate::error::LoadDiagnostic;
use crate::instr::Inst;
use crate::observer::RegSlot;

/// Fake addresses of functions, for function pointers and indirect calls:
/// a function's address is this base plus its index in [`Program::funcs`].
pub const FUNC_ADDR_BASE: u64 = 0x0000_4000_0000_0000;

/// Static facts about a kernel, as `cuFuncGetAttribute` reports them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    pub name: String,
    pub params: Vec<ParamInfo>,
    /// Size of the packed parameter buffer.
    pub param_bytes: u32,
    pub static_shared_bytes: u32,
    pub local_bytes_per_thread: u32,
    pub num_regs: u32,
    /// From `.maxntid`/`.reqntid`, or the device limit.
    pub max_threads_per_block: u32,
    pub reqntid: Option<[u32; 3]>,
    /// `.reqnctapercluster`: the cluster shape every launch uses.
    pub reqnctapercluster: Option<[u32; 3]>,
    /// `.explicitcluster`: the kernel must be launched with clusters.
    pub explicit_cluster: bool,
    /// `.maxclusterrank`: the most CTAs a cluster of this kernel may have.
    pub max_cluster_rank: Option<u32>,
    pub ptx_version: (u32, u32),
    pub target_sm: u32,
}

/// One kernel parameter inside the packed parameter buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamInfo {
    pub name: String,
    pub offset: u32,
    pub size: u32,
    pub align: u32,
}

/// Rows of the value file that hold special registers, filled per warp.
pub mod sreg {
    pub const TID: u32 = 0; // x, y, z
    pub const NTID: u32 = 3;
    pub const CTAID: u32 = 6;
    pub const NCTAID: u32 = 9;
    pub const LANEID: u32 = 12;
    pub const WARPID: u32 = 13;
    pub const NWARPID: u32 = 14;
    pub const SMID: u32 = 15;
    pub const NSMID: u32 = 16;
    pub const GRIDID: u32 = 17;
    pub const LANEMASK_EQ: u32 = 18;
    pub const LANEMASK_LE: u32 = 19;
    pub const LANEMASK_LT: u32 = 20;
    pub const LANEMASK_GE: u32 = 21;
    pub const LANEMASK_GT: u32 = 22;
    pub const DYNAMIC_SMEM_SIZE: u32 = 23;
    pub const TOTAL_SMEM_SIZE: u32 = 24;
    /// Always zero: `%pm*` and the other `%envreg*`.
    pub const ZERO: u32 = 25;
    /// Written by `_` destinations, never read.
    pub const SINK: u32 = 26;
    /// Carry flags of `add.cc`/`addc` (bit 0).
    pub const CARRY: u32 = 27;
    /// `%envreg1`/`%envreg2`: the high and low halves of the grid workspace
    /// address of a cooperative launch (0 otherwise), which
    /// `cooperative_groups::this_grid()` reads (its `driver_abi.h`).
    pub const ENVREG1: u32 = 28;
    pub const ENVREG2: u32 = 29;
    /// `%cluster_ctaid`, `%cluster_nctaid`, `%clusterid`, `%nclusterid`
    /// (x, y, z each), `%cluster_ctarank`, `%cluster_nctarank`.
    pub const CLUSTER_CTAID: u32 = 30;
    pub const CLUSTER_NCTAID: u32 = 33;
    pub const CLUSTERID: u32 = 36;
    pub const NCLUSTERID: u32 = 39;
    pub const CLUSTER_CTARANK: u32 = 42;
    pub const CLUSTER_NCTARANK: u32 = 43;
    /// 1 when the launch has clusters by the launch's or the kernel's
    /// choice, 0 for a plain launch's implicit 1x1x1 clusters
    /// (`%is_explicit_cluster`, a predicate: `mov.pred` reads it).
    pub const IS_EXPLICIT_CLUSTER: u32 = 44;
    pub const COUNT: u32 = 45;
}

/// A function (kernel or `.func`) of the module.
#[derive(Debug, Clone)]
pub struct FuncInfo {
    pub name: String,
    pub is_kernel: bool,
    pub entry_pc: u32,
    /// Rows of the register window this function uses.
    pub num_rows: u32,
    pub num_preds: u32,
    /// First row of this function's registers (`decode::call_windows`).
    pub window_base: u32,
    /// Rows and predicates a call to this function can overwrite: those of
    /// every function it can reach, itself included. A call saves only the
    /// caller's registers among them.
    pub clobber_rows: std::ops::Range<u32>,
    pub clobber_preds: u32,
    /// Bytes of the function's `.param` frame: returns, params, call slots.
    pub param_frame: u32,
    /// Bytes of the function's `.local` frame.
    pub local_frame: u32,
    /// `(frame offset, bytes)` of each parameter and return value (`.func`).
    pub params: Vec<(u32, u32)>,
    pub returns: Vec<(u32, u32)>,
    /// The registers of each `.reg` parameter and return value (`None`
    /// for `.param` ones), in declaration order.
    pub reg_params: Vec<Option<RegBinding>>,
    pub reg_returns: Vec<Option<RegBinding>>,
    /// Declared registers, for observers.
    pub slots: Vec<RegSlot>,
}

/// How a `.reg` parameter or return value of a function lives in its
/// registers; the call passes it through the value's frame slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegBinding {
    /// `n` consecutive rows from `row` (a scalar: `n` = 1), each `elem`
    /// bytes of the slot.
    Rows { row: u32, n: u8, elem: u8 },
    /// A predicate: one byte of the slot, 0 or 1.
    Pred(u32),
}

pub struct Program {
    pub file: String,
    pub code: Vec<Inst>,
    /// Per PC: where the paths of a divergent branch there reconverge
    /// ([`crate::reconverge::table`]).
    pub reconverge: crate::reconverge::Table,
    /// Each instruction as printed, for observers and fault messages.
    pub text: Vec<String>,
    pub funcs: Vec<FuncInfo>,
    /// `(function index, info)` per kernel.
    pub kernels: Vec<(u32, KernelInfo)>,
    /// Value of each constant row, from `const_base` on.
    pub const_base: u32,
    pub const_values: Vec<u64>,
    pub num_rows: u32,
    pub num_preds: u32,
    /// The static part of every CTA's shared window, where dynamic shared
    /// memory starts: after every static variable of the module, whichever
    /// kernel uses it (a kernel's own figure, for launch validation, is
    /// [`KernelInfo::static_shared_bytes`]).
    pub static_shared: u32,
    /// Alignment of dynamic shared memory's start.
    pub static_local: u32,
    pub globals: HashMap<String, (u64, u64)>,
    pub variable_allocations: Vec<u64>,
    /// Whether any function calls device `malloc` or `free`.
    pub uses_heap: bool,
    /// `.file` directives: index → path.
    pub files: HashMap<u32, String>,
}

impl Program {
    /// `file:line` of an instruction's `.loc`, if it has one.
    pub fn source_of(&self, pc: usize) -> Option<(&str, u32)> {
        let (file, line) = self.code.get(pc)?.loc;
        if line == 0 {
            return None;
        }
        Some((self.files.get(&file).map_or("?", String::as_str), line))
    }
}

impl Program {
    pub fn kernel_index(&self, name: &str) -> Option<u32> {
        self.kernels
            .iter()
            .position(|(_, k)| k.name == name)
            .map(|i| i as u32)
    }

    pub fn kernel_info(&self, index: u32) -> Option<&KernelInfo> {
        self.kernels.get(index as usize).map(|(_, k)| k)
    }

    pub fn global_variable(&self, name: &str) -> Option<(u64, u64)> {
        self.globals.get(name).copied()
    }
}

/// A diagnostic at an AST position.
pub fn diag(file: &str, span: ast::Span, message: impl Into<String>) -> LoadDiagnostic {
    LoadDiagnostic {
        file: file.to_string(),
        line: span.line,
        col: span.col,
        message: message.into(),
    }
}
