//! The SIMT machine: one CTA's warps, shared memory and barriers, and the
//! execution of one warp-instruction.
//!
//! Reconvergence policy (`docs/reconvergence.md`): a divergent branch opens
//! a convergence barrier at its immediate post-dominator
//! ([`crate::reconverge`]), as the `BSSY`/`BSYNC` pair NVIDIA's compiler
//! places there; lanes that reach it wait until every lane of the group
//! that diverged (less those that exited) has arrived. Among the lanes that
//! can run, the warp executes the lowest PC; the lanes at that PC form the
//! active mask. While all runnable threads share one PC and no barrier is
//! open the warp is "converged" and per-thread PCs are not maintained. A
//! diverged group that runs [`ITS_QUANTUM`] warp-instructions in a row
//! yields to the warp's other groups, and lanes kept at a convergence
//! barrier for [`BARRIER_PATIENCE`] such windows are let go (independent
//! thread scheduling; see [`Warp::next_group`]).

// The instruction families, one module each (`emulator/src/machine/`);
// `execute` below dispatches to them.
mod arith;
mod control;
mod int;
mod memory_ops;
mod sync;
mod tensor;
mod texture;
mod warp;

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

/// Starvation windows that lanes wait at a convergence barrier, while other
/// lanes of their warp run without arriving, before they are let go (a
/// lock holder waiting at a loop's exit for lanes that spin on its lock).
pub const BARRIER_PATIENCE: u32 = 4;

/// A convergence barrier: the lanes of a group that diverged at a branch
/// whose paths rejoin at `rpc` (in the activation `depth` calls deep).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ConvBarrier {
    rpc: u32,
    members: u32,
    depth: u32,
}

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
    /// Which of the caller's rows were saved there (from `saved_from`),
    /// and how many of its predicates (from 0): those the callee can
    /// overwrite.
    saved_from: u32,
    saved_rows: u32,
    saved_preds: u32,
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
    /// Open convergence barriers, oldest first.
    cbar: Vec<ConvBarrier>,
    /// Lanes waiting at an open convergence barrier.
    waiting: u32,
    /// One bit per `rpc % 64` of the open barriers: a cheap test for
    /// "this PC may be a reconvergence point".
    rpc_bloom: u64,
    /// Starvation windows the waiting lanes have waited without running.
    wait_windows: u32,
    /// Some lanes moved to a PC that may be an open barrier's since the
    /// barriers were last settled.
    bar_dirty: bool,
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
    /// Address of the grid workspace of a cooperative launch (0 otherwise):
    /// `%envreg1:%envreg2`.
    pub grid_workspace: u64,
    /// The cluster shape (1x1x1 when the launch has no clusters: every CTA
    /// is its own cluster).
    pub cluster: [u32; 3],
    /// `%is_explicit_cluster`: the shape was given by the launch or the
    /// kernel.
    pub explicit_cluster: bool,
}

impl CtaShape {
    /// `%cluster_ctarank`: the CTA's rank in its cluster (x fastest).
    pub fn cluster_rank(&self) -> u32 {
        let [cx, cy, cz] = self.cluster;
        let [x, y, z] = self.ctaid;
        x % cx + (y % cy) * cx + (z % cz) * cx * cy
    }

    /// `%cluster_nctarank`: the CTAs of a cluster.
    pub fn cluster_size(&self) -> u32 {
        self.cluster.iter().product()
    }
}

