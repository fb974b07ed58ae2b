//! Launch validation and the scheduler: CTAs on several host threads (or
//! one after another, or all interleaved for a cooperative grid), warps of
//! a CTA interleaved deterministically (or by a seeded pseudo-random
//! schedule). See the crate documentation, "Determinism", for the rules.

// `LaunchError` carries a full `Fault` by value (the public contract); it is
// returned once per failed launch, so its size costs nothing measurable.
#![allow(clippy::result_large_err)]

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::config::DeviceConfig;
use crate::error::{Fault, LaunchError};
use crate::instr::{CallTarget, Op};
use crate::machine::{
    self, Barrier, ClusterEnv, CtaShape, Env, FaultKind, LaneFault, StepResult, Warp,
};
use crate::memory::{FlatMemory, GlobalMemory};
use crate::observer::{Control, RegisterView, WarpStep};
use crate::program::Program;

mod cluster;
use cluster::{cluster_barrier_state, release_cluster_barrier};

/// The grid and block of a launch, and its dynamic shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
}

/// The clusters of a launch (`cuLaunchKernelEx`'s
/// `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClusterLaunch {
    /// The cluster shape in CTAs; `None`: the kernel's `.reqnctapercluster`,
    /// else 1x1x1 (every CTA is its own cluster).
    pub dims: Option<[u32; 3]>,
    /// `CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED`: clusters of up
    /// to 16 CTAs rather than the portable 8.
    pub non_portable: bool,
}

/// Work done by a completed launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LaunchStats {
    /// Instructions issued, counted once per warp.
    pub warp_instructions: u64,
    /// Instructions issued, counted once per active thread.
    pub thread_instructions: u64,
    pub ctas: u64,
}

impl LaunchStats {
    /// Adds `other`'s instruction counts (not its CTAs).
    pub(crate) fn add(&mut self, other: &LaunchStats) {
        self.warp_instructions += other.warp_instructions;
        self.thread_instructions += other.thread_instructions;
    }
}

/// The default stall watchdog, in warp-instructions without progress
/// (2^26, about 67 M): a hung kernel ends within seconds to a minute (a
/// spinning warp issues roughly 2–15 M warp-instructions per second here,
/// atomics being the slowest; `examples/stall_watchdog.rs`,
/// docs/emulator-benchmark.md), while a CTA that works does not go this
/// long without writing memory, retiring a thread or passing a barrier.
pub const DEFAULT_STALL_WATCHDOG: u64 = 1 << 26;

/// How the device runs launches: its settings, kept by the device and set
/// through it (`Device::set_threads`, `set_watchdog`, `set_stall_watchdog`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    /// Host threads that run a launch's CTAs (`PRLX_EMU_THREADS`).
    pub threads: usize,
    /// Warp-instructions a launch may execute before it fails with `Timeout`.
    pub watchdog: Option<u64>,
    /// Warp-instructions a CTA may execute without progress before the
    /// launch fails with `Timeout`.
    pub stall_watchdog: Option<u64>,
}

impl Settings {
    /// From `PRLX_EMU_THREADS`, `PRLX_EMU_WATCHDOG` and
    /// `PRLX_EMU_STALL_WATCHDOG`, each defaulted when unset.
    pub fn from_env() -> Settings {
        Settings {
            threads: threads_from_env(),
            watchdog: std::env::var("PRLX_EMU_WATCHDOG")
                .ok()
                .and_then(|v| v.trim().parse().ok()),
            stall_watchdog: stall_watchdog_from_env(),
        }
    }
}

/// `PRLX_EMU_STALL_WATCHDOG`: a warp-instruction count, or `off`/`0`.
fn stall_watchdog_from_env() -> Option<u64> {
    match std::env::var("PRLX_EMU_STALL_WATCHDOG") {
        Ok(v) => match v.trim() {
            "off" | "0" => None,
            n => Some(n.parse().unwrap_or(DEFAULT_STALL_WATCHDOG)),
        },
        Err(_) => Some(DEFAULT_STALL_WATCHDOG),
    }
}

/// What the scheduler remembers of one kernel across its launches; kept
/// with the loaded module.
#[derive(Debug)]
pub(crate) struct KernelSchedule {
    /// Warp-instructions of the kernel's last launch (`u64::MAX`: not
    /// launched yet): kernels too short to gain from more threads run on one.
    last_work: AtomicU64,
    /// Whether the kernel's CTAs must run in order (computed on its first
    /// launch; see [`needs_cta_order`]).
    cta_order: OnceLock<bool>,
    /// Whether the kernel can call device `malloc`/`free` (computed on its
    /// first launch): launching it fixes the heap's size.
    uses_heap: OnceLock<bool>,
}

impl Default for KernelSchedule {
    fn default() -> Self {
        KernelSchedule {
            last_work: AtomicU64::new(u64::MAX),
            cta_order: OnceLock::new(),
            uses_heap: OnceLock::new(),
        }
    }
}

/// What a launch takes from the device that runs it.
pub(crate) struct Target<'a> {
    pub program: &'a Program,
    /// One per kernel of `program`.
    pub schedules: &'a [KernelSchedule],
    pub memory: &'a GlobalMemory,
    pub config: &'a DeviceConfig,
    pub settings: Settings,
    pub heap: &'a crate::heap::DeviceHeap,
    /// Counts the device's launches, for `%gridid`.
    pub launches: &'a AtomicU64,
}

/// A finished launch: its result and the device `printf` output its CTAs
/// made, in CTA order, for the device to deliver.
pub(crate) struct Finished {
    pub result: Result<LaunchStats, LaunchError>,
    pub printf: String,
}

