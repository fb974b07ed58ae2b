//! Cooperative launches: blocks run one after another on the emulator, so a
//! grid sync could never complete. A cooperative grid of several blocks is
//! refused up front with `CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`, which
//! leaves the context usable (it is not a sticky error); a single block runs.

use cuda::api::context::*;
use cuda::api::device::*;
use cuda::api::launch::*;
use cuda::api::memory::*;
use cuda::api::module::*;
use cuda::cu::*;
use std::ffi::c_void;
use std::ptr::null_mut;

/// `out[tid] = tid + 7`.
const PTX: &str = "\
.version 7.5
.target sm_80
.address_size 64
.visible .entry fill(.param .u64 out)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  add.u32 %r2, %r1, 7;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
\0";

fn check(code: CUresult) {
    assert_eq!(code, CUDA_SUCCESS, "{}", cuda::error_table::name_str(code));
}

fn cooperative_attribute() -> CUlaunchAttribute {
    // SAFETY: CUlaunchAttribute is plain data; all-zero is a valid value.
    let mut a: CUlaunchAttribute = unsafe { std::mem::zeroed() };
    a.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    a.value[0..4].copy_from_slice(&1i32.to_le_bytes());
    a
}

#[test]
fn cooperative_grids_of_several_blocks_are_refused_and_the_context_lives_on() {
    // SAFETY: every pointer handed to the driver points at a live local.
    unsafe {
        check(cuInit(0));
        let mut ctx: CUcontext = null_mut();
        check(cuCtxCreate_v2(&mut ctx, 0, 0));
        let mut module: CUmodule = null_mut();
        check(cuModuleLoadData(&mut module, PTX.as_ptr().cast()));
        let mut f: CUfunction = null_mut();
        check(cuModuleGetFunction(&mut f, module, c"fill".as_ptr()));
        let mut dptr: CUdeviceptr = 0;
        check(cuMemAlloc_v2(&mut dptr, 64 * 4));
        let mut args = [&mut dptr as *mut CUdeviceptr as *mut c_void];

        let refused =
            cuLaunchCooperativeKernel(f, 2, 1, 1, 32, 1, 1, 0, null_mut(), args.as_mut_ptr());
        assert_eq!(
            refused,
            CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
            "{}",
            cuda::error_table::name_str(refused)
        );

        let mut config: CUlaunchConfig = std::mem::zeroed();
        config.grid_dim = [4, 1, 1];
        config.block_dim = [32, 1, 1];
        let mut attrs = [cooperative_attribute()];
        config.attrs = attrs.as_mut_ptr();
        config.num_attrs = 1;
        let refused = cuLaunchKernelEx(&config, f, args.as_mut_ptr(), null_mut());
        assert_eq!(refused, CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);

        // Not sticky: one block runs cooperatively, and so does a plain grid.
        check(cuLaunchCooperativeKernel(
            f,
            1,
            1,
            1,
            64,
            1,
            1,
            0,
            null_mut(),
            args.as_mut_ptr(),
        ));
        config.grid_dim = [1, 1, 1];
        config.block_dim = [64, 1, 1];
        check(cuLaunchKernelEx(&config, f, args.as_mut_ptr(), null_mut()));
        check(cuLaunchKernel(
            f,
            2,
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
        check(cuCtxSynchronize());
        let mut out = [0u32; 64];
        check(cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), dptr, 64 * 4));
        for (i, v) in out.iter().enumerate() {
            assert_eq!(*v, i as u32 + 7, "out[{i}]");
        }
    }
}
