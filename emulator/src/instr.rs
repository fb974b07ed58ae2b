//! The decoded instruction form the machine executes.
//!
//! Every operand is a row of the warp's value file (immediates and special
//! registers are pre-filled rows), so the step loop never branches on
//! operand kinds; predicates are indices into the warp's predicate file, one
//! bit per lane. Labels are resolved to code indices (PCs).

pub mod texture_op;

use crate::alu::{Alu1Fn, Alu2Fn, Alu3Fn, AluCtx, CmpFn};
use crate::semantics::ScalarType;

/// A row of the warp's value file: `values[row * 32 + lane]`.
pub type Row = u32;
/// An index into the warp's predicate file.
pub type PredIx = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    Always,
    If(PredIx),
    IfNot(PredIx),
}

/// The state space an access goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Global,
    /// `.const`: module constants live in device memory, so this reads global memory.
    Const,
    Shared,
    /// Thread-private memory: `.local` variables and stack frames.
    Local,
    /// The launch's kernel parameter buffer (read-only).
    KernelParam,
    /// A thread's `.param` frame: `.func` parameters and call-sequence slots.
    FrameParam,
    /// A generic address, classified by window at run time.
    Generic,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Const => "const",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::KernelParam | Space::FrameParam => "param",
            Space::Generic => "generic",
        }
    }
}

/// `[base + offset]`. With `frame`, the thread's current frame base in the
/// space (local or param) is added too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addr {
    pub base: Option<Row>,
    pub offset: i64,
    /// The base register is 32 bits wide: use its low 32 bits.
    pub base32: bool,
    pub frame: bool,
}

pub use crate::semantics::AtomOp;

/// A load or store [`Op::Ld`]/[`Op::St`] cannot hold: eight registers
/// (`ld/st.global.v8.b32`, a 256-bit access), or stored values that add a
/// constant to a register (`st.u64 [a], %rd1 + 1;`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdStRare {
    pub store: bool,
    pub space: Space,
    /// Bytes per element.
    pub size: u8,
    /// Loads: sign-extend each element.
    pub signed: bool,
    /// Elements: 1, 2, 4 or 8.
    pub n: u8,
    /// Destinations (loads) or sources (stores), the first `n` used.
    pub rows: [Row; 8],
    /// Stores: added to each source's value (wrapping; the store keeps the
    /// element's low `size` bytes). Zero for loads.
    pub adds: [u64; 8],
    pub addr: Addr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarKind {
    Sync,
    Arrive,
    RedPopc,
    RedAnd,
    RedOr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

/// A predicate operand: a register (possibly negated) or a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PredSrc {
    Reg(PredIx, bool),
    Const(bool),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeSource {
    Clock32,
    Clock64,
    /// `%clock_hi`: the high 32 bits of `%clock64`.
    ClockHi,
    GlobalTimer,
    GlobalTimerLo,
    GlobalTimerHi,
}

/// The target and parameter slots of a `call`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallInfo {
    pub target: CallTarget,
    /// Each argument, in callee parameter order.
    pub args: Vec<CallSlot>,
    /// Where each return value goes.
    pub rets: Vec<CallSlot>,
}

/// Registers (and predicates) one `call` may receive from its callee.
pub const MAX_RETURNED_REGS: usize = 32;

/// A call argument or return value on the caller's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallSlot {
    /// A `.param` variable at this offset of the caller's frame.
    Frame(u32),
    /// A register (or an immediate's constant row): `call (%r1), f, (%r2, 5);`.
    Reg(Row),
    /// A whole vector register, `n` rows from `row`, each `elem` bytes of
    /// the callee's slot: `call (%r1), f, (%v);` with `.reg .v4 .u16 %v`.
    Rows { row: Row, n: u8, elem: u8 },
    /// A predicate register, one byte (0 or 1) of the slot.
    Pred(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallTarget {
    Direct(u32),
    /// A function address in a register, checked against the prototype's
    /// parameter and return counts at run time.
    Indirect {
        row: Row,
        params: u32,
        returns: u32,
    },
}

/// Hot two-operand operations the machine inlines (no per-lane call).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fast2 {
    AddB32,
    AddB64,
    SubB32,
    SubB64,
    MulLoB32,
    MulLoB64,
    MulWideU32,
    MulWideS32,
    And,
    Or,
    Xor,
    ShlB32,
    ShlB64,
    ShrU32,
    ShrS32,
    ShrU64,
    ShrS64,
    MinS32,
    MaxS32,
    MinU32,
    MaxU32,
    /// Round-to-nearest f32 without `.ftz`/`.sat`.
    AddF32,
    SubF32,
    MulF32,
}