/// A statically dispatched observer: `NoObserver` compiles the hook away.
pub(crate) trait StepHook {
    const ENABLED: bool;
    fn before(&mut self, step: &WarpStep<'_>) -> Control;
}

pub(crate) struct NoObserver;

impl StepHook for NoObserver {
    const ENABLED: bool = false;
    fn before(&mut self, _step: &WarpStep<'_>) -> Control {
        Control::Continue
    }
}

/// Instructions a warp runs before the fixed schedule switches warps: large,
/// so convergent code runs warp by warp; finite, so spin-waits on other
/// warps still make progress.
const FIXED_QUANTUM: u32 = 100_000;

/// splitmix64: a tiny deterministic generator for schedule perturbation.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn validate(
    dc: &DeviceConfig,
    prog: &Program,
    index: u32,
    config: &LaunchConfig,
    params: &[u8],
) -> Result<(), LaunchError> {
    let info = prog
        .kernel_info(index)
        .ok_or_else(|| LaunchError::InvalidHandle("stale function handle".into()))?;
    let [gx, gy, gz] = config.grid;
    let [bx, by, bz] = config.block;
    if gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 {
        return Err(LaunchError::InvalidConfig(format!(
            "grid ({gx},{gy},{gz}) and block ({bx},{by},{bz}) dimensions must be non-zero"
        )));
    }
    for k in 0..3 {
        if config.block[k] > dc.max_block_dim[k] || config.grid[k] > dc.max_grid_dim[k] {
            return Err(LaunchError::InvalidConfig(format!(
                "grid ({gx},{gy},{gz}) or block ({bx},{by},{bz}) exceeds the device limits"
            )));
        }
    }
    let threads = bx as u64 * by as u64 * bz as u64;
    if threads > dc.max_threads_per_block as u64 {
        return Err(LaunchError::InvalidConfig(format!(
            "{threads} threads per block exceed the device limit of {}",
            dc.max_threads_per_block
        )));
    }
    if let Some(req) = info.reqntid
        && req != config.block
    {
        return Err(LaunchError::InvalidConfig(format!(
            "kernel {} requires a block of ({},{},{}) (.reqntid), launched with ({bx},{by},{bz})",
            info.name, req[0], req[1], req[2]
        )));
    }
    if threads > info.max_threads_per_block as u64 {
        return Err(LaunchError::OutOfResources(format!(
            "{threads} threads per block exceed kernel {}'s limit of {} (.maxntid)",
            info.name, info.max_threads_per_block
        )));
    }
    let shared = info.static_shared_bytes as u64 + config.dynamic_shared_bytes as u64;
    if shared > dc.max_shared_per_block_optin as u64
        || info.static_shared_bytes > dc.max_shared_per_block
    {
        return Err(LaunchError::OutOfResources(format!(
            "kernel {} needs {shared} bytes of shared memory ({} static + {} dynamic); the device allows {} static, {} in all",
            info.name,
            info.static_shared_bytes,
            config.dynamic_shared_bytes,
            dc.max_shared_per_block,
            dc.max_shared_per_block_optin
        )));
    }
    if (params.len() as u64) < info.param_bytes as u64 {
        return Err(LaunchError::InvalidConfig(format!(
            "kernel {} takes {} bytes of parameters, {} given",
            info.name,
            info.param_bytes,
            params.len()
        )));
    }
    Ok(())
}

/// The cluster shape of a launch, checked as the driver does: the launch's
/// shape or the kernel's `.reqnctapercluster` (not two different ones), on
/// a device of compute capability 9.0 or newer, dividing the grid, of at
/// most 8 CTAs (16 when non-portable sizes are allowed, and no more than
/// `.maxclusterrank`). Also returns whether the shape is explicit (given
/// by the launch or the kernel).
fn validate_cluster(
    dc: &DeviceConfig,
    prog: &Program,
    index: u32,
    config: &LaunchConfig,
    cluster: &ClusterLaunch,
    cooperative: bool,
) -> Result<([u32; 3], bool), LaunchError> {
    let Some(info) = prog.kernel_info(index) else {
        return Ok(([1, 1, 1], false));
    };
    let bad = |m: String| Err(LaunchError::InvalidClusterSize(m));
    let fmt = |d: [u32; 3]| format!("({},{},{})", d[0], d[1], d[2]);
    let dims = match (cluster.dims, info.reqnctapercluster) {
        (Some(l), Some(k)) if l != k => {
            return bad(format!(
                "kernel {} declares clusters of {} CTAs (.reqnctapercluster), launched with {}",
                info.name,
                fmt(k),
                fmt(l)
            ));
        }
        (Some(d), _) | (None, Some(d)) => d,
        (None, None) if info.explicit_cluster => {
            return bad(format!(
                "kernel {} must be launched with clusters (.explicitcluster), launched without",
                info.name
            ));
        }
        (None, None) => return Ok(([1, 1, 1], false)),
    };
    if dims.contains(&0) {
        return bad(format!("cluster dimensions {} must be non-zero", fmt(dims)));
    }
    let size = dims.iter().map(|&d| d as u64).product::<u64>();
    let (major, minor) = dc.compute_capability;
    if major < 9 && (size > 1 || info.explicit_cluster) {
        // The device has no clusters at all: not a wrong size.
        return Err(LaunchError::Unsupported(format!(
            "clusters need a device of compute capability 9.0 or newer; the emulated device is {major}.{minor} (PRLX_EMU_SM=90)"
        )));
    }
    if let Some(k) = (0..3).find(|&k| config.grid[k] % dims[k] != 0) {
        return bad(format!(
            "grid {} is not a multiple of the cluster shape {} (dimension {})",
            fmt(config.grid),
            fmt(dims),
            ["x", "y", "z"][k]
        ));
    }
    let limit = if cluster.non_portable { 16 } else { 8 };
    if size > limit {
        return bad(format!(
            "clusters of {size} CTAs {} exceed the {} limit of {limit}{}",
            fmt(dims),
            if cluster.non_portable {
                "device's"
            } else {
                "portable"
            },
            if cluster.non_portable {
                ""
            } else {
                " (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED allows 16)"
            }
        ));
    }
    if let Some(max) = info.max_cluster_rank
        && size > max as u64
    {
        return bad(format!(
            "clusters of {size} CTAs exceed kernel {}'s limit of {max} (.maxclusterrank)",
            info.name
        ));
    }
    if cooperative && size > 1 {
        return Err(LaunchError::Unsupported(format!(
            "a cooperative launch with clusters of {} CTAs is not emulated",
            fmt(dims)
        )));
    }
    Ok((dims, true))
}

