//! Virtual memory management and the stream-ordered allocator, in process:
//! reserve, create, map, set access, kernels on mapped addresses, two
//! mappings of one allocation aliasing, precise faults outside mappings,
//! handles retained, exported as a file descriptor and imported; memory
//! pools and their attributes.

mod memory_kernels;

use cuda::api::context::*;
use cuda::api::device::*;
use cuda::api::memory::*;
use cuda::api::pointer::*;
use cuda::api::pool::*;
use cuda::api::vmm::*;
use cuda::cu::*;
use std::ffi::c_void;
use std::ptr::null_mut;

fn context() {
    // SAFETY: `ctx` is a live local.
    unsafe {
        assert_eq!(cuInit(0), CUDA_SUCCESS);
        let mut ctx: CUcontext = null_mut();
        assert_eq!(cuCtxCreate_v2(&mut ctx, 0, 0), CUDA_SUCCESS);
    }
}

fn prop(handle_types: i32) -> MemAllocationProp {
    MemAllocationProp {
        type_: CU_MEM_ALLOCATION_TYPE_PINNED,
        requested_handle_types: handle_types,
        location: MemLocation {
            type_: CU_MEM_LOCATION_TYPE_DEVICE,
            id: 0,
        },
        win32_handle_meta_data: null_mut(),
        compression_type: 0,
        gpu_direct_rdma_capable: 0,
        usage: 0,
        reserved: [0; 4],
    }
}

fn read_write_on_device0() -> MemAccessDesc {
    MemAccessDesc {
        location: MemLocation {
            type_: CU_MEM_LOCATION_TYPE_DEVICE,
            id: 0,
        },
        flags: CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    }
}

fn reserve(size: usize) -> u64 {
    let mut va = 0u64;
    assert_eq!(
        // SAFETY: `va` is a live local.
        unsafe { cuMemAddressReserve(&mut va, size, 0, 0, 0) },
        CUDA_SUCCESS
    );
    assert_ne!(va, 0);
    va
}

fn map_accessible(va: u64, size: usize, handle: u64) {
    let desc = read_write_on_device0();
    // SAFETY: `desc` is one live CUmemAccessDesc, the count passed.
    unsafe {
        assert_eq!(cuMemMap(va, size, 0, handle, 0), CUDA_SUCCESS);
        assert_eq!(cuMemSetAccess(va, size, &desc, 1), CUDA_SUCCESS);
    }
}

fn read_words(p: u64, n: usize) -> Result<Vec<u32>, CUresult> {
    let mut out = vec![0u32; n];
    // SAFETY: `out` holds `n` u32s, the `n * 4` bytes copied.
    let r = unsafe { cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), p, n * 4) };
    if r == CUDA_SUCCESS { Ok(out) } else { Err(r) }
}

fn write_words(p: u64, words: &[u32]) -> CUresult {
    // SAFETY: `words` holds the `words.len() * 4` bytes copied.
    unsafe { cuMemcpyHtoD_v2(p, words.as_ptr().cast(), words.len() * 4) }
}

fn granularity() -> usize {
    let p = prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    let (mut min, mut rec) = (0usize, 0usize);
    // SAFETY: out-pointers to live locals and `p`, a live CUmemAllocationProp.
    unsafe {
        assert_eq!(cuMemGetAllocationGranularity(&mut min, &p, 0), CUDA_SUCCESS);
        assert_eq!(cuMemGetAllocationGranularity(&mut rec, &p, 1), CUDA_SUCCESS);
        assert_eq!(
            cuMemGetAllocationGranularity(&mut rec, &p, 7),
            CUDA_ERROR_INVALID_VALUE
        );
    }
    assert!(min.is_power_of_two() && rec % min == 0, "{min} {rec}");
    min
}

