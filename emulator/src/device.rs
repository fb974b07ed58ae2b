//! The device: global memory, loaded modules, launches. This is the API the
//! `libcuda` shim and the runner build on.

mod texture;

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, PoisonError};

use crate::config::DeviceConfig;
use crate::error::{EmuError, LaunchError, LoadError};
use crate::heap::DeviceHeap;
use crate::launch::{
    self, ClusterLaunch, KernelSchedule, LaunchConfig, LaunchStats, Settings, StepHook,
};
use crate::memory::GlobalMemory;
use crate::memory::map::{Detached, RebindError};
use crate::observer::{Control, Observer, WarpStep};
use crate::program::{KernelInfo, Program};

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

/// A loaded module: its decoded program and where its variables live.
struct LoadedModule {
    program: Program,
    /// Device allocations holding `.global`/`.const` variables, freed on unload.
    variable_allocations: Vec<u64>,
    /// What the scheduler remembers of each kernel across launches.
    schedules: Vec<KernelSchedule>,
}

/// The emulated GPU. `Send` and `Sync`: launches take `&self` and may run
/// concurrently (the `libcuda` shim runs kernels of several host threads at
/// once); everything else takes `&mut self`.
pub struct Device {
    config: DeviceConfig,
    memory: GlobalMemory,
    modules: HashMap<u64, LoadedModule>,
    next_module: u64,
    /// Counts launches, for `%gridid`.
    launches: AtomicU64,
    /// Device `printf` output, when captured instead of written to stdout.
    printf_capture: Mutex<Option<String>>,
    /// Host threads and watchdogs of launches (see [`Device::set_threads`],
    /// [`Device::set_watchdog`], [`Device::set_stall_watchdog`]).
    settings: Settings,
    /// Device-side `malloc`/`free`'s heap, reserved when a module that
    /// calls them is loaded.
    heap: DeviceHeap,
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
            settings: Settings::from_env(),
            heap: DeviceHeap::default(),
        }
    }

    /// The device heap's size (`cudaLimitMallocHeapSize`).
    pub fn malloc_heap_size(&self) -> u64 {
        self.heap.size()
    }

    /// Sets the device heap's size, as `cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE)`:
    /// refused once a kernel that calls `malloc` or `free` has been launched
    /// (the driver's `CUDA_ERROR_INVALID_VALUE`). A heap already reserved
    /// (a module calling them is loaded) is reserved again at the new size.
    pub fn set_malloc_heap_size(&mut self, bytes: u64) -> Result<(), EmuError> {
        if self.heap.in_use() {
            return Err(EmuError::InvalidValue(
                "the device heap's size cannot change once a kernel calling malloc or free has been launched".into(),
            ));
        }
        let old = self.heap.size();
        if let Some(base) = self.heap.unplace(bytes) {
            self.memory.free(base);
            if let Err(e) = self.reserve_heap() {
                self.heap.unplace(old);
                let _ = self.reserve_heap();
                return Err(e);
            }
        }
        Ok(())
    }

    /// Reserves the device heap in global memory, once.
    fn reserve_heap(&mut self) -> Result<(), EmuError> {
        if self.heap.base().is_some() {
            return Ok(());
        }
        let size = self.heap.size();
        let base = self.mem_alloc(size.max(1))?;
        self.heap.place(base, size);
        Ok(())
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
        self.settings.threads = threads.max(1);
    }

    /// See [`Device::set_threads`].
    pub fn threads(&self) -> usize {
        self.settings.threads
    }

    /// Limits each launch to `max_warp_instructions` (like a display
    /// watchdog), so a kernel that never terminates fails with
    /// [`LaunchError::Timeout`] instead of hanging. `None` (the default, or
    /// `PRLX_EMU_WATCHDOG=<n>` from the environment) means no limit.
    pub fn set_watchdog(&mut self, max_warp_instructions: Option<u64>) {
        self.settings.watchdog = max_warp_instructions;
    }

    /// Ends a launch that stops making progress: when a CTA executes
    /// `max_idle_warp_instructions` warp-instructions in which no thread
    /// writes global or shared memory (an atomic counts when it changes the
    /// value), exits or passes a barrier, the launch fails with
    /// [`LaunchError::Timeout`] naming the kernel, the block and every
    /// unfinished warp's lanes and PCs. The default is
    /// [`DEFAULT_STALL_WATCHDOG`](crate::DEFAULT_STALL_WATCHDOG); `PRLX_EMU_STALL_WATCHDOG=<n>` (or `off`)
    /// sets it from the environment; `None` disables it.
    pub fn set_stall_watchdog(&mut self, max_idle_warp_instructions: Option<u64>) {
        self.settings.stall_watchdog = max_idle_warp_instructions;
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

    /// See [`GlobalMemory::detach`].
    pub fn mem_detach(&mut self, base: u64) -> Option<Detached> {
        self.memory.detach(base)
    }

    /// See [`GlobalMemory::reattach`].
    pub fn mem_reattach(&mut self, detached: Detached) {
        self.memory.reattach(detached)
    }

    /// See [`GlobalMemory::rebind`].
    ///
    /// # Safety
    /// As for [`GlobalMemory::rebind`].
    pub unsafe fn mem_rebind(
        &mut self,
        base: u64,
        ptr: *mut u8,
        len: usize,
    ) -> Result<(), RebindError> {
        // SAFETY: forwarded contract.
        unsafe { self.memory.rebind(base, ptr, len) }
    }

    /// Parses, validates and decodes a PTX module. Unsupported instructions
    /// are rejected here, naming them and their line.
    pub fn load_module(&mut self, ptx: &str, source_name: &str) -> Result<ModuleId, LoadError> {
        let program = crate::decode::load(ptx, source_name, &self.config, &mut self.memory)?;
        if program.uses_heap {
            // Without room for the heap, `malloc` returns NULL, as when the
            // heap is exhausted.
            let _ = self.reserve_heap();
        }
        let variable_allocations = program.variable_allocations.clone();
        let id = self.next_module;
        self.next_module += 1;
        self.modules.insert(
            id,
            LoadedModule {
                schedules: program
                    .kernels
                    .iter()
                    .map(|_| KernelSchedule::default())
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
        self.run_launch(
            f,
            config,
            params,
            &ClusterLaunch::default(),
            &mut launch::NoObserver,
            None,
        )
    }

    /// A launch with thread block clusters (`cuLaunchKernelEx` with
    /// `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`; a kernel's
    /// `.reqnctapercluster` applies to every launch). The CTAs of a cluster
    /// run co-resident, interleaved on one thread, and clusters one after
    /// another. Needs a device of compute capability 9.0 or newer.
    #[allow(clippy::result_large_err)] // see `launch`
    pub fn launch_clustered(
        &self,
        f: FunctionId,
        config: &LaunchConfig,
        cluster: &ClusterLaunch,
        params: &[u8],
    ) -> Result<LaunchStats, LaunchError> {
        self.run_launch(f, config, params, cluster, &mut launch::NoObserver, None)
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
        let result = self.run_launch(
            f,
            config,
            params,
            &ClusterLaunch::default(),
            &mut launch::NoObserver,
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
        let cluster = ClusterLaunch::default();
        self.run_launch(
            f,
            config,
            params,
            &cluster,
            &mut DynObserver(observer),
            None,
        )
    }

    /// Runs kernel `f` of a loaded module through the scheduler and
    /// delivers the `printf` output it made, fault or not.
    #[allow(clippy::result_large_err)] // see `launch`
    fn run_launch<H: StepHook>(
        &self,
        f: FunctionId,
        config: &LaunchConfig,
        params: &[u8],
        cluster: &ClusterLaunch,
        hook: &mut H,
        grid_workspace: Option<u64>,
    ) -> Result<LaunchStats, LaunchError> {
        let module = self.modules.get(&f.module).ok_or_else(|| {
            LaunchError::InvalidHandle("the function's module is not loaded".into())
        })?;
        let target = launch::Target {
            program: &module.program,
            schedules: &module.schedules,
            memory: &self.memory,
            config: &self.config,
            settings: self.settings,
            heap: &self.heap,
            launches: &self.launches,
        };
        let finished = launch::launch(
            &target,
            f.index,
            config,
            params,
            cluster,
            hook,
            grid_workspace,
        );
        self.deliver_printf(&finished.printf);
        finished.result
    }

    /// Device `printf` output appears when a launch ends: in the capture
    /// buffer, or on stdout.
    fn deliver_printf(&self, printf: &str) {
        match &mut *self
            .printf_capture
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
        {
            Some(buf) => buf.push_str(printf),
            None if !printf.is_empty() => {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(printf.as_bytes());
                let _ = out.flush();
            }
            None => {}
        }
    }
}

/// Bytes of a cooperative launch's grid workspace.
const GRID_WORKSPACE_BYTES: u64 = 8;

/// Adapts a `dyn Observer` to the launch loop's static observer parameter.
struct DynObserver<'a>(&'a mut dyn Observer);

impl StepHook for DynObserver<'_> {
    const ENABLED: bool = true;
    fn before(&mut self, step: &WarpStep<'_>) -> Control {
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
