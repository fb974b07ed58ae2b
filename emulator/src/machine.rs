//! The SIMT machine: one CTA's warps, shared memory and barriers, and the
//! execution of one warp-instruction.
//!
//! Reconvergence policy: a warp always executes the lowest PC among its
//! runnable (non-exited, non-blocked) threads; the threads at that PC form
//! the active mask. While all runnable threads share one PC the warp is
//! "converged" and per-thread PCs are not maintained. A diverged group that
//! runs [`ITS_QUANTUM`] warp-instructions in a row yields to the warp's
//! other groups (independent thread scheduling; see [`Warp::next_group`]).

use crate::instr::*;
use crate::memory::{self, FlatMemory, GlobalMemory, OutOfBounds, Window};
use crate::program::{Program, sreg};
use crate::semantics::CmpOp;

pub const WARP: usize = 32;

/// The starvation window of independent thread scheduling: a runnable lane
/// of a diverged warp that has not executed for this many warp-instructions
/// of its warp gets a turn. Large enough that ordinary divergent code never
/// starves a lane that long; small enough that a lane spinning on a lock
/// held by another lane of its warp costs little before the holder runs.
pub const ITS_QUANTUM: u32 = 4096;

/// Why execution of a warp-instruction stopped the launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultKind {
    IllegalAddress,
    Misaligned,
    IllegalInstruction,
    Trap,
    Assert,
}

#[derive(Debug, Clone)]
pub struct LaneFault {
    pub kind: FaultKind,
    pub lane: u32,
    pub address: Option<u64>,
    pub message: String,
}

/// A saved caller activation of one lane.
#[derive(Debug, Clone, Copy)]
struct Frame {
    ret_pc: u32,
    caller: u32,
    local_fp: u32,
    param_fp: u32,
    /// Where this frame's saved registers start in the lane's save stack.
    save_at: usize,
}

/// One warp's architectural state.
pub struct Warp {
    /// `values[row * 32 + lane]`.
    pub values: Vec<u64>,
    /// One bit per lane.
    pub preds: Vec<u32>,
    pcs: [u32; WARP],
    /// When converged, the PC of every runnable lane.
    pc: u32,
    converged: bool,
    /// While diverged: the group that runs next, cached between scans.
    /// `group_mask` lanes are at `group_pc` (their `pcs` entries may be
    /// stale until [`Warp::sync_group`]); every other runnable lane is at
    /// `others_min` or later. A straight-line step or a whole-group jump to
    /// a PC below `others_min` keeps the cache, so diverged warps rescan
    /// only where groups may merge or split.
    group_valid: bool,
    group_pc: u32,
    group_mask: u32,
    others_min: u32,
    /// Independent thread scheduling (see [`Warp::next_group`]): lanes set
    /// aside so starved lanes can run, lanes waiting at a warp-synchronous
    /// instruction for set-aside lanes, the lanes that executed in the
    /// current starvation window and the window's diverged steps so far.
    deprio: u32,
    sync_wait: u32,
    its_ran: u32,
    its_steps: u32,
    /// Lanes that exist (the last warp of a CTA may be partial).
    pub valid: u32,
    pub exited: u32,
    /// Lanes waiting at a barrier.
    pub blocked: u32,
    func: [u32; WARP],
    local_fp: [u32; WARP],
    param_fp: [u32; WARP],
    frames: Vec<Vec<Frame>>,
    saves: Vec<Vec<u64>>,
    pub local: Vec<FlatMemory>,
    pub param: Vec<FlatMemory>,
    /// Warp-instructions executed, for `%clock`.
    pub executed: u64,
    pub index: u32,
}

/// `(warp, lanes, kind, d, dp)`: where a `bar.red` result goes.
pub type BarReduction = (u32, u32, BarKind, Option<Row>, Option<PredIx>);

/// A barrier's arrivals so far.
#[derive(Default, Clone)]
pub struct Barrier {
    pub arrived: u32,
    /// Thread count given by the first arrival, if any.
    pub expected: Option<u32>,
    /// `(warp, lanes)` waiting here.
    pub waiters: Vec<(u32, u32)>,
    /// `(warp, lanes, kind, d, dp)` for `bar.red` results.
    pub reductions: Vec<BarReduction>,
    pub red_popc: u32,
    /// Some arriving thread had a false predicate (`bar.red.and` is the negation).
    pub red_and_failed: bool,
    pub red_or: bool,
}

/// Identity of the CTA being run, for special registers and faults.
#[derive(Debug, Clone, Copy)]
pub struct CtaShape {
    pub ctaid: [u32; 3],
    pub nctaid: [u32; 3],
    pub ntid: [u32; 3],
    pub dynamic_smem: u32,
    pub gridid: u64,
    /// `%smid`: the CTA's linear index modulo the SM count (a fixed,
    /// deterministic placement).
    pub smid: u32,
    pub nsmid: u32,
}

/// Everything outside a warp that an instruction can touch.
pub struct Env<'a> {
    pub prog: &'a Program,
    pub global: &'a mut GlobalMemory,
    pub shared: &'a mut FlatMemory,
    pub kparams: &'a [u8],
    pub barriers: &'a mut [Barrier; 16],
    /// Non-exited threads of the CTA.
    pub live_threads: &'a mut u32,
    /// Warp-instructions executed by the launch so far, for `%globaltimer`.
    pub launch_clock: u64,
    /// Device `printf` output of the launch so far.
    pub printf: &'a mut String,
    /// Set when the instruction wrote global or shared memory (an atomic
    /// only if it changed the value): progress, for the stall watchdog.
    pub wrote: bool,
}

/// What a warp-instruction did to the warp's schedulability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepResult {
    Continue,
    /// Lanes of this warp arrived at barrier `id`: the CTA must check it.
    Arrived(u32),
    /// Lanes exited: barriers may now complete.
    Exited,
}

#[inline(always)]
fn for_lanes(mask: u32, mut f: impl FnMut(usize)) {
    if mask == u32::MAX {
        for l in 0..WARP {
            f(l);
        }
    } else {
        let mut m = mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            f(l);
        }
    }
}

#[inline]
fn pred_bits(preds: &[u32], p: PredSrc) -> u32 {
    match p {
        PredSrc::Reg(i, false) => preds[i as usize],
        PredSrc::Reg(i, true) => !preds[i as usize],
        PredSrc::Const(true) => u32::MAX,
        PredSrc::Const(false) => 0,
    }
}

#[inline]
fn r(row: Row) -> usize {
    row as usize * WARP
}

/// One row of the value file as a fixed-size array (no bounds checks per lane).
#[inline(always)]
fn row(v: &[u64], row: Row) -> [u64; WARP] {
    let s = r(row);
    v[s..s + WARP].try_into().unwrap_or([0; WARP])
}

/// `d = f(a, b)` for the lanes in `exec`: operands are copied out first, so
/// `d` may alias a source and the full-warp loop vectorises.
#[inline(always)]
fn lanes2(v: &mut [u64], exec: u32, d: Row, a: Row, b: Row, f: impl Fn(u64, u64) -> u64) {
    if exec != u32::MAX {
        // Diverged warps: touch only the active lanes (no row copies).
        let (d, a, b) = (r(d), r(a), r(b));
        for_lanes(exec, |l| v[d + l] = f(v[a + l], v[b + l]));
        return;
    }
    let (xa, xb) = (row(v, a), row(v, b));
    let s = r(d);
    let Some(dst) = v.get_mut(s..s + WARP) else {
        return;
    };
    for l in 0..WARP {
        dst[l] = f(xa[l], xb[l]);
    }
}

#[inline(always)]
fn lanes3(
    v: &mut [u64],
    exec: u32,
    d: Row,
    a: Row,
    b: Row,
    c: Row,
    f: impl Fn(u64, u64, u64) -> u64,
) {
    if exec != u32::MAX {
        let (d, a, b, c) = (r(d), r(a), r(b), r(c));
        for_lanes(exec, |l| v[d + l] = f(v[a + l], v[b + l], v[c + l]));
        return;
    }
    let (xa, xb, xc) = (row(v, a), row(v, b), row(v, c));
    let s = r(d);
    let Some(dst) = v.get_mut(s..s + WARP) else {
        return;
    };
    for l in 0..WARP {
        dst[l] = f(xa[l], xb[l], xc[l]);
    }
}

/// `fma.rn.f32` over a warp. `f32::mul_add` is a libm call unless the
/// build targets FMA hardware, so use the instruction when the CPU has it.
#[inline(always)]
fn fma_f32_lanes(v: &mut [u64], exec: u32, d: Row, a: Row, b: Row, c: Row) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::atomic::{AtomicU8, Ordering};
        static HAS_FMA: AtomicU8 = AtomicU8::new(0);
        let mut has = HAS_FMA.load(Ordering::Relaxed);
        if has == 0 {
            has = if std::arch::is_x86_feature_detected!("fma") {
                2
            } else {
                1
            };
            HAS_FMA.store(has, Ordering::Relaxed);
        }
        if has == 2 {
            // SAFETY: the CPU supports FMA (checked above).
            unsafe { fma_f32_lanes_hw(v, exec, d, a, b, c) };
            return;
        }
    }
    lanes3(v, exec, d, a, b, c, |x, y, z| {
        canon32(f32of(x).mul_add(f32of(y), f32of(z)))
    });
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
fn fma_f32_lanes_hw(v: &mut [u64], exec: u32, d: Row, a: Row, b: Row, c: Row) {
    lanes3(v, exec, d, a, b, c, |x, y, z| {
        canon32(f32of(x).mul_add(f32of(y), f32of(z)))
    });
}