#[test]
fn two_mappings_of_one_allocation_alias_and_kernels_run_on_them() {
    context();
    let k = memory_kernels::load();
    let g = granularity();
    let size = 2 * g;
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        let p = prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        let mut handle = 0u64;
        assert_eq!(
            cuMemCreate(&mut handle, g + 1, &p, 0),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuMemCreate(&mut handle, size, &p, 0), CUDA_SUCCESS);

        let va1 = reserve(size);
        let va2 = reserve(size);
        assert_eq!(va1 % g as u64, 0);
        assert_eq!(
            cuMemMap(va1, size, 4096, handle, 0),
            CUDA_ERROR_INVALID_VALUE,
            "offset must be zero"
        );
        assert_eq!(cuMemMap(va1, size, 0, handle, 0), CUDA_SUCCESS);
        // Mapped but not yet accessible: not device memory.
        assert_ne!(write_words(va1, &[1]), CUDA_SUCCESS);
        let mut flags = 9u64;
        let dev0 = read_write_on_device0().location;
        assert_eq!(cuMemGetAccess(&mut flags, &dev0, va1), CUDA_SUCCESS);
        assert_eq!(flags, CU_MEM_ACCESS_FLAGS_PROT_NONE as u64);
        let desc = read_write_on_device0();
        assert_eq!(cuMemSetAccess(va1, size, &desc, 1), CUDA_SUCCESS);
        assert_eq!(cuMemGetAccess(&mut flags, &dev0, va1 + 8), CUDA_SUCCESS);
        assert_eq!(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE as u64);
        assert_eq!(
            cuMemMap(va1, g, 0, handle, 0),
            CUDA_ERROR_INVALID_VALUE,
            "already mapped"
        );

        // A kernel on the mapped range, at its start and at its very end.
        let n = 4096usize;
        let words: Vec<u32> = (0..n as u32).collect();
        let tail = va1 + size as u64 - 4 * n as u64;
        assert_eq!(write_words(va1, &words), CUDA_SUCCESS);
        assert_eq!(write_words(tail, &words), CUDA_SUCCESS);
        assert_eq!(memory_kernels::add_one(&k, va1, n as u32), CUDA_SUCCESS);
        assert_eq!(memory_kernels::add_one(&k, tail, n as u32), CUDA_SUCCESS);
        let want: Vec<u32> = (1..=n as u32).collect();
        assert_eq!(read_words(va1, n).unwrap(), want);

        // The second mapping sees what the kernel wrote through the first,
        // and the reverse.
        map_accessible(va2, size, handle);
        assert_eq!(read_words(va2, n).unwrap(), want);
        assert_eq!(
            read_words(va2 + size as u64 - 4 * n as u64, n).unwrap(),
            want
        );
        assert_eq!(write_words(va2 + 40, &[0xabcd]), CUDA_SUCCESS);
        assert_eq!(read_words(va1 + 40, 1).unwrap(), vec![0xabcd]);
        assert_eq!(
            memory_kernels::copy_word(&k, va2 + 40, va1 + 44),
            CUDA_SUCCESS
        );
        assert_eq!(read_words(va2 + 44, 1).unwrap(), vec![0xabcd]);

        // Pointer attributes: device memory, not managed.
        let mut managed = 7u32;
        assert_eq!(
            cuPointerGetAttribute((&mut managed as *mut u32).cast(), 8, va1 + 4),
            CUDA_SUCCESS
        );
        assert_eq!(managed, 0);

        // The handle behind an address, retained, then released.
        let mut again = 0u64;
        assert_eq!(
            cuMemRetainAllocationHandle(&mut again, (va2 + 100) as *mut c_void),
            CUDA_SUCCESS
        );
        assert_eq!(again, handle);
        assert_eq!(cuMemRelease(again), CUDA_SUCCESS);
        let mut got = prop(0);
        assert_eq!(
            cuMemGetAllocationPropertiesFromHandle(&mut got, handle),
            CUDA_SUCCESS
        );
        assert_eq!(got.location, p.location);
        assert_eq!(
            got.requested_handle_types,
            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
        );

        // Export as a file descriptor, import, map a third time: same bytes.
        let mut fd: i32 = -1;
        assert_eq!(
            cuMemExportToShareableHandle(
                (&mut fd as *mut i32).cast(),
                handle,
                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                0
            ),
            CUDA_SUCCESS
        );
        assert!(fd >= 0);
        let mut imported = 0u64;
        assert_eq!(
            cuMemImportFromShareableHandle(
                &mut imported,
                fd as usize as *mut c_void,
                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
            ),
            CUDA_SUCCESS
        );
        libc::close(fd);
        assert_ne!(imported, handle);
        let va3 = reserve(size);
        map_accessible(va3, size, imported);
        assert_eq!(read_words(va3 + 40, 1).unwrap(), vec![0xabcd]);
        assert_eq!(cuMemUnmap(va3, size), CUDA_SUCCESS);
        assert_eq!(cuMemRelease(imported), CUDA_SUCCESS);
        assert_eq!(cuMemAddressFree(va3, size), CUDA_SUCCESS);

        // Releasing the handle keeps the mapped memory alive.
        assert_eq!(cuMemRelease(handle), CUDA_SUCCESS);
        assert_eq!(cuMemRelease(handle), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(read_words(va1 + 40, 1).unwrap(), vec![0xabcd]);
        assert_eq!(
            cuMemUnmap(va2, g),
            CUDA_ERROR_INVALID_VALUE,
            "partial unmap"
        );
        assert_eq!(cuMemUnmap(va2, size), CUDA_SUCCESS);
        assert_eq!(read_words(va2, 1), Err(CUDA_ERROR_INVALID_VALUE));
        assert_eq!(read_words(va1 + 40, 1).unwrap(), vec![0xabcd]);
        assert_eq!(
            cuMemAddressFree(va1, size),
            CUDA_ERROR_INVALID_VALUE,
            "still mapped"
        );
        assert_eq!(cuMemUnmap(va1, size), CUDA_SUCCESS);
        assert_eq!(cuMemAddressFree(va1, size), CUDA_SUCCESS);
        assert_eq!(cuMemAddressFree(va2, size), CUDA_SUCCESS);
        assert_eq!(cuMemAddressFree(va2, size), CUDA_ERROR_INVALID_VALUE);
    }
}

