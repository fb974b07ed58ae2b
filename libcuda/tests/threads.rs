//! Several threads, each with its own context stack, using the driver at
//! once: contexts stay per-thread, memory operations do not interfere, and a
//! fault in one thread's context leaves the others working.

use cuda::api::context::*;
use cuda::api::device::*;
use cuda::api::launch::*;
use cuda::api::memory::*;
use cuda::api::module::*;
use cuda::cu::*;
use std::ffi::c_void;

/// `out[tid] = tid * factor + seed`; with `n` past the allocation it faults.
const PTX: &str = "\
.version 7.5
.target sm_80
.address_size 64
.visible .entry fill(.param .u64 out, .param .u32 factor, .param .u32 seed)
{
  .reg .b32 %r<5>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [factor];
  ld.param.u32 %r2, [seed];
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r3, %r1, %r2;
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  ret;
}
\0";

fn check(code: CUresult) {
    assert_eq!(code, CUDA_SUCCESS, "{}", cuda::error_table::name_str(code));
}

/// One thread's work: its own context, module and buffer, `rounds` times.
fn worker(seed: u32, rounds: u32, fault: bool) {
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        let mut current: CUcontext = 1 as CUcontext;
        check(cuCtxGetCurrent(&mut current));
        assert!(current.is_null(), "a new thread starts without a context");
        let mut ctx: CUcontext = std::ptr::null_mut();
        check(cuCtxCreate_v2(&mut ctx, 0, 0));
        let mut module: CUmodule = std::ptr::null_mut();
        check(cuModuleLoadData(&mut module, PTX.as_ptr().cast()));
        let mut f: CUfunction = std::ptr::null_mut();
        check(cuModuleGetFunction(&mut f, module, c"fill".as_ptr()));
        for round in 0..rounds {
            let mut dptr: CUdeviceptr = 0;
            let threads = 64u32;
            check(cuMemAlloc_v2(&mut dptr, threads as usize * 4));
            let (mut factor, mut s) = (round + 1, seed);
            if fault {
                // Point past every allocation: the store faults.
                dptr += 1 << 40;
            }
            let mut args = [
                &mut dptr as *mut CUdeviceptr as *mut c_void,
                &mut factor as *mut u32 as *mut c_void,
                &mut s as *mut u32 as *mut c_void,
            ];
            let (stream, extra) = (std::ptr::null_mut(), std::ptr::null_mut());
            let code = cuLaunchKernel(
                f,
                1,
                1,
                1,
                threads,
                1,
                1,
                0,
                stream,
                args.as_mut_ptr(),
                extra,
            );
            if fault {
                assert_eq!(code, CUDA_ERROR_ILLEGAL_ADDRESS);
                assert_eq!(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
                check(cuCtxDestroy_v2(ctx));
                return;
            }
            check(code);
            let mut out = vec![0u32; threads as usize];
            check(cuMemcpyDtoH_v2(
                out.as_mut_ptr().cast(),
                dptr,
                out.len() * 4,
            ));
            for (tid, v) in out.iter().enumerate() {
                assert_eq!(
                    *v,
                    tid as u32 * factor + seed,
                    "thread {seed}, round {round}"
                );
            }
            check(cuMemFree_v2(dptr));
        }
        check(cuCtxGetCurrent(&mut current));
        assert_eq!(current, ctx, "the context stack is per thread");
        check(cuCtxDestroy_v2(ctx));
    }
}

#[test]
fn threads_use_their_own_contexts_concurrently() {
    // SAFETY: no arguments but flags.
    check(unsafe { cuInit(0) });
    let handles: Vec<_> = (0..8u32)
        .map(|i| std::thread::spawn(move || worker(1000 * i, 20, i == 3)))
        .collect();
    for h in handles {
        h.join().expect("worker thread panicked");
    }
}