/// Bits of the lanes in `exec` for which `f(a, b)` holds.
#[inline(always)]
fn cmp_lanes(v: &[u64], exec: u32, a: Row, b: Row, f: impl Fn(u64, u64) -> bool) -> u32 {
    let mut bits = 0u32;
    if exec != u32::MAX {
        let (a, b) = (r(a), r(b));
        for_lanes(exec, |l| bits |= (f(v[a + l], v[b + l]) as u32) << l);
        return bits;
    }
    let (xa, xb) = (row(v, a), row(v, b));
    for l in 0..WARP {
        bits |= (f(xa[l], xb[l]) as u32) << l;
    }
    bits
}

#[inline(always)]
fn canon32(x: f32) -> u64 {
    if x.is_nan() {
        crate::semantics::FloatFormat::F32.canonical_nan()
    } else {
        x.to_bits() as u64
    }
}

#[inline(always)]
fn f32of(x: u64) -> f32 {
    f32::from_bits(x as u32)
}

fn fast_setp(v: &[u64], exec: u32, kind: CmpKind, cmp: CmpOp, a: Row, b: Row) -> u32 {
    macro_rules! by_op {
        ($conv:expr) => {{
            let conv = $conv;
            match cmp {
                CmpOp::Eq => cmp_lanes(v, exec, a, b, |x, y| conv(x) == conv(y)),
                CmpOp::Ne => cmp_lanes(v, exec, a, b, |x, y| conv(x) != conv(y)),
                CmpOp::Lt | CmpOp::Lo => cmp_lanes(v, exec, a, b, |x, y| conv(x) < conv(y)),
                CmpOp::Le | CmpOp::Ls => cmp_lanes(v, exec, a, b, |x, y| conv(x) <= conv(y)),
                CmpOp::Gt | CmpOp::Hi => cmp_lanes(v, exec, a, b, |x, y| conv(x) > conv(y)),
                CmpOp::Ge | CmpOp::Hs => cmp_lanes(v, exec, a, b, |x, y| conv(x) >= conv(y)),
                _ => unreachable_cmp(v, exec, kind, cmp, a, b),
            }
        }};
    }
    let unsigned = matches!(cmp, CmpOp::Lo | CmpOp::Ls | CmpOp::Hi | CmpOp::Hs);
    match kind {
        CmpKind::S32 if !unsigned => by_op!(|x: u64| x as u32 as i32),
        CmpKind::S32 | CmpKind::U32 => by_op!(|x: u64| x as u32),
        CmpKind::S64 if !unsigned => by_op!(|x: u64| x as i64),
        CmpKind::S64 | CmpKind::U64 => by_op!(|x: u64| x),
        CmpKind::F32 => {
            let f = |x: u64| f32::from_bits(x as u32);
            match cmp {
                CmpOp::Eq => cmp_lanes(v, exec, a, b, |x, y| f(x) == f(y)),
                CmpOp::Ne => cmp_lanes(v, exec, a, b, |x, y| {
                    let (x, y) = (f(x), f(y));
                    !x.is_nan() && !y.is_nan() && x != y
                }),
                CmpOp::Lt => cmp_lanes(v, exec, a, b, |x, y| f(x) < f(y)),
                CmpOp::Le => cmp_lanes(v, exec, a, b, |x, y| f(x) <= f(y)),
                CmpOp::Gt => cmp_lanes(v, exec, a, b, |x, y| f(x) > f(y)),
                CmpOp::Ge => cmp_lanes(v, exec, a, b, |x, y| f(x) >= f(y)),
                _ => unreachable_cmp(v, exec, kind, cmp, a, b),
            }
        }
    }
}

/// Comparisons without a fast form (unordered floats): the general path.
fn unreachable_cmp(v: &[u64], exec: u32, kind: CmpKind, cmp: CmpOp, a: Row, b: Row) -> u32 {
    let ty = match kind {
        CmpKind::S32 => crate::semantics::ScalarType::S32,
        CmpKind::U32 => crate::semantics::ScalarType::U32,
        CmpKind::S64 => crate::semantics::ScalarType::S64,
        CmpKind::U64 => crate::semantics::ScalarType::U64,
        CmpKind::F32 => crate::semantics::ScalarType::F32,
    };
    cmp_lanes(v, exec, a, b, |x, y| {
        crate::semantics::compare(cmp, ty, x, y)
    })
}

impl Warp {
    pub fn new(prog: &Program) -> Warp {
        let mut values = vec![0u64; prog.num_rows as usize * WARP];
        for (i, v) in prog.const_values.iter().enumerate() {
            let base = r(prog.const_base + i as u32);
            values[base..base + WARP].fill(*v);
        }
        Warp {
            values,
            preds: vec![0; prog.num_preds as usize],
            pcs: [0; WARP],
            pc: 0,
            converged: true,
            group_valid: false,
            group_pc: 0,
            group_mask: 0,
            others_min: 0,
            deprio: 0,
            sync_wait: 0,
            its_ran: 0,
            its_steps: 0,
            valid: 0,
            exited: 0,
            blocked: 0,
            func: [0; WARP],
            local_fp: [0; WARP],
            param_fp: [0; WARP],
            frames: (0..WARP).map(|_| Vec::new()).collect(),
            saves: (0..WARP).map(|_| Vec::new()).collect(),
            local: (0..WARP).map(|_| FlatMemory::default()).collect(),
            param: (0..WARP).map(|_| FlatMemory::default()).collect(),
            executed: 0,
            index: 0,
        }
    }

    /// Prepares the warp to run `kernel` as warp `index` of a CTA.
    pub fn reset(&mut self, prog: &Program, kernel: u32, index: u32, shape: &CtaShape) {
        let f = &prog.funcs[kernel as usize];
        let threads = shape.ntid[0] * shape.ntid[1] * shape.ntid[2];
        let first = index * WARP as u32;
        let n = threads.saturating_sub(first).min(WARP as u32);
        self.valid = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
        self.exited = !self.valid;
        self.blocked = 0;
        self.set_converged(f.entry_pc);
        self.executed = 0;
        self.index = index;
        let window = r(prog.window_base)..r(prog.const_base);
        self.values[window].fill(0);
        self.preds.fill(0);
        let nwarps = threads.div_ceil(WARP as u32);
        for lane in 0..WARP {
            let t = first + lane as u32;
            let tid = [
                t % shape.ntid[0],
                (t / shape.ntid[0]) % shape.ntid[1],
                t / (shape.ntid[0] * shape.ntid[1]),
            ];
            let set = |v: &mut Vec<u64>, row: u32, x: u64| v[r(row) + lane] = x;
            for (k, t) in tid.iter().enumerate() {
                let k32 = k as u32;
                set(&mut self.values, sreg::TID + k32, *t as u64);
                set(&mut self.values, sreg::NTID + k32, shape.ntid[k] as u64);
                set(&mut self.values, sreg::CTAID + k32, shape.ctaid[k] as u64);
                set(&mut self.values, sreg::NCTAID + k32, shape.nctaid[k] as u64);
            }
            let bit = 1u64 << lane;
            set(&mut self.values, sreg::LANEID, lane as u64);
            set(&mut self.values, sreg::WARPID, index as u64);
            set(&mut self.values, sreg::NWARPID, nwarps as u64);
            set(&mut self.values, sreg::SMID, shape.smid as u64);
            set(&mut self.values, sreg::NSMID, shape.nsmid as u64);
            set(&mut self.values, sreg::GRIDID, shape.gridid);
            set(&mut self.values, sreg::LANEMASK_EQ, bit);
            set(
                &mut self.values,
                sreg::LANEMASK_LE,
                (bit << 1).wrapping_sub(1) & 0xffff_ffff,
            );
            set(&mut self.values, sreg::LANEMASK_LT, bit - 1);
            set(
                &mut self.values,
                sreg::LANEMASK_GE,
                !(bit - 1) & 0xffff_ffff,
            );
            set(
                &mut self.values,
                sreg::LANEMASK_GT,
                !((bit << 1).wrapping_sub(1)) & 0xffff_ffff,
            );
            set(
                &mut self.values,
                sreg::DYNAMIC_SMEM_SIZE,
                shape.dynamic_smem as u64,
            );
            set(
                &mut self.values,
                sreg::TOTAL_SMEM_SIZE,
                (prog.static_shared + shape.dynamic_smem) as u64,
            );
            set(&mut self.values, sreg::ZERO, 0);
            set(&mut self.values, sreg::CARRY, 0);
            self.func[lane] = kernel;
            self.local_fp[lane] = prog.static_local;
            self.param_fp[lane] = 0;
            self.frames[lane].clear();
            self.saves[lane].clear();
            let local_len = (prog.static_local + f.local_frame) as usize;
            self.local[lane].bytes.clear();
            self.local[lane].bytes.resize(local_len, 0);
            self.param[lane].bytes.clear();
            self.param[lane].bytes.resize(f.param_frame as usize, 0);
        }
    }

    /// Lanes that could run now.
    #[inline]
    pub fn runnable(&self) -> u32 {
        !self.exited & !self.blocked
    }