/// Everything outside a warp that an instruction can touch.
pub struct Env<'a> {
    pub prog: &'a Program,
    /// Shared with the CTAs running on other threads: accesses are atomic.
    pub global: &'a GlobalMemory,
    pub shared: &'a mut FlatMemory,
    pub kparams: &'a [u8],
    pub barriers: &'a mut [Barrier; 16],
    /// Non-exited threads of the CTA.
    pub live_threads: &'a mut u32,
    /// Warp-instructions executed by the launch so far, for `%globaltimer`.
    pub launch_clock: u64,
    /// Device `printf` output of the launch so far.
    pub printf: &'a mut String,
    /// Device-side `malloc`/`free`'s heap.
    pub heap: &'a crate::heap::DeviceHeap,
    /// Set when the instruction wrote global or shared memory (an atomic
    /// only if it changed the value): progress, for the stall watchdog.
    pub wrote: bool,
    /// The CTA's cluster.
    pub cluster: ClusterEnv<'a>,
}

/// What an instruction sees of the executing CTA's cluster.
pub struct ClusterEnv<'a> {
    /// `%cluster_ctarank` of the executing CTA and `%cluster_nctarank`.
    pub rank: u32,
    pub size: u32,
    /// The shared memory of the cluster's CTAs, by rank; the executing
    /// CTA's slot is empty (its memory is [`Env::shared`]), and the slice is
    /// empty when the cluster is the CTA alone.
    pub peers: &'a mut [FlatMemory],
    /// Per warp of the CTA: lanes that arrived at `barrier.cluster` in the
    /// current phase, and lanes blocked in `barrier.cluster.wait` until it
    /// completes (the launch completes it: every non-exited thread of the
    /// cluster arrived).
    pub arrived: &'a mut [u32],
    pub waiting: &'a mut [u32],
}