/// Instructions a warp of a cooperative grid runs before the next CTA's
/// turn: short, because a CTA spinning on the grid barrier waits for all
/// the others, which must get to run.
const COOPERATIVE_QUANTUM: u32 = 1_000;

/// A cooperative CTA's turn ends after this many instructions in a row
/// without progress (no memory write, exit or barrier: most likely a spin
/// on the grid barrier), so a grid sync of many CTAs costs little spinning.
const COOPERATIVE_IDLE_TURN: u32 = 64;

/// A pool of `helpers` threads that run CTAs beside the launching thread,
/// made on first use and kept (one per size asked for), so a launch does not
/// pay for starting threads.
fn helper_pool(helpers: usize) -> Arc<rayon::ThreadPool> {
    static POOLS: Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>> = Mutex::new(Vec::new());
    let mut pools = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, pool)) = pools.iter().find(|(n, _)| *n == helpers) {
        return pool.clone();
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(helpers.max(1))
        .thread_name(|i| format!("prlx-emu-cta-{i}"))
        .build()
        .map(Arc::new)
        .unwrap_or_else(|e| panic!("prlx-emu: cannot start CTA threads: {e}"));
    pools.push((helpers, pool.clone()));
    pool
}

/// `PRLX_EMU_THREADS`: host threads that run the CTAs of a launch
/// (default: the available cores).
fn threads_from_env() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    match std::env::var("PRLX_EMU_THREADS") {
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(n) if n >= 1 => n,
            _ => {
                eprintln!("prlx-emu: PRLX_EMU_THREADS={v:?} is not a thread count; using {cores}");
                cores
            }
        },
        Err(_) => cores,
    }
}

/// Whether the CTAs of `kernel` must run one after another, in order, for
/// deterministic results: its code, or a function it may call, talks to
/// other CTAs through global memory. That is an atomic (`atom`, whose old
/// value the thread sees) or a reduction other than an integer
/// `add/and/or/xor/min/max` on global memory (or on a generic address,
/// which may be global), a `.volatile` or memory-ordered
/// (`.relaxed/.acquire/.release`) load or store that is not to shared,
/// local or parameter memory, or a fence at GPU or system scope
/// (`membar.gl/.sys`, `fence.*.gpu/.sys`): counters, "last block"
/// reductions, locks, queues, flags. The order in which CTAs get to memory
/// decides their results. Integer reductions (`red`, what `atomicAdd` on an
/// `int` compiles to when its result is unused: histograms, counts) give
/// the same memory in any order (each is one atomic read-modify-write), and
/// every other kernel's CTAs only meet in memory through plain accesses,
/// which give the same result in any order unless the kernel races (two
/// CTAs writing one address, or one writing what another reads, without
/// synchronization), as on hardware.
fn needs_cta_order(prog: &Program, kernel: u32) -> bool {
    // Device `malloc` hands out addresses in call order: CTAs in order keep
    // a run's pointers (and so its traces) reproducible.
    reaches(prog, kernel, |pc, inst| {
        uses_heap(inst) || prog.text.get(pc).is_some_and(|t| talks_to_other_ctas(t))
    })
}

/// Whether an instruction is a device-heap call (`malloc`/`free`).
fn uses_heap(inst: &crate::instr::Inst) -> bool {
    matches!(inst.op, Op::DeviceMalloc { .. } | Op::DeviceFree { .. })
}

/// Whether `hit` holds for an instruction (by PC) of `kernel` or of a
/// function it can call.
fn reaches(prog: &Program, kernel: u32, hit: impl Fn(usize, &crate::instr::Inst) -> bool) -> bool {
    let mut seen = vec![false; prog.funcs.len()];
    let mut todo = vec![kernel];
    while let Some(f) = todo.pop() {
        if std::mem::replace(&mut seen[f as usize], true) {
            continue;
        }
        for (pc, inst) in prog.code.iter().enumerate() {
            if inst.func != f {
                continue;
            }
            if hit(pc, inst) {
                return true;
            }
            if let Op::Call(info) = &inst.op {
                match info.target {
                    CallTarget::Direct(callee) => todo.push(callee),
                    // A function pointer may reach any function of the module.
                    CallTarget::Indirect { .. } => todo.extend(0..prog.funcs.len() as u32),
                }
            }
        }
    }
    false
}

/// See [`needs_cta_order`]; `text` is one instruction as the module printed
/// it (`@%p1 ld.volatile.global.u32 %r2, [%rd1];`).
fn talks_to_other_ctas(text: &str) -> bool {
    let mut words = text.split_whitespace();
    let mut head = words.next().unwrap_or("");
    if head.starts_with('@') {
        head = words.next().unwrap_or("");
    }
    let mut parts = head.trim_end_matches(';').split('.');
    let opcode = parts.next().unwrap_or("");
    let mods: Vec<&str> = parts.collect();
    let has = |names: &[&str]| mods.iter().any(|m| names.contains(m));
    let cta_private = mods
        .iter()
        .any(|m| m.starts_with("shared") || matches!(*m, "local" | "param"));
    // An integer reduction whose result does not depend on the order.
    let commutative_reduction = opcode == "red"
        && has(&["add", "and", "or", "xor", "min", "max"])
        && has(&["u32", "s32", "u64", "s64", "b32", "b64"]);
    match opcode {
        "atom" | "red" => !cta_private && !commutative_reduction,
        "ld" | "st" => !cta_private && has(&["volatile", "relaxed", "acquire", "release", "mmio"]),
        "membar" => has(&["gl", "sys"]),
        "fence" => has(&["gpu", "sys"]),
        _ => false,
    }
}

