//! The device: global memory, loaded code objects, and kernel launches.
//! Workgroups run one after another; the waves of a workgroup run
//! round-robin, a slice of instructions at a time, and meet at `s_barrier`.

use std::collections::HashMap;
use std::sync::Arc;

use crate::code_object::{CodeObject, Kernel};
use crate::decode::{self, Inst};
use crate::exec::{self, Flow, Handler};
use crate::fault::{ExecError, Fault, FaultKind};
use crate::memory::GlobalMemory;
use crate::wave::Wave;

/// LDS a workgroup may use on gfx11.
pub const LDS_BYTES: u32 = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModuleId(pub u32);

/// Where the hook is called: before each wave-instruction.
pub struct HookEvent<'a> {
    pub kernel: &'a str,
    pub workgroup: [u32; 3],
    pub wave: &'a Wave,
    /// Offset of the instruction in the code object.
    pub pc: u64,
    pub inst: &'a Inst,
    pub lds: &'a [u8],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookAction {
    Continue,
    Abort,
}

pub type Hook = Box<dyn FnMut(&HookEvent<'_>) -> HookAction + Send>;

/// A host-side service the scheduler calls between rounds (after every
/// resident workgroup had its turn), with the device's global memory: the
/// way a host agent (e.g. the HIP runtime's hostcall listener for device
/// `printf`/`malloc`) answers requests waves post to memory and spin on.
/// Waves run inside the launching thread, so the service runs there too.
/// An `Err` stops the launch with a [`FaultKind::Service`] fault.
pub type Service = Box<dyn FnMut(&mut GlobalMemory) -> Result<(), String> + Send>;

/// A decoded instruction and its handler (None: not supported).
type DecodedAt = (Arc<Inst>, Option<Handler>);

pub struct LoadedModule {
    pub code: Arc<CodeObject>,
    /// Global address the image (virtual address 0) is mapped at.
    pub base: u64,
    cache: HashMap<u64, Result<DecodedAt, String>>,
}

/// A resident workgroup: its waves and its LDS.
struct Group {
    wg: [u32; 3],
    waves: Vec<Wave>,
    lds: Vec<u8>,
}

/// What a launch did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchStats {
    pub workgroups: u64,
    pub waves: u64,
    pub wave_instructions: u64,
}

pub struct DeviceConfig {
    /// Wave-instructions a launch may execute before it is stopped.
    pub max_wave_instructions: u64,
    /// Instructions a wave runs before the next wave of its workgroup gets a turn.
    pub slice: u32,
    /// Workgroups in flight at once (the rest wait for one to finish).
    pub resident_workgroups: u32,
    /// Scratch bytes per lane added for kernels with a dynamic stack
    /// (recursion, calls through pointers, `alloca` of runtime size).
    pub dynamic_stack_bytes: u32,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            max_wave_instructions: 2_000_000_000,
            slice: 64,
            resident_workgroups: 64,
            dynamic_stack_bytes: 16 * 1024,
        }
    }
}

pub struct Device {
    pub memory: GlobalMemory,
    modules: Vec<Option<LoadedModule>>,
    pub config: DeviceConfig,
    hook: Option<Hook>,
    service: Option<Service>,
}

impl Default for Device {
    fn default() -> Self {
        Device::new()
    }
}

/// Adjusts a wave's initial state after the ABI set it up (used by the
/// spec's `.s` runner, whose register layout is not the HSA one).
pub type WaveSetup<'a> = &'a dyn Fn(&mut Wave, [u32; 3]);

/// Hidden and explicit geometry of one launch.
#[derive(Clone, Copy)]
pub struct Launch<'a> {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_lds: u32,
    pub kernarg: &'a [u8],
    pub setup: Option<WaveSetup<'a>>,
}

impl Device {
    pub fn new() -> Device {
        Device {
            memory: GlobalMemory::new(),
            modules: Vec::new(),
            config: DeviceConfig::default(),
            hook: None,
            service: None,
        }
    }

