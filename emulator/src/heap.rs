//! The device heap: what device-side `malloc` and `free` (and `new`/`delete`,
//! which nvcc lowers to them) allocate from.
//!
//! As on NVIDIA's devices it is one region of global memory, reserved once
//! (`cudaLimitMallocHeapSize`, 8 MiB by default) and fixed from the first
//! launch of a kernel that uses it: changing the size afterwards is refused,
//! as `cuCtxSetLimit` refuses it. Blocks are 16-byte aligned; an exhausted
//! heap makes `malloc` return NULL. Memory outlives the launch that
//! allocated it (a later kernel may free it). Freeing an address `malloc`
//! did not return, or freeing it twice, is undefined on the hardware; here
//! it is a fault naming the address, as a debugger should report it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// `cudaLimitMallocHeapSize`'s default.
pub const DEFAULT_HEAP_BYTES: u64 = 8 << 20;
/// Alignment of every block `malloc` returns.
pub const HEAP_ALIGN: u64 = 16;

/// The heap of one device.
#[derive(Debug)]
pub struct DeviceHeap {
    /// The region's size in bytes (the limit), fixed once `in_use` is set.
    size: u64,
    /// The region's base address, once reserved.
    base: Option<u64>,
    /// Set when a kernel that calls `malloc` or `free` is launched.
    in_use: AtomicBool,
    blocks: Mutex<Blocks>,
}

/// Free and allocated blocks, as offsets into the region.
#[derive(Debug, Default)]
struct Blocks {
    /// Free extents: offset → length, coalesced.
    free: BTreeMap<u64, u64>,
    /// Allocated blocks: offset → length (rounded up to the alignment).
    used: HashMap<u64, u64>,
}

impl Default for DeviceHeap {
    fn default() -> Self {
        DeviceHeap::new(DEFAULT_HEAP_BYTES)
    }
}

impl DeviceHeap {
    pub fn new(size: u64) -> Self {
        DeviceHeap {
            size,
            base: None,
            in_use: AtomicBool::new(false),
            blocks: Mutex::new(Blocks::default()),
        }
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn base(&self) -> Option<u64> {
        self.base
    }

    /// Whether a kernel using the heap has been launched (the size is fixed).
    pub fn in_use(&self) -> bool {
        self.in_use.load(Ordering::Acquire)
    }

    /// Fixes the size: called when a kernel that uses the heap is launched.
    pub fn mark_in_use(&self) {
        self.in_use.store(true, Ordering::Release);
    }

    /// Sets the region (`base`, `size` bytes), all free; the previous
    /// region, if any, is the caller's to release.
    pub fn place(&mut self, base: u64, size: u64) {
        self.base = Some(base);
        self.size = size;
        let blocks = self.blocks.get_mut().unwrap_or_else(|e| e.into_inner());
        blocks.used.clear();
        blocks.free.clear();
        if size > 0 {
            blocks.free.insert(0, size);
        }
    }

    /// Forgets the region (its memory is the caller's to release) and takes
    /// `size` as the size of the next one.
    pub fn unplace(&mut self, size: u64) -> Option<u64> {
        self.size = size;
        let blocks = self.blocks.get_mut().unwrap_or_else(|e| e.into_inner());
        blocks.used.clear();
        blocks.free.clear();
        self.base.take()
    }

    /// `malloc(bytes)`: a 16-byte-aligned block, or 0 when `bytes` is 0,
    /// the heap is not reserved or no free extent is large enough.
    pub fn malloc(&self, bytes: u64) -> u64 {
        let Some(base) = self.base else { return 0 };
        if bytes == 0 || bytes > self.size {
            return 0;
        }
        let len = bytes.next_multiple_of(HEAP_ALIGN);
        let mut blocks = self.blocks.lock().unwrap_or_else(|e| e.into_inner());
        // First fit, lowest address first, so a run's layout is reproducible.
        let Some((&at, &free_len)) = blocks.free.iter().find(|&(_, &l)| l >= len) else {
            return 0;
        };
        blocks.free.remove(&at);
        if free_len > len {
            blocks.free.insert(at + len, free_len - len);
        }
        blocks.used.insert(at, len);
        base + at
    }

    /// `free(address)`: 0 is ignored; anything else must be a live block.
    pub fn free(&self, address: u64) -> Result<(), String> {
        if address == 0 {
            return Ok(());
        }
        let Some(base) = self
            .base
            .filter(|&b| address >= b && address < b + self.size)
        else {
            return Err(format!(
                "free(0x{address:x}): not an address device malloc returned (outside the device heap)"
            ));
        };
        let at = address - base;
        let mut blocks = self.blocks.lock().unwrap_or_else(|e| e.into_inner());
        let Some(len) = blocks.used.remove(&at) else {
            return Err(format!(
                "free(0x{address:x}): not a live block of the device heap (freed twice, or not the start of a block)"
            ));
        };
        // Coalesce with the free extents on either side.
        let (mut start, mut end) = (at, at + len);
        if let Some(next_len) = blocks.free.remove(&end) {
            end += next_len;
        }
        if let Some((&prev, &prev_len)) = blocks.free.range(..at).next_back()
            && prev + prev_len == at
        {
            blocks.free.remove(&prev);
            start = prev;
        }
        blocks.free.insert(start, end - start);
        Ok(())
    }

    /// Bytes in live blocks.
    pub fn allocated(&self) -> u64 {
        let blocks = self.blocks.lock().unwrap_or_else(|e| e.into_inner());
        blocks.used.values().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heap(size: u64) -> DeviceHeap {
        let mut h = DeviceHeap::new(size);
        h.place(0x1000, size);
        h
    }

    #[test]
    fn blocks_are_aligned_reused_and_coalesced() {
        let h = heap(256);
        let a = h.malloc(1);
        let b = h.malloc(20);
        let c = h.malloc(16);
        assert_eq!((a, b, c), (0x1000, 0x1010, 0x1030));
        assert_eq!(h.allocated(), 64);
        h.free(b).unwrap();
        h.free(a).unwrap();
        // a and b's blocks merged: 48 bytes at the start.
        assert_eq!(h.malloc(48), 0x1000);
        h.free(0x1000).unwrap();
        h.free(c).unwrap();
        assert_eq!(h.malloc(256), 0x1000, "everything coalesced");
    }

    #[test]
    fn exhaustion_and_zero_give_null() {
        let h = heap(64);
        assert_eq!(h.malloc(0), 0);
        assert_eq!(h.malloc(65), 0);
        assert_ne!(h.malloc(64), 0);
        assert_eq!(h.malloc(1), 0);
        assert_eq!(DeviceHeap::new(64).malloc(1), 0, "not reserved");
    }

    #[test]
    fn bad_frees_are_reported() {
        let h = heap(64);
        let a = h.malloc(8);
        h.free(0).unwrap();
        assert!(
            h.free(0x10)
                .unwrap_err()
                .contains("outside the device heap")
        );
        assert!(h.free(a + 4).unwrap_err().contains("not a live block"));
        h.free(a).unwrap();
        assert!(h.free(a).unwrap_err().contains("freed twice"));
    }
}