/// What a warp-instruction did to the warp's schedulability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepResult {
    Continue,
    /// Lanes of this warp arrived at barrier `id`: the CTA must check it.
    Arrived(u32),
    /// Lanes exited: barriers may now complete.
    Exited,
    /// Lanes arrived at, or wait in, `barrier.cluster`: the launch must
    /// check whether the cluster's phase completes.
    ClusterBarrier,
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
            cbar: Vec::new(),
            waiting: 0,
            rpc_bloom: 0,
            wait_windows: 0,
            bar_dirty: false,
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
        self.cbar.clear();
        self.waiting = 0;
        self.rpc_bloom = 0;
        self.set_converged(f.entry_pc);
        self.executed = 0;
        self.index = index;
        // Registers start at zero (a trace must not depend on what ran
        // before); only the rows this kernel can reach are ever read.
        let window = r(f.clobber_rows.start)..r(f.clobber_rows.end);
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
                let c = shape.cluster[k].max(1);
                set(
                    &mut self.values,
                    sreg::CLUSTER_CTAID + k32,
                    (shape.ctaid[k] % c) as u64,
                );
                set(&mut self.values, sreg::CLUSTER_NCTAID + k32, c as u64);
                set(
                    &mut self.values,
                    sreg::CLUSTERID + k32,
                    (shape.ctaid[k] / c) as u64,
                );
                set(
                    &mut self.values,
                    sreg::NCLUSTERID + k32,
                    (shape.nctaid[k] / c) as u64,
                );
            }
            set(
                &mut self.values,
                sreg::CLUSTER_CTARANK,
                shape.cluster_rank() as u64,
            );
            set(
                &mut self.values,
                sreg::CLUSTER_NCTARANK,
                shape.cluster_size() as u64,
            );
            set(
                &mut self.values,
                sreg::IS_EXPLICIT_CLUSTER,
                shape.explicit_cluster as u64,
            );
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
            set(&mut self.values, sreg::ENVREG1, shape.grid_workspace >> 32);
            set(
                &mut self.values,
                sreg::ENVREG2,
                shape.grid_workspace & 0xffff_ffff,
            );
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
        !self.exited & !self.blocked & !self.waiting
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
        if self.bar_dirty {
            self.settle_barriers();
        }
        let live = self.runnable();
        if live == 0 {
            return None;
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
        let mut live = live;
        let mut starved = live & !self.its_ran & !self.sync_wait;
        let stuck = self.waiting & !self.its_ran;
        if stuck == 0 {
            self.wait_windows = 0;
        } else {
            self.wait_windows += 1;
            if self.wait_windows >= BARRIER_PATIENCE {
                self.wait_windows = 0;
                self.release(stuck);
                live |= stuck;
                starved |= stuck;
            }
        }
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
            if active == live && self.cbar.is_empty() {
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

    /// A group of lanes (`active`, all at the same PC) diverges at a branch
    /// whose paths rejoin at `rpc`: they will wait for each other there. A
    /// barrier already open at `rpc` for a superset of them (a loop left by
    /// several branches, or the same branch on a later iteration) serves.
    /// `calls`: the barrier is that many calls deeper than the branch.
    pub(crate) fn open_barrier(&mut self, rpc: u32, active: u32, calls: u32) {
        if rpc == crate::reconverge::NONE || active == 0 {
            return;
        }
        let depth = self.frames[active.trailing_zeros() as usize].len() as u32 + calls;
        if self
            .cbar
            .iter()
            .any(|b| b.rpc == rpc && b.depth == depth && active & !b.members == 0)
        {
            return;
        }
        self.cbar.push(ConvBarrier {
            rpc,
            members: active,
            depth,
        });
        self.rpc_bloom |= 1u64 << (rpc & 63);
    }

    /// Lanes that arrived at their barriers wait; barriers whose every
    /// non-exited member arrived are passed (removed). Needs current `pcs`.
    fn settle_barriers(&mut self) {
        self.bar_dirty = false;
        if self.cbar.is_empty() {
            self.waiting = 0;
            return;
        }
        let mut waiting = 0u32;
        let mut bloom = 0u64;
        let exited = self.exited;
        let mut i = 0;
        while i < self.cbar.len() {
            let b = &mut self.cbar[i];
            b.members &= !exited;
            let b = *b;
            // Branch-free over all 32 lanes; the call depth only for the
            // few lanes at the PC.
            let mut at_rpc = 0u32;
            for (l, pc) in self.pcs.iter().enumerate() {
                at_rpc |= ((*pc == b.rpc) as u32) << l;
            }
            let mut arrived = 0u32;
            for_lanes(b.members & at_rpc, |l| {
                if self.frames[l].len() as u32 == b.depth {
                    arrived |= 1 << l;
                }
            });
            if arrived == b.members {
                self.cbar.remove(i);
            } else {
                waiting |= arrived;
                bloom |= 1u64 << (b.rpc & 63);
                i += 1;
            }
        }
        if waiting != 0 && !exited & !waiting == 0 {
            // Every lane waits at a convergence barrier for another: let
            // them go on. (Members blocked at a CTA barrier are left to the
            // CTA: see `release_waiting`.)
            for b in &mut self.cbar {
                b.members &= !waiting;
            }
            self.cbar.retain(|b| b.members != 0);
            waiting = 0;
            bloom = self.cbar.iter().fold(0, |m, b| m | 1u64 << (b.rpc & 63));
        }
        self.waiting = waiting;
        self.rpc_bloom = bloom;
        if waiting == 0 {
            self.wait_windows = 0;
        }
    }

    /// The CTA can make no progress: lanes waiting at a convergence
    /// barrier for members blocked at a CTA barrier are let go (lanes that
    /// return early must not hold a `bar.sync`; on the GPU they exit).
    /// Whether any lane was.
    pub fn release_waiting(&mut self) -> bool {
        let lanes = self.waiting & !self.exited;
        if lanes == 0 {
            return false;
        }
        self.release(lanes);
        true
    }

    /// Lets `lanes` go from every barrier (independent thread scheduling).
    fn release(&mut self, lanes: u32) {
        self.sync_group();
        for b in &mut self.cbar {
            b.members &= !lanes;
        }
        self.cbar.retain(|b| b.members != 0);
        self.settle_barriers();
        self.waiting &= !lanes;
        self.group_valid = false;
    }

    /// Whether `pc` may be where an open barrier's lanes wait.
    #[inline(always)]
    fn may_be_rpc(&self, pc: u32) -> bool {
        self.rpc_bloom >> (pc & 63) & 1 != 0
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
            if next >= self.others_min || self.may_be_rpc(next) {
                // Another group waits here or earlier: merge on the next
                // scan; or a barrier's lanes may have arrived.
                self.bar_dirty |= self.may_be_rpc(next);
                self.sync_group();
            }
        } else {
            self.bar_dirty |= self.may_be_rpc(next);
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
            if target >= self.others_min || self.may_be_rpc(target) {
                self.bar_dirty |= self.may_be_rpc(target);
                self.sync_group();
            }
            return;
        }
        let _ = pc;
        self.bar_dirty |= self.may_be_rpc(target);
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
        self.settle_barriers();
        if !self.cbar.is_empty() {
            return;
        }
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
        Op::Fast2 { .. }
        | Op::Fast3 { .. }
        | Op::FastSetp { .. }
        | Op::Mov { .. }
        | Op::MovVector(_)
        | Op::Alu1 { .. }
        | Op::Alu2 { .. }
        | Op::Alu3 { .. }
        | Op::Setp { .. }
        | Op::Selp { .. }
        | Op::PredLogic { .. }
        | Op::PredToReg { .. }
        | Op::Pack { .. }
        | Op::Unpack { .. } => {
            arith::execute(w, &inst.op, exec)?;
        }
        Op::Bfi { .. } | Op::AddCarry { .. } | Op::MadCarry { .. } => {
            int::execute(w, &inst.op, exec)?;
        }
        Op::Ld { .. }
        | Op::St { .. }
        | Op::LdStRare(_)
        | Op::Atom { .. }
        | Op::AtomVector { .. }
        | Op::LocalAddr { .. }
        | Op::Cvta { .. }
        | Op::Isspacep { .. }
        | Op::CpAsync { .. } => {
            memory_ops::execute(w, env, &inst.op, exec)?;
        }
        Op::Bra { target } => {
            if exec != 0 && exec != active {
                let table = &prog.reconverge;
                w.open_barrier(table.rpc[pc as usize], active, 0);
                let callee = table.shared_call[pc as usize];
                if let Some(f) = prog.funcs.get(callee as usize) {
                    w.open_barrier(f.entry_pc, active, 1);
                }
            }
            control::branch(w, pc, active, exec, *target);
            return Ok(StepResult::Continue);
        }
        Op::BrxIdx { .. }
        | Op::Vprintf { .. }
        | Op::DeviceMalloc { .. }
        | Op::DeviceFree { .. }
        | Op::AssertFail { .. }
        | Op::Call(_)
        | Op::Ret
        | Op::Exit
        | Op::Trap
        | Op::Bar { .. }
        | Op::ClusterBar { .. }
        | Op::Timer { .. } => {
            if let Some(step) = control::execute(w, env, &inst.op, pc, active, exec)? {
                return Ok(step);
            }
        }
        Op::Shfl { .. }
        | Op::Vote { .. }
        | Op::Activemask { .. }
        | Op::Match { .. }
        | Op::Redux { .. } => {
            warp::execute(w, &inst.op, active, exec)?;
        }
        Op::Mbarrier { .. } => sync::execute(w, env, &inst.op, exec)?,
        Op::Ldmatrix { .. } | Op::Stmatrix { .. } | Op::Mma { .. } | Op::Wmma(_) => {
            tensor::execute(w, env, &inst.op, exec)?;
        }
        Op::Family(f) => (f.run)(f, v, &mut w.preds, exec),
        Op::Texture(t) => texture::execute(t, v, exec, env)?,
        Op::Nop | Op::WarpSync { .. } => {}
    }
    // Straight-line instruction: every active lane moves on.
    w.advance(active, next);
    Ok(StepResult::Continue)
}
