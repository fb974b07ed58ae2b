//! `cuGetProcAddress`: how the CUDA runtime (and anything else that asks)
//! finds driver functions by base name and API version.
//!
//! Each base name maps to the entry points that implement it, each tagged
//! with the CUDA version that introduced that ABI (the `vNNNN` suffix of the
//! `PFN_` typedefs in `cudaTypedefs.h`). A lookup returns the newest entry
//! not newer than the caller's `cudaVersion`; with
//! `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM` the `_ptds`/`_ptsz`
//! variants are preferred where they exist.

use super::context::*;
use super::device::*;
use super::launch::*;
use super::library::*;
use super::memory::*;
use super::memory2d::*;
use super::module::*;
use super::occupancy::*;
use super::pointer::*;
use super::pool::*;
use super::stream::*;
use crate::cu::*;
use crate::entry::{aliases, c_str, exports, non_null, write_optional, write_out};
use std::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;

/// One implementation of a driver API function.
#[derive(Debug, Clone, Copy)]
pub struct ProcEntry {
    /// The name callers ask for (`"cuMemAlloc"`).
    pub name: &'static str,
    /// The exported symbol (`"cuMemAlloc_v2"`).
    pub symbol: &'static str,
    /// The CUDA version that introduced this ABI (3020 for 3.2).
    pub version: i32,
    /// A `_ptds`/`_ptsz` (per-thread default stream) variant.
    pub per_thread: bool,
    pub address: usize,
}

/// Builds entries: `"name": version => symbol, ...;` with `ptds` marking
/// per-thread variants.
macro_rules! procs {
    ($( $name:literal : $( $(@$pt:ident)? $ver:literal => $f:ident ),+ ; )*) => {
        vec![$($(
            ProcEntry {
                name: $name,
                symbol: stringify!($f),
                version: $ver,
                per_thread: procs!(@pt $($pt)?),
                address: $f as *const () as usize,
            },
        )+)*]
    };
    (@pt ptds) => { true };
    (@pt) => { false };
}
pub(crate) use procs;

