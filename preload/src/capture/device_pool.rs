//! Device memory for captures, per context, kept for reuse.
//!
//! A capture needs device memory for its trace buffers. Allocating and
//! freeing it per launch costs a driver round trip each, and `cuMemFree`
//! may synchronise the whole device — exactly the timing change a capture
//! must not make. So each context keeps the allocations its captures used
//! (at most `KEPT_PER_CONTEXT` idle ones, the largest kept), and a
//! capture borrows one at least as large as it needs. Concurrent captures
//! (on other streams, or other contexts — other devices) get their own.
//! Memory is allocated in the context current at the launch, which is the
//! launch's context.

use crate::driver::{self, Cuda};
use crate::ffi::*;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{LazyLock, Mutex};

/// Idle allocations kept per context.
const KEPT_PER_CONTEXT: usize = 4;
/// Allocations are rounded up to this, so similar launches share them.
const GRANULE: u64 = 1 << 20;

#[derive(Debug)]
struct Block {
    ptr: u64,
    bytes: u64,
}

static IDLE: LazyLock<Mutex<HashMap<usize, Vec<Block>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Device memory borrowed for one capture; back to the pool on drop (after
/// the capture has waited for its stream).
pub struct Lease {
    pub ptr: u64,
    bytes: u64,
    context: usize,
}

impl Drop for Lease {
    fn drop(&mut self) {
        give_back(
            self.context,
            Block {
                ptr: self.ptr,
                bytes: self.bytes,
            },
        );
    }
}

/// The pools' key: the current context (0 where there is none).
pub(super) fn current_context(cuda: &Cuda) -> usize {
    let mut context: *mut c_void = std::ptr::null_mut();
    match cuda.cuCtxGetCurrent {
        // SAFETY: an out-pointer to a local.
        Some(get) if unsafe { get(&mut context) } == CUDA_SUCCESS => context as usize,
        _ => 0,
    }
}

/// At least `bytes` of device memory in the current context.
pub fn take(cuda: &Cuda, bytes: u64) -> Result<Lease, String> {
    let context = current_context(cuda);
    let reused = {
        let mut idle = IDLE.lock().unwrap_or_else(|p| p.into_inner());
        let blocks = idle.entry(context).or_default();
        // The smallest idle block that fits.
        let best = blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| b.bytes >= bytes)
            .min_by_key(|(_, b)| b.bytes)
            .map(|(i, _)| i);
        best.map(|i| blocks.swap_remove(i))
    };
    let block = match reused {
        Some(block) => block,
        None => {
            let alloc = cuda
                .cuMemAlloc_v2
                .ok_or("the driver has no cuMemAlloc_v2")?;
            let rounded = bytes.max(1).div_ceil(GRANULE) * GRANULE;
            let mut ptr = 0u64;
            // SAFETY: an out-pointer to a local.
            let r = unsafe { alloc(&mut ptr, rounded as usize) };
            super::counts::add(&super::counts::allocations, 1);
            if r != CUDA_SUCCESS {
                return Err(format!(
                    "cuMemAlloc of {rounded} bytes for the trace buffers failed with CUresult {r}"
                ));
            }
            Block {
                ptr,
                bytes: rounded,
            }
        }
    };
    Ok(Lease {
        ptr: block.ptr,
        bytes: block.bytes,
        context,
    })
}

fn give_back(context: usize, block: Block) {
    let evicted = {
        let mut idle = IDLE.lock().unwrap_or_else(|p| p.into_inner());
        let blocks = idle.entry(context).or_default();
        blocks.push(block);
        if blocks.len() > KEPT_PER_CONTEXT {
            // Keep the largest: they serve every smaller capture too.
            let smallest = blocks
                .iter()
                .enumerate()
                .min_by_key(|(_, b)| b.bytes)
                .map(|(i, _)| i);
            smallest.map(|i| blocks.swap_remove(i))
        } else {
            None
        }
    };
    if let Some(block) = evicted {
        free(driver::cuda(), block);
    }
}

/// Frees an evicted block without waiting on the device where the driver
/// can (`cuMemFreeAsync` on the legacy stream orders it after the
/// context's work); else `cuMemFree`. Rare: only when more captures ran at
/// once than blocks are kept.
fn free(cuda: &Cuda, block: Block) {
    if crate::stream_capture::any_capture_in_progress() {
        return; // illegal now; the block is lost until exit (rare, bounded)
    }
    super::counts::add(&super::counts::frees, 1);
    // SAFETY: the block came from cuMemAlloc and is no longer leased.
    unsafe {
        match (cuda.cuMemFreeAsync, cuda.cuMemFree_v2) {
            (Some(free_async), _) => {
                free_async(block.ptr, std::ptr::null_mut());
            }
            (None, Some(free)) => {
                free(block.ptr);
            }
            (None, None) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_blocks_are_kept_largest_first() {
        // A context no driver would hand out, so other tests' blocks never mix in.
        let context = usize::MAX - 7;
        for (i, bytes) in [1u64, 5, 3, 4, 2].iter().enumerate() {
            give_back(
                context,
                Block {
                    ptr: 0, // never freed: the eviction only frees with a driver
                    bytes: bytes << 20,
                },
            );
            let kept = IDLE.lock().unwrap()[&context].len();
            assert_eq!(kept, (i + 1).min(KEPT_PER_CONTEXT));
        }
        let mut sizes: Vec<u64> = IDLE.lock().unwrap()[&context]
            .iter()
            .map(|b| b.bytes >> 20)
            .collect();
        sizes.sort();
        assert_eq!(sizes, vec![2, 3, 4, 5]);
    }
}