/// Hot three-operand operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fast3 {
    MadLoB32,
    MadLoB64,
    MadWideU32,
    MadWideS32,
    /// `fma.rn.f32` without `.ftz`/`.sat`.
    FmaF32,
}

/// Operand kind of a fast `setp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpKind {
    S32,
    U32,
    S64,
    U64,
    F32,
}

#[derive(Debug, Clone)]
pub enum Op {
    Fast2 {
        op: Fast2,
        d: Row,
        a: Row,
        b: Row,
    },
    Fast3 {
        op: Fast3,
        d: Row,
        a: Row,
        b: Row,
        c: Row,
    },
    /// `setp.cmp.type p, a, b` with one destination and no boolean combine.
    FastSetp {
        kind: CmpKind,
        cmp: crate::semantics::CmpOp,
        d: PredIx,
        a: Row,
        b: Row,
    },
    Mov {
        d: Row,
        a: Row,
    },
    /// `mov.v2/.v4/.v8.T d, a` between whole vectors (a vector register or a
    /// `{…}` list): `(destination, source)` rows, all read before any is
    /// written (the lists may overlap, as in a rotation).
    MovVector(Box<[(Row, Row)]>),
    Alu1 {
        f: Alu1Fn,
        ctx: AluCtx,
        d: Row,
        a: Row,
    },
    Alu2 {
        f: Alu2Fn,
        ctx: AluCtx,
        d: Row,
        a: Row,
        b: Row,
    },
    Alu3 {
        f: Alu3Fn,
        ctx: AluCtx,
        d: Row,
        a: Row,
        b: Row,
        c: Row,
    },
    /// `setp`: `d = cmp(a, b) [op c]`, `dn = !cmp(a, b) [op c]`.
    Setp {
        f: CmpFn,
        ctx: AluCtx,
        d: Option<PredIx>,
        dn: Option<PredIx>,
        a: Row,
        b: Row,
        combine: Option<(BoolOp, PredSrc)>,
    },
    Selp {
        d: Row,
        a: Row,
        b: Row,
        p: PredSrc,
    },
    /// `and/or/xor/not/mov.pred`; `b` is ignored by `not`/`mov`.
    PredLogic {
        op: Option<BoolOp>,
        d: PredIx,
        a: PredSrc,
        b: PredSrc,
    },
    /// `mov`/`cvt` of a predicate into a value register (0 or 1).
    PredToReg {
        d: Row,
        p: PredSrc,
    },
    /// `mov.b64 %rd, {%r1, %r2}`: `n` pieces of `width` bits, lowest first.
    Pack {
        d: Row,
        s: [Row; 4],
        n: u8,
        width: u8,
    },
    /// `mov.b64 {%r1, %r2}, %rd`.
    Unpack {
        d: [Row; 4],
        n: u8,
        width: u8,
        a: Row,
    },
    /// `bfi`: insert `len` bits of `a` into `b` at `pos`.
    Bfi {
        d: Row,
        a: Row,
        b: Row,
        pos: Row,
        len: Row,
        wide: bool,
    },
    /// `mad{c}.{lo,hi}{.cc}`: `a * b` (low or high half) `+ c` with the carry flags.
    MadCarry {
        d: Row,
        a: Row,
        b: Row,
        c: Row,
        ty: crate::semantics::ScalarType,
        hi: bool,
        cin: bool,
        cout: bool,
    },
    /// `add.cc`/`addc`/`sub.cc`/`subc` on 32 or 64 bits with the warp's carry flags.
    AddCarry {
        d: Row,
        a: Row,
        b: Row,
        sub: bool,
        cin: bool,
        cout: bool,
        wide: bool,
    },
    Ld {
        space: Space,
        size: u8,
        signed: bool,
        n: u8,
        d: [Row; 4],
        addr: Addr,
    },
    St {
        space: Space,
        size: u8,
        n: u8,
        s: [Row; 4],
        addr: Addr,
    },
    /// The loads and stores [`Op::Ld`]/[`Op::St`] do not carry, boxed so
    /// that the common forms stay small.
    LdStRare(Box<LdStRare>),
    Atom {
        space: Space,
        op: AtomOp,
        ty: ScalarType,
        d: Option<Row>,
        addr: Addr,
        b: Row,
        c: Row,
    },
    /// `atom/red.global.{v2,v4}.op.type` (sm_90): `n` elements at
    /// consecutive addresses, each element its own atomic operation.
    AtomVector {
        space: Space,
        op: AtomOp,
        ty: ScalarType,
        n: u8,
        /// The old values (`sreg::SINK` rows for `red`).
        d: [Row; 4],
        addr: Addr,
        b: [Row; 4],
    },
    /// The local-space address of a frame-relative `.local` symbol.
    LocalAddr {
        d: Row,
        offset: u32,
    },
    Cvta {
        to_generic: bool,
        space: Space,
        d: Row,
        a: Row,
        a32: bool,
    },
    Isspacep {
        space: Space,
        d: PredIx,
        a: Row,
    },
    Bra {
        target: u32,
    },
    /// `brx.idx`: branch to `targets[index]`.
    BrxIdx {
        index: Row,
        targets: Box<[u32]>,
    },
    Call(Box<CallInfo>),
    /// `ldmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16`: lanes `8i..8i+7`
    /// address the rows of matrix `i`; each lane receives two b16 elements
    /// of each matrix.
    Ldmatrix {
        n: u8,
        trans: bool,
        d: [Row; 4],
        addr: Addr,
    },
    /// `stmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16`: the inverse of
    /// [`Op::Ldmatrix`] (lanes `8i..8i+7` address the rows of matrix `i`).
    Stmatrix {
        n: u8,
        trans: bool,
        s: [Row; 4],
        addr: Addr,
    },
    /// `mma.sync.aligned.m16n8k{8,16}.row.col.f32.{f16,bf16}.{f16,bf16}.f32`,
    /// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` and
    /// `mma.sync.aligned.m16n8k{16,32}.row.col{.satfinite}.s32.{s8,u8}.{s8,u8}.s32`.
    Mma {
        k: u8,
        elem: MmaElem,
        /// `.f16` C (`c16`) or D (`d16`) with `.f16` A/B: two f16x2
        /// registers instead of four f32 (rows `g` and `g + 8`).
        c16: bool,
        d16: bool,
        d: [Row; 4],
        a: [Row; 4],
        b: [Row; 2],
        c: [Row; 4],
    },
    /// `cp.async.{ca,cg}.shared.global [dst], [src], size{, src_size}`:
    /// copied at once; `src_size` bytes are read, the rest zero-filled.
    CpAsync {
        dst: Addr,
        src: Addr,
        size: u8,
        src_size: Option<Row>,
    },
    /// `mbarrier.*` and `cp.async.mbarrier.arrive.noinc` on the barrier
    /// object at `addr` (see `semantics::mbarrier` and `machine/sync.rs`).
    Mbarrier {
        kind: MbarrierKind,
        space: Space,
        addr: Addr,
        /// The `state` result of `arrive`.
        d: Option<Row>,
        /// The `waitComplete` result of `test_wait`/`try_wait`.
        dp: Option<PredIx>,
        /// `count`, `txCount`, `state` or `phaseParity`.
        b: Row,
    },
    /// A call to the external `vprintf(fmt, args)`: `.param` slots of the caller.
    Vprintf {
        fmt: u32,
        args: u32,
        ret: Option<u32>,
    },
    /// A call to the external `malloc(size)` (device heap): `.param` slots
    /// of the caller.
    DeviceMalloc {
        size: u32,
        ret: u32,
    },
    /// A call to the external `free(ptr)` (device heap).
    DeviceFree {
        ptr: u32,
    },
    /// A call to `__assertfail(message, file, line, …)`: stops the launch.
    AssertFail {
        message: u32,
        file: u32,
        line: u32,
    },
    Ret,
    Exit,
    Trap,
    /// `barrier.cluster.arrive` (`wait: false`) or `barrier.cluster.wait`.
    ClusterBar {
        wait: bool,
    },
    Bar {
        kind: BarKind,
        id: Row,
        count: Option<Row>,
        d: Option<Row>,
        dp: Option<PredIx>,
        p: PredSrc,
    },
    Shfl {
        mode: ShflMode,
        d: Row,
        dp: Option<PredIx>,
        a: Row,
        b: Row,
        c: Row,
        mask: Row,
    },
    Vote {
        mode: VoteMode,
        d: Option<Row>,
        dp: Option<PredIx>,
        p: PredSrc,
        mask: Row,
    },
    Activemask {
        d: Row,
    },
    Match {
        all: bool,
        wide: bool,
        d: Row,
        dp: Option<PredIx>,
        a: Row,
        mask: Row,
    },
    Redux {
        op: ReduxOp,
        signed: bool,
        d: Row,
        a: Row,
        mask: Row,
    },
    Timer {
        d: Row,
        which: TimeSource,
    },
    /// An instruction executed by its family module (`decode/*.rs`) on
    /// registers and predicates only: how instruction families are added
    /// without growing the machine's `execute`.
    Family(Box<FamilyOp>),
    /// `wmma.load/store/mma` (m16n16k16), executed by `machine/tensor.rs`.
    Wmma(Box<WmmaOp>),
    /// `tex/tld4/txq/suld/sust/suq`, executed by `machine/texture.rs`.
    Texture(Box<texture_op::TextureOp>),
    /// `bar.warp.sync membermask` (`__syncwarp`): no effect of its own; the
    /// scheduler makes lanes wait here for the lanes of the mask it had set
    /// aside (independent thread scheduling, see `Warp::next_group`).
    WarpSync {
        mask: Row,
    },
    /// Fences, `membar`, hints: no effect in a one-warp-at-a-time machine.
    Nop,
}