#[test]
fn adjacent_mappings_form_one_range_for_copies() {
    context();
    let g = granularity();
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        let p = prop(0);
        let (mut a, mut b) = (0u64, 0u64);
        assert_eq!(cuMemCreate(&mut a, g, &p, 0), CUDA_SUCCESS);
        assert_eq!(cuMemCreate(&mut b, g, &p, 0), CUDA_SUCCESS);
        let va = reserve(2 * g);
        assert_eq!(cuMemMap(va, g, 0, a, 0), CUDA_SUCCESS);
        assert_eq!(cuMemMap(va + g as u64, g, 0, b, 0), CUDA_SUCCESS);
        let desc = read_write_on_device0();
        assert_eq!(cuMemSetAccess(va, 2 * g, &desc, 1), CUDA_SUCCESS);
        // A copy across the boundary between the two allocations.
        let words: Vec<u32> = (0..64).collect();
        let at = va + g as u64 - 128;
        assert_eq!(write_words(at, &words), CUDA_SUCCESS);
        assert_eq!(read_words(at, 64).unwrap(), words);
        // Without an exportable handle type, export is refused.
        let mut fd = -1i32;
        assert_eq!(
            cuMemExportToShareableHandle((&mut fd as *mut i32).cast(), a, 1, 0),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuMemUnmap(va, 2 * g), CUDA_SUCCESS);
        assert_eq!(cuMemRelease(a), CUDA_SUCCESS);
        assert_eq!(cuMemRelease(b), CUDA_SUCCESS);
        assert_eq!(cuMemAddressFree(va, 2 * g), CUDA_SUCCESS);
    }
}