/// Validates and runs kernel `index` of `target.program` to completion.
/// An invalid launch fails before it counts as one of the device's launches.
pub(crate) fn launch<H: StepHook>(
    target: &Target<'_>,
    index: u32,
    config: &LaunchConfig,
    params: &[u8],
    cluster: &ClusterLaunch,
    hook: &mut H,
    grid_workspace: Option<u64>,
) -> Finished {
    let prog = target.program;
    let (cluster, explicit_cluster) = match validate(target.config, prog, index, config, params)
        .and_then(|()| {
            validate_cluster(
                target.config,
                prog,
                index,
                config,
                cluster,
                grid_workspace.is_some(),
            )
        }) {
        Ok(shape) => shape,
        Err(e) => {
            return Finished {
                result: Err(e),
                printf: String::new(),
            };
        }
    };
    let cluster_size = cluster.iter().product::<u32>();
    let gridid = target.launches.fetch_add(1, Ordering::Relaxed) + 1;
    let seed = target.config.schedule_seed;
    let settings = target.settings;
    let (kernel, info) = &prog.kernels[index as usize];
    let schedule = &target.schedules[index as usize];
    // Most modules never call the heap: no walk of their call graph.
    if prog.uses_heap
        && *schedule
            .uses_heap
            .get_or_init(|| reaches(prog, *kernel, |_, inst| uses_heap(inst)))
    {
        target.heap.mark_in_use();
    }
    let grid = Grid {
        prog,
        kernel: *kernel,
        kernel_name: &info.name,
        config,
        memory: target.memory,
        heap: target.heap,
        kparams: &params[..info.param_bytes as usize],
        gridid,
        nsmid: target.config.multiprocessor_count.max(1),
        seed,
        watchdog: settings.watchdog.unwrap_or(u64::MAX),
        stall_limit: settings.stall_watchdog.unwrap_or(u64::MAX),
        grid_workspace: grid_workspace.unwrap_or(0),
        cluster,
        cluster_size,
        explicit_cluster,
    };

    let [gx, gy, gz] = config.grid;
    // With clusters, `order` is that of the clusters.
    let total_ctas = gx as u64 * gy as u64 * gz as u64 / cluster_size as u64;
    let mut order: Vec<u64> = (0..total_ctas).collect();
    if let Some(seed) = seed {
        let mut rng = Rng(seed);
        for i in (1..order.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            order.swap(i, j);
        }
    }

    // Parallel unless something needs one CTA after another: an observer
    // (traces in CTA order), the launch-wide watchdog, a schedule seed (the
    // same seed must give the same result even for CTAs that race), a
    // cooperative grid or clusters (interleaved on one thread), or CTAs that
    // communicate.
    // A kernel whose last launch was short runs on one thread too: waking
    // helper threads would cost more than it gains (the result is the same).
    let workers = if H::ENABLED
        || settings.watchdog.is_some()
        || seed.is_some()
        || grid_workspace.is_some()
        || cluster_size > 1
        || schedule.last_work.load(Ordering::Relaxed) < SHORT_LAUNCH
        || *schedule
            .cta_order
            .get_or_init(|| needs_cta_order(prog, *kernel))
    {
        1
    } else {
        settings.threads.clamp(1, total_ctas.min(4096) as usize)
    };
    let mut printf = String::new();
    let result = if grid_workspace.is_some() {
        grid.run_cooperative(&order, &mut printf, hook)
    } else if cluster_size > 1 {
        grid.run_clusters(&order, &mut printf, hook)
    } else if workers == 1 {
        grid.run_serial(&order, &mut printf, hook)
    } else {
        grid.run_parallel(&order, workers, &mut printf)
    };
    if let Ok(stats) = &result {
        schedule
            .last_work
            .store(stats.warp_instructions, Ordering::Relaxed);
    }
    Finished { result, printf }
}

/// Warp-instructions (about 0.3 ms of emulation) below which a launch runs
/// on one thread: starting the CTA helpers costs some 20 µs.
const SHORT_LAUNCH: u64 = 4096;

/// What a launch shares between its CTAs.
struct Grid<'a> {
    prog: &'a Program,
    kernel: u32,
    kernel_name: &'a str,
    config: &'a LaunchConfig,
    memory: &'a GlobalMemory,
    heap: &'a crate::heap::DeviceHeap,
    kparams: &'a [u8],
    gridid: u64,
    nsmid: u32,
    seed: Option<u64>,
    watchdog: u64,
    /// The stall watchdog: warp-instructions allowed without progress.
    stall_limit: u64,
    grid_workspace: u64,
    /// The cluster shape, and its CTA count.
    cluster: [u32; 3],
    cluster_size: u32,
    /// Whether the launch or the kernel chose the shape.
    explicit_cluster: bool,
}

/// One CTA's state; a worker thread reuses one for CTA after CTA.
struct Cta {
    shape: CtaShape,
    warps: Vec<Warp>,
    shared: FlatMemory,
    barriers: [Barrier; 16],
    live_threads: u32,
    stats: LaunchStats,
    printf: String,
    /// Warp-instructions since the CTA last made progress: a thread wrote
    /// global or shared memory (an atomic that changed it), exited, or a
    /// barrier completed.
    idle: u64,
    /// Set whenever `idle` restarts (for cooperative grids, whose CTAs
    /// wait for each other).
    progressed: bool,
    /// The fixed schedule's round-robin cursor.
    current: usize,
    /// A turn ends after this many instructions in a row without progress
    /// (cooperative grids; `u32::MAX` otherwise).
    idle_turn: u32,
    /// The seeded schedule of this CTA (`PRLX_EMU_SCHEDULE`): derived from
    /// the seed and the CTA's index, so it does not depend on which thread
    /// runs the CTA or when.
    rng: Option<Rng>,
    /// `%cluster_ctarank`.
    cluster_rank: u32,
    /// Per warp: lanes that arrived at `barrier.cluster` in its current
    /// phase, and lanes waiting for the phase to complete.
    cluster_arrived: Vec<u32>,
    cluster_waiting: Vec<u32>,
}

