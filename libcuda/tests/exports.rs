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

/// The link-time names a program built against `header` can reference:
/// every `CUresult CUDAAPI cuX(` declaration (the legacy unversioned ones
/// included: `cuda.h` declares them too, for the driver's own build), with the
/// `#define cuX cuX_vN` renames applied, and `__CUDA_API_PTDS(cuX)` /
/// `__CUDA_API_PTSZ(cuX)` expanded as `cuda.h` expands them with
/// (`cuX_ptds`/`cuX_ptsz`) or without (`cuX`) `per_thread_default_stream`,
/// i.e. `-DCUDA_API_PER_THREAD_DEFAULT_STREAM`.
fn link_names(header: &Path, per_thread_default_stream: bool) -> BTreeSet<String> {
    let text = std::fs::read_to_string(header).unwrap();
    let mut out = BTreeSet::new();
    let identifier = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    // Declarations, possibly split over lines after the return type.
    let words: Vec<&str> = text.split_whitespace().collect();
    for pair in words.windows(3) {
        if pair[0] == "CUresult" && pair[1] == "CUDAAPI" && pair[2].starts_with("cu") {
            out.insert(identifier(pair[2]));
        }
    }
    for line in text.lines() {
        let Some(directive) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let mut words = directive.split_whitespace();
        if words.next() != Some("define") {
            continue;
        }
        let (Some(name), Some(target), None) = (words.next(), words.next(), words.next()) else {
            continue;
        };
        if !name.starts_with("cu") {
            continue;
        }
        let per_thread = [("__CUDA_API_PTDS(", "_ptds"), ("__CUDA_API_PTSZ(", "_ptsz")];
        let target = match per_thread.iter().find(|(m, _)| target.starts_with(m)) {
            Some((m, suffix)) => {
                let inner = target[m.len()..].trim_end_matches(')');
                if per_thread_default_stream {
                    format!("{inner}{suffix}")
                } else {
                    inner.to_string()
                }
            }
            None if target.starts_with("cu") => target.to_string(),
            None => continue,
        };
        out.insert(target);
    }
    out
}

/// Both modes of both headers (CUDA 13's when installed).
fn all_link_names() -> Option<BTreeSet<String>> {
    let include12 = cuda12_include()?;
    let mut headers = vec![include12.join("cuda.h")];
    headers.extend(cuda13_include().map(|i| i.join("cuda.h")));
    let mut names = BTreeSet::new();
    for header in &headers {
        names.extend(link_names(header, false));
        names.extend(link_names(header, true));
    }
    Some(names)
}

/// The driver functions of `cudaProfiler.h`, from the `PFN_` typedefs of
/// `cudaProfilerTypedefs.h` (the wheels ship no `cudaProfiler.h`).
fn profiler_names() -> BTreeSet<String> {
    let Some(include12) = cuda12_include() else {
        return BTreeSet::new();
    };
    let text = std::fs::read_to_string(include12.join("cudaProfilerTypedefs.h"))
        .expect("read cudaProfilerTypedefs.h");
    text.split("PFN_")
        .skip(1)
        .filter_map(|rest| rest.split("_v").next())
        .filter(|name| name.starts_with("cu") && name.chars().all(|c| c.is_ascii_alphanumeric()))
        .map(String::from)
        .collect()
}

fn exported_functions() -> BTreeSet<String> {
    read_dynamic(&libcuda_dir().join("libcuda.so"))
        .defined_functions
        .into_iter()
        .collect()
}

#[test]
fn header_parsing_applies_the_defines_per_mode() {
    let Some(include12) = cuda12_include() else {
        return;
    };
    let plain = link_names(&include12.join("cuda.h"), false);
    let per_thread = link_names(&include12.join("cuda.h"), true);
    for name in [
        "cuMemAlloc",
        "cuMemAlloc_v2",
        "cuMemcpyHtoD_v2",
        "cuArrayCreate_v2",
    ] {
        assert!(plain.contains(name) && per_thread.contains(name), "{name}");
    }
    assert!(per_thread.contains("cuMemcpyHtoD_v2_ptds") && !plain.contains("cuMemcpyHtoD_v2_ptds"));
    assert!(per_thread.contains("cuLaunchKernel_ptsz") && !plain.contains("cuLaunchKernel_ptsz"));
    // `#define cuGraphInstantiate cuGraphInstantiateWithFlags`.
    assert!(plain.contains("cuGraphInstantiateWithFlags"));
    assert!(
        plain
            .iter()
            .all(|n| n.starts_with("cu") && !n.contains('('))
    );
    assert!(plain.len() > 500, "only {} names parsed", plain.len());
}

