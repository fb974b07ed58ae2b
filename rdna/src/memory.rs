//! Device global memory: allocations in a sparse 64-bit address space, with
//! every access checked against them (a precise fault names the address).
//! Also the apertures of the generic (flat) address space.

use std::collections::BTreeMap;

/// First address handed out by the allocator.
pub const GLOBAL_BASE: u64 = 0x0000_1000_0000_0000;
/// `src_shared_base`: flat addresses in [base, base + 4 GiB) are LDS.
pub const SHARED_APERTURE: u64 = 0x0001_0000_0000_0000;
/// `src_private_base`: flat addresses in [base, base + 4 GiB) are scratch.
pub const PRIVATE_APERTURE: u64 = 0x0002_0000_0000_0000;
pub const APERTURE_SIZE: u64 = 1 << 32;

/// `len` zero bytes, or None when the host cannot provide them (a huge
/// request fails instead of aborting). Zeroed pages are mapped lazily, so
/// large, sparsely used allocations stay cheap.
fn zeroed(len: usize) -> Option<Vec<u8>> {
    let layout = std::alloc::Layout::array::<u8>(len).ok()?;
    // SAFETY: `len >= 1`, so the layout has a nonzero size, as alloc_zeroed requires.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` was just allocated by the global allocator with the
    // layout of `[u8; len]` (align 1, size len) and holds `len` initialized
    // (zero) bytes; the Vec takes sole ownership with capacity `len`.
    Some(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

#[derive(Debug, Default)]
pub struct GlobalMemory {
    allocs: BTreeMap<u64, Vec<u8>>,
    next: u64,
}

impl GlobalMemory {
    pub fn new() -> GlobalMemory {
        GlobalMemory {
            allocs: BTreeMap::new(),
            next: GLOBAL_BASE,
        }
    }

    /// Allocates `size` zeroed bytes aligned to `align` (a power of two,
    /// at least 256). Addresses are never reused, so a stale pointer faults.
    pub fn alloc(&mut self, size: u64, align: u64) -> Option<u64> {
        let align = align.max(256).checked_next_power_of_two()?;
        let addr = self.next.checked_add(align - 1)? & !(align - 1);
        let len = usize::try_from(size.max(1)).ok()?;
        let buf = zeroed(len)?;
        // Guard gap between allocations so overruns fault.
        self.next = addr.checked_add(size.max(1))?.checked_add(4096)?;
        self.allocs.insert(addr, buf);
        Some(addr)
    }

    pub fn free(&mut self, addr: u64) -> bool {
        self.allocs.remove(&addr).is_some()
    }

    /// The allocation containing `addr`: (base, size).
    pub fn allocation_of(&self, addr: u64) -> Option<(u64, u64)> {
        let (&base, buf) = self.allocs.range(..=addr).next_back()?;
        (addr < base + buf.len() as u64).then_some((base, buf.len() as u64))
    }

    fn span(&self, addr: u64, len: usize) -> Option<(u64, usize)> {
        let (&base, buf) = self.allocs.range(..=addr).next_back()?;
        let off = (addr - base) as usize;
        (off.checked_add(len)? <= buf.len()).then_some((base, off))
    }

    /// Reads `out.len()` bytes; `Err(addr)` names the first faulting byte.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), u64> {
        let (base, off) = self
            .span(addr, out.len())
            .ok_or_else(|| self.first_bad(addr, out.len()))?;
        out.copy_from_slice(&self.allocs[&base][off..off + out.len()]);
        Ok(())
    }

    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), u64> {
        let (base, off) = self
            .span(addr, data.len())
            .ok_or_else(|| self.first_bad(addr, data.len()))?;
        self.allocs.get_mut(&base).unwrap()[off..off + data.len()].copy_from_slice(data);
        Ok(())
    }

    pub fn memset(&mut self, addr: u64, value: u8, len: usize) -> Result<(), u64> {
        let (base, off) = self
            .span(addr, len)
            .ok_or_else(|| self.first_bad(addr, len))?;
        self.allocs.get_mut(&base).unwrap()[off..off + len].fill(value);
        Ok(())
    }

    fn first_bad(&self, addr: u64, len: usize) -> u64 {
        (0..len as u64)
            .map(|i| addr.wrapping_add(i))
            .find(|&a| self.allocation_of(a).is_none())
            .unwrap_or(addr)
    }

    /// Describes `addr` against the closest allocation: "N bytes past the end
    /// of the 256-byte allocation at 0x...", or "N bytes before ...".
    pub fn nearest(&self, addr: u64) -> Option<String> {
        if addr < 1 << 16 {
            return Some(format!("a null pointer plus {addr:#x}"));
        }
        let below = self
            .allocs
            .range(..=addr)
            .next_back()
            .map(|(&b, v)| (b, v.len() as u64));
        let above = self
            .allocs
            .range(addr..)
            .next()
            .map(|(&b, v)| (b, v.len() as u64));
        let past = below.map(|(b, n)| (addr.wrapping_sub(b + n), b, n));
        let before = above.map(|(b, n)| (b.wrapping_sub(addr), b, n));
        // Far from everything: no allocation explains it.
        let near = |d: u64| d < 1 << 32;
        let past = past.filter(|p| near(p.0));
        let before = before.filter(|b| near(b.0));
        match (past, before) {
            (Some((d, b, n)), Some((e, ..))) if d <= e => Some(format!(
                "{d} bytes past the end of the {n}-byte allocation at {b:#x}"
            )),
            (Some((d, b, n)), None) => Some(format!(
                "{d} bytes past the end of the {n}-byte allocation at {b:#x}"
            )),
            (_, Some((e, b, n))) => Some(format!(
                "{e} bytes before the {n}-byte allocation at {b:#x}"
            )),
            (None, None) => None,
        }
    }

    pub fn read_u32(&self, addr: u64) -> Result<u32, u64> {
        let mut b = [0; 4];
        self.read(addr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }
}
