//! The library exports every entry point `cuda.h` (CUDA 12.9 and 13) maps the
//! driver functions we implement to, and `cuGetProcAddress`'s table agrees
//! with the `PFN_` typedefs of `cudaTypedefs.h`.

mod common;

use common::*;
use std::collections::BTreeSet;
use std::path::Path;

/// The functions the issue and the task require, by base name.
const REQUIRED: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGet",
    "cuDeviceGetCount",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDeviceTotalMem",
    "cuDeviceComputeCapability",
    "cuDeviceGetUuid",
    "cuDeviceGetProperties",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease",
    "cuDevicePrimaryCtxReset",
    "cuDevicePrimaryCtxGetState",
    "cuDevicePrimaryCtxSetFlags",
    "cuCtxCreate",
    "cuCtxDestroy",
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuCtxPushCurrent",
    "cuCtxPopCurrent",
    "cuCtxSynchronize",
    "cuCtxGetDevice",
    "cuCtxGetApiVersion",
    "cuModuleLoad",
    "cuModuleLoadData",
    "cuModuleLoadDataEx",
    "cuModuleLoadFatBinary",
    "cuModuleUnload",
    "cuModuleGetFunction",
    "cuModuleGetGlobal",
    "cuLinkCreate",
    "cuLinkAddData",
    "cuLinkAddFile",
    "cuLinkComplete",
    "cuLinkDestroy",
    "cuMemAlloc",
    "cuMemFree",
    "cuMemAllocHost",
    "cuMemFreeHost",
    "cuMemHostAlloc",
    "cuMemGetInfo",
    "cuMemGetAddressRange",
    "cuMemcpyHtoD",
    "cuMemcpyDtoH",
    "cuMemcpyDtoD",
    "cuMemcpy",
    "cuMemcpyHtoDAsync",
    "cuMemcpyDtoHAsync",
    "cuMemcpyDtoDAsync",
    "cuMemcpyAsync",
    "cuMemsetD8",
    "cuMemsetD16",
    "cuMemsetD32",
    "cuMemsetD8Async",
    "cuMemsetD16Async",
    "cuMemsetD32Async",
    "cuStreamCreate",
    "cuStreamCreateWithPriority",
    "cuStreamDestroy",
    "cuStreamSynchronize",
    "cuStreamQuery",
    "cuStreamWaitEvent",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventQuery",
    "cuEventElapsedTime",
    "cuEventDestroy",
    "cuFuncGetAttribute",
    "cuFuncSetAttribute",
    "cuFuncSetCacheConfig",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "cuGetErrorName",
    "cuGetErrorString",
    "cuGetProcAddress",
    "cuGetExportTable",
];

fn strip_version(name: &str) -> &str {
    match name.rsplit_once("_v") {
        Some((base, v)) if !v.is_empty() && v.bytes().all(|c| c.is_ascii_digit()) => base,
        _ => name,
    }
}

/// Every symbol a header's `#define cuX target` lines ask for, for the
/// required base names: the legacy name itself, the versioned target, and
/// `_ptds`/`_ptsz` forms of `__CUDA_API_PTDS(..)`/`__CUDA_API_PTSZ(..)`.
fn symbols_from_header(header: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(header).unwrap();
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("#define") {
            continue;
        }
        let (Some(name), Some(target), None) = (words.next(), words.next(), words.next()) else {
            continue;
        };
        if !name.starts_with("cu") || !REQUIRED.contains(&strip_version(name)) {
            continue;
        }
        out.insert(name.to_string());
        let per_thread = [("__CUDA_API_PTDS(", "_ptds"), ("__CUDA_API_PTSZ(", "_ptsz")];
        match per_thread.iter().find(|(m, _)| target.starts_with(m)) {
            Some((m, suffix)) => {
                let inner = target[m.len()..].trim_end_matches(')');
                out.insert(inner.to_string());
                out.insert(format!("{inner}{suffix}"));
            }
            None if target.starts_with("cu") => {
                out.insert(target.to_string());
            }
            None => {}
        }
    }
    out
}