    /// The next PC and the lanes that execute it, if any lane can run.
    ///
    /// Independent thread scheduling: the group at the lowest PC runs, but
    /// when a runnable lane has not executed during a window of
    /// [`ITS_QUANTUM`] diverged warp-instructions (other lanes spinning on a
    /// lock it holds, or a long divergent loop elsewhere), the lanes that did
    /// run are set aside (`deprio`) and the starved ones run, so every lane
    /// of a diverged warp makes progress whatever shape the spinning code
    /// has. A group that reaches a warp-synchronous instruction
    /// (`shfl/vote/match/redux.sync`, `bar.warp.sync`) whose member mask
    /// names set-aside lanes waits there (`sync_wait`) until they arrive.
    /// Converged warps, and divergent code in which every lane runs within
    /// the window, run exactly as under the plain lowest-PC policy; the cost
    /// per diverged step is an increment, a compare and an OR.
    #[inline]
    pub fn next_group(&mut self, code: &[Inst]) -> Option<(u32, u32)> {
        let live = self.runnable();
        if live == 0 {
            return None;
        }
        if self.converged {
            return Some((self.pc, live));
        }
        self.its_steps += 1;
        if self.its_steps > ITS_QUANTUM {
            self.end_its_window(live);
        }
        if self.group_valid {
            #[cfg(debug_assertions)]
            self.check_group_cache(live);
            self.its_ran |= self.group_mask;
            return Some((self.group_pc, self.group_mask));
        }
        let (pc, active) = self.scan(live, code);
        self.its_ran |= active;
        Some((pc, active))
    }

    /// The end of a starvation window: lanes that could run but did not are
    /// starved; the lanes that ran are set aside so they get a turn.
    #[cold]
    #[inline(never)]
    fn end_its_window(&mut self, live: u32) {
        let starved = live & !self.its_ran & !self.sync_wait;
        self.its_steps = 0;
        self.its_ran = 0;
        if starved != 0 {
            self.sync_group();
            self.deprio |= live & !starved;
            self.group_valid = false;
        }
    }

    /// Finds the group to run by scanning every lane's PC.
    #[inline(never)]
    fn scan(&mut self, live: u32, code: &[Inst]) -> (u32, u32) {
        loop {
            let mut candidates = live & !self.deprio & !self.sync_wait;
            if candidates == 0 {
                if self.deprio & live != 0 {
                    // Everyone else is set aside or waiting: start over.
                    self.deprio = 0;
                } else {
                    // Only waiters are left and nobody they wait for can run.
                    self.sync_wait = 0;
                }
                candidates = live & !self.deprio & !self.sync_wait;
            }
            // Branch-free scans over all 32 lanes.
            let mut min = u32::MAX;
            for (l, pc) in self.pcs.iter().enumerate() {
                let key = if candidates >> l & 1 != 0 {
                    *pc
                } else {
                    u32::MAX
                };
                min = min.min(key);
            }
            let mut active = 0u32;
            let mut others_min = u32::MAX;
            for (l, pc) in self.pcs.iter().enumerate() {
                let at_min = *pc == min;
                active |= (at_min as u32) << l;
                let key = if live >> l & 1 != 0 && !at_min {
                    *pc
                } else {
                    u32::MAX
                };
                others_min = others_min.min(key);
            }
            active &= live;
            let aside = self.deprio & live & !active;
            if aside != 0
                && let Some(mask_row) = code.get(min as usize).and_then(|i| i.op.warp_sync_mask())
            {
                let lane = active.trailing_zeros() as usize;
                let members = self.values[r(mask_row) + lane] as u32;
                if members & aside != 0 {
                    self.sync_wait |= active;
                    continue;
                }
            }
            self.deprio &= !active;
            self.sync_wait &= !active;
            if active == live {
                self.set_converged(min);
            } else if self.deprio == 0 && self.sync_wait == 0 {
                self.group_valid = true;
                self.group_pc = min;
                self.group_mask = active;
                self.others_min = others_min;
            }
            return (min, active);
        }
    }

    /// All runnable lanes are at `pc`: drop per-lane PCs and the ITS state.
    #[inline]
    fn set_converged(&mut self, pc: u32) {
        self.converged = true;
        self.pc = pc;
        self.group_valid = false;
        self.deprio = 0;
        self.sync_wait = 0;
        self.its_steps = 0;
        self.its_ran = 0;
    }

    /// Where each group of non-exited lanes stands: `(pc, lanes, blocked)`,
    /// ordered by PC, for diagnostics.
    pub fn groups(&self) -> Vec<(u32, u32, bool)> {
        let mut out: Vec<(u32, u32, bool)> = Vec::new();
        let live = !self.exited & self.valid;
        for l in 0..WARP {
            if live >> l & 1 == 0 {
                continue;
            }
            let pc = if self.converged && self.blocked >> l & 1 == 0 {
                self.pc
            } else if self.group_valid && self.group_mask >> l & 1 != 0 {
                self.group_pc
            } else {
                self.pcs[l]
            };
            let blocked = self.blocked >> l & 1 != 0;
            match out.iter_mut().find(|g| g.0 == pc && g.2 == blocked) {
                Some(g) => g.1 |= 1 << l,
                None => out.push((pc, 1 << l, blocked)),
            }
        }
        out.sort_unstable();
        out
    }

    /// Debug builds: the cached group must be what a full scan would find.
    #[cfg(debug_assertions)]
    fn check_group_cache(&self, live: u32) {
        let mut pcs = self.pcs;
        for (l, p) in pcs.iter_mut().enumerate() {
            if self.group_mask >> l & 1 != 0 {
                *p = self.group_pc;
            }
        }
        let min = (0..WARP)
            .filter(|l| live >> l & 1 != 0)
            .map(|l| pcs[l])
            .min();
        let mask = (0..WARP)
            .filter(|&l| live >> l & 1 != 0 && Some(pcs[l]) == min)
            .fold(0u32, |m, l| m | 1 << l);
        assert_eq!(
            (min, mask),
            (Some(self.group_pc), self.group_mask),
            "diverged-group cache out of date"
        );
    }

    /// Writes the cached group's PC back to its lanes and drops the cache.
    #[inline]
    fn sync_group(&mut self) {
        if self.group_valid {
            let (pc, mask) = (self.group_pc, self.group_mask);
            for_lanes(mask, |l| self.pcs[l] = pc);
            self.group_valid = false;
        }
    }

    /// Moves the lanes of the current group (`active`) to `next` after a
    /// straight-line instruction.
    #[inline]
    fn advance(&mut self, active: u32, next: u32) {
        if self.converged {
            self.pc = next;
        } else if self.group_valid && self.group_mask == active {
            self.group_pc = next;
            if next >= self.others_min {
                // Another group waits here or earlier: merge on the next scan.
                self.sync_group();
            }
        } else {
            self.sync_group();
            for (l, pc) in self.pcs.iter_mut().enumerate() {
                if active >> l & 1 != 0 {
                    *pc = next;
                }
            }
        }
    }

    /// Switches to per-lane PCs (all runnable lanes at the converged PC).
    #[inline]
    fn diverge(&mut self) {
        if self.converged {
            let pc = self.pc;
            let live = self.runnable();
            for_lanes(live, |l| self.pcs[l] = pc);
            self.converged = false;
            self.group_valid = false;
        } else {
            self.sync_group();
        }
    }

    /// Moves `lanes` (all at `pc`) to `target`.
    #[inline]
    fn jump(&mut self, lanes: u32, pc: u32, target: u32) {
        if lanes == 0 {
            return;
        }
        if self.converged && lanes == self.runnable() {
            self.pc = target;
            return;
        }
        if !self.converged && self.group_valid && lanes == self.group_mask {
            self.group_pc = target;
            if target >= self.others_min {
                self.sync_group();
            }
            return;
        }
        let _ = pc;
        self.diverge();
        for_lanes(lanes, |l| self.pcs[l] = target);
    }

    /// Blocks or retires lanes; the rest of the warp keeps its PCs.
    #[inline]
    fn park(&mut self, lanes: u32, pc_after: u32, exit: bool) {
        if lanes == 0 {
            return;
        }
        self.diverge();
        for_lanes(lanes, |l| self.pcs[l] = pc_after);
        if exit {
            self.exited |= lanes;
        } else {
            self.blocked |= lanes;
        }
        self.maybe_reconverge();
    }

    /// Releases lanes blocked at a barrier.
    pub fn unblock(&mut self, lanes: u32) {
        self.sync_group();
        self.blocked &= !lanes;
        self.maybe_reconverge();
    }

    fn maybe_reconverge(&mut self) {
        if self.converged {
            return;
        }
        self.sync_group();
        let live = self.runnable();
        if live == 0 {
            return;
        }
        let first = self.pcs[live.trailing_zeros() as usize];
        let mut same = true;
        for_lanes(live, |l| same &= self.pcs[l] == first);
        if same {
            self.set_converged(first);
        }
    }
}

/// Computes `[base + offset]` for one lane.
#[inline]
fn effective(values: &[u64], a: &Addr, lane: usize, frame_base: u32) -> u64 {
    let mut v = match a.base {
        Some(row) => {
            let x = values[r(row) + lane];
            if a.base32 { x & 0xffff_ffff } else { x }
        }
        None => 0,
    };
    v = v.wrapping_add(a.offset as u64);
    if a.frame {
        v = v.wrapping_add(frame_base as u64);
    }
    v
}

fn fault(kind: FaultKind, lane: usize, addr: u64, msg: impl Into<String>) -> LaneFault {
    LaneFault {
        kind,
        lane: lane as u32,
        address: Some(addr),
        message: msg.into(),
    }
}