pub fn table() -> &'static [ProcEntry] {
    static TABLE: OnceLock<Vec<ProcEntry>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = procs! {
            "cuGetErrorString": 6000 => cuGetErrorString;
            "cuGetErrorName": 6000 => cuGetErrorName;
            "cuGetExportTable": 3000 => cuGetExportTable;
            "cuGetProcAddress": 11030 => cuGetProcAddress, 12000 => cuGetProcAddress_v2;
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
            "cuDevicePrimaryCtxRetain": 7000 => cuDevicePrimaryCtxRetain;
            "cuDevicePrimaryCtxRelease": 7000 => cuDevicePrimaryCtxRelease, 11000 => cuDevicePrimaryCtxRelease_v2;
            "cuDevicePrimaryCtxSetFlags": 7000 => cuDevicePrimaryCtxSetFlags, 11000 => cuDevicePrimaryCtxSetFlags_v2;
            "cuDevicePrimaryCtxGetState": 7000 => cuDevicePrimaryCtxGetState;
            "cuDevicePrimaryCtxReset": 7000 => cuDevicePrimaryCtxReset, 11000 => cuDevicePrimaryCtxReset_v2;
            "cuCtxCreate": 2000 => cuCtxCreate, 3020 => cuCtxCreate_v2, 11040 => cuCtxCreate_v3, 12050 => cuCtxCreate_v4;
            "cuCtxDestroy": 2000 => cuCtxDestroy, 4000 => cuCtxDestroy_v2;
            "cuCtxPushCurrent": 2000 => cuCtxPushCurrent, 4000 => cuCtxPushCurrent_v2;
            "cuCtxPopCurrent": 2000 => cuCtxPopCurrent, 4000 => cuCtxPopCurrent_v2;
            "cuCtxSetCurrent": 4000 => cuCtxSetCurrent;
            "cuCtxGetCurrent": 4000 => cuCtxGetCurrent;
            "cuCtxGetDevice": 2000 => cuCtxGetDevice, 13000 => cuCtxGetDevice_v2;
            "cuCtxGetFlags": 7000 => cuCtxGetFlags;
            "cuCtxGetId": 12000 => cuCtxGetId;
            "cuCtxSynchronize": 2000 => cuCtxSynchronize, 13000 => cuCtxSynchronize_v2;
            "cuCtxGetApiVersion": 3020 => cuCtxGetApiVersion;
            "cuCtxSetLimit": 3010 => cuCtxSetLimit;
            "cuCtxGetLimit": 3010 => cuCtxGetLimit;
            "cuCtxGetCacheConfig": 3020 => cuCtxGetCacheConfig;
            "cuCtxSetCacheConfig": 3020 => cuCtxSetCacheConfig;
            "cuCtxGetStreamPriorityRange": 5050 => cuCtxGetStreamPriorityRange;
            "cuModuleLoad": 2000 => cuModuleLoad;
            "cuModuleLoadData": 2000 => cuModuleLoadData;
            "cuModuleLoadDataEx": 2010 => cuModuleLoadDataEx;
            "cuModuleLoadFatBinary": 2000 => cuModuleLoadFatBinary;
            "cuModuleUnload": 2000 => cuModuleUnload;
            "cuModuleGetFunction": 2000 => cuModuleGetFunction;
            "cuModuleGetGlobal": 2000 => cuModuleGetGlobal, 3020 => cuModuleGetGlobal_v2;
            "cuModuleGetLoadingMode": 11070 => cuModuleGetLoadingMode;
            "cuLibraryLoadData": 12000 => cuLibraryLoadData;
            "cuLibraryLoadFromFile": 12000 => cuLibraryLoadFromFile;
            "cuLibraryUnload": 12000 => cuLibraryUnload;
            "cuLibraryGetModule": 12000 => cuLibraryGetModule;
            "cuLibraryGetKernel": 12000 => cuLibraryGetKernel;
            "cuLibraryGetGlobal": 12000 => cuLibraryGetGlobal;
            "cuLibraryGetManaged": 12000 => cuLibraryGetManaged;
            "cuKernelGetFunction": 12000 => cuKernelGetFunction;
            "cuKernelGetLibrary": 12050 => cuKernelGetLibrary;
            "cuKernelGetName": 12030 => cuKernelGetName;
            "cuKernelGetAttribute": 12000 => cuKernelGetAttribute;
            "cuKernelSetAttribute": 12000 => cuKernelSetAttribute;
            "cuKernelSetCacheConfig": 12000 => cuKernelSetCacheConfig;
            "cuKernelGetParamInfo": 12040 => cuKernelGetParamInfo;
            "cuLinkCreate": 5050 => cuLinkCreate, 6050 => cuLinkCreate_v2;
            "cuLinkAddData": 5050 => cuLinkAddData, 6050 => cuLinkAddData_v2;
            "cuLinkAddFile": 5050 => cuLinkAddFile, 6050 => cuLinkAddFile_v2;
            "cuLinkComplete": 5050 => cuLinkComplete;
            "cuLinkDestroy": 5050 => cuLinkDestroy;
            "cuMemGetInfo": 2000 => cuMemGetInfo, 3020 => cuMemGetInfo_v2;
            "cuMemAlloc": 2000 => cuMemAlloc, 3020 => cuMemAlloc_v2;
            "cuMemAllocPitch": 3020 => cuMemAllocPitch_v2;
            "cuMemFree": 2000 => cuMemFree, 3020 => cuMemFree_v2;
            "cuMemGetAddressRange": 2000 => cuMemGetAddressRange, 3020 => cuMemGetAddressRange_v2;
            "cuMemAllocHost": 2000 => cuMemAllocHost, 3020 => cuMemAllocHost_v2;
            "cuMemFreeHost": 2000 => cuMemFreeHost;
            "cuMemHostRegister": 4000 => cuMemHostRegister, 6050 => cuMemHostRegister_v2;
            "cuMemHostUnregister": 4000 => cuMemHostUnregister;
            "cuMemcpy2D": 3020 => cuMemcpy2D_v2, @ptds 7000 => cuMemcpy2D_v2_ptds;
            "cuMemcpy2DUnaligned": 3020 => cuMemcpy2DUnaligned_v2, @ptds 7000 => cuMemcpy2DUnaligned_v2_ptds;
            "cuMemcpy2DAsync": 3020 => cuMemcpy2DAsync_v2, @ptds 7000 => cuMemcpy2DAsync_v2_ptsz;
            "cuMemcpy3D": 3020 => cuMemcpy3D_v2, @ptds 7000 => cuMemcpy3D_v2_ptds;
            "cuMemcpy3DAsync": 3020 => cuMemcpy3DAsync_v2, @ptds 7000 => cuMemcpy3DAsync_v2_ptsz;
            "cuMemsetD2D8": 3020 => cuMemsetD2D8_v2, @ptds 7000 => cuMemsetD2D8_v2_ptds;
            "cuMemsetD2D16": 3020 => cuMemsetD2D16_v2, @ptds 7000 => cuMemsetD2D16_v2_ptds;
            "cuMemsetD2D32": 3020 => cuMemsetD2D32_v2, @ptds 7000 => cuMemsetD2D32_v2_ptds;
            "cuMemsetD2D8Async": 3020 => cuMemsetD2D8Async, @ptds 7000 => cuMemsetD2D8Async_ptsz;
            "cuMemsetD2D16Async": 3020 => cuMemsetD2D16Async, @ptds 7000 => cuMemsetD2D16Async_ptsz;
            "cuMemsetD2D32Async": 3020 => cuMemsetD2D32Async, @ptds 7000 => cuMemsetD2D32Async_ptsz;
            "cuMemHostAlloc": 2020 => cuMemHostAlloc;
            "cuMemHostGetFlags": 2030 => cuMemHostGetFlags;
            "cuMemAllocManaged": 6000 => cuMemAllocManaged;
            "cuMemHostGetDevicePointer": 2020 => cuMemHostGetDevicePointer, 3020 => cuMemHostGetDevicePointer_v2;
            "cuMemPrefetchAsync": 8000 => cuMemPrefetchAsync, 12020 => cuMemPrefetchAsync_v2, @ptds 8000 => cuMemPrefetchAsync_ptsz, @ptds 12020 => cuMemPrefetchAsync_v2_ptsz;
            "cuMemAdvise": 8000 => cuMemAdvise, 12020 => cuMemAdvise_v2;
            "cuStreamAttachMemAsync": 6000 => cuStreamAttachMemAsync, @ptds 7000 => cuStreamAttachMemAsync_ptsz;
            "cuMemRangeGetAttribute": 8000 => cuMemRangeGetAttribute;
            "cuMemRangeGetAttributes": 8000 => cuMemRangeGetAttributes;
            "cuMemAllocAsync": 11020 => cuMemAllocAsync, @ptds 11020 => cuMemAllocAsync_ptsz;
            "cuMemFreeAsync": 11020 => cuMemFreeAsync, @ptds 11020 => cuMemFreeAsync_ptsz;
            "cuMemcpy": 4000 => cuMemcpy, @ptds 7000 => cuMemcpy_ptds;
            "cuMemcpyAsync": 4000 => cuMemcpyAsync, @ptds 7000 => cuMemcpyAsync_ptsz;
            "cuMemcpyHtoD": 2000 => cuMemcpyHtoD, 3020 => cuMemcpyHtoD_v2, @ptds 7000 => cuMemcpyHtoD_v2_ptds;
            "cuMemcpyDtoH": 2000 => cuMemcpyDtoH, 3020 => cuMemcpyDtoH_v2, @ptds 7000 => cuMemcpyDtoH_v2_ptds;
            "cuMemcpyDtoD": 2000 => cuMemcpyDtoD, 3020 => cuMemcpyDtoD_v2, @ptds 7000 => cuMemcpyDtoD_v2_ptds;
            "cuMemcpyHtoDAsync": 2000 => cuMemcpyHtoDAsync, 3020 => cuMemcpyHtoDAsync_v2, @ptds 7000 => cuMemcpyHtoDAsync_v2_ptsz;
            "cuMemcpyDtoHAsync": 2000 => cuMemcpyDtoHAsync, 3020 => cuMemcpyDtoHAsync_v2, @ptds 7000 => cuMemcpyDtoHAsync_v2_ptsz;
            "cuMemcpyDtoDAsync": 3000 => cuMemcpyDtoDAsync, 3020 => cuMemcpyDtoDAsync_v2, @ptds 7000 => cuMemcpyDtoDAsync_v2_ptsz;
            "cuMemsetD8": 2000 => cuMemsetD8, 3020 => cuMemsetD8_v2, @ptds 7000 => cuMemsetD8_v2_ptds;
            "cuMemsetD16": 2000 => cuMemsetD16, 3020 => cuMemsetD16_v2, @ptds 7000 => cuMemsetD16_v2_ptds;
            "cuMemsetD32": 2000 => cuMemsetD32, 3020 => cuMemsetD32_v2, @ptds 7000 => cuMemsetD32_v2_ptds;
            "cuMemsetD8Async": 3020 => cuMemsetD8Async, @ptds 7000 => cuMemsetD8Async_ptsz;
            "cuMemsetD16Async": 3020 => cuMemsetD16Async, @ptds 7000 => cuMemsetD16Async_ptsz;
            "cuMemsetD32Async": 3020 => cuMemsetD32Async, @ptds 7000 => cuMemsetD32Async_ptsz;
            "cuStreamCreate": 2000 => cuStreamCreate;
            "cuStreamCreateWithPriority": 5050 => cuStreamCreateWithPriority;
            "cuStreamGetPriority": 5050 => cuStreamGetPriority, @ptds 7000 => cuStreamGetPriority_ptsz;
            "cuStreamGetFlags": 5050 => cuStreamGetFlags, @ptds 7000 => cuStreamGetFlags_ptsz;
            "cuStreamGetCtx": 9020 => cuStreamGetCtx, 12050 => cuStreamGetCtx_v2,
                @ptds 9020 => cuStreamGetCtx_ptsz, @ptds 12050 => cuStreamGetCtx_v2_ptsz;
            "cuStreamWaitEvent": 3020 => cuStreamWaitEvent, @ptds 7000 => cuStreamWaitEvent_ptsz;
            "cuStreamQuery": 2000 => cuStreamQuery, @ptds 7000 => cuStreamQuery_ptsz;
            "cuStreamIsCapturing": 10000 => cuStreamIsCapturing, @ptds 10000 => cuStreamIsCapturing_ptsz;
            "cuStreamSynchronize": 2000 => cuStreamSynchronize, @ptds 7000 => cuStreamSynchronize_ptsz;
            "cuStreamDestroy": 2000 => cuStreamDestroy, 4000 => cuStreamDestroy_v2;
            "cuLaunchHostFunc": 10000 => cuLaunchHostFunc, @ptds 10000 => cuLaunchHostFunc_ptsz;
            "cuStreamAddCallback": 5000 => cuStreamAddCallback, @ptds 7000 => cuStreamAddCallback_ptsz;
            "cuEventCreate": 2000 => cuEventCreate;
            "cuEventRecord": 2000 => cuEventRecord, @ptds 7000 => cuEventRecord_ptsz;
            "cuEventRecordWithFlags": 11010 => cuEventRecordWithFlags, @ptds 11010 => cuEventRecordWithFlags_ptsz;
            "cuEventQuery": 2000 => cuEventQuery;
            "cuEventSynchronize": 2000 => cuEventSynchronize;
            "cuEventDestroy": 2000 => cuEventDestroy, 4000 => cuEventDestroy_v2;
            "cuEventElapsedTime": 2000 => cuEventElapsedTime, 12080 => cuEventElapsedTime_v2;
            "cuFuncGetAttribute": 2020 => cuFuncGetAttribute;
            "cuFuncSetAttribute": 9000 => cuFuncSetAttribute;
            "cuFuncSetCacheConfig": 3000 => cuFuncSetCacheConfig;
            "cuFuncGetModule": 11000 => cuFuncGetModule;
            "cuFuncGetName": 12030 => cuFuncGetName;
            "cuFuncGetParamInfo": 12040 => cuFuncGetParamInfo;
            "cuPointerGetAttribute": 4000 => cuPointerGetAttribute;
            "cuPointerGetAttributes": 7000 => cuPointerGetAttributes;
            "cuOccupancyMaxActiveBlocksPerMultiprocessor": 6050 => cuOccupancyMaxActiveBlocksPerMultiprocessor;
            "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags": 7000 => cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags;
            "cuOccupancyMaxPotentialBlockSize": 6050 => cuOccupancyMaxPotentialBlockSize;
            "cuOccupancyMaxPotentialBlockSizeWithFlags": 7000 => cuOccupancyMaxPotentialBlockSizeWithFlags;
            "cuOccupancyAvailableDynamicSMemPerBlock": 10020 => cuOccupancyAvailableDynamicSMemPerBlock;
            "cuLaunchKernel": 4000 => cuLaunchKernel, @ptds 7000 => cuLaunchKernel_ptsz;
            "cuLaunchCooperativeKernel": 9000 => cuLaunchCooperativeKernel, @ptds 9000 => cuLaunchCooperativeKernel_ptsz;
            "cuLaunchKernelEx": 11060 => cuLaunchKernelEx, @ptds 11060 => cuLaunchKernelEx_ptsz;
        };
        // The rest of `cuda.h`, refused with CUDA_ERROR_NOT_SUPPORTED.
        table.extend(super::peer::entries());
        table.extend(super::vmm::entries());
        table.extend(super::pool::entries());
        table.extend(super::ipc::entries());
        table.extend(super::graph::entries());
        table.extend(super::array::entries());
        table.extend(super::logs::entries());
        table.extend(super::profiler::entries());
        table.extend(super::unsupported::entries());
        table
    })
}

