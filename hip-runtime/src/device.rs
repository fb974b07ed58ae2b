//! The emulated gfx1100 behind the runtime: `prlx_rdna::Device` (global
//! memory, loaded code objects, launches), and the translation of its
//! faults into `hipError_t`s.

use crate::abi::*;
use prlx_rdna::{CodeObject, Device, FaultKind, Kernel, LaunchDims, ModuleId};
use std::sync::Arc;

/// Device allocations are aligned like HIP's (256 bytes at least).
const ALLOC_ALIGN: u64 = 256;

/// A code object loaded on the device.
pub struct LoadedCode {
    pub id: ModuleId,
    pub code: Arc<CodeObject>,
    /// Where the image's virtual address 0 lives in device memory.
    pub base: u64,
}

impl LoadedCode {
    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.code.kernel(name)
    }

    /// Device address and size of a symbol (a `__device__` variable).
    pub fn symbol(&self, name: &str) -> Option<(u64, u64)> {
        self.code
            .symbols
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, addr, size)| (self.base + addr, *size))
    }
}

pub struct Gpu {
    pub device: Device,
    /// The hostcall buffer and device heap, made at the first launch of a
    /// kernel that asks for them (`crate::hostcall`).
    hostcall: Option<crate::hostcall::HostcallAddrs>,
}

// SAFETY: `Device` is not `Send` only because its optional per-instruction
// hook is a `Box<dyn FnMut>` without a `Send` bound. This runtime never
// installs a hook, and the device is only ever touched under the runtime's
// mutex, so moving it between threads cannot race.
unsafe impl Send for Gpu {}

impl Default for Gpu {
    fn default() -> Self {
        Gpu::new()
    }
}

impl Gpu {
    pub fn new() -> Gpu {
        Gpu {
            device: Device::new(),
            hostcall: None,
        }
    }

    /// The hostcall buffer and device heap (device `printf`, `malloc`),
    /// created and registered with the device's scheduler on first use.
    pub fn hostcall(&mut self) -> Result<crate::hostcall::HostcallAddrs, String> {
        if let Some(addrs) = self.hostcall {
            return Ok(addrs);
        }
        // One packet per wave that can be resident: each wave holds at most
        // one packet, and 1024-lane workgroups have 32 Wave32 waves.
        let packets = self.device.config.resident_workgroups.max(1) * 32;
        let (addrs, service) = crate::hostcall::create(&mut self.device.memory, packets)?;
        self.device.set_service(Some(service));
        self.hostcall = Some(addrs);
        Ok(addrs)
    }

    pub fn alloc(&mut self, size: usize) -> Result<u64, String> {
        self.alloc_aligned(size, ALLOC_ALIGN)
    }

    pub fn alloc_aligned(&mut self, size: usize, align: u64) -> Result<u64, String> {
        self.device
            .alloc(size as u64, align)
            .ok_or_else(|| format!("the device cannot allocate {size} bytes"))
    }

    pub fn free(&mut self, addr: u64) -> bool {
        self.device.free(addr)
    }

    /// Whether `addr` lies in device memory (an allocation or a module).
    pub fn contains(&self, addr: u64) -> bool {
        self.device.memory.allocation_of(addr).is_some()
    }

    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<(), String> {
        self.device.write(addr, bytes).map_err(|at| {
            format!(
                "{} bytes at device address {addr:#x}: address {at:#x} is outside every allocation",
                bytes.len()
            )
        })
    }

    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), String> {
        let len = out.len();
        self.device.read(addr, out).map_err(|at| {
            format!("{len} bytes at device address {addr:#x}: address {at:#x} is outside every allocation")
        })
    }

    pub fn load(&mut self, image: &[u8]) -> Result<LoadedCode, String> {
        let code = CodeObject::parse(image).map_err(|e| e.to_string())?;
        let id = self.device.load(code).map_err(|f| f.to_string())?;
        let module = self.device.module(id).expect("just loaded");
        Ok(LoadedCode {
            id,
            code: module.code.clone(),
            base: module.base,
        })
    }

    pub fn unload(&mut self, code: LoadedCode) {
        self.device.unload(code.id);
    }

    /// Runs a kernel to completion. A fault comes back as the error HIP
    /// reports for it and a one-line description (kernel, workgroup, wave,
    /// lane, PC, address, instruction).
    pub fn launch(
        &mut self,
        code: &LoadedCode,
        kernel: &str,
        dims: &LaunchDims,
        kernarg: &[u8],
    ) -> Result<(), (hipError_t, String)> {
        self.device
            .launch(
                code.id,
                kernel,
                dims.grid,
                dims.block,
                dims.dynamic_lds,
                kernarg,
            )
            .map(|_| ())
            .map_err(|fault| {
                let code = match fault.kind {
                    FaultKind::Memory { .. } | FaultKind::Misaligned { .. } => {
                        hipErrorIllegalAddress
                    }
                    FaultKind::Launch(_) => hipErrorInvalidConfiguration,
                    FaultKind::Trap(_) => hipErrorAssert,
                    _ => hipErrorLaunchFailure,
                };
                (code, fault.to_string())
            })
    }
}
