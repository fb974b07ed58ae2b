//! Cooperative launches: every block of the grid is resident at once, up to
//! the driver's limit (`cuOccupancyMaxActiveBlocksPerMultiprocessor` times
//! the SM count); a bigger grid is refused up front with
//! `CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`, which leaves the context
//! usable (it is not a sticky error). Grid-wide sync itself is tested by
//! the runtime-API corpus (`tests/runtime-api/grid_sync.cu`) and the
//! emulator's `machine_sched` tests.

use cuda::api::context::*;
use cuda::api::device::*;
use cuda::api::launch::*;
use cuda::api::memory::*;
use cuda::api::module::*;
use cuda::api::occupancy::*;
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

/// `CUdevice_attribute` values (cuda.h).
const CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: i32 = 16;
const CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: i32 = 95;

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
fn cooperative_grids_above_the_occupancy_limit_are_refused_and_the_context_lives_on() {
    // SAFETY: every pointer handed to the driver points at a live local.
    unsafe {
        check(cuInit(0));
        let mut ctx: CUcontext = null_mut();
        check(cuCtxCreate_v2(&mut ctx, 0, 0));
        let mut attr = 0;
        check(cuDeviceGetAttribute(
            &mut attr,
            CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH,
            0,
        ));
        assert_eq!(attr, 1, "cooperative launches are supported");
        let mut sms = 0;
        check(cuDeviceGetAttribute(
            &mut sms,
            CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            0,
        ));
        let mut module: CUmodule = null_mut();
        check(cuModuleLoadData(&mut module, PTX.as_ptr().cast()));
        let mut f: CUfunction = null_mut();
        check(cuModuleGetFunction(&mut f, module, c"fill".as_ptr()));
        let mut per_sm = 0;
        check(cuOccupancyMaxActiveBlocksPerMultiprocessor(
            &mut per_sm,
            f,
            64,
            0,
        ));
        assert!(per_sm > 0 && sms > 0);
        let limit = (per_sm * sms) as u32;
        let mut dptr: CUdeviceptr = 0;
        check(cuMemAlloc_v2(&mut dptr, 64 * 4));
        let mut args = [&mut dptr as *mut CUdeviceptr as *mut c_void];

        let refused = cuLaunchCooperativeKernel(
            f,
            limit + 1,
            1,
            1,
            64,
            1,
            1,
            0,
            null_mut(),
            args.as_mut_ptr(),
        );
        assert_eq!(
            refused,
            CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
            "{}",
            cuda::error_table::name_str(refused)
        );

        let mut config: CUlaunchConfig = std::mem::zeroed();
        config.grid_dim = [limit / 2 + 1, 2, 1];
        config.block_dim = [64, 1, 1];
        let mut attrs = [cooperative_attribute()];
        config.attrs = attrs.as_mut_ptr();
        config.num_attrs = 1;
        let refused = cuLaunchKernelEx(&config, f, args.as_mut_ptr(), null_mut());
        assert_eq!(refused, CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);

        // Not sticky: the largest cooperative grid runs, then a plain one.
        check(cuLaunchCooperativeKernel(
            f,
            limit,
            1,
            1,
            64,
            1,
            1,
            0,
            null_mut(),
            args.as_mut_ptr(),
        ));
        config.grid_dim = [2, 1, 1];
        check(cuLaunchKernelEx(&config, f, args.as_mut_ptr(), null_mut()));
        check(cuLaunchKernel(
            f,
            2,
            1,
            1,
            64,
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
