//! Thread block clusters through the driver API on an emulated sm_90
//! device (`PRLX_EMU_SM=90`): `CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH`,
//! `cuLaunchKernelEx` with `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`, a
//! kernel's `.reqnctapercluster` (and its function attributes), the
//! non-portable size opt-in and `CUDA_ERROR_INVALID_CLUSTER_SIZE`, which
//! leaves the context usable; `cuOccupancyMaxPotentialClusterSize` and
//! `cuOccupancyMaxActiveClusters`. Cluster semantics themselves are tested by
//! the emulator's `clusters` tests and the runtime-API corpus
//! (`tests/runtime-api/clusters.cu`).

use cuda::api::context::*;
use cuda::api::device::*;
use cuda::api::launch::*;
use cuda::api::memory::*;
use cuda::api::module::*;
use cuda::api::occupancy::*;
use cuda::cu::*;
use std::ffi::c_void;
use std::ptr::null_mut;

/// `rank`: `out[ctaid] = %cluster_ctarank + 100 * %cluster_nctarank`;
/// `fixed`: the same, in clusters of 2 fixed by the kernel.
const PTX: &str = "\
.version 8.0
.target sm_90
.address_size 64
.visible .entry rank(.param .u64 out)
{
  .reg .b32 %r<5>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %cluster_ctarank;
  mov.u32 %r3, %cluster_nctarank;
  mad.lo.u32 %r4, %r3, 100, %r2;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  ret;
}
.visible .entry fixed(.param .u64 out) .reqnctapercluster 2, 1, 1
{
  .reg .b32 %r<5>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %cluster_ctarank;
  mov.u32 %r3, %cluster_nctarank;
  mad.lo.u32 %r4, %r3, 100, %r2;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  ret;
}
\0";

const CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: i32 = 120;
const CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: i32 = 16;

fn check(code: CUresult) {
    assert_eq!(code, CUDA_SUCCESS, "{}", cuda::error_table::name_str(code));
}

fn cluster_attribute(dims: [u32; 3]) -> CUlaunchAttribute {
    // SAFETY: CUlaunchAttribute is plain data; all-zero is a valid value.
    let mut a: CUlaunchAttribute = unsafe { std::mem::zeroed() };
    a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    for (k, d) in dims.iter().enumerate() {
        a.value[k * 4..k * 4 + 4].copy_from_slice(&d.to_le_bytes());
    }
    a
}

/// Launches `f` over `grid` CTAs of 32 threads with `cluster` (none: a
/// plain `cuLaunchKernelEx`), and reads `out` back.
///
/// # Safety
/// `f` a kernel of `PTX`, `dptr` an allocation of at least `grid` words.
unsafe fn launch(
    f: CUfunction,
    grid: u32,
    cluster: Option<[u32; 3]>,
    dptr: &mut CUdeviceptr,
) -> Result<Vec<u32>, CUresult> {
    // SAFETY: CUlaunchConfig is plain data; all-zero is a valid value.
    let mut config: CUlaunchConfig = unsafe { std::mem::zeroed() };
    config.grid_dim = [grid, 1, 1];
    config.block_dim = [32, 1, 1];
    let mut attrs = cluster.map(cluster_attribute);
    if let Some(a) = attrs.as_mut() {
        config.attrs = a;
        config.num_attrs = 1;
    }
    let mut args = [dptr as *mut CUdeviceptr as *mut c_void];
    // SAFETY: the config, its attribute and the argument array are live
    // locals; the caller's contract covers `f` and `dptr`.
    let code = unsafe { cuLaunchKernelEx(&config, f, args.as_mut_ptr(), null_mut()) };
    if code != CUDA_SUCCESS {
        return Err(code);
    }
    let mut out = vec![0u32; grid as usize];
    // SAFETY: `out` holds `grid` words, the allocation at least as many.
    check(unsafe { cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), *dptr, grid as usize * 4) });
    Ok(out)
}

