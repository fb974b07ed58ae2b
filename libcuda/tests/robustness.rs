//! Bad input never crashes the host program and never panics inside the
//! library: NULL pointers, bogus and stale handles, and garbage module
//! images all fail with a specific error code, never `CUDA_ERROR_UNKNOWN`
//! (which is what a caught panic turns into).

use cuda::api::context::*;
use cuda::api::device::*;
use cuda::api::launch::*;
use cuda::api::library::*;
use cuda::api::memory::*;
use cuda::api::module::*;
use cuda::api::pointer::*;
use cuda::api::stream::*;
use cuda::cu::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

fn name(code: CUresult) -> &'static str {
    cuda::error_table::name_str(code)
}

/// A failure with a real error code: not success, not a caught panic.
fn assert_clean_failure(code: CUresult, what: &str) {
    assert_ne!(code, CUDA_SUCCESS, "{what} unexpectedly succeeded");
    assert_ne!(
        code, CUDA_ERROR_UNKNOWN,
        "{what} panicked inside the library"
    );
}

#[test]
fn null_pointers_and_bogus_handles_fail_cleanly() {
    // SAFETY: the calls below pass NULL on purpose (the driver must refuse it), out-pointers to live
    // locals, and bogus handles, which are only compared, never dereferenced, by the driver.
    unsafe {
        assert_eq!(cuInit(0), CUDA_SUCCESS);
        let mut ctx: CUcontext = null_mut();
        assert_eq!(cuCtxCreate_v2(&mut ctx, 0, 0), CUDA_SUCCESS);
        let bogus = 0x1234_5678 as *mut c_void;
        let mut out_ptr: *mut c_void = null_mut();
        let mut out_int = 0i32;
        let mut dptr: CUdeviceptr = 0;
        let calls: Vec<(&str, CUresult)> = vec![
            ("cuDeviceGetName(NULL)", cuDeviceGetName(null_mut(), 10, 0)),
            (
                "cuDeviceGetAttribute(NULL)",
                cuDeviceGetAttribute(null_mut(), 1, 0),
            ),
            (
                "cuDeviceTotalMem_v2(NULL)",
                cuDeviceTotalMem_v2(null_mut(), 0),
            ),
            ("cuDeviceGetUuid(NULL)", cuDeviceGetUuid(null_mut(), 0)),
            (
                "cuDeviceGetProperties(NULL)",
                cuDeviceGetProperties(null_mut(), 0),
            ),
            ("cuCtxCreate_v2(NULL)", cuCtxCreate_v2(null_mut(), 0, 0)),
            (
                "cuCtxCreate_v2(flags)",
                cuCtxCreate_v2(&mut out_ptr, 0x1000, 0),
            ),
            ("cuCtxGetCurrent(NULL)", cuCtxGetCurrent(null_mut())),
            ("cuCtxSetCurrent(bogus)", cuCtxSetCurrent(bogus)),
            (
                "cuCtxGetApiVersion(NULL)",
                cuCtxGetApiVersion(ctx, null_mut()),
            ),
            ("cuCtxSetLimit(bad)", cuCtxSetLimit(999, 1)),
            (
                "cuModuleLoadData(NULL)",
                cuModuleLoadData(&mut out_ptr, null()),
            ),
            (
                "cuModuleLoadData(out NULL)",
                cuModuleLoadData(null_mut(), c"x".as_ptr().cast()),
            ),
            ("cuModuleLoad(NULL)", cuModuleLoad(&mut out_ptr, null())),
            (
                "cuModuleGetFunction(bogus)",
                cuModuleGetFunction(&mut out_ptr, bogus, c"k".as_ptr()),
            ),
            (
                "cuModuleGetGlobal_v2(bogus)",
                cuModuleGetGlobal_v2(&mut dptr, null_mut(), bogus, c"g".as_ptr()),
            ),
            (
                "cuLinkCreate_v2(NULL)",
                cuLinkCreate_v2(0, null_mut(), null_mut(), null_mut()),
            ),
            (
                "cuLinkAddData_v2(bogus)",
                cuLinkAddData_v2(
                    bogus,
                    CU_JIT_INPUT_PTX,
                    c"x".as_ptr() as *mut c_void,
                    1,
                    null(),
                    0,
                    null_mut(),
                    null_mut(),
                ),
            ),
            (
                "cuLinkComplete(bogus)",
                cuLinkComplete(bogus, &mut out_ptr, &mut 0),
            ),
            ("cuLinkDestroy(bogus)", cuLinkDestroy(bogus)),
            ("cuMemAlloc_v2(NULL)", cuMemAlloc_v2(null_mut(), 16)),
            ("cuMemFree_v2(unallocated)", cuMemFree_v2(0x10)),
            (
                "cuMemcpyHtoD_v2(bad dst)",
                cuMemcpyHtoD_v2(0x10, &out_int as *const i32 as *const c_void, 4),
            ),
            (
                "cuMemcpyDtoH_v2(NULL dst)",
                cuMemcpyDtoH_v2(null_mut(), 0x10, 4),
            ),
            ("cuMemcpyDtoD_v2(bad)", cuMemcpyDtoD_v2(0x10, 0x20, 4)),
            ("cuMemsetD32_v2(bad)", cuMemsetD32_v2(0x40, 0, 4)),
            (
                "cuMemGetInfo_v2(NULL)",
                cuMemGetInfo_v2(null_mut(), null_mut()),
            ),
            ("cuMemAllocHost_v2(NULL)", cuMemAllocHost_v2(null_mut(), 16)),
            ("cuMemFreeHost(bogus)", cuMemFreeHost(bogus)),
            ("cuStreamCreate(NULL)", cuStreamCreate(null_mut(), 0)),
            ("cuStreamCreate(flags)", cuStreamCreate(&mut out_ptr, 0x80)),
            ("cuStreamQuery(bogus)", cuStreamQuery(bogus)),
            (
                "cuStreamWaitEvent(bogus)",
                cuStreamWaitEvent(null_mut(), bogus, 0),
            ),
            ("cuEventCreate(NULL)", cuEventCreate(null_mut(), 0)),
            ("cuEventSynchronize(bogus)", cuEventSynchronize(bogus)),
            (
                "cuEventElapsedTime(NULL)",
                cuEventElapsedTime(null_mut(), bogus, bogus),
            ),
            (
                "cuFuncGetAttribute(NULL)",
                cuFuncGetAttribute(null_mut(), 0, bogus),
            ),
            (
                "cuFuncSetAttribute(bogus)",
                cuFuncSetAttribute(bogus, 8, 1024),
            ),
            ("cuFuncGetName(bogus)", cuFuncGetName(&mut null(), bogus)),
            (
                "cuLaunchKernel(bogus)",
                cuLaunchKernel(
                    bogus,
                    1,
                    1,
                    1,
                    1,
                    1,
                    1,
                    0,
                    null_mut(),
                    null_mut(),
                    null_mut(),
                ),
            ),
            (
                "cuLaunchKernelEx(NULL)",
                cuLaunchKernelEx(null(), bogus, null_mut(), null_mut()),
            ),
            (
                "cuPointerGetAttribute(NULL)",
                cuPointerGetAttribute(null_mut(), 2, 0x10),
            ),
            (
                "cuPointerGetAttribute(unknown)",
                cuPointerGetAttribute((&mut out_int as *mut i32).cast(), 2, 0x10),
            ),
            (
                "cuLibraryLoadData(NULL)",
                cuLibraryLoadData(
                    &mut out_ptr,
                    null(),
                    null_mut(),
                    null_mut(),
                    0,
                    null_mut(),
                    null_mut(),
                    0,
                ),
            ),
            (
                "cuLibraryGetKernel(bogus)",
                cuLibraryGetKernel(&mut out_ptr, bogus, c"k".as_ptr()),
            ),
            (
                "cuKernelGetFunction(bogus)",
                cuKernelGetFunction(&mut out_ptr, bogus),
            ),
            ("cuCtxDestroy_v2(NULL)", cuCtxDestroy_v2(null_mut())),
        ];
        for (what, code) in calls {
            assert_clean_failure(code, what);
        }
        assert_eq!(cuCtxDestroy_v2(ctx), CUDA_SUCCESS);
    }
}

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Mangled PTX: truncations, byte flips and spliced lines of a valid
/// module must all be rejected (or loaded) without a panic.
#[test]
fn garbage_and_mangled_images_never_panic() {
    const PTX: &str = ".version 7.5\n.target sm_80\n.address_size 64\n\
        .visible .entry k(.param .u64 p, .param .u32 n)\n{\n\
        .reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n\
        ld.param.u64 %rd1, [p];\nld.param.u32 %r1, [n];\nmov.u32 %r2, %tid.x;\n\
        setp.ge.u32 %p1, %r2, %r1;\n@%p1 bra DONE;\ncvta.to.global.u64 %rd2, %rd1;\n\
        mul.wide.u32 %rd3, %r2, 4;\nadd.s64 %rd2, %rd2, %rd3;\nst.global.u32 [%rd2], %r2;\n\
        DONE:\nret;\n}\n";
    // SAFETY: out-pointers to live locals; each mutated image is a NUL-terminated copy of `PTX` that
    // outlives its load.
    unsafe {
        assert_eq!(cuInit(0), CUDA_SUCCESS);
        let mut ctx: CUcontext = null_mut();
        assert_eq!(cuCtxCreate_v2(&mut ctx, 0, 0), CUDA_SUCCESS);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let bytes = PTX.as_bytes();
        let mut loaded = 0;
        for i in 0..300 {
            let mut image: Vec<u8> = match i % 3 {
                0 => bytes[..(rng.next() as usize % bytes.len())].to_vec(),
                1 => {
                    let mut b = bytes.to_vec();
                    for _ in 0..1 + rng.next() % 4 {
                        let at = rng.next() as usize % b.len();
                        b[at] = (rng.next() % 95 + 32) as u8;
                    }
                    b
                }
                _ => {
                    let lines: Vec<&str> = PTX.lines().collect();
                    let mut out: Vec<&str> = lines.clone();
                    let from = rng.next() as usize % lines.len();
                    let to = rng.next() as usize % lines.len();
                    out.insert(to, lines[from]);
                    out.join("\n").into_bytes()
                }
            };
            image.retain(|b| *b != 0);
            image.push(0);
            let mut module: CUmodule = null_mut();
            let code = cuModuleLoadData(&mut module, image.as_ptr().cast());
            assert_ne!(
                code,
                CUDA_ERROR_UNKNOWN,
                "a mangled image made the loader panic:\n{}",
                String::from_utf8_lossy(&image)
            );
            if code == CUDA_SUCCESS {
                loaded += 1;
                assert_eq!(cuModuleUnload(module), CUDA_SUCCESS);
            } else {
                assert!(
                    matches!(code, CUDA_ERROR_INVALID_PTX | CUDA_ERROR_INVALID_IMAGE),
                    "unexpected {} for a mangled image",
                    name(code)
                );
            }
        }
        assert!(
            loaded > 0,
            "some mutations (e.g. a repeated blank line) should still load"
        );
        assert_eq!(cuCtxDestroy_v2(ctx), CUDA_SUCCESS);
    }
}
