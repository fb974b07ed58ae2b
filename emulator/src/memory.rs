//! Device memory: global allocations (bounds-checked, never reused) and the
//! address windows that make generic pointers to shared, local and param
//! memory distinguishable from global ones.
//!
//! Global allocations are lazily zeroed host memory (`vec![0; n]` maps pages
//! on first touch), so the configured budget costs nothing until used.
//! Host-backed allocations (managed and mapped host memory) are host memory
//! the driver registers at its own address; they share the bounds checks.
//!
//! **Concurrency.** CTAs of a launch run on several host threads, all
//! reading and writing global memory through a shared `&GlobalMemory`:
//! kernel accesses ([`GlobalMemory::load`], [`GlobalMemory::store`],
//! [`Region::read`]) are relaxed atomic accesses of the access width
//! (plain moves on x86-64), so racing CTAs never make a Rust data race;
//! the host side (`slice_mut`, allocation and free) takes `&mut self`, so
//! it never overlaps a running kernel.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64};

use crate::texture::ObjectTable;
use crate::texture::sample::TexelMemory;

thread_local! {
    /// Index of the allocation this thread hit last: consecutive accesses
    /// of a warp almost always hit the same buffer. Per thread, so CTAs on
    /// different threads do not contend for it; only a hint (checked
    /// before use), so one index serves every `GlobalMemory`.
    static LAST_HIT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Start of device (global) allocations: looks like a real device pointer.
pub const GLOBAL_BASE: u64 = 0x0000_7f00_0000_0000;
/// Generic address of shared-space offset 0 (`cvta.shared`).
pub const SHARED_WINDOW: u64 = 0x0000_1000_0000_0000;
/// Generic address of local-space offset 0 (`cvta.local`).
pub const LOCAL_WINDOW: u64 = 0x0000_2000_0000_0000;
/// Generic address of param-space offset 0 (`cvta.param`).
pub const PARAM_WINDOW: u64 = 0x0000_3000_0000_0000;
/// Size of each window.
pub const WINDOW_SIZE: u64 = 1 << 32;
/// A `.shared::cluster` address (what `mapa` returns) is a shared-window
/// offset that carries the CTA's cluster rank plus one in its bits 24..32
/// (the hardware also puts the rank in the upper bits): 0 there is the
/// executing CTA's own window, so every `.shared::cta` address is a valid
/// `.shared::cluster` address of its CTA. A CTA's shared memory stays below
/// 16 MiB (the devices allow at most 228 KiB).
pub const CLUSTER_RANK_SHIFT: u32 = 24;
/// The offset bits of a `.shared::cluster` address (below the rank tag).
const CLUSTER_OFFSET_MASK: u64 = (1 << CLUSTER_RANK_SHIFT) - 1;

/// The shared-window offset `offset` (its bits below
/// [`CLUSTER_RANK_SHIFT`]) tagged as CTA rank `rank`'s: what `mapa`
/// returns. Ranks past 253 saturate at a tag no cluster reaches.
pub fn cluster_address(offset: u64, rank: u32) -> u64 {
    let tag = rank.saturating_add(1).min(0xff) as u64;
    (tag << CLUSTER_RANK_SHIFT) | (offset & CLUSTER_OFFSET_MASK)
}

/// Splits a shared-window offset (its low 32 bits) into the cluster rank
/// its tag names (`None`: untagged, the executing CTA's own window) and the
/// offset in that CTA's window.
pub fn split_cluster_address(offset: u64) -> (Option<u32>, u64) {
    let offset = offset & 0xffff_ffff;
    match (offset >> CLUSTER_RANK_SHIFT) as u32 {
        0 => (None, offset),
        tag => (Some(tag - 1), offset & CLUSTER_OFFSET_MASK),
    }
}
/// Gap left after each allocation so that small overruns never land in the
/// next allocation and are reported instead.
const GUARD_BYTES: u64 = 64 * 1024;
pub const ALLOC_ALIGN: u64 = 256;

/// Which state space a generic address points into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    Global,
    Shared,
    Local,
    Param,
}

/// Classifies a generic address (anything outside the windows is global).
#[inline]
pub fn window_of(addr: u64) -> Window {
    match addr & !(WINDOW_SIZE - 1) {
        SHARED_WINDOW => Window::Shared,
        LOCAL_WINDOW => Window::Local,
        PARAM_WINDOW => Window::Param,
        _ => Window::Global,
    }
}

