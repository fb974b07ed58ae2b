//! CUDA arrays, texture and surface objects through the driver API: array
//! descriptors and their validation, copies by offset and by rectangle,
//! mipmapped levels, texture/surface object creation rules, the texture
//! limits `cuDeviceGetAttribute` reports, and hand-written PTX using
//! `txq`, `suq`, integer-coordinate `tex`, `tld4`, `suld`/`sust` (with the
//! expected values computed here). The runtime-API corpus
//! (`tests/runtime-api/texture_*.cu`, `surface_rw.cu`) covers sampling.

use cuda::api::array::*;
use cuda::api::context::*;
use cuda::api::device::*;
use cuda::api::launch::*;
use cuda::api::memory::*;
use cuda::api::memory2d::*;
use cuda::api::module::*;
use cuda::api::surface::*;
use cuda::api::texture::*;
use cuda::cu::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

fn check(code: CUresult) {
    assert_eq!(code, CUDA_SUCCESS, "{}", cuda::error_table::name_str(code));
}

fn context() {
    // SAFETY: out-pointers to locals.
    unsafe {
        check(cuInit(0));
        let mut ctx: CUcontext = null_mut();
        check(cuCtxCreate_v2(&mut ctx, 0, 0));
    }
}

/// Loads `ptx` (NUL-terminated) as a module; it and its kernel `name`.
fn load_kernel(ptx: &str, name: &std::ffi::CStr) -> (CUmodule, CUfunction) {
    let (mut module, mut f): (CUmodule, CUfunction) = (null_mut(), null_mut());
    // SAFETY: out-pointers to locals; `ptx` ends with a NUL.
    unsafe {
        check(cuModuleLoadData(&mut module, ptx.as_ptr().cast()));
        check(cuModuleGetFunction(&mut f, module, name.as_ptr()));
    }
    (module, f)
}

