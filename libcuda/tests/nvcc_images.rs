//! Images produced by nvcc 13 (PTX, fatbinaries with plain and
//! zstd-compressed PTX, SASS-only fatbinaries), loaded and run in-process
//! through the exported driver functions.

mod common;

use common::*;
use cuda::api::context::*;
use cuda::api::device::*;
use cuda::api::launch::*;
use cuda::api::memory::*;
use cuda::api::module::*;
use cuda::cu::*;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::process::Command;

const KERNEL: &str = r#"
extern "C" __global__ void twice(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 2 * x[i] + 1;
}
"#;

fn nvcc() -> Option<PathBuf> {
    let p = repo_root().join(".tools/cuda13/nvidia/cu13/bin/nvcc");
    if p.is_file() {
        Some(p)
    } else {
        missing("nvcc 13 (.tools/cuda13)")
    }
}

fn run_nvcc(nvcc: &Path, args: &[&str], source: &Path, out: &Path) -> Vec<u8> {
    let output = Command::new(nvcc)
        .args(args)
        .arg(source)
        .arg("-o")
        .arg(out)
        .output()
        .expect("run nvcc");
    assert!(
        output.status.success(),
        "nvcc {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut bytes = std::fs::read(out).unwrap();
    bytes.push(0); // PTX text must be NUL-terminated; binaries do not care.
    bytes
}

fn check(code: CUresult) {
    assert_eq!(code, CUDA_SUCCESS, "{}", cuda::error_table::name_str(code));
}

/// Loads `image`, runs `twice` over 100 ints and checks the result.
unsafe fn load_and_run(image: &[u8], via_fatbin_call: bool) {
    let mut module: CUmodule = std::ptr::null_mut();
    let code = unsafe {
        if via_fatbin_call {
            cuModuleLoadFatBinary(&mut module, image.as_ptr().cast())
        } else {
            cuModuleLoadData(&mut module, image.as_ptr().cast())
        }
    };
    check(code);
    let mut f: CUfunction = std::ptr::null_mut();
    check(unsafe { cuModuleGetFunction(&mut f, module, c"twice".as_ptr()) });
    let host: Vec<i32> = (0..100).collect();
    let mut dptr: CUdeviceptr = 0;
    check(unsafe { cuMemAlloc_v2(&mut dptr, 400) });
    check(unsafe { cuMemcpyHtoD_v2(dptr, host.as_ptr().cast(), 400) });
    let mut n = 100i32;
    let mut args = [
        &mut dptr as *mut CUdeviceptr as *mut c_void,
        &mut n as *mut i32 as *mut c_void,
    ];
    let (stream, extra) = (std::ptr::null_mut(), std::ptr::null_mut());
    check(unsafe { cuLaunchKernel(f, 4, 1, 1, 32, 1, 1, 0, stream, args.as_mut_ptr(), extra) });
    let mut out = vec![0i32; 100];
    check(unsafe { cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), dptr, 400) });
    let want: Vec<i32> = host.iter().map(|x| 2 * x + 1).collect();
    assert_eq!(out, want);
    check(unsafe { cuMemFree_v2(dptr) });
    check(unsafe { cuModuleUnload(module) });
}

#[test]
fn nvcc_ptx_and_fatbinaries_load_and_run() {
    let Some(nvcc) = nvcc() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let source = tmp.path().join("twice.cu");
    std::fs::write(&source, KERNEL).unwrap();
    let ptx = run_nvcc(
        &nvcc,
        &["-ptx", "-arch=sm_80"],
        &source,
        &tmp.path().join("t.ptx"),
    );
    let ptx_arch = "arch=compute_80,code=compute_80";
    let zstd_fatbin = run_nvcc(
        &nvcc,
        &["-fatbin", "-gencode", ptx_arch],
        &source,
        &tmp.path().join("z.fatbin"),
    );
    let plain_fatbin = run_nvcc(
        &nvcc,
        &["-fatbin", "--no-compress", "-gencode", ptx_arch],
        &source,
        &tmp.path().join("p.fatbin"),
    );
    let sass_only = run_nvcc(
        &nvcc,
        &["-fatbin", "-gencode", "arch=compute_80,code=sm_80"],
        &source,
        &tmp.path().join("s.fatbin"),
    );

    unsafe {
        check(cuInit(0));
        let mut ctx: CUcontext = std::ptr::null_mut();
        check(cuCtxCreate_v2(&mut ctx, 0, 0));
        load_and_run(&ptx, false);
        load_and_run(&zstd_fatbin, true);
        load_and_run(&zstd_fatbin, false);
        load_and_run(&plain_fatbin, true);
        let mut module: CUmodule = std::ptr::null_mut();
        assert_eq!(
            cuModuleLoadFatBinary(&mut module, sass_only.as_ptr().cast()),
            CUDA_ERROR_NO_BINARY_FOR_GPU
        );
        check(cuCtxDestroy_v2(ctx));
    }
}
