//! Device management, versions and error reporting: one gfx1100 (RDNA3,
//! Wave32 by default) device, the properties a Radeon RX 7900 XTX reports
//! where the emulator has no opinion of its own.

use crate::abi::*;
use crate::entry::{self, error_name, exports, write_out};
use crate::runtime::{DEVICE_COUNT, runtime};
use std::ffi::{c_char, c_int, c_uint};

/// `HIP_VERSION` of the headers programs are built against (5.2.21153).
pub const HIP_VERSION: c_int = 5 * 10_000_000 + 2 * 100_000 + 21153;
const DEVICE_NAME: &str = "prlx RDNA3 emulator (gfx1100)";
const GCN_ARCH_NAME: &str = "gfx1100";
/// Device memory the emulator offers (it allocates on demand).
pub const TOTAL_GLOBAL_MEM: usize = 8 << 30;
const SHARED_PER_BLOCK: usize = 64 << 10;
const COMPUTE_UNITS: c_int = 96;
const MAX_THREADS_PER_BLOCK: c_int = 1024;
const CLOCK_KHZ: c_int = 2_500_000;

fn check_device(device: c_int) -> Result<(), hipError_t> {
    if (0..DEVICE_COUNT).contains(&device) {
        Ok(())
    } else {
        Err(hipErrorInvalidDevice)
    }
}

fn copy_name(into: &mut [c_char], name: &str) {
    into.fill(0);
    let room = into.len().saturating_sub(1);
    for (slot, byte) in into.iter_mut().zip(name.bytes().take(room)) {
        *slot = byte as c_char;
    }
}

/// The properties of the emulated device.
pub fn properties() -> hipDeviceProp_t {
    // SAFETY: hipDeviceProp_t is plain data (integers, arrays, raw pointers):
    // all-zero bytes are a valid value of every field.
    let mut p: hipDeviceProp_t = unsafe { std::mem::zeroed() };
    copy_name(&mut p.name, DEVICE_NAME);
    copy_name(&mut p.gcnArchName, GCN_ARCH_NAME);
    p.totalGlobalMem = TOTAL_GLOBAL_MEM;
    p.sharedMemPerBlock = SHARED_PER_BLOCK;
    p.regsPerBlock = 65536;
    p.warpSize = 32;
    p.maxThreadsPerBlock = MAX_THREADS_PER_BLOCK;
    p.maxThreadsDim = [1024, 1024, 1024];
    p.maxGridSize = [i32::MAX, 65535, 65535];
    p.clockRate = CLOCK_KHZ;
    p.memoryClockRate = 1_250_000;
    p.memoryBusWidth = 384;
    p.totalConstMem = TOTAL_GLOBAL_MEM;
    p.major = 11;
    p.minor = 0;
    p.multiProcessorCount = COMPUTE_UNITS;
    p.l2CacheSize = 6 << 20;
    p.maxThreadsPerMultiProcessor = 2048;
    p.computeMode = 0;
    p.clockInstructionRate = 100_000;
    // hipDeviceArch_t: every feature bit up to hasDynamicParallelism (bit
    // 16) but that one; gfx1100 has them all.
    p.arch = (1 << 16) - 1;
    p.concurrentKernels = 1;
    p.maxSharedMemoryPerMultiProcessor = SHARED_PER_BLOCK * 2;
    p.canMapHostMemory = 1;
    p.gcnArch = 1100;
    p.cooperativeLaunch = 0;
    p.maxTexture1DLinear = 1 << 27;
    p.maxTexture1D = 16384;
    p.maxTexture2D = [16384, 16384];
    p.maxTexture3D = [2048, 2048, 2048];
    p.memPitch = TOTAL_GLOBAL_MEM;
    p.textureAlignment = 256;
    p.texturePitchAlignment = 256;
    p.isLargeBar = 1;
    p.managedMemory = 1;
    p.directManagedMemAccessFromHost = 1;
    p
}