/// An access outside every allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfBounds;

/// One global allocation: `len` bytes at `ptr`, addressed from `base`.
/// Owned allocations are boxed slices the memory frees; host-backed ones
/// (managed and mapped host memory) belong to the driver, their host
/// address is their device address, and the memory never frees them.
#[derive(Debug)]
struct Allocation {
    base: u64,
    ptr: *mut u8,
    len: usize,
    owned: bool,
}

// SAFETY: an owned buffer is reachable only through its allocation; a
// host-backed one stays mapped until the driver unregisters it, and the
// driver serializes all access to the device (one global lock).
unsafe impl Send for Allocation {}

// SAFETY: through a shared reference the bytes are only read and written
// with atomic accesses (`atomic_read`/`atomic_write`); plain slices of them
// (`bytes_mut`) need `&mut`, which excludes every other access.
unsafe impl Sync for Allocation {}

impl Allocation {
    fn owned(base: u64, len: usize) -> Allocation {
        let data: Box<[u8]> = vec![0; len].into_boxed_slice();
        let ptr = Box::into_raw(data) as *mut u8;
        Allocation {
            base,
            ptr,
            len,
            owned: true,
        }
    }

    #[inline]
    fn contains(&self, addr: u64, len: u64) -> bool {
        addr >= self.base
            && addr
                .checked_add(len)
                .is_some_and(|end| end <= self.base + self.len as u64)
    }

    /// Whether the host address of the bytes is their device address.
    fn host_addressed(&self) -> bool {
        self.ptr as u64 == self.base
    }

    /// End of the address range, guard gap included.
    fn end_with_guard(&self) -> u64 {
        self.base + self.len as u64 + GUARD_BYTES
    }

    #[inline]
    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` is valid for `len` bytes while the allocation lives
        // (see the type's comment).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    #[inline]
    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`; `&mut self` makes this the only view the
        // emulator hands out.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: made by `Box::into_raw` of a `len`-byte boxed slice in
            // `Allocation::owned`, and freed only here.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.ptr, self.len)) });
        }
    }
}

/// Why host memory cannot be made device-accessible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegisterError {
    /// Null, empty, or wrapping range.
    InvalidRange,
    /// The range overlaps an existing allocation or a generic-address window.
    Overlaps,
}

/// All global allocations of a device, sorted by base address.
#[derive(Debug)]
pub struct GlobalMemory {
    allocations: Vec<Allocation>,
    next_base: u64,
    used: u64,
    budget: u64,
    /// Texture and surface objects by handle (`crate::texture`): beside the
    /// allocations so every CTA's `Env` reaches them through the global
    /// memory it already holds.
    pub(crate) textures: ObjectTable,
}

impl GlobalMemory {
    pub fn new(budget: u64) -> GlobalMemory {
        GlobalMemory {
            allocations: Vec::new(),
            next_base: GLOBAL_BASE,
            used: 0,
            budget,
            textures: Default::default(),
        }
    }

    pub fn budget(&self) -> u64 {
        self.budget
    }

    pub fn used(&self) -> u64 {
        self.used
    }

    /// Allocates `bytes` zeroed bytes (at least one), 256-byte aligned.
    /// `None` when the budget would be exceeded.
    pub fn alloc(&mut self, bytes: u64) -> Option<u64> {
        let size = bytes.max(1);
        let rounded = size.checked_add(ALLOC_ALIGN - 1)? & !(ALLOC_ALIGN - 1);
        if self.used.checked_add(rounded)? > self.budget {
            return None;
        }
        let len = usize::try_from(size).ok()?;
        let base = self.free_base(rounded);
        self.next_base = (base + rounded + GUARD_BYTES + ALLOC_ALIGN - 1) & !(ALLOC_ALIGN - 1);
        self.used += rounded;
        let at = self.allocations.partition_point(|a| a.base < base);
        self.allocations.insert(at, Allocation::owned(base, len));
        Some(base)
    }