/// Loads `size` bytes from `space` at `addr` for `lane`.
#[inline]
fn load(
    env: &Env<'_>,
    w: &Warp,
    space: Space,
    addr: u64,
    size: u32,
    lane: usize,
) -> Result<u64, LaneFault> {
    let oob = |_: OutOfBounds| {
        fault(
            FaultKind::IllegalAddress,
            lane,
            addr,
            format!("{} load of {size} bytes out of bounds", space.name()),
        )
    };
    match space {
        Space::Global | Space::Const => env.global.load(addr, size).map_err(oob),
        Space::Shared => env.shared.load(addr & 0xffff_ffff, size).map_err(oob),
        Space::Local => w.local[lane].load(addr, size).map_err(oob),
        Space::FrameParam => w.param[lane].load(addr, size).map_err(oob),
        Space::KernelParam => {
            let off = addr & 0xffff_ffff;
            let end = off + size as u64;
            if end > env.kparams.len() as u64 {
                return Err(oob(OutOfBounds));
            }
            Ok(memory::read_le(&env.kparams[off as usize..end as usize]))
        }
        Space::Generic => match memory::window_of(addr) {
            Window::Global => env.global.load(addr, size).map_err(oob),
            Window::Shared => env
                .shared
                .load(addr - memory::SHARED_WINDOW, size)
                .map_err(oob),
            Window::Local => w.local[lane]
                .load(addr - memory::LOCAL_WINDOW, size)
                .map_err(oob),
            Window::Param => load(
                env,
                w,
                Space::KernelParam,
                addr - memory::PARAM_WINDOW,
                size,
                lane,
            ),
        },
    }
}

#[inline]
fn store(
    env: &mut Env<'_>,
    w: &mut Warp,
    space: Space,
    addr: u64,
    size: u32,
    value: u64,
    lane: usize,
) -> Result<(), LaneFault> {
    let oob = |_: OutOfBounds| {
        fault(
            FaultKind::IllegalAddress,
            lane,
            addr,
            format!("{} store of {size} bytes out of bounds", space.name()),
        )
    };
    match space {
        Space::Global => env.global.store(addr, size, value).map_err(oob),
        Space::Shared => env
            .shared
            .store(addr & 0xffff_ffff, size, value)
            .map_err(oob),
        Space::Local => w.local[lane].store(addr, size, value).map_err(oob),
        Space::FrameParam => w.param[lane].store(addr, size, value).map_err(oob),
        Space::Const | Space::KernelParam => Err(fault(
            FaultKind::IllegalAddress,
            lane,
            addr,
            "store to read-only memory",
        )),
        Space::Generic => match memory::window_of(addr) {
            Window::Global => env.global.store(addr, size, value).map_err(oob),
            Window::Shared => env
                .shared
                .store(addr - memory::SHARED_WINDOW, size, value)
                .map_err(oob),
            Window::Local => w.local[lane]
                .store(addr - memory::LOCAL_WINDOW, size, value)
                .map_err(oob),
            Window::Param => Err(fault(
                FaultKind::IllegalAddress,
                lane,
                addr,
                "store to kernel parameter memory",
            )),
        },
    }
}

fn frame_base(w: &Warp, space: Space, lane: usize) -> u32 {
    match space {
        Space::Local => w.local_fp[lane],
        Space::FrameParam => w.param_fp[lane],
        _ => 0,
    }
}

#[inline]
fn check_align(addr: u64, bytes: u64, lane: usize) -> Result<(), LaneFault> {
    if addr & (bytes - 1) != 0 {
        return Err(fault(
            FaultKind::Misaligned,
            lane,
            addr,
            format!("access of {bytes} bytes is not {bytes}-byte aligned"),
        ));
    }
    Ok(())
}

/// Effective addresses of every lane in `exec`.
#[inline(always)]
fn addresses(w: &Warp, a: &Addr, space: Space, exec: u32) -> Result<[u64; WARP], LaneFault> {
    let mut out = [0u64; WARP];
    let base = a.base.map(|b| row(&w.values, b));
    let mask = if a.base32 { 0xffff_ffff } else { u64::MAX };
    for (l, slot) in out.iter_mut().enumerate() {
        let mut v = match &base {
            Some(b) => b[l] & mask,
            None => 0,
        };
        v = v.wrapping_add(a.offset as u64);
        if a.frame {
            v = v.wrapping_add(frame_base(w, space, l) as u64);
        }
        *slot = v;
    }
    let _ = exec;
    Ok(out)
}

#[inline(always)]
fn check_aligned(addrs: &[u64; WARP], exec: u32, bytes: u64) -> Result<(), LaneFault> {
    let mask = bytes.next_power_of_two() - 1;
    let mut bad = 0u32;
    for (l, a) in addrs.iter().enumerate() {
        bad |= ((a & mask != 0) as u32) << l;
    }
    bad &= exec;
    if bad != 0 {
        let l = bad.trailing_zeros() as usize;
        return check_align(addrs[l], mask + 1, l);
    }
    Ok(())
}

#[inline(always)]
fn read_at(bytes: &[u8], off: u64, size: u32) -> Option<u64> {
    let off = usize::try_from(off).ok()?;
    Some(match size {
        4 => u32::from_le_bytes(bytes.get(off..off + 4)?.try_into().ok()?) as u64,
        8 => u64::from_le_bytes(bytes.get(off..off + 8)?.try_into().ok()?),
        2 => u16::from_le_bytes(bytes.get(off..off + 2)?.try_into().ok()?) as u64,
        1 => *bytes.get(off)? as u64,
        _ => return None,
    })
}

/// A memory region most lanes of a load will hit: the allocation (or shared
/// memory) holding the first active lane's address. Lanes outside it take
/// the checked slow path.
#[inline(always)]
fn fast_region<'e>(
    env: &'e Env<'_>,
    space: Space,
    addrs: &[u64; WARP],
    exec: u32,
) -> Option<(u64, &'e [u8])> {
    if exec == 0 {
        return None;
    }
    let first = addrs[exec.trailing_zeros() as usize];
    match space {
        Space::Shared => Some((0, &env.shared.bytes[..])),
        Space::KernelParam => None,
        Space::Global | Space::Const => env.global.region_of(first),
        Space::Generic => match memory::window_of(first) {
            Window::Global => env.global.region_of(first),
            Window::Shared => Some((memory::SHARED_WINDOW, &env.shared.bytes[..])),
            _ => None,
        },
        Space::Local | Space::FrameParam => None,
    }
}

/// Stores to shared or global memory without the fault bookkeeping; `false`
/// when the access needs the checked path.
#[inline(always)]
fn write_fast(env: &mut Env<'_>, space: Space, addr: u64, size: u32, value: u64) -> bool {
    let (bytes, off): (&mut [u8], u64) = match space {
        Space::Shared => (&mut env.shared.bytes[..], addr & 0xffff_ffff),
        Space::Global => match env.global.slice_mut(addr, size as u64) {
            Ok(s) => (s, 0),
            Err(_) => return false,
        },
        Space::Generic => match memory::window_of(addr) {
            Window::Shared => (&mut env.shared.bytes[..], addr - memory::SHARED_WINDOW),
            Window::Global => match env.global.slice_mut(addr, size as u64) {
                Ok(s) => (s, 0),
                Err(_) => return false,
            },
            _ => return false,
        },
        _ => return false,
    };
    let Ok(off) = usize::try_from(off) else {
        return false;
    };
    let Some(dst) = bytes.get_mut(off..off + size as usize) else {
        return false;
    };
    memory::write_le(dst, value);
    true
}

