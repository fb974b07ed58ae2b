//! The driver's state: one emulated device behind a global lock, and the
//! bookkeeping the driver API adds on top of it (contexts, modules,
//! functions, streams, events, link states, allocations).
//!
//! Contexts are bookkeeping only: they all share the emulator's single
//! address space, but each owns the modules, streams, events and allocations
//! created while it was current and releases them when it is destroyed.
//!
//! Several devices (`PRLX_EMU_DEVICES=N`) share that address space too, so
//! pointers are unique across devices (unified addressing); each allocation
//! belongs to its context's device, and a kernel of one device sees another
//! device's memory only through peer access (see `api::peer`).

use crate::cu::*;
use crate::handles::{HandleTable, Kind};
use prlx_emulator::{Device, DeviceConfig, FunctionId, ModuleId};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::ffi::{CString, c_void};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{PoisonError, RwLock};

/// How many devices the driver reports (`PRLX_EMU_DEVICES`, default 1).
static DEVICE_COUNT: AtomicI32 = AtomicI32::new(1);
/// The most devices `PRLX_EMU_DEVICES` may ask for (device masks are `u64`).
pub const MAX_DEVICES: i32 = 64;

/// The number of emulated devices: `PRLX_EMU_DEVICES` as read by `cuInit`.
pub fn device_count() -> i32 {
    DEVICE_COUNT.load(Ordering::Relaxed)
}

/// `CUDA_ERROR_INVALID_DEVICE` unless `dev` is an emulated device's ordinal.
pub fn check_device(dev: CUdevice) -> Result<(), CUresult> {
    if (0..device_count()).contains(&dev) {
        Ok(())
    } else {
        Err(CUDA_ERROR_INVALID_DEVICE)
    }
}

/// Parses `PRLX_EMU_DEVICES`: 1 to [`MAX_DEVICES`]; anything else is
/// reported once and ignored.
fn devices_from_env() -> i32 {
    let Ok(text) = std::env::var("PRLX_EMU_DEVICES") else {
        return 1;
    };
    match text.trim().parse::<i32>() {
        Ok(n) if (1..=MAX_DEVICES).contains(&n) => n,
        _ => {
            eprintln!(
                "prlx libcuda: PRLX_EMU_DEVICES={text:?} is not a device count from 1 to {MAX_DEVICES}; using 1"
            );
            1
        }
    }
}

/// One device's primary context (`cuDevicePrimaryCtx*`).
#[derive(Debug, Default, Clone, Copy)]
pub struct Primary {
    /// The context, once first retained.
    pub ctx: Option<usize>,
    pub refs: u32,
    pub flags: u32,
}

/// Bits of the per-context state a real driver keeps.
#[derive(Debug)]
pub struct Context {
    pub device: CUdevice,
    pub flags: u32,
    pub primary: bool,
    /// A primary context is inactive while its reference count is zero.
    pub active: bool,
    /// Set by a kernel fault: every later call in this context fails with it.
    pub sticky: Option<CUresult>,
    /// The value `cuCtxGetId` reports: unique over the process's lifetime.
    pub id: u64,
    pub limits: [usize; (CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED + 1) as usize],
    pub cache_config: u32,
    /// Values the CUDA runtime keeps per context (an export table).
    pub local_storage: Vec<LocalStorage>,
}

/// Called with (context, key, value) when a context holding the value goes.
pub type LocalStorageDestructor = unsafe extern "C" fn(CUcontext, *mut c_void, *mut c_void);

/// One context-local storage entry.
#[derive(Debug)]
pub struct LocalStorage {
    pub key: usize,
    pub value: usize,
    pub destructor: Option<LocalStorageDestructor>,
}

impl LocalStorage {
    /// Runs the destructors of entries taken from context `ctx`; call with
    /// the driver lock released, since they call back into the driver.
    pub fn run_destructors(ctx: usize, entries: Vec<LocalStorage>) {
        for e in entries {
            if let Some(destructor) = e.destructor {
                // SAFETY: the runtime registered this callback for this
                // context, key and value.
                unsafe { destructor(as_handle(ctx), e.key as *mut c_void, e.value as *mut c_void) };
            }
        }
    }
}