/// `hipDeviceGetAttribute`'s answer, or `None` for attributes it refuses.
pub fn attribute(attr: hipDeviceAttribute_t) -> Option<c_int> {
    let p = properties();
    Some(match attr {
        hipDeviceAttributeMaxThreadsPerBlock => p.maxThreadsPerBlock,
        hipDeviceAttributeMaxBlockDimX => p.maxThreadsDim[0],
        hipDeviceAttributeMaxBlockDimY => p.maxThreadsDim[1],
        hipDeviceAttributeMaxBlockDimZ => p.maxThreadsDim[2],
        hipDeviceAttributeMaxGridDimX => p.maxGridSize[0],
        hipDeviceAttributeMaxGridDimY => p.maxGridSize[1],
        hipDeviceAttributeMaxGridDimZ => p.maxGridSize[2],
        hipDeviceAttributeMaxSharedMemoryPerBlock | hipDeviceAttributeSharedMemPerBlockOptin => {
            p.sharedMemPerBlock as c_int
        }
        hipDeviceAttributeTotalConstantMemory => c_int::MAX,
        hipDeviceAttributeWarpSize => p.warpSize,
        hipDeviceAttributeMaxRegistersPerBlock
        | hipDeviceAttributeMaxRegistersPerMultiprocessor => p.regsPerBlock,
        hipDeviceAttributeClockRate => p.clockRate,
        hipDeviceAttributeMemoryClockRate => p.memoryClockRate,
        hipDeviceAttributeMemoryBusWidth => p.memoryBusWidth,
        hipDeviceAttributeMultiprocessorCount => p.multiProcessorCount,
        hipDeviceAttributeComputeMode => p.computeMode,
        hipDeviceAttributeL2CacheSize => p.l2CacheSize,
        hipDeviceAttributeMaxThreadsPerMultiProcessor => p.maxThreadsPerMultiProcessor,
        hipDeviceAttributeComputeCapabilityMajor => p.major,
        hipDeviceAttributeComputeCapabilityMinor => p.minor,
        hipDeviceAttributeConcurrentKernels => p.concurrentKernels,
        hipDeviceAttributePciBusId => p.pciBusID,
        hipDeviceAttributePciDeviceId => p.pciDeviceID,
        hipDeviceAttributePciDomainID => p.pciDomainID,
        hipDeviceAttributeMaxSharedMemoryPerMultiprocessor
        | hipDeviceAttributeSharedMemPerMultiprocessor => {
            p.maxSharedMemoryPerMultiProcessor as c_int
        }
        hipDeviceAttributeIsMultiGpuBoard => p.isMultiGpuBoard,
        hipDeviceAttributeIntegrated => p.integrated,
        hipDeviceAttributeCooperativeLaunch | hipDeviceAttributeCooperativeMultiDeviceLaunch => 0,
        hipDeviceAttributeMaxTexture1DWidth => p.maxTexture1D,
        hipDeviceAttributeMaxTexture2DWidth => p.maxTexture2D[0],
        hipDeviceAttributeMaxTexture2DHeight => p.maxTexture2D[1],
        hipDeviceAttributeMaxTexture3DWidth => p.maxTexture3D[0],
        hipDeviceAttributeMaxTexture3DHeight => p.maxTexture3D[1],
        hipDeviceAttributeMaxTexture3DDepth => p.maxTexture3D[2],
        hipDeviceAttributeMaxPitch => c_int::MAX,
        hipDeviceAttributeTextureAlignment => p.textureAlignment as c_int,
        hipDeviceAttributeTexturePitchAlignment => p.texturePitchAlignment as c_int,
        hipDeviceAttributeKernelExecTimeout => 0,
        hipDeviceAttributeCanMapHostMemory => p.canMapHostMemory,
        hipDeviceAttributeEccEnabled => 0,
        hipDeviceAttributeManagedMemory | hipDeviceAttributeDirectManagedMemAccessFromHost => 1,
        hipDeviceAttributeConcurrentManagedAccess
        | hipDeviceAttributePageableMemoryAccess
        | hipDeviceAttributePageableMemoryAccessUsesHostPageTables => 0,
        hipDeviceAttributeUnifiedAddressing => 1,
        hipDeviceAttributeMaxBlocksPerMultiProcessor => 32,
        hipDeviceAttributeClockInstructionRate => p.clockInstructionRate,
        hipDeviceAttributeGcnArch => p.gcnArch,
        hipDeviceAttributeIsLargeBar => p.isLargeBar,
        hipDeviceAttributeAsicRevision => 0,
        hipDeviceAttributeStreamPrioritiesSupported => 1,
        hipDeviceAttributeHostNativeAtomicSupported => 0,
        hipDeviceAttributeTccDriver => 0,
        hipDeviceAttributeMemoryPoolsSupported => 0,
        hipDeviceAttributeCanUseStreamWaitValue => 0,
        _ => return None,
    })
}