/// Runs a [`FamilyOp`] for the lanes in `exec`: `values[row * 32 + lane]`,
/// one predicate word (bit per lane) per predicate.
pub type FamilyFn = fn(op: &FamilyOp, values: &mut [u64], preds: &mut [u32], exec: u32);

/// Operands of an [`Op::Family`] instruction; each family documents what
/// its rows and predicates mean.
#[derive(Debug, Clone)]
pub struct FamilyOp {
    pub run: FamilyFn,
    pub ctx: AluCtx,
    /// Destination first, then sources.
    pub rows: [Row; 4],
    /// Predicate destinations (`PredIx::MAX`: none).
    pub pd: [PredIx; 2],
    /// A predicate source (`selp`'s selector, a `BoolOp` operand).
    pub ps: PredSrc,
}

impl FamilyOp {
    /// The value of `row` in `lane`.
    #[inline]
    pub fn get(values: &[u64], row: Row, lane: usize) -> u64 {
        values[row as usize * 32 + lane]
    }

    /// Sets `row` in `lane`.
    #[inline]
    pub fn set(values: &mut [u64], row: Row, lane: usize, x: u64) {
        values[row as usize * 32 + lane] = x;
    }

    /// The lanes of `exec`, lowest first.
    #[inline]
    pub fn lanes(exec: u32) -> impl Iterator<Item = usize> {
        let mut m = exec;
        std::iter::from_fn(move || {
            (m != 0).then(|| {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                l
            })
        })
    }