    /// The next base at or after `next_base` whose range (and guard) stays
    /// clear of host-backed allocations, which live at host addresses.
    fn free_base(&self, rounded: u64) -> u64 {
        let mut base = self.next_base;
        for a in &self.allocations {
            if !a.host_addressed() || a.end_with_guard() <= base {
                continue;
            }
            if a.base < base + rounded + GUARD_BYTES {
                base = (a.end_with_guard() + ALLOC_ALIGN - 1) & !(ALLOC_ALIGN - 1);
            }
        }
        base
    }

    /// Makes `len` bytes of host memory at `ptr` a global allocation whose
    /// device address is `ptr` itself, so kernels and the host share the
    /// bytes (managed and mapped host memory). Not counted in the budget.
    ///
    /// # Safety
    /// `ptr` must stay valid for reads and writes of `len` bytes until
    /// [`GlobalMemory::free`] of it; while the emulator runs a kernel, the
    /// host must not touch the bytes concurrently.
    pub unsafe fn register_host(&mut self, ptr: *mut u8, len: u64) -> Result<(), RegisterError> {
        let base = ptr as u64;
        let end = base.checked_add(len).ok_or(RegisterError::InvalidRange)?;
        if ptr.is_null() || len == 0 {
            return Err(RegisterError::InvalidRange);
        }
        let len = usize::try_from(len).map_err(|_| RegisterError::InvalidRange)?;
        let window_hit = [SHARED_WINDOW, LOCAL_WINDOW, PARAM_WINDOW]
            .iter()
            .any(|&w| base < w + WINDOW_SIZE && end > w);
        let alloc_hit = self
            .allocations
            .iter()
            .any(|a| base < a.base + a.len as u64 && end > a.base);
        if window_hit || alloc_hit {
            return Err(RegisterError::Overlaps);
        }
        let at = self.allocations.partition_point(|a| a.base < base);
        self.allocations.insert(
            at,
            Allocation {
                base,
                ptr,
                len,
                owned: false,
            },
        );
        Ok(())
    }

    /// Whether the allocation at `base` lives at its own host address
    /// (registered host memory, or [`GlobalMemory::alloc_host_addressed`]).
    pub fn is_host_backed(&self, base: u64) -> bool {
        self.allocations
            .binary_search_by_key(&base, |a| a.base)
            .is_ok_and(|i| self.allocations[i].host_addressed())
    }

    /// Allocates `bytes` zeroed bytes whose device address is their host
    /// address (`__managed__` module variables: the host reads them through
    /// that pointer). Counted in the budget; `None` when over it or when the
    /// host address collides with an allocation.
    pub fn alloc_host_addressed(&mut self, bytes: u64) -> Option<u64> {
        let size = bytes.max(1);
        let rounded = size.checked_add(ALLOC_ALIGN - 1)? & !(ALLOC_ALIGN - 1);
        if self.used.checked_add(rounded)? > self.budget {
            return None;
        }
        let len = usize::try_from(size).ok()?;
        let mut a = Allocation::owned(0, len);
        a.base = a.ptr as u64;
        let (base, end) = (a.base, a.base + len as u64);
        let window_hit = [SHARED_WINDOW, LOCAL_WINDOW, PARAM_WINDOW]
            .iter()
            .any(|&w| base < w + WINDOW_SIZE && end > w);
        let alloc_hit = self
            .allocations
            .iter()
            .any(|o| base < o.base + o.len as u64 && end > o.base);
        if window_hit || alloc_hit {
            return None;
        }
        self.used += rounded;
        let at = self.allocations.partition_point(|o| o.base < base);
        self.allocations.insert(at, a);
        Some(base)
    }

    /// Frees the allocation starting at `base`; `false` if there is none.
    pub fn free(&mut self, base: u64) -> bool {
        match self.allocations.binary_search_by_key(&base, |a| a.base) {
            Ok(i) => {
                let a = self.allocations.remove(i);
                if a.owned {
                    let size = a.len as u64;
                    self.used -= (size + ALLOC_ALIGN - 1) & !(ALLOC_ALIGN - 1);
                }
                true
            }
            Err(_) => false,
        }
    }

    /// `(base, size)` of the allocation containing `addr`.
    pub fn range_of(&self, addr: u64) -> Option<(u64, u64)> {
        let i = self.find(addr, 1)?;
        let a = &self.allocations[i];
        Some((a.base, a.len as u64))
    }

