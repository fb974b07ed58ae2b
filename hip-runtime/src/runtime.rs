//! The state behind the exported functions: one emulated gfx1100 device
//! under one global lock, and the handle tables of modules, functions,
//! registered fat binaries, host-function and variable registrations,
//! allocations, streams and events.
//!
//! Work runs synchronously: a launch executes to completion inside the
//! launch call, copies and memsets inside theirs, so every stream is always
//! idle and an event's time is when it was recorded. A fault in a kernel is
//! sticky, as on a GPU: later calls that would touch the device return it.

use crate::abi::*;
use crate::device::{Gpu, LoadedCode};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

/// The one device this runtime exposes.
pub const DEVICE_COUNT: i32 = 1;
/// The processor whose code objects are loaded.
pub const PROCESSOR: &str = "gfx1100";

/// A kernel a module holds.
#[derive(Debug, Clone)]
pub struct Function {
    pub module: u64,
    pub name: String,
}

/// A module: a loaded code object (from `hipModuleLoadData` or a registered
/// fat binary).
pub struct Module {
    pub code: LoadedCode,
    /// Handles of the functions `hipModuleGetFunction` gave out, by name.
    pub functions: HashMap<String, u64>,
}

/// A fat binary `__hipRegisterFatBinary` saw: loaded on first use, as HIP
/// does, so registration (before `main`) never fails.
pub struct FatBinary {
    pub image: Vec<u8>,
    pub module: Option<Result<u64, hipError_t>>,
}

/// A `__hipRegisterVar` registration: the host shadow's device twin.
#[derive(Debug, Clone)]
pub struct Variable {
    pub fatbin: u64,
    pub name: String,
    pub size: usize,
}

/// A `__managed__` variable (`__hipRegisterManagedVar`): its managed
/// allocation, whose address the module's pointer variable `name` receives.
#[derive(Debug, Clone)]
pub struct ManagedVariable {
    pub fatbin: u64,
    pub name: String,
    pub address: u64,
}

#[derive(Debug, Clone, Copy)]
pub struct Stream {
    pub flags: u32,
    pub priority: i32,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Event {
    pub flags: u32,
    pub recorded: Option<Instant>,
}

/// A page-locked host allocation (`hipHostMalloc`): device-backed, mapped at
/// the same address on the host (see `api::memory`).
#[derive(Debug, Clone, Copy)]
pub struct HostAllocation {
    pub size: usize,
    pub flags: u32,
}

pub struct Runtime {
    pub gpu: Gpu,
    next_handle: u64,
    pub modules: HashMap<u64, Module>,
    pub functions: HashMap<u64, Function>,
    pub fatbins: HashMap<u64, FatBinary>,
    /// Host stub address → (fat binary, kernel name).
    pub host_functions: HashMap<usize, (u64, String)>,
    /// Host shadow address → registration.
    pub variables: HashMap<usize, Variable>,
    /// Device allocations: start → size.
    pub allocations: BTreeMap<u64, usize>,
    pub host_allocations: BTreeMap<usize, HostAllocation>,
    /// Managed allocations (`hipMallocManaged`): start → size. Each is a
    /// device allocation and a host mapping at the same address.
    pub managed: BTreeMap<u64, usize>,
    pub managed_variables: Vec<ManagedVariable>,
    pub streams: HashMap<u64, Stream>,
    pub events: HashMap<u64, Event>,
    /// The fault that ended a kernel; every later device call returns it.
    pub sticky: Option<hipError_t>,
    pub device_flags: u32,
}

impl Runtime {
    fn new() -> Runtime {
        Runtime {
            gpu: Gpu::new(),
            next_handle: 0x1000,
            modules: HashMap::new(),
            functions: HashMap::new(),
            fatbins: HashMap::new(),
            host_functions: HashMap::new(),
            variables: HashMap::new(),
            allocations: BTreeMap::new(),
            host_allocations: BTreeMap::new(),
            managed: BTreeMap::new(),
            managed_variables: Vec::new(),
            streams: HashMap::new(),
            events: HashMap::new(),
            sticky: None,
            device_flags: 0,
        }
    }

    /// A fresh opaque handle (never 0, so never a NULL pointer).
    pub fn handle(&mut self) -> u64 {
        self.next_handle += 0x10;
        self.next_handle
    }

    /// Fails with the sticky fault, if a kernel faulted.
    pub fn healthy(&self) -> Result<(), hipError_t> {
        self.sticky.map_or(Ok(()), Err)
    }

    /// The device allocation holding `[addr, addr + len)`, as (start, size).
    pub fn allocation_of(&self, addr: u64, len: usize) -> Option<(u64, usize)> {
        let (&start, &size) = self.allocations.range(..=addr).next_back()?;
        let end = start.checked_add(size as u64)?;
        (addr < end.max(start + 1) && addr.checked_add(len as u64)? <= end).then_some((start, size))
    }

    /// Whether `addr` lies in device memory: an allocation or a loaded module.
    pub fn is_device(&self, addr: u64) -> bool {
        self.gpu.contains(addr)
    }

    /// The managed allocation holding `addr`, as (start, size).
    pub fn managed_of(&self, addr: u64) -> Option<(u64, usize)> {
        let (&start, &size) = self.managed.range(..=addr).next_back()?;
        (addr < start + size as u64).then_some((start, size))
    }