/// A CTA's outcome: run to the end, still running (cooperative grids,
/// clusters), or every unfinished warp waits for its cluster's peers.
#[derive(PartialEq, Eq)]
enum CtaState {
    Finished,
    Running,
    Blocked,
}

impl<'a> Grid<'a> {
    fn new_cta(&self) -> Cta {
        let threads = self.config.block.iter().product::<u32>();
        let nwarps = threads.div_ceil(32) as usize;
        Cta {
            shape: self.shape(0),
            warps: (0..nwarps).map(|_| Warp::new(self.prog)).collect(),
            shared: FlatMemory::default(),
            barriers: Default::default(),
            live_threads: threads,
            stats: LaunchStats::default(),
            printf: String::new(),
            idle: 0,
            progressed: false,
            current: 0,
            idle_turn: u32::MAX,
            rng: None,
            cluster_rank: 0,
            cluster_arrived: vec![0; nwarps],
            cluster_waiting: vec![0; nwarps],
        }
    }

    fn shape(&self, cta: u64) -> CtaShape {
        let [gx, gy, _] = self.config.grid;
        CtaShape {
            ctaid: [
                (cta % gx as u64) as u32,
                ((cta / gx as u64) % gy as u64) as u32,
                (cta / (gx as u64 * gy as u64)) as u32,
            ],
            nctaid: self.config.grid,
            ntid: self.config.block,
            dynamic_smem: self.config.dynamic_shared_bytes,
            gridid: self.gridid,
            smid: (cta % self.nsmid as u64) as u32,
            nsmid: self.nsmid,
            grid_workspace: self.grid_workspace,
            cluster: self.cluster,
            explicit_cluster: self.explicit_cluster,
        }
    }

    /// Makes `cta` the CTA of linear index `linear`, at its start.
    fn start(&self, cta: &mut Cta, linear: u64) {
        cta.shape = self.shape(linear);
        cta.shared.bytes.clear();
        cta.shared.bytes.resize(
            (self.prog.static_shared + self.config.dynamic_shared_bytes) as usize,
            0,
        );
        for (i, w) in cta.warps.iter_mut().enumerate() {
            w.reset(self.prog, self.kernel, i as u32, &cta.shape);
        }
        cta.barriers = Default::default();
        cta.live_threads = self.config.block.iter().product::<u32>();
        cta.stats = LaunchStats::default();
        cta.printf.clear();
        cta.idle = 0;
        cta.progressed = false;
        cta.current = 0;
        cta.cluster_rank = cta.shape.cluster_rank();
        cta.cluster_arrived.fill(0);
        cta.cluster_waiting.fill(0);
        cta.rng = self
            .seed
            .map(|s| Rng(s ^ (linear + 1).wrapping_mul(0xd1b5_4a32_d192_ed03)));
    }

    /// Runs the CTAs in `order` one after another on this thread.
    fn run_serial<H: StepHook>(
        &self,
        order: &[u64],
        printf: &mut String,
        hook: &mut H,
    ) -> Result<LaunchStats, LaunchError> {
        let mut cta = self.new_cta();
        let mut stats = LaunchStats::default();
        for &linear in order {
            self.start(&mut cta, linear);
            let result = loop {
                match self.step(&mut cta, None, stats.warp_instructions, &mut [], hook) {
                    Ok(CtaState::Running | CtaState::Blocked) => {}
                    Ok(CtaState::Finished) => break Ok(()),
                    Err(e) => break Err(e),
                }
            };
            printf.push_str(&cta.printf);
            result?;
            stats.add(&cta.stats);
            stats.ctas += 1;
        }
        Ok(stats)
    }

    /// Runs the CTAs in `order` on `workers` threads (this one included),
    /// each taking the next CTA of the order when it finishes one. Global
    /// memory is shared (atomic accesses, see `memory`). The outcome is
    /// the serial one: printf output in CTA order, and on faults the first
    /// faulting CTA in the order (no CTA after it is started once it is
    /// known; every CTA before it has been started, and runs to its end).
    fn run_parallel(
        &self,
        order: &[u64],
        workers: usize,
        printf: &mut String,
    ) -> Result<LaunchStats, LaunchError> {
        struct WorkerResult {
            stats: LaunchStats,
            printf: Vec<(usize, String)>,
            faults: Vec<(usize, LaunchError)>,
        }
        let next = AtomicUsize::new(0);
        let first_fault = AtomicUsize::new(usize::MAX);
        let work = || {
            let mut cta = self.new_cta();
            let mut out = WorkerResult {
                stats: LaunchStats::default(),
                printf: Vec::new(),
                faults: Vec::new(),
            };
            loop {
                let pos = next.fetch_add(1, Ordering::Relaxed);
                if pos >= order.len() || pos > first_fault.load(Ordering::Relaxed) {
                    return out;
                }
                self.start(&mut cta, order[pos]);
                let result = loop {
                    match self.step(&mut cta, None, 0, &mut [], &mut NoObserver) {
                        Ok(CtaState::Running | CtaState::Blocked) => {}
                        Ok(CtaState::Finished) => break Ok(()),
                        Err(e) => break Err(e),
                    }
                };
                if !cta.printf.is_empty() {
                    out.printf.push((pos, std::mem::take(&mut cta.printf)));
                }
                match result {
                    Ok(()) => {
                        out.stats.add(&cta.stats);
                        out.stats.ctas += 1;
                    }
                    Err(e) => {
                        first_fault.fetch_min(pos, Ordering::Relaxed);
                        out.faults.push((pos, e));
                    }
                }
            }
        };
        // This thread works too; `workers - 1` helpers of a persistent pool
        // join it (a panic in one resumes here when the scope ends).
        let results = Mutex::new(Vec::with_capacity(workers));
        let push = |r: WorkerResult| {
            results
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(r)
        };
        helper_pool(workers - 1).in_place_scope(|scope| {
            for _ in 1..workers {
                scope.spawn(|_| push(work()));
            }
            push(work());
        });
        let results = results.into_inner().unwrap_or_else(PoisonError::into_inner);
        let fault_at = first_fault.load(Ordering::Relaxed);
        let mut stats = LaunchStats::default();
        let mut outputs = Vec::new();
        let mut fault = None;
        for r in results {
            stats.add(&r.stats);
            stats.ctas += r.stats.ctas;
            outputs.extend(r.printf.into_iter().filter(|(pos, _)| *pos <= fault_at));
            if let Some((_, e)) = r.faults.into_iter().find(|(pos, _)| *pos == fault_at) {
                fault = Some(e);
            }
        }
        outputs.sort_by_key(|(pos, _)| *pos);
        for (_, text) in outputs {
            printf.push_str(&text);
        }
        match fault {
            Some(e) => Err(e),
            None => Ok(stats),
        }
    }

