//! The device: global memory, loaded modules, launches. This is the API the
//! `libcuda` shim and the runner build on.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, PoisonError};

use crate::config::DeviceConfig;
use crate::error::{EmuError, LaunchError, LoadError};
use crate::memory::GlobalMemory;
use crate::observer::Observer;

/// A loaded module. Ids are never reused, so a stale id after
/// [`Device::unload_module`] gives `InvalidHandle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModuleId(pub(crate) u64);

/// A kernel (`.entry`) of a loaded module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FunctionId {
    pub(crate) module: u64,
    pub(crate) index: u32,
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
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

/// A loaded module: its decoded program and where its variables live.
pub(crate) struct LoadedModule {
    pub program: crate::program::Program,
    /// Device allocations holding `.global`/`.const` variables, freed on unload.
    pub variable_allocations: Vec<u64>,
    /// Warp-instructions of each kernel's last launch (`u64::MAX`: not
    /// launched yet): kernels too short to gain from more threads run on one.
    pub last_work: Vec<AtomicU64>,
    /// Whether each kernel's CTAs must run in order (computed on its first
    /// launch; see `launch::needs_cta_order`).
    pub cta_order: Vec<std::sync::OnceLock<bool>>,
}

/// The emulated GPU. `Send` and `Sync`: launches take `&self` and may run
/// concurrently (the `libcuda` shim runs kernels of several host threads at
/// once); everything else takes `&mut self`.
pub struct Device {
    config: DeviceConfig,
    pub(crate) memory: GlobalMemory,
    pub(crate) modules: HashMap<u64, LoadedModule>,
    next_module: u64,
    /// Counts launches, for `%gridid`.
    pub(crate) launches: AtomicU64,
    /// Device `printf` output, when captured instead of written to stdout.
    pub(crate) printf_capture: Mutex<Option<String>>,
    /// Host threads that run a launch's CTAs (`PRLX_EMU_THREADS`).
    pub(crate) threads: usize,
    /// Warp-instructions a launch may execute before it fails with `Timeout`.
    pub(crate) watchdog: Option<u64>,
    /// Warp-instructions a CTA may execute without progress before the
    /// launch fails with `Timeout` (see [`Device::set_stall_watchdog`]).
    pub(crate) stall_watchdog: Option<u64>,
}

/// The default stall watchdog, in warp-instructions without progress
/// (2^26, about 67 M): a hung kernel ends within seconds to a minute (a
/// spinning warp issues roughly 2–15 M warp-instructions per second here,
/// atomics being the slowest; `examples/stall_watchdog.rs`,
/// docs/emulator-benchmark.md), while a CTA that works does not go this
/// long without writing memory, retiring a thread or passing a barrier.
pub const DEFAULT_STALL_WATCHDOG: u64 = 1 << 26;

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

impl Device {
    pub fn new(config: DeviceConfig) -> Device {
        Device {
            memory: GlobalMemory::new(config.global_mem_bytes),
            config,
            modules: HashMap::new(),
            next_module: 1,
            launches: AtomicU64::new(0),
            printf_capture: Mutex::new(None),
            threads: crate::launch::threads_from_env(),
            watchdog: std::env::var("PRLX_EMU_WATCHDOG")
                .ok()
                .and_then(|v| v.trim().parse().ok()),
            stall_watchdog: stall_watchdog_from_env(),
        }
    }

    pub fn config(&self) -> &DeviceConfig {
        &self.config
    }

    /// Device `printf` output goes to the process's stdout at the end of each
    /// launch (as CUDA prints it at synchronisation), or, after
    /// `capture_printf(true)`, into a buffer read by [`Device::take_printf_output`].
    pub fn capture_printf(&mut self, capture: bool) {
        *self.printf_capture_mut() = if capture { Some(String::new()) } else { None };
    }

