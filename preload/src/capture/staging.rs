//! Pinned host memory the captures copy back into, kept for reuse.
//!
//! A device-to-host copy into pageable memory is synchronous (the driver
//! stages it through its own pinned buffer) and runs at a fraction of the
//! link's speed; into page-locked memory it is asynchronous on the launch's
//! stream and runs at full speed. Page-locking is expensive (`cuMemAllocHost`
//! maps and pins pages), so buffers are kept: at most [`KEPT`] idle ones, the
//! largest kept, each rounded up to [`GRANULE`]. Only the real driver's table
//! has `cuMemAllocHost`; elsewhere (HIP's table) [`take`] returns `None` and
//! the capture copies into ordinary memory.

use crate::driver::Cuda;
use crate::ffi::*;
use std::ffi::c_void;
use std::sync::Mutex;

const KEPT: usize = 4;
const GRANULE: usize = 1 << 20;
/// The largest staging buffer: a bigger copy lands in ordinary memory
/// (synchronous, slower) rather than pin that much of the application's
/// host memory for as long as the pool keeps it (at most KEPT × this).
const MAX_PINNED: usize = 256 << 20;

type FnMemAllocHost = unsafe extern "C" fn(*mut *mut c_void, usize) -> CUresult;
type FnMemFreeHost = unsafe extern "C" fn(*mut c_void) -> CUresult;

struct Host {
    alloc: FnMemAllocHost,
    free: FnMemFreeHost,
}

fn host(cuda: &Cuda) -> Option<&'static Host> {
    static REAL: std::sync::OnceLock<Option<Host>> = std::sync::OnceLock::new();
    if !std::ptr::eq(cuda, crate::driver::cuda()) {
        return None;
    }
    REAL.get_or_init(|| {
        let alloc = crate::driver::symbol(c"cuMemAllocHost_v2");
        let free = crate::driver::symbol(c"cuMemFreeHost");
        (!alloc.is_null() && !free.is_null()).then(|| Host {
            // SAFETY: cuda.h declares both with these signatures.
            alloc: unsafe { std::mem::transmute::<*mut c_void, FnMemAllocHost>(alloc) },
            // SAFETY: as above.
            free: unsafe { std::mem::transmute::<*mut c_void, FnMemFreeHost>(free) },
        })
    })
    .as_ref()
}

struct Block {
    ptr: usize,
    bytes: usize,
}

static IDLE: Mutex<Vec<Block>> = Mutex::new(Vec::new());

/// Page-locked host memory of at least `bytes`, back to the pool on drop.
pub struct Staging {
    ptr: *mut u8,
    bytes: usize,
    free: FnMemFreeHost,
}

impl Staging {
    /// The first `len` bytes (`len` ≤ the size asked for).
    pub fn bytes_mut(&mut self, len: usize) -> &mut [u8] {
        assert!(len <= self.bytes);
        // SAFETY: ptr is a live allocation of self.bytes bytes owned by us.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, len) }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let evicted = {
            let mut idle = IDLE.lock().unwrap_or_else(|p| p.into_inner());
            idle.push(Block {
                ptr: self.ptr as usize,
                bytes: self.bytes,
            });
            if idle.len() > KEPT {
                let smallest = (0..idle.len()).min_by_key(|&i| idle[i].bytes);
                smallest.map(|i| idle.swap_remove(i))
            } else {
                None
            }
        };
        if let Some(block) = evicted {
            // SAFETY: the block came from cuMemAllocHost and nothing uses it.
            unsafe { (self.free)(block.ptr as *mut c_void) };
        }
    }
}

/// Pinned memory of at least `bytes`, or `None` where the driver table has
/// no `cuMemAllocHost`, it fails, or `bytes` is over [`MAX_PINNED`] (then
/// the caller copies into pageable memory).
pub fn take(cuda: &Cuda, bytes: usize) -> Option<Staging> {
    if bytes > MAX_PINNED {
        return None;
    }
    let host = host(cuda)?;
    let reused = {
        let mut idle = IDLE.lock().unwrap_or_else(|p| p.into_inner());
        let best = (0..idle.len())
            .filter(|&i| idle[i].bytes >= bytes)
            .min_by_key(|&i| idle[i].bytes);
        best.map(|i| idle.swap_remove(i))
    };
    let block = match reused {
        Some(block) => block,
        None => {
            let rounded = bytes.max(1).div_ceil(GRANULE) * GRANULE;
            let mut ptr: *mut c_void = std::ptr::null_mut();
            super::counts::add(&super::counts::host_allocations, 1);
            // SAFETY: an out-pointer to a local.
            if unsafe { (host.alloc)(&mut ptr, rounded) } != CUDA_SUCCESS || ptr.is_null() {
                return None;
            }
            Block {
                ptr: ptr as usize,
                bytes: rounded,
            }
        }
    };
    Some(Staging {
        ptr: block.ptr as *mut u8,
        bytes: block.bytes,
        free: host.free,
    })
}
