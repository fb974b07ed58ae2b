//! What the driver needs beyond plain allocations to model virtual memory,
//! IPC and several devices sharing one address space (a child module of
//! [`crate::memory`], so it may reach the allocation table; the device
//! forwards them as `Device::mem_detach`, `mem_reattach` and `mem_rebind`):
//!
//! - hiding an allocation from kernels and bringing it back unchanged
//!   ([`GlobalMemory::detach`]/[`GlobalMemory::reattach`]): a device that
//!   has no peer access to another device's memory faults on it, precisely,
//!   as on an unmapped address;
//! - moving an allocation's bytes into memory the driver provides (a shared
//!   mapping another process can map too) without changing its device
//!   address ([`GlobalMemory::rebind`]), for `cuIpcGetMemHandle`.
//!
//! Mapping physical memory at a chosen virtual address (`cuMemMap`) needs
//! nothing new: the driver maps the shared memory at that host address and
//! registers it with [`GlobalMemory::register_host`], so two mappings of one
//! physical allocation are two views of the same bytes.

use super::{ALLOC_ALIGN, Allocation, GlobalMemory};

/// An allocation taken out of the address space, bytes and all; only
/// [`GlobalMemory::reattach`] puts it back.
#[derive(Debug)]
pub struct Detached(Allocation);

impl Detached {
    /// Device address of the allocation.
    pub fn base(&self) -> u64 {
        self.0.base
    }
}

/// Why [`GlobalMemory::rebind`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RebindError {
    /// No allocation starts at that address.
    NotAnAllocation,
    /// The allocation's bytes are already the host's (registered, managed,
    /// or rebound before): they do not move.
    NotOwned,
    /// The new backing is shorter than the allocation.
    TooSmall,
}

impl GlobalMemory {
    /// Takes the allocation starting at `base` out of the address space:
    /// accesses to it fail as out of bounds until [`GlobalMemory::reattach`].
    pub fn detach(&mut self, base: u64) -> Option<Detached> {
        let i = self
            .allocations
            .binary_search_by_key(&base, |a| a.base)
            .ok()?;
        Some(Detached(self.allocations.remove(i)))
    }

    /// Puts a detached allocation back at its address.
    pub fn reattach(&mut self, detached: Detached) {
        let a = detached.0;
        let at = self.allocations.partition_point(|o| o.base < a.base);
        self.allocations.insert(at, a);
    }

    /// Copies the bytes of the device-owned allocation at `base` into the
    /// `len` bytes at `ptr` and makes those its backing from now on; the
    /// device address stays. The old bytes are freed, the budget no longer
    /// counts the allocation (its bytes are the caller's, like registered
    /// host memory), and [`GlobalMemory::free`] only unregisters it.
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes until the
    /// allocation is freed, and not alias any other allocation's bytes.
    pub unsafe fn rebind(
        &mut self,
        base: u64,
        ptr: *mut u8,
        len: usize,
    ) -> Result<(), RebindError> {
        let i = self
            .allocations
            .binary_search_by_key(&base, |a| a.base)
            .map_err(|_| RebindError::NotAnAllocation)?;
        let a = &mut self.allocations[i];
        if !a.owned || a.host_addressed() {
            return Err(RebindError::NotOwned);
        }
        if len < a.len {
            return Err(RebindError::TooSmall);
        }
        // SAFETY: the old buffer holds `a.len` bytes; the caller guarantees
        // `ptr` holds at least as many and does not overlap it.
        unsafe { std::ptr::copy_nonoverlapping(a.ptr, ptr, a.len) };
        let old = std::mem::replace(&mut a.ptr, ptr);
        a.owned = false;
        // SAFETY: `old` came from `Box::into_raw` of an `a.len`-byte boxed
        // slice (`Allocation::owned`); nothing refers to it any more.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(old, a.len)) });
        self.used -= (a.len as u64 + ALLOC_ALIGN - 1) & !(ALLOC_ALIGN - 1);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detached_allocations_fault_and_come_back_with_their_bytes() {
        let mut m = GlobalMemory::new(1 << 20);
        let a = m.alloc(64).unwrap();
        let b = m.alloc(64).unwrap();
        m.store(a, 4, 7).unwrap();
        let d = m.detach(a).unwrap();
        assert_eq!(d.base(), a);
        assert!(m.load(a, 4).is_err());
        assert!(m.detach(a).is_none());
        assert_eq!(m.load(b, 4), Ok(0));
        m.reattach(d);
        assert_eq!(m.load(a, 4), Ok(7));
        assert!(m.free(a) && m.free(b));
        assert_eq!(m.used(), 0);
    }

    #[test]
    fn rebound_allocations_keep_address_and_bytes_in_the_new_backing() {
        let mut m = GlobalMemory::new(1 << 20);
        let a = m.alloc(100).unwrap();
        m.store(a + 96, 4, 0xfeed).unwrap();
        let mut shared = vec![0u8; 128];
        let p = shared.as_mut_ptr();
        // SAFETY: `shared` outlives the allocation (freed below) and is its own buffer.
        unsafe { m.rebind(a, p, 128) }.unwrap();
        assert_eq!(m.used(), 0);
        assert_eq!(m.load(a + 96, 4), Ok(0xfeed));
        m.store(a, 1, 9).unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { m.rebind(a, p, 128) }, Err(RebindError::NotOwned));
        assert!(m.load(a + 100, 1).is_err(), "bounds stay the allocation's");
        assert!(m.free(a));
        assert_eq!(shared[0], 9);
        assert_eq!(&shared[96..100], &0xfeed_u32.to_le_bytes());
        let b = m.alloc(100).unwrap();
        let mut small = vec![0u8; 10];
        // SAFETY: refused before anything is copied.
        let r = unsafe { m.rebind(b, small.as_mut_ptr(), 10) };
        assert_eq!(r, Err(RebindError::TooSmall));
    }
}