    #[inline]
    fn find(&self, addr: u64, len: u64) -> Option<usize> {
        let hint = LAST_HIT.get();
        if let Some(a) = self.allocations.get(hint)
            && a.contains(addr, len)
        {
            return Some(hint);
        }
        let i = match self.allocations.binary_search_by_key(&addr, |a| a.base) {
            Ok(i) => i,
            Err(0) => return None,
            Err(i) => i - 1,
        };
        if self.allocations[i].contains(addr, len) {
            LAST_HIT.set(i);
            Some(i)
        } else {
            None
        }
    }

    /// The allocation containing `addr`, for repeated kernel accesses.
    #[inline]
    pub fn region_of(&self, addr: u64) -> Option<Region<'_>> {
        let i = self.find(addr, 1)?;
        let a = &self.allocations[i];
        Some(Region {
            base: a.base,
            ptr: a.ptr,
            len: a.len,
            _memory: std::marker::PhantomData,
        })
    }

    /// Replaces the `size`-byte (1, 2, 4 or 8) value at `addr` with
    /// `f(old)` as one atomic read-modify-write, and returns `old`. 4- and
    /// 8-byte values use a compare-exchange loop, so CTAs on other threads
    /// may update the same word; narrower ones (or a host mapping not
    /// aligned to the width) are read and written with separate atomic
    /// accesses, which suffices for kernels whose CTAs run in order.
    pub fn fetch_update(
        &self,
        addr: u64,
        size: u32,
        f: impl Fn(u64) -> u64,
    ) -> Result<u64, OutOfBounds> {
        let i = self.find(addr, size as u64).ok_or(OutOfBounds)?;
        let a = &self.allocations[i];
        // SAFETY: `find` checked that the bytes lie inside the live
        // allocation; the wide atomics are made only at aligned addresses.
        unsafe {
            let p = a.ptr.add((addr - a.base) as usize);
            Ok(match size {
                4 if p as usize % 4 == 0 => AtomicU32::from_ptr(p.cast())
                    .fetch_update(Relaxed, Relaxed, |x| Some(f(x as u64) as u32))
                    .unwrap_or_else(|x| x) as u64,
                8 if p as usize % 8 == 0 => AtomicU64::from_ptr(p.cast())
                    .fetch_update(Relaxed, Relaxed, |x| Some(f(x)))
                    .unwrap_or_else(|x| x),
                _ => {
                    let old = atomic_read(p, size);
                    atomic_write(p, size, f(old));
                    old
                }
            })
        }
    }

    /// Copies the bytes at `addr` into `out`, all inside one allocation,
    /// with atomic byte reads: for kernels (texture fetches), which may run
    /// while CTAs on other threads write.
    pub fn read_bytes(&self, addr: u64, out: &mut [u8]) -> Result<(), OutOfBounds> {
        let i = self.find(addr, out.len() as u64).ok_or(OutOfBounds)?;
        let a = &self.allocations[i];
        let off = (addr - a.base) as usize;
        for (k, byte) in out.iter_mut().enumerate() {
            // SAFETY: `find` checked that the bytes lie inside the live
            // allocation.
            *byte = unsafe { atomic_read(a.ptr.add(off + k), 1) } as u8;
        }
        Ok(())
    }

    /// The `len` bytes at `addr`, all inside one allocation. A plain slice:
    /// for the host side, while no kernel runs (kernels use `load`,
    /// `region_of` and `read_bytes`).
    #[inline]
    pub fn slice(&self, addr: u64, len: u64) -> Result<&[u8], OutOfBounds> {
        let i = self.find(addr, len).ok_or(OutOfBounds)?;
        let a = &self.allocations[i];
        let off = (addr - a.base) as usize;
        Ok(&a.bytes()[off..off + len as usize])
    }

    #[inline]
    pub fn slice_mut(&mut self, addr: u64, len: u64) -> Result<&mut [u8], OutOfBounds> {
        let i = self.find(addr, len).ok_or(OutOfBounds)?;
        let a = &mut self.allocations[i];
        let off = (addr - a.base) as usize;
        Ok(&mut a.bytes_mut()[off..off + len as usize])
    }

    /// Reads a little-endian value of `size` (1, 2, 4 or 8) bytes: one
    /// relaxed atomic load (kernels of other CTAs may write concurrently).
    #[inline]
    pub fn load(&self, addr: u64, size: u32) -> Result<u64, OutOfBounds> {
        let i = self.find(addr, size as u64).ok_or(OutOfBounds)?;
        let a = &self.allocations[i];
        // SAFETY: `find` checked that the `size` bytes lie inside the live
        // allocation, whose `ptr` is valid for `len` bytes.
        Ok(unsafe { atomic_read(a.ptr.add((addr - a.base) as usize), size) })
    }

    /// Writes the low `size` (1, 2, 4 or 8) bytes of `value`: one relaxed
    /// atomic store, so CTAs on other threads may access memory meanwhile.
    #[inline]
    pub fn store(&self, addr: u64, size: u32, value: u64) -> Result<(), OutOfBounds> {
        let i = self.find(addr, size as u64).ok_or(OutOfBounds)?;
        let a = &self.allocations[i];
        // SAFETY: as in `load`.
        unsafe { atomic_write(a.ptr.add((addr - a.base) as usize), size, value) };
        Ok(())
    }

    /// Copies between (possibly overlapping) ranges of global memory.
    pub fn copy(&mut self, dst: u64, src: u64, len: u64) -> Result<(), OutOfBounds> {
        if len == 0 {
            return Ok(());
        }
        let data = self.slice(src, len)?.to_vec();
        self.slice_mut(dst, len)?.copy_from_slice(&data);
        Ok(())
    }
}

