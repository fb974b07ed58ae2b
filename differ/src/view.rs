//! What the report reads of a trace: its header, the warps that diverged,
//! and their history and snapshot rings. An open [`TraceFile`] provides all
//! of it; a trace diffed while streaming ([`crate::stream`]) keeps only the
//! warps that diverged or overflowed.

use prlx_trace::{
    HistoryEntry, Ring, SnapshotEntry, TraceFile, TraceFileHeader, Warp, WarpLocation,
};

pub trait TraceView: Sync {
    /// The path or name as given, for messages.
    fn name(&self) -> &str;
    fn header(&self) -> &TraceFileHeader;
    fn num_warps(&self) -> usize;
    /// Warp slot `idx` (for a streamed trace: only a warp it kept).
    fn warp(&self, idx: usize) -> Option<Warp<'_>>;
    fn history(&self, warp: usize) -> Option<Ring<'_, HistoryEntry>>;
    fn snapshots(&self, warp: usize) -> Option<Ring<'_, SnapshotEntry>>;

    fn kernel_name(&self) -> String {
        self.header().kernel_name()
    }

    fn warp_location(&self, idx: usize) -> WarpLocation {
        WarpLocation::of(self.header(), idx)
    }
}

impl TraceView for TraceFile {
    fn name(&self) -> &str {
        TraceFile::name(self)
    }
    fn header(&self) -> &TraceFileHeader {
        TraceFile::header(self)
    }
    fn num_warps(&self) -> usize {
        TraceFile::num_warps(self)
    }
    fn warp(&self, idx: usize) -> Option<Warp<'_>> {
        TraceFile::warp(self, idx)
    }
    fn history(&self, warp: usize) -> Option<Ring<'_, HistoryEntry>> {
        TraceFile::history(self, warp)
    }
    fn snapshots(&self, warp: usize) -> Option<Ring<'_, SnapshotEntry>> {
        TraceFile::snapshots(self, warp)
    }
}
