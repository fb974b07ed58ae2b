//! Initialization, version, error strings and device queries.

use crate::cu::*;
use crate::driver::{self, check_device, with_driver};
use crate::entry::{ProcEntry, procs};
use crate::entry::{aliases, exports, non_null, write_out};
use crate::error_table;
use prlx_emulator::DeviceAttribute;
use std::ffi::{c_char, c_int, c_uint};

/// The driver version reported: CUDA 13.0, so both CUDA 12 and 13 runtimes
/// accept the driver.
pub const DRIVER_VERSION: c_int = 13000;

/// The PCI address device `dev` reports (domain:bus:device.function): each
/// device on its own bus, numbered by ordinal.
fn pci_address(dev: CUdevice) -> String {
    format!("0000:{dev:02x}:00.0")
}

/// Device `dev`'s name: the emulator's, with the ordinal appended on devices
/// after the first so that several devices are told apart.
fn device_name(d: &driver::Driver, dev: CUdevice) -> String {
    let base = &d.device.config().name;
    if dev == 0 {
        base.clone()
    } else {
        format!("{base} #{dev}")
    }
}

/// Device `dev`'s UUID: fixed per ordinal, so the same emulated device is
/// recognisable across runs.
pub fn device_uuid(dev: CUdevice) -> [u8; 16] {
    let mut bytes = *b"prlx-emu-device0";
    if dev < 10 {
        bytes[15] = b'0' + dev as u8;
    } else {
        bytes[12..16].copy_from_slice(&(dev as u32).to_be_bytes());
    }
    bytes
}

/// The highest `CUdevice_attribute` the CUDA 12.9/13 headers define.
const LAST_DEVICE_ATTRIBUTE: c_int = 143;

/// A device attribute: the emulator's table, with the values the driver
/// layer itself determines overriding it.
pub fn device_attribute(d: &driver::Driver, attrib: c_int) -> Result<c_int, CUresult> {
    if !(1..=LAST_DEVICE_ATTRIBUTE).contains(&attrib) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    const UNIFIED_ADDRESSING: c_int = 41;
    const CAN_MAP_HOST_MEMORY: c_int = 19;
    const MANAGED_MEMORY: c_int = 83;
    const PAGEABLE_MEMORY_ACCESS: c_int = 88;
    const CONCURRENT_MANAGED_ACCESS: c_int = 89;
    const CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: c_int = 91;
    const VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: c_int = 102;
    const HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: c_int = 103;
    const MEMORY_POOLS_SUPPORTED: c_int = 115;
    const IPC_EVENT_SUPPORTED: c_int = 125;
    const MEMPOOL_SUPPORTED_HANDLE_TYPES: c_int = 119;
    Ok(match attrib {
        // One address space holds every context's allocations, and
        // cuMemcpy infers directions from pointers.
        UNIFIED_ADDRESSING => 1,
        // Page-locked and managed memory are host mappings the emulated
        // device addresses at their host address (see api/memory.rs); the
        // host may touch managed memory whenever no kernel runs, and kernels
        // run to completion inside the launch call, so access is never
        // concurrent in fact.
        CAN_MAP_HOST_MEMORY
        | MANAGED_MEMORY
        | CONCURRENT_MANAGED_ACCESS
        | CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM => 1,
        // Ordinary (malloc'd, unregistered) host memory is not device memory.
        PAGEABLE_MEMORY_ACCESS => 0,
        // api/vmm.rs (physical memory is a memfd, exportable as a POSIX file
        // descriptor), api/pool.rs, api/ipc.rs.
        VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED
        | HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED
        | MEMORY_POOLS_SUPPORTED
        | IPC_EVENT_SUPPORTED => 1,
        // Pools export as POSIX file descriptors (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR).
        MEMPOOL_SUPPORTED_HANDLE_TYPES => 1,
        // Texture and surface limits: api/texture.rs.
        a if crate::tex_format::device_attribute(a).is_some() => {
            crate::tex_format::device_attribute(a).unwrap_or(0)
        }
        a => d.device.config().attribute(DeviceAttribute(a)).unwrap_or(0),
    })
}