/// Why a lookup failed (`CUdriverProcAddressQueryResult`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupError {
    SymbolNotFound,
    VersionNotSufficient,
}

/// The entry a `cuGetProcAddress(symbol, cuda_version, flags)` call returns.
pub fn lookup(
    symbol: &str,
    cuda_version: i32,
    flags: u64,
) -> Result<&'static ProcEntry, LookupError> {
    let table = table();
    let candidates: Vec<&ProcEntry> = table.iter().filter(|e| e.name == symbol).collect();
    if candidates.is_empty() {
        // Exported names (`cuMemAlloc_v2`) resolve to themselves.
        return table
            .iter()
            .find(|e| e.symbol == symbol)
            .ok_or(LookupError::SymbolNotFound);
    }
    let newest = |per_thread: bool| {
        candidates
            .iter()
            .filter(|e| e.per_thread == per_thread && e.version <= cuda_version)
            .max_by_key(|e| e.version)
            .copied()
    };
    let chosen = if flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM != 0 {
        newest(true).or_else(|| newest(false))
    } else {
        newest(false)
    };
    chosen.ok_or(LookupError::VersionNotSufficient)
}

/// `PRLX_LIBCUDA_TRACE=1` reports lookups of functions this library lacks,
/// which is how to find out what a runtime or framework needs.
fn trace_enabled() -> bool {
    crate::entry::trace_enabled()
}

