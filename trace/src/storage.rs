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

impl AlignedBuf {
    /// A 16-byte-aligned copy of `bytes`.
    pub fn copy_of(bytes: &[u8]) -> Result<AlignedBuf, std::collections::TryReserveError> {
        let mut buf = AlignedBuf::default();
        buf.try_resize(bytes.len())?;
        buf.as_bytes_mut().copy_from_slice(bytes);
        Ok(buf)
    }
}

pub(crate) enum Storage {
    Mapped(Mmap),
    Inflated(AlignedBuf),
    /// A caller's vector that happened to be 16-byte aligned, kept without copying.
    Owned(Vec<u8>),
}

impl Storage {
    /// Keeps `bytes` if it is 16-byte aligned, else copies it once into an aligned buffer.
    pub fn from_vec(bytes: Vec<u8>) -> Result<Storage, std::collections::TryReserveError> {
        if bytes.as_ptr().align_offset(16) == 0 {
            Ok(Storage::Owned(bytes))
        } else {
            AlignedBuf::copy_of(&bytes).map(Storage::Inflated)
        }
    }

    pub fn bytes(&self) -> &[u8] {
        match self {
            Storage::Mapped(map) => map,
            Storage::Inflated(buf) => buf.as_bytes(),
            Storage::Owned(bytes) => bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unaligned_input_is_copied_to_an_aligned_buffer() {
        let backing: Vec<u8> = (0..=255).collect();
        // Some start in the first 16 bytes is misaligned whatever the allocator did.
        let start = (0..16)
            .find(|&i| backing[i..].as_ptr().align_offset(16) != 0)
            .unwrap();
        let buf = AlignedBuf::copy_of(&backing[start..]).unwrap();
        assert_eq!(buf.as_bytes(), &backing[start..]);
        assert_eq!(buf.as_bytes().as_ptr().align_offset(16), 0);
        assert_eq!(buf.len(), 256 - start);
    }

    #[test]
    fn growth_and_truncation_keep_contents() {
        let mut buf = AlignedBuf::default();
        buf.try_reserve(100).unwrap();
        buf.try_resize(5).unwrap();
        buf.as_bytes_mut().copy_from_slice(b"abcde");
        buf.try_resize(40).unwrap();
        assert_eq!(&buf.as_bytes()[..6], b"abcde\0");
        buf.truncate(3);
        assert_eq!(buf.as_bytes(), b"abc");
    }

    #[test]
    fn aligned_vectors_are_kept_without_copying() {
        let bytes = vec![7u8; 4096];
        let ptr = bytes.as_ptr();
        let storage = Storage::from_vec(bytes).unwrap();
        if ptr.align_offset(16) == 0 {
            assert!(matches!(storage, Storage::Owned(_)));
            assert_eq!(storage.bytes().as_ptr(), ptr);
        }
        assert_eq!(storage.bytes().len(), 4096);
    }
}
