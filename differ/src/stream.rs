//! Diffing two compressed traces while they decode.
//!
//! Decoding a 1 GiB trace into one fresh buffer costs more in page faults
//! and memory traffic than the decompression itself (262144 first-touch
//! faults per GiB). Here the two traces decode in parallel, A on the calling
//! thread and B on another (on a single CPU, on this thread too), a chunk of `WARPS_PER_CHUNK` warp records at a time into
//! buffers that are reused, so they stay in cache and are faulted in once. The calling thread compares each A chunk with B's as it comes,
//! and keeps only the warps that diverged or overflowed (a
//! [`StreamedTrace`]); the history and snapshot rings, after the warps, are
//! kept whole for the report.
//!
//! The checks are the reader's: the header and layout (`SectionLayout`),
//! every warp's event count, every ring's depth, and a frame that decodes to
//! exactly the size the header implies. Anything the streaming path does not
//! handle, or finds wrong, goes to the reader instead ([`diff_files`] falls
//! back to [`crate::open_pair`]), whose errors name the file and field.

use crate::diff::{
    DiffOptions, TraceDiff, WarpPairing, diff_traces_paired, diff_warp_pair, launch_mismatches,
};
use crate::open::{first_header, is_compressed, open_pair};
use crate::view::TraceView;
use prlx_trace::{
    HEADER_SIZE, HistoryEntry, Ring, RingHeader, Section, SectionLayout, SnapshotEntry, TraceError,
    TraceEvent, TraceFile, TraceFileHeader, Warp, WarpBufferHeader, ZSTD_MAGIC, flags,
};
use std::collections::HashMap;
use std::path::Path;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use zstd::stream::raw::{Decoder, Operation};

/// Warp records per chunk: 1 MiB of 4096-event warps, small enough to stay
/// in cache between decoding and comparing.
const WARPS_PER_CHUNK: usize = 16;

/// Chunks a decoder may run ahead of the comparison (64 MiB of 4096-event
/// warps): enough that a decoder descheduled on a busy machine does not
/// stall the other one.
const CHUNKS_IN_FLIGHT: usize = 64;

/// A trace opened for a diff.
pub enum OpenedTrace {
    /// Mapped (plain) or decoded whole.
    File(TraceFile),
    /// Diffed while decoding: only the warps that diverged or overflowed.
    Streamed(StreamedTrace),
}

/// Two traces and their diff, from [`diff_files`].
pub struct DiffedPair {
    pub a: OpenedTrace,
    pub b: OpenedTrace,
    pub diff: TraceDiff,
}

/// Opens and diffs the traces at `a` and `b`. Two compressed traces whose
/// frames declare their size are diffed while they decode; anything else is
/// opened (in parallel) and diffed in memory.
pub fn diff_files(
    a: &Path,
    b: &Path,
    opts: &DiffOptions,
    pairing: WarpPairing,
) -> Result<DiffedPair, TraceError> {
    if pairing == WarpPairing::BySlot {
        let (sa, sb) = rayon::join(|| Source::load(a), || Source::load(b));
        if let (Some(sa), Some(sb)) = (sa, sb) {
            let all = crate::diff::with_values(opts);
            if let Ok(mut pair) = stream_diff(&sa, &sb, &all, spare_core()) {
                if !opts.align.compare_values {
                    pair.diff.set_aside_values();
                }
                return Ok(pair);
            }
        }
    }
    let (ta, tb) = open_pair(a, b);
    let (ta, tb) = (ta?, tb?);
    let diff = diff_traces_paired(&ta, &tb, opts, pairing);
    Ok(DiffedPair {
        a: OpenedTrace::File(ta),
        b: OpenedTrace::File(tb),
        diff,
    })
}

/// A trace diffed while streaming: its header, the warps that diverged or
/// overflowed, and its rings. [`TraceView::warp`] is `None` for the others.
pub struct StreamedTrace {
    name: String,
    header: TraceFileHeader,
    num_warps: usize,
    kept: HashMap<usize, KeptWarp>,
    history: Option<Rings<HistoryEntry>>,
    snapshots: Option<Rings<SnapshotEntry>>,
}

struct KeptWarp {
    header: WarpBufferHeader,
    events: Vec<TraceEvent>,
}

/// One ring section: every warp's ring header and `depth` entries.
struct Rings<T> {
    headers: Vec<RingHeader>,
    entries: Vec<T>,
    depth: usize,
}

