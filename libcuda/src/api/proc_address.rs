//! `cuGetProcAddress`: how the CUDA runtime (and anything else that asks)
//! finds driver functions by base name and API version.
//!
//! Each base name maps to the entry points that implement it, each tagged
//! with the CUDA version that introduced that ABI (the `vNNNN` suffix of the
//! `PFN_` typedefs in `cudaTypedefs.h`). A lookup returns the newest entry
//! not newer than the caller's `cudaVersion`; with
//! `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM` the `_ptds`/`_ptsz`
//! variants are preferred where they exist.

use crate::cu::*;
use crate::entry::{
    ProcEntry, aliases, c_str, exports, non_null, procs, write_optional, write_out,
};
use std::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;

/// Every API module's `entries()`: each module lists the entry points it
/// exports; this module only collects them. `unsupported` (the rest of
/// `cuda.h`, refused with `CUDA_ERROR_NOT_SUPPORTED`) comes last.
const MODULES: &[fn() -> Vec<ProcEntry>] = &[
    super::device::entries,
    super::context::entries,
    super::module::entries,
    super::library::entries,
    super::memory::entries,
    super::memory2d::entries,
    super::stream::entries,
    super::pointer::entries,
    super::occupancy::entries,
    super::launch::entries,
    super::peer::entries,
    super::vmm::entries,
    super::pool::entries,
    super::ipc::entries,
    super::graph::entries,
    super::array::entries,
    super::texture::entries,
    super::surface::entries,
    super::export_table::entries,
    super::logs::entries,
    super::profiler::entries,
    super::unsupported::entries,
];

/// The whole `cuGetProcAddress` table.
pub fn table() -> &'static [ProcEntry] {
    static TABLE: OnceLock<Vec<ProcEntry>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = procs! {
            "cuGetProcAddress": 11030 => cuGetProcAddress, 12000 => cuGetProcAddress_v2;
        };
        for entries in MODULES {
            table.extend(entries());
        }
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
    // SAFETY: `symbol` is NULL or valid by `get_proc_address`'s `# Safety` contract (a NUL-terminated
    // string); `c_str` refuses NULL.
    let name = unsafe { c_str(symbol) }?;
    if flags > (CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    match lookup(name, cuda_version, flags) {
        // SAFETY: `status` and `pfn` are NULL or writable by this function's `# Safety` contract;
        // `write_optional` skips a NULL `status`, `write_out` refuses a NULL `pfn`.
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
            // SAFETY: `status` and `pfn` are NULL or writable by this function's `# Safety` contract;
            // `write_optional` skips a NULL `status`, `write_out` refuses a NULL `pfn`.
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
        // SAFETY: `symbol` (NUL-terminated) and `pfn` (writable) are the caller's, as cuda.h specifies;
        // NULL for `status` is allowed.
        unsafe { get_proc_address(symbol, pfn, cuda_version, flags, std::ptr::null_mut()) }
    }

    fn cuGetProcAddress_v2(
        symbol: *const c_char,
        pfn: *mut *mut c_void,
        cuda_version: c_int,
        flags: u64,
        symbol_status: *mut c_int,
    ) {
        // SAFETY: `symbol` (NUL-terminated), `pfn` and `symbol_status` (NULL or writable) are the caller's,
        // as cuda.h specifies, which is `get_proc_address`'s contract.
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
    use crate::api::device::cuInit;

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
            // SAFETY: a static C string and two live locals.
            unsafe { cuGetProcAddress_v2(c"cuNoSuch".as_ptr(), &mut pfn, 12090, 0, &mut status) };
        assert_eq!(r, CUDA_ERROR_NOT_FOUND);
        assert!(pfn.is_null());
        assert_eq!(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
        // SAFETY: a static C string and two live locals.
        let r = unsafe { cuGetProcAddress_v2(c"cuInit".as_ptr(), &mut pfn, 12090, 0, &mut status) };
        assert_eq!(r, CUDA_SUCCESS);
        assert_eq!(pfn as usize, cuInit as *const () as usize);
        assert_eq!(status, CU_GET_PROC_ADDRESS_SUCCESS);
    }
}