/// A NUL-terminated string at a generic address (at most 4 KiB).
fn read_cstr(env: &Env<'_>, w: &Warp, addr: u64, lane: usize) -> Result<String, LaneFault> {
    let mut bytes = Vec::new();
    for k in 0..4096 {
        let b = load(env, w, Space::Generic, addr + k, 1, lane)? as u8;
        if b == 0 {
            break;
        }
        bytes.push(b);
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Executes the warp-instruction at `pc` for `active` lanes.
pub fn execute(
    w: &mut Warp,
    env: &mut Env<'_>,
    pc: u32,
    active: u32,
) -> Result<StepResult, LaneFault> {
    let prog = env.prog;
    let Some(inst) = prog.code.get(pc as usize) else {
        return Err(LaneFault {
            kind: FaultKind::IllegalInstruction,
            lane: active.trailing_zeros(),
            address: None,
            message: format!("no instruction at pc {pc}"),
        });
    };
    let exec = match inst.guard {
        Guard::Always => active,
        Guard::If(p) => active & w.preds[p as usize],
        Guard::IfNot(p) => active & !w.preds[p as usize],
    };
    w.executed += 1;
    let next = pc + 1;
    let v = &mut w.values;
    match &inst.op {
        Op::Fast2 { op, d, a, b } => {
            let (d, a, b) = (*d, *a, *b);
            match op {
                Fast2::AddB32 => lanes2(v, exec, d, a, b, |x, y| {
                    (x as u32).wrapping_add(y as u32) as u64
                }),
                Fast2::AddB64 => lanes2(v, exec, d, a, b, |x, y| x.wrapping_add(y)),
                Fast2::SubB32 => lanes2(v, exec, d, a, b, |x, y| {
                    (x as u32).wrapping_sub(y as u32) as u64
                }),
                Fast2::SubB64 => lanes2(v, exec, d, a, b, |x, y| x.wrapping_sub(y)),
                Fast2::MulLoB32 => lanes2(v, exec, d, a, b, |x, y| {
                    (x as u32).wrapping_mul(y as u32) as u64
                }),
                Fast2::MulLoB64 => lanes2(v, exec, d, a, b, |x, y| x.wrapping_mul(y)),
                Fast2::MulWideU32 => lanes2(v, exec, d, a, b, |x, y| {
                    (x as u32 as u64) * (y as u32 as u64)
                }),
                Fast2::MulWideS32 => lanes2(v, exec, d, a, b, |x, y| {
                    ((x as u32 as i32 as i64) * (y as u32 as i32 as i64)) as u64
                }),
                Fast2::And => lanes2(v, exec, d, a, b, |x, y| x & y),
                Fast2::Or => lanes2(v, exec, d, a, b, |x, y| x | y),
                Fast2::Xor => lanes2(v, exec, d, a, b, |x, y| x ^ y),
                Fast2::ShlB32 => lanes2(v, exec, d, a, b, |x, y| {
                    let n = y as u32;
                    if n > 31 { 0 } else { ((x as u32) << n) as u64 }
                }),
                Fast2::ShlB64 => lanes2(v, exec, d, a, b, |x, y| {
                    let n = y as u32;
                    if n > 63 { 0 } else { x << n }
                }),
                Fast2::ShrU32 => lanes2(v, exec, d, a, b, |x, y| {
                    let n = y as u32;
                    if n > 31 { 0 } else { ((x as u32) >> n) as u64 }
                }),
                Fast2::ShrS32 => lanes2(v, exec, d, a, b, |x, y| {
                    ((x as u32 as i32) >> (y as u32).min(31)) as u32 as u64
                }),
                Fast2::ShrU64 => lanes2(v, exec, d, a, b, |x, y| {
                    let n = y as u32;
                    if n > 63 { 0 } else { x >> n }
                }),
                Fast2::ShrS64 => lanes2(v, exec, d, a, b, |x, y| {
                    ((x as i64) >> (y as u32).min(63)) as u64
                }),
                Fast2::MinS32 => lanes2(v, exec, d, a, b, |x, y| {
                    (x as u32 as i32).min(y as u32 as i32) as u32 as u64
                }),
                Fast2::MaxS32 => lanes2(v, exec, d, a, b, |x, y| {
                    (x as u32 as i32).max(y as u32 as i32) as u32 as u64
                }),
                Fast2::MinU32 => lanes2(v, exec, d, a, b, |x, y| (x as u32).min(y as u32) as u64),
                Fast2::MaxU32 => lanes2(v, exec, d, a, b, |x, y| (x as u32).max(y as u32) as u64),
                Fast2::AddF32 => lanes2(v, exec, d, a, b, |x, y| canon32(f32of(x) + f32of(y))),
                Fast2::SubF32 => lanes2(v, exec, d, a, b, |x, y| canon32(f32of(x) - f32of(y))),
                Fast2::MulF32 => lanes2(v, exec, d, a, b, |x, y| canon32(f32of(x) * f32of(y))),
            }
        }
        Op::Fast3 { op, d, a, b, c } => {
            let (d, a, b, c) = (*d, *a, *b, *c);
            match op {
                Fast3::MadLoB32 => lanes3(v, exec, d, a, b, c, |x, y, z| {
                    (x as u32).wrapping_mul(y as u32).wrapping_add(z as u32) as u64
                }),
                Fast3::MadLoB64 => lanes3(v, exec, d, a, b, c, |x, y, z| {
                    x.wrapping_mul(y).wrapping_add(z)
                }),
                Fast3::MadWideU32 => lanes3(v, exec, d, a, b, c, |x, y, z| {
                    ((x as u32 as u64) * (y as u32 as u64)).wrapping_add(z)
                }),
                Fast3::MadWideS32 => lanes3(v, exec, d, a, b, c, |x, y, z| {
                    ((x as u32 as i32 as i64) * (y as u32 as i32 as i64)).wrapping_add(z as i64)
                        as u64
                }),
                Fast3::FmaF32 => fma_f32_lanes(v, exec, d, a, b, c),
            }
        }
        Op::FastSetp { kind, cmp, d, a, b } => {
            let bits = fast_setp(v, exec, *kind, *cmp, *a, *b);
            let p = &mut w.preds[*d as usize];
            *p = (*p & !exec) | bits;
        }
        Op::Mov { d, a } => {
            let (d, a) = (r(*d), r(*a));
            for_lanes(exec, |l| v[d + l] = v[a + l]);
        }
        Op::Alu1 { f, ctx, d, a } => {
            let (d, a) = (r(*d), r(*a));
            for_lanes(exec, |l| v[d + l] = f(ctx, v[a + l]));
        }
        Op::Alu2 { f, ctx, d, a, b } => {
            let (d, a, b) = (r(*d), r(*a), r(*b));
            for_lanes(exec, |l| v[d + l] = f(ctx, v[a + l], v[b + l]));
        }
        Op::Alu3 { f, ctx, d, a, b, c } => {
            let (d, a, b, c) = (r(*d), r(*a), r(*b), r(*c));
            for_lanes(exec, |l| v[d + l] = f(ctx, v[a + l], v[b + l], v[c + l]));
        }
        Op::Setp {
            f,
            ctx,
            d,
            dn,
            a,
            b,
            combine,
        } => {
            let (a, b) = (r(*a), r(*b));
            let mut t = 0u32;
            for_lanes(exec, |l| {
                if f(ctx, v[a + l], v[b + l]) {
                    t |= 1 << l;
                }
            });
            let (pos, neg) = match combine {
                None => (t, !t),
                Some((op, c)) => {
                    let c = pred_bits(&w.preds, *c);
                    match op {
                        BoolOp::And => (t & c, !t & c),
                        BoolOp::Or => (t | c, !t | c),
                        BoolOp::Xor => (t ^ c, !t ^ c),
                    }
                }
            };
            if let Some(d) = d {
                let p = &mut w.preds[*d as usize];
                *p = (*p & !exec) | (pos & exec);
            }
            if let Some(dn) = dn {
                let p = &mut w.preds[*dn as usize];
                *p = (*p & !exec) | (neg & exec);
            }
        }
        Op::Selp { d, a, b, p } => {
            let bits = pred_bits(&w.preds, *p);
            let (d, a, b) = (r(*d), r(*a), r(*b));
            for_lanes(exec, |l| {
                v[d + l] = if bits >> l & 1 != 0 {
                    v[a + l]
                } else {
                    v[b + l]
                }
            });
        }
        Op::PredLogic { op, d, a, b } => {
            let (x, y) = (pred_bits(&w.preds, *a), pred_bits(&w.preds, *b));
            let res = match op {
                None => x,
                Some(BoolOp::And) => x & y,
                Some(BoolOp::Or) => x | y,
                Some(BoolOp::Xor) => x ^ y,
            };
            let p = &mut w.preds[*d as usize];
            *p = (*p & !exec) | (res & exec);
        }
        Op::PredToReg { d, p } => {
            let bits = pred_bits(&w.preds, *p);
            let d = r(*d);
            for_lanes(exec, |l| v[d + l] = (bits >> l & 1) as u64);
        }
        Op::Pack { d, s, n, width } => {
            let d = r(*d);
            let (n, width) = (*n as usize, *width as u32);
            let mask = if width == 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            for_lanes(exec, |l| {
                let mut x = 0u64;
                for (i, row) in s.iter().take(n).enumerate() {
                    x |= (v[r(*row) + l] & mask) << (i as u32 * width);
                }
                v[d + l] = x;
            });
        }
        Op::Unpack { d, n, width, a } => {
            let a = r(*a);
            let (n, width) = (*n as usize, *width as u32);
            let mask = if width == 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            for_lanes(exec, |l| {
                let x = v[a + l];
                for (i, row) in d.iter().take(n).enumerate() {
                    v[r(*row) + l] = (x >> (i as u32 * width)) & mask;
                }
            });
        }
        Op::Bfi {
            d,
            a,
            b,
            pos,
            len,
            wide,
        } => {
            let (d, a, b, pos, len) = (r(*d), r(*a), r(*b), r(*pos), r(*len));
            let bits: u64 = if *wide { 64 } else { 32 };
            for_lanes(exec, |l| {
                let p = v[pos + l] & 0xff;
                let n = v[len + l] & 0xff;
                let mut x = v[b + l];
                for i in 0..n {
                    if p + i >= bits {
                        break;
                    }
                    let bit = (v[a + l] >> i) & 1;
                    x = (x & !(1 << (p + i))) | (bit << (p + i));
                }
                v[d + l] = if *wide { x } else { x & 0xffff_ffff };
            });
        }
        Op::AddCarry {
            d,
            a,
            b,
            sub,
            cin,
            cout,
            wide,
        } => {
            let (d, a, b, cf) = (r(*d), r(*a), r(*b), r(sreg::CARRY));
            for_lanes(exec, |l| {
                let c = if *cin { v[cf + l] & 1 } else { 0 };
                let (x, y) = (v[a + l], v[b + l]);
                let (res, carry) = if *wide {
                    if *sub {
                        let (r1, b1) = x.overflowing_sub(y);
                        let (r2, b2) = r1.overflowing_sub(c);
                        (r2, (b1 | b2) as u64)
                    } else {
                        let (r1, c1) = x.overflowing_add(y);
                        let (r2, c2) = r1.overflowing_add(c);
                        (r2, (c1 | c2) as u64)
                    }
                } else {
                    let (x, y) = (x & 0xffff_ffff, y & 0xffff_ffff);
                    if *sub {
                        let t = x.wrapping_sub(y).wrapping_sub(c);
                        (t & 0xffff_ffff, (x < y + c) as u64)
                    } else {
                        let t = x + y + c;
                        (t & 0xffff_ffff, t >> 32)
                    }
                };
                v[d + l] = res;
                if *cout {
                    v[cf + l] = carry;
                }
            });
        }
        Op::MadCarry {
            d,
            a,
            b,
            c,
            ty,
            hi,
            cin,
            cout,
        } => {
            let (d, a, b, c, cf) = (r(*d), r(*a), r(*b), r(*c), r(sreg::CARRY));
            for_lanes(exec, |l| {
                let p = if *hi {
                    crate::semantics::int::mul_hi(*ty, v[a + l], v[b + l])
                } else {
                    crate::semantics::int::mul_lo(*ty, v[a + l], v[b + l])
                };
                let carry_in = *cin && v[cf + l] & 1 == 1;
                let (sum, carry) = crate::semantics::int::addc(*ty, p, v[c + l], carry_in);
                v[d + l] = sum;
                if *cout {
                    v[cf + l] = carry as u64;
                }
            });
        }
        Op::Ld {
            space,
            size,
            signed,
            n,
            d,
            addr,
        } => {
            let (size, n) = (*size as u32, *n as usize);
            let addrs = addresses(w, addr, *space, exec)?;
            check_aligned(&addrs, exec, size as u64 * n as u64)?;
            let ext_bits = 64 - size * 8;
            let region = fast_region(env, *space, &addrs, exec);
            let extend = |raw: u64| {
                if *signed && ext_bits > 0 {
                    (((raw << ext_bits) as i64) >> ext_bits) as u64
                } else {
                    raw
                }
            };
            // Scalar loads that stay inside one region: one tight loop.
            let mut pending = exec;
            if n == 1
                && let Some((base, bytes)) = region
            {
                let dst = r(d[0]);
                let mut slow = 0u32;
                for_lanes(exec, |l| {
                    match read_at(bytes, addrs[l].wrapping_sub(base), size) {
                        Some(x) => w.values[dst + l] = extend(x),
                        None => slow |= 1 << l,
                    }
                });
                pending = slow;
            }
            let mut m = pending;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                for (i, dst) in d.iter().enumerate().take(n) {
                    let a = addrs[l] + (i as u64) * size as u64;
                    let raw = match region
                        .and_then(|(base, bytes)| read_at(bytes, a.wrapping_sub(base), size))
                    {
                        Some(x) => x,
                        None => load(env, w, *space, a, size, l)?,
                    };
                    w.values[r(*dst) + l] = extend(raw);
                }
            }
        }
        Op::St {
            space,
            size,
            n,
            s: srcs,
            addr,
        } => {
            let (size, n) = (*size as u32, *n as usize);
            env.wrote |= !matches!(space, Space::Local | Space::FrameParam);
            let addrs = addresses(w, addr, *space, exec)?;
            check_aligned(&addrs, exec, size as u64 * n as u64)?;
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                for (i, src) in srcs.iter().enumerate().take(n) {
                    let a = addrs[l] + (i as u64) * size as u64;
                    let val = w.values[r(*src) + l];
                    if !write_fast(env, *space, a, size, val) {
                        store(env, w, *space, a, size, val, l)?;
                    }
                }
            }
        }
        Op::Atom {
            space,
            op,
            ty,
            d,
            addr,
            b,
            c,
        } => {
            let size = ty.size_bytes();
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let a = effective(&w.values, addr, l, 0);
                check_align(a, size as u64, l)?;
                let old = load(env, w, *space, a, size, l)?;
                let (bv, cv) = (w.values[r(*b) + l], w.values[r(*c) + l]);
                let new = if *op == AtomOp::Cas {
                    crate::semantics::atomic_apply(*op, *ty, old, cv, bv)
                } else {
                    crate::semantics::atomic_apply(*op, *ty, old, bv, 0)
                };
                env.wrote |= new != old;
                store(env, w, *space, a, size, new, l)?;
                if let Some(d) = d {
                    w.values[r(*d) + l] = old;
                }
            }
        }
        Op::LocalAddr { d, offset } => {
            let d = r(*d);
            for_lanes(exec, |l| v[d + l] = (w.local_fp[l] + offset) as u64);
        }
        Op::Cvta {
            to_generic,
            space,
            d,
            a,
            a32,
        } => {
            let (d, a) = (r(*d), r(*a));
            let window = match space {
                Space::Shared => memory::SHARED_WINDOW,
                Space::Local => memory::LOCAL_WINDOW,
                Space::KernelParam => memory::PARAM_WINDOW,
                _ => 0,
            };
            for_lanes(exec, |l| {
                let x = if *a32 {
                    v[a + l] & 0xffff_ffff
                } else {
                    v[a + l]
                };
                v[d + l] = if window == 0 {
                    x
                } else if *to_generic {
                    window | (x & (memory::WINDOW_SIZE - 1))
                } else {
                    x.wrapping_sub(window)
                };
            });
        }
        Op::Isspacep { space, d, a } => {
            let a = r(*a);
            let mut bits = 0u32;
            for_lanes(exec, |l| {
                let win = memory::window_of(v[a + l]);
                let yes = match space {
                    Space::Shared => win == Window::Shared,
                    Space::Local => win == Window::Local,
                    Space::KernelParam => win == Window::Param,
                    _ => win == Window::Global,
                };
                if yes {
                    bits |= 1 << l;
                }
            });
            let p = &mut w.preds[*d as usize];
            *p = (*p & !exec) | (bits & exec);
        }
        Op::Bra { target } => {
            w.jump(exec, pc, *target);
            w.jump(active & !exec, pc, next);
            return Ok(StepResult::Continue);
        }
        Op::BrxIdx { index, targets } => {
            let index = r(*index);
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let i = w.values[index + l] as u32 as usize;
                let Some(t) = targets.get(i) else {
                    return Err(LaneFault {
                        kind: FaultKind::IllegalInstruction,
                        lane: l as u32,
                        address: None,
                        message: format!("brx.idx index {i} out of range 0..{}", targets.len()),
                    });
                };
                w.jump(1 << l, pc, *t);
            }
            w.jump(active & !exec, pc, next);
            return Ok(StepResult::Continue);
        }
        Op::Ldmatrix { n, trans, d, addr } => {
            // A warp-collective load: every lane's address takes part.
            let addrs = addresses(w, addr, Space::Shared, u32::MAX)?;
            let rows = 8 * *n as usize;
            let mut mats = [[[0u16; 8]; 8]; 4];
            for lane in 0..rows {
                let a = addrs[lane] & 0xffff_ffff;
                check_align(a, 16, lane)?;
                for (e, slot) in mats[lane / 8][lane % 8].iter_mut().enumerate() {
                    *slot = load(env, w, Space::Shared, a + 2 * e as u64, 2, lane)? as u16;
                }
            }
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let (row, col) = (l / 4, (l % 4) * 2);
                for (i, dst) in d.iter().enumerate().take(*n as usize) {
                    let (lo, hi) = if *trans {
                        (mats[i][col][row], mats[i][col + 1][row])
                    } else {
                        (mats[i][row][col], mats[i][row][col + 1])
                    };
                    w.values[r(*dst) + l] = lo as u64 | (hi as u64) << 16;
                }
            }
        }
        Op::Mma {
            k,
            bf16,
            d,
            a,
            b,
            c,
        } => {
            let k = *k as usize;
            let half = |bits: u64| -> f32 {
                if *bf16 {
                    half::bf16::from_bits(bits as u16).to_f32()
                } else {
                    half::f16::from_bits(bits as u16).to_f32()
                }
            };
            // Gather the fragments (PTX ISA "Matrix fragments for mma.m16n8k16").
            let mut am = [[0f32; 16]; 16];
            let mut bm = [[0f32; 8]; 16];
            let mut cm = [[0f32; 8]; 16];
            for l in 0..WARP {
                let (g, t) = (l / 4, l % 4);
                let val = |row: Row| w.values[r(row) + l];
                let pair = |x: u64| (half(x), half(x >> 16));
                let a_regs: &[(usize, usize)] = if k == 16 {
                    &[
                        (g, 2 * t),
                        (g + 8, 2 * t),
                        (g, 2 * t + 8),
                        (g + 8, 2 * t + 8),
                    ]
                } else {
                    &[(g, 2 * t), (g + 8, 2 * t)]
                };
                for (i, (row, col)) in a_regs.iter().enumerate() {
                    let (x0, x1) = pair(val(a[i]));
                    am[*row][*col] = x0;
                    am[*row][*col + 1] = x1;
                }
                let b_regs: &[usize] = if k == 16 {
                    &[2 * t, 2 * t + 8]
                } else {
                    &[2 * t]
                };
                for (i, kk) in b_regs.iter().enumerate() {
                    let (x0, x1) = pair(val(b[i]));
                    bm[*kk][g] = x0;
                    bm[*kk + 1][g] = x1;
                }
                for (i, (row, col)) in [
                    (g, 2 * t),
                    (g, 2 * t + 1),
                    (g + 8, 2 * t),
                    (g + 8, 2 * t + 1),
                ]
                .iter()
                .enumerate()
                {
                    cm[*row][*col] = f32::from_bits(val(c[i]) as u32);
                }
            }
            let mut out = [[0f32; 8]; 16];
            for (row, out_row) in out.iter_mut().enumerate() {
                for (col, o) in out_row.iter_mut().enumerate() {
                    // f16/bf16 products are exact in f32; accumulate in k order.
                    let mut acc = cm[row][col];
                    for kk in 0..k {
                        acc += am[row][kk] * bm[kk][col];
                    }
                    *o = acc;
                }
            }
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let (g, t) = (l / 4, l % 4);
                for (i, (row, col)) in [
                    (g, 2 * t),
                    (g, 2 * t + 1),
                    (g + 8, 2 * t),
                    (g + 8, 2 * t + 1),
                ]
                .iter()
                .enumerate()
                {
                    w.values[r(d[i]) + l] = canon32(out[*row][*col]);
                }
            }
        }
        Op::CpAsync {
            dst,
            src,
            size,
            src_size,
        } => {
            // Copies complete immediately: earlier than `cp.async.wait_*`
            // requires, which every correct kernel tolerates.
            let size = *size as u64;
            env.wrote = true;
            let dsts = addresses(w, dst, Space::Shared, exec)?;
            let srcs = addresses(w, src, Space::Global, exec)?;
            check_aligned(&dsts, exec, size)?;
            check_aligned(&srcs, exec, size)?;
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let valid = src_size.map_or(size, |row| w.values[r(row) + l].min(size));
                for off in (0..size).step_by(4) {
                    let x = if off < valid {
                        let take = (valid - off).min(4) as u32;
                        let v = load(env, w, Space::Global, srcs[l] + off, 1, l)?;
                        let mut v = v;
                        for b in 1..take {
                            v |= load(env, w, Space::Global, srcs[l] + off + b as u64, 1, l)?
                                << (8 * b);
                        }
                        v
                    } else {
                        0
                    };
                    store(
                        env,
                        w,
                        Space::Shared,
                        dsts[l] + off,
                        4.min(size as u32),
                        x,
                        l,
                    )?;
                }
            }
        }
        Op::Vprintf { fmt, args, ret } => {
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let fp = w.param_fp[l] as u64;
                let fmt_ptr = w.param[l].load(fp + *fmt as u64, 8).unwrap_or(0);
                let args_ptr = w.param[l].load(fp + *args as u64, 8).unwrap_or(0);
                let text = read_cstr(env, w, fmt_ptr, l)?;
                let mut off = 0u64;
                let mut failed = None;
                let (out, count) = crate::printf::format(
                    text.as_bytes(),
                    |size| {
                        off = off.next_multiple_of(size as u64);
                        let v = if args_ptr == 0 {
                            0
                        } else {
                            match load(env, w, Space::Generic, args_ptr + off, size, l) {
                                Ok(v) => v,
                                Err(e) => {
                                    failed.get_or_insert(e);
                                    0
                                }
                            }
                        };
                        off += size as u64;
                        v
                    },
                    |p| read_cstr(env, w, p, l).unwrap_or_else(|_| "(bad string)".into()),
                );
                if let Some(e) = failed {
                    return Err(e);
                }
                env.printf.push_str(&out);
                if let Some(ret) = ret {
                    let _ = w.param[l].store(fp + *ret as u64, 4, count as u64);
                }
            }
        }
        Op::AssertFail {
            message,
            file,
            line,
        } => {
            if exec != 0 {
                let l = exec.trailing_zeros() as usize;
                let fp = w.param_fp[l] as u64;
                let msg_ptr = w.param[l].load(fp + *message as u64, 8).unwrap_or(0);
                let file_ptr = w.param[l].load(fp + *file as u64, 8).unwrap_or(0);
                let line_no = w.param[l].load(fp + *line as u64, 4).unwrap_or(0);
                let msg = read_cstr(env, w, msg_ptr, l).unwrap_or_default();
                let file = read_cstr(env, w, file_ptr, l).unwrap_or_default();
                return Err(LaneFault {
                    kind: FaultKind::Assert,
                    lane: l as u32,
                    address: None,
                    message: format!("assertion `{msg}` failed ({file}:{line_no})"),
                });
            }
        }
        Op::Call(info) => {
            do_call(w, prog, info, exec, next)?;
            w.jump(active & !exec, pc, next);
            return Ok(StepResult::Continue);
        }
        Op::Ret => {
            do_ret(w, prog, exec);
            w.jump(active & !exec, pc, next);
            return Ok(StepResult::Continue);
        }
        Op::Exit => {
            w.park(exec, next, true);
            *env.live_threads -= exec.count_ones();
            w.jump(active & !exec, pc, next);
            return Ok(if exec != 0 {
                StepResult::Exited
            } else {
                StepResult::Continue
            });
        }
        Op::Trap => {
            if exec != 0 {
                return Err(LaneFault {
                    kind: FaultKind::Trap,
                    lane: exec.trailing_zeros(),
                    address: None,
                    message: "trap".into(),
                });
            }
        }
        Op::Bar {
            kind,
            id,
            count,
            d,
            dp,
            p,
        } => {
            if exec == 0 {
                w.jump(active, pc, next);
                return Ok(StepResult::Continue);
            }
            let lane = exec.trailing_zeros() as usize;
            let bar_id = w.values[r(*id) + lane] as u32;
            if bar_id >= 16 {
                return Err(LaneFault {
                    kind: FaultKind::IllegalInstruction,
                    lane: lane as u32,
                    address: None,
                    message: format!("barrier id {bar_id} out of range 0..16"),
                });
            }
            let b = &mut env.barriers[bar_id as usize];
            if let Some(c) = count {
                let c = w.values[r(*c) + lane] as u32;
                if c == 0 || c % 32 != 0 {
                    return Err(LaneFault {
                        kind: FaultKind::IllegalInstruction,
                        lane: lane as u32,
                        address: None,
                        message: format!(
                            "barrier thread count {c} is not a positive multiple of 32"
                        ),
                    });
                }
                b.expected = Some(c);
            }
            b.arrived += exec.count_ones();
            let bits = pred_bits(&w.preds, *p) & exec;
            match kind {
                BarKind::RedPopc => b.red_popc += bits.count_ones(),
                BarKind::RedAnd => b.red_and_failed |= bits != exec,
                BarKind::RedOr => b.red_or |= bits != 0,
                _ => {}
            }
            if matches!(kind, BarKind::RedPopc | BarKind::RedAnd | BarKind::RedOr) {
                b.reductions.push((w.index, exec, *kind, *d, *dp));
            }
            w.jump(active & !exec, pc, next);
            if *kind == BarKind::Arrive {
                w.jump(exec, pc, next);
            } else {
                b.waiters.push((w.index, exec));
                w.park(exec, next, false);
            }
            return Ok(StepResult::Arrived(bar_id));
        }
        Op::Shfl {
            mode,
            d,
            dp,
            a,
            b,
            c,
            mask,
        } => {
            let (a, b, c, _mask) = (r(*a), r(*b), r(*c), r(*mask));
            let mut out = [0u64; WARP];
            let mut ok = 0u32;
            for_lanes(exec, |l| {
                let lane = l as i32;
                let bval = (v[b + l] & 0x1f) as i32;
                let cval = v[c + l];
                let clamp = (cval & 0x1f) as i32;
                let seg = ((cval >> 8) & 0x1f) as i32;
                let max_lane = (lane & seg) | (clamp & !seg);
                let min_lane = lane & seg;
                let (j, pval) = match mode {
                    ShflMode::Up => (lane - bval, lane - bval >= max_lane),
                    ShflMode::Down => (lane + bval, lane + bval <= max_lane),
                    ShflMode::Bfly => (lane ^ bval, (lane ^ bval) <= max_lane),
                    ShflMode::Idx => {
                        let j = min_lane | (bval & !seg);
                        (j, j <= max_lane)
                    }
                };
                let j = if pval && (0..32).contains(&j) {
                    j as usize
                } else {
                    l
                };
                out[l] = v[a + j];
                if pval {
                    ok |= 1 << l;
                }
            });
            let d = r(*d);
            for_lanes(exec, |l| v[d + l] = out[l]);
            if let Some(dp) = dp {
                let p = &mut w.preds[*dp as usize];
                *p = (*p & !exec) | (ok & exec);
            }
        }
        Op::Vote {
            mode,
            d,
            dp,
            p,
            mask,
        } => {
            let lane = exec.trailing_zeros() as usize;
            let members = if exec == 0 {
                0
            } else {
                exec & v[r(*mask) + lane] as u32
            };
            let members = if members == 0 { exec } else { members };
            let bits = pred_bits(&w.preds, *p) & members;
            match mode {
                VoteMode::Ballot => {
                    if let Some(d) = d {
                        let d = r(*d);
                        for_lanes(exec, |l| v[d + l] = bits as u64);
                    }
                }
                _ => {
                    let t = match mode {
                        VoteMode::All => bits == members,
                        VoteMode::Any => bits != 0,
                        _ => bits == 0 || bits == members,
                    };
                    if let Some(dp) = dp {
                        let pr = &mut w.preds[*dp as usize];
                        *pr = if t { *pr | exec } else { *pr & !exec };
                    }
                }
            }
        }
        Op::Activemask { d } => {
            let d = r(*d);
            for_lanes(exec, |l| v[d + l] = active as u64);
        }
        Op::Match {
            all,
            wide,
            d,
            dp,
            a,
            mask,
        } => {
            let a = r(*a);
            let lane0 = exec.trailing_zeros() as usize;
            let members = if exec == 0 {
                0
            } else {
                exec & v[r(*mask) + lane0] as u32
            };
            let members = if members == 0 { exec } else { members };
            let val = |l: usize| {
                if *wide {
                    v[a + l]
                } else {
                    v[a + l] & 0xffff_ffff
                }
            };
            let mut out = [0u64; WARP];
            let mut pbits = 0u32;
            if *all {
                let first = val(members.trailing_zeros() as usize);
                let mut same = true;
                for_lanes(members, |l| same &= val(l) == first);
                for_lanes(exec, |l| out[l] = if same { members as u64 } else { 0 });
                if same {
                    pbits = exec;
                }
            } else {
                for_lanes(exec, |l| {
                    let x = val(l);
                    let mut eq = 0u32;
                    for_lanes(members, |k| {
                        if val(k) == x {
                            eq |= 1 << k;
                        }
                    });
                    out[l] = eq as u64;
                });
            }
            let d = r(*d);
            for_lanes(exec, |l| v[d + l] = out[l]);
            if let Some(dp) = dp {
                let p = &mut w.preds[*dp as usize];
                *p = (*p & !exec) | (pbits & exec);
            }
        }
        Op::Redux {
            op,
            signed,
            d,
            a,
            mask,
        } => {
            let a = r(*a);
            let lane0 = exec.trailing_zeros() as usize;
            let members = if exec == 0 {
                0
            } else {
                exec & v[r(*mask) + lane0] as u32
            };
            let members = if members == 0 { exec } else { members };
            let mut acc: Option<u32> = None;
            for_lanes(members, |l| {
                let x = v[a + l] as u32;
                acc = Some(match acc {
                    None => x,
                    Some(y) => match op {
                        ReduxOp::Add => y.wrapping_add(x),
                        ReduxOp::Min if *signed => (y as i32).min(x as i32) as u32,
                        ReduxOp::Max if *signed => (y as i32).max(x as i32) as u32,
                        ReduxOp::Min => y.min(x),
                        ReduxOp::Max => y.max(x),
                        ReduxOp::And => y & x,
                        ReduxOp::Or => y | x,
                        ReduxOp::Xor => y ^ x,
                    },
                });
            });
            let res = acc.unwrap_or(0) as u64;
            let d = r(*d);
            for_lanes(exec, |l| v[d + l] = res);
        }
        Op::Timer { d, which } => {
            let t = match which {
                TimeSource::Clock32 => (w.executed * 4) & 0xffff_ffff,
                TimeSource::Clock64 => w.executed * 4,
                TimeSource::GlobalTimer => (env.launch_clock + w.executed) * 32,
                TimeSource::GlobalTimerLo => ((env.launch_clock + w.executed) * 32) & 0xffff_ffff,
                TimeSource::GlobalTimerHi => ((env.launch_clock + w.executed) * 32) >> 32,
            };
            let d = r(*d);
            for_lanes(exec, |l| v[d + l] = t);
        }
        Op::Family(f) => (f.run)(f, v, &mut w.preds, exec),
        Op::Nop | Op::WarpSync { .. } => {}
    }
    // Straight-line instruction: every active lane moves on.
    w.advance(active, next);
    Ok(StepResult::Continue)
}

