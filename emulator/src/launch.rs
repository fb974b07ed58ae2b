//! Launch validation and the scheduler: CTAs one after another, warps of a
//! CTA interleaved deterministically (or by a seeded pseudo-random schedule).

// `LaunchError` carries a full `Fault` by value (the public contract); it is
// returned once per failed launch, so its size costs nothing measurable.
#![allow(clippy::result_large_err)]

use crate::device::{Device, FunctionId, LaunchConfig, LaunchStats};
use crate::error::{Fault, LaunchError};
use crate::machine::{self, Barrier, CtaShape, Env, FaultKind, LaneFault, StepResult, Warp};
use crate::memory::FlatMemory;
use crate::observer::{Control, RegisterView, WarpStep};
use crate::program::Program;

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
    device: &Device,
    prog: &Program,
    index: u32,
    config: &LaunchConfig,
    params: &[u8],
) -> Result<(), LaunchError> {
    let dc = device.config();
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

pub(crate) fn launch<H: StepHook>(
    device: &mut Device,
    f: FunctionId,
    config: &LaunchConfig,
    params: &[u8],
    hook: &mut H,
) -> Result<LaunchStats, LaunchError> {
    let module = device
        .modules
        .get(&f.module)
        .ok_or_else(|| LaunchError::InvalidHandle("the function's module is not loaded".into()))?;
    let prog = &module.program;
    validate(device, prog, f.index, config, params)?;
    device.launches += 1;
    let gridid = device.launches;
    let seed = device.config().schedule_seed;
    let nsmid = device.config().multiprocessor_count.max(1);
    let watchdog = device.watchdog.unwrap_or(u64::MAX);
    let stall_limit = device.stall_watchdog.unwrap_or(u64::MAX);
    let module = &device.modules[&f.module];
    let prog = &module.program;
    let memory = &mut device.memory;
    let (kernel, info) = &prog.kernels[f.index as usize];
    let kparams = &params[..info.param_bytes as usize];

    let [gx, gy, gz] = config.grid;
    let total_ctas = gx as u64 * gy as u64 * gz as u64;
    let mut order: Vec<u64> = (0..total_ctas).collect();
    let mut rng = seed.map(Rng);
    if let Some(rng) = rng.as_mut() {
        for i in (1..order.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            order.swap(i, j);
        }
    }

    let threads = config.block[0] * config.block[1] * config.block[2];
    let nwarps = threads.div_ceil(32) as usize;
    let mut warps: Vec<Warp> = (0..nwarps).map(|_| Warp::new(prog)).collect();
    let mut shared = FlatMemory::default();
    let mut stats = LaunchStats::default();
    let mut printf = String::new();
    let result = (|| {
        for cta in order {
            let ctaid = [
                (cta % gx as u64) as u32,
                ((cta / gx as u64) % gy as u64) as u32,
                (cta / (gx as u64 * gy as u64)) as u32,
            ];
            let shape = CtaShape {
                ctaid,
                nctaid: config.grid,
                ntid: config.block,
                dynamic_smem: config.dynamic_shared_bytes,
                gridid,
                smid: (cta % nsmid as u64) as u32,
                nsmid,
            };
            shared.bytes.clear();
            shared.bytes.resize(
                (prog.static_shared + config.dynamic_shared_bytes) as usize,
                0,
            );
            for (i, w) in warps.iter_mut().enumerate() {
                w.reset(prog, *kernel, i as u32, &shape);
            }
            let mut cta_run = CtaRun {
                prog,
                kernel_name: &info.name,
                shape,
                warps: &mut warps,
                barriers: Default::default(),
                live_threads: threads,
                stats: &mut stats,
                printf: &mut printf,
                watchdog,
                stall_limit,
                idle: 0,
            };
            cta_run.run(memory, &mut shared, kparams, rng.as_mut(), hook)?;
            stats.ctas += 1;
        }
        Ok(stats)
    })();
    // Device printf output appears when the launch ends, fault or not.
    match &mut device.printf_capture {
        Some(buf) => buf.push_str(&printf),
        None if !printf.is_empty() => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(printf.as_bytes());
            let _ = out.flush();
        }
        None => {}
    }
    result
}

struct CtaRun<'a> {
    prog: &'a Program,
    kernel_name: &'a str,
    shape: CtaShape,
    warps: &'a mut [Warp],
    barriers: [Barrier; 16],
    live_threads: u32,
    stats: &'a mut LaunchStats,
    printf: &'a mut String,
    watchdog: u64,
    /// The stall watchdog: warp-instructions allowed without progress.
    stall_limit: u64,
    /// Warp-instructions since the CTA last made progress: a thread wrote
    /// global or shared memory (an atomic that changed it), exited, or a
    /// barrier completed.
    idle: u64,
}