    pub fn alloc(&mut self, size: u64, align: u64) -> Option<u64> {
        self.memory.alloc(size, align)
    }
    pub fn free(&mut self, addr: u64) -> bool {
        self.memory.free(addr)
    }
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), u64> {
        self.memory.write(addr, data)
    }
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), u64> {
        self.memory.read(addr, out)
    }
    pub fn memset(&mut self, addr: u64, value: u8, len: usize) -> Result<(), u64> {
        self.memory.memset(addr, value, len)
    }

    /// Calls `hook` before every wave-instruction of later launches.
    pub fn set_hook(&mut self, hook: Option<Hook>) {
        self.hook = hook;
    }

    /// Calls `service` between scheduling rounds of later launches (see
    /// [`Service`]); `None` removes it.
    pub fn set_service(&mut self, service: Option<Service>) {
        self.service = service;
    }

    /// Maps a code object's image into global memory (so PC-relative
    /// accesses to its globals and constants work) and returns its id.
    pub fn load(&mut self, code: CodeObject) -> Result<ModuleId, Fault> {
        let end = code
            .segments
            .iter()
            .map(|(a, b)| a + b.len() as u64)
            .max()
            .unwrap_or(0);
        let base = self
            .memory
            .alloc(end.max(4), 1 << 16)
            .ok_or_else(|| Fault::launch("", "out of device memory loading a code object"))?;
        for (addr, bytes) in &code.segments {
            self.memory
                .write(base + addr, bytes)
                .expect("image allocation covers every segment");
        }
        for r in &code.relocations {
            let (at, value, n) = match *r {
                crate::code_object::Relocation::Relative64 { offset, addend } => {
                    (offset, base.wrapping_add(addend as u64), 8)
                }
                crate::code_object::Relocation::Absolute {
                    offset,
                    value,
                    addend,
                    bytes,
                } => (
                    offset,
                    base.wrapping_add(value).wrapping_add(addend as u64),
                    bytes as usize,
                ),
            };
            self.memory
                .write(base + at, &value.to_le_bytes()[..n])
                .map_err(|a| {
                    Fault::launch(
                        "",
                        format!("relocation at {at:#x} lies outside the image ({a:#x})"),
                    )
                })?;
        }
        self.modules.push(Some(LoadedModule {
            code: Arc::new(code),
            base,
            cache: HashMap::new(),
        }));
        Ok(ModuleId(self.modules.len() as u32 - 1))
    }

    pub fn unload(&mut self, id: ModuleId) -> bool {
        match self.modules.get_mut(id.0 as usize).and_then(Option::take) {
            Some(m) => {
                self.memory.free(m.base);
                true
            }
            None => false,
        }
    }

    pub fn module(&self, id: ModuleId) -> Option<&LoadedModule> {
        self.modules.get(id.0 as usize).and_then(Option::as_ref)
    }

    /// Global address of a symbol (a `__device__` variable) of a loaded module.
    pub fn symbol_address(&self, id: ModuleId, name: &str) -> Option<(u64, u64)> {
        let m = self.module(id)?;
        m.code
            .symbols
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, a, s)| (m.base + a, *s))
    }

    /// Runs `kernel` to completion. `kernarg` is the whole kernarg segment
    /// (explicit and hidden arguments; see [`crate::code_object::fill_hidden_args`]).
    pub fn launch(
        &mut self,
        module: ModuleId,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_lds: u32,
        kernarg: &[u8],
    ) -> Result<LaunchStats, Fault> {
        self.launch_with(
            module,
            kernel,
            &Launch {
                grid,
                block,
                dynamic_lds,
                kernarg,
                setup: None,
            },
        )
    }

    pub fn launch_with(
        &mut self,
        module: ModuleId,
        kernel_name: &str,
        l: &Launch<'_>,
    ) -> Result<LaunchStats, Fault> {
        let m = self
            .modules
            .get(module.0 as usize)
            .and_then(Option::as_ref)
            .ok_or_else(|| {
                Fault::launch(kernel_name, format!("module {} is not loaded", module.0))
            })?;
        let code = m.code.clone();
        let kernel = code
            .kernel(kernel_name)
            .ok_or_else(|| Fault::launch(kernel_name, "no such kernel in the module"))?
            .clone();
        let threads = l.block.iter().map(|&b| b as u64).product::<u64>();
        if l.grid.contains(&0) || l.block.contains(&0) {
            return Err(Fault::launch(
                kernel_name,
                format!("empty launch: grid {:?} block {:?}", l.grid, l.block),
            ));
        }
        if threads > kernel.max_flat_workgroup_size.max(1) as u64 || threads > 1024 {
            return Err(Fault::launch(
                kernel_name,
                format!(
                    "block of {threads} threads exceeds the kernel's limit {}",
                    kernel.max_flat_workgroup_size
                ),
            ));
        }
        // Work-item ids are 10 bits (0..=1023), so a dimension may be 1024.
        if l.block[0] > 1024 || l.block[1] > 1024 || l.block[2] > 1024 {
            return Err(Fault::launch(
                kernel_name,
                "a block dimension exceeds 1024 (10-bit work-item ids)",
            ));
        }
        let lds_size = kernel.group_segment_fixed_size as u64 + l.dynamic_lds as u64;
        if lds_size > LDS_BYTES as u64 {
            return Err(Fault::launch(
                kernel_name,
                format!("LDS of {lds_size} bytes exceeds 64 KiB"),
            ));
        }
        // Kernarg segment.
        let ka_size = (kernel.kernarg_segment_size as usize)
            .max(l.kernarg.len())
            .max(4);
        let mut ka = vec![0u8; ka_size];
        ka[..l.kernarg.len()].copy_from_slice(l.kernarg);
        let kernarg_addr = self
            .memory
            .alloc(ka_size as u64, 64)
            .ok_or_else(|| Fault::launch(kernel_name, "out of memory"))?;
        self.memory.write(kernarg_addr, &ka).unwrap();
        // An hsa_kernel_dispatch_packet_t for kernels that read the dispatch pointer.
        let packet = self.memory.alloc(64, 64).unwrap();
        let mut p = [0u8; 64];
        let dims = if l.grid[2] > 1 || l.block[2] > 1 {
            3u16
        } else if l.grid[1] > 1 || l.block[1] > 1 {
            2
        } else {
            1
        };
        p[2..4].copy_from_slice(&dims.to_le_bytes());
        for d in 0..3 {
            p[4 + 2 * d..6 + 2 * d].copy_from_slice(&(l.block[d] as u16).to_le_bytes());
            let total = l.grid[d].wrapping_mul(l.block[d]);
            p[12 + 4 * d..16 + 4 * d].copy_from_slice(&total.to_le_bytes());
        }
        p[24..28].copy_from_slice(&kernel.private_segment_fixed_size.to_le_bytes());
        p[28..32].copy_from_slice(&(lds_size as u32).to_le_bytes());
        p[40..48].copy_from_slice(&kernarg_addr.to_le_bytes());
        self.memory.write(packet, &p).unwrap();
        let queue = self.memory.alloc(256, 64).unwrap();

        let result = self.run_grid(
            module,
            &kernel,
            l,
            lds_size as usize,
            kernarg_addr,
            packet,
            queue,
        );
        self.memory.free(kernarg_addr);
        self.memory.free(packet);
        self.memory.free(queue);
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn run_grid(
        &mut self,
        module: ModuleId,
        kernel: &Kernel,
        l: &Launch<'_>,
        lds_size: usize,
        kernarg_addr: u64,
        packet: u64,
        queue: u64,
    ) -> Result<LaunchStats, Fault> {
        let mut stats = LaunchStats::default();
        let mut hook = self.hook.take();
        let result = self.schedule(
            module,
            kernel,
            l,
            lds_size,
            kernarg_addr,
            packet,
            queue,
            &mut stats,
            &mut hook,
        );
        self.hook = hook;
        result.map(|_| stats)
    }

    /// Runs the grid with up to `DeviceConfig::resident_workgroups`
    /// workgroups in flight, round-robin (like a GPU's occupancy): spin-waits
    /// on other resident workgroups make progress, as on hardware.
    #[allow(clippy::too_many_arguments)]
    fn schedule(
        &mut self,
        module: ModuleId,
        kernel: &Kernel,
        l: &Launch<'_>,
        lds_size: usize,
        kernarg_addr: u64,
        packet: u64,
        queue: u64,
        stats: &mut LaunchStats,
        hook: &mut Option<Hook>,
    ) -> Result<(), Fault> {
        let [gx, gy, gz] = l.grid;
        let mut next =
            (0..gz).flat_map(move |z| (0..gy).flat_map(move |y| (0..gx).map(move |x| [x, y, z])));
        let mut resident: Vec<Group> = Vec::new();
        loop {
            while resident.len() < self.config.resident_workgroups.max(1) as usize {
                let Some(wg) = next.next() else { break };
                resident.push(self.make_group(
                    module,
                    kernel,
                    l,
                    wg,
                    lds_size,
                    kernarg_addr,
                    packet,
                    queue,
                    stats,
                ));
            }
            if resident.is_empty() {
                return Ok(());
            }
            for g in resident.iter_mut() {
                self.run_round(module, kernel, g, stats, hook)?;
            }
            self.run_service(kernel)?;
            let before = resident.len();
            resident.retain(|g| g.waves.iter().any(|w| !w.done));
            stats.workgroups += (before - resident.len()) as u64;
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn make_group(
        &mut self,
        module: ModuleId,
        kernel: &Kernel,
        l: &Launch<'_>,
        wg: [u32; 3],
        lds_size: usize,
        kernarg_addr: u64,
        packet: u64,
        queue: u64,
        stats: &mut LaunchStats,
    ) -> Group {
        let kd = &kernel.descriptor;
        let wave_size = kd.wave_size();
        let threads = (l.block[0] * l.block[1] * l.block[2]) as usize;
        let nwaves = threads.div_ceil(wave_size as usize);
        let lds = vec![0u8; lds_size];
        let m = self.modules[module.0 as usize].as_ref().unwrap();
        let base = m.base;
        let scratch = kernel.private_segment_fixed_size as usize
            + if kernel.uses_dynamic_stack {
                self.config.dynamic_stack_bytes as usize
            } else {
                0
            };
        let mut waves = Vec::with_capacity(nwaves);
        for w in 0..nwaves {
            let mut wave = Wave::new(w as u32, wave_size, kd.vgpr_count().min(256), scratch);
            wave.pc = base + kernel.entry;
            let mut present = 0u64;
            for lane in 0..wave_size as usize {
                let t = w * wave_size as usize + lane;
                if t >= threads {
                    break;
                }
                present |= 1 << lane;
                let tx = (t % l.block[0] as usize) as u32;
                let ty = ((t / l.block[0] as usize) % l.block[1] as usize) as u32;
                let tz = (t / (l.block[0] as usize * l.block[1] as usize)) as u32;
                wave.lane_ids[lane] = [tx, ty, tz];
                // gfx11 packs the work-item ids into v0: x[9:0], y[19:10], z[29:20].
                wave.set_vgpr(0, lane, tx | (ty << 10) | (tz << 20));
            }
            wave.lanes_present = present;
            wave.set_exec(present);
            // User SGPRs, in ABI order.
            let mut s = 0u16;
            if kd.user_sgpr_private_segment_buffer() {
                s += 4;
            }
            if kd.user_sgpr_dispatch_ptr() {
                wave.set_sreg64(s, packet);
                s += 2;
            }
            if kd.user_sgpr_queue_ptr() {
                wave.set_sreg64(s, queue);
                s += 2;
            }
            if kd.user_sgpr_kernarg_segment_ptr() {
                wave.set_sreg64(s, kernarg_addr);
                s += 2;
            }
            if kd.user_sgpr_dispatch_id() {
                wave.set_sreg64(s, 0);
                s += 2;
            }
            if kd.user_sgpr_flat_scratch_init() {
                wave.set_sreg64(s, crate::memory::PRIVATE_APERTURE);
                s += 2;
            }
            if kd.user_sgpr_private_segment_size() {
                wave.set_sreg(s, kernel.private_segment_fixed_size);
            }
            // System SGPRs start at USER_SGPR_COUNT.
            let mut s = kd.user_sgpr_count() as u16;
            for (d, &id) in wg.iter().enumerate() {
                if kd.enable_workgroup_id(d) {
                    wave.set_sreg(s, id);
                    s += 1;
                }
            }
            if kd.enable_workgroup_info() {
                wave.set_sreg(s, 0);
                s += 1;
            }
            if kd.enable_private_segment() {
                wave.set_sreg(s, 0); // private segment wave byte offset
            }
            if let Some(setup) = l.setup {
                setup(&mut wave, wg);
            }
            waves.push(wave);
        }
        stats.waves += nwaves as u64;
        Group { wg, waves, lds }
    }

    /// One turn of a resident workgroup: each runnable wave executes up to
    /// `slice` instructions; a barrier all live waves reached is released.
    fn run_round(
        &mut self,
        module: ModuleId,
        kernel: &Kernel,
        g: &mut Group,
        stats: &mut LaunchStats,
        hook: &mut Option<Hook>,
    ) -> Result<(), Fault> {
        let slice = self.config.slice.max(1);
        let wg = g.wg;
        let mut progressed = false;
        for wave in g.waves.iter_mut() {
            if wave.done || wave.at_barrier {
                continue;
            }
            for _ in 0..slice {
                progressed = true;
                let flow = self.step(module, kernel, wg, wave, &mut g.lds, hook)?;
                stats.wave_instructions += 1;
                if stats.wave_instructions > self.config.max_wave_instructions {
                    return Err(self.fault_at(
                        module,
                        kernel,
                        wg,
                        wave,
                        ExecError {
                            kind: FaultKind::Timeout(self.config.max_wave_instructions),
                            lane: None,
                            addr: None,
                        },
                    ));
                }
                match flow {
                    Flow::Next => {}
                    Flow::End => {
                        wave.done = true;
                        wave.pending.clear();
                        break;
                    }
                    Flow::Barrier => {
                        wave.at_barrier = true;
                        break;
                    }
                }
            }
        }
        let mut live = g.waves.iter().filter(|w| !w.done).peekable();
        if live.peek().is_some() && live.all(|w| w.at_barrier) {
            for w in g.waves.iter_mut() {
                w.at_barrier = false;
            }
            return Ok(());
        }
        if !progressed && g.waves.iter().any(|w| !w.done) {
            return Err(Fault {
                kind: FaultKind::Deadlock("no wave of the workgroup can make progress".into()),
                kernel: kernel.name.clone(),
                workgroup: Some(wg),
                wave: None,
                lane: None,
                pc: None,
                addr: None,
                inst: None,
                detail: None,
            });
        }
        Ok(())
    }

    /// Lets the host service (if any) answer what the waves posted.
    fn run_service(&mut self, kernel: &Kernel) -> Result<(), Fault> {
        let Some(service) = self.service.as_mut() else {
            return Ok(());
        };
        service(&mut self.memory).map_err(|message| Fault {
            kind: FaultKind::Service(message),
            kernel: kernel.name.clone(),
            workgroup: None,
            wave: None,
            lane: None,
            pc: None,
            addr: None,
            inst: None,
            detail: None,
        })
    }

    fn fault_at(
        &self,
        module: ModuleId,
        kernel: &Kernel,
        wg: [u32; 3],
        wave: &Wave,
        e: ExecError,
    ) -> Fault {
        let m = self.modules[module.0 as usize].as_ref().unwrap();
        let inst = m
            .cache
            .get(&wave.pc)
            .and_then(|r| r.as_ref().ok())
            .map(|(i, _)| decode::format::format(i, wave.pc.wrapping_sub(m.base)));
        let detail = match (&e.kind, e.addr) {
            (
                FaultKind::Memory {
                    space: "global" | "global (scalar)",
                    ..
                },
                Some(a),
            ) => self.memory.nearest(a),
            _ => None,
        };
        Fault {
            detail,
            kind: e.kind,
            kernel: kernel.name.clone(),
            workgroup: Some(wg),
            wave: Some(wave.id),
            lane: e.lane,
            pc: Some(wave.pc.wrapping_sub(m.base)),
            addr: e.addr,
            inst,
        }
    }

    /// Executes one instruction of `wave`.
    fn step(
        &mut self,
        module: ModuleId,
        kernel: &Kernel,
        wg: [u32; 3],
        wave: &mut Wave,
        lds: &mut [u8],
        hook: &mut Option<Hook>,
    ) -> Result<Flow, Fault> {
        let pc = wave.pc;
        let (inst, handler) = {
            let m = self.modules[module.0 as usize].as_mut().unwrap();
            let base = m.base;
            let code = &m.code;
            let entry = m.cache.entry(pc).or_insert_with(|| {
                let off = pc.wrapping_sub(base).wrapping_sub(code.text_addr);
                let bytes = usize::try_from(off).ok().and_then(|o| code.text.get(o..));
                match bytes {
                    None => Err(format!("pc {:#x} is outside .text", pc.wrapping_sub(base))),
                    Some(b) => decode::decode(b, pc.wrapping_sub(base))
                        .map(|i| {
                            let h = exec::handler_for(&i);
                            (Arc::new(i), h)
                        })
                        .map_err(|e| e.to_string()),
                }
            });
            match entry {
                Ok((i, h)) => (i.clone(), *h),
                Err(msg) => {
                    let msg = msg.clone();
                    return Err(self.fault_at(
                        module,
                        kernel,
                        wg,
                        wave,
                        ExecError {
                            kind: FaultKind::Decode(msg),
                            lane: None,
                            addr: None,
                        },
                    ));
                }
            }
        };
        if let Some(h) = hook.as_mut() {
            let base = self.modules[module.0 as usize].as_ref().unwrap().base;
            let ev = HookEvent {
                kernel: &kernel.name,
                workgroup: wg,
                wave,
                pc: pc.wrapping_sub(base),
                inst: &inst,
                lds,
            };
            if h(&ev) == HookAction::Abort {
                return Err(self.fault_at(
                    module,
                    kernel,
                    wg,
                    wave,
                    ExecError {
                        kind: FaultKind::Aborted,
                        lane: None,
                        addr: None,
                    },
                ));
            }
        }
        let Some(handler) = handler else {
            return Err(self.fault_at(module, kernel, wg, wave, ExecError::unsupported(inst.name)));
        };
        let mut ctx = exec::Ctx {
            wave,
            mem: &mut self.memory,
            lds,
            pc,
            next_pc: pc + inst.len as u64,
        };
        match handler(&mut ctx, &inst) {
            Ok(flow) => {
                let next = ctx.next_pc;
                wave.pc = next;
                wave.executed += 1;
                Ok(flow)
            }
            Err(e) => Err(self.fault_at(module, kernel, wg, wave, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    /// The HIP runtime keeps the device behind a mutex shared by threads.
    #[test]
    fn device_is_send() {
        fn send<T: Send>() {}
        send::<super::Device>();
    }
}