fn do_call(
    w: &mut Warp,
    prog: &Program,
    info: &CallInfo,
    exec: u32,
    next: u32,
) -> Result<(), LaneFault> {
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let callee_index = match info.target {
            CallTarget::Direct(f) => f,
            CallTarget::Indirect {
                row,
                params,
                returns,
            } => {
                let addr = w.values[r(row) + l];
                let f = addr.wrapping_sub(crate::decode::FUNC_ADDR_BASE);
                let ok = prog.funcs.get(f as usize).is_some_and(|c| {
                    !c.is_kernel
                        && c.params.len() as u32 == params
                        && c.returns.len() as u32 == returns
                });
                if !ok {
                    return Err(LaneFault {
                        kind: FaultKind::IllegalInstruction,
                        lane: l as u32,
                        address: Some(addr),
                        message: "indirect call to an address that is not a matching function"
                            .into(),
                    });
                }
                f as u32
            }
        };
        let callee = &prog.funcs[callee_index as usize];
        let caller = &prog.funcs[w.func[l] as usize];
        if w.frames[l].len() >= 1024 {
            return Err(LaneFault {
                kind: FaultKind::IllegalInstruction,
                lane: l as u32,
                address: None,
                message: "call stack overflow (1024 frames)".into(),
            });
        }
        // Save the caller's registers: the callee reuses the same window.
        let save_at = w.saves[l].len();
        for row in prog.window_base..prog.window_base + caller.num_rows {
            w.saves[l].push(w.values[r(row) + l]);
        }
        for p in 0..caller.num_preds as usize {
            w.saves[l].push((w.preds[p] >> l & 1) as u64);
        }
        w.frames[l].push(Frame {
            ret_pc: next,
            caller: w.func[l],
            local_fp: w.local_fp[l],
            param_fp: w.param_fp[l],
            save_at,
        });
        let new_param_fp = w.param_fp[l] + caller.param_frame;
        let need = (new_param_fp + callee.param_frame) as usize;
        if w.param[l].bytes.len() < need {
            w.param[l].bytes.resize(need, 0);
        }
        for (from, (to, size)) in info.args.iter().zip(&callee.params) {
            let size = *size as usize;
            let value = match from {
                CallSlot::Frame(from) => {
                    let src = (w.param_fp[l] + from) as usize;
                    let dst = (new_param_fp + to) as usize;
                    w.param[l].bytes.copy_within(src..src + size, dst);
                    None
                }
                // Read before any `.reg` parameter is written: they share the window.
                CallSlot::Reg(row) => Some(w.values[r(*row) + l]),
            };
            if let Some(v) = value {
                let dst = (new_param_fp + to) as usize;
                let bytes = v.to_le_bytes();
                w.param[l].bytes[dst..dst + size.min(8)].copy_from_slice(&bytes[..size.min(8)]);
            }
        }
        // `.reg` parameters: the callee's registers, filled from its frame slots.
        for (row, (off, size)) in callee.reg_params.iter().zip(&callee.params) {
            if let Some(row) = row {
                let at = (new_param_fp + off) as usize;
                let mut bytes = [0u8; 8];
                let n = (*size as usize).min(8);
                bytes[..n].copy_from_slice(&w.param[l].bytes[at..at + n]);
                w.values[r(*row) + l] = u64::from_le_bytes(bytes);
            }
        }
        let new_local_fp = w.local_fp[l] + caller.local_frame;
        let need = (new_local_fp + callee.local_frame) as usize;
        if w.local[l].bytes.len() < need {
            w.local[l].bytes.resize(need, 0);
        }
        w.param_fp[l] = new_param_fp;
        w.local_fp[l] = new_local_fp;
        w.func[l] = callee_index;
        w.jump(1 << l, next - 1, callee.entry_pc);
    }
    Ok(())
}

