//! Kernels launched from two host threads run at the same time: the driver
//! lock is held shared while a kernel executes. A kernel that spins until a
//! kernel of the other thread sets a flag completes; with kernels run one at
//! a time it would spin until the stall watchdog ended it.

use cuda::api::context::*;
use cuda::api::device::*;
use cuda::api::launch::*;
use cuda::api::memory::*;
use cuda::api::module::*;
use cuda::cu::*;
use std::ffi::c_void;
use std::ptr::null_mut;

/// `wait`: writes 1 to `started` (mapped host memory the host polls), spins
/// until `*flag` is 1, then writes 2 to `started`. `set`: `*flag = 1`.
const PTX: &str = "\
.version 7.5
.target sm_80
.address_size 64
.visible .entry wait(.param .u64 started, .param .u64 flag)
{
  .reg .pred %p<2>;
  .reg .b32 %r<3>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [started];
  ld.param.u64 %rd2, [flag];
  mov.u32 %r1, 1;
  st.volatile.global.u32 [%rd1], %r1;
$spin:
  ld.volatile.global.u32 %r2, [%rd2];
  setp.ne.u32 %p1, %r2, 1;
  @%p1 bra $spin;
  mov.u32 %r1, 2;
  st.volatile.global.u32 [%rd1], %r1;
  ret;
}
.visible .entry set(.param .u64 flag)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [flag];
  mov.u32 %r1, 1;
  st.volatile.global.u32 [%rd1], %r1;
  ret;
}
\0";

const CU_MEMHOSTALLOC_DEVICEMAP: u32 = 0x02;

fn check(code: CUresult) {
    assert_eq!(code, CUDA_SUCCESS, "{}", cuda::error_table::name_str(code));
}

/// `CUcontext` and device pointers crossing to the other thread.
#[derive(Clone, Copy)]
struct Shared {
    ctx: usize,
    set: usize,
    flag: CUdeviceptr,
}

#[test]
fn a_kernel_waiting_for_another_threads_kernel_completes() {
    // SAFETY: every pointer handed to the driver points at a live local or
    // at memory the driver allocated and that outlives its use.
    unsafe {
        check(cuInit(0));
        let mut ctx: CUcontext = null_mut();
        check(cuCtxCreate_v2(&mut ctx, 0, 0));
        let mut module: CUmodule = null_mut();
        check(cuModuleLoadData(&mut module, PTX.as_ptr().cast()));
        let (mut wait, mut set): (CUfunction, CUfunction) = (null_mut(), null_mut());
        check(cuModuleGetFunction(&mut wait, module, c"wait".as_ptr()));
        check(cuModuleGetFunction(&mut set, module, c"set".as_ptr()));
        let mut host: *mut c_void = null_mut();
        check(cuMemHostAlloc(&mut host, 4, CU_MEMHOSTALLOC_DEVICEMAP));
        let started = host as *const u32;
        std::ptr::write_volatile(host as *mut u32, 0);
        let mut started_dev: CUdeviceptr = 0;
        check(cuMemHostGetDevicePointer_v2(&mut started_dev, host, 0));
        let mut flag: CUdeviceptr = 0;
        check(cuMemAlloc_v2(&mut flag, 4));
        check(cuMemsetD32_v2(flag, 0, 1));

        let shared = Shared {
            ctx: ctx as usize,
            set: set as usize,
            flag,
        };
        let started_addr = started as usize;
        let ready = std::sync::Arc::new(std::sync::Barrier::new(2));
        let setter_ready = ready.clone();
        let setter = std::thread::spawn(move || {
            let s = shared;
            // Context calls change the driver's state: made before the
            // other thread's kernel runs.
            check(cuCtxSetCurrent(s.ctx as CUcontext));
            setter_ready.wait();
            // Wait (host-side, no driver call) until the other kernel runs.
            while std::ptr::read_volatile(started_addr as *const u32) == 0 {
                std::thread::yield_now();
            }
            let mut flag = s.flag;
            let mut args = [&mut flag as *mut CUdeviceptr as *mut c_void];
            check(cuLaunchKernel(
                s.set as CUfunction,
                1,
                1,
                1,
                32,
                1,
                1,
                0,
                null_mut(),
                args.as_mut_ptr(),
                null_mut(),
            ));
        });
        ready.wait();
        let mut args = [
            &mut started_dev as *mut CUdeviceptr as *mut c_void,
            &mut flag as *mut CUdeviceptr as *mut c_void,
        ];
        check(cuLaunchKernel(
            wait,
            1,
            1,
            1,
            32,
            1,
            1,
            0,
            null_mut(),
            args.as_mut_ptr(),
            null_mut(),
        ));
        setter.join().expect("the setter thread");
        check(cuCtxSynchronize());
        assert_eq!(
            std::ptr::read_volatile(started),
            2,
            "the waiting kernel finished"
        );
        check(cuMemFreeHost(host));
        check(cuMemFree_v2(flag));
        check(cuCtxDestroy_v2(ctx));
    }
}