/// Texels are read from device memory; a fault names the address.
impl TexelMemory for GlobalMemory {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), u64> {
        self.read_bytes(addr, out).map_err(|_| addr)
    }
}

/// Hiding and re-backing allocations for virtual memory, IPC and several
/// devices (see the file).
pub mod map;

/// One global allocation as a kernel sees it: reads of several lanes
/// without looking the allocation up again. Borrows the memory, so no
/// allocation or free can happen while it lives.
#[derive(Clone, Copy)]
pub struct Region<'m> {
    pub base: u64,
    ptr: *mut u8,
    len: usize,
    _memory: std::marker::PhantomData<&'m GlobalMemory>,
}

impl Region<'_> {
    /// The `size`-byte value at `addr`, `None` when it does not lie wholly
    /// inside the region.
    #[inline(always)]
    pub fn read(&self, addr: u64, size: u32) -> Option<u64> {
        let off = addr.wrapping_sub(self.base);
        if off.checked_add(size as u64)? > self.len as u64 {
            return None;
        }
        // SAFETY: the bytes lie inside the allocation, which stays live
        // while the region borrows the memory.
        Some(unsafe { atomic_read(self.ptr.add(off as usize), size) })
    }

    /// [`Region::read`] of a width known at compile time: the per-lane
    /// loop of a warp's load has no dispatch on the width.
    #[inline(always)]
    pub fn read_sized<const SIZE: u32>(&self, addr: u64) -> Option<u64> {
        self.read(addr, SIZE)
    }
}

/// Reads `size` (1, 2, 4 or 8) bytes at `p`, little-endian: one relaxed
/// atomic load of that width when `p` is aligned to it (PTX requires
/// natural alignment, and allocations are at least 16-byte aligned), byte
/// by byte otherwise (host-side callers with odd addresses).
///
/// # Safety
/// `p` must be valid for reads of `size` bytes.
#[inline(always)]
unsafe fn atomic_read(p: *mut u8, size: u32) -> u64 {
    // SAFETY: `p` is valid for reads of `size` bytes (the caller's
    // contract), so every arm stays inside them (the byte loop reads
    // `p + i` for `i < size`); a wider atomic is only made where its arm
    // checked `p` is aligned to its width; every concurrent access to these
    // bytes is atomic too (see the module comment), so none is a data race.
    unsafe {
        match size {
            1 => AtomicU8::from_ptr(p).load(Relaxed) as u64,
            2 if p as usize % 2 == 0 => AtomicU16::from_ptr(p.cast()).load(Relaxed) as u64,
            4 if p as usize % 4 == 0 => AtomicU32::from_ptr(p.cast()).load(Relaxed) as u64,
            8 if p as usize % 8 == 0 => AtomicU64::from_ptr(p.cast()).load(Relaxed),
            _ => {
                let mut v = 0u64;
                for i in 0..size.min(8) as usize {
                    v |= (AtomicU8::from_ptr(p.add(i)).load(Relaxed) as u64) << (8 * i);
                }
                v
            }
        }
    }
}