#[test]
fn every_required_entry_point_is_exported() {
    let Some(include12) = cuda12_include() else {
        return;
    };
    let mut required: BTreeSet<String> = REQUIRED.iter().map(|s| s.to_string()).collect();
    let from12 = symbols_from_header(&include12.join("cuda.h"));
    assert!(from12.contains("cuMemAlloc_v2") && from12.contains("cuMemcpyHtoD_v2_ptds"));
    required.extend(from12);
    if let Some(include13) = cuda13_include() {
        let from13 = symbols_from_header(&include13.join("cuda.h"));
        assert!(from13.contains("cuCtxCreate_v4"));
        required.extend(from13);
    }
    let exported: BTreeSet<String> = read_dynamic(&libcuda_dir().join("libcuda.so"))
        .defined_functions
        .into_iter()
        .collect();
    let missing: Vec<&String> = required.difference(&exported).collect();
    assert!(missing.is_empty(), "not exported: {missing:?}");
    // Spot checks of names the task lists explicitly.
    for name in [
        "cuCtxCreate",
        "cuCtxCreate_v2",
        "cuCtxCreate_v3",
        "cuCtxCreate_v4",
        "cuMemAlloc",
        "cuMemAlloc_v2",
        "cuMemcpyHtoD_v2",
        "cuModuleGetGlobal_v2",
        "cuMemGetInfo_v2",
        "cuDevicePrimaryCtxRelease_v2",
        "cuCtxDestroy_v2",
        "cuStreamDestroy_v2",
        "cuEventDestroy_v2",
        "cuLinkCreate_v2",
        "cuLinkAddData_v2",
        "cuGetProcAddress",
        "cuGetProcAddress_v2",
    ] {
        assert!(exported.contains(name), "{name} not exported");
    }
}

#[test]
fn proc_address_table_matches_cuda_typedefs() {
    let Some(include12) = cuda12_include() else {
        return;
    };
    let mut typedefs = std::fs::read_to_string(include12.join("cudaTypedefs.h")).unwrap();
    if let Some(include13) = cuda13_include() {
        typedefs.push_str(&std::fs::read_to_string(include13.join("cudaTypedefs.h")).unwrap());
    }
    let exported: BTreeSet<String> = read_dynamic(&libcuda_dir().join("libcuda.so"))
        .defined_functions
        .into_iter()
        .collect();
    for e in cuda::api::proc_address::table() {
        let suffix = if !e.per_thread {
            ""
        } else if e.symbol.ends_with("_ptds") {
            "_ptds"
        } else {
            "_ptsz"
        };
        let pfn = format!("PFN_{}_v{}{suffix})", e.name, e.version);
        assert!(
            typedefs.contains(&pfn),
            "{} at version {} ({}) has no {pfn} typedef",
            e.name,
            e.version,
            e.symbol
        );
        assert!(
            exported.contains(e.symbol),
            "{} is in the table but not exported",
            e.symbol
        );
    }
}

#[test]
fn every_export_is_reachable_through_cu_get_proc_address() {
    let exported = read_dynamic(&libcuda_dir().join("libcuda.so")).defined_functions;
    let table = cuda::api::proc_address::table();
    for name in exported.iter().filter(|n| n.starts_with("cu")) {
        // A link-time alias only: cudaTypedefs.h has no PFN type for it.
        if name == "cuGetProcAddress_v2_ptsz" {
            continue;
        }
        assert!(
            table.iter().any(|e| e.symbol == *name),
            "{name} is exported but cuGetProcAddress cannot return it"
        );
        let per_thread = name.ends_with("_ptds") || name.ends_with("_ptsz");
        let flags = if per_thread { 2 } else { 0 };
        let entry = cuda::api::proc_address::lookup(name, 13000, flags)
            .unwrap_or_else(|e| panic!("lookup of {name} failed: {e:?}"));
        assert!(
            name.starts_with(entry.name),
            "{name} resolved to {}",
            entry.symbol
        );
    }
}
