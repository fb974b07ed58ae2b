//! The bytes behind a `TraceFile`: a memory map of a plain file, or one
//! 16-byte-aligned buffer holding a decompressed trace. Never both.

use bytemuck::{Pod, Zeroable};
use memmap2::Mmap;

/// 16 bytes with 16-byte alignment, so a buffer of them can be viewed as any
/// of the trace's record types without copying.
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
#[repr(C, align(16))]
pub(crate) struct Block16([u8; 16]);

/// A growable byte buffer whose start is 16-byte aligned.
///
/// `len` counts valid bytes; `blocks` may hold up to 15 bytes of tail padding.
#[derive(Default)]
pub(crate) struct AlignedBuf {
    blocks: Vec<Block16>,
    len: usize,
}

impl AlignedBuf {
    /// Reserves room for `bytes` without touching (or zeroing) that memory.
    /// Fails instead of aborting when the allocator refuses.
    pub fn try_reserve(&mut self, bytes: usize) -> Result<(), std::collections::TryReserveError> {
        let blocks = bytes.div_ceil(16);
        self.blocks
            .try_reserve_exact(blocks.saturating_sub(self.blocks.len()))
    }

    /// Grows the valid length to `new_len`, zero-filling the new bytes.
    pub fn try_resize(&mut self, new_len: usize) -> Result<(), std::collections::TryReserveError> {
        let blocks = new_len.div_ceil(16);
        if blocks > self.blocks.len() {
            self.blocks.try_reserve(blocks - self.blocks.len())?;
        }
        self.blocks.resize(blocks, Block16::default());
        self.len = new_len;
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn as_bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<Block16, u8>(&self.blocks)[..self.len]
    }

    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut::<Block16, u8>(&mut self.blocks)[..self.len]
    }

    /// Shrinks the valid length (used when a stream ends short of the buffer).
    pub fn truncate(&mut self, new_len: usize) {
        if new_len < self.len {
            self.len = new_len;
            self.blocks.truncate(new_len.div_ceil(16));
        }
    }
}

pub(crate) enum Storage {
    Mapped(Mmap),
    Inflated(AlignedBuf),
}

impl Storage {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Storage::Mapped(map) => map,
            Storage::Inflated(buf) => buf.as_bytes(),
        }
    }
}