    /// Runs every CTA of a cooperative grid resident at once, interleaved
    /// on this thread: each CTA in turn runs one warp for
    /// [`COOPERATIVE_QUANTUM`] instructions (the seeded schedule: its own
    /// quantum), or until [`COOPERATIVE_IDLE_TURN`] of them in a row made
    /// no progress, so a CTA spinning on the grid barrier lets the others
    /// arrive. A CTA's progress counts for all (the stall watchdog fires
    /// only when no CTA of the grid progresses); the first fault in CTA
    /// order among those found in a round is reported.
    fn run_cooperative<H: StepHook>(
        &self,
        order: &[u64],
        printf: &mut String,
        hook: &mut H,
    ) -> Result<LaunchStats, LaunchError> {
        let mut ctas: Vec<Cta> = order
            .iter()
            .map(|&linear| {
                let mut cta = self.new_cta();
                self.start(&mut cta, linear);
                cta
            })
            .collect();
        let mut running = vec![true; ctas.len()];
        for cta in &mut ctas {
            cta.idle_turn = COOPERATIVE_IDLE_TURN;
        }
        let mut executed = 0u64;
        let result = loop {
            let mut fault: Option<LaunchError> = None;
            let mut any_progress = false;
            for (i, cta) in ctas.iter_mut().enumerate() {
                if !running[i] {
                    continue;
                }
                let before = cta.stats.warp_instructions;
                let others = executed - before;
                let state = self.step(cta, Some(COOPERATIVE_QUANTUM), others, &mut [], hook);
                executed += cta.stats.warp_instructions - before;
                match state {
                    Ok(CtaState::Running | CtaState::Blocked) => {}
                    Ok(CtaState::Finished) => running[i] = false,
                    Err(e) => {
                        fault = Some(e);
                        break;
                    }
                }
                any_progress |= std::mem::take(&mut cta.progressed);
            }
            if let Some(e) = fault {
                break Err(e);
            }
            if any_progress {
                for cta in &mut ctas {
                    cta.idle = 0;
                }
            }
            if !running.iter().any(|&r| r) {
                break Ok(());
            }
        };
        let mut stats = LaunchStats::default();
        for cta in &ctas {
            printf.push_str(&cta.printf);
            stats.add(&cta.stats);
        }
        stats.ctas = ctas.len() as u64;
        result.map(|()| stats)
    }

    /// Picks the CTA's next warp and runs it for a quantum (`quantum`, or
    /// the schedule's). `others` counts the launch's warp-instructions
    /// outside this CTA, for the launch-wide watchdog; `peers`: the shared
    /// memory of the CTA's cluster by rank (see `machine::ClusterEnv`).
    fn step<H: StepHook>(
        &self,
        cta: &mut Cta,
        quantum: Option<u32>,
        others: u64,
        peers: &mut [FlatMemory],
        hook: &mut H,
    ) -> Result<CtaState, LaunchError> {
        let n = cta.warps.len();
        cta.current %= n.max(1);
        // Pick the next runnable warp (no allocation: this runs at every switch).
        let runnable = (0..n).filter(|&i| cta.warps[i].runnable() != 0).count();
        if runnable == 0 {
            if cta.live_threads == 0 || cta.warps.iter().all(|w| w.exited == u32::MAX) {
                return Ok(CtaState::Finished);
            }
            // Lanes at convergence barriers wait for lanes blocked at a CTA
            // barrier: let them go before calling it a deadlock.
            let released = cta
                .warps
                .iter_mut()
                .fold(false, |any, w| w.release_waiting() | any);
            if released {
                return Ok(CtaState::Running);
            }
            if self.cluster_size > 1 && cta.cluster_waiting.iter().any(|&l| l != 0) {
                return Ok(CtaState::Blocked);
            }
            return Err(self.deadlock(cta));
        }
        let warps = &cta.warps;
        let nth_runnable = |k: usize| {
            (0..n)
                .filter(|&i| warps[i].runnable() != 0)
                .nth(k)
                .unwrap_or(0)
        };
        let (wi, own_quantum) = match cta.rng.as_mut() {
            Some(r) => (
                nth_runnable(r.below(runnable as u64) as usize),
                1 + r.below(32) as u32,
            ),
            None => {
                let current = cta.current;
                let wi = (current..n)
                    .chain(0..current)
                    .find(|&i| warps[i].runnable() != 0)
                    .unwrap_or(0);
                (wi, FIXED_QUANTUM)
            }
        };
        let quantum = match (quantum, cta.rng.is_some()) {
            (Some(q), false) => q,
            _ => own_quantum,
        };
        cta.current = wi + 1;
        if cta.idle_turn == u32::MAX {
            self.run_warp::<H, false>(cta, wi, quantum, others, peers, hook)?;
        } else {
            self.run_warp::<H, true>(cta, wi, quantum, others, peers, hook)?;
        }
        Ok(CtaState::Running)
    }