#[test]
fn every_cuda_h_entry_point_is_exported() {
    let Some(mut required) = all_link_names() else {
        return;
    };
    required.extend(REQUIRED.iter().map(|s| s.to_string()));
    let exported = exported_functions();
    let missing: Vec<&String> = required.difference(&exported).collect();
    assert!(missing.is_empty(), "not exported: {missing:?}");
    // Nothing beyond cuda.h is exported under a cu name, but for the
    // profiler control API of cudaProfiler.h (cudaProfilerStart reaches it).
    let profiler = profiler_names();
    let extra: Vec<&String> = exported
        .iter()
        .filter(|n| n.starts_with("cu"))
        .filter(|n| !required.contains(*n) && !profiler.contains(*n))
        .collect();
    assert!(extra.is_empty(), "exported but not in cuda.h: {extra:?}");
    for name in ["cuProfilerStart", "cuProfilerStop"] {
        assert!(exported.contains(name), "{name} not exported");
    }
    // The functions the driver API programs need are implemented, not refused.
    let refused: BTreeSet<&str> = cuda::api::unsupported::entries()
        .iter()
        .map(|e| e.symbol)
        .collect();
    for name in REQUIRED {
        assert!(!refused.contains(name), "{name} is required but refused");
    }
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
        "cuArrayCreate_v2",
        "cuGraphLaunch_ptsz",
        "cuTexRefSetAddress2D_v3",
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
    typedefs.push_str(&std::fs::read_to_string(include12.join("cudaProfilerTypedefs.h")).unwrap());
    if let Some(include13) = cuda13_include() {
        typedefs.push_str(&std::fs::read_to_string(include13.join("cudaTypedefs.h")).unwrap());
    }
    let exported = exported_functions();
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
        // As a caller newer than every entry asks.
        let entry = cuda::api::proc_address::lookup(name, i32::MAX, flags)
            .unwrap_or_else(|e| panic!("lookup of {name} failed: {e:?}"));
        assert!(
            name.starts_with(entry.name),
            "{name} resolved to {}",
            entry.symbol
        );
    }
}

#[test]
fn refused_entry_points_return_not_supported_through_dlsym() {
    let lib_dir = libcuda_dir();
    let path = std::ffi::CString::new(lib_dir.join("libcuda.so").to_str().unwrap()).unwrap();
    // SAFETY: a valid path; loading our own library runs no foreign constructors.
    let lib = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    assert!(!lib.is_null(), "dlopen {}", path.to_string_lossy());
    let symbol = |name: &str| {
        let c = std::ffi::CString::new(name).unwrap();
        // SAFETY: `lib` is a live handle, `c` NUL-terminated.
        let p = unsafe { libc::dlsym(lib, c.as_ptr()) };
        assert!(!p.is_null(), "dlsym {name}");
        p
    };
    type Ptr = *mut std::ffi::c_void;
    // Called through their cuda.h prototypes, with the arguments a caller passes.
    // SAFETY: each symbol is an `extern "C"` function returning CUresult that
    // ignores its arguments (see `api::unsupported`'s ABI note).
    unsafe {
        let sparse_properties: extern "C" fn(*mut u8, Ptr) -> i32 =
            std::mem::transmute(symbol("cuArrayGetSparseProperties"));
        let mut properties = [0u8; 48];
        let array: Ptr = std::ptr::null_mut();
        assert_eq!(sparse_properties(properties.as_mut_ptr(), array), 801);
        let map_array: extern "C" fn(Ptr, u32, Ptr) -> i32 =
            std::mem::transmute(symbol("cuMemMapArrayAsync"));
        assert_eq!(
            map_array(std::ptr::null_mut(), 1, std::ptr::null_mut()),
            801
        );
        let wait_value: extern "C" fn(Ptr, u64, u32, u32) -> i32 =
            std::mem::transmute(symbol("cuStreamWaitValue32_v2_ptsz"));
        assert_eq!(wait_value(std::ptr::null_mut(), 0x1000, 1, 0), 801);
        let no_args: extern "C" fn() -> i32 =
            std::mem::transmute(symbol("cuCtxResetPersistingL2Cache"));
        assert_eq!(no_args(), 801);
        // Implemented functions are not refused.
        let init: extern "C" fn(u32) -> i32 = std::mem::transmute(symbol("cuInit"));
        assert_eq!(init(0), 0);
    }
    // cuGetProcAddress hands out the same entry points.
    for (name, symbol_name) in [
        ("cuMemMap", "cuMemMap"),
        ("cuArrayCreate", "cuArrayCreate_v2"),
    ] {
        let entry = cuda::api::proc_address::lookup(name, 12090, 0).unwrap();
        assert_eq!(entry.symbol, symbol_name);
    }
}

#[test]
fn a_c_program_dlsyms_every_cuda_h_name_and_is_refused_cleanly() {
    let (Some(cc), Some(variants), Some(names)) = (tool("cc"), header_variants(), all_link_names())
    else {
        return;
    };
    let lib_dir = libcuda_dir();
    let tmp = tempfile::tempdir().unwrap();
    let names_file = tmp.path().join("names.txt");
    let list: Vec<&str> = names.iter().map(String::as_str).collect();
    std::fs::write(&names_file, list.join("\n")).unwrap();
    let source = repo_root().join("tests/driver-api/dlsym_all.c");
    for (i, header) in variants.iter().enumerate() {
        let program = tmp.path().join(format!("dlsym_all_{i}"));
        compile_c(&cc, header, &lib_dir, &source, &program);
        let run = run_with_libcuda(&program, &[&names_file], &lib_dir);
        let context = format!(
            "{}\nstdout:\n{}\nstderr:\n{}",
            header.label, run.stdout, run.stderr
        );
        assert_eq!(run.code, Some(0), "{context}");
        let summary = format!("dlsym: {} found, 0 missing", names.len());
        assert!(run.stdout.contains(&summary), "{context}");
        let per_thread = header
            .defines
            .contains(&"-DCUDA_API_PER_THREAD_DEFAULT_STREAM");
        let signal = if per_thread {
            "cuSignalExternalSemaphoresAsync_ptsz"
        } else {
            "cuSignalExternalSemaphoresAsync"
        };
        // Each refused function is named once, though called twice.
        for name in ["cuGraphicsUnregisterResource", signal, "cuMulticastCreate"] {
            let line = format!("prlx libcuda: {name} is not implemented");
            assert_eq!(run.stderr.matches(&line).count(), 1, "{name}: {context}");
        }
        assert_eq!(run.stderr.matches("prlx libcuda:").count(), 3, "{context}");
    }
}