    /// Managed memory lives in its host mapping between launches: before a
    /// launch the device copies are brought up to date, after it the host
    /// mappings. Launches run to completion inside the call, so the host
    /// and a kernel never touch managed memory at the same time.
    pub fn sync_managed(&mut self, to_device: bool) -> Result<(), String> {
        for (&addr, &size) in &self.managed {
            // SAFETY: `addr..addr + size` is this allocation's host mapping,
            // mapped read-write by hipMallocManaged until hipFree.
            let host = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, size) };
            if to_device {
                self.gpu.write(addr, host)?;
            } else {
                self.gpu.read(addr, host)?;
            }
        }
        Ok(())
    }

    /// Checks a stream handle: NULL (the null stream), the per-thread
    /// stream `(hipStream_t)2`, or a created stream.
    pub fn check_stream(&self, stream: hipStream_t) -> Result<(), hipError_t> {
        let handle = stream as u64;
        if handle == 0 || handle == PER_THREAD_STREAM || self.streams.contains_key(&handle) {
            Ok(())
        } else {
            Err(hipErrorInvalidHandle)
        }
    }

    /// The module a registered fat binary becomes, loading it on first use.
    pub fn fatbin_module(&mut self, fatbin: u64) -> Result<u64, hipError_t> {
        let Some(entry) = self.fatbins.get(&fatbin) else {
            return Err(hipErrorInvalidHandle);
        };
        if let Some(result) = entry.module {
            return result;
        }
        let image = entry.image.clone();
        let result = self.load_module(&image).map_err(|message| {
            eprintln!("prlx hip: cannot load a registered fat binary: {message}");
            hipErrorNoBinaryForGpu
        });
        if let Some(entry) = self.fatbins.get_mut(&fatbin) {
            entry.module = Some(result);
        }
        if let Ok(module) = result {
            self.bind_managed_variables(fatbin, module);
        }
        result
    }

    /// Points each `__managed__` variable of `fatbin` (a pointer variable in
    /// the code object, named like the variable) at its managed allocation.
    fn bind_managed_variables(&mut self, fatbin: u64, module: u64) {
        let bindings: Vec<(String, u64)> = self
            .managed_variables
            .iter()
            .filter(|v| v.fatbin == fatbin)
            .map(|v| (v.name.clone(), v.address))
            .collect();
        for (name, address) in bindings {
            let Some((slot, _)) = self.modules[&module].code.symbol(&name) else {
                eprintln!(
                    "prlx hip: __managed__ variable {name} has no pointer in the code object"
                );
                continue;
            };
            if let Err(message) = self.gpu.write(slot, &address.to_le_bytes()) {
                eprintln!("prlx hip: __managed__ variable {name}: {message}");
            }
        }
    }

    /// Loads a code object or an offload bundle holding one for gfx1100.
    pub fn load_module(&mut self, image: &[u8]) -> Result<u64, String> {
        let code = crate::bundle::code_object_for(image, PROCESSOR).map_err(|e| e.to_string())?;
        let loaded = self.gpu.load(&code)?;
        let handle = self.handle();
        self.modules.insert(
            handle,
            Module {
                code: loaded,
                functions: HashMap::new(),
            },
        );
        Ok(handle)
    }

    /// The handle of kernel `name` of `module`, made on first request.
    pub fn function(&mut self, module: u64, name: &str) -> Result<u64, hipError_t> {
        let Some(m) = self.modules.get(&module) else {
            return Err(hipErrorInvalidHandle);
        };
        if let Some(&handle) = m.functions.get(name) {
            return Ok(handle);
        }
        if m.code.kernel(name).is_none() {
            return Err(hipErrorNotFound);
        }
        let handle = self.handle();
        self.functions.insert(
            handle,
            Function {
                module,
                name: name.to_string(),
            },
        );
        if let Some(m) = self.modules.get_mut(&module) {
            m.functions.insert(name.to_string(), handle);
        }
        Ok(handle)
    }

    /// The function a host stub (`hipLaunchKernel`'s `function_address`)
    /// was registered as.
    pub fn host_function(&mut self, host: usize) -> Result<u64, hipError_t> {
        let Some((fatbin, name)) = self.host_functions.get(&host).cloned() else {
            return Err(hipErrorInvalidDeviceFunction);
        };
        let module = self.fatbin_module(fatbin)?;
        self.function(module, &name)
            .map_err(|_| hipErrorInvalidDeviceFunction)
    }

    /// Device address and size of a registered variable (by host shadow).
    pub fn variable(&mut self, host: usize) -> Result<(u64, usize), hipError_t> {
        let Some(var) = self.variables.get(&host).cloned() else {
            return Err(hipErrorInvalidSymbol);
        };
        let module = self.fatbin_module(var.fatbin)?;
        let code = &self.modules[&module].code;
        let (addr, size) = code.symbol(&var.name).ok_or(hipErrorInvalidSymbol)?;
        Ok((addr, if size == 0 { var.size } else { size as usize }))
    }
}

/// `hipStreamPerThread`: `(hipStream_t)2`.
pub const PER_THREAD_STREAM: u64 = 2;

/// The runtime, locked. A poisoned lock (a panic while held, already turned
/// into `hipErrorUnknown`) is taken over: the tables stay consistent
/// because every mutation completes before anything can panic.
pub fn runtime() -> MutexGuard<'static, Runtime> {
    static RUNTIME: OnceLock<Mutex<Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| Mutex::new(Runtime::new()))
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
