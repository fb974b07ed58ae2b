//! Kernels and launch helpers shared by the virtual-memory, pool and
//! multi-device tests (hand-written PTX: no compiler needed).

#![allow(dead_code)]

use cuda::api::launch::*;
use cuda::api::module::*;
use cuda::cu::*;
use std::ffi::c_void;
use std::ptr::null_mut;

/// `add_one(p, n)`: `p[i] += 1` for every `i < n`;
/// `copy_word(src, dst)`: `*dst = *src` (one thread).
pub const PTX: &std::ffi::CStr = c".version 8.0
.target sm_80
.address_size 64

.visible .entry add_one(.param .u64 p, .param .u32 n)
{
  .reg .pred %p1;
  .reg .b32 %r<7>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  mul.wide.u32 %rd2, %r5, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r6, [%rd3];
  add.s32 %r6, %r6, 1;
  st.global.u32 [%rd3], %r6;
DONE:
  ret;
}

.visible .entry copy_word(.param .u64 src, .param .u64 dst)
{
  .reg .b32 %r1;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [dst];
  ld.global.u32 %r1, [%rd1];
  st.global.u32 [%rd2], %r1;
  ret;
}
";

/// The two kernels, loaded into the current context.
pub struct Kernels {
    pub add_one: CUfunction,
    pub copy_word: CUfunction,
}

pub fn load() -> Kernels {
    // SAFETY: out-pointers to live locals; `PTX` is a NUL-terminated string literal.
    unsafe {
        let mut module: CUmodule = null_mut();
        assert_eq!(
            cuModuleLoadData(&mut module, PTX.as_ptr().cast()),
            CUDA_SUCCESS
        );
        let mut add_one: CUfunction = null_mut();
        let mut copy_word: CUfunction = null_mut();
        assert_eq!(
            cuModuleGetFunction(&mut add_one, module, c"add_one".as_ptr()),
            CUDA_SUCCESS
        );
        assert_eq!(
            cuModuleGetFunction(&mut copy_word, module, c"copy_word".as_ptr()),
            CUDA_SUCCESS
        );
        Kernels { add_one, copy_word }
    }
}

/// Runs `add_one(p, n)` with 128-thread blocks.
pub fn add_one(k: &Kernels, p: u64, n: u32) -> CUresult {
    let (mut p, mut n) = (p, n);
    let mut args: [*mut c_void; 2] = [(&mut p as *mut u64).cast(), (&mut n as *mut u32).cast()];
    let blocks = n.div_ceil(128);
    // SAFETY: `args` holds one pointer per kernel parameter (`p`: u64, `n`: u32), live locals that outlive
    // the synchronous launch.
    unsafe {
        cuLaunchKernel(
            k.add_one,
            blocks,
            1,
            1,
            128,
            1,
            1,
            0,
            null_mut(),
            args.as_mut_ptr(),
            null_mut(),
        )
    }
}

/// Runs `copy_word(src, dst)` on one thread.
pub fn copy_word(k: &Kernels, src: u64, dst: u64) -> CUresult {
    let (mut src, mut dst) = (src, dst);
    let mut args: [*mut c_void; 2] = [(&mut src as *mut u64).cast(), (&mut dst as *mut u64).cast()];
    // SAFETY: `args` holds one pointer per kernel parameter (`src`, `dst`: u64), live locals that outlive
    // the synchronous launch.
    unsafe {
        cuLaunchKernel(
            k.copy_word,
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
        )
    }
}