/// Writes the low `size` bytes of `value` at `p`, little-endian, as
/// [`atomic_read`] reads them.
///
/// # Safety
/// `p` must be valid for writes of `size` bytes.
#[inline(always)]
unsafe fn atomic_write(p: *mut u8, size: u32, value: u64) {
    // SAFETY: `p` is valid for writes of `size` bytes (the caller's
    // contract); alignment and concurrency as in `atomic_read`.
    unsafe {
        match size {
            1 => AtomicU8::from_ptr(p).store(value as u8, Relaxed),
            2 if p as usize % 2 == 0 => AtomicU16::from_ptr(p.cast()).store(value as u16, Relaxed),
            4 if p as usize % 4 == 0 => AtomicU32::from_ptr(p.cast()).store(value as u32, Relaxed),
            8 if p as usize % 8 == 0 => AtomicU64::from_ptr(p.cast()).store(value, Relaxed),
            _ => {
                for i in 0..size.min(8) as usize {
                    AtomicU8::from_ptr(p.add(i)).store((value >> (8 * i)) as u8, Relaxed);
                }
            }
        }
    }
}

/// Little-endian value of a 1–8 byte slice, zero-extended.
#[inline]
pub fn read_le(bytes: &[u8]) -> u64 {
    match bytes.len() {
        1 => bytes[0] as u64,
        2 => u16::from_le_bytes([bytes[0], bytes[1]]) as u64,
        4 => u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as u64,
        8 => u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8])),
        _ => {
            let mut v = 0u64;
            for (i, b) in bytes.iter().take(8).enumerate() {
                v |= (*b as u64) << (8 * i);
            }
            v
        }
    }
}

/// Writes the low `bytes.len()` bytes of `value`, little-endian.
#[inline]
pub fn write_le(bytes: &mut [u8], value: u64) {
    let le = value.to_le_bytes();
    let n = bytes.len().min(8);
    bytes[..n].copy_from_slice(&le[..n]);
}

/// A flat, bounds-checked byte memory addressed from 0: one CTA's shared
/// memory, a warp's local memory, a launch's param buffer.
#[derive(Debug, Default, Clone)]
pub struct FlatMemory {
    pub bytes: Vec<u8>,
}

impl FlatMemory {
    #[inline]
    pub fn load(&self, addr: u64, size: u32) -> Result<u64, OutOfBounds> {
        let end = addr.checked_add(size as u64).ok_or(OutOfBounds)?;
        if end > self.bytes.len() as u64 {
            return Err(OutOfBounds);
        }
        Ok(read_le(&self.bytes[addr as usize..end as usize]))
    }

