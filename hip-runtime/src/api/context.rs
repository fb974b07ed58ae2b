//! The (deprecated) context API, primary contexts, peer access, PCI
//! identity and the profiler switches. There is one device and one context,
//! its primary context: every call that names a context takes that one,
//! and the context stack of each thread holds it or nothing.

use crate::abi::*;
use crate::entry::{exports, write_out};
use crate::runtime::{DEVICE_COUNT, runtime};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_uint, c_void};

/// The primary context's handle (opaque, never dereferenced by callers).
const PRIMARY: usize = 0x4354_5800;
/// "0000:03:00.0": the emulated device's PCI address.
const PCI_BUS_ID: &str = "0000:03:00.0";

thread_local! {
    /// The thread's context stack: `hipCtxPush/PopCurrent`, `hipCtxSetCurrent`.
    static STACK: RefCell<Vec<usize>> = RefCell::new(vec![PRIMARY]);
}

fn check_device(device: c_int) -> Result<(), hipError_t> {
    if (0..DEVICE_COUNT).contains(&device) {
        Ok(())
    } else {
        Err(hipErrorInvalidDevice)
    }
}

fn check_context(ctx: hipCtx_t) -> Result<(), hipError_t> {
    if ctx as usize == PRIMARY {
        Ok(())
    } else {
        Err(hipErrorInvalidContext)
    }
}

fn current() -> Option<usize> {
    STACK.with(|s| s.borrow().last().copied())
}