#[derive(Debug)]
pub struct Module {
    pub ctx: usize,
    pub emu: ModuleId,
    /// `cuModuleGetFunction` returns the same handle for the same name.
    pub functions: HashMap<String, usize>,
    /// Set for a fatbinary without usable PTX (`emu` is then an empty
    /// module): its kernels fail when looked up, not at load.
    pub machine_code: Option<crate::image::MachineCode>,
}

#[derive(Debug)]
pub struct Function {
    pub module: usize,
    pub emu: FunctionId,
    pub name: CString,
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`.
    pub max_dynamic_shared: u32,
    /// `CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT` (-1: no preference).
    pub carveout: i32,
    /// `CU_FUNC_ATTRIBUTE_SHARED_MEMORY_MODE` (0: default).
    pub shared_memory_mode: i32,
    /// `CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED`: clusters of
    /// up to 16 CTAs.
    pub non_portable_cluster: bool,
    pub cache_config: u32,
}

#[derive(Debug)]
pub struct Stream {
    pub ctx: usize,
    pub flags: u32,
    pub priority: i32,
}

#[derive(Debug)]
pub struct Event {
    pub ctx: usize,
    pub flags: u32,
    /// Emulated time, in nanoseconds, of the last record.
    pub recorded_at: Option<u64>,
}

/// A `cuLinkCreate` session: PTX inputs gathered until `cuLinkComplete`.
#[derive(Debug)]
pub struct LinkState {
    pub ctx: usize,
    pub logs: crate::jit::JitLogs,
    pub inputs: Vec<crate::link::LinkInput>,
    /// The image `cuLinkComplete` hands out; it lives until `cuLinkDestroy`.
    pub image: Option<Vec<u8>>,
}

/// A context-independent library (`cuLibraryLoadData`): a module that no
/// context owns, whose kernels are its functions.
#[derive(Debug)]
pub struct Library {
    pub module: usize,
}

/// Page-locked host memory: allocated by the driver (`cuMemAllocHost`,
/// `cuMemHostAlloc`) or the application's own, registered
/// (`cuMemHostRegister`).
#[derive(Debug)]
pub struct HostAllocation {
    pub layout: std::alloc::Layout,
    pub flags: u32,
    pub registered: bool,
    /// Device-accessible at its host address (mapped, zero-copy memory).
    pub mapped: bool,
}

/// What `cuMemAdvise` and `cuMemPrefetchAsync` said about one page of a
/// managed allocation, for `cuMemRangeGetAttribute(s)`. Locations are device
/// ordinals, `CU_DEVICE_CPU` (-1) or `CU_DEVICE_INVALID` (-2, none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageAdvice {
    pub read_mostly: bool,
    pub preferred: i32,
    /// Bit 0: device 0; bit 1: the CPU.
    pub accessed_by: u8,
    pub last_prefetch: i32,
}

impl Default for PageAdvice {
    fn default() -> PageAdvice {
        PageAdvice {
            read_mostly: false,
            preferred: -2,
            accessed_by: 0,
            last_prefetch: -2,
        }
    }
}

pub struct Driver {
    pub device: Device,
    pub contexts: HandleTable<Context>,
    pub modules: HandleTable<Module>,
    pub functions: HandleTable<Function>,
    pub streams: HandleTable<Stream>,
    pub events: HandleTable<Event>,
    pub links: HandleTable<LinkState>,
    pub libraries: HandleTable<Library>,
    /// Each device's primary context, by ordinal.
    pub primaries: Vec<Primary>,
    /// Device allocation base -> owning context.
    pub allocations: BTreeMap<u64, usize>,
    pub host_allocations: BTreeMap<usize, HostAllocation>,
    /// Managed allocations (also in `allocations`): base -> bytes mapped.
    pub managed: BTreeMap<u64, usize>,
    /// Per-page advice of managed allocations that were advised or
    /// prefetched (absent: all default).
    pub managed_advice: BTreeMap<u64, Vec<PageAdvice>>,
    /// Emulated nanoseconds since `cuInit`; see [`crate::clock`].
    pub clock_ns: u64,
    next_context_id: u64,
    /// Virtual memory management: reservations, physical allocations, mappings.
    pub vmm: crate::state::vmm::Vmm,
    /// Stream-ordered allocator pools.
    pub pools: crate::state::pool::Pools,
    /// Peer access enabled, as (context, peer context) pairs.
    pub peers: std::collections::BTreeSet<(usize, usize)>,
    /// Memory and event handles exported to or opened from other processes.
    pub ipc: crate::state::ipc::Ipc,
}

// SAFETY: the raw pointers inside (log buffers a link state writes to) belong
// to the application, which may call the driver from any thread; the driver
// only touches them while holding the global lock.
unsafe impl Send for Driver {}

// SAFETY: shared access (`with_driver_shared`, the read side of the lock)
// only runs kernels (`Device::launch` takes `&self` and is thread-safe) and
// reads plain data; the raw pointers inside are written through only with
// the exclusive lock (`with_driver`).
unsafe impl Sync for Driver {}

/// The driver's state. Every call takes the lock exclusively
/// ([`with_driver`]), except kernel execution, which holds it shared
/// ([`with_driver_shared`]): kernels launched from several host threads
/// (on any streams) run at the same time, and a call that changes the
/// driver's state waits until no kernel runs (launches are synchronous
/// here, so that is the order a real device would give too).
static DRIVER: RwLock<Option<Driver>> = RwLock::new(None);

thread_local! {
    /// This thread's context stack; the top is the current context.
    static CONTEXT_STACK: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// `cuInit`: creates the device on first call; later calls are no-ops.
pub fn init() {
    let mut guard = DRIVER.write().unwrap_or_else(PoisonError::into_inner);
    if guard.is_none() {
        DEVICE_COUNT.store(devices_from_env(), Ordering::Relaxed);
        *guard = Some(Driver::new(Device::new(DeviceConfig::from_env())));
    }
}

/// Runs `f` on the driver; `CUDA_ERROR_NOT_INITIALIZED` before `cuInit`.
pub fn with_driver<R>(f: impl FnOnce(&mut Driver) -> Result<R, CUresult>) -> Result<R, CUresult> {
    let mut guard = DRIVER.write().unwrap_or_else(PoisonError::into_inner);
    let driver = guard.as_mut().ok_or(CUDA_ERROR_NOT_INITIALIZED)?;
    f(driver)
}

/// Runs `f` on the driver alongside other threads' `with_driver_shared`
/// (kernel execution); `CUDA_ERROR_NOT_INITIALIZED` before `cuInit`.
pub fn with_driver_shared<R>(
    f: impl FnOnce(&Driver) -> Result<R, CUresult>,
) -> Result<R, CUresult> {
    let guard = DRIVER.read().unwrap_or_else(PoisonError::into_inner);
    let driver = guard.as_ref().ok_or(CUDA_ERROR_NOT_INITIALIZED)?;
    f(driver)
}

/// Runs `f` with the calling thread's current context, which must exist, be
/// alive and carry no sticky error.
pub fn with_context<R>(
    f: impl FnOnce(&mut Driver, usize) -> Result<R, CUresult>,
) -> Result<R, CUresult> {
    with_driver(|d| {
        let ctx = d.current_context()?;
        f(d, ctx)
    })
}

pub fn stack_top() -> Option<usize> {
    CONTEXT_STACK.with(|s| s.borrow().last().copied())
}

pub fn stack_push(ctx: usize) {
    CONTEXT_STACK.with(|s| s.borrow_mut().push(ctx));
}

pub fn stack_pop() -> Option<usize> {
    CONTEXT_STACK.with(|s| s.borrow_mut().pop())
}

/// `cuCtxSetCurrent`: replaces the top (NULL pops it).
pub fn stack_set_top(ctx: Option<usize>) {
    CONTEXT_STACK.with(|s| {
        let mut s = s.borrow_mut();
        s.pop();
        if let Some(c) = ctx {
            s.push(c);
        }
    });
}

/// Removes every occurrence of `ctx` from this thread's stack.
pub fn stack_forget(ctx: usize) {
    CONTEXT_STACK.with(|s| s.borrow_mut().retain(|c| *c != ctx));
}

/// The `CUresult` of an emulator memory error.
pub fn mem_error(e: prlx_emulator::EmuError) -> CUresult {
    match e {
        prlx_emulator::EmuError::OutOfMemory { .. } => CUDA_ERROR_OUT_OF_MEMORY,
        _ => CUDA_ERROR_INVALID_VALUE,
    }
}

pub fn as_handle(raw: usize) -> *mut c_void {
    raw as *mut c_void
}

impl Driver {
    fn new(device: Device) -> Driver {
        Driver {
            device,
            contexts: HandleTable::new(Kind::Context),
            modules: HandleTable::new(Kind::Module),
            functions: HandleTable::new(Kind::Function),
            streams: HandleTable::new(Kind::Stream),
            events: HandleTable::new(Kind::Event),
            links: HandleTable::new(Kind::Link),
            libraries: HandleTable::new(Kind::Library),
            primaries: vec![Primary::default(); device_count() as usize],
            allocations: BTreeMap::new(),
            host_allocations: BTreeMap::new(),
            managed: BTreeMap::new(),
            managed_advice: BTreeMap::new(),
            clock_ns: 0,
            next_context_id: 1,
            vmm: Default::default(),
            pools: Default::default(),
            peers: Default::default(),
            ipc: Default::default(),
        }
    }

    /// `cuMemAlloc`'s core: `bytes` (not zero) of device memory owned by
    /// context `ctx`.
    pub fn alloc(&mut self, ctx: usize, bytes: usize) -> Result<u64, CUresult> {
        if bytes == 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let dptr = self.device.mem_alloc(bytes as u64).map_err(mem_error)?;
        self.allocations.insert(dptr, ctx);
        Ok(dptr)
    }

    /// The emulated compute capability as `XY` (80 for 8.0).
    pub fn sm(&self) -> u32 {
        let (major, minor) = self.device.config().compute_capability;
        major * 10 + minor
    }

    /// The calling thread's current context, checked as every call that
    /// needs one checks it.
    pub fn current_context(&self) -> Result<usize, CUresult> {
        let top = stack_top().ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        self.usable_context(top)
    }

    /// `ctx` if it is alive, active and not sticky-errored.
    pub fn usable_context(&self, ctx: usize) -> Result<usize, CUresult> {
        let c = self
            .contexts
            .get(as_handle(ctx))
            .ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        if !c.active {
            return Err(CUDA_ERROR_INVALID_CONTEXT);
        }
        match c.sticky {
            Some(code) => Err(code),
            None => Ok(ctx),
        }
    }

    pub fn new_context(&mut self, flags: u32, primary: bool) -> usize {
        self.new_context_on(0, flags, primary)
    }

    /// A new context on device `device` (an ordinal already checked).
    pub fn new_context_on(&mut self, device: CUdevice, flags: u32, primary: bool) -> usize {
        let id = self.next_context_id;
        self.next_context_id += 1;
        let mut limits = [0usize; (CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED + 1) as usize];
        limits[CU_LIMIT_STACK_SIZE as usize] = 1024;
        limits[CU_LIMIT_PRINTF_FIFO_SIZE as usize] = 1 << 20;
        limits[CU_LIMIT_MALLOC_HEAP_SIZE as usize] =
            prlx_emulator::heap::DEFAULT_HEAP_BYTES as usize;
        limits[3] = 2; // device runtime sync depth
        limits[4] = 2048; // device runtime pending launches
        limits[5] = 0x80; // max L2 fetch granularity
        limits[6] = 0; // persisting L2 cache
        self.contexts.insert(Context {
            device,
            flags,
            primary,
            active: true,
            sticky: None,
            id,
            limits,
            cache_config: 0,
            local_storage: Vec::new(),
        }) as usize
    }

    /// Frees everything `ctx` owns: modules (and their functions), streams,
    /// events, link states and device allocations.
    pub fn release_context_resources(&mut self, ctx: usize) {
        for m in self.modules.handles_where(|m| m.ctx == ctx) {
            self.unload_module(m as usize);
        }
        for s in self.streams.handles_where(|s| s.ctx == ctx) {
            self.streams.remove(s);
        }
        for e in self.events.handles_where(|e| e.ctx == ctx) {
            self.events.remove(e);
        }
        for l in self.links.handles_where(|l| l.ctx == ctx) {
            self.links.remove(l);
        }
        self.ipc.release_context(&mut self.device, ctx);
        self.peers.retain(|&(a, b)| a != ctx && b != ctx);
        let owned: Vec<u64> = self
            .allocations
            .iter()
            .filter(|(_, owner)| **owner == ctx)
            .map(|(base, _)| *base)
            .collect();
        for base in owned {
            self.allocations.remove(&base);
            // The allocation was live in our table, so the emulator knows it.
            let _ = self.device.mem_free(base);
            self.ipc.on_free(base);
            self.pools.forget(base);
            self.managed_advice.remove(&base);
            if let Some(len) = self.managed.remove(&base) {
                // SAFETY: a managed allocation's own mapping (see
                // api/memory.rs), which the emulator no longer refers to.
                unsafe { libc::munmap(base as *mut std::ffi::c_void, len) };
            }
        }
    }

    /// Takes `ctx`'s context-local storage (its destructors are the
    /// caller's to run, outside the lock).
    pub fn take_local_storage(&mut self, ctx: usize) -> Vec<LocalStorage> {
        self.contexts
            .get_mut(as_handle(ctx))
            .map(|c| std::mem::take(&mut c.local_storage))
            .unwrap_or_default()
    }

    /// Removes a module, its functions, and the emulator's copy.
    pub fn unload_module(&mut self, module: usize) {
        if let Some(m) = self.modules.remove(as_handle(module)) {
            for f in m.functions.values() {
                self.functions.remove(as_handle(*f));
            }
            let _ = self.device.unload_module(m.emu);
        }
    }

    /// Marks `ctx` as faulted with `code`; later calls in it return `code`.
    pub fn poison_context(&mut self, ctx: usize, code: CUresult) {
        if let Some(c) = self.contexts.get_mut(as_handle(ctx)) {
            c.sticky.get_or_insert(code);
        }
    }

    /// Resolves a stream argument: NULL, `CU_STREAM_LEGACY` and
    /// `CU_STREAM_PER_THREAD` are the default stream, anything else must be
    /// a live stream.
    pub fn check_stream(&self, stream: CUstream) -> Result<(), CUresult> {
        let raw = stream as usize;
        if raw == 0 || raw == CU_STREAM_LEGACY || raw == CU_STREAM_PER_THREAD {
            return Ok(());
        }
        if self.streams.contains(stream) {
            Ok(())
        } else {
            Err(CUDA_ERROR_INVALID_HANDLE)
        }
    }

    /// The device of context `ctx` (0 if it is gone).
    pub fn device_of(&self, ctx: usize) -> CUdevice {
        self.contexts.get(as_handle(ctx)).map_or(0, |c| c.device)
    }

    /// The function and the module it belongs to, both still loaded.
    pub fn function(&self, f: CUfunction) -> Result<&Function, CUresult> {
        let func = self.functions.get(f).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        if !self.modules.contains(as_handle(func.module)) {
            return Err(CUDA_ERROR_INVALID_HANDLE);
        }
        Ok(func)
    }
}