/// Launches `f` as one thread of one block on the legacy stream.
fn launch_one_thread(f: CUfunction, args: &mut [*mut c_void]) {
    // SAFETY: `args` holds the kernel's parameters; the caller keeps what
    // they point to alive for the call.
    check(unsafe {
        cuLaunchKernel(
            f,
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
    });
}

const U8: u32 = 0x01;
const U32: u32 = 0x03;
const F32: u32 = 0x20;

fn desc3d(
    w: usize,
    h: usize,
    d: usize,
    format: u32,
    channels: u32,
    flags: u32,
) -> CUDA_ARRAY3D_DESCRIPTOR {
    CUDA_ARRAY3D_DESCRIPTOR {
        width: w,
        height: h,
        depth: d,
        format,
        num_channels: channels,
        flags,
    }
}

fn create3d(desc: CUDA_ARRAY3D_DESCRIPTOR) -> Result<CUarray, CUresult> {
    let mut a: CUarray = null_mut();
    // SAFETY: out-pointer and descriptor are locals.
    let r = unsafe { cuArray3DCreate_v2(&mut a, &desc) };
    if r == CUDA_SUCCESS { Ok(a) } else { Err(r) }
}

#[test]
fn array_descriptors_are_validated_and_read_back() {
    context();
    let invalid = [
        desc3d(0, 0, 0, F32, 1, 0),                             // empty
        desc3d(4, 0, 0, 0x07, 1, 0),                            // unknown format
        desc3d(4, 4, 0, F32, 3, 0),                             // 3 channels
        desc3d(4, 0, 2, F32, 1, 0),                             // depth without height
        desc3d(4, 5, 6, F32, 1, CUDA_ARRAY3D_CUBEMAP),          // cube faces not square
        desc3d(4, 4, 5, F32, 1, CUDA_ARRAY3D_CUBEMAP),          // not 6 faces
        desc3d(4, 4, 0, F32, 1, 0x1000),                        // unknown flag
        desc3d(131073, 0, 0, F32, 1, 0),                        // above MAXIMUM_TEXTURE1D_WIDTH
        desc3d(32769, 0, 0, F32, 1, CUDA_ARRAY3D_SURFACE_LDST), // above MAXIMUM_SURFACE1D_WIDTH
        desc3d(4, 4, 2049, F32, 1, CUDA_ARRAY3D_LAYERED),       // too many layers
    ];
    for d in invalid {
        assert_eq!(create3d(d).err(), Some(CUDA_ERROR_INVALID_VALUE), "{d:?}");
    }
    // Valid in cuda.h, not emulated: sparse arrays, BC1 and NV12 formats.
    for d in [
        desc3d(64, 64, 0, F32, 1, 0x40),
        desc3d(64, 64, 0, 0x91, 4, 0),
        desc3d(64, 64, 0, 0xb0, 3, 0),
    ] {
        assert_eq!(create3d(d).err(), Some(CUDA_ERROR_NOT_SUPPORTED), "{d:?}");
    }
    let flags = CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST;
    let a = create3d(desc3d(5, 3, 4, U8, 4, flags)).expect("a layered array");
    // SAFETY: out-pointers to locals; `a` is live until destroyed.
    unsafe {
        let mut d3 = desc3d(0, 0, 0, 0, 0, 0);
        check(cuArray3DGetDescriptor_v2(&mut d3, a));
        assert_eq!(
            (
                d3.width,
                d3.height,
                d3.depth,
                d3.format,
                d3.num_channels,
                d3.flags
            ),
            (5, 3, 4, U8, 4, flags)
        );
        let mut d2 = CUDA_ARRAY_DESCRIPTOR {
            width: 0,
            height: 0,
            format: 0,
            num_channels: 0,
        };
        check(cuArrayGetDescriptor_v2(&mut d2, a));
        assert_eq!(
            (d2.width, d2.height, d2.format, d2.num_channels),
            (5, 3, U8, 4)
        );
        check(cuArrayDestroy(a));
        assert_eq!(cuArrayDestroy(a), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(
            cuArray3DGetDescriptor_v2(&mut d3, a),
            CUDA_ERROR_INVALID_HANDLE
        );

        let mut b: CUarray = null_mut();
        let d = CUDA_ARRAY_DESCRIPTOR {
            width: 8,
            height: 0,
            format: F32,
            num_channels: 2,
        };
        check(cuArrayCreate_v2(&mut b, &d));
        check(cuArray3DGetDescriptor_v2(&mut d3, b));
        assert_eq!((d3.width, d3.height, d3.depth, d3.flags), (8, 0, 0, 0));
        check(cuArrayDestroy(b));

        // Texture limits are reported.
        let mut v = 0;
        check(cuDeviceGetAttribute(&mut v, 22, 0)); // MAXIMUM_TEXTURE2D_WIDTH
        assert_eq!(v, 131072);
        check(cuDeviceGetAttribute(&mut v, 51, 0)); // TEXTURE_PITCH_ALIGNMENT
        assert_eq!(v, 32);
        check(cuDeviceGetAttribute(&mut v, 44, 0)); // CAN_TEX2D_GATHER
        assert_eq!(v, 1);
        let mut width = 0usize;
        check(cuDeviceGetTexture1DLinearMaxWidth(&mut width, F32, 4, 0));
        assert_eq!(width, 1 << 28);
        assert_eq!(
            cuDeviceGetTexture1DLinearMaxWidth(&mut width, F32, 3, 0),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuDeviceGetTexture1DLinearMaxWidth(&mut width, F32, 1, 99),
            CUDA_ERROR_INVALID_DEVICE
        );
    }
}

/// `tex.2d.v4.f32.s32` of texel (x, 0), all four channels to `out`.
const FETCH_PTX: &str = "\
.version 7.5
.target sm_80
.address_size 64
.visible .entry fetch(.param .u64 tex, .param .u64 out, .param .u32 x)
{
  .reg .b32 %r<3>;
  .reg .f32 %f<5>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [tex];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r1, [x];
  mov.u32 %r2, 0;
  tex.2d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd1, {%r1, %r2}];
  st.global.v4.f32 [%rd2], {%f1, %f2, %f3, %f4};
  ret;
}
\0";

#[test]
fn normalized_integer_formats_always_read_as_floats() {
    context();
    // SAFETY: out-pointers, host buffers and kernel arguments are locals.
    unsafe {
        // CU_AD_FORMAT_UNORM_INT8X4 needs 4 channels; SNORM_INT16X2 needs 2.
        assert_eq!(
            create3d(desc3d(4, 2, 0, 0xc2, 1, 0)).err(),
            Some(CUDA_ERROR_INVALID_VALUE)
        );
        let unorm = create3d(desc3d(2, 1, 0, 0xc2, 4, 0)).unwrap();
        let snorm = create3d(desc3d(2, 1, 0, 0xca, 2, 0)).unwrap();
        let bytes: [u8; 8] = [0, 51, 102, 255, 255, 0, 0, 17];
        check(cuMemcpyHtoA_v2(unorm, 0, bytes.as_ptr().cast(), 8));
        let halves: [i16; 4] = [-32768, 32767, 16384, -1];
        check(cuMemcpyHtoA_v2(snorm, 0, halves.as_ptr().cast(), 8));
        let (_, f) = load_kernel(FETCH_PTX, c"fetch");
        let mut out: CUdeviceptr = 0;
        check(cuMemAlloc_v2(&mut out, 16));
        let mut run = |array: CUarray, x: u32| -> [f32; 4] {
            // Read "as integer": ignored for normalized formats.
            let mut t: CUtexObject = 0;
            check(cuTexObjectCreate(
                &mut t,
                &CUDA_RESOURCE_DESC::for_array(array),
                &texture_desc(CU_TRSF_READ_AS_INTEGER),
                null(),
            ));
            let mut x = x;
            let mut args = [
                &mut t as *mut u64 as *mut c_void,
                &mut out as *mut u64 as *mut c_void,
                &mut x as *mut u32 as *mut c_void,
            ];
            launch_one_thread(f, &mut args);
            let mut got = [0f32; 4];
            check(cuMemcpyDtoH_v2(got.as_mut_ptr().cast(), out, 16));
            check(cuTexObjectDestroy(t));
            got
        };
        assert_eq!(run(unorm, 0), [0.0, 0.2, 0.4, 1.0]);
        assert_eq!(run(unorm, 1), [1.0, 0.0, 0.0, 17.0 / 255.0]);
        assert_eq!(run(snorm, 0), [-1.0, 1.0, 0.0, 1.0]);
        assert_eq!(run(snorm, 1), [16384.0 / 32767.0, -1.0 / 32767.0, 0.0, 1.0]);
        let mut d3 = desc3d(0, 0, 0, 0, 0, 0);
        check(cuArray3DGetDescriptor_v2(&mut d3, unorm));
        assert_eq!((d3.format, d3.num_channels), (0xc2, 4));
        check(cuArrayDestroy(unorm));
        check(cuArrayDestroy(snorm));
    }
}

#[test]
fn copies_by_offset_and_by_rectangle() {
    context();
    // SAFETY: host buffers are locals of the sizes passed.
    unsafe {
        // 6 x 4 array of u32.
        let a = create3d(desc3d(6, 4, 0, U32, 1, 0)).unwrap();
        let b = create3d(desc3d(6, 4, 0, U32, 1, 0)).unwrap();
        let src: Vec<u32> = (0..24).collect();
        check(cuMemcpyHtoA_v2(a, 0, src.as_ptr().cast(), 96));
        let mut back = vec![0u32; 24];
        check(cuMemcpyAtoH_v2(back.as_mut_ptr().cast(), a, 0, 96));
        assert_eq!(back, src);
        // Past the end: refused, nothing written.
        assert_eq!(
            cuMemcpyHtoA_v2(a, 80, src.as_ptr().cast(), 20),
            CUDA_ERROR_INVALID_VALUE
        );
        // Whole elements only, between arrays of one element size.
        assert_eq!(cuMemcpyAtoA_v2(b, 0, a, 0, 6), CUDA_ERROR_INVALID_VALUE);
        let bytes = create3d(desc3d(24, 0, 0, U8, 1, 0)).unwrap();
        assert_eq!(cuMemcpyAtoA_v2(bytes, 0, a, 0, 8), CUDA_ERROR_INVALID_VALUE);
        check(cuArrayDestroy(bytes));
        // Array to array by offset, then device round trip.
        check(cuMemcpyAtoA_v2(b, 4, a, 8, 40));
        let mut dptr: CUdeviceptr = 0;
        check(cuMemAlloc_v2(&mut dptr, 96));
        check(cuMemcpyAtoD_v2(dptr, b, 0, 96));
        let mut via_device = vec![0u32; 24];
        check(cuMemcpyDtoH_v2(via_device.as_mut_ptr().cast(), dptr, 96));
        assert_eq!(&via_device[1..11], &src[2..12]);
        assert_eq!(via_device[0], 0);
        check(cuMemcpyDtoA_v2(b, 0, dptr + 4, 8));
        check(cuMemcpyAtoH_v2(back.as_mut_ptr().cast(), b, 0, 8));
        assert_eq!(&back[..2], &src[2..4]);

        // A 3 x 2 rectangle of `a` at (2, 1) to host rows of 5 elements.
        let mut host = vec![0u32; 10];
        let mut c: CUDA_MEMCPY2D = std::mem::zeroed();
        c.src_memory_type = CU_MEMORYTYPE_ARRAY;
        c.src_array = a;
        c.src_x_in_bytes = 8;
        c.src_y = 1;
        c.dst_memory_type = CU_MEMORYTYPE_HOST;
        c.dst_host = host.as_mut_ptr().cast();
        c.dst_pitch = 20;
        c.width_in_bytes = 12;
        c.height = 2;
        check(cuMemcpy2D_v2(&c));
        assert_eq!(host, [8, 9, 10, 0, 0, 14, 15, 16, 0, 0]);
        // The rectangle must fit the array and start on an element.
        c.src_x_in_bytes = 6;
        assert_eq!(cuMemcpy2D_v2(&c), CUDA_ERROR_INVALID_VALUE);
        c.src_x_in_bytes = 8;
        c.src_y = 3;
        assert_eq!(cuMemcpy2D_v2(&c), CUDA_ERROR_INVALID_VALUE);
        c.src_y = 0;
        c.src_x_in_bytes = 16;
        assert_eq!(cuMemcpy2D_v2(&c), CUDA_ERROR_INVALID_VALUE);

        // Array to array rectangle with cuMemcpy3D.
        let mut c3: CUDA_MEMCPY3D = std::mem::zeroed();
        c3.src_memory_type = CU_MEMORYTYPE_ARRAY;
        c3.src_array = a;
        c3.dst_memory_type = CU_MEMORYTYPE_ARRAY;
        c3.dst_array = b;
        c3.dst_x_in_bytes = 4;
        c3.dst_y = 2;
        c3.width_in_bytes = 8;
        c3.height = 2;
        c3.depth = 1;
        check(cuMemcpy3D_v2(&c3));
        check(cuMemcpyAtoH_v2(back.as_mut_ptr().cast(), b, 0, 96));
        assert_eq!(&back[13..15], &[0, 1]);
        assert_eq!(&back[19..21], &[6, 7]);
        c3.depth = 2;
        assert_eq!(cuMemcpy3D_v2(&c3), CUDA_ERROR_INVALID_VALUE);

        check(cuArrayDestroy(a));
        check(cuArrayDestroy(b));
        check(cuMemFree_v2(dptr));
    }
}

#[test]
fn mipmapped_arrays_halve_each_level() {
    context();
    // SAFETY: out-pointers to locals.
    unsafe {
        let d = desc3d(8, 4, 0, F32, 1, 0);
        let mut m: CUmipmappedArray = null_mut();
        assert_eq!(
            cuMipmappedArrayCreate(&mut m, &d, 5),
            CUDA_ERROR_INVALID_VALUE
        );
        check(cuMipmappedArrayCreate(&mut m, &d, 4));
        let mut extents = Vec::new();
        for l in 0..4 {
            let mut level: CUarray = null_mut();
            check(cuMipmappedArrayGetLevel(&mut level, m, l));
            let mut got = desc3d(0, 0, 0, 0, 0, 0);
            check(cuArray3DGetDescriptor_v2(&mut got, level));
            extents.push((got.width, got.height));
            if l == 1 {
                // Levels belong to their mipmapped array.
                assert_eq!(cuArrayDestroy(level), CUDA_ERROR_INVALID_VALUE);
            }
        }
        assert_eq!(extents, [(8, 4), (4, 2), (2, 1), (1, 1)]);
        let mut level: CUarray = null_mut();
        assert_eq!(
            cuMipmappedArrayGetLevel(&mut level, m, 4),
            CUDA_ERROR_INVALID_VALUE
        );
        check(cuMipmappedArrayDestroy(m));
        assert_eq!(cuMipmappedArrayDestroy(m), CUDA_ERROR_INVALID_HANDLE);
    }
}

fn texture_desc(flags: u32) -> CUDA_TEXTURE_DESC {
    // SAFETY: plain data; all-zero is a valid value (wrap, point).
    let mut t: CUDA_TEXTURE_DESC = unsafe { std::mem::zeroed() };
    t.address_mode = [1; 3];
    t.flags = flags;
    t
}

fn resource_pitch2d(
    ptr: u64,
    format: u32,
    channels: u32,
    w: usize,
    h: usize,
    pitch: usize,
) -> CUDA_RESOURCE_DESC {
    let mut res = [0u64; 16];
    res[0] = ptr;
    res[1] = format as u64 | (channels as u64) << 32;
    res[2] = w as u64;
    res[3] = h as u64;
    res[4] = pitch as u64;
    CUDA_RESOURCE_DESC {
        res_type: CU_RESOURCE_TYPE_PITCH2D,
        res,
        flags: 0,
    }
}

#[test]
fn texture_and_surface_objects_follow_the_creation_rules() {
    context();
    // SAFETY: out-pointers and descriptors are locals.
    unsafe {
        let mut dptr: CUdeviceptr = 0;
        check(cuMemAlloc_v2(&mut dptr, 64 * 16));
        let mut t: CUtexObject = 0;
        let td = texture_desc(0);
        let good = resource_pitch2d(dptr, F32, 1, 16, 16, 64);
        check(cuTexObjectCreate(&mut t, &good, &td, null()));
        assert_ne!(t, 0);
        let mut back: CUDA_RESOURCE_DESC = std::mem::zeroed();
        check(cuTexObjectGetResourceDesc(&mut back, t));
        assert_eq!(
            (back.res_type, back.res[0], back.res[4]),
            (CU_RESOURCE_TYPE_PITCH2D, dptr, 64)
        );
        let mut tex_back: CUDA_TEXTURE_DESC = std::mem::zeroed();
        check(cuTexObjectGetTextureDesc(&mut tex_back, t));
        assert_eq!(tex_back.address_mode, [1; 3]);
        let mut view: CUDA_RESOURCE_VIEW_DESC = std::mem::zeroed();
        assert_eq!(
            cuTexObjectGetResourceViewDesc(&mut view, t),
            CUDA_ERROR_INVALID_VALUE
        );
        check(cuTexObjectDestroy(t));
        assert_ne!(cuTexObjectDestroy(t), CUDA_SUCCESS);

        // Pitch not a multiple of TEXTURE_PITCH_ALIGNMENT, rows wider than the pitch, flags.
        for bad in [
            resource_pitch2d(dptr, F32, 1, 4, 4, 48),
            resource_pitch2d(dptr, F32, 1, 17, 4, 64),
            resource_pitch2d(dptr, F32, 3, 4, 4, 64),
            resource_pitch2d(0, F32, 1, 4, 4, 64),
        ] {
            assert_eq!(
                cuTexObjectCreate(&mut t, &bad, &td, null()),
                CUDA_ERROR_INVALID_VALUE
            );
        }
        let mut flagged = good;
        flagged.flags = 1;
        assert_eq!(
            cuTexObjectCreate(&mut t, &flagged, &td, null()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuTexObjectCreate(&mut t, &good, null(), null()),
            CUDA_ERROR_INVALID_VALUE
        );

        // Arrays: a view that keeps everything is accepted and read back; one
        // that reinterprets the format is not something the emulator does.
        let a = create3d(desc3d(8, 8, 0, F32, 1, 0)).unwrap();
        let res = CUDA_RESOURCE_DESC::for_array(a);
        let mut v: CUDA_RESOURCE_VIEW_DESC = std::mem::zeroed();
        v.width = 8;
        v.height = 8;
        check(cuTexObjectCreate(&mut t, &res, &td, &v));
        check(cuTexObjectGetResourceViewDesc(&mut view, t));
        assert_eq!((view.width, view.height), (8, 8));
        check(cuTexObjectDestroy(t));
        v.format = 0x0d; // CU_RES_VIEW_FORMAT_UINT_1X32
        assert_eq!(
            cuTexObjectCreate(&mut t, &res, &td, &v),
            CUDA_ERROR_NOT_SUPPORTED
        );

        // A surface over an array made without CUDA_ARRAY3D_SURFACE_LDST is
        // created, as NVIDIA's driver 580 does (the API reference asks for
        // the flag).
        let mut s: CUsurfObject = 0;
        check(cuSurfObjectCreate(&mut s, &res));
        check(cuSurfObjectDestroy(s));
        let ldst = create3d(desc3d(8, 8, 0, F32, 1, CUDA_ARRAY3D_SURFACE_LDST)).unwrap();
        let res = CUDA_RESOURCE_DESC::for_array(ldst);
        check(cuSurfObjectCreate(&mut s, &res));
        check(cuSurfObjectGetResourceDesc(&mut back, s));
        assert_eq!(back.res[0], ldst as u64);
        // A surface handle is not a texture handle.
        assert_ne!(cuTexObjectDestroy(s), CUDA_SUCCESS);
        check(cuSurfObjectDestroy(s));

        // Mipmapped arrays need normalized coordinates.
        let mut m: CUmipmappedArray = null_mut();
        check(cuMipmappedArrayCreate(
            &mut m,
            &desc3d(4, 4, 0, F32, 1, 0),
            2,
        ));
        let mut mres = CUDA_RESOURCE_DESC::for_array(m);
        mres.res_type = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
        assert_eq!(
            cuTexObjectCreate(&mut t, &mres, &td, null()),
            CUDA_ERROR_INVALID_VALUE
        );
        check(cuTexObjectCreate(
            &mut t,
            &mres,
            &texture_desc(CU_TRSF_NORMALIZED_COORDINATES),
            null(),
        ));
        check(cuTexObjectDestroy(t));
        check(cuMipmappedArrayDestroy(m));
        check(cuArrayDestroy(a));
        check(cuArrayDestroy(ldst));
        check(cuMemFree_v2(dptr));
    }
}

/// `txq`/`suq` results, an integer-coordinate `tex`, a `tld4`, `suld` with
/// trap and clamp, and a `sust`, each stored to `out`.
const PTX: &str = "\
.version 7.5
.target sm_80
.address_size 64
.visible .entry probe(.param .u64 tex, .param .u64 surf, .param .u64 out)
{
  .reg .b32 %r<40>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [tex];
  ld.param.u64 %rd2, [surf];
  ld.param.u64 %rd3, [out];
  txq.width.b32 %r1, [%rd1];
  txq.height.b32 %r2, [%rd1];
  txq.normalized_coords.b32 %r3, [%rd1];
  txq.filter_mode.b32 %r4, [%rd1];
  txq.num_mipmap_levels.b32 %r5, [%rd1];
  txq.channel_order.b32 %r6, [%rd1];
  suq.width.b32 %r7, [%rd2];
  suq.height.b32 %r8, [%rd2];
  st.global.v4.u32 [%rd3], {%r1, %r2, %r3, %r4};
  st.global.v4.u32 [%rd3+16], {%r5, %r6, %r7, %r8};
  mov.u32 %r9, 2;
  mov.u32 %r10, 1;
  tex.2d.v4.u32.s32 {%r11, %r12, %r13, %r14}, [%rd1, {%r9, %r10}];
  st.global.v4.u32 [%rd3+32], {%r11, %r12, %r13, %r14};
  mov.f32 %f1, 0f3FC00000;
  mov.f32 %f2, 0f3F800000;
  tld4.g.2d.v4.u32.f32 {%r15, %r16, %r17, %r18}, [%rd1, {%f1, %f2}];
  st.global.v4.u32 [%rd3+48], {%r15, %r16, %r17, %r18};
  mov.u32 %r19, 8;
  suld.b.2d.b32.trap {%r20}, [%rd2, {%r19, %r10}];
  mov.u32 %r21, 1000;
  suld.b.2d.b32.clamp {%r22}, [%rd2, {%r21, %r10}];
  suld.b.2d.b32.zero {%r23}, [%rd2, {%r21, %r10}];
  mov.u32 %r24, 43981;
  sust.b.2d.b32.trap [%rd2, {%r19, %r10}], {%r24};
  suld.b.2d.b32.trap {%r25}, [%rd2, {%r19, %r10}];
  st.global.v4.u32 [%rd3+64], {%r20, %r22, %r23, %r25};
  ret;
}
\0";

#[test]
fn ptx_queries_fetches_and_surface_accesses() {
    context();
    // SAFETY: out-pointers, host buffers and kernel arguments are locals.
    unsafe {
        // 4 x 3 uchar4 texture read as integers; texel (x, y) = (x + 10y, +100, 7, 200).
        let tex_array = create3d(desc3d(4, 3, 0, U8, 4, 0)).unwrap();
        let texel = |x: u32, y: u32| [x + 10 * y, x + 10 * y + 100, 7, 200];
        let bytes: Vec<u8> = (0..3)
            .flat_map(|y| (0..4).flat_map(move |x| texel(x, y).map(|c| c as u8)))
            .collect();
        check(cuMemcpyHtoA_v2(
            tex_array,
            0,
            bytes.as_ptr().cast(),
            bytes.len(),
        ));
        let mut t: CUtexObject = 0;
        check(cuTexObjectCreate(
            &mut t,
            &CUDA_RESOURCE_DESC::for_array(tex_array),
            &texture_desc(CU_TRSF_READ_AS_INTEGER),
            null(),
        ));
        // 4 x 3 u32 surface, element (x, y) = 1000 y + x.
        let surf_array = create3d(desc3d(4, 3, 0, U32, 1, CUDA_ARRAY3D_SURFACE_LDST)).unwrap();
        let words: Vec<u32> = (0..12).map(|i| 1000 * (i / 4) + i % 4).collect();
        check(cuMemcpyHtoA_v2(surf_array, 0, words.as_ptr().cast(), 48));
        let mut s: CUsurfObject = 0;
        check(cuSurfObjectCreate(
            &mut s,
            &CUDA_RESOURCE_DESC::for_array(surf_array),
        ));

        let (_, f) = load_kernel(PTX, c"probe");
        let mut out: CUdeviceptr = 0;
        check(cuMemAlloc_v2(&mut out, 80));
        let mut args = [
            &mut t as *mut u64 as *mut c_void,
            &mut s as *mut u64 as *mut c_void,
            &mut out as *mut u64 as *mut c_void,
        ];
        launch_one_thread(f, &mut args);
        check(cuCtxSynchronize());
        let mut got = [0u32; 20];
        check(cuMemcpyDtoH_v2(got.as_mut_ptr().cast(), out, 80));
        // txq: 4 x 3, unnormalized, point, 1 level, CL_RGBA; suq: 4 x 3.
        assert_eq!(&got[0..8], &[4, 3, 0, 0, 1, 0x10B5, 4, 3]);
        assert_eq!(&got[8..12], &texel(2, 1));
        // tld4 at (1.5, 1.0): footprint x 1..2, y 0..1; green of (1,1) (2,1) (2,0) (1,0).
        let g = |x, y| texel(x, y)[1];
        assert_eq!(&got[12..16], &[g(1, 1), g(2, 1), g(2, 0), g(1, 0)]);
        // suld (2,1); clamped x = 1000 bytes -> texel 3 of row 1; zero; after sust.
        assert_eq!(&got[16..20], &[1002, 1003, 0, 43981]);
        let mut back = vec![0u32; 12];
        check(cuMemcpyAtoH_v2(back.as_mut_ptr().cast(), surf_array, 0, 48));
        assert_eq!(back[6], 43981);
        check(cuTexObjectDestroy(t));
        check(cuSurfObjectDestroy(s));
        check(cuArrayDestroy(tex_array));
        check(cuArrayDestroy(surf_array));
    }
}

#[test]
fn independent_mode_and_bad_handles_are_reported() {
    context();
    // SAFETY: out-pointers and kernel arguments are locals.
    unsafe {
        // Independent mode (a separate sampler operand) is refused at load.
        let independent = "\
.version 7.5
.target sm_80
.address_size 64
.visible .entry k(.param .u64 t, .param .u64 smp)
{
  .reg .f32 %f<6>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [t];
  ld.param.u64 %rd2, [smp];
  mov.f32 %f1, 0f00000000;
  tex.2d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [%rd1, %rd2, {%f1, %f1}];
  ret;
}
\0";
        let mut module: CUmodule = null_mut();
        assert_ne!(
            cuModuleLoadData(&mut module, independent.as_ptr().cast()),
            CUDA_SUCCESS
        );

        // A handle that is no texture object faults the launch.
        let ptx = "\
.version 7.5
.target sm_80
.address_size 64
.visible .entry k(.param .u64 tex)
{
  .reg .f32 %f<6>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [tex];
  mov.f32 %f1, 0f00000000;
  tex.2d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [%rd1, {%f1, %f1}];
  ret;
}
\0";
        let (_, f) = load_kernel(ptx, c"k");
        let mut bogus: u64 = 0x1234_5678;
        let mut args = [&mut bogus as *mut u64 as *mut c_void];
        let launched = cuLaunchKernel(
            f,
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
        );
        let synced = cuCtxSynchronize();
        assert!(
            launched == CUDA_ERROR_ILLEGAL_ADDRESS || synced == CUDA_ERROR_ILLEGAL_ADDRESS,
            "launch {launched}, sync {synced}"
        );
    }
}

/// Module `.texref`/`.surfref` variables bound through the legacy API.
const REFS_PTX: &str = "\
.version 7.5
.target sm_80
.address_size 64
.global .texref tlin;
.global .texref t2d;
.global .surfref s2d;
.visible .entry refs(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .f32 %f<12>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, 3;
  tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [tlin, {%r1}];
  mov.f32 %f5, 0f3FE00000;
  mov.f32 %f6, 0f3F000000;
  tex.2d.v4.f32.f32 {%f7, %f8, %f9, %f10}, [t2d, {%f5, %f6}];
  mov.u32 %r2, 4;
  mov.u32 %r3, 0;
  suld.b.2d.b32.trap {%r4}, [s2d, {%r2, %r3}];
  txq.width.b32 %r5, [t2d];
  st.global.f32 [%rd1], %f1;
  st.global.f32 [%rd1+4], %f7;
  st.global.u32 [%rd1+8], %r4;
  st.global.u32 [%rd1+12], %r5;
  ret;
}
\0";

#[test]
fn texture_and_surface_references_bind_module_variables() {
    context();
    // SAFETY: out-pointers, host buffers and kernel arguments are locals.
    unsafe {
        let (module, f) = load_kernel(REFS_PTX, c"refs");
        let (mut tlin, mut t2d, mut again): (CUtexref, CUtexref, CUtexref) =
            (null_mut(), null_mut(), null_mut());
        check(cuModuleGetTexRef(&mut tlin, module, c"tlin".as_ptr()));
        check(cuModuleGetTexRef(&mut t2d, module, c"t2d".as_ptr()));
        check(cuModuleGetTexRef(&mut again, module, c"t2d".as_ptr()));
        assert_eq!(t2d, again, "one reference per variable");
        assert_eq!(
            cuModuleGetTexRef(&mut again, module, c"missing".as_ptr()),
            CUDA_ERROR_NOT_FOUND
        );
        assert_eq!(cuTexRefDestroy(t2d), CUDA_ERROR_INVALID_VALUE);

        // Linear memory: 0, 10, 20, ...
        let lin: Vec<f32> = (0..8).map(|i| i as f32 * 10.0).collect();
        let mut dlin: CUdeviceptr = 0;
        check(cuMemAlloc_v2(&mut dlin, 32));
        check(cuMemcpyHtoD_v2(dlin, lin.as_ptr().cast(), 32));
        check(cuTexRefSetFormat(tlin, F32, 1));
        let mut offset = 1usize;
        check(cuTexRefSetAddress_v2(&mut offset, tlin, dlin, 32));
        assert_eq!(offset, 0);
        let mut got_ptr: CUdeviceptr = 0;
        check(cuTexRefGetAddress_v2(&mut got_ptr, tlin));
        assert_eq!(got_ptr, dlin);

        // A 4 x 2 float array, x + 100 y, then linear filtering.
        let a = create3d(desc3d(4, 2, 0, F32, 1, 0)).unwrap();
        let v: Vec<f32> = (0..8)
            .map(|i| (i % 4) as f32 + 100.0 * (i / 4) as f32)
            .collect();
        check(cuMemcpyHtoA_v2(a, 0, v.as_ptr().cast(), 32));
        assert_eq!(cuTexRefSetArray(t2d, a, 0), CUDA_ERROR_INVALID_VALUE);
        check(cuTexRefSetArray(t2d, a, CU_TRSA_OVERRIDE_FORMAT));
        check(cuTexRefSetFilterMode(t2d, 1));
        let (mut fm, mut am, mut fmt, mut ch) = (0u32, 9u32, 0u32, 0i32);
        check(cuTexRefGetFilterMode(&mut fm, t2d));
        check(cuTexRefGetAddressMode(&mut am, t2d, 0));
        check(cuTexRefGetFormat(&mut fmt, &mut ch, t2d));
        assert_eq!((fm, am, fmt, ch), (1, 1, F32, 1));
        let mut bound: CUarray = null_mut();
        check(cuTexRefGetArray(&mut bound, t2d));
        assert_eq!(bound, a);
        check(cuParamSetTexRef(f, CU_PARAM_TR_DEFAULT, t2d));

        // A 4 x 2 u32 surface, 7 + x + 10 y.
        let s = create3d(desc3d(4, 2, 0, U32, 1, CUDA_ARRAY3D_SURFACE_LDST)).unwrap();
        let w: Vec<u32> = (0..8).map(|i| 7 + i % 4 + 10 * (i / 4)).collect();
        check(cuMemcpyHtoA_v2(s, 0, w.as_ptr().cast(), 32));
        let mut sref: CUsurfref = null_mut();
        check(cuModuleGetSurfRef(&mut sref, module, c"s2d".as_ptr()));
        assert_eq!(cuSurfRefSetArray(sref, a, 0), CUDA_ERROR_INVALID_VALUE);
        check(cuSurfRefSetArray(sref, s, 0));
        check(cuSurfRefGetArray(&mut bound, sref));
        assert_eq!(bound, s);

        let mut out: CUdeviceptr = 0;
        check(cuMemAlloc_v2(&mut out, 16));
        let mut args = [&mut out as *mut u64 as *mut c_void];
        launch_one_thread(f, &mut args);
        check(cuCtxSynchronize());
        let mut got = [0u32; 4];
        check(cuMemcpyDtoH_v2(got.as_mut_ptr().cast(), out, 16));
        assert_eq!(f32::from_bits(got[0]), 30.0, "tex1Dfetch through tlin");
        // (1.75, 0.5): a quarter of the way from texel 1 to texel 2 of row 0.
        assert_eq!(
            f32::from_bits(got[1]),
            0.75 * 1.0 + 0.25 * 2.0,
            "bilinear through t2d"
        );
        assert_eq!(got[2], 8, "suld through s2d");
        assert_eq!(got[3], 4, "txq.width through t2d");
        check(cuArrayDestroy(a));
        check(cuArrayDestroy(s));
    }
}

/// `tex.grad.2d` at the centre of a mipmapped texture with `dPdx = (gx, 0)`.
const GRAD_PTX: &str = "\
.version 7.5
.target sm_80
.address_size 64
.visible .entry grad(.param .u64 tex, .param .u64 out, .param .f32 gx)
{
  .reg .f32 %f<8>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [tex];
  ld.param.u64 %rd2, [out];
  ld.param.f32 %f1, [gx];
  mov.f32 %f2, 0f3F000000;
  mov.f32 %f3, 0f00000000;
  tex.grad.2d.v4.f32.f32 {%f4, %f5, %f6, %f7}, [%rd1, {%f2, %f2}], {%f1, %f3}, {%f3, %f3};
  st.global.f32 [%rd2], %f4;
  ret;
}
\0";

#[test]
fn gradients_choose_the_mip_level() {
    context();
    // SAFETY: out-pointers, host buffers and kernel arguments are locals.
    unsafe {
        // 8 x 8, 4 levels; every texel of level l holds 10 (l + 1).
        let mut m: CUmipmappedArray = null_mut();
        check(cuMipmappedArrayCreate(
            &mut m,
            &desc3d(8, 8, 0, F32, 1, 0),
            4,
        ));
        for l in 0..4u32 {
            let mut level: CUarray = null_mut();
            check(cuMipmappedArrayGetLevel(&mut level, m, l));
            let side = 8usize >> l;
            let v = vec![10.0f32 * (l + 1) as f32; side * side];
            check(cuMemcpyHtoA_v2(level, 0, v.as_ptr().cast(), v.len() * 4));
        }
        let mut res = CUDA_RESOURCE_DESC::for_array(m);
        res.res_type = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
        let (_, f) = load_kernel(GRAD_PTX, c"grad");
        let mut out: CUdeviceptr = 0;
        check(cuMemAlloc_v2(&mut out, 4));
        for (mip_filter, gx, want) in [
            (0u32, 2.0f32 / 8.0, 20.0f32), // footprint 2 texels: level 1
            (0, 4.0 / 8.0, 30.0),          // 4 texels: level 2
            (0, 1.0 / 16.0, 10.0),         // magnified: level 0
            (0, 64.0 / 8.0, 40.0),         // beyond the last level: clamped
            (1, 3.0 / 8.0, 20.0 + 10.0 * 150.0 / 256.0), // log2(3) = 1.585: 8-bit weight 150/256
        ] {
            let mut td = texture_desc(CU_TRSF_NORMALIZED_COORDINATES);
            td.mipmap_filter_mode = mip_filter;
            td.max_mipmap_level_clamp = 3.0;
            let mut t: CUtexObject = 0;
            check(cuTexObjectCreate(&mut t, &res, &td, null()));
            let mut gx = gx;
            let mut args = [
                &mut t as *mut u64 as *mut c_void,
                &mut out as *mut u64 as *mut c_void,
                &mut gx as *mut f32 as *mut c_void,
            ];
            launch_one_thread(f, &mut args);
            let mut got = 0f32;
            check(cuMemcpyDtoH_v2((&mut got as *mut f32).cast(), out, 4));
            assert_eq!(got, want, "mip filter {mip_filter}, dPdx.x {gx}");
            check(cuTexObjectDestroy(t));
        }
        check(cuMipmappedArrayDestroy(m));
    }
}