impl<T> Rings<T> {
    fn ring(&self, warp: usize) -> Option<Ring<'_, T>> {
        let header = self.headers.get(warp)?;
        let entries = self
            .entries
            .get(warp * self.depth..(warp + 1) * self.depth)?;
        Some(Ring { header, entries })
    }
}

impl StreamedTrace {
    /// Warps kept (diverged or overflowed).
    pub fn kept_warps(&self) -> usize {
        self.kept.len()
    }
}

impl TraceView for StreamedTrace {
    fn name(&self) -> &str {
        &self.name
    }
    fn header(&self) -> &TraceFileHeader {
        &self.header
    }
    fn num_warps(&self) -> usize {
        self.num_warps
    }
    fn warp(&self, idx: usize) -> Option<Warp<'_>> {
        self.kept.get(&idx).map(|k| Warp {
            index: idx,
            header: &k.header,
            events: &k.events,
        })
    }
    fn history(&self, warp: usize) -> Option<Ring<'_, HistoryEntry>> {
        self.history.as_ref()?.ring(warp)
    }
    fn snapshots(&self, warp: usize) -> Option<Ring<'_, SnapshotEntry>> {
        self.snapshots.as_ref()?.ring(warp)
    }
}

impl TraceView for OpenedTrace {
    fn name(&self) -> &str {
        self.inner().name()
    }
    fn header(&self) -> &TraceFileHeader {
        self.inner().header()
    }
    fn num_warps(&self) -> usize {
        self.inner().num_warps()
    }
    fn warp(&self, idx: usize) -> Option<Warp<'_>> {
        self.inner().warp(idx)
    }
    fn history(&self, warp: usize) -> Option<Ring<'_, HistoryEntry>> {
        self.inner().history(warp)
    }
    fn snapshots(&self, warp: usize) -> Option<Ring<'_, SnapshotEntry>> {
        self.inner().snapshots(warp)
    }
}

impl OpenedTrace {
    fn inner(&self) -> &dyn TraceView {
        match self {
            OpenedTrace::File(t) => t,
            OpenedTrace::Streamed(t) => t,
        }
    }
}

/// A compressed trace the streaming path can take.
struct Source {
    name: String,
    raw: Vec<u8>,
    /// Where the zstd frame starts: 0 (whole file) or after the plain header.
    frame_start: usize,
    header: TraceFileHeader,
    layout: SectionLayout,
}

impl Source {
    fn load(path: &Path) -> Option<Source> {
        let name = path.display().to_string();
        if !is_compressed(path) {
            return None; // a plain trace is mapped, never read whole
        }
        let raw = std::fs::read(path).ok()?;
        let whole_file = raw.starts_with(&ZSTD_MAGIC);
        let (frame_start, header) = if whole_file {
            (0, first_header(&raw)?)
        } else {
            let head = raw.get(..HEADER_SIZE)?;
            let header: TraceFileHeader = bytemuck::pod_read_unaligned(head);
            if !header.has_flag(flags::COMPRESS) {
                return None;
            }
            (HEADER_SIZE, header)
        };
        let layout = SectionLayout::from_header(&name, &header, !whole_file).ok()?;
        let declared = zstd::zstd_safe::get_frame_content_size(&raw[frame_start..]).ok()??;
        let rings_follow = [&layout.history, &layout.snapshots]
            .into_iter()
            .flatten()
            .all(|s| s.offset >= layout.warps.end());
        let fits = declared + frame_start as u64 == layout.total_len
            && layout.warps.offset == HEADER_SIZE as u64
            && rings_follow
            && usize::try_from(layout.total_len).is_ok();
        fits.then_some(Source {
            name,
            raw,
            frame_start,
            header,
            layout,
        })
    }

    fn stride(&self) -> usize {
        self.layout.warps.stride as usize
    }
}

/// `count` warp records starting at warp `first`, as decoded.
struct Chunk {
    first: usize,
    count: usize,
    bytes: Vec<u8>,
}

/// Pulls exact amounts of output from one zstd frame.
struct FrameReader<'a> {
    decoder: Decoder<'static>,
    input: &'a [u8],
    pos: usize,
    done: bool,
}