exports! {
    /// Nothing to initialise: the device exists from the first call.
    fn hipInit(flags: c_uint) {
        if flags != 0 {
            return Err(hipErrorInvalidValue);
        }
        Ok(())
    }

    fn hipDriverGetVersion(version: *mut c_int) {
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(version, HIP_VERSION) }
    }

    fn hipRuntimeGetVersion(version: *mut c_int) {
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(version, HIP_VERSION) }
    }

    fn hipGetDeviceCount(count: *mut c_int) {
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(count, DEVICE_COUNT) }
    }

    fn hipGetDevice(device: *mut c_int) {
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(device, 0) }
    }

    fn hipSetDevice(device: c_int) {
        check_device(device)
    }

    fn hipDeviceGet(device: *mut hipDevice_t, ordinal: c_int) {
        check_device(ordinal)?;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(device, ordinal) }
    }

    fn hipGetDeviceProperties(props: *mut hipDeviceProp_t, device: c_int) {
        check_device(device)?;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(props, properties()) }
    }

    fn hipDeviceGetAttribute(value: *mut c_int, attr: hipDeviceAttribute_t, device: c_int) {
        check_device(device)?;
        let answer = attribute(attr).ok_or(hipErrorInvalidValue)?;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(value, answer) }
    }

    fn hipDeviceGetName(name: *mut c_char, len: c_int, device: c_int) {
        check_device(device)?;
        if name.is_null() || len <= 0 {
            return Err(hipErrorInvalidValue);
        }
        // SAFETY: the caller provides `len` writable bytes at `name`.
        let out = unsafe { std::slice::from_raw_parts_mut(name, len as usize) };
        copy_name(out, DEVICE_NAME);
        Ok(())
    }

    fn hipDeviceTotalMem(bytes: *mut usize, device: hipDevice_t) {
        check_device(device)?;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(bytes, TOTAL_GLOBAL_MEM) }
    }

    fn hipDeviceComputeCapability(major: *mut c_int, minor: *mut c_int, device: hipDevice_t) {
        check_device(device)?;
        let p = properties();
        // SAFETY: out-pointers per the C API.
        unsafe {
            write_out(major, p.major)?;
            write_out(minor, p.minor)
        }
    }

    fn hipSetDeviceFlags(flags: c_uint) {
        runtime().device_flags = flags;
        Ok(())
    }

    fn hipGetDeviceFlags(flags: *mut c_uint) {
        let value = runtime().device_flags;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(flags, value) }
    }

    fn hipChooseDevice(device: *mut c_int, props: *const hipDeviceProp_t) {
        entry::non_null(props)?;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(device, 0) }
    }

    fn hipDeviceCanAccessPeer(can: *mut c_int, device: c_int, peer: c_int) {
        check_device(device)?;
        check_device(peer)?;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(can, 0) }
    }

    /// Work has finished when its call returned; only a kernel fault remains.
    fn hipDeviceSynchronize() {
        runtime().healthy()
    }

    /// Frees every allocation, module and handle, and clears the fault.
    fn hipDeviceReset() {
        let mut rt = runtime();
        let allocations: Vec<u64> = rt.allocations.keys().copied().collect();
        for addr in allocations {
            rt.gpu.free(addr);
        }
        rt.allocations.clear();
        rt.streams.clear();
        rt.events.clear();
        rt.sticky = None;
        Ok(())
    }

    /// Cache and shared-memory configuration have no effect on the emulator.
    fn hipDeviceSetCacheConfig(config: c_int) {
        let _ = config;
        Ok(())
    }

    fn hipDeviceGetCacheConfig(config: *mut c_int) {
        // SAFETY: out-pointer per the C API (hipFuncCachePreferNone = 0).
        unsafe { write_out(config, 0) }
    }

    fn hipDeviceSetSharedMemConfig(config: c_int) {
        let _ = config;
        Ok(())
    }

    fn hipDeviceGetSharedMemConfig(config: *mut c_int) {
        // SAFETY: out-pointer per the C API (hipSharedMemBankSizeFourByte = 1).
        unsafe { write_out(config, 1) }
    }

    fn hipDeviceGetLimit(value: *mut usize, limit: c_int) {
        // hipLimitStackSize 0, hipLimitPrintfFifoSize 1, hipLimitMallocHeapSize 2.
        let answer = match limit {
            0 => 1024,
            1 | 2 => 8 << 20,
            _ => return Err(hipErrorUnsupportedLimit),
        };
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(value, answer) }
    }

    fn hipDeviceGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) {
        // SAFETY: optional out-pointers per the C API.
        unsafe {
            if !least.is_null() {
                least.write_unaligned(0);
            }
            if !greatest.is_null() {
                greatest.write_unaligned(-1);
            }
        }
        Ok(())
    }
}

/// The thread's last error, reset to `hipSuccess`.
#[unsafe(no_mangle)]
pub extern "C" fn hipGetLastError() -> hipError_t {
    entry::last_error(true)
}

/// The thread's last error, kept.
#[unsafe(no_mangle)]
pub extern "C" fn hipPeekAtLastError() -> hipError_t {
    entry::last_error(false)
}

/// The error's name (HIP 5.2 returns the name for both functions).
#[unsafe(no_mangle)]
pub extern "C" fn hipGetErrorName(error: hipError_t) -> *const c_char {
    error_name(error).as_ptr()
}

/// As `hipGetErrorName`, which is what HIP 5.2 returns here too.
#[unsafe(no_mangle)]
pub extern "C" fn hipGetErrorString(error: hipError_t) -> *const c_char {
    error_name(error).as_ptr()
}
