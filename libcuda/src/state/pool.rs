//! Stream-ordered allocator pools (`CUmemoryPool`; the entry points are
//! `api::pool`): each pool's attributes and counters, each device's default
//! and current pool, and which pool each live allocation came from.

use crate::cu::*;
use crate::state::vmm::{CU_MEM_HANDLE_TYPE_NONE, GRANULARITY};
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::os::fd::OwnedFd;

/// `CUmemoryPool`.
pub type CUmemoryPool = *mut c_void;

/// One memory pool (`CUmemoryPool`).
#[derive(Debug)]
pub struct Pool {
    pub device: CUdevice,
    pub default: bool,
    /// Destroyed while allocations were outstanding: it goes with the last.
    pub destroyed: bool,
    /// 0: no limit.
    pub max_size: u64,
    pub reuse: [i32; 3],
    pub release_threshold: u64,
    pub used: u64,
    pub used_high: u64,
    pub reserved: u64,
    pub reserved_high: u64,
    /// Other devices granted access (bit = ordinal).
    pub access: u64,
    /// `CUmemPoolProps::handleTypes`: POSIX file descriptors make it
    /// exportable.
    pub handle_types: c_int,
    /// The page `cuMemPoolExportToShareableHandle` hands out descriptors of.
    pub share: Option<OwnedFd>,
    /// Imported from another process: (its pid, its pool handle).
    pub imported: Option<(u32, u64)>,
}

impl Pool {
    pub fn new(device: CUdevice, default: bool, max_size: u64) -> Pool {
        Pool {
            device,
            default,
            destroyed: false,
            max_size,
            reuse: [1, 1, 1],
            release_threshold: 0,
            used: 0,
            used_high: 0,
            reserved: 0,
            reserved_high: 0,
            access: 0,
            handle_types: CU_MEM_HANDLE_TYPE_NONE,
            share: None,
            imported: None,
        }
    }

    /// Shrinks the reserved bytes to `keep`, but not below what is in use.
    pub fn shrink_to(&mut self, keep: u64) {
        let floor = self.used.next_multiple_of(GRANULARITY);
        self.reserved = self.reserved.min(keep.max(floor)).max(floor);
    }
}

/// Every pool, each device's default and current pool, and which pool each
/// live pool allocation came from.
#[derive(Debug, Default)]
pub struct Pools {
    pub pools: BTreeMap<usize, Pool>,
    pub defaults: BTreeMap<CUdevice, usize>,
    pub current: BTreeMap<CUdevice, usize>,
    /// Allocation base -> (pool, bytes counted).
    pub allocations: BTreeMap<u64, (usize, u64)>,
    pub next: usize,
}

// SAFETY: nothing inside points anywhere; handles are numbers.
unsafe impl Send for Pools {}

/// Where pool handles start: non-null, recognisable values.
pub const POOL_HANDLE_BASE: usize = 0x9000_0000;

impl Pools {
    /// The pool `base` was allocated from, if any.
    pub fn pool_of(&self, base: u64) -> Option<usize> {
        self.allocations.get(&base).map(|(p, _)| *p)
    }

    /// Whether kernels of device `dev` may access `pool`'s allocations.
    pub fn grants(&self, pool: usize, dev: CUdevice) -> bool {
        self.pools
            .get(&pool)
            .is_some_and(|p| p.device == dev || p.access & (1u64 << dev) != 0)
    }

    /// Called when the allocation at `base` is freed, whichever way.
    pub fn forget(&mut self, base: u64) {
        let Some((handle, bytes)) = self.allocations.remove(&base) else {
            return;
        };
        if let Some(p) = self.pools.get_mut(&handle) {
            p.used -= bytes;
            let threshold = p.release_threshold;
            p.shrink_to(threshold);
            if p.destroyed && p.used == 0 {
                self.pools.remove(&handle);
            }
        }
    }

    pub fn insert(&mut self, pool: Pool) -> usize {
        self.next += 1;
        let handle = POOL_HANDLE_BASE + self.next * 0x10;
        self.pools.insert(handle, pool);
        handle
    }

    pub fn default_pool(&mut self, dev: CUdevice) -> usize {
        if let Some(&p) = self.defaults.get(&dev) {
            return p;
        }
        let p = self.insert(Pool::new(dev, true, 0));
        self.defaults.insert(dev, p);
        p
    }

    pub fn current_pool(&mut self, dev: CUdevice) -> usize {
        match self.current.get(&dev) {
            Some(&p) => p,
            None => self.default_pool(dev),
        }
    }

    pub fn live(&mut self, pool: CUmemoryPool) -> Result<&mut Pool, CUresult> {
        self.pools
            .get_mut(&(pool as usize))
            .filter(|p| !p.destroyed)
            .ok_or(CUDA_ERROR_INVALID_VALUE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_bytes_follow_use_threshold_and_trim() {
        let mut p = Pool::new(0, false, 0);
        p.used = 3 << 20;
        p.reserved = 4 << 20;
        p.used = 0;
        p.shrink_to(0);
        assert_eq!(p.reserved, 0);
        p.used = 1 << 20;
        p.reserved = 8 << 20;
        p.shrink_to(u64::MAX);
        assert_eq!(p.reserved, 8 << 20);
        p.shrink_to(0);
        assert_eq!(p.reserved, 2 << 20, "never below what is in use");
    }
}