    /// The two sources `a` (`rows[1]`) and `b` (`rows[2]`) in `lane`.
    #[inline]
    pub fn sources(&self, values: &[u64], lane: usize) -> (u64, u64) {
        (
            Self::get(values, self.rows[1], lane),
            Self::get(values, self.rows[2], lane),
        )
    }

    /// The lanes whose predicate source is true.
    #[inline]
    pub fn pred_bits(&self, preds: &[u32]) -> u32 {
        match self.ps {
            PredSrc::Reg(i, negated) => {
                let p = preds[i as usize];
                if negated { !p } else { p }
            }
            PredSrc::Const(true) => u32::MAX,
            PredSrc::Const(false) => 0,
        }
    }

    /// Writes predicate destination `k` for the lanes in `exec`.
    #[inline]
    pub fn set_pred(&self, preds: &mut [u32], k: usize, bits: u32, exec: u32) {
        let i = self.pd[k];
        if i != PredIx::MAX {
            let p = &mut preds[i as usize];
            *p = (*p & !exec) | (bits & exec);
        }
    }
}

impl Op {
    /// The member-mask operand of a warp-synchronous instruction
    /// (`shfl/vote/match/redux.sync`, `bar.warp.sync`): the lanes that must
    /// execute it together.
    #[inline]
    pub fn warp_sync_mask(&self) -> Option<Row> {
        match self {
            Op::Shfl { mask, .. }
            | Op::Vote { mask, .. }
            | Op::Match { mask, .. }
            | Op::Redux { mask, .. }
            | Op::WarpSync { mask } => Some(*mask),
            _ => None,
        }
    }
}

