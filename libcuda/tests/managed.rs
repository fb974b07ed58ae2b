//! Managed memory and mapped (zero-copy) host memory: one pointer valid on
//! the host and in the emulated device, its pointer attributes, prefetch and
//! advice, copies and memsets through it, and the error cases.

use cuda::api::context::*;
use cuda::api::device::*;
use cuda::api::memory::*;
use cuda::api::pointer::*;
use cuda::cu::*;
use std::ffi::{c_uint, c_void};
use std::ptr::null_mut;

const IS_MANAGED: c_uint = 8;
const MEMORY_TYPE: c_uint = 2;
const DEVICE_POINTER: c_uint = 3;
const HOST_POINTER: c_uint = 4;
const RANGE_SIZE: c_uint = 12;
const MEMORYTYPE_HOST: u32 = 1;
const MEMORYTYPE_DEVICE: u32 = 2;
const ATTACH_GLOBAL: c_uint = 1;
const ATTACH_HOST: c_uint = 2;
const DEVICEMAP: c_uint = 2;

fn context() {
    // SAFETY: `ctx` is a live local.
    unsafe {
        assert_eq!(cuInit(0), CUDA_SUCCESS);
        let mut ctx: CUcontext = null_mut();
        assert_eq!(cuCtxCreate_v2(&mut ctx, 0, 0), CUDA_SUCCESS);
    }
}

fn attr_u32(attribute: c_uint, ptr: u64) -> Result<u32, CUresult> {
    let mut v = 0u32;
    // SAFETY: `v` is a live u32, the size of the attributes this helper asks for.
    let r = unsafe { cuPointerGetAttribute((&mut v as *mut u32).cast(), attribute, ptr) };
    if r == CUDA_SUCCESS { Ok(v) } else { Err(r) }
}

fn attr_u64(attribute: c_uint, ptr: u64) -> Result<u64, CUresult> {
    let mut v = 0u64;
    // SAFETY: `v` is a live u64, the size of the attributes this helper asks for.
    let r = unsafe { cuPointerGetAttribute((&mut v as *mut u64).cast(), attribute, ptr) };
    if r == CUDA_SUCCESS { Ok(v) } else { Err(r) }
}