#[test]
fn kernels_fault_precisely_past_a_mapping() {
    context();
    let k = memory_kernels::load();
    let g = granularity();
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        let p = prop(0);
        let mut h = 0u64;
        assert_eq!(cuMemCreate(&mut h, g, &p, 0), CUDA_SUCCESS);
        // Reserve two granules, map only the first.
        let va = reserve(2 * g);
        map_accessible(va, g, h);
        assert_eq!(memory_kernels::copy_word(&k, va, va + 4), CUDA_SUCCESS);
        assert_eq!(
            memory_kernels::copy_word(&k, va + g as u64, va),
            CUDA_ERROR_ILLEGAL_ADDRESS
        );
    }
}

fn pool_u64(pool: CUmemoryPool, attr: i32) -> u64 {
    let mut v = 0u64;
    assert_eq!(
        // SAFETY: `v` is a live u64, the size of the pool attributes this helper asks for.
        unsafe { cuMemPoolGetAttribute(pool, attr, (&mut v as *mut u64).cast()) },
        CUDA_SUCCESS
    );
    v
}

const RELEASE_THRESHOLD: i32 = 4;
const RESERVED_MEM_CURRENT: i32 = 5;
const USED_MEM_CURRENT: i32 = 7;
const USED_MEM_HIGH: i32 = 8;

