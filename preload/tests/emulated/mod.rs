//! The emulator's libcuda loaded into a test process, and a stand-in for
//! an instrumented kernel: it writes each warp's events through the
//! descriptor, as the device runtime would.

use prlx::capture::Descriptor;
use prlx_trace::{TraceEvent, WarpBufferHeader};
use std::ffi::{CString, c_void};

type CuInit = unsafe extern "C" fn(u32) -> i32;
type CuDeviceGet = unsafe extern "C" fn(*mut i32, i32) -> i32;
type CuPrimaryCtxRetain = unsafe extern "C" fn(*mut *mut c_void, i32) -> i32;
type CuCtxSetCurrent = unsafe extern "C" fn(*mut c_void) -> i32;

pub fn open_emulator() {
    let built = prlx_tests::Built::get();
    let path = CString::new(built.lib_dir.join("libcuda.so.1").to_str().unwrap()).unwrap();
    // SAFETY: plain dlopen/dlsym; the symbols have these signatures in cuda.h.
    unsafe {
        let handle = libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL);
        assert!(!handle.is_null(), "cannot load the emulator's libcuda");
        let symbol = |name: &std::ffi::CStr| {
            let p = libc::dlsym(handle, name.as_ptr());
            assert!(!p.is_null(), "emulator lacks {name:?}");
            p
        };
        let init: CuInit = std::mem::transmute(symbol(c"cuInit"));
        let device_get: CuDeviceGet = std::mem::transmute(symbol(c"cuDeviceGet"));
        let retain: CuPrimaryCtxRetain = std::mem::transmute(symbol(c"cuDevicePrimaryCtxRetain"));
        let set_current: CuCtxSetCurrent = std::mem::transmute(symbol(c"cuCtxSetCurrent"));
        let (mut device, mut context) = (0, std::ptr::null_mut());
        assert_eq!(init(0), 0);
        assert_eq!(device_get(&mut device, 0), 0);
        assert_eq!(retain(&mut context, device), 0);
        assert_eq!(set_current(context), 0);
    }
}

pub fn event(slot: u32, i: u32) -> TraceEvent {
    TraceEvent {
        site_id: i % 24,
        event_type: (i % 3) as u8,
        branch_dir: ((i + slot) % 2) as u8,
        _reserved: 0,
        active_mask: u32::MAX >> (slot % 8),
        value_a: slot * 1000 + i,
    }
}

/// Writes `count(slot)` events into each warp's buffer, as a kernel would:
/// through the descriptor, events below the write index, then the index.
pub fn kernel(descriptor: u64, count: &dyn Fn(u32) -> u32) -> u32 {
    let cuda = prlx::driver::cuda();
    let (htod, dtoh) = (cuda.cuMemcpyHtoD_v2.unwrap(), cuda.cuMemcpyDtoH_v2.unwrap());
    let mut desc = Descriptor::default();
    // SAFETY: the descriptor buffer holds a Descriptor.
    let r = unsafe {
        dtoh(
            &mut desc as *mut Descriptor as *mut c_void,
            descriptor,
            std::mem::size_of::<Descriptor>(),
        )
    };
    assert_eq!(r, 0);
    let warp_buffer = 16 + u64::from(desc.events_per_warp) * 16;
    for slot in 0..desc.total_warp_slots {
        let n = count(slot);
        let kept = n.min(desc.events_per_warp);
        let header = WarpBufferHeader {
            write_idx: n,
            overflow_count: n - kept,
            ..WarpBufferHeader::default()
        };
        let mut image = bytemuck::bytes_of(&header).to_vec();
        for i in 0..kept {
            image.extend_from_slice(bytemuck::bytes_of(&event(slot, i)));
        }
        let base = desc.trace + prlx_trace::HEADER_SIZE as u64 + u64::from(slot) * warp_buffer;
        // SAFETY: `image` is a live host buffer of the copied length, read
        // before the synchronous copy returns; on the device, the warp
        // buffer at `base` holds warp_buffer bytes and image is no longer.
        let copied = unsafe { htod(base, image.as_ptr() as *const c_void, image.len()) };
        assert_eq!(copied, 0);
    }
    0
}
