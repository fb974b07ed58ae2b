//! Context-independent loading answers as NVIDIA's driver does where the
//! CUDA runtime's roads depend on it. Every expectation here was recorded
//! on an H200 (driver 580.159.04, `docs/cudart-roads.md`, the probe
//! program there): a library's globals and module need a current context,
//! its kernels and managed variables do not; a `CUkernel` is a handle of
//! its own, not the `CUfunction` `cuKernelGetFunction` returns (which is the
//! one `cuModuleGetFunction` finds in the library's module); a captured
//! launch of a `CUkernel` becomes a node that names the context's function,
//! the kernel and the context.

use cuda::api::context::*;
use cuda::api::device::*;
use cuda::api::graph::abi::*;
use cuda::api::graph::build::*;
use cuda::api::graph::capture::*;
use cuda::api::launch::*;
use cuda::api::library::*;
use cuda::api::memory::*;
use cuda::api::module::*;
use cuda::api::stream::*;
use cuda::cu::*;
use std::ffi::c_void;
use std::ptr::{null_mut, read_volatile};

const PTX: &std::ffi::CStr = c".version 8.0
.target sm_80
.address_size 64
.visible .global .align 4 .u32 g_value = 7;
.visible .global .attribute(.managed) .align 4 .u32 m_value = 5;
.visible .entry k(.param .u64 p)
{
    .reg .u64 %rd<3>;
    .reg .u32 %r<2>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd2, %rd1;
    ld.global.u32 %r1, [g_value];
    st.global.u32 [%rd2], %r1;
    ret;
}
";

fn ok(code: CUresult) {
    assert_eq!(code, CUDA_SUCCESS, "{}", cuda::error_table::name_str(code));
}

unsafe fn load() -> *mut c_void {
    let mut lib = null_mut();
    // SAFETY: a NUL-terminated PTX image and no options.
    ok(unsafe {
        cuLibraryLoadData(
            &mut lib,
            PTX.as_ptr().cast(),
            null_mut(),
            null_mut(),
            0,
            null_mut(),
            null_mut(),
            0,
        )
    });
    lib
}

#[test]
fn library_globals_and_module_need_a_context_kernels_do_not() {
    // A fresh thread: no context is current on it.
    // SAFETY: driver calls with out-pointers to locals and handles made here.
    std::thread::spawn(|| unsafe {
        ok(cuInit(0));
        let mut current = 1 as CUcontext;
        ok(cuCtxGetCurrent(&mut current));
        assert!(current.is_null());
        let lib = load();
        let (mut address, mut bytes) = (0, 0);
        assert_eq!(
            cuLibraryGetGlobal(&mut address, &mut bytes, lib, c"g_value".as_ptr()),
            CUDA_ERROR_INVALID_CONTEXT
        );
        ok(cuLibraryGetManaged(
            &mut address,
            &mut bytes,
            lib,
            c"m_value".as_ptr(),
        ));
        let mut kernel = null_mut();
        ok(cuLibraryGetKernel(&mut kernel, lib, c"k".as_ptr()));
        let mut function: CUfunction = null_mut();
        assert_eq!(
            cuKernelGetFunction(&mut function, kernel),
            CUDA_ERROR_INVALID_CONTEXT
        );
        let mut module: CUmodule = null_mut();
        assert_eq!(
            cuLibraryGetModule(&mut module, lib),
            CUDA_ERROR_INVALID_CONTEXT
        );
        let mut name = std::ptr::null();
        ok(cuKernelGetName(&mut name, kernel));
        // With a context, all of them answer.
        let mut ctx = null_mut();
        ok(cuDevicePrimaryCtxRetain(&mut ctx, 0));
        ok(cuCtxSetCurrent(ctx));
        ok(cuLibraryGetGlobal(
            &mut address,
            &mut bytes,
            lib,
            c"g_value".as_ptr(),
        ));
        assert_eq!(bytes, 4);
        ok(cuLibraryGetModule(&mut module, lib));
        ok(cuLibraryUnload(lib));
        ok(cuCtxSetCurrent(null_mut()));
        ok(cuDevicePrimaryCtxRelease_v2(0));
    })
    .join()
    .expect("the thread ran");
}

#[test]
fn a_kernel_is_not_its_function_and_captured_nodes_name_both() {
    // SAFETY: driver calls with out-pointers to locals and handles made here.
    std::thread::spawn(|| unsafe {
        ok(cuInit(0));
        let mut ctx = null_mut();
        ok(cuCtxCreate_v2(&mut ctx, 0, 0));
        let lib = load();
        let mut kernel = null_mut();
        ok(cuLibraryGetKernel(&mut kernel, lib, c"k".as_ptr()));
        let mut again = null_mut();
        ok(cuLibraryGetKernel(&mut again, lib, c"k".as_ptr()));
        assert_eq!(kernel, again, "one kernel handle per name");
        let mut function: CUfunction = null_mut();
        ok(cuKernelGetFunction(&mut function, kernel));
        assert_ne!(function, kernel, "a CUkernel is not a CUfunction");
        let mut module: CUmodule = null_mut();
        ok(cuLibraryGetModule(&mut module, lib));
        let mut by_name: CUfunction = null_mut();
        ok(cuModuleGetFunction(&mut by_name, module, c"k".as_ptr()));
        assert_eq!(by_name, function);
        // A CUkernel launches as a CUfunction.
        let mut out: CUdeviceptr = 0;
        ok(cuMemAlloc_v2(&mut out, 4));
        let mut arg = out;
        let mut args = [(&raw mut arg).cast::<c_void>()];
        ok(cuLaunchKernel(
            kernel as CUfunction,
            1,
            1,
            1,
            1,
            1,
            1,
            0,
            null_mut(),
            args.as_mut_ptr(),
            null_mut(),
        ));
        ok(cuCtxSynchronize());
        let mut value = 0u32;
        ok(cuMemcpyDtoH_v2((&raw mut value).cast(), out, 4));
        assert_eq!(read_volatile(&value), 7);
        // Captured, both launches become nodes naming the context's
        // function, the kernel and the context.
        let mut stream = null_mut();
        ok(cuStreamCreate(&mut stream, 1));
        ok(cuStreamBeginCapture_v2(stream, 0));
        for f in [kernel as CUfunction, function] {
            ok(cuLaunchKernel(
                f,
                1,
                1,
                1,
                1,
                1,
                1,
                0,
                stream,
                args.as_mut_ptr(),
                null_mut(),
            ));
        }
        let mut graph = null_mut();
        ok(cuStreamEndCapture(stream, &mut graph));
        let mut nodes = [null_mut(); 4];
        let mut count = nodes.len();
        ok(cuGraphGetNodes(graph, nodes.as_mut_ptr(), &mut count));
        assert_eq!(count, 2);
        for node in &nodes[..count] {
            let mut p: KernelNodeParamsV2 = std::mem::zeroed();
            ok(cuGraphKernelNodeGetParams_v2(*node, &mut p));
            assert_eq!(p.func, function);
            assert_eq!(p.kern, kernel);
            assert_eq!(p.ctx, ctx);
        }
        ok(cuGraphDestroy(graph));
        ok(cuStreamDestroy_v2(stream));
        ok(cuMemFree_v2(out));
        ok(cuLibraryUnload(lib));
        ok(cuCtxDestroy_v2(ctx));
    })
    .join()
    .expect("the thread ran");
}