#[test]
fn memory_pools_account_allocate_and_trim() {
    context();
    let k = memory_kernels::load();
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        let mut default: CUmemoryPool = null_mut();
        let mut current: CUmemoryPool = null_mut();
        assert_eq!(cuDeviceGetDefaultMemPool(&mut default, 0), CUDA_SUCCESS);
        assert_eq!(cuDeviceGetMemPool(&mut current, 0), CUDA_SUCCESS);
        assert_eq!(default, current);
        assert_eq!(
            cuDeviceGetDefaultMemPool(&mut default, 5),
            CUDA_ERROR_INVALID_DEVICE
        );
        let mut reuse = 0i32;
        assert_eq!(
            cuMemPoolGetAttribute(default, 1, (&mut reuse as *mut i32).cast()),
            CUDA_SUCCESS
        );
        assert_eq!(reuse, 1);

        let used_before = pool_u64(default, USED_MEM_CURRENT);
        let mut a: CUdeviceptr = 0;
        assert_eq!(cuMemAllocAsync(&mut a, 1000, null_mut()), CUDA_SUCCESS);
        assert_eq!(pool_u64(default, USED_MEM_CURRENT), used_before + 1024);
        assert!(pool_u64(default, RESERVED_MEM_CURRENT) >= used_before + 1024);
        assert!(pool_u64(default, USED_MEM_HIGH) >= used_before + 1024);
        assert_eq!(cuMemsetD32_v2(a, 5, 250), CUDA_SUCCESS);
        assert_eq!(memory_kernels::add_one(&k, a, 250), CUDA_SUCCESS);
        let mut back = [0u32; 250];
        assert_eq!(
            cuMemcpyDtoH_v2(back.as_mut_ptr().cast(), a, 1000),
            CUDA_SUCCESS
        );
        assert!(back.iter().all(|&v| v == 6));

        // A high threshold keeps freed memory reserved until trimmed.
        let mut keep = u64::MAX;
        let keep_ptr = (&mut keep as *mut u64).cast();
        assert_eq!(
            cuMemPoolSetAttribute(default, RELEASE_THRESHOLD, keep_ptr),
            CUDA_SUCCESS
        );
        assert_eq!(pool_u64(default, RELEASE_THRESHOLD), u64::MAX);
        let reserved = pool_u64(default, RESERVED_MEM_CURRENT);
        assert_eq!(cuMemFreeAsync(a, null_mut()), CUDA_SUCCESS);
        assert_eq!(pool_u64(default, USED_MEM_CURRENT), used_before);
        assert_eq!(pool_u64(default, RESERVED_MEM_CURRENT), reserved);
        assert_eq!(cuMemPoolTrimTo(default, 0), CUDA_SUCCESS);
        assert!(pool_u64(default, RESERVED_MEM_CURRENT) < reserved.max(1));
        let mut zero = 0u64;
        let zero_ptr = (&mut zero as *mut u64).cast();
        assert_eq!(
            cuMemPoolSetAttribute(default, USED_MEM_HIGH, zero_ptr),
            CUDA_SUCCESS
        );
        assert_eq!(
            pool_u64(default, USED_MEM_HIGH),
            pool_u64(default, USED_MEM_CURRENT)
        );
        let mut one = 1u64;
        let one_ptr = (&mut one as *mut u64).cast();
        assert_eq!(
            cuMemPoolSetAttribute(default, USED_MEM_HIGH, one_ptr),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuMemPoolSetAttribute(default, RESERVED_MEM_CURRENT, zero_ptr),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuMemPoolDestroy(default), CUDA_ERROR_INVALID_VALUE);

        // An explicit pool with a size limit, made current.
        let props = MemPoolProps {
            alloc_type: CU_MEM_ALLOCATION_TYPE_PINNED,
            handle_types: 0,
            location: MemLocation {
                type_: CU_MEM_LOCATION_TYPE_DEVICE,
                id: 0,
            },
            win32_security_attributes: null_mut(),
            max_size: 4096,
            usage: 0,
            reserved: [0; 54],
        };
        let mut pool: CUmemoryPool = null_mut();
        assert_eq!(cuMemPoolCreate(&mut pool, &props), CUDA_SUCCESS);
        let mut b: CUdeviceptr = 0;
        assert_eq!(
            cuMemAllocFromPoolAsync(&mut b, 4096, pool, null_mut()),
            CUDA_SUCCESS
        );
        let mut c: CUdeviceptr = 0;
        assert_eq!(
            cuMemAllocFromPoolAsync(&mut c, 1, pool, null_mut()),
            CUDA_ERROR_OUT_OF_MEMORY
        );
        assert_eq!(cuDeviceSetMemPool(0, pool), CUDA_SUCCESS);
        assert_eq!(cuDeviceGetMemPool(&mut current, 0), CUDA_SUCCESS);
        assert_eq!(current, pool);
        assert_eq!(
            cuMemAllocAsync(&mut c, 1, null_mut()),
            CUDA_ERROR_OUT_OF_MEMORY
        );
        let mut flags = 0i32;
        let dev0 = props.location;
        assert_eq!(cuMemPoolGetAccess(&mut flags, pool, &dev0), CUDA_SUCCESS);
        assert_eq!(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
        let revoke_own = MemAccessDesc {
            location: dev0,
            flags: CU_MEM_ACCESS_FLAGS_PROT_NONE,
        };
        assert_eq!(
            cuMemPoolSetAccess(pool, &revoke_own, 1),
            CUDA_ERROR_INVALID_VALUE
        );

        // Destroyed with an allocation outstanding: the allocation stays
        // valid and the device's current pool is its default again.
        assert_eq!(cuMemPoolDestroy(pool), CUDA_SUCCESS);
        assert_eq!(cuDeviceGetMemPool(&mut current, 0), CUDA_SUCCESS);
        assert_eq!(current, default);
        assert_eq!(cuMemsetD32_v2(b, 1, 1024), CUDA_SUCCESS);
        assert_eq!(cuMemFreeAsync(b, null_mut()), CUDA_SUCCESS);
        assert_eq!(cuMemPoolTrimTo(pool, 0), CUDA_ERROR_INVALID_VALUE);
    }
}