fn do_ret(w: &mut Warp, prog: &Program, exec: u32) {
    let mut m = exec;
    w.diverge();
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let Some(frame) = w.frames[l].pop() else {
            // `ret` from the kernel's outermost function retires the thread.
            w.exited |= 1 << l;
            continue;
        };
        // Return values: `.reg` returns are the callee's registers; register
        // destinations are written after the caller's registers are restored.
        let mut into_regs: [(Row, u64); 8] = [(0, 0); 8];
        let mut n_into = 0;
        if let Op::Call(info) = &prog.code[frame.ret_pc as usize - 1].op {
            let callee = &prog.funcs[w.func[l] as usize];
            for (k, (to, (from, size))) in info.rets.iter().zip(&callee.returns).enumerate() {
                let size = *size as usize;
                let src = (w.param_fp[l] + from) as usize;
                let value = match callee.reg_returns.get(k).copied().flatten() {
                    Some(row) => w.values[r(row) + l],
                    None => {
                        let mut bytes = [0u8; 8];
                        let n = size.min(8);
                        bytes[..n].copy_from_slice(&w.param[l].bytes[src..src + n]);
                        u64::from_le_bytes(bytes)
                    }
                };
                match to {
                    CallSlot::Frame(to) => {
                        let dst = (frame.param_fp + to) as usize;
                        if callee.reg_returns.get(k).copied().flatten().is_some() {
                            let n = size.min(8);
                            w.param[l].bytes[dst..dst + n]
                                .copy_from_slice(&value.to_le_bytes()[..n]);
                        } else {
                            w.param[l].bytes.copy_within(src..src + size, dst);
                        }
                    }
                    CallSlot::Reg(row) if n_into < into_regs.len() => {
                        into_regs[n_into] = (*row, value);
                        n_into += 1;
                    }
                    CallSlot::Reg(_) => {}
                }
            }
        }
        let caller = &prog.funcs[frame.caller as usize];
        let mut k = frame.save_at;
        for row in prog.window_base..prog.window_base + caller.num_rows {
            w.values[r(row) + l] = w.saves[l][k];
            k += 1;
        }
        for p in 0..caller.num_preds as usize {
            let bit = w.saves[l][k] as u32;
            w.preds[p] = (w.preds[p] & !(1 << l)) | (bit << l);
            k += 1;
        }
        for (row, value) in &into_regs[..n_into] {
            w.values[r(*row) + l] = *value;
        }
        w.saves[l].truncate(frame.save_at);
        w.local_fp[l] = frame.local_fp;
        w.param_fp[l] = frame.param_fp;
        w.func[l] = frame.caller;
        w.pcs[l] = frame.ret_pc;
    }
    w.maybe_reconverge();
}