impl FrameReader<'_> {
    fn fill(&mut self, out: &mut [u8]) -> Result<(), String> {
        let mut filled = 0;
        while filled < out.len() {
            if self.done {
                return Err("the frame ends early".into());
            }
            let status = self
                .decoder
                .run_on_buffers(&self.input[self.pos..], &mut out[filled..])
                .map_err(|e| e.to_string())?;
            self.pos += status.bytes_read;
            filled += status.bytes_written;
            if status.remaining == 0 {
                self.done = true;
            } else if status.bytes_read == 0 && status.bytes_written == 0 {
                return Err("the frame is truncated".into());
            }
        }
        Ok(())
    }

    /// The frame must end here, with nothing after it.
    fn finish(mut self) -> Result<(), String> {
        let mut scratch = [0u8; 64];
        while !self.done {
            let status = self
                .decoder
                .run_on_buffers(&self.input[self.pos..], &mut scratch)
                .map_err(|e| e.to_string())?;
            self.pos += status.bytes_read;
            if status.bytes_written > 0 {
                return Err("the frame holds more than the header implies".into());
            }
            if status.remaining == 0 {
                self.done = true;
            } else if status.bytes_read == 0 {
                return Err("the frame is truncated".into());
            }
        }
        if self.pos != self.input.len() {
            return Err("bytes follow the frame".into());
        }
        Ok(())
    }
}

/// One trace's frame, decoded a chunk of warp records at a time.
struct ChunkDecoder<'s> {
    src: &'s Source,
    reader: FrameReader<'s>,
    next_warp: usize,
}

impl<'s> ChunkDecoder<'s> {
    fn new(src: &'s Source) -> Result<ChunkDecoder<'s>, String> {
        let mut reader = FrameReader {
            decoder: Decoder::new().map_err(|e| e.to_string())?,
            input: &src.raw[src.frame_start..],
            pos: 0,
            done: false,
        };
        if src.frame_start == 0 {
            reader.fill(&mut [0u8; HEADER_SIZE])?; // the header, parsed already
        }
        Ok(ChunkDecoder {
            src,
            reader,
            next_warp: 0,
        })
    }

    /// The next chunk of warp records, decoded into `bytes` (reused); None
    /// after the last warp.
    fn next(&mut self, mut bytes: Vec<u8>) -> Result<Option<Chunk>, String> {
        let num_warps = self.src.layout.num_warps;
        if self.next_warp >= num_warps {
            return Ok(None);
        }
        let count = WARPS_PER_CHUNK.min(num_warps - self.next_warp);
        bytes.resize(count * self.src.stride(), 0);
        self.reader.fill(&mut bytes)?;
        let first = self.next_warp;
        self.next_warp += count;
        Ok(Some(Chunk {
            first,
            count,
            bytes,
        }))
    }

    /// After the last chunk: the bytes after the warp section (the rings),
    /// and the frame must end there.
    fn finish(mut self) -> Result<Vec<u8>, String> {
        let rest_len = (self.src.layout.total_len - self.src.layout.warps.end()) as usize;
        let mut rest = vec![0u8; rest_len];
        self.reader.fill(&mut rest)?;
        self.reader.finish()?;
        Ok(rest)
    }
}

/// Decodes `src` on its own thread into chunks sent on `out` (buffers come
/// back on `recycled`), then returns the bytes after the warp section.
fn decode(
    src: &Source,
    out: SyncSender<Chunk>,
    recycled: Receiver<Vec<u8>>,
) -> Result<Vec<u8>, String> {
    let mut decoder = ChunkDecoder::new(src)?;
    while let Some(chunk) = decoder.next(recycled.try_recv().unwrap_or_default())? {
        out.send(chunk)
            .map_err(|_| "the comparison stopped".to_owned())?;
    }
    drop(out);
    decoder.finish()
}

/// Where B's chunks come from: its own thread, or this one.
enum SideB<'s, 'scope> {
    Thread {
        chunks: Receiver<Chunk>,
        back: Sender<Vec<u8>>,
        thread: std::thread::ScopedJoinHandle<'scope, Result<Vec<u8>, String>>,
    },
    Here(ChunkDecoder<'s>, Vec<u8>),
}

impl SideB<'_, '_> {
    fn next(&mut self) -> Result<Option<Chunk>, String> {
        match self {
            SideB::Thread { chunks, .. } => Ok(chunks.recv().ok()),
            SideB::Here(decoder, buf) => decoder.next(std::mem::take(buf)),
        }
    }

    fn give_back(&mut self, bytes: Vec<u8>) {
        match self {
            SideB::Thread { back, .. } => {
                let _ = back.send(bytes);
            }
            SideB::Here(_, buf) => *buf = bytes,
        }
    }