impl CtaRun<'_> {
    fn run<H: StepHook>(
        &mut self,
        memory: &mut crate::memory::GlobalMemory,
        shared: &mut FlatMemory,
        kparams: &[u8],
        mut rng: Option<&mut Rng>,
        hook: &mut H,
    ) -> Result<(), LaunchError> {
        let n = self.warps.len();
        let mut current = 0usize;
        loop {
            current %= n.max(1);
            // Pick the next runnable warp (no allocation: this runs at every switch).
            let runnable = (0..n).filter(|&i| self.warps[i].runnable() != 0).count();
            if runnable == 0 {
                if self.live_threads == 0 || self.warps.iter().all(|w| w.exited == u32::MAX) {
                    return Ok(());
                }
                return Err(self.deadlock());
            }
            let nth_runnable = |k: usize| {
                (0..n)
                    .filter(|&i| self.warps[i].runnable() != 0)
                    .nth(k)
                    .unwrap_or(0)
            };
            let (wi, quantum) = match rng.as_deref_mut() {
                Some(r) => (
                    nth_runnable(r.below(runnable as u64) as usize),
                    1 + r.below(32) as u32,
                ),
                None => {
                    let wi = (current..n)
                        .chain(0..current)
                        .find(|&i| self.warps[i].runnable() != 0)
                        .unwrap_or(0);
                    (wi, FIXED_QUANTUM)
                }
            };
            current = wi + 1;
            self.run_warp(wi, quantum, memory, shared, kparams, hook)?;
        }
    }

    fn run_warp<H: StepHook>(
        &mut self,
        wi: usize,
        quantum: u32,
        memory: &mut crate::memory::GlobalMemory,
        shared: &mut FlatMemory,
        kparams: &[u8],
        hook: &mut H,
    ) -> Result<(), LaunchError> {
        let prog = self.prog;
        for _ in 0..quantum {
            let w = &mut self.warps[wi];
            let Some((pc, active)) = w.next_group(&prog.code) else {
                return Ok(());
            };
            if H::ENABLED
                && let Some(inst) = prog.code.get(pc as usize)
            {
                let func = &prog.funcs[inst.func as usize];
                let step = WarpStep {
                    block: self.shape.ctaid,
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
            self.stats.warp_instructions += 1;
            if self.stats.warp_instructions > self.watchdog {
                let [x, y, z] = self.shape.ctaid;
                return Err(LaunchError::Timeout(format!(
                    "kernel {} exceeded {} warp-instructions (block ({x},{y},{z}), warp {wi}, at {}:{})",
                    self.kernel_name,
                    self.watchdog,
                    prog.file,
                    prog.code.get(pc as usize).map_or(0, |i| i.line)
                )));
            }
            self.idle += 1;
            if self.idle > self.stall_limit {
                return Err(self.stalled());
            }
            self.stats.thread_instructions += active.count_ones() as u64;
            let mut env = Env {
                prog,
                global: memory,
                shared,
                kparams,
                barriers: &mut self.barriers,
                live_threads: &mut self.live_threads,
                launch_clock: self.stats.warp_instructions,
                printf: self.printf,
                wrote: false,
            };
            let result = machine::execute(w, &mut env, pc, active);
            if env.wrote {
                self.idle = 0;
            }
            match result {
                Ok(StepResult::Continue) => {}
                Ok(StepResult::Arrived(id)) => {
                    if self.check_barrier(id as usize) {
                        self.idle = 0;
                    }
                    if self.warps[wi].runnable() == 0 {
                        return Ok(());
                    }
                }
                Ok(StepResult::Exited) => {
                    self.idle = 0;
                    for id in 0..16 {
                        self.check_barrier(id);
                    }
                    if self.warps[wi].runnable() == 0 {
                        return Ok(());
                    }
                }
                Err(f) => return Err(self.fault(wi, pc, f)),
            }
        }
        Ok(())
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

    /// The stall watchdog fired: name the kernel, the block and where every
    /// unfinished warp stands.
    fn stalled(&self) -> LaunchError {
        const SHOWN: usize = 8;
        let prog = self.prog;
        let [x, y, z] = self.shape.ctaid;
        let unfinished: Vec<(usize, &Warp)> = self
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

    fn deadlock(&self) -> LaunchError {
        let [x, y, z] = self.shape.ctaid;
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

    fn fault(&self, wi: usize, pc: u32, f: LaneFault) -> LaunchError {
        let prog = self.prog;
        let line = prog.code.get(pc as usize).map_or(0, |i| i.line);
        let text = prog.text.get(pc as usize).map_or("", String::as_str);
        let t = wi as u32 * 32 + f.lane;
        let [nx, ny, _] = self.shape.ntid;
        let thread = [t % nx, (t / nx) % ny, t / (nx * ny)];
        let fault = Fault {
            kernel: self.kernel_name.to_string(),
            block: self.shape.ctaid,
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
