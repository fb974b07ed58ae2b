//! Several devices (`PRLX_EMU_DEVICES=2`, set before `cuInit`; this test
//! binary is its own process): distinct ordinals, names, UUIDs, PCI ids and
//! primary contexts; disjoint memory in one address space; peer access and
//! its errors; peer copies; a kernel of device 0 reading device 1's memory
//! only once peer access is enabled, and faulting precisely otherwise.

mod memory_kernels;

use cuda::api::context::*;
use cuda::api::device::*;
use cuda::api::memory::*;
use cuda::api::peer::*;
use cuda::api::pointer::*;
use cuda::api::pool::*;
use cuda::api::vmm::*;
use cuda::cu::*;
use std::ffi::{c_char, c_int};
use std::ptr::null_mut;

const DEVICE_ORDINAL: u32 = 9;
const CONTEXT: u32 = 1;

/// The string a `cuDeviceGet*(char *buf, int len, ...)` query writes into a
/// buffer of `len` bytes.
fn query_string(len: usize, query: impl FnOnce(*mut c_char, c_int) -> CUresult) -> String {
    let mut buf = vec![0 as c_char; len];
    assert_eq!(query(buf.as_mut_ptr(), len as c_int), CUDA_SUCCESS);
    // SAFETY: the driver wrote a NUL-terminated string into `buf`.
    unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

fn name(dev: CUdevice) -> String {
    // SAFETY: `b` holds `n` bytes.
    query_string(128, |b, n| unsafe { cuDeviceGetName(b, n, dev) })
}

fn pci(dev: CUdevice) -> String {
    // SAFETY: `b` holds `n` bytes.
    query_string(32, |b, n| unsafe { cuDeviceGetPCIBusId(b, n, dev) })
}

fn primary(dev: CUdevice) -> CUcontext {
    let mut ctx: CUcontext = null_mut();
    assert_eq!(
        // SAFETY: `ctx` is a live local.
        unsafe { cuDevicePrimaryCtxRetain(&mut ctx, dev) },
        CUDA_SUCCESS
    );
    ctx
}

fn set_current(ctx: CUcontext) {
    // SAFETY: `ctx` is a handle passed by value; the call takes no pointers.
    assert_eq!(unsafe { cuCtxSetCurrent(ctx) }, CUDA_SUCCESS);
}

fn ordinal_of(p: u64) -> u32 {
    let mut v = 99u32;
    assert_eq!(
        // SAFETY: `v` is a live u32, the size of CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL.
        unsafe { cuPointerGetAttribute((&mut v as *mut u32).cast(), DEVICE_ORDINAL, p) },
        CUDA_SUCCESS
    );
    v
}

#[test]
fn two_devices_peer_access_copies_and_faults() {
    // SAFETY: set before any thread of this test process reads the
    // environment through the driver (cuInit reads it once).
    unsafe { std::env::set_var("PRLX_EMU_DEVICES", "2") };
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        assert_eq!(cuInit(0), CUDA_SUCCESS);
        devices_are_distinct_and_peers();

        // Each device's primary context, on its device.
        let ctx0 = primary(0);
        let ctx1 = primary(1);
        assert_ne!(ctx0, ctx1);
        set_current(ctx1);
        let mut d: CUdevice = -1;
        assert_eq!(cuCtxGetDevice(&mut d), CUDA_SUCCESS);
        assert_eq!(d, 1);
        let k1 = memory_kernels::load();
        let n = 256usize;
        let mut on1: CUdeviceptr = 0;
        assert_eq!(cuMemAlloc_v2(&mut on1, n * 4), CUDA_SUCCESS);
        let words: Vec<u32> = (0..n as u32).map(|i| i * 3).collect();
        assert_eq!(
            cuMemcpyHtoD_v2(on1, words.as_ptr().cast(), n * 4),
            CUDA_SUCCESS
        );
        assert_eq!(memory_kernels::add_one(&k1, on1, n as u32), CUDA_SUCCESS);

        set_current(ctx0);
        let k0 = memory_kernels::load();
        let mut on0: CUdeviceptr = 0;
        assert_eq!(cuMemAlloc_v2(&mut on0, n * 4), CUDA_SUCCESS);
        assert_ne!(on0, on1);
        assert_eq!(ordinal_of(on0), 0);
        assert_eq!(ordinal_of(on1 + 8), 1);
        let mut owner: CUcontext = null_mut();
        assert_eq!(
            cuPointerGetAttribute((&mut owner as *mut CUcontext).cast(), CONTEXT, on1),
            CUDA_SUCCESS
        );
        assert_eq!(owner, ctx1);

        // Peer copy and a plain copy under unified addressing.
        assert_eq!(cuMemcpyPeer(on0, ctx0, on1, ctx1, n * 4), CUDA_SUCCESS);
        let mut back = vec![0u32; n];
        assert_eq!(
            cuMemcpyDtoH_v2(back.as_mut_ptr().cast(), on0, n * 4),
            CUDA_SUCCESS
        );
        let want: Vec<u32> = words.iter().map(|w| w + 1).collect();
        assert_eq!(back, want);
        assert_eq!(cuMemsetD32_v2(on0, 0, n), CUDA_SUCCESS);
        assert_eq!(cuMemcpy(on0, on1, n * 4), CUDA_SUCCESS);
        assert_eq!(
            cuMemcpyDtoH_v2(back.as_mut_ptr().cast(), on0, n * 4),
            CUDA_SUCCESS
        );
        assert_eq!(back, want);
        assert_eq!(
            cuMemcpyPeer(on0, null_mut(), on1, ctx1, 4),
            CUDA_ERROR_INVALID_CONTEXT
        );
        // A 3D peer copy (CUDA_MEMCPY3D_PEER): 4 rows of 64 bytes, device 1
        // to device 0, between pitched layouts.
        assert_eq!(cuMemsetD32_v2(on0, 0, n), CUDA_SUCCESS);
        let peer3d = |src_ctx: CUcontext, dst_ctx: CUcontext| CUDA_MEMCPY3D {
            src_x_in_bytes: 0,
            src_y: 0,
            src_z: 0,
            src_lod: 0,
            src_memory_type: 2,
            src_host: std::ptr::null(),
            src_device: on1,
            src_array: null_mut(),
            reserved0: src_ctx,
            src_pitch: 128,
            src_height: 4,
            dst_x_in_bytes: 0,
            dst_y: 0,
            dst_z: 0,
            dst_lod: 0,
            dst_memory_type: 2,
            dst_host: null_mut(),
            dst_device: on0,
            dst_array: null_mut(),
            reserved1: dst_ctx,
            dst_pitch: 64,
            dst_height: 4,
            width_in_bytes: 64,
            height: 4,
            depth: 1,
        };
        assert_eq!(cuMemcpy3DPeer(&peer3d(ctx1, ctx0)), CUDA_SUCCESS);
        assert_eq!(
            cuMemcpyDtoH_v2(back.as_mut_ptr().cast(), on0, 64 * 4),
            CUDA_SUCCESS
        );
        for row in 0..4 {
            assert_eq!(
                back[row * 16..row * 16 + 16],
                want[row * 32..row * 32 + 16],
                "row {row}"
            );
        }
        assert_eq!(
            cuMemcpy3DPeer(&peer3d(null_mut(), ctx0)),
            CUDA_ERROR_INVALID_CONTEXT
        );

        // Peer access: its errors, and a kernel of device 0 on device 1's memory.
        assert_eq!(cuCtxEnablePeerAccess(ctx0, 0), CUDA_ERROR_INVALID_DEVICE);
        assert_eq!(cuCtxEnablePeerAccess(ctx1, 1), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(
            cuCtxDisablePeerAccess(ctx1),
            CUDA_ERROR_PEER_ACCESS_NOT_ENABLED
        );
        assert_eq!(cuCtxEnablePeerAccess(ctx1, 0), CUDA_SUCCESS);
        assert_eq!(
            cuCtxEnablePeerAccess(ctx1, 0),
            CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
        );
        assert_eq!(memory_kernels::copy_word(&k0, on1 + 4, on0), CUDA_SUCCESS);
        assert_eq!(memory_kernels::add_one(&k0, on1, 1), CUDA_SUCCESS);
        let mut first = [0u32; 2];
        assert_eq!(
            cuMemcpyDtoH_v2(first.as_mut_ptr().cast(), on0, 4),
            CUDA_SUCCESS
        );
        assert_eq!(first[0], want[1]);
        assert_eq!(
            cuMemcpyDtoH_v2(first.as_mut_ptr().cast(), on1, 4),
            CUDA_SUCCESS
        );
        assert_eq!(first[0], want[0] + 1);

        // Pool memory follows the pool's access list, not peer access.
        let mut pool1: CUmemoryPool = null_mut();
        assert_eq!(cuDeviceGetDefaultMemPool(&mut pool1, 1), CUDA_SUCCESS);
        set_current(ctx1);
        let mut pooled: CUdeviceptr = 0;
        assert_eq!(cuMemAllocAsync(&mut pooled, 64, null_mut()), CUDA_SUCCESS);
        assert_eq!(cuMemsetD32_v2(pooled, 77, 16), CUDA_SUCCESS);
        set_current(ctx0);
        let grant0 = MemAccessDesc {
            location: MemLocation {
                type_: CU_MEM_LOCATION_TYPE_DEVICE,
                id: 0,
            },
            flags: CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        assert_eq!(cuMemPoolSetAccess(pool1, &grant0, 1), CUDA_SUCCESS);
        assert_eq!(memory_kernels::copy_word(&k0, pooled, on0), CUDA_SUCCESS);
        assert_eq!(
            cuMemcpyDtoH_v2(first.as_mut_ptr().cast(), on0, 4),
            CUDA_SUCCESS
        );
        assert_eq!(first[0], 77);

        virtual_memory_follows_its_access_descriptors(ctx0, ctx1, &k0, &k1, on0);

        // Device 1 reaches device 0's memory only once it enabled access too:
        // without it, the load faults at the instruction.
        set_current(ctx1);
        assert_eq!(
            memory_kernels::copy_word(&k1, on0, on1),
            CUDA_ERROR_ILLEGAL_ADDRESS
        );

        // Device 0 after disabling: faults as well.
        set_current(ctx0);
        assert_eq!(cuCtxDisablePeerAccess(ctx1), CUDA_SUCCESS);
        assert_eq!(
            memory_kernels::copy_word(&k0, on1, on0),
            CUDA_ERROR_ILLEGAL_ADDRESS
        );
    }
}

/// Two devices with distinct ordinals, names, PCI ids and UUIDs, each able
/// to access the other (`cuDeviceCanAccessPeer`, `cuDeviceGetP2PAttribute`).
fn devices_are_distinct_and_peers() {
    // SAFETY: every call below gets out-pointers to live locals and a
    // NUL-terminated PCI id.
    unsafe {
        let mut count = 0;
        assert_eq!(cuDeviceGetCount(&mut count), CUDA_SUCCESS);
        assert_eq!(count, 2);
        let mut dev: CUdevice = -1;
        assert_eq!(cuDeviceGet(&mut dev, 1), CUDA_SUCCESS);
        assert_eq!(dev, 1);
        assert_eq!(cuDeviceGet(&mut dev, 2), CUDA_ERROR_INVALID_DEVICE);
        assert_ne!(name(0), name(1));
        assert_ne!(pci(0), pci(1));
        let mut by_pci: CUdevice = -1;
        let id1 = std::ffi::CString::new(pci(1)).unwrap();
        assert_eq!(
            cuDeviceGetByPCIBusId(&mut by_pci, id1.as_ptr()),
            CUDA_SUCCESS
        );
        assert_eq!(by_pci, 1);
        let (mut u0, mut u1) = (CUuuid { bytes: [0; 16] }, CUuuid { bytes: [0; 16] });
        assert_eq!(cuDeviceGetUuid(&mut u0, 0), CUDA_SUCCESS);
        assert_eq!(cuDeviceGetUuid(&mut u1, 1), CUDA_SUCCESS);
        assert_ne!(u0.bytes, u1.bytes);

        let mut can: c_int = -1;
        assert_eq!(cuDeviceCanAccessPeer(&mut can, 0, 1), CUDA_SUCCESS);
        assert_eq!(can, 1);
        assert_eq!(cuDeviceCanAccessPeer(&mut can, 1, 1), CUDA_SUCCESS);
        assert_eq!(can, 0);
        assert_eq!(
            cuDeviceCanAccessPeer(&mut can, 0, 2),
            CUDA_ERROR_INVALID_DEVICE
        );
        let mut v: c_int = -1;
        assert_eq!(cuDeviceGetP2PAttribute(&mut v, 2, 0, 1), CUDA_SUCCESS);
        assert_eq!(v, 1);
        assert_eq!(
            cuDeviceGetP2PAttribute(&mut v, 2, 1, 1),
            CUDA_ERROR_INVALID_DEVICE
        );
        assert_eq!(
            cuDeviceGetP2PAttribute(&mut v, 99, 0, 1),
            CUDA_ERROR_INVALID_VALUE
        );
    }
}

/// Virtual memory on device 1: reachable from the devices its access
/// descriptors name, and only those (vectorAddMMAP's pattern). Leaves
/// `ctx0` current.
fn virtual_memory_follows_its_access_descriptors(
    ctx0: CUcontext,
    ctx1: CUcontext,
    k0: &memory_kernels::Kernels,
    k1: &memory_kernels::Kernels,
    on0: CUdeviceptr,
) {
    let mut first = [0u32; 2];
    // SAFETY: every call below gets out-pointers to live locals, `first`
    // (8 bytes) for 4-byte copies, and handles this driver returned.
    unsafe {
        let g = 2usize << 20;
        let prop = MemAllocationProp {
            type_: CU_MEM_ALLOCATION_TYPE_PINNED,
            requested_handle_types: 0,
            location: MemLocation {
                type_: CU_MEM_LOCATION_TYPE_DEVICE,
                id: 1,
            },
            win32_handle_meta_data: null_mut(),
            compression_type: 0,
            gpu_direct_rdma_capable: 0,
            usage: 0,
            reserved: [0; 4],
        };
        let mut handle = 0u64;
        assert_eq!(cuMemCreate(&mut handle, g, &prop, 0), CUDA_SUCCESS);
        let mut va: CUdeviceptr = 0;
        assert_eq!(cuMemAddressReserve(&mut va, g, 0, 0, 0), CUDA_SUCCESS);
        assert_eq!(cuMemMap(va, g, 0, handle, 0), CUDA_SUCCESS);
        let on_device = |id| MemAccessDesc {
            location: MemLocation {
                type_: CU_MEM_LOCATION_TYPE_DEVICE,
                id,
            },
            flags: CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        assert_eq!(cuMemSetAccess(va, g, &on_device(1), 1), CUDA_SUCCESS);
        assert_eq!(cuMemsetD32_v2(va, 4242, 4), CUDA_SUCCESS);
        // A second context on device 0 (a fault makes it unusable).
        let mut other0: CUcontext = null_mut();
        assert_eq!(cuCtxCreate_v2(&mut other0, 0, 0), CUDA_SUCCESS);
        let k_other = memory_kernels::load();
        assert_eq!(
            memory_kernels::copy_word(&k_other, va, on0),
            CUDA_ERROR_ILLEGAL_ADDRESS
        );
        set_current(ctx1);
        assert_eq!(memory_kernels::copy_word(k1, va, va + 4), CUDA_SUCCESS);
        set_current(ctx0);
        let both = [on_device(0), on_device(1)];
        assert_eq!(cuMemSetAccess(va, g, both.as_ptr(), 2), CUDA_SUCCESS);
        assert_eq!(memory_kernels::copy_word(k0, va + 4, on0), CUDA_SUCCESS);
        assert_eq!(
            cuMemcpyDtoH_v2(first.as_mut_ptr().cast(), on0, 4),
            CUDA_SUCCESS
        );
        assert_eq!(first[0], 4242);
    }
}