    /// The bytes after B's warps. A thread still decoding (the comparison
    /// stopped on a failed check) stops when its channel closes.
    fn finish(self) -> Result<Vec<u8>, String> {
        match self {
            SideB::Thread { chunks, thread, .. } => {
                drop(chunks);
                thread.join().map_err(|_| "a decoder panicked".to_owned())?
            }
            SideB::Here(decoder, _) => decoder.finish(),
        }
    }
}

/// Whether a second decoding thread can run beside this one. On a busy
/// machine it still pays: measured with every core taken (load average 15
/// on 2), one thread took 3.5x the wall time of `zstd -dc` and two 1.8x
/// (`docs/differ-benchmark.md`).
fn spare_core() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() > 1)
}

/// Warp `i` of a chunk, checked like the reader checks it.
fn warp_in<'c>(
    src: &Source,
    chunk: &'c Chunk,
    i: usize,
    aligned: &'c mut Vec<TraceEvent>,
) -> Result<(WarpBufferHeader, &'c [TraceEvent]), String> {
    let stride = src.stride();
    let record = &chunk.bytes[i * stride..(i + 1) * stride];
    let header: WarpBufferHeader = bytemuck::pod_read_unaligned(&record[..16]);
    let epw = src.header.events_per_warp;
    if header.num_events != header.write_idx.min(epw) {
        return Err(format!("warp[{}].num_events", chunk.first + i));
    }
    let bytes = &record[16..16 + header.num_events as usize * 16];
    let events = match bytemuck::try_cast_slice::<u8, TraceEvent>(bytes) {
        Ok(events) => events,
        Err(_) => {
            *aligned = pod_vec(bytes);
            aligned.as_slice()
        }
    };
    Ok((header, events))
}

fn stream_diff(
    sa: &Source,
    sb: &Source,
    opts: &DiffOptions,
    parallel: bool,
) -> Result<DiffedPair, String> {
    let (na, nb) = (sa.layout.num_warps, sb.layout.num_warps);
    let shared = na.min(nb);
    let mut diff = TraceDiff {
        warps_compared: shared,
        warnings: launch_mismatches((&sa.header, na), (&sb.header, nb), WarpPairing::BySlot),
        ..TraceDiff::default()
    };
    let mut kept_a = HashMap::new();
    let mut kept_b = HashMap::new();
    // A decodes on this thread, into one buffer it reuses; B on another,
    // running ahead by up to CHUNKS_IN_FLIGHT chunks (on a single CPU, here
    // too).
    let (rest_a, rest_b) = std::thread::scope(|scope| -> Result<_, String> {
        let mut side_b = if parallel {
            let (tx_b, rx_b) = sync_channel(CHUNKS_IN_FLIGHT);
            let (back_b, recycled_b) = channel();
            let thread = scope.spawn(move || decode(sb, tx_b, recycled_b));
            SideB::Thread {
                chunks: rx_b,
                back: back_b,
                thread,
            }
        } else {
            SideB::Here(ChunkDecoder::new(sb)?, Vec::new())
        };
        let mut dec_a = ChunkDecoder::new(sa)?;
        let mut buf_a = Vec::new();
        let compared = (|| -> Result<(), String> {
            let (mut scratch_a, mut scratch_b) = (Vec::new(), Vec::new());
            loop {
                let ca = dec_a.next(std::mem::take(&mut buf_a))?;
                let cb = side_b.next()?;
                if ca.is_none() && cb.is_none() {
                    return Ok(());
                }
                // Chunks cover the same warps on both sides; past the
                // shorter trace only the longer one's warps are checked.
                for i in 0..ca.as_ref().map_or(0, |c| c.count) {
                    warp_in(
                        sa,
                        ca.as_ref().unwrap_or_else(|| unreachable!()),
                        i,
                        &mut scratch_a,
                    )?;
                }
                for i in 0..cb.as_ref().map_or(0, |c| c.count) {
                    warp_in(
                        sb,
                        cb.as_ref().unwrap_or_else(|| unreachable!()),
                        i,
                        &mut scratch_b,
                    )?;
                }
                if let (Some(ca), Some(cb)) = (&ca, &cb) {
                    for i in 0..ca.count.min(cb.count) {
                        let w = ca.first + i;
                        let (ha, ea) = warp_in(sa, ca, i, &mut scratch_a)?;
                        let (hb, eb) = warp_in(sb, cb, i, &mut scratch_b)?;
                        let (wa, wb) = (
                            Warp {
                                index: w,
                                header: &ha,
                                events: ea,
                            },
                            Warp {
                                index: w,
                                header: &hb,
                                events: eb,
                            },
                        );
                        let Some(outcome) = diff_warp_pair(&wa, &wb, true, opts) else {
                            continue;
                        };
                        kept_a.insert(
                            w,
                            KeptWarp {
                                header: ha,
                                events: ea.to_vec(),
                            },
                        );
                        kept_b.insert(
                            w,
                            KeptWarp {
                                header: hb,
                                events: eb.to_vec(),
                            },
                        );
                        diff.diverged.extend(outcome.diverged);
                        diff.overflowed.extend(outcome.overflowed);
                    }
                }
                if let Some(c) = ca {
                    buf_a = c.bytes;
                }
                if let Some(c) = cb {
                    side_b.give_back(c.bytes);
                }
            }
        })();
        let rest_b = side_b.finish();
        compared?;
        Ok((dec_a.finish()?, rest_b?))
    })?;
    Ok(DiffedPair {
        a: OpenedTrace::Streamed(streamed(sa, kept_a, &rest_a)?),
        b: OpenedTrace::Streamed(streamed(sb, kept_b, &rest_b)?),
        diff,
    })
}