    /// Runs warp `wi` for up to `quantum` instructions; `IDLE_TURN`: also
    /// ends the turn after `cta.idle_turn` instructions in a row without
    /// progress (cooperative grids; compiled out otherwise).
    fn run_warp<H: StepHook, const IDLE_TURN: bool>(
        &self,
        cta: &mut Cta,
        wi: usize,
        quantum: u32,
        others: u64,
        peers: &mut [FlatMemory],
        hook: &mut H,
    ) -> Result<(), LaunchError> {
        let prog = self.prog;
        let mut idle_run = 0u32;
        for _ in 0..quantum {
            let w = &mut cta.warps[wi];
            let Some((pc, active)) = w.next_group(&prog.code) else {
                return Ok(());
            };
            if H::ENABLED
                && let Some(inst) = prog.code.get(pc as usize)
            {
                let func = &prog.funcs[inst.func as usize];
                let step = WarpStep {
                    block: cta.shape.ctaid,
                    warp_in_block: wi as u32,
                    pc: pc as usize,
                    ptx_line: inst.line,
                    active_mask: active,
                    text: &prog.text[pc as usize],
                    function: &func.name,
                    source: prog.source_of(pc as usize),
                    regs: RegisterView {
                        slots: &func.slots,
                        values: &w.values,
                        preds: &w.preds,
                    },
                };
                if hook.before(&step) == Control::Abort {
                    return Err(LaunchError::Aborted(format!(
                        "observer stopped kernel {} at {}:{}",
                        self.kernel_name, prog.file, inst.line
                    )));
                }
            }
            cta.stats.warp_instructions += 1;
            if others + cta.stats.warp_instructions > self.watchdog {
                let [x, y, z] = cta.shape.ctaid;
                return Err(LaunchError::Timeout(format!(
                    "kernel {} exceeded {} warp-instructions (block ({x},{y},{z}), warp {wi}, at {}:{})",
                    self.kernel_name,
                    self.watchdog,
                    prog.file,
                    prog.code.get(pc as usize).map_or(0, |i| i.line)
                )));
            }
            cta.idle += 1;
            if cta.idle > self.stall_limit {
                return Err(self.stalled(cta));
            }
            cta.stats.thread_instructions += active.count_ones() as u64;
            let mut env = Env {
                prog,
                global: self.memory,
                shared: &mut cta.shared,
                kparams: self.kparams,
                barriers: &mut cta.barriers,
                live_threads: &mut cta.live_threads,
                launch_clock: cta.stats.warp_instructions,
                printf: &mut cta.printf,
                heap: self.heap,
                wrote: false,
                cluster: ClusterEnv {
                    rank: cta.cluster_rank,
                    size: self.cluster_size,
                    peers: &mut *peers,
                    arrived: &mut cta.cluster_arrived,
                    waiting: &mut cta.cluster_waiting,
                },
            };
            let result = machine::execute(w, &mut env, pc, active);
            if env.wrote {
                cta.progress();
            }
            match result {
                Ok(StepResult::Continue) => {}
                Ok(StepResult::Arrived(id)) => {
                    if cta.check_barrier(id as usize) {
                        cta.progress();
                    }
                    if cta.warps[wi].runnable() == 0 {
                        return Ok(());
                    }
                }
                Ok(StepResult::ClusterBarrier) => {
                    // A cluster of several CTAs is checked by `run_cluster`.
                    if self.cluster_size == 1 && release_cluster_barrier(std::slice::from_mut(cta))
                    {
                        cta.progress();
                    }
                    if cta.warps[wi].runnable() == 0 {
                        return Ok(());
                    }
                }
                Ok(StepResult::Exited) => {
                    cta.progress();
                    for id in 0..16 {
                        cta.check_barrier(id);
                    }
                    if self.cluster_size == 1 {
                        release_cluster_barrier(std::slice::from_mut(cta));
                    }
                    if cta.warps[wi].runnable() == 0 {
                        return Ok(());
                    }
                }
                Err(f) => return Err(self.fault(cta, wi, pc, f)),
            }
            if IDLE_TURN {
                if cta.idle == 0 {
                    idle_run = 0;
                } else {
                    idle_run += 1;
                    if idle_run >= cta.idle_turn {
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
    }

    /// The stall watchdog fired: name the kernel, the block and where every
    /// unfinished warp stands.
    fn stalled(&self, cta: &Cta) -> LaunchError {
        const SHOWN: usize = 8;
        let prog = self.prog;
        let [x, y, z] = cta.shape.ctaid;
        let unfinished: Vec<(usize, &Warp)> = cta
            .warps
            .iter()
            .enumerate()
            .filter(|(_, w)| w.exited != u32::MAX)
            .collect();
        let mut warps = Vec::new();
        for (wi, w) in unfinished.iter().take(SHOWN) {
            let groups: Vec<String> = w
                .groups()
                .iter()
                .map(|&(pc, lanes, blocked)| {
                    let line = prog.code.get(pc as usize).map_or(0, |i| i.line);
                    let text = prog.text.get(pc as usize).map_or("", String::as_str);
                    format!(
                        "lanes {lanes:#010x} {} pc {pc} ({}:{line} `{text}`)",
                        if blocked { "blocked at" } else { "at" },
                        prog.file
                    )
                })
                .collect();
            warps.push(format!("warp {wi}: {}", groups.join(", ")));
        }
        if unfinished.len() > SHOWN {
            warps.push(format!("and {} more warps", unfinished.len() - SHOWN));
        }
        LaunchError::Timeout(format!(
            "kernel {} made no progress in {} warp-instructions (no thread wrote memory, exited or passed a barrier): it hangs; block ({x},{y},{z}): {} (limit: PRLX_EMU_STALL_WATCHDOG)",
            self.kernel_name,
            self.stall_limit,
            warps.join("; ")
        ))
    }

    fn deadlock(&self, cta: &Cta) -> LaunchError {
        let [x, y, z] = cta.shape.ctaid;
        let mut waiting = cta.barrier_waits();
        waiting.extend(cluster_barrier_state(std::slice::from_ref(cta)));
        LaunchError::Deadlock(format!(
            "kernel {} block ({x},{y},{z}): every remaining warp waits forever; {}",
            self.kernel_name,
            if waiting.is_empty() {
                "no barrier has arrivals".to_string()
            } else {
                waiting.join("; ")
            }
        ))
    }

    fn fault(&self, cta: &Cta, wi: usize, pc: u32, f: LaneFault) -> LaunchError {
        let prog = self.prog;
        let line = prog.code.get(pc as usize).map_or(0, |i| i.line);
        let text = prog.text.get(pc as usize).map_or("", String::as_str);
        let t = wi as u32 * 32 + f.lane;
        let [nx, ny, _] = cta.shape.ntid;
        let thread = [t % nx, (t / nx) % ny, t / (nx * ny)];
        let fault = Fault {
            kernel: self.kernel_name.to_string(),
            block: cta.shape.ctaid,
            thread,
            ptx_line: line,
            ptx_file: prog.file.clone(),
            address: f.address,
            message: format!("{}: {}", f.message, text),
            source: prog.source_of(pc as usize).map(|(f, l)| format!("{f}:{l}")),
        };
        match f.kind {
            FaultKind::IllegalAddress => LaunchError::IllegalAddress(fault),
            FaultKind::Misaligned => LaunchError::MisalignedAddress(fault),
            FaultKind::IllegalInstruction => LaunchError::IllegalInstruction(fault),
            FaultKind::Trap => LaunchError::Trap(fault),
            FaultKind::Assert => LaunchError::Assert(fault),
        }
    }
}

impl Cta {
    /// The CTA barriers with arrivals: how many, of how many, which warps.
    fn barrier_waits(&self) -> Vec<String> {
        let mut waiting = Vec::new();
        for (id, b) in self.barriers.iter().enumerate() {
            if b.arrived > 0 {
                let expected = b.expected.unwrap_or(self.live_threads);
                waiting.push(format!(
                    "barrier {id}: {} of {expected} threads arrived (warps {})",
                    b.arrived,
                    b.waiters
                        .iter()
                        .map(|(w, _)| w.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                ));
            }
        }
        waiting
    }

    /// A thread wrote memory, exited or passed a barrier.
    #[inline]
    fn progress(&mut self) {
        self.idle = 0;
        self.progressed = true;
    }

    /// Releases barrier `id` if every expected thread has arrived; returns
    /// whether it did.
    fn check_barrier(&mut self, id: usize) -> bool {
        let b = &self.barriers[id];
        if b.arrived == 0 {
            return false;
        }
        let expected = b.expected.unwrap_or(self.live_threads);
        if b.arrived < expected {
            return false;
        }
        let b = std::mem::take(&mut self.barriers[id]);
        for (w, lanes) in &b.waiters {
            self.warps[*w as usize].unblock(*lanes);
        }
        for (w, lanes, kind, d, dp) in &b.reductions {
            let warp = &mut self.warps[*w as usize];
            match kind {
                crate::instr::BarKind::RedPopc => {
                    if let Some(d) = d {
                        let base = *d as usize * 32;
                        let mut m = *lanes;
                        while m != 0 {
                            let l = m.trailing_zeros() as usize;
                            m &= m - 1;
                            warp.values[base + l] = b.red_popc as u64;
                        }
                    }
                }
                _ => {
                    if let Some(dp) = dp {
                        let t = if *kind == crate::instr::BarKind::RedAnd {
                            !b.red_and_failed
                        } else {
                            b.red_or
                        };
                        let p = &mut warp.preds[*dp as usize];
                        *p = if t { *p | lanes } else { *p & !lanes };
                    }
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::talks_to_other_ctas;

    #[test]
    fn inter_cta_communication_is_recognised_from_the_instruction() {
        for text in [
            "atom.global.add.u32 %r1, [%rd1], 1;",
            "@%p1 red.add.f32 [%rd1], %f2;",
            "red.global.inc.u32 [%rd1], %r2;",
            "red.global.exch.b32 [%rd1], %r2;",
            "ld.volatile.global.u32 %r2, [%rd1];",
            "ld.acquire.gpu.u32 %r56, [%rd26];",
            "st.release.gpu.global.u32 [%rd1], %r2;",
            "membar.gl;",
            "fence.sc.gpu;",
            "fence.acq_rel.sys;",
        ] {
            assert!(talks_to_other_ctas(text), "{text}");
        }
        for text in [
            "atom.shared.add.u32 %r1, [%rd1], 1;",
            "red.global.add.u32 [%rd1], %r2;",
            "@%p1 red.max.s32 [%rd1], %r2;",
            "red.global.or.b64 [%rd1], %rd2;",
            "ld.volatile.shared.u32 %r2, [%rd1];",
            "ld.global.u32 %r2, [%rd1];",
            "st.global.v4.f32 [%rd1], {%f1, %f2, %f3, %f4};",
            "membar.cta;",
            "fence.acq_rel.cta;",
            "add.s32 %r1, %r2, %r3;",
        ] {
            assert!(!talks_to_other_ctas(text), "{text}");
        }
    }
}
