//! Capturing one launch of a kernel built with the pass.
//!
//! The device runtime (`device-rt/README.md`) records into buffers found
//! through the module's `__prlx_desc` global. Around the application's
//! launch this module: allocates the trace image (header + one buffer per
//! warp slot) and the optional history and snapshot rings, fills the
//! descriptor, lets the launch run, synchronises the launch's stream, copies
//! back only each warp's header and used events — in a few strided copies,
//! not two per warp (each copy is a driver round trip on a real GPU) —
//! clears the descriptor and frees everything. The launch's own result is never changed by a capture
//! failure: the caller gets what the real driver returned.

use crate::config::Config;
use crate::driver::Cuda;
use crate::ffi::*;
use prlx_trace::{
    HEADER_SIZE, PRLX_MAGIC, PRLX_VERSION, RingHeader, SNAPSHOT_ENTRY_SIZE, TraceEvent,
    TraceFileHeader, WARP_HEADER_SIZE, WarpBufferHeader, flags, kernel_name_hash,
};
use std::ffi::c_void;
use std::io::Write as _;

/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR` / `_MINOR`.
const ATTR_CC_MAJOR: i32 = 75;
const ATTR_CC_MINOR: i32 = 76;
/// Device bytes one capture may ask for; beyond this the launch runs uncaptured.
const MAX_CAPTURE_BYTES: u64 = 8 << 30;

/// The `__prlx_desc` layout (`device-rt/src/prlx_layout.h`, 64 bytes).
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Descriptor {
    pub trace: u64,
    pub history: u64,
    pub snapshot: u64,
    pub events_per_warp: u32,
    pub total_warp_slots: u32,
    pub history_depth: u32,
    pub snapshot_depth: u32,
    pub sample_rate: u32,
    pub reserved: [u32; 5],
}
const _: () = assert!(std::mem::size_of::<Descriptor>() == 64);

/// A launch's trace as copied back, ready to encode.
pub struct CapturedTrace {
    pub header: TraceFileHeader,
    /// Per warp slot: its header (num_events finalised) and its used events.
    pub warps: Vec<(WarpBufferHeader, Vec<TraceEvent>)>,
    /// The history and snapshot sections exactly as the device left them.
    pub history: Vec<u8>,
    pub snapshot: Vec<u8>,
    /// Time spent copying device → host, for the benchmark's split.
    pub copy_nanos: u64,
    /// Driver copy calls that took, for the benchmark.
    pub copy_calls: u32,
}

/// The launch geometry the trace is laid out for.
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    pub grid: [u32; 3],
    pub block: [u32; 3],
}

impl Geometry {
    pub fn warps_per_block(&self) -> u64 {
        let threads: u64 = self.block.iter().map(|&d| u64::from(d)).product();
        threads.div_ceil(32)
    }

    pub fn warp_slots(&self) -> u64 {
        let blocks: u64 = self.grid.iter().map(|&d| u64::from(d)).product();
        blocks * self.warps_per_block()
    }
}

struct Sizes {
    slots: u32,
    warp_buffer: u64,
    trace: u64,
    history_ring: u64,
    history: u64,
    snapshot_ring: u64,
    snapshot: u64,
}

/// Sections start on this boundary inside the pool allocation.
const SECTION_ALIGN: u64 = 256;

impl Sizes {
    /// Offsets of the trace, history and snapshot sections (None: absent).
    fn offsets(&self) -> [Option<u64>; 3] {
        let align = |n: u64| n.div_ceil(SECTION_ALIGN) * SECTION_ALIGN;
        let history = align(self.trace);
        let snapshot = history + align(self.history);
        [
            Some(0),
            (self.history > 0).then_some(history),
            (self.snapshot > 0).then_some(snapshot),
        ]
    }

    fn total(&self) -> u64 {
        let align = |n: u64| n.div_ceil(SECTION_ALIGN) * SECTION_ALIGN;
        align(self.trace) + align(self.history) + self.snapshot
    }
}

fn sizes(geometry: Geometry, config: &Config) -> Result<Sizes, String> {
    let slots = geometry.warp_slots();
    let slots32 = u32::try_from(slots).map_err(|_| format!("{slots} warp slots is too many"))?;
    let warp_buffer = WARP_HEADER_SIZE as u64 + u64::from(config.events_per_warp) * 16;
    let history_ring = 16 + u64::from(config.history_depth) * 16;
    let snapshot_ring = 16 + u64::from(config.snapshot_depth) * SNAPSHOT_ENTRY_SIZE as u64;
    let sizes = Sizes {
        slots: slots32,
        warp_buffer,
        trace: HEADER_SIZE as u64 + slots * warp_buffer,
        history_ring,
        history: if config.history_depth > 0 {
            slots * history_ring
        } else {
            0
        },
        snapshot_ring,
        snapshot: if config.snapshot_depth > 0 {
            slots * snapshot_ring
        } else {
            0
        },
    };
    let total = sizes.trace + sizes.history + sizes.snapshot;
    if total > MAX_CAPTURE_BYTES {
        return Err(format!(
            "the trace buffers would take {total} bytes of device memory (limit {MAX_CAPTURE_BYTES}); lower PRLX_EVENTS_PER_WARP"
        ));
    }
    Ok(sizes)
}

fn check(what: &str, result: CUresult) -> Result<(), String> {
    if result == CUDA_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what} failed with CUresult {result}"))
    }
}

macro_rules! real {
    ($cuda:expr, $name:ident) => {
        $cuda
            .$name
            .ok_or_else(|| concat!("the driver has no ", stringify!($name)).to_string())?
    };
}

/// Driver operations queued on the launch's stream (the synchronous
/// variants only when the driver lacks the asynchronous ones).
#[derive(Clone, Copy)]
pub(crate) struct OnStream<'a> {
    pub cuda: &'a Cuda,
    pub stream: CUstream,
}

impl OnStream<'_> {
    fn memset(&self, dst: u64, bytes: u64) -> Result<(), String> {
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: dst..dst+bytes lies in a pool allocation of this capture.
        let r = match self.cuda.cuMemsetD8Async {
            Some(f) => unsafe { f(dst, 0, bytes as usize, self.stream) },
            None => unsafe { real!(self.cuda, cuMemsetD8_v2)(dst, 0, bytes as usize) },
        };
        check("cuMemsetD8Async", r)
    }

    fn htod(&self, dst: u64, bytes: &[u8]) -> Result<(), String> {
        // SAFETY: `bytes` is a live host slice (a pageable source is staged
        // before the call returns); dst was allocated with at least its length.
        let r = match self.cuda.cuMemcpyHtoDAsync_v2 {
            Some(f) => unsafe {
                f(
                    dst,
                    bytes.as_ptr() as *const c_void,
                    bytes.len(),
                    self.stream,
                )
            },
            None => unsafe {
                real!(self.cuda, cuMemcpyHtoD_v2)(dst, bytes.as_ptr() as *const c_void, bytes.len())
            },
        };
        check("cuMemcpyHtoDAsync", r)
    }

    /// Into pageable memory: returns once the copy is done.
    fn dtoh(&self, out: &mut [u8], src: u64) -> Result<(), String> {
        // SAFETY: `out` is a live host slice of the copied length.
        let r = match self.cuda.cuMemcpyDtoHAsync_v2 {
            Some(f) => unsafe { f(out.as_mut_ptr() as *mut c_void, src, out.len(), self.stream) },
            None => unsafe {
                real!(self.cuda, cuMemcpyDtoH_v2)(out.as_mut_ptr() as *mut c_void, src, out.len())
            },
        };
        check("cuMemcpyDtoHAsync", r)
    }

    fn synchronize(&self) -> Result<(), String> {
        let sync = real!(self.cuda, cuStreamSynchronize);
        // SAFETY: the application's own stream handle, just launched on.
        check("cuStreamSynchronize", unsafe { sync(self.stream) })
    }
}

/// `height` rows of `width` bytes, `src_pitch` apart on the device, packed
/// into `out` with one `cuMemcpy2D` (one copy per row if the driver lacks it).
/// The pitch is one warp buffer, at most 16 MiB (`PRLX_EVENTS_PER_WARP` ≤
/// 2^20), far under the drivers' maximum pitch. Returns the driver calls made.
fn dtoh_rows(
    on: OnStream<'_>,
    out: &mut [u8],
    src: u64,
    src_pitch: u64,
    width: usize,
    height: usize,
) -> Result<u32, String> {
    debug_assert_eq!(out.len(), width * height);
    if width == 0 || height == 0 {
        return Ok(0);
    }
    if on.cuda.cuMemcpy2DAsync_v2.is_none() && on.cuda.cuMemcpy2D_v2.is_none() {
        for (row, chunk) in out.chunks_exact_mut(width).enumerate() {
            on.dtoh(chunk, src + row as u64 * src_pitch)?;
        }
        return Ok(height as u32);
    }
    let params = CUDA_MEMCPY2D {
        src_x_in_bytes: 0,
        src_y: 0,
        src_memory_type: CU_MEMORYTYPE_DEVICE,
        src_host: std::ptr::null(),
        src_device: src,
        src_array: std::ptr::null_mut(),
        src_pitch: src_pitch as usize,
        dst_x_in_bytes: 0,
        dst_y: 0,
        dst_memory_type: CU_MEMORYTYPE_HOST,
        dst_host: out.as_mut_ptr() as *mut c_void,
        dst_device: 0,
        dst_array: std::ptr::null_mut(),
        dst_pitch: width,
        width_in_bytes: width,
        height,
    };
    // SAFETY: `out` holds width × height bytes; the device rows lie inside
    // the trace allocation (pitch = one warp buffer, width ≤ its size).
    // Into pageable memory the asynchronous copy returns once it is done.
    let r = unsafe {
        match (on.cuda.cuMemcpy2DAsync_v2, on.cuda.cuMemcpy2D_v2) {
            (Some(copy), _) => copy(&params, on.stream),
            (None, Some(copy)) => copy(&params),
            (None, None) => CUDA_ERROR_NOT_FOUND,
        }
    };
    check("cuMemcpy2DAsync", r)?;
    Ok(1)
}

/// How to fetch the warps' used events once their counts are known.
#[derive(Debug, PartialEq, Eq)]
enum EventCopy {
    /// Nothing recorded.
    None,
    /// One strided copy of the first `events` events of every warp: the
    /// warps are full enough that the unused tail costs less than a round
    /// trip per warp.
    Gather { events: u32 },
    /// One copy per warp that recorded something.
    PerWarp,
}

/// Gather when it moves at most twice the bytes needed (plus 1 MiB, which
/// one copy moves faster than a handful of round trips).
fn plan_event_copy(counts: &[u32]) -> EventCopy {
    let Some(&most) = counts.iter().max().filter(|&&m| m > 0) else {
        return EventCopy::None;
    };
    let event = std::mem::size_of::<TraceEvent>() as u64;
    let needed: u64 = counts.iter().map(|&n| u64::from(n) * event).sum();
    let gathered = counts.len() as u64 * u64::from(most) * event;
    if gathered <= 2 * needed + (1 << 20) {
        EventCopy::Gather { events: most }
    } else {
        EventCopy::PerWarp
    }
}

fn device_arch(cuda: &Cuda) -> u32 {
    let (Some(get_device), Some(attribute)) = (cuda.cuCtxGetDevice, cuda.cuDeviceGetAttribute)
    else {
        return 0;
    };
    let (mut device, mut major, mut minor) = (0, 0, 0);
    // SAFETY: out-pointers to locals.
    unsafe {
        if get_device(&mut device) != CUDA_SUCCESS
            || attribute(&mut major, ATTR_CC_MAJOR, device) != CUDA_SUCCESS
            || attribute(&mut minor, ATTR_CC_MINOR, device) != CUDA_SUCCESS
        {
            return 0;
        }
    }
    (major * 10 + minor).max(0) as u32
}

/// Zeroes the descriptor on drop, so later launches of the module record
/// nothing, and waits for the stream, so the pool's memory is idle again.
struct DescriptorGuard<'a> {
    on: OnStream<'a>,
    address: u64,
}

impl Drop for DescriptorGuard<'_> {
    fn drop(&mut self) {
        let zero = Descriptor::default();
        let _ = self.on.htod(self.address, bytemuck::bytes_of(&zero));
        let _ = self.on.synchronize();
    }
}

/// A module's descriptor pointing at fresh trace buffers, set on a stream
/// for the launch (or graph launch) about to be queued there. Dropping it
/// unarmed clears the descriptor again.
pub struct Armed<'a> {
    on: OnStream<'a>,
    header: TraceFileHeader,
    sizes: Sizes,
    addresses: [u64; 3],
    /// Held for their drops: the descriptor cleared, then the buffers freed.
    _guard: DescriptorGuard<'a>,
    _lease: crate::device_pool::Lease,
}

/// Allocates and initialises the trace image for one launch of `kernel`
/// with `geometry` and points the descriptor at `descriptor` to it, all
/// queued on `stream` ahead of the launch.
pub fn arm<'a>(
    cuda: &'a Cuda,
    config: &Config,
    descriptor: u64,
    kernel: &str,
    geometry: Geometry,
    stream: CUstream,
) -> Result<Armed<'a>, String> {
    let on = OnStream { cuda, stream };
    let sizes = sizes(geometry, config)?;
    let lease = crate::device_pool::take(cuda, sizes.total())?;
    let (header, addresses, guard) =
        prepare(on, config, descriptor, kernel, geometry, &sizes, lease.ptr)?;
    Ok(Armed {
        on,
        header,
        sizes,
        addresses,
        _guard: guard,
        _lease: lease,
    })
}

impl Armed<'_> {
    /// After the launch was queued: waits for its stream, copies the trace
    /// back and clears the descriptor.
    pub fn collect(self) -> Result<CapturedTrace, String> {
        // Dropping `self` then clears the descriptor (`_guard`) before the
        // buffers go back to the pool (`_lease`): fields drop in order.
        collect(self.on, self.header, &self.sizes, self.addresses)
    }
}

/// Arms entry `index` of a module's launch table at `table`
/// (`prlx_ptx_instrument::runtime::LAUNCH_TABLE`) for one launch of
/// `kernel` with `geometry`: the entry's header (unclaimed, the kernel's
/// id and geometry, which the launch's grid matches to claim it) and its
/// descriptor, queued on `stream`. The caller then sets the table's entry
/// count ([`set_launch_count`]) and clears the table after collecting.
pub fn arm_table_entry<'a>(
    cuda: &'a Cuda,
    config: &Config,
    table: u64,
    index: u32,
    kernel: &str,
    geometry: Geometry,
    stream: CUstream,
) -> Result<Armed<'a>, String> {
    use prlx_ptx_instrument::runtime::{LAUNCH_ENTRY_BYTES, LAUNCH_ENTRY_DESCRIPTOR, kernel_id};
    let entry = table + u64::from(index) * u64::from(LAUNCH_ENTRY_BYTES);
    let mut header = [0u32; 9];
    header[2] = kernel_id(kernel);
    header[3..6].copy_from_slice(&geometry.grid);
    header[6..9].copy_from_slice(&geometry.block);
    OnStream { cuda, stream }.htod(entry, bytemuck::cast_slice(&header))?;
    arm(
        cuda,
        config,
        entry + u64::from(LAUNCH_ENTRY_DESCRIPTOR),
        kernel,
        geometry,
        stream,
    )
}

/// How many launch table entries the module whose descriptor is at
/// `descriptor` records through (0: the descriptor itself), on `stream`.
pub fn set_launch_count(
    cuda: &Cuda,
    stream: CUstream,
    descriptor: u64,
    count: u32,
) -> Result<(), String> {
    use prlx_ptx_instrument::runtime::LAUNCH_COUNT_OFFSET;
    let on = OnStream { cuda, stream };
    on.htod(
        descriptor + u64::from(LAUNCH_COUNT_OFFSET),
        &count.to_le_bytes(),
    )
}

/// After the table's launches were collected: no entries, none claimed,
/// waited for on `stream` (so no later launch sees them).
pub fn clear_launch_table(
    cuda: &Cuda,
    stream: CUstream,
    descriptor: u64,
    table: u64,
    entries: u32,
) -> Result<(), String> {
    use prlx_ptx_instrument::runtime::LAUNCH_ENTRY_BYTES;
    set_launch_count(cuda, stream, descriptor, 0)?;
    let on = OnStream { cuda, stream };
    on.memset(table, u64::from(entries) * u64::from(LAUNCH_ENTRY_BYTES))?;
    on.synchronize()
}

/// Runs `launch` with the descriptor at `descriptor` pointing at fresh
/// buffers; returns the launch's result and, when the launch succeeded and
/// the capture worked, the trace.
pub fn capture(
    cuda: &Cuda,
    config: &Config,
    descriptor: u64,
    kernel: &str,
    geometry: Geometry,
    stream: CUstream,
    launch: impl FnOnce() -> CUresult,
) -> (CUresult, Result<CapturedTrace, String>) {
    // Prepare everything that can fail before launching; on failure the
    // launch still runs, uncaptured.
    let armed = match arm(cuda, config, descriptor, kernel, geometry, stream) {
        Ok(armed) => armed,
        Err(e) => return (launch(), Err(e)),
    };
    let result = launch();
    if result != CUDA_SUCCESS {
        return (
            result,
            Err(format!("the launch itself failed with CUresult {result}")),
        );
    }
    (result, armed.collect())
}

type Prepared<'a> = (TraceFileHeader, [u64; 3], DescriptorGuard<'a>);

/// Lays the trace, history and snapshot sections out in the pool memory at
/// `base` and initialises them and the descriptor, all on the stream.
fn prepare<'a>(
    on: OnStream<'a>,
    config: &Config,
    descriptor: u64,
    kernel: &str,
    geometry: Geometry,
    sizes: &Sizes,
    base: u64,
) -> Result<Prepared<'a>, String> {
    let header = header_for(kernel, geometry, config, sizes.slots, device_arch(on.cuda));
    let [trace, history, snapshot] = sizes.offsets().map(|o| o.map_or(0, |o| base + o));
    on.memset(trace, sizes.trace)?;
    on.htod(trace, bytemuck::bytes_of(&header))?;
    if history != 0 {
        init_rings(
            on,
            history,
            sizes.slots,
            sizes.history_ring,
            config.history_depth,
        )?;
    }
    if snapshot != 0 {
        init_rings(
            on,
            snapshot,
            sizes.slots,
            sizes.snapshot_ring,
            config.snapshot_depth,
        )?;
    }
    let desc = Descriptor {
        trace,
        history,
        snapshot,
        events_per_warp: config.events_per_warp,
        total_warp_slots: sizes.slots,
        history_depth: if history != 0 {
            config.history_depth
        } else {
            0
        },
        snapshot_depth: if snapshot != 0 {
            config.snapshot_depth
        } else {
            0
        },
        sample_rate: config.sample_rate,
        reserved: [0; 5],
    };
    on.htod(descriptor, bytemuck::bytes_of(&desc))?;
    let guard = DescriptorGuard {
        on,
        address: descriptor,
    };
    Ok((header, [trace, history, snapshot], guard))
}

/// Ring headers carry their depth, as PRLX's host runtime writes them.
fn init_rings(
    on: OnStream<'_>,
    base: u64,
    slots: u32,
    ring_bytes: u64,
    depth: u32,
) -> Result<(), String> {
    let mut image = vec![0u8; (u64::from(slots) * ring_bytes) as usize];
    for slot in 0..slots as usize {
        let at = slot * ring_bytes as usize;
        let header = RingHeader {
            depth,
            ..RingHeader::default()
        };
        image[at..at + 16].copy_from_slice(bytemuck::bytes_of(&header));
    }
    on.htod(base, &image)
}

pub fn header_for(
    kernel: &str,
    geometry: Geometry,
    config: &Config,
    slots: u32,
    arch: u32,
) -> TraceFileHeader {
    let mut header: TraceFileHeader = bytemuck::Zeroable::zeroed();
    header.magic = PRLX_MAGIC;
    header.version = PRLX_VERSION;
    header.kernel_name_hash = kernel_name_hash(kernel);
    header.set_kernel_name(kernel);
    header.grid_dim = geometry.grid;
    header.block_dim = geometry.block;
    header.warps_per_block = geometry.warps_per_block() as u32;
    header.total_warp_slots = slots;
    header.events_per_warp = config.events_per_warp;
    header.timestamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    header.cuda_arch = arch;
    header.sample_rate = config.sample_rate;
    if config.sample_rate > 1 {
        header.flags |= flags::SAMPLED;
    }
    if config.history_depth > 0 {
        header.flags |= flags::HISTORY;
        header.history_depth = config.history_depth;
    }
    if config.snapshot_depth > 0 {
        header.flags |= flags::SNAPSHOT;
        header.snapshot_depth = config.snapshot_depth;
    }
    header
}

fn collect(
    on: OnStream<'_>,
    header: TraceFileHeader,
    sizes: &Sizes,
    [trace, history, snapshot]: [u64; 3],
) -> Result<CapturedTrace, String> {
    // The copies below are queued after the kernel on its stream; waiting
    // for that stream (not the device) first lets a failed kernel surface here.
    on.synchronize()?;
    let started = std::time::Instant::now();
    let epw = header.events_per_warp;
    let slots = sizes.slots as usize;
    let first_warp = trace + HEADER_SIZE as u64;
    let mut warp_headers = vec![WarpBufferHeader::default(); slots];
    let mut copy_calls = dtoh_rows(
        on,
        bytemuck::cast_slice_mut(&mut warp_headers),
        first_warp,
        sizes.warp_buffer,
        WARP_HEADER_SIZE,
        slots,
    )?;
    for warp_header in &mut warp_headers {
        warp_header.num_events = warp_header.write_idx.min(epw);
    }
    let counts: Vec<u32> = warp_headers.iter().map(|h| h.num_events).collect();
    let first_events = first_warp + WARP_HEADER_SIZE as u64;
    let mut warps = Vec::with_capacity(slots);
    match plan_event_copy(&counts) {
        EventCopy::None => {
            warps.extend(warp_headers.into_iter().map(|h| (h, Vec::new())));
        }
        EventCopy::Gather { events } => {
            let mut all = vec![TraceEvent::default(); slots * events as usize];
            copy_calls += dtoh_rows(
                on,
                bytemuck::cast_slice_mut(&mut all),
                first_events,
                sizes.warp_buffer,
                events as usize * std::mem::size_of::<TraceEvent>(),
                slots,
            )?;
            for (h, row) in warp_headers
                .into_iter()
                .zip(all.chunks_exact(events as usize))
            {
                warps.push((h, row[..h.num_events as usize].to_vec()));
            }
        }
        EventCopy::PerWarp => {
            for (slot, h) in warp_headers.into_iter().enumerate() {
                let mut events = vec![TraceEvent::default(); h.num_events as usize];
                if !events.is_empty() {
                    let src = first_events + slot as u64 * sizes.warp_buffer;
                    on.dtoh(bytemuck::cast_slice_mut(&mut events), src)?;
                    copy_calls += 1;
                }
                warps.push((h, events));
            }
        }
    }
    let mut history_bytes = vec![0u8; sizes.history as usize];
    if history != 0 {
        on.dtoh(&mut history_bytes, history)?;
        copy_calls += 1;
    }
    let mut snapshot_bytes = vec![0u8; sizes.snapshot as usize];
    if snapshot != 0 {
        on.dtoh(&mut snapshot_bytes, snapshot)?;
        copy_calls += 1;
    }
    Ok(CapturedTrace {
        header,
        warps,
        history: history_bytes,
        snapshot: snapshot_bytes,
        copy_nanos: started.elapsed().as_nanos() as u64,
        copy_calls,
    })
}

impl CapturedTrace {
    /// Writes the trace in PRLX's `FLAG_COMPRESS` encoding: the header as is,
    /// then one zstd frame of everything after it (unused event slots as zeros).
    pub fn encode(&self, out: &mut impl std::io::Write, level: i32) -> std::io::Result<()> {
        let mut header = self.header;
        header.flags |= flags::COMPRESS;
        out.write_all(bytemuck::bytes_of(&header))?;
        let mut encoder = zstd::stream::write::Encoder::new(out, level)?;
        let epw = self.header.events_per_warp as usize;
        let zeros = vec![0u8; 16 * 1024];
        for (warp_header, events) in &self.warps {
            encoder.write_all(bytemuck::bytes_of(warp_header))?;
            encoder.write_all(bytemuck::cast_slice(events))?;
            let mut pad = (epw - events.len()) * std::mem::size_of::<TraceEvent>();
            while pad > 0 {
                let n = pad.min(zeros.len());
                encoder.write_all(&zeros[..n])?;
                pad -= n;
            }
        }
        encoder.write_all(&self.history)?;
        encoder.write_all(&self.snapshot)?;
        encoder.finish()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_copies_gather_full_warps_and_fetch_sparse_ones_one_by_one() {
        assert_eq!(plan_event_copy(&[0, 0, 0]), EventCopy::None);
        assert_eq!(plan_event_copy(&[]), EventCopy::None);
        // Every warp ran the same loop: one strided copy.
        assert_eq!(
            plan_event_copy(&[512; 128]),
            EventCopy::Gather { events: 512 }
        );
        // Uneven but within 2x: still one copy.
        let uneven: Vec<u32> = (0..1024).map(|w| 2048 + (w % 2) * 2048).collect();
        assert_eq!(plan_event_copy(&uneven), EventCopy::Gather { events: 4096 });
        // One busy warp among thousands of idle ones: copy it alone.
        let mut sparse = vec![0u32; 4096];
        sparse[17] = 4096;
        assert_eq!(plan_event_copy(&sparse), EventCopy::PerWarp);
        // Small traces are gathered whatever the shape (under 1 MiB extra).
        assert_eq!(
            plan_event_copy(&[1, 0, 0, 300]),
            EventCopy::Gather { events: 300 }
        );
    }

    #[test]
    fn encoded_trace_reads_back() {
        let config = Config::from_lookup(|k| match k {
            "PRLX_EVENTS_PER_WARP" => Some("8".into()),
            "PRLX_HISTORY_DEPTH" => Some("2".into()),
            _ => None,
        });
        let geometry = Geometry {
            grid: [2, 1, 1],
            block: [40, 1, 1],
        };
        let header = header_for("kern", geometry, &config, 4, 80);
        let event = TraceEvent {
            site_id: 7,
            active_mask: 0xff,
            value_a: 3,
            ..TraceEvent::default()
        };
        let warps = (0..4)
            .map(|w| {
                let n = w as u32;
                let h = WarpBufferHeader {
                    write_idx: n,
                    num_events: n,
                    ..WarpBufferHeader::default()
                };
                (h, vec![event; w])
            })
            .collect();
        let mut history = vec![0u8; 4 * (16 + 2 * 16)];
        for slot in 0..4 {
            let ring = RingHeader {
                depth: 2,
                ..RingHeader::default()
            };
            history[slot * 48..slot * 48 + 16].copy_from_slice(bytemuck::bytes_of(&ring));
        }
        let captured = CapturedTrace {
            header,
            warps,
            history,
            snapshot: Vec::new(),
            copy_nanos: 0,
            copy_calls: 0,
        };
        let mut bytes = Vec::new();
        captured.encode(&mut bytes, 1).unwrap();
        let trace = prlx_trace::TraceFile::from_bytes("t.prlx", bytes).unwrap();
        assert_eq!(trace.kernel_name(), "kern");
        assert_eq!(trace.num_warps(), 4);
        assert_eq!(trace.warp(3).unwrap().events, &[event; 3]);
        assert!(trace.history(0).is_some());
    }
}