fn streamed(
    src: &Source,
    kept: HashMap<usize, KeptWarp>,
    rest: &[u8],
) -> Result<StreamedTrace, String> {
    let mut header = src.header;
    header.flags &= !flags::COMPRESS;
    Ok(StreamedTrace {
        name: src.name.clone(),
        header,
        num_warps: src.layout.num_warps,
        kept,
        history: rings(src, src.layout.history.as_ref(), rest)?,
        snapshots: rings(src, src.layout.snapshots.as_ref(), rest)?,
    })
}

/// A ring section out of `rest` (the bytes after the warp section), every
/// ring's depth checked like the reader checks it.
fn rings<T: bytemuck::Pod>(
    src: &Source,
    section: Option<&Section>,
    rest: &[u8],
) -> Result<Option<Rings<T>>, String> {
    let Some(section) = section else {
        return Ok(None);
    };
    let base = src.layout.warps.end();
    let depth = section.depth as usize;
    let mut headers = Vec::with_capacity(src.layout.num_warps);
    let mut entries = Vec::with_capacity(src.layout.num_warps * depth);
    for w in 0..src.layout.num_warps {
        let at = (section.record_offset(w) - base) as usize;
        let record = rest
            .get(at..at + section.stride as usize)
            .ok_or("a ring lies past the decoded bytes")?;
        let header: RingHeader = bytemuck::pod_read_unaligned(&record[..16]);
        if header.depth != section.depth {
            return Err(format!("ring[{w}].depth"));
        }
        headers.push(header);
        entries.extend(pod_vec::<T>(&record[16..16 + depth * size_of::<T>()]));
    }
    Ok(Some(Rings {
        headers,
        entries,
        depth,
    }))
}

/// Plain-old-data records out of bytes of any alignment.
fn pod_vec<T: bytemuck::Pod>(bytes: &[u8]) -> Vec<T> {
    bytes
        .chunks_exact(size_of::<T>())
        .map(bytemuck::pod_read_unaligned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::DiffReport;
    use prlx_trace::{Compression, EventType, TraceBuilder};

    #[test]
    fn one_thread_or_two_give_the_same_diff() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, flip: usize| {
            let mut b = TraceBuilder::new("k", [40, 1, 1], [32, 1, 1])
                .unwrap()
                .events_per_warp(16);
            for w in 0..b.num_warps() {
                for i in 0..16u32 {
                    let e = TraceEvent {
                        site_id: i,
                        event_type: EventType::Branch as u8,
                        branch_dir: u8::from(w == flip && i == 3),
                        active_mask: u32::MAX,
                        ..TraceEvent::default()
                    };
                    b.push_event(w, e).unwrap();
                }
            }
            let path = dir.path().join(name);
            b.write_file(&path, Compression::WholeFile { level: 1 })
                .unwrap();
            Source::load(&path).expect("streamable")
        };
        let (a, b) = (write("a.zst", usize::MAX), write("b.zst", 33));
        let reports: Vec<String> = [false, true]
            .map(|parallel| {
                let pair = stream_diff(&a, &b, &DiffOptions::default(), parallel).unwrap();
                DiffReport::build(&pair.a, &pair.b, &pair.diff, None).to_json()
            })
            .to_vec();
        assert_eq!(reports[0], reports[1]);
        assert!(
            reports[0].contains("\"warps_diverged\": 1"),
            "{}",
            reports[0]
        );
    }
}