/// # Safety
/// `symbol` must be NULL or NUL-terminated; `pfn`/`status` NULL or writable.
unsafe fn get_proc_address(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    cuda_version: c_int,
    flags: u64,
    status: *mut c_int,
) -> Result<(), CUresult> {
    non_null(pfn)?;
    let name = unsafe { c_str(symbol) }?;
    if flags > (CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    match lookup(name, cuda_version, flags) {
        Ok(entry) => unsafe {
            write_optional(status, CU_GET_PROC_ADDRESS_SUCCESS);
            write_out(pfn, entry.address as *mut c_void)
        },
        Err(e) => {
            if trace_enabled() {
                eprintln!(
                    "prlx libcuda: cuGetProcAddress({name:?}, {cuda_version}, {flags}): {e:?}"
                );
            }
            let code = match e {
                LookupError::SymbolNotFound => CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
                LookupError::VersionNotSufficient => CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT,
            };
            unsafe {
                write_optional(status, code);
                write_out(pfn, std::ptr::null_mut())?;
            }
            Err(CUDA_ERROR_NOT_FOUND)
        }
    }
}

exports! {
    /// CUDA 11.3's form, without the status out-parameter.
    fn cuGetProcAddress(symbol: *const c_char, pfn: *mut *mut c_void, cuda_version: c_int, flags: u64) {
        unsafe { get_proc_address(symbol, pfn, cuda_version, flags, std::ptr::null_mut()) }
    }

    fn cuGetProcAddress_v2(
        symbol: *const c_char,
        pfn: *mut *mut c_void,
        cuda_version: c_int,
        flags: u64,
        symbol_status: *mut c_int,
    ) {
        unsafe { get_proc_address(symbol, pfn, cuda_version, flags, symbol_status) }
    }
}

aliases! {
    cuGetProcAddress_v2_ptsz = cuGetProcAddress_v2(
        symbol: *const c_char,
        pfn: *mut *mut c_void,
        cuda_version: c_int,
        flags: u64,
        symbol_status: *mut c_int,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_select_the_matching_abi() {
        assert_eq!(
            lookup("cuMemAlloc", 12090, 0).unwrap().symbol,
            "cuMemAlloc_v2"
        );
        assert_eq!(
            lookup("cuMemAlloc", 3020, 0).unwrap().symbol,
            "cuMemAlloc_v2"
        );
        assert_eq!(lookup("cuMemAlloc", 3010, 0).unwrap().symbol, "cuMemAlloc");
        assert_eq!(
            lookup("cuCtxCreate", 11040, 0).unwrap().symbol,
            "cuCtxCreate_v3"
        );
        assert_eq!(
            lookup("cuCtxCreate", 12090, 0).unwrap().symbol,
            "cuCtxCreate_v4"
        );
        assert_eq!(
            lookup("cuCtxCreate", 4000, 0).unwrap().symbol,
            "cuCtxCreate_v2"
        );
        assert_eq!(
            lookup("cuGetProcAddress", 12000, 0).unwrap().symbol,
            "cuGetProcAddress_v2"
        );
        assert_eq!(
            lookup("cuGetProcAddress", 11080, 0).unwrap().symbol,
            "cuGetProcAddress"
        );
        assert_eq!(
            lookup("cuCtxSynchronize", 12090, 0).unwrap().symbol,
            "cuCtxSynchronize"
        );
        assert_eq!(
            lookup("cuCtxSynchronize", 13000, 0).unwrap().symbol,
            "cuCtxSynchronize_v2"
        );
    }

    #[test]
    fn per_thread_flag_prefers_ptds_variants() {
        let pt = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
        assert_eq!(
            lookup("cuMemcpyHtoD", 12000, pt).unwrap().symbol,
            "cuMemcpyHtoD_v2_ptds"
        );
        assert_eq!(
            lookup("cuMemcpyHtoD", 12000, 0).unwrap().symbol,
            "cuMemcpyHtoD_v2"
        );
        assert_eq!(
            lookup("cuLaunchKernel", 12000, pt).unwrap().symbol,
            "cuLaunchKernel_ptsz"
        );
        assert_eq!(
            lookup("cuMemAlloc", 12000, pt).unwrap().symbol,
            "cuMemAlloc_v2"
        );
        // Before per-thread streams existed, the legacy entry is returned.
        assert_eq!(
            lookup("cuLaunchKernel", 6050, pt).unwrap().symbol,
            "cuLaunchKernel"
        );
    }

    #[test]
    fn unknown_symbols_and_old_versions_fail() {
        assert_eq!(
            lookup("cuNoSuchThing", 12090, 0).err(),
            Some(LookupError::SymbolNotFound)
        );
        assert_eq!(
            lookup("cuLaunchKernelEx", 11000, 0).err(),
            Some(LookupError::VersionNotSufficient)
        );
        assert_eq!(
            lookup("cuMemAlloc_v2", 12090, 0).unwrap().symbol,
            "cuMemAlloc_v2"
        );
    }

    #[test]
    fn every_name_has_distinct_versions_per_variant() {
        let t = table();
        for (i, a) in t.iter().enumerate() {
            for b in &t[i + 1..] {
                assert!(
                    !(a.name == b.name && a.version == b.version && a.per_thread == b.per_thread),
                    "{} listed twice at {}",
                    a.name,
                    a.version
                );
            }
        }
    }

    #[test]
    fn ffi_lookup_writes_status_and_clears_pfn_on_failure() {
        let mut pfn = std::ptr::dangling_mut::<c_void>();
        let mut status = -1;
        let r =
            unsafe { cuGetProcAddress_v2(c"cuNoSuch".as_ptr(), &mut pfn, 12090, 0, &mut status) };
        assert_eq!(r, CUDA_ERROR_NOT_FOUND);
        assert!(pfn.is_null());
        assert_eq!(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
        let r = unsafe { cuGetProcAddress_v2(c"cuInit".as_ptr(), &mut pfn, 12090, 0, &mut status) };
        assert_eq!(r, CUDA_SUCCESS);
        assert_eq!(pfn as usize, cuInit as *const () as usize);
        assert_eq!(status, CU_GET_PROC_ADDRESS_SUCCESS);
    }
}