    fn printf_capture_mut(&mut self) -> &mut Option<String> {
        self.printf_capture
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// How many host threads run the CTAs of a launch (default: the
    /// available cores, or `PRLX_EMU_THREADS`). Kernels whose CTAs
    /// communicate through global atomics, cooperative grids and observed
    /// launches run on one thread whatever the setting (see the crate
    /// documentation, "Determinism").
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// See [`Device::set_threads`].
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Limits each launch to `max_warp_instructions` (like a display
    /// watchdog), so a kernel that never terminates fails with
    /// [`LaunchError::Timeout`] instead of hanging. `None` (the default, or
    /// `PRLX_EMU_WATCHDOG=<n>` from the environment) means no limit.
    pub fn set_watchdog(&mut self, max_warp_instructions: Option<u64>) {
        self.watchdog = max_warp_instructions;
    }

    /// Ends a launch that stops making progress: when a CTA executes
    /// `max_idle_warp_instructions` warp-instructions in which no thread
    /// writes global or shared memory (an atomic counts when it changes the
    /// value), exits or passes a barrier, the launch fails with
    /// [`LaunchError::Timeout`] naming the kernel, the block and every
    /// unfinished warp's lanes and PCs. The default is
    /// [`DEFAULT_STALL_WATCHDOG`]; `PRLX_EMU_STALL_WATCHDOG=<n>` (or `off`)
    /// sets it from the environment; `None` disables it.
    pub fn set_stall_watchdog(&mut self, max_idle_warp_instructions: Option<u64>) {
        self.stall_watchdog = max_idle_warp_instructions;
    }

    /// The captured `printf` output so far (empty when not capturing).
    pub fn take_printf_output(&mut self) -> String {
        self.printf_capture_mut()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Allocates zeroed global memory; addresses are never 0 and 256-byte aligned.
    pub fn mem_alloc(&mut self, bytes: u64) -> Result<u64, EmuError> {
        self.memory.alloc(bytes).ok_or(EmuError::OutOfMemory {
            requested: bytes,
            free: self.memory.budget() - self.memory.used(),
        })
    }

    pub fn mem_free(&mut self, dptr: u64) -> Result<(), EmuError> {
        if self.memory.free(dptr) {
            Ok(())
        } else {
            Err(EmuError::InvalidValue(format!(
                "0x{dptr:x} is not the base of a device allocation"
            )))
        }
    }

    /// Makes host memory device-accessible at its own address (managed and
    /// mapped host memory); [`Device::mem_free`] unregisters it.
    ///
    /// # Safety
    /// `ptr` must stay valid for `len` bytes until `mem_free(ptr)`.
    pub unsafe fn mem_register_host(&mut self, ptr: *mut u8, len: u64) -> Result<(), EmuError> {
        // SAFETY: forwarded contract.
        unsafe { self.memory.register_host(ptr, len) }.map_err(|e| {
            EmuError::InvalidValue(format!(
                "host range 0x{:x}+{len} cannot be mapped into the device: {e:?}",
                ptr as u64
            ))
        })
    }

    /// Whether `base` starts host-backed (managed or mapped) memory.
    pub fn mem_is_host_backed(&self, base: u64) -> bool {
        self.memory.is_host_backed(base)
    }

    pub fn mem_write(&mut self, dptr: u64, data: &[u8]) -> Result<(), EmuError> {
        if data.is_empty() {
            return Ok(());
        }
        let dst = self
            .memory
            .slice_mut(dptr, data.len() as u64)
            .map_err(|_| out_of_range("write", dptr, data.len() as u64))?;
        dst.copy_from_slice(data);
        Ok(())
    }

    pub fn mem_read(&self, dptr: u64, out: &mut [u8]) -> Result<(), EmuError> {
        if out.is_empty() {
            return Ok(());
        }
        let src = self
            .memory
            .slice(dptr, out.len() as u64)
            .map_err(|_| out_of_range("read", dptr, out.len() as u64))?;
        out.copy_from_slice(src);
        Ok(())
    }

    pub fn mem_copy(&mut self, dst: u64, src: u64, bytes: u64) -> Result<(), EmuError> {
        if self.memory.slice(src, bytes).is_err() && bytes > 0 {
            return Err(out_of_range("copy from", src, bytes));
        }
        self.memory
            .copy(dst, src, bytes)
            .map_err(|_| out_of_range("copy to", dst, bytes))
    }

    /// Fills `count` elements of `pattern` (1, 2 or 4 bytes) starting at `dptr`.
    pub fn mem_set(&mut self, dptr: u64, pattern: &[u8], count: u64) -> Result<(), EmuError> {
        if !matches!(pattern.len(), 1 | 2 | 4) {
            return Err(EmuError::InvalidValue(format!(
                "memset element size {} (must be 1, 2 or 4)",
                pattern.len()
            )));
        }
        let bytes = count
            .checked_mul(pattern.len() as u64)
            .ok_or_else(|| EmuError::InvalidValue("memset size overflows".into()))?;
        if bytes == 0 {
            return Ok(());
        }
        if dptr % pattern.len() as u64 != 0 {
            return Err(EmuError::InvalidValue(format!(
                "memset address 0x{dptr:x} is not aligned to {} bytes",
                pattern.len()
            )));
        }
        let dst = self
            .memory
            .slice_mut(dptr, bytes)
            .map_err(|_| out_of_range("set", dptr, bytes))?;
        for chunk in dst.chunks_exact_mut(pattern.len()) {
            chunk.copy_from_slice(pattern);
        }
        Ok(())
    }

    /// `(free, total)` bytes of the global-memory budget.
    pub fn mem_info(&self) -> (u64, u64) {
        let total = self.memory.budget();
        (total - self.memory.used(), total)
    }

    /// `(base, size)` of the allocation containing `dptr`.
    pub fn mem_range(&self, dptr: u64) -> Option<(u64, u64)> {
        self.memory.range_of(dptr)
    }

    /// Parses, validates and decodes a PTX module. Unsupported instructions
    /// are rejected here, naming them and their line.
    pub fn load_module(&mut self, ptx: &str, source_name: &str) -> Result<ModuleId, LoadError> {
        let program = crate::program::load(ptx, source_name, &self.config, &mut self.memory)?;
        let variable_allocations = program.variable_allocations.clone();
        let id = self.next_module;
        self.next_module += 1;
        self.modules.insert(
            id,
            LoadedModule {
                last_work: program
                    .kernels
                    .iter()
                    .map(|_| AtomicU64::new(u64::MAX))
                    .collect(),
                cta_order: program
                    .kernels
                    .iter()
                    .map(|_| std::sync::OnceLock::new())
                    .collect(),
                program,
                variable_allocations,
            },
        );
        Ok(ModuleId(id))
    }

    pub fn unload_module(&mut self, module: ModuleId) -> Result<(), EmuError> {
        let m = self
            .modules
            .remove(&module.0)
            .ok_or_else(|| EmuError::InvalidHandle(format!("module {} is not loaded", module.0)))?;
        for a in m.variable_allocations {
            self.memory.free(a);
        }
        Ok(())
    }

    fn module(&self, module: ModuleId) -> Result<&LoadedModule, EmuError> {
        self.modules
            .get(&module.0)
            .ok_or_else(|| EmuError::InvalidHandle(format!("module {} is not loaded", module.0)))
    }

    /// The kernel (`.entry`) named `name`.
    pub fn get_function(&self, module: ModuleId, name: &str) -> Result<FunctionId, EmuError> {
        let m = self.module(module)?;
        let index = m
            .program
            .kernel_index(name)
            .ok_or_else(|| EmuError::NotFound(format!("no kernel named `{name}` in module")))?;
        Ok(FunctionId {
            module: module.0,
            index,
        })
    }

    pub fn function_module(&self, f: FunctionId) -> Option<ModuleId> {
        self.modules.get(&f.module).map(|_| ModuleId(f.module))
    }

    pub fn kernel_info(&self, f: FunctionId) -> Option<&KernelInfo> {
        self.modules.get(&f.module)?.program.kernel_info(f.index)
    }

    /// Device address and size of a module's `.global` or `.const` variable.
    pub fn get_global(&self, module: ModuleId, name: &str) -> Result<(u64, u64), EmuError> {
        self.module(module)?
            .program
            .global_variable(name)
            .ok_or_else(|| EmuError::NotFound(format!("no .global/.const variable `{name}`")))
    }

    /// Runs a kernel to completion. Its CTAs run on [`Device::threads`]
    /// host threads; several launches may run at once (from different host
    /// threads), sharing global memory.
    #[allow(clippy::result_large_err)] // a `Fault` by value is the contract; failures are rare
    pub fn launch(
        &self,
        f: FunctionId,
        config: &LaunchConfig,
        params: &[u8],
    ) -> Result<LaunchStats, LaunchError> {
        crate::launch::launch(
            self,
            f,
            config,
            params,
            &mut crate::launch::NoObserver,
            None,
        )
    }

    /// A cooperative launch (`cuLaunchCooperativeKernel`): every CTA of the
    /// grid is resident at once (interleaved on one thread), so the kernel
    /// may synchronise the whole grid (`cooperative_groups::this_grid().sync()`,
    /// an atomic counter in a grid workspace whose address the kernel reads
    /// from `%envreg1:%envreg2`, then a spin). The workspace is allocated
    /// for the launch and freed after it. The driver's occupancy limit for
    /// cooperative grids is the caller's to enforce (the `libcuda` shim
    /// does, as the CUDA driver does); any grid runs here.
    #[allow(clippy::result_large_err)] // see `launch`
    pub fn launch_cooperative(
        &mut self,
        f: FunctionId,
        config: &LaunchConfig,
        params: &[u8],
    ) -> Result<LaunchStats, LaunchError> {
        // `{ unsigned int wsSize; unsigned int barrier; }` (cooperative
        // groups' `driver_abi.h`), zeroed: the barrier counts from 0.
        let workspace = self.memory.alloc(GRID_WORKSPACE_BYTES).ok_or_else(|| {
            LaunchError::OutOfResources("no memory for the grid workspace".into())
        })?;
        let _ = self.memory.store(workspace, 4, GRID_WORKSPACE_BYTES);
        let result = crate::launch::launch(
            self,
            f,
            config,
            params,
            &mut crate::launch::NoObserver,
            Some(workspace),
        );
        self.memory.free(workspace);
        result
    }

    /// Runs a kernel to completion, calling `observer` before every warp-instruction.
    #[allow(clippy::result_large_err)] // see `launch`
    pub fn launch_observed(
        &mut self,
        f: FunctionId,
        config: &LaunchConfig,
        params: &[u8],
        observer: &mut dyn Observer,
    ) -> Result<LaunchStats, LaunchError> {
        crate::launch::launch(self, f, config, params, &mut DynObserver(observer), None)
    }
}

/// Bytes of a cooperative launch's grid workspace.
const GRID_WORKSPACE_BYTES: u64 = 8;

/// Adapts a `dyn Observer` to the launch loop's static observer parameter.
struct DynObserver<'a>(&'a mut dyn Observer);

impl crate::launch::StepHook for DynObserver<'_> {
    const ENABLED: bool = true;
    fn before(&mut self, step: &crate::observer::WarpStep<'_>) -> crate::observer::Control {
        self.0.on_warp_instruction(step)
    }
}

fn out_of_range(what: &str, addr: u64, len: u64) -> EmuError {
    EmuError::InvalidValue(format!(
        "{what} of {len} bytes at 0x{addr:x} is outside every device allocation"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Device>();
    }

    #[test]
    fn memory_api_checks_handles_and_ranges() {
        let mut d = Device::new(DeviceConfig::default());
        let p = d.mem_alloc(16).unwrap();
        d.mem_write(p, &[1, 2, 3, 4]).unwrap();
        d.mem_set(p + 4, &[9, 0], 2).unwrap();
        let mut out = [0u8; 8];
        d.mem_read(p, &mut out).unwrap();
        assert_eq!(out, [1, 2, 3, 4, 9, 0, 9, 0]);
        d.mem_copy(p + 8, p, 8).unwrap();
        d.mem_read(p + 8, &mut out).unwrap();
        assert_eq!(out, [1, 2, 3, 4, 9, 0, 9, 0]);
        assert!(d.mem_write(p + 12, &[0; 8]).is_err());
        assert_eq!(d.mem_range(p + 3), Some((p, 16)));
        assert!(matches!(d.mem_free(p + 1), Err(EmuError::InvalidValue(_))));
        d.mem_free(p).unwrap();
        assert!(d.mem_free(p).is_err());
        let (free, total) = d.mem_info();
        assert_eq!(free, total);
        assert!(matches!(
            d.mem_alloc(u64::MAX / 2),
            Err(EmuError::OutOfMemory { .. })
        ));
    }
}