/// One decoded instruction with its source position.
#[derive(Debug, Clone)]
pub struct Inst {
    pub op: Op,
    pub guard: Guard,
    /// Position of the instruction in the PTX text.
    pub line: u32,
    /// Index of the function the instruction belongs to.
    pub func: u32,
    /// The source position of the last `.loc` before it: `(file index,
    /// line)`, line 0 when there is none.
    pub loc: (u32, u32),
}

/// The element type of a `wmma` fragment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WmmaElem {
    F16,
    Bf16,
    /// Stored as f32; the low 13 mantissa bits are not part of a tf32.
    Tf32,
    S8,
    U8,
    F32,
    S32,
    F64,
}

impl WmmaElem {
    /// Size of one element in memory and in its register, in bits.
    pub fn bits(self) -> u32 {
        match self {
            WmmaElem::S8 | WmmaElem::U8 => 8,
            WmmaElem::F16 | WmmaElem::Bf16 => 16,
            WmmaElem::Tf32 | WmmaElem::F32 | WmmaElem::S32 => 32,
            WmmaElem::F64 => 64,
        }
    }
}

/// `wmma.*` for every sm_80 shape and type but the sub-byte ones. The ISA
/// leaves fragment layouts unspecified; here, for an `rows x cols` matrix,
/// lane `l` holds the `rows * cols / 32` elements from `l * rows * cols / 32`
/// on in row-major order, packed low-first into 32-bit registers (one per
/// 64-bit register for f64). When the ISA's fragment has more registers
/// than that needs (f16 A/B), the packed registers repeat.
#[derive(Debug, Clone)]
pub enum WmmaOp {
    /// `wmma.load.{a,b,c}` / `wmma.store.d` of a fragment at `addr`:
    /// element `(r, c)` at `r * stride + c` (`.row`) or `c * stride + r`
    /// (`.col`) elements.
    Access {
        store: bool,
        space: Space,
        addr: Addr,
        stride: Option<Row>,
        col_major: bool,
        rows: u8,
        cols: u8,
        elem: WmmaElem,
        /// The fragment's registers, `count` of them used.
        regs: [Row; 8],
        count: u8,
    },
    /// `wmma.mma.sync`: D = A * B + C for an `m x n x k` shape. Floating
    /// products accumulate in f32 in k order (f64: fused, in k order);
    /// integer ones exactly, then wrap or (`satfinite`) clamp to s32.
    Mma {
        shape: (u8, u8, u8),
        /// Element types of A, B, C and D.
        elems: [WmmaElem; 4],
        satfinite: bool,
        d: [Row; 8],
        a: [Row; 8],
        b: [Row; 8],
        c: [Row; 8],
    },
}

/// What an [`Op::Mbarrier`] does to the barrier object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MbarrierKind {
    /// `init [a], count`.
    Init,
    /// `inval [a]`: the object becomes plain memory (zeroed).
    Inval,
    /// `arrive{_drop}{.expect_tx} state, [a]{, n}`: `b` arrivals, or one
    /// arrival after adding `b` transaction bytes when `expect_tx`.
    Arrive { drop: bool, expect_tx: bool },
    /// `expect_tx [a], n` (`+b`) / `complete_tx [a], n` (`-b`).
    Tx { complete: bool },
    /// `test_wait`/`try_wait{.parity}`: `b` is the state token or the parity.
    Wait { parity: bool },
}

/// The element type of `mma.sync`'s A and B fragments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmaElem {
    /// Two `f16` per 32-bit register.
    F16,
    /// Two `bf16` per 32-bit register.
    Bf16,
    /// One `tf32` per 32-bit register (an f32 whose low 13 mantissa bits are ignored).
    Tf32,
    /// Four 8-bit integers per register, s32 accumulators; `satfinite`
    /// clamps each result to the s32 range (else it wraps).
    Int8 {
        a_signed: bool,
        b_signed: bool,
        satfinite: bool,
    },
}