exports! {
    fn cuInit(flags: c_uint) {
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        driver::init();
        Ok(())
    }

    fn cuDriverGetVersion(version: *mut c_int) {
        // SAFETY: `cuDriverGetVersion`'s caller passes `version` as cuda.h specifies: NULL (refused by
        // `write_out`) or valid for writing a `c_int`.
        unsafe { write_out(version, DRIVER_VERSION) }
    }

    fn cuGetErrorName(error: CUresult, p_str: *mut *const c_char) {
        non_null(p_str)?;
        match error_table::name(error) {
            // SAFETY: `cuGetErrorName`'s caller passes `p_str` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `*const c_char`.
            Some(s) => unsafe { write_out(p_str, s) },
            None => {
                // SAFETY: `cuGetErrorName`'s caller passes `p_str` as cuda.h specifies: NULL (refused by
                // `write_out`) or valid for writing a `*const c_char`.
                unsafe { write_out(p_str, std::ptr::null()) }?;
                Err(CUDA_ERROR_INVALID_VALUE)
            }
        }
    }

    fn cuGetErrorString(error: CUresult, p_str: *mut *const c_char) {
        non_null(p_str)?;
        match error_table::description(error) {
            // SAFETY: `cuGetErrorString`'s caller passes `p_str` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `*const c_char`.
            Some(s) => unsafe { write_out(p_str, s) },
            None => {
                // SAFETY: `cuGetErrorString`'s caller passes `p_str` as cuda.h specifies: NULL (refused by
                // `write_out`) or valid for writing a `*const c_char`.
                unsafe { write_out(p_str, std::ptr::null()) }?;
                Err(CUDA_ERROR_INVALID_VALUE)
            }
        }
    }

    fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) {
        with_driver(|_| {
            non_null(device)?;
            check_device(ordinal)?;
            // SAFETY: `cuDeviceGet`'s caller passes `device` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUdevice`.
            unsafe { write_out(device, ordinal) }
        })
    }

    fn cuDeviceGetCount(count: *mut c_int) {
        // SAFETY: `cuDeviceGetCount`'s caller passes `count` as cuda.h specifies: NULL (refused by
        // `write_out`) or valid for writing a `c_int`.
        with_driver(|_| unsafe { write_out(count, driver::device_count()) })
    }

    fn cuDeviceGetName(name: *mut c_char, len: c_int, dev: CUdevice) {
        with_driver(|d| {
            non_null(name)?;
            check_device(dev)?;
            if len <= 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let full = device_name(d, dev);
            let full = full.as_bytes();
            let n = full.len().min(len as usize - 1);
            // SAFETY: the caller's buffer holds `len` bytes; we write n + 1 ≤ len.
            unsafe {
                std::ptr::copy_nonoverlapping(full.as_ptr(), name.cast(), n);
                *name.add(n) = 0;
            }
            Ok(())
        })
    }

    fn cuDeviceGetPCIBusId(pci_bus_id: *mut c_char, len: c_int, dev: CUdevice) {
        with_driver(|_| {
            non_null(pci_bus_id)?;
            check_device(dev)?;
            if len <= 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let id = pci_address(dev);
            let n = id.len().min(len as usize - 1);
            // SAFETY: the caller's buffer holds `len` bytes; we write n + 1 ≤ len.
            unsafe {
                std::ptr::copy_nonoverlapping(id.as_ptr(), pci_bus_id.cast(), n);
                *pci_bus_id.add(n) = 0;
            }
            Ok(())
        })
    }

    fn cuDeviceGetByPCIBusId(dev: *mut CUdevice, pci_bus_id: *const c_char) {
        with_driver(|_| {
            non_null(dev)?;
            // SAFETY: a C string from the caller.
            let id = unsafe { crate::entry::c_str(pci_bus_id) }?;
            // Accepted forms: domain:bus:device.function, or bus:device.function.
            let full = if id.matches(':').count() == 1 { format!("0000:{id}") } else { id.to_string() };
            let found = (0..driver::device_count()).find(|&o| full.eq_ignore_ascii_case(&pci_address(o)));
            let Some(ordinal) = found else {
                return Err(CUDA_ERROR_INVALID_VALUE);
            };
            // SAFETY: `cuDeviceGetByPCIBusId`'s caller passes `dev` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUdevice`.
            unsafe { write_out(dev, ordinal) }
        })
    }

    fn cuDeviceGetUuid(uuid: *mut CUuuid, dev: CUdevice) {
        with_driver(|_| {
            non_null(uuid)?;
            check_device(dev)?;
            // SAFETY: `cuDeviceGetUuid`'s caller passes `uuid` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUuuid`.
            unsafe { write_out(uuid, CUuuid { bytes: device_uuid(dev) }) }
        })
    }

    fn cuDeviceTotalMem_v2(bytes: *mut usize, dev: CUdevice) {
        with_driver(|d| {
            non_null(bytes)?;
            check_device(dev)?;
            // SAFETY: `cuDeviceTotalMem_v2`'s caller passes `bytes` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `usize`.
            unsafe { write_out(bytes, d.device.config().global_mem_bytes as usize) }
        })
    }

    /// Legacy 32-bit form; the total saturates at 4 GiB - 1.
    fn cuDeviceTotalMem(bytes: *mut c_uint, dev: CUdevice) {
        with_driver(|d| {
            non_null(bytes)?;
            check_device(dev)?;
            let total = d.device.config().global_mem_bytes.min(u32::MAX as u64) as c_uint;
            // SAFETY: `cuDeviceTotalMem`'s caller passes `bytes` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `c_uint`.
            unsafe { write_out(bytes, total) }
        })
    }

    fn cuDeviceGetAttribute(pi: *mut c_int, attrib: c_int, dev: CUdevice) {
        with_driver(|d| {
            non_null(pi)?;
            check_device(dev)?;
            const PCI_BUS_ID: c_int = 33;
            const MULTI_GPU_BOARD_GROUP_ID: c_int = 85;
            let v = match attrib {
                PCI_BUS_ID | MULTI_GPU_BOARD_GROUP_ID => dev,
                _ => device_attribute(d, attrib)?,
            };
            // SAFETY: `cuDeviceGetAttribute`'s caller passes `pi` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `c_int`.
            unsafe { write_out(pi, v) }
        })
    }

    fn cuDeviceComputeCapability(major: *mut c_int, minor: *mut c_int, dev: CUdevice) {
        with_driver(|d| {
            non_null(major)?;
            non_null(minor)?;
            check_device(dev)?;
            let (ma, mi) = d.device.config().compute_capability;
            // SAFETY: `cuDeviceComputeCapability`'s caller passes `major` and `minor` as cuda.h specifies:
            // each valid for writing a `c_int` (both checked non-null above).
            unsafe {
                write_out(major, ma as c_int)?;
                write_out(minor, mi as c_int)
            }
        })
    }

    fn cuDeviceGetProperties(prop: *mut CUdevprop, dev: CUdevice) {
        with_driver(|d| {
            non_null(prop)?;
            check_device(dev)?;
            let a = |n| device_attribute(d, n).unwrap_or(0);
            let p = CUdevprop {
                max_threads_per_block: a(1),
                max_threads_dim: [a(2), a(3), a(4)],
                max_grid_size: [a(5), a(6), a(7)],
                shared_mem_per_block: a(8),
                total_constant_memory: a(9),
                simd_width: a(10),
                mem_pitch: a(11),
                regs_per_block: a(12),
                clock_rate: a(13),
                texture_align: a(14),
            };
            // SAFETY: `cuDeviceGetProperties`'s caller passes `prop` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUdevprop`.
            unsafe { write_out(prop, p) }
        })
    }
}

