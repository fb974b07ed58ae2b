//! Zero-copy views into an open trace: one warp's events, one warp's ring.

use crate::layout::{RingHeader, TraceEvent, WarpBufferHeader};

/// One warp slot: its buffer header and exactly its `num_events` events.
#[derive(Clone, Copy, Debug)]
pub struct Warp<'a> {
    pub index: usize,
    pub header: &'a WarpBufferHeader,
    pub events: &'a [TraceEvent],
}

impl Warp<'_> {
    /// True when the device dropped events because the buffer was full.
    pub fn overflowed(&self) -> bool {
        self.header.overflow_count > 0 || self.header.write_idx as usize > self.events.len()
    }
}

/// One warp's circular buffer (history or snapshots): header plus all `depth` slots.
#[derive(Debug)]
pub struct Ring<'a, T> {
    pub header: &'a RingHeader,
    /// Every slot in storage order, written or not; see [`Ring::chronological`].
    pub entries: &'a [T],
}

// Manual impls: a derive would demand `T: Clone`, though only references are copied.
impl<T> Clone for Ring<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Ring<'_, T> {}

impl<'a, T> Ring<'a, T> {
    /// Entries actually holding data: `min(total_writes, depth)`.
    pub fn len(&self) -> usize {
        (self.header.total_writes as usize).min(self.entries.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when older entries were overwritten (`total_writes > depth`).
    pub fn wrapped(&self) -> bool {
        self.header.total_writes as usize > self.entries.len()
    }

    /// Written entries, oldest first.
    ///
    /// The device writes slot `n % depth` for the n-th record, so once the
    /// ring has wrapped the oldest surviving entry sits at `total_writes % depth`.
    pub fn chronological(&self) -> impl Iterator<Item = &'a T> + use<'a, T> {
        let entries: &'a [T] = self.entries;
        let total = self.header.total_writes as usize;
        let (older, newer): (&'a [T], &'a [T]) = if entries.is_empty() {
            (&[], &[])
        } else if total <= entries.len() {
            (&entries[..total], &[])
        } else {
            let oldest = total % entries.len();
            (&entries[oldest..], &entries[..oldest])
        };
        older.iter().chain(newer.iter())
    }
}