#[test]
fn cluster_launches_on_an_sm_90_device() {
    // SAFETY: set before any thread of this test process reads the
    // environment through the driver (cuInit reads it once).
    unsafe { std::env::set_var("PRLX_EMU_SM", "90") };
    // SAFETY: every pointer handed to the driver points at a live local,
    // strings are NUL-terminated, handles are this driver's.
    unsafe {
        check(cuInit(0));
        let mut ctx: CUcontext = null_mut();
        check(cuCtxCreate_v2(&mut ctx, 0, 0));
        let mut attr = 0;
        check(cuDeviceGetAttribute(
            &mut attr,
            CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH,
            0,
        ));
        assert_eq!(attr, 1, "an sm_90 device launches clusters");
        let mut module: CUmodule = null_mut();
        check(cuModuleLoadData(&mut module, PTX.as_ptr().cast()));
        let mut rank: CUfunction = null_mut();
        check(cuModuleGetFunction(&mut rank, module, c"rank".as_ptr()));
        let mut fixed: CUfunction = null_mut();
        check(cuModuleGetFunction(&mut fixed, module, c"fixed".as_ptr()));
        let mut dptr: CUdeviceptr = 0;
        check(cuMemAlloc_v2(&mut dptr, 32 * 4));

        let want = |n: u32, size: u32| (0..n).map(|b| b % size + 100 * size).collect::<Vec<_>>();
        assert_eq!(launch(rank, 8, Some([4, 1, 1]), &mut dptr), Ok(want(8, 4)));
        assert_eq!(launch(rank, 8, None, &mut dptr), Ok(want(8, 1)));
        // The kernel's own shape applies without the attribute; another
        // shape, a grid it does not divide, and more than 8 CTAs without
        // the opt-in are refused, and the context lives on.
        assert_eq!(launch(fixed, 4, None, &mut dptr), Ok(want(4, 2)));
        for (f, grid, dims) in [
            (fixed, 4, [4, 1, 1]),
            (rank, 6, [4, 1, 1]),
            (rank, 16, [16, 1, 1]),
        ] {
            assert_eq!(
                launch(f, grid, Some(dims), &mut dptr),
                Err(CUDA_ERROR_INVALID_CLUSTER_SIZE),
                "grid {grid} clusters {dims:?}"
            );
        }
        // Cluster occupancy: 32-thread blocks, 32 resident per SM, 16 SMs
        // per GPC.
        let mut sms = 0;
        check(cuDeviceGetAttribute(
            &mut sms,
            CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            0,
        ));
        let gpcs = (sms / 16).max(1);
        // CUlaunchConfig is plain data (integers and pointers); all-zero is
        // a valid value (no attributes, the default stream).
        let mut config: CUlaunchConfig = std::mem::zeroed();
        config.grid_dim = [8, 1, 1];
        config.block_dim = [32, 1, 1];
        let mut n = -1;
        check(cuOccupancyMaxPotentialClusterSize(&mut n, rank, &config));
        assert_eq!(n, 8, "the portable limit");
        assert_eq!(
            cuOccupancyMaxActiveClusters(&mut n, rank, &config),
            CUDA_ERROR_INVALID_CLUSTER_SIZE,
            "no cluster shape in the launch or the kernel"
        );
        check(cuOccupancyMaxActiveClusters(&mut n, fixed, &config));
        assert_eq!(n, 32 * 16 / 2 * gpcs, "the kernel's clusters of 2");
        let mut four = cluster_attribute([4, 1, 1]);
        config.attrs = &mut four;
        config.num_attrs = 1;
        check(cuOccupancyMaxActiveClusters(&mut n, rank, &config));
        assert_eq!(n, 32 * 16 / 4 * gpcs, "clusters of 4");
        assert_eq!(
            cuOccupancyMaxActiveClusters(&mut n, fixed, &config),
            CUDA_ERROR_INVALID_CLUSTER_SIZE,
            "a shape other than the kernel's"
        );
        config.attrs = null_mut();
        config.num_attrs = 0;

        check(cuFuncSetAttribute(
            rank,
            CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
            1,
        ));
        check(cuOccupancyMaxPotentialClusterSize(&mut n, rank, &config));
        assert_eq!(n, 16, "the non-portable limit after the opt-in");
        assert_eq!(
            launch(rank, 32, Some([16, 1, 1]), &mut dptr),
            Ok(want(32, 16))
        );

        let get = |f, a| {
            let mut v = -1;
            check(cuFuncGetAttribute(&mut v, a, f));
            v
        };
        assert_eq!(get(fixed, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH), 2);
        assert_eq!(get(fixed, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT), 1);
        assert_eq!(get(rank, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH), 0);
        assert_eq!(get(fixed, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET), 0);
        assert_eq!(
            get(rank, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED),
            1
        );
        check(cuMemFree_v2(dptr));
        check(cuCtxDestroy_v2(ctx));
    }
}
