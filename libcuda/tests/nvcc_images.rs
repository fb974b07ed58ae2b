//! Images produced by nvcc 13 (PTX, fatbinaries with plain, zstd- and
//! LZ4-compressed PTX, several architectures, a fatbinary wrapper,
//! SASS-only fatbinaries), loaded and run in-process through the exported
//! driver functions; the same fatbinaries mangled byte by byte; the
//! runtime's export tables and unknown table ids.

mod common;

use common::*;
use cuda::api::context::*;
use cuda::api::device::*;
use cuda::api::export_table::cuGetExportTable;
use cuda::api::launch::*;
use cuda::api::memory::*;
use cuda::api::module::*;
use cuda::cu::*;
use std::ffi::{CStr, CString, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;

const KERNEL: &str = r#"
extern "C" {
__device__ int table[4] = {5, 6, 7, 8};
}
extern "C" __global__ void fill_table(int v) { table[threadIdx.x % 4] = v; }
// Internal linkage: a local symbol in the cubin, looked up all the same.
namespace {
__global__ void hidden(int *x) { x[threadIdx.x] = 7; }
}
void launch_hidden(int *x) { hidden<<<1, 1>>>(x); }
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
    // SAFETY: `module` is a live local and `image` a complete PTX/fatbinary image the caller owns for the
    // call.
    let code = unsafe {
        if via_fatbin_call {
            cuModuleLoadFatBinary(&mut module, image.as_ptr().cast())
        } else {
            cuModuleLoadData(&mut module, image.as_ptr().cast())
        }
    };
    check(code);
    let mut f: CUfunction = std::ptr::null_mut();
    // SAFETY: `f` is a live local, `module` loaded above, the name a C string literal.
    check(unsafe { cuModuleGetFunction(&mut f, module, c"twice".as_ptr()) });
    let host: Vec<i32> = (0..100).collect();
    let mut dptr: CUdeviceptr = 0;
    // SAFETY: `dptr` is a live local.
    check(unsafe { cuMemAlloc_v2(&mut dptr, 400) });
    // SAFETY: `host` holds 100 i32s, the 400 bytes copied.
    check(unsafe { cuMemcpyHtoD_v2(dptr, host.as_ptr().cast(), 400) });
    let mut n = 100i32;
    let mut args = [
        &mut dptr as *mut CUdeviceptr as *mut c_void,
        &mut n as *mut i32 as *mut c_void,
    ];
    let (stream, extra) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: `args` points to `dptr` and `n`, live locals matching `twice`'s (pointer, int) parameters;
    // the launch is synchronous.
    check(unsafe { cuLaunchKernel(f, 4, 1, 1, 32, 1, 1, 0, stream, args.as_mut_ptr(), extra) });
    let mut out = vec![0i32; 100];
    // SAFETY: `out` holds 100 i32s, the 400 bytes copied.
    check(unsafe { cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), dptr, 400) });
    let want: Vec<i32> = host.iter().map(|x| 2 * x + 1).collect();
    assert_eq!(out, want);
    // SAFETY: `dptr` was allocated above and is freed once.
    check(unsafe { cuMemFree_v2(dptr) });
    // SAFETY: `module` was loaded above and is unloaded once.
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
    let lz4_fatbin = run_nvcc(
        &nvcc,
        &[
            "-fatbin",
            "-Xfatbin",
            "-compress-mode=speed",
            "-gencode",
            ptx_arch,
        ],
        &source,
        &tmp.path().join("l.fatbin"),
    );
    // The emulated sm_80 must pick compute_80's PTX, not compute_90's.
    let multi_arch = run_nvcc(
        &nvcc,
        &[
            "-fatbin",
            "-gencode",
            "arch=compute_90,code=compute_90",
            "-gencode",
            ptx_arch,
            "-gencode",
            "arch=compute_75,code=[compute_75,sm_75]",
        ],
        &source,
        &tmp.path().join("m.fatbin"),
    );
    let sass_only = run_nvcc(
        &nvcc,
        &["-fatbin", "-gencode", "arch=compute_80,code=sm_80"],
        &source,
        &tmp.path().join("s.fatbin"),
    );
    let cubin = run_nvcc(
        &nvcc,
        &["-cubin", "-gencode", "arch=compute_80,code=sm_80"],
        &source,
        &tmp.path().join("s.cubin"),
    );

    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        check(cuInit(0));
        let mut ctx: CUcontext = std::ptr::null_mut();
        check(cuCtxCreate_v2(&mut ctx, 0, 0));
        load_and_run(&ptx, false);
        load_and_run(&zstd_fatbin, true);
        load_and_run(&zstd_fatbin, false);
        load_and_run(&plain_fatbin, true);
        load_and_run(&lz4_fatbin, true);
        load_and_run(&multi_arch, false);
        // The __fatBinC_Wrapper_t nvcc wraps fatbinaries in.
        let wrapper = wrap(&zstd_fatbin);
        load_and_run(&wrapper, false);
        sass_only_fatbin_refuses_its_kernels_not_the_load(&sass_only, &hidden_kernel_name(&ptx));
        let mut module: CUmodule = std::ptr::null_mut();
        // A bare cubin is one architecture's code: refused at load, as a
        // real driver refuses a cubin built for another GPU.
        assert_eq!(
            cuModuleLoadData(&mut module, cubin.as_ptr().cast()),
            CUDA_ERROR_NO_BINARY_FOR_GPU
        );
        for image in [&zstd_fatbin, &lz4_fatbin, &plain_fatbin, &multi_arch] {
            mangled_fatbins_fail_cleanly(image);
        }
        check(cuCtxDestroy_v2(ctx));
    }
}