#[test]
fn managed_memory_is_one_pointer_for_host_and_device() {
    context();
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned. Managed and mapped
    // host memory is read through the pointers the driver returned, within the sizes allocated.
    unsafe {
        let n = 1000usize;
        let mut m: CUdeviceptr = 0;
        assert_eq!(
            cuMemAllocManaged(&mut m, n * 4, ATTACH_GLOBAL),
            CUDA_SUCCESS
        );
        assert_ne!(m, 0);
        let host = std::slice::from_raw_parts_mut(m as *mut u32, n);
        assert!(host.iter().all(|&v| v == 0), "managed memory starts zeroed");
        for (i, v) in host.iter_mut().enumerate() {
            *v = i as u32;
        }
        // What the host wrote, the device reads, and the reverse.
        let mut out = vec![0u32; n];
        assert_eq!(
            cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), m, n * 4),
            CUDA_SUCCESS
        );
        assert_eq!(out, (0..n as u32).collect::<Vec<_>>());
        assert_eq!(cuMemsetD32_v2(m + 16, 0xabcd, 10), CUDA_SUCCESS);
        assert_eq!(host[3], 3);
        assert!(host[4..14].iter().all(|&v| v == 0xabcd));
        assert_eq!(host[14], 14);
        // Managed <-> device copies, direction inferred by cuMemcpy.
        let mut d: CUdeviceptr = 0;
        assert_eq!(cuMemAlloc_v2(&mut d, n * 4), CUDA_SUCCESS);
        assert_eq!(cuMemcpy(d, m, n * 4), CUDA_SUCCESS);
        assert_eq!(cuMemsetD32_v2(m, 7, n), CUDA_SUCCESS);
        assert_eq!(cuMemcpy(m, d, 8), CUDA_SUCCESS);
        assert_eq!(&host[..3], &[0, 1, 7]);
        let src = [9u32; 4];
        assert_eq!(
            cuMemcpyHtoD_v2(m + 400, src.as_ptr().cast(), 16),
            CUDA_SUCCESS
        );
        assert_eq!(&host[100..105], &[9, 9, 9, 9, 7]);
        // Bounds are still the allocation's.
        assert_eq!(
            cuMemsetD8_v2(m + n as u64 * 4 - 2, 1, 4),
            CUDA_ERROR_INVALID_VALUE
        );

        // Pointer attributes.
        assert_eq!(attr_u32(IS_MANAGED, m + 40), Ok(1));
        assert_eq!(attr_u32(MEMORY_TYPE, m + 40), Ok(MEMORYTYPE_DEVICE));
        assert_eq!(attr_u64(DEVICE_POINTER, m + 40), Ok(m + 40));
        assert_eq!(attr_u64(HOST_POINTER, m + 40), Ok(m + 40));
        assert_eq!(attr_u64(RANGE_SIZE, m + 40), Ok(n as u64 * 4));
        assert_eq!(attr_u32(IS_MANAGED, d), Ok(0));
        assert_eq!(attr_u64(HOST_POINTER, d), Err(CUDA_ERROR_INVALID_VALUE));
        let mut attrs = [IS_MANAGED, MEMORY_TYPE];
        let (mut managed, mut kind) = (0u32, 0u32);
        let mut data: [*mut c_void; 2] = [
            (&mut managed as *mut u32).cast(),
            (&mut kind as *mut u32).cast(),
        ];
        assert_eq!(
            cuPointerGetAttributes(2, attrs.as_mut_ptr(), data.as_mut_ptr(), m),
            CUDA_SUCCESS
        );
        assert_eq!((managed, kind), (1, MEMORYTYPE_DEVICE));

        // Prefetch and advice: accepted on managed ranges only.
        assert_eq!(cuMemPrefetchAsync(m, n * 4, 0, null_mut()), CUDA_SUCCESS);
        assert_eq!(cuMemPrefetchAsync(m, n * 4, -1, null_mut()), CUDA_SUCCESS);
        assert_eq!(
            cuMemPrefetchAsync(m, n * 4, 3, null_mut()),
            CUDA_ERROR_INVALID_DEVICE
        );
        assert_eq!(
            cuMemPrefetchAsync(m, n * 4 + 1, 0, null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuMemPrefetchAsync(d, 4, 0, null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
        let device = CUmemLocation { type_: 1, id: 0 };
        let host_loc = CUmemLocation { type_: 2, id: 0 };
        assert_eq!(
            cuMemPrefetchAsync_v2(m + 8, 64, device, 0, null_mut()),
            CUDA_SUCCESS
        );
        assert_eq!(
            cuMemPrefetchAsync_v2(m, 64, host_loc, 0, null_mut()),
            CUDA_SUCCESS
        );
        assert_eq!(
            cuMemPrefetchAsync_v2(m, 64, device, 1, null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
        let bad = CUmemLocation { type_: 9, id: 0 };
        assert_eq!(
            cuMemPrefetchAsync_v2(m, 64, bad, 0, null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuMemAdvise(m, n * 4, 1, 0), CUDA_SUCCESS);
        assert_eq!(cuMemAdvise(m, n * 4, 0, 0), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(cuMemAdvise(d, 4, 1, 0), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(cuMemAdvise_v2(m, 4, 5, device), CUDA_SUCCESS);

        assert_eq!(cuMemFree_v2(d), CUDA_SUCCESS);
        assert_eq!(cuMemFree_v2(m), CUDA_SUCCESS);
        assert_eq!(cuMemFree_v2(m), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(attr_u32(IS_MANAGED, m), Err(CUDA_ERROR_INVALID_VALUE));
    }
}

#[test]
fn managed_allocation_errors() {
    context();
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned. Managed and mapped
    // host memory is read through the pointers the driver returned, within the sizes allocated.
    unsafe {
        let mut m: CUdeviceptr = 0;
        assert_eq!(
            cuMemAllocManaged(&mut m, 0, ATTACH_GLOBAL),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuMemAllocManaged(&mut m, 64, 0), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(cuMemAllocManaged(&mut m, 64, 3), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(
            cuMemAllocManaged(null_mut(), 64, ATTACH_GLOBAL),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuMemAllocManaged(&mut m, 64, ATTACH_HOST), CUDA_SUCCESS);
        assert_eq!(cuMemFree_v2(m), CUDA_SUCCESS);
        for (attribute, want) in [(83, 1), (89, 1), (19, 1), (88, 0)] {
            let mut v = -1;
            assert_eq!(cuDeviceGetAttribute(&mut v, attribute, 0), CUDA_SUCCESS);
            assert_eq!(v, want, "device attribute {attribute}");
        }
    }
}

#[test]
fn mapped_host_memory_has_a_device_pointer() {
    context();
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned. Managed and mapped
    // host memory is read through the pointers the driver returned, within the sizes allocated.
    unsafe {
        let n = 4096usize;
        let mut p: *mut c_void = null_mut();
        assert_eq!(cuMemHostAlloc(&mut p, n, DEVICEMAP), CUDA_SUCCESS);
        let mut dp: CUdeviceptr = 0;
        assert_eq!(cuMemHostGetDevicePointer_v2(&mut dp, p, 0), CUDA_SUCCESS);
        assert_eq!(dp, p as u64);
        assert_eq!(
            cuMemHostGetDevicePointer_v2(&mut dp, p.cast::<u8>().add(100).cast(), 0),
            CUDA_SUCCESS
        );
        assert_eq!(dp, p as u64 + 100);
        assert_eq!(
            cuMemHostGetDevicePointer_v2(&mut dp, p, 1),
            CUDA_ERROR_INVALID_VALUE
        );
        let mut unknown = [0u8; 8];
        assert_eq!(
            cuMemHostGetDevicePointer_v2(&mut dp, unknown.as_mut_ptr().cast(), 0),
            CUDA_ERROR_INVALID_VALUE
        );
        // A device-side memset lands in the host bytes.
        assert_eq!(cuMemsetD8_v2(p as u64 + 10, 0x5a, 6), CUDA_SUCCESS);
        let bytes = std::slice::from_raw_parts(p as *const u8, n);
        assert_eq!(&bytes[9..17], &[0, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0]);
        assert_eq!(attr_u32(MEMORY_TYPE, p as u64), Ok(MEMORYTYPE_HOST));
        assert_eq!(attr_u64(DEVICE_POINTER, p as u64 + 8), Ok(p as u64 + 8));
        assert_eq!(attr_u32(IS_MANAGED, p as u64), Ok(0));
        // Registered application memory, mapped too.
        let mut mine = vec![1u32; 256];
        let q = mine.as_mut_ptr().cast::<c_void>();
        assert_eq!(cuMemHostRegister_v2(q, 1024, DEVICEMAP), CUDA_SUCCESS);
        assert_eq!(cuMemHostGetDevicePointer_v2(&mut dp, q, 0), CUDA_SUCCESS);
        assert_eq!(cuMemsetD32_v2(dp + 4, 42, 2), CUDA_SUCCESS);
        assert_eq!(cuMemHostUnregister(q), CUDA_SUCCESS);
        assert_eq!(&mine[..4], &[1, 42, 42, 1]);
        assert_eq!(
            cuMemsetD32_v2(dp, 0, 1),
            CUDA_ERROR_INVALID_VALUE,
            "unregistered"
        );
        assert_eq!(cuMemFreeHost(p), CUDA_SUCCESS);
        assert_eq!(
            cuMemHostGetDevicePointer_v2(&mut dp, p, 0),
            CUDA_ERROR_INVALID_VALUE
        );
    }
}

#[test]
fn managed_module_variables_live_at_their_host_address() {
    context();
    let ptx = c".version 8.0
.target sm_80
.address_size 64
.global .attribute(.managed) .align 4 .u32 flag = 7;
.global .align 4 .u32 plain;
";
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned. Managed and mapped
    // host memory is read through the pointers the driver returned, within the sizes allocated.
    unsafe {
        use cuda::api::library::*;
        let mut lib: *mut c_void = null_mut();
        let code = ptx.as_ptr().cast();
        let none = null_mut();
        assert_eq!(
            cuLibraryLoadData(&mut lib, code, none, null_mut(), 0, none, null_mut(), 0),
            CUDA_SUCCESS
        );
        let (mut p, mut size): (CUdeviceptr, usize) = (0, 0);
        assert_eq!(
            cuLibraryGetManaged(&mut p, &mut size, lib, c"flag".as_ptr()),
            CUDA_SUCCESS
        );
        assert_eq!(size, 4);
        // The host reads the initializer through the device pointer.
        assert_eq!(*(p as *const u32), 7);
        assert_eq!(cuMemsetD32_v2(p, 9, 1), CUDA_SUCCESS);
        assert_eq!(*(p as *const u32), 9);
        assert_eq!(attr_u32(IS_MANAGED, p), Ok(1));
        assert_eq!(
            cuLibraryGetManaged(&mut p, &mut size, lib, c"plain".as_ptr()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuLibraryUnload(lib), CUDA_SUCCESS);
    }
}

#[test]
fn destroying_a_context_frees_its_managed_memory() {
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned. Managed and mapped
    // host memory is read through the pointers the driver returned, within the sizes allocated.
    unsafe {
        assert_eq!(cuInit(0), CUDA_SUCCESS);
        let mut ctx: CUcontext = null_mut();
        assert_eq!(cuCtxCreate_v2(&mut ctx, 0, 0), CUDA_SUCCESS);
        let mut m: CUdeviceptr = 0;
        assert_eq!(cuMemAllocManaged(&mut m, 4096, ATTACH_GLOBAL), CUDA_SUCCESS);
        assert_eq!(libc::msync(m as *mut c_void, 4096, libc::MS_ASYNC), 0);
        assert_eq!(cuCtxDestroy_v2(ctx), CUDA_SUCCESS);
        // The mapping is gone: msync of an unmapped page fails (ENOMEM).
        assert_eq!(libc::msync(m as *mut c_void, 4096, libc::MS_ASYNC), -1);
        context();
        assert_eq!(attr_u32(IS_MANAGED, m), Err(CUDA_ERROR_INVALID_VALUE));
        assert_eq!(
            cuMemPrefetchAsync(m, 4, 0, null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuMemFree_v2(m), CUDA_ERROR_INVALID_VALUE);
    }
}

fn range_int(attribute: i32, ptr: u64, count: usize) -> Result<i32, CUresult> {
    let mut v = 0i32;
    let r =
        // SAFETY: `v` is a live i32 and the data size passed is 4.
        unsafe { cuMemRangeGetAttribute((&mut v as *mut i32).cast(), 4, attribute, ptr, count) };
    if r == CUDA_SUCCESS { Ok(v) } else { Err(r) }
}

#[test]
fn range_attributes_report_advice_and_prefetches_per_page() {
    context();
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned. Managed and mapped
    // host memory is read through the pointers the driver returned, within the sizes allocated.
    unsafe {
        let mut m: CUdeviceptr = 0;
        let page = 4096usize;
        assert_eq!(
            cuMemAllocManaged(&mut m, 4 * page, ATTACH_GLOBAL),
            CUDA_SUCCESS
        );
        let all = 4 * page;
        // Nothing said yet.
        assert_eq!(range_int(1, m, all), Ok(0));
        assert_eq!(range_int(2, m, all), Ok(-2));
        assert_eq!(range_int(4, m, all), Ok(-2));
        // Read-mostly on the first two pages only.
        assert_eq!(cuMemAdvise(m, 2 * page, 1, 0), CUDA_SUCCESS);
        assert_eq!(range_int(1, m, 2 * page), Ok(1));
        assert_eq!(range_int(1, m + 100, page), Ok(1));
        assert_eq!(range_int(1, m, 3 * page), Ok(0));
        assert_eq!(cuMemAdvise(m, page, 2, 0), CUDA_SUCCESS);
        assert_eq!(range_int(1, m, 2 * page), Ok(0));
        assert_eq!(range_int(1, m + page as u64, page), Ok(1));
        // Preferred location: the CPU on all pages, then the device on one.
        let host = CUmemLocation { type_: 2, id: 0 };
        assert_eq!(cuMemAdvise_v2(m, all, 3, host), CUDA_SUCCESS);
        assert_eq!(range_int(2, m, all), Ok(-1));
        assert_eq!(range_int(5, m, all), Ok(2));
        assert_eq!(cuMemAdvise(m + 3 * page as u64, page, 3, 0), CUDA_SUCCESS);
        assert_eq!(range_int(2, m, all), Ok(-2));
        assert_eq!(range_int(2, m + 3 * page as u64, 8), Ok(0));
        assert_eq!(range_int(6, m + 3 * page as u64, 8), Ok(0));
        assert_eq!(range_int(5, m + 3 * page as u64, 8), Ok(1));
        // Accessed-by: a list, padded with CU_DEVICE_INVALID.
        assert_eq!(cuMemAdvise(m, all, 5, 0), CUDA_SUCCESS);
        assert_eq!(cuMemAdvise(m, page, 5, -1), CUDA_SUCCESS);
        let mut list = [7i32; 3];
        assert_eq!(
            cuMemRangeGetAttribute(list.as_mut_ptr().cast(), 12, 3, m, page),
            CUDA_SUCCESS
        );
        assert_eq!(list, [0, -1, -2]);
        assert_eq!(
            cuMemRangeGetAttribute(list.as_mut_ptr().cast(), 12, 3, m, all),
            CUDA_SUCCESS
        );
        assert_eq!(list, [0, -2, -2]);
        // Last prefetch location, and several attributes at once.
        assert_eq!(cuMemPrefetchAsync(m, all, 0, null_mut()), CUDA_SUCCESS);
        assert_eq!(cuMemPrefetchAsync(m, page, -1, null_mut()), CUDA_SUCCESS);
        let (mut a, mut b) = (9i32, 9i32);
        let mut data: [*mut c_void; 2] = [(&mut a as *mut i32).cast(), (&mut b as *mut i32).cast()];
        let mut sizes = [4usize, 4];
        let mut attrs = [4i32, 7];
        assert_eq!(
            cuMemRangeGetAttributes(
                data.as_mut_ptr(),
                sizes.as_mut_ptr(),
                attrs.as_mut_ptr(),
                2,
                m + page as u64,
                page
            ),
            CUDA_SUCCESS
        );
        assert_eq!((a, b), (0, 1));
        assert_eq!(range_int(4, m, all), Ok(-2));
        assert_eq!(range_int(4, m, 10), Ok(-1));
        // Errors: bad size, bad attribute, outside the allocation, not managed.
        let mut v = 0i32;
        let pv = (&mut v as *mut i32).cast();
        assert_eq!(
            cuMemRangeGetAttribute(pv, 8, 1, m, all),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuMemRangeGetAttribute(pv, 4, 99, m, all),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuMemRangeGetAttribute(pv, 4, 1, m, all + 1),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuMemRangeGetAttribute(pv, 4, 1, m, 0),
            CUDA_ERROR_INVALID_VALUE
        );
        let mut d: CUdeviceptr = 0;
        assert_eq!(cuMemAlloc_v2(&mut d, 64), CUDA_SUCCESS);
        assert_eq!(
            cuMemRangeGetAttribute(pv, 4, 1, d, 64),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuMemFree_v2(d), CUDA_SUCCESS);
        assert_eq!(cuMemFree_v2(m), CUDA_SUCCESS);
        assert_eq!(range_int(1, m, 4), Err(CUDA_ERROR_INVALID_VALUE));
    }
}