    #[inline]
    pub fn store(&mut self, addr: u64, size: u32, value: u64) -> Result<(), OutOfBounds> {
        let end = addr.checked_add(size as u64).ok_or(OutOfBounds)?;
        if end > self.bytes.len() as u64 {
            return Err(OutOfBounds);
        }
        write_le(&mut self.bytes[addr as usize..end as usize], value);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_addresses_carry_the_rank_above_the_offset() {
        assert_eq!(cluster_address(0x1234, 0), 0x0100_1234);
        assert_eq!(split_cluster_address(0x0100_1234), (Some(0), 0x1234));
        assert_eq!(
            split_cluster_address(cluster_address(0x40, 7)),
            (Some(7), 0x40)
        );
        // Untagged: the executing CTA's own window.
        assert_eq!(split_cluster_address(0x40), (None, 0x40));
        // Only the offset bits of the address are kept; huge ranks saturate.
        assert_eq!(cluster_address(0x0300_0040, 1), 0x0200_0040);
        assert_eq!(
            split_cluster_address(cluster_address(0, u32::MAX)).0,
            Some(254)
        );
    }

    #[test]
    fn allocations_are_aligned_distinct_and_bounds_checked() {
        let mut m = GlobalMemory::new(1 << 20);
        let a = m.alloc(100).unwrap();
        let b = m.alloc(100).unwrap();
        assert_eq!(a % 256, 0);
        assert_ne!(a, 0);
        assert!(b > a + 100);
        m.store(a + 96, 4, 0xdeadbeef).unwrap();
        assert_eq!(m.load(a + 96, 4), Ok(0xdeadbeef));
        assert_eq!(m.load(a + 97, 4), Err(OutOfBounds));
        assert_eq!(m.load(a - 1, 1), Err(OutOfBounds));
        assert_eq!(m.range_of(a + 50), Some((a, 100)));
        assert!(m.free(a));
        assert!(!m.free(a));
        assert_eq!(m.load(a, 4), Err(OutOfBounds));
        assert_eq!(m.load(b, 4), Ok(0));
    }

    #[test]
    fn host_backed_allocations_share_bytes_and_bounds_checks() {
        let mut m = GlobalMemory::new(1 << 20);
        let mut host = vec![0u8; 4096];
        let p = host.as_mut_ptr();
        // SAFETY: `host` outlives its registration (freed below).
        unsafe { m.register_host(p, 4096) }.unwrap();
        assert!(m.is_host_backed(p as u64));
        m.store(p as u64 + 8, 4, 0xdead_beef).unwrap();
        assert_eq!(m.load(p as u64 + 8, 4), Ok(0xdead_beef));
        assert!(m.load(p as u64 + 4094, 4).is_err());
        // SAFETY: as above.
        let again = unsafe { m.register_host(p.wrapping_add(100), 8) };
        assert_eq!(again, Err(RegisterError::Overlaps));
        assert_eq!(m.used(), 0);
        assert!(m.free(p as u64));
        assert_eq!(&host[8..12], &0xdead_beef_u32.to_le_bytes());
        // SAFETY: a window address is refused before anything is stored.
        let window = unsafe { m.register_host(SHARED_WINDOW as *mut u8, 16) };
        assert_eq!(window, Err(RegisterError::Overlaps));
    }

    #[test]
    fn host_addressed_allocations_are_readable_through_their_address() {
        let mut m = GlobalMemory::new(1 << 20);
        let p = m.alloc_host_addressed(12).unwrap();
        assert!(m.is_host_backed(p));
        m.store(p + 4, 4, 77).unwrap();
        // SAFETY: the allocation is live and 12 bytes long.
        let host = unsafe { std::ptr::read_unaligned((p + 4) as *const u32) };
        assert_eq!(host, 77);
        assert!(m.load(p + 12, 1).is_err());
        assert_eq!(m.used(), 256);
        assert!(m.free(p));
        assert_eq!(m.used(), 0);
    }

    #[test]
    fn device_allocations_skip_host_backed_ranges() {
        let mut m = GlobalMemory::new(1 << 30);
        let first = m.alloc(256).unwrap();
        // A fake host range right where the next device allocation would go;
        // never dereferenced because nothing loads from it.
        let fake = (first + 256 + GUARD_BYTES + 255) & !255;
        // SAFETY: the range is only compared, never read or written.
        unsafe { m.register_host(fake as *mut u8, 1024) }.unwrap();
        let second = m.alloc(4096).unwrap();
        assert!(
            second >= fake + 1024 + GUARD_BYTES,
            "{second:x} vs {fake:x}"
        );
        assert!(m.free(fake));
        assert!(m.free(second) && m.free(first));
    }

    #[test]
    fn budget_is_enforced() {
        let mut m = GlobalMemory::new(1024);
        assert!(m.alloc(1024).is_some());
        assert!(m.alloc(1).is_none());
    }

    #[test]
    fn windows_classify_generic_addresses() {
        assert_eq!(window_of(SHARED_WINDOW + 12), Window::Shared);
        assert_eq!(window_of(LOCAL_WINDOW), Window::Local);
        assert_eq!(window_of(PARAM_WINDOW + 8), Window::Param);
        assert_eq!(window_of(GLOBAL_BASE), Window::Global);
    }

    #[test]
    fn flat_memory_checks_bounds() {
        let mut f = FlatMemory { bytes: vec![0; 8] };
        f.store(4, 4, 7).unwrap();
        assert_eq!(f.load(4, 4), Ok(7));
        assert_eq!(f.load(5, 4), Err(OutOfBounds));
        assert_eq!(f.load(u64::MAX, 4), Err(OutOfBounds));
    }
}