#[test]
fn cuda13_location_pool_calls_name_device_pools() {
    context();
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        let dev0 = MemLocation {
            type_: CU_MEM_LOCATION_TYPE_DEVICE,
            id: 0,
        };
        let mut loc = dev0;
        let (mut default, mut by_location): (CUmemoryPool, CUmemoryPool) = (null_mut(), null_mut());
        assert_eq!(cuDeviceGetDefaultMemPool(&mut default, 0), CUDA_SUCCESS);
        assert_eq!(
            cuMemGetDefaultMemPool(&mut by_location, &mut loc, CU_MEM_ALLOCATION_TYPE_PINNED),
            CUDA_SUCCESS
        );
        assert_eq!(by_location, default);
        assert_eq!(
            cuMemGetMemPool(&mut by_location, &mut loc, CU_MEM_ALLOCATION_TYPE_PINNED),
            CUDA_SUCCESS
        );
        let mut host = MemLocation { type_: 2, id: 0 };
        assert_eq!(
            cuMemGetDefaultMemPool(&mut by_location, &mut host, CU_MEM_ALLOCATION_TYPE_PINNED),
            CUDA_ERROR_NOT_SUPPORTED
        );
        let mut bad = MemLocation {
            type_: CU_MEM_LOCATION_TYPE_DEVICE,
            id: 9,
        };
        assert_eq!(
            cuMemSetMemPool(&mut bad, CU_MEM_ALLOCATION_TYPE_PINNED, default),
            CUDA_ERROR_INVALID_DEVICE
        );
        // (Setting a pool successfully is left to the pool test: the
        // current pool is process-wide and tests run concurrently.)
    }
}

#[test]
fn device_reports_virtual_memory_pools_and_ipc() {
    context();
    let attribute = |a: i32| {
        let mut v = -1;
        // SAFETY: `v` is a live i32.
        assert_eq!(unsafe { cuDeviceGetAttribute(&mut v, a, 0) }, CUDA_SUCCESS);
        v
    };
    // Virtual memory management, POSIX descriptors, memory pools, pool
    // handle types (POSIX descriptors: 1), IPC events.
    for (a, want) in [(102, 1), (103, 1), (115, 1), (119, 1), (125, 1)] {
        assert_eq!(attribute(a), want, "attribute {a}");
    }
}

/// The virtual memory calls need no current context, as on NVIDIA's driver:
/// NVIDIA's memMapIPCDrv sample unmaps and frees its reservation after
/// destroying its context, and imports, maps and grants access before
/// choosing one. On a thread with no current context, after `cuInit`.
#[test]
fn virtual_memory_calls_need_no_current_context() {
    context();
    let size = granularity();
    // SAFETY: every call gets out-pointers to locals and handles, addresses
    // and sizes this thread made; the descriptor is closed once, at the end.
    std::thread::spawn(move || unsafe {
        let mut current: CUcontext = null_mut();
        assert_eq!(cuCtxGetCurrent(&mut current), CUDA_SUCCESS);
        assert!(current.is_null(), "a fresh thread has no current context");
        let p = prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        let mut handle = 0u64;
        assert_eq!(cuMemCreate(&mut handle, size, &p, 0), CUDA_SUCCESS);
        let mut fd: i32 = -1;
        assert_eq!(
            cuMemExportToShareableHandle(
                (&mut fd as *mut i32).cast(),
                handle,
                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                0
            ),
            CUDA_SUCCESS
        );
        let mut imported = 0u64;
        assert_eq!(
            cuMemImportFromShareableHandle(
                &mut imported,
                fd as usize as *mut c_void,
                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
            ),
            CUDA_SUCCESS
        );
        let va = reserve(size);
        map_accessible(va, size, imported);
        assert_eq!(cuMemRelease(imported), CUDA_SUCCESS);
        assert_eq!(cuMemRelease(handle), CUDA_SUCCESS);
        assert_eq!(cuMemUnmap(va, size), CUDA_SUCCESS);
        assert_eq!(cuMemAddressFree(va, size), CUDA_SUCCESS);
        libc::close(fd);
    })
    .join()
    .expect("the thread without a context");
}