exports! {
    fn hipCtxCreate(ctx: *mut hipCtx_t, flags: c_uint, device: hipDevice_t) {
        let _ = flags;
        check_device(device)?;
        STACK.with(|s| s.borrow_mut().push(PRIMARY));
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(ctx, PRIMARY as hipCtx_t) }
    }

    fn hipCtxDestroy(ctx: hipCtx_t) {
        check_context(ctx)?;
        STACK.with(|s| s.borrow_mut().retain(|&c| c != ctx as usize));
        Ok(())
    }

    fn hipCtxPushCurrent(ctx: hipCtx_t) {
        check_context(ctx)?;
        STACK.with(|s| s.borrow_mut().push(PRIMARY));
        Ok(())
    }

    fn hipCtxPopCurrent(ctx: *mut hipCtx_t) {
        let popped = STACK.with(|s| s.borrow_mut().pop()).ok_or(hipErrorInvalidContext)?;
        if !ctx.is_null() {
            // SAFETY: optional out-pointer per the C API.
            unsafe { ctx.write_unaligned(popped as hipCtx_t) };
        }
        Ok(())
    }

    fn hipCtxSetCurrent(ctx: hipCtx_t) {
        if ctx.is_null() {
            STACK.with(|s| { s.borrow_mut().pop(); });
            return Ok(());
        }
        check_context(ctx)?;
        STACK.with(|s| {
            let mut stack = s.borrow_mut();
            stack.pop();
            stack.push(PRIMARY);
        });
        Ok(())
    }

    fn hipCtxGetCurrent(ctx: *mut hipCtx_t) {
        let value = current().unwrap_or(0) as hipCtx_t;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(ctx, value) }
    }

    fn hipCtxGetDevice(device: *mut hipDevice_t) {
        current().ok_or(hipErrorInvalidContext)?;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(device, 0) }
    }

    fn hipCtxGetApiVersion(ctx: hipCtx_t, version: *mut c_int) {
        check_context(ctx)?;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(version, super::device::HIP_VERSION) }
    }

    fn hipCtxGetFlags(flags: *mut c_uint) {
        let value = runtime().device_flags;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(flags, value) }
    }

    fn hipCtxSynchronize() {
        runtime().healthy()
    }

    fn hipCtxGetCacheConfig(config: *mut c_int) {
        // SAFETY: out-pointer per the C API (hipFuncCachePreferNone).
        unsafe { write_out(config, 0) }
    }

    fn hipCtxSetCacheConfig(config: c_int) {
        let _ = config;
        Ok(())
    }

    fn hipCtxGetSharedMemConfig(config: *mut c_int) {
        // SAFETY: out-pointer per the C API (hipSharedMemBankSizeFourByte).
        unsafe { write_out(config, 1) }
    }

    fn hipCtxSetSharedMemConfig(config: c_int) {
        let _ = config;
        Ok(())
    }

    /// One device: there is no peer context.
    fn hipCtxEnablePeerAccess(peer: hipCtx_t, flags: c_uint) {
        let _ = (peer, flags);
        Err(hipErrorInvalidValue)
    }

    fn hipCtxDisablePeerAccess(peer: hipCtx_t) {
        let _ = peer;
        Err(hipErrorPeerAccessNotEnabled)
    }

    fn hipDevicePrimaryCtxRetain(ctx: *mut hipCtx_t, device: hipDevice_t) {
        check_device(device)?;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(ctx, PRIMARY as hipCtx_t) }
    }

    fn hipDevicePrimaryCtxRelease(device: hipDevice_t) {
        check_device(device)
    }

    fn hipDevicePrimaryCtxGetState(device: hipDevice_t, flags: *mut c_uint, active: *mut c_int) {
        check_device(device)?;
        let value = runtime().device_flags;
        // SAFETY: out-pointers per the C API.
        unsafe {
            write_out(flags, value)?;
            write_out(active, 1)
        }
    }

    fn hipDevicePrimaryCtxSetFlags(device: hipDevice_t, flags: c_uint) {
        check_device(device)?;
        runtime().device_flags = flags;
        Ok(())
    }

    /// As `hipDeviceReset`.
    fn hipDevicePrimaryCtxReset(device: hipDevice_t) {
        check_device(device)?;
        // SAFETY: no pointer arguments.
        match unsafe { super::device::hipDeviceReset() } {
            hipSuccess => Ok(()),
            error => Err(error),
        }
    }

    fn hipDeviceGetPCIBusId(bus_id: *mut c_char, len: c_int, device: c_int) {
        check_device(device)?;
        if bus_id.is_null() || len <= PCI_BUS_ID.len() as c_int {
            return Err(hipErrorInvalidValue);
        }
        // SAFETY: the caller provides `len` bytes, more than the id and its NUL.
        unsafe {
            std::ptr::copy_nonoverlapping(PCI_BUS_ID.as_ptr().cast(), bus_id, PCI_BUS_ID.len());
            *bus_id.add(PCI_BUS_ID.len()) = 0;
        }
        Ok(())
    }

    fn hipDeviceGetByPCIBusId(device: *mut c_int, bus_id: *const c_char) {
        // SAFETY: a NUL-terminated string per the C API.
        let id = unsafe { crate::entry::c_str(bus_id) }?;
        if !id.eq_ignore_ascii_case(PCI_BUS_ID) && !PCI_BUS_ID.ends_with(id) {
            return Err(hipErrorInvalidDevice);
        }
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(device, 0) }
    }

    fn hipDeviceGetUuid(uuid: *mut [c_char; 16], device: hipDevice_t) {
        check_device(device)?;
        let mut bytes = [0 as c_char; 16];
        for (slot, byte) in bytes.iter_mut().zip(b"prlx-rdna3-gfx11") {
            *slot = *byte as c_char;
        }
        // SAFETY: out-pointer to a hipUUID (16 bytes).
        unsafe { write_out(uuid, bytes) }
    }

    fn hipDeviceGetP2PAttribute(value: *mut c_int, attribute: c_int, src: c_int, dst: c_int) {
        let _ = attribute;
        let _ = value;
        check_device(src)?;
        check_device(dst)?;
        // One device: there is no peer link to describe.
        Err(hipErrorInvalidDevice)
    }

    /// One device: it has no peer.
    fn hipDeviceEnablePeerAccess(peer: c_int, flags: c_uint) {
        let _ = flags;
        check_device(peer)?;
        Err(hipErrorInvalidDevice)
    }

    fn hipDeviceDisablePeerAccess(peer: c_int) {
        check_device(peer)?;
        Err(hipErrorPeerAccessNotEnabled)
    }

    /// Both ends are the one device: an ordinary device-to-device copy.
    fn hipMemcpyPeer(dst: *mut c_void, dst_device: c_int, src: *const c_void, src_device: c_int, size: usize) {
        check_device(dst_device)?;
        check_device(src_device)?;
        super::memory::copy(&mut runtime(), dst as u64, src as u64, size, hipMemcpyDeviceToDevice)
    }

    fn hipMemcpyPeerAsync(dst: *mut c_void, dst_device: c_int, src: *const c_void, src_device: c_int, size: usize, stream: hipStream_t) {
        check_device(dst_device)?;
        check_device(src_device)?;
        let mut rt = runtime();
        rt.check_stream(stream)?;
        super::memory::copy(&mut rt, dst as u64, src as u64, size, hipMemcpyDeviceToDevice)
    }

    /// Nothing to profile: accepted.
    fn hipProfilerStart() {
        Ok(())
    }

    fn hipProfilerStop() {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_stack_holds_the_primary_context() {
        let mut ctx: hipCtx_t = std::ptr::null_mut();
        // SAFETY: out-pointers to locals.
        unsafe {
            assert_eq!(hipCtxGetCurrent(&mut ctx), hipSuccess);
            assert_eq!(ctx as usize, PRIMARY);
            assert_eq!(hipCtxPopCurrent(&mut ctx), hipSuccess);
            assert_eq!(hipCtxGetCurrent(&mut ctx), hipSuccess);
            assert!(ctx.is_null());
            let mut device = -1;
            assert_eq!(hipCtxGetDevice(&mut device), hipErrorInvalidContext);
            assert_eq!(hipCtxPushCurrent(PRIMARY as hipCtx_t), hipSuccess);
            assert_eq!(hipCtxGetDevice(&mut device), hipSuccess);
            assert_eq!(device, 0);
            assert_eq!(
                hipCtxPushCurrent(0x1234 as hipCtx_t),
                hipErrorInvalidContext
            );
        }
        crate::entry::last_error(true);
    }

    #[test]
    fn the_pci_bus_id_round_trips() {
        let mut id = [0 as c_char; 32];
        let mut device = -1;
        // SAFETY: a 32-byte buffer and an out-pointer to a local.
        unsafe {
            assert_eq!(hipDeviceGetPCIBusId(id.as_mut_ptr(), 32, 0), hipSuccess);
            assert_eq!(hipDeviceGetByPCIBusId(&mut device, id.as_ptr()), hipSuccess);
            assert_eq!(
                hipDeviceGetPCIBusId(id.as_mut_ptr(), 4, 0),
                hipErrorInvalidValue
            );
        }
        assert_eq!(device, 0);
        crate::entry::last_error(true);
    }
}