/// A fatbinary of machine code only loads (as a library built for other
/// GPUs loads on a real driver, and as the CUDA runtime registers every
/// library's fatbinaries at start-up); looking its kernel up fails with
/// `CUDA_ERROR_NO_BINARY_FOR_GPU`, through modules and libraries alike,
/// names that are not in it stay `CUDA_ERROR_NOT_FOUND`, and its variables
/// are found with their initial contents.
unsafe fn sass_only_fatbin_refuses_its_kernels_not_the_load(sass_only: &[u8], hidden: &CStr) {
    use cuda::api::library::*;
    let mut module: CUmodule = std::ptr::null_mut();
    // SAFETY: `module` is a live local and `sass_only` a complete fatbinary.
    check(unsafe { cuModuleLoadFatBinary(&mut module, sass_only.as_ptr().cast()) });
    let mut f: CUfunction = std::ptr::null_mut();
    for name in [c"twice", c"twice", hidden] {
        assert_eq!(
            // SAFETY: `f` is a live local, `module` loaded above, `name` a C string.
            unsafe { cuModuleGetFunction(&mut f, module, name.as_ptr()) },
            CUDA_ERROR_NO_BINARY_FOR_GPU,
            "{name:?}"
        );
    }
    assert_eq!(
        // SAFETY: `f` is a live local, `module` loaded above, the name a C string literal.
        unsafe { cuModuleGetFunction(&mut f, module, c"thrice".as_ptr()) },
        CUDA_ERROR_NOT_FOUND
    );
    // Its variables are there, with the cubin's initial contents, as on a
    // GPU (cuBLAS reads its constants this way before any launch).
    let (mut dptr, mut size) = (0 as CUdeviceptr, 0usize);
    // SAFETY: out-pointers to locals, a loaded module, a C string literal.
    check(unsafe { cuModuleGetGlobal_v2(&mut dptr, &mut size, module, c"table".as_ptr()) });
    assert_eq!(size, 16);
    let mut words = [0i32; 4];
    // SAFETY: 16 bytes into a 16-byte array, from the 16-byte variable.
    check(unsafe { cuMemcpyDtoH_v2(words.as_mut_ptr().cast(), dptr, 16) });
    assert_eq!(words, [5, 6, 7, 8]);
    assert_eq!(
        // SAFETY: out-pointers to live locals, a loaded module, a C string literal.
        unsafe { cuModuleGetGlobal_v2(&mut dptr, &mut size, module, c"no_such_table".as_ptr()) },
        CUDA_ERROR_NOT_FOUND
    );
    // SAFETY: `module` was loaded above and is unloaded once.
    check(unsafe { cuModuleUnload(module) });

    let mut library: *mut c_void = std::ptr::null_mut();
    // SAFETY: `library` is a live local and `sass_only` a complete fatbinary; the option arrays are NULL
    // with counts of 0.
    check(unsafe {
        cuLibraryLoadData(
            &mut library,
            sass_only.as_ptr().cast(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    });
    let mut kernel: *mut c_void = std::ptr::null_mut();
    assert_eq!(
        // SAFETY: `kernel` is a live local, `library` loaded above, the name a C string literal.
        unsafe { cuLibraryGetKernel(&mut kernel, library, c"twice".as_ptr()) },
        CUDA_ERROR_NO_BINARY_FOR_GPU
    );
    assert!(kernel.is_null());
    assert_eq!(
        // SAFETY: `kernel` is a live local, `library` loaded above, the name a C string literal.
        unsafe { cuLibraryGetKernel(&mut kernel, library, c"thrice".as_ptr()) },
        CUDA_ERROR_NOT_FOUND
    );
    // SAFETY: `library` was loaded above and is unloaded once.
    check(unsafe { cuLibraryUnload(library) });
}

/// The mangled name of the anonymous-namespace kernel `hidden`, from the
/// PTX of the same source (the namespace's hash is the same in every build).
fn hidden_kernel_name(ptx: &[u8]) -> CString {
    let text = String::from_utf8_lossy(ptx);
    let at = text.find("_GLOBAL__N_").expect("the PTX defines `hidden`");
    let start = text[..at].rfind("_ZN").expect("a mangled name");
    let end = text[start..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(text.len(), |e| start + e);
    CString::new(&text[start..end]).unwrap()
}

/// A 24-byte `__fatBinC_Wrapper_t` (magic, version 1, data, NULL) followed
/// by the bytes it points at, which stay alive in the returned buffer.
fn wrap(fatbin: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; 24];
    out.extend_from_slice(fatbin);
    let data = out.as_ptr() as usize + 24;
    out[0..4].copy_from_slice(&0x4662_43B1u32.to_le_bytes());
    out[4..8].copy_from_slice(&1u32.to_le_bytes());
    out[8..16].copy_from_slice(&(data as u64).to_le_bytes());
    out
}

/// Every byte of the fatbinary's entry headers and the start of the
/// payload, overwritten with values chosen to break sizes, kinds, flags
/// and compressed data: each load either works or fails with an image
/// error — never a crash, never CUDA_ERROR_UNKNOWN (a caught panic). The
/// outer header's size is left alone: the driver must trust it, as the
/// real one does.
unsafe fn mangled_fatbins_fail_cleanly(image: &[u8]) {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let limit = image.len().min(16 + 64 + 96);
    for at in 16..limit {
        for value in [0u8, 0xff, 0x80] {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mut bad = image.to_vec();
            bad[at] = value ^ (seed >> 60) as u8;
            // Room after the image so no announced entry reads past memory.
            bad.resize(bad.len() + (1 << 16), 0);
            let mut module: CUmodule = std::ptr::null_mut();
            // SAFETY: `module` is a live local; `bad` has 64 KiB of zeros after the image, so no entry the
            // corrupted header announces is read past its end.
            let code = unsafe { cuModuleLoadData(&mut module, bad.as_ptr().cast()) };
            assert!(
                [
                    CUDA_SUCCESS,
                    CUDA_ERROR_INVALID_IMAGE,
                    CUDA_ERROR_NO_BINARY_FOR_GPU,
                    CUDA_ERROR_INVALID_PTX,
                ]
                .contains(&code),
                "byte {at} = {value:#x}: {}",
                cuda::error_table::name_str(code)
            );
            if code == CUDA_SUCCESS {
                // SAFETY: `module` was just loaded and is unloaded once.
                check(unsafe { cuModuleUnload(module) });
            }
        }
    }
}

#[test]
fn export_tables_serve_the_runtime_and_refuse_unknown_ids() {
    let mut table: *const c_void = std::ptr::null();
    let runtime_interface: [u8; 16] = [
        0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d,
        0xf9,
    ];
    // SAFETY: `table` is a live local and the ids are 16-byte arrays; the table the driver returns is read
    // only within the size its slot 0 reports.
    unsafe {
        check(cuGetExportTable(
            &mut table,
            runtime_interface.as_ptr().cast(),
        ));
        assert!(!table.is_null());
        // Slot 0 is the table's size in bytes.
        assert_eq!(*(table as *const usize), 13 * 8);
        for unknown in [[0u8; 16], [0xff; 16], {
            let mut near = runtime_interface;
            near[15] ^= 1;
            near
        }] {
            let mut t: *const c_void = std::ptr::dangling();
            assert_eq!(
                cuGetExportTable(&mut t, unknown.as_ptr().cast()),
                CUDA_ERROR_NOT_SUPPORTED
            );
            assert!(t.is_null());
        }
        assert_eq!(
            cuGetExportTable(std::ptr::null_mut(), runtime_interface.as_ptr().cast()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuGetExportTable(&mut table, std::ptr::null()),
            CUDA_ERROR_INVALID_VALUE
        );
    }
}