aliases! {
    cuDeviceGetUuid_v2 = cuDeviceGetUuid(uuid: *mut CUuuid, dev: CUdevice);
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuGetErrorString": 6000 => cuGetErrorString;
        "cuGetErrorName": 6000 => cuGetErrorName;
        "cuInit": 2000 => cuInit;
        "cuDriverGetVersion": 2020 => cuDriverGetVersion;
        "cuDeviceGet": 2000 => cuDeviceGet;
        "cuDeviceGetCount": 2000 => cuDeviceGetCount;
        "cuDeviceGetName": 2000 => cuDeviceGetName;
        "cuDeviceGetUuid": 9020 => cuDeviceGetUuid, 11040 => cuDeviceGetUuid_v2;
        "cuDeviceTotalMem": 2000 => cuDeviceTotalMem, 3020 => cuDeviceTotalMem_v2;
        "cuDeviceGetAttribute": 2000 => cuDeviceGetAttribute;
        "cuDeviceGetPCIBusId": 4010 => cuDeviceGetPCIBusId;
        "cuDeviceGetByPCIBusId": 4010 => cuDeviceGetByPCIBusId;
        "cuDeviceGetProperties": 2000 => cuDeviceGetProperties;
        "cuDeviceComputeCapability": 2000 => cuDeviceComputeCapability;
    }
}
