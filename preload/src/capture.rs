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

mod device_pool;
mod staging;

/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR` / `_MINOR`.
const ATTR_CC_MAJOR: i32 = 75;
const ATTR_CC_MINOR: i32 = 76;
/// Device bytes one capture's buffers may take where neither
/// `PRLX_CAPTURE_BUDGET_MB` nor the driver (`cuMemGetInfo`) says: the budget
/// the events per warp are fitted to (a launch with more warps than the
/// configured `PRLX_EVENTS_PER_WARP` fits gets fewer slots per warp; its
/// trace header and its `session.json` record say how many, and warps that
/// record more overflow, which the session diff reports).
pub const DEFAULT_CAPTURE_BUDGET_BYTES: u64 = 2 << 30;
/// A budget chosen from the device is this share of its free memory …
pub const FREE_MEMORY_DIVISOR: u64 = 4;
/// … and at most this much.
pub const MAX_DEVICE_BUDGET_BYTES: u64 = 8 << 30;
/// The fewest event slots a warp is given; a grid too large for even these
/// within the budget is not captured, and `capture_error` says why.
pub const MIN_EVENTS_PER_WARP: u32 = 16;

/// The driver calls captures make, counted for the benchmark and the
/// steady-state test (`preload/tests/capture_counts.rs`): relaxed atomics,
/// a few nanoseconds per call, always on.
pub mod counts {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    /// A snapshot of the counters; [`DriverCalls::since`] gives one launch's share.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct DriverCalls {
        /// Device allocations (`cuMemAlloc`) and frees.
        pub allocations: u64,
        pub frees: u64,
        /// Pinned host allocations (`cuMemAllocHost`).
        pub host_allocations: u64,
        /// Memsets and the bytes they set.
        pub memsets: u64,
        pub memset_bytes: u64,
        /// Host-to-device copies and their bytes.
        pub htod_copies: u64,
        pub htod_bytes: u64,
        /// Device-to-host copies and their bytes.
        pub dtoh_copies: u64,
        pub dtoh_bytes: u64,
        /// Stream synchronisations.
        pub synchronizations: u64,
        /// Bytes the warps recorded: 16 per event kept, plus the history and
        /// snapshot sections copied back.
        pub recorded_bytes: u64,
        /// Warp headers copied back (16 bytes each).
        pub warp_headers: u64,
    }

    macro_rules! counters {
        ($($field:ident),*) => {
            #[allow(non_upper_case_globals)]
            mod cells {
                use super::AtomicU64;
                $(pub static $field: AtomicU64 = AtomicU64::new(0);)*
            }
            /// The counters now.
            pub fn snapshot() -> DriverCalls {
                DriverCalls { $($field: cells::$field.load(Relaxed),)* }
            }
            impl DriverCalls {
                /// What was counted between `earlier` and `self`.
                pub fn since(&self, earlier: &DriverCalls) -> DriverCalls {
                    DriverCalls { $($field: self.$field - earlier.$field,)* }
                }
            }
        };
    }
    counters!(
        allocations,
        frees,
        host_allocations,
        memsets,
        memset_bytes,
        htod_copies,
        htod_bytes,
        dtoh_copies,
        dtoh_bytes,
        synchronizations,
        recorded_bytes,
        warp_headers
    );

    pub(crate) fn add(cell: &AtomicU64, n: u64) {
        cell.fetch_add(n, Relaxed);
    }
    pub(crate) use cells::*;
}

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
    /// Launch table entries armed (`prlx_ptx_instrument::runtime::LAUNCH_TABLE`).
    pub launch_count: u32,
    /// Non-zero exactly when `trace` or `launch_count` is: the one word the
    /// idle test of a module instrumented at load reads
    /// (`prlx_ptx_instrument::runtime::ARMED_OFFSET`). Only
    /// `write_descriptor` and [`set_launch_count`] write descriptors, and
    /// both set it.
    pub armed: u32,
    pub reserved: [u32; 3],
}
const _: () = assert!(std::mem::size_of::<Descriptor>() == 64);
const _: () = assert!(
    std::mem::offset_of!(Descriptor, launch_count)
        == prlx_ptx_instrument::runtime::LAUNCH_COUNT_OFFSET as usize
);
const _: () = assert!(
    std::mem::offset_of!(Descriptor, armed) == prlx_ptx_instrument::runtime::ARMED_OFFSET as usize
);
const _: () = assert!(
    std::mem::offset_of!(Descriptor, armed) == std::mem::offset_of!(Descriptor, launch_count) + 4
);

/// The `armed` word for a descriptor recording through `trace` and
/// `launch_count` table entries.
fn armed_word(trace: u64, launch_count: u32) -> u32 {
    u32::from(trace != 0 || launch_count != 0)
}

/// Writes `desc` to the descriptor at `address`, its `armed` word derived
/// from `trace` and `launch_count` (whatever `desc` said).
fn write_descriptor(on: OnStream<'_>, address: u64, desc: Descriptor) -> Result<(), String> {
    let desc = Descriptor {
        armed: armed_word(desc.trace, desc.launch_count),
        ..desc
    };
    on.htod(address, bytemuck::bytes_of(&desc))
}

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
    /// Set when the warps got fewer event slots than configured, to fit
    /// the capture budget: what they got and what it cost.
    pub truncation: Option<prlx_session::Truncation>,
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
    /// Event slots per warp buffer: the configured number, or fewer to fit
    /// the capture budget ([`budget`]).
    events_per_warp: u32,
    /// The number configured (`PRLX_EVENTS_PER_WARP`), and the budget
    /// they were fitted to.
    requested_events_per_warp: u32,
    budget: u64,
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

/// Event slots per warp for `slots` warps: the configured number when the
/// trace, history and snapshot sections fit the budget, else as many as fit.
fn fitted_events_per_warp(slots: u64, config: &Config, budget: u64) -> Result<u32, String> {
    let rings = |depth: u32, entry: u64| {
        if depth > 0 {
            16 + u64::from(depth) * entry
        } else {
            0
        }
    };
    let per_warp_fixed = WARP_HEADER_SIZE as u64
        + rings(config.history_depth, 16)
        + rings(config.snapshot_depth, SNAPSHOT_ENTRY_SIZE as u64);
    let room = budget.saturating_sub(HEADER_SIZE as u64 + 2 * SECTION_ALIGN);
    let per_warp = room / slots.max(1);
    let fit = per_warp.saturating_sub(per_warp_fixed) / std::mem::size_of::<TraceEvent>() as u64;
    let events = u64::from(config.events_per_warp).min(fit);
    if events < u64::from(MIN_EVENTS_PER_WARP.min(config.events_per_warp)) {
        return Err(format!(
            "{slots} warps do not fit the capture budget of {budget} bytes with {MIN_EVENTS_PER_WARP} events each; not captured"
        ));
    }
    Ok(events as u32)
}

/// The device bytes one capture's buffers may take: `PRLX_CAPTURE_BUDGET_MB`
/// when set; else a share of the device's free memory (at most
/// [`MAX_DEVICE_BUDGET_BYTES`]), asked once per context, at its first
/// capture, so that a kernel's launches keep their sizes (and their pooled
/// buffers) from then on; else [`DEFAULT_CAPTURE_BUDGET_BYTES`].
pub fn budget(cuda: &Cuda, config: &Config) -> u64 {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static CHOSEN: Mutex<Option<HashMap<usize, u64>>> = Mutex::new(None);
    if let Some(bytes) = config.capture_budget {
        return bytes;
    }
    let context = device_pool::current_context(cuda);
    let mut chosen = CHOSEN.lock().unwrap_or_else(|p| p.into_inner());
    *chosen
        .get_or_insert_with(HashMap::new)
        .entry(context)
        .or_insert_with(|| budget_from_free_memory(free_memory(cuda)))
}

/// The budget for a device with `free` bytes free (None: unknown).
pub fn budget_from_free_memory(free: Option<u64>) -> u64 {
    match free {
        Some(free) => (free / FREE_MEMORY_DIVISOR).min(MAX_DEVICE_BUDGET_BYTES),
        None => DEFAULT_CAPTURE_BUDGET_BYTES,
    }
}

/// The current context's free device memory, per `cuMemGetInfo`.
fn free_memory(cuda: &Cuda) -> Option<u64> {
    let get_info = cuda.cuMemGetInfo_v2?;
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: out-pointers to locals.
    let ok = unsafe { get_info(&mut free, &mut total) } == CUDA_SUCCESS;
    (ok && total > 0).then_some(free as u64)
}

fn sizes(geometry: Geometry, config: &Config, budget: u64) -> Result<Sizes, String> {
    let slots = geometry.warp_slots();
    let slots32 = u32::try_from(slots).map_err(|_| format!("{slots} warp slots is too many"))?;
    let events_per_warp = fitted_events_per_warp(slots, config, budget)?;
    let warp_buffer = WARP_HEADER_SIZE as u64 + u64::from(events_per_warp) * 16;
    let history_ring = 16 + u64::from(config.history_depth) * 16;
    let snapshot_ring = 16 + u64::from(config.snapshot_depth) * SNAPSHOT_ENTRY_SIZE as u64;
    Ok(Sizes {
        slots: slots32,
        events_per_warp,
        requested_events_per_warp: config.events_per_warp,
        budget,
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
    })
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

type FnMemsetD2D32Async = unsafe extern "C" fn(u64, usize, u32, usize, usize, CUstream) -> CUresult;

/// Driver entry points only captures use, looked up beside the shared
/// table (`crate::driver`) and only for the real driver's table: HIP's
/// (`hip_driver::as_cuda`) has none of them, and captures fall back.
struct Extra {
    memset_d2d32_async: Option<FnMemsetD2D32Async>,
}

fn extra(cuda: &Cuda) -> &'static Extra {
    static NONE: Extra = Extra {
        memset_d2d32_async: None,
    };
    static REAL: std::sync::OnceLock<Extra> = std::sync::OnceLock::new();
    if !std::ptr::eq(cuda, crate::driver::cuda()) {
        return &NONE;
    }
    REAL.get_or_init(|| {
        let p = crate::driver::symbol(c"cuMemsetD2D32Async");
        Extra {
            // SAFETY: cuda.h declares cuMemsetD2D32Async with this signature.
            memset_d2d32_async: (!p.is_null())
                .then(|| unsafe { std::mem::transmute::<*mut c_void, FnMemsetD2D32Async>(p) }),
        }
    })
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
        let r = match self.cuda.cuMemsetD8Async {
            // SAFETY: dst..dst+bytes lies in a pool allocation of this
            // capture, and the stream is the application's live one; no
            // host memory is touched.
            Some(f) => unsafe { f(dst, 0, bytes as usize, self.stream) },
            // SAFETY: as above, without the stream.
            None => unsafe { real!(self.cuda, cuMemsetD8_v2)(dst, 0, bytes as usize) },
        };
        counts::add(&counts::memsets, 1);
        counts::add(&counts::memset_bytes, bytes);
        check("cuMemsetD8Async", r)
    }

    /// `height` rows of `width` u32 values set to `value`, `pitch` bytes
    /// apart: one `cuMemsetD2D32Async` where the driver has it (the real
    /// driver table only; HIP's has none), else one memset per row.
    fn memset_rows(
        &self,
        dst: u64,
        pitch: u64,
        value: u32,
        width: u64,
        height: u64,
    ) -> Result<(), String> {
        if width == 0 || height == 0 {
            return Ok(());
        }
        if let Some(f) = extra(self.cuda).memset_d2d32_async {
            // SAFETY: the rows lie in a pool allocation of this capture
            // (pitch ≥ 4 × width, dst 4-byte aligned).
            let r = unsafe {
                f(
                    dst,
                    pitch as usize,
                    value,
                    width as usize,
                    height as usize,
                    self.stream,
                )
            };
            counts::add(&counts::memsets, 1);
            counts::add(&counts::memset_bytes, 4 * width * height);
            return check("cuMemsetD2D32Async", r);
        }
        if value != 0 || height > 64 {
            // Without the 2D memset: zero the whole rows' span in one call.
            if value != 0 {
                return Err("the driver has no cuMemsetD2D32Async".into());
            }
            return self.memset(dst, (height - 1) * pitch + 4 * width);
        }
        for row in 0..height {
            self.memset(dst + row * pitch, 4 * width)?;
        }
        Ok(())
    }

    fn htod(&self, dst: u64, bytes: &[u8]) -> Result<(), String> {
        let r = match self.cuda.cuMemcpyHtoDAsync_v2 {
            // SAFETY: `bytes` is a live host slice of the copied length;
            // every caller passes pageable memory (locals, `Vec`s), which
            // the driver stages before the call returns, so the slice may
            // go as soon as it does. dst was allocated with at least its
            // length.
            Some(f) => unsafe {
                f(
                    dst,
                    bytes.as_ptr() as *const c_void,
                    bytes.len(),
                    self.stream,
                )
            },
            // SAFETY: as above; the synchronous copy is done on return.
            None => unsafe {
                real!(self.cuda, cuMemcpyHtoD_v2)(dst, bytes.as_ptr() as *const c_void, bytes.len())
            },
        };
        counts::add(&counts::htod_copies, 1);
        counts::add(&counts::htod_bytes, bytes.len() as u64);
        check("cuMemcpyHtoDAsync", r)
    }

    /// Into pageable memory: returns once the copy is done.
    fn dtoh(&self, out: &mut [u8], src: u64) -> Result<(), String> {
        let r = match self.cuda.cuMemcpyDtoHAsync_v2 {
            // SAFETY: `out` is a live, exclusively borrowed host slice of
            // the copied length. Into pageable memory the call returns once
            // the copy is done; into pinned staging (`dtoh_rows`' per-row
            // fallback) the caller keeps the landing alive, unread, until
            // it synchronizes the stream.
            Some(f) => unsafe { f(out.as_mut_ptr() as *mut c_void, src, out.len(), self.stream) },
            // SAFETY: `out` as above; the synchronous copy is done on return.
            None => unsafe {
                real!(self.cuda, cuMemcpyDtoH_v2)(out.as_mut_ptr() as *mut c_void, src, out.len())
            },
        };
        counts::add(&counts::dtoh_copies, 1);
        counts::add(&counts::dtoh_bytes, out.len() as u64);
        check("cuMemcpyDtoHAsync", r)
    }

    fn synchronize(&self) -> Result<(), String> {
        let sync = real!(self.cuda, cuStreamSynchronize);
        counts::add(&counts::synchronizations, 1);
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
    counts::add(&counts::dtoh_copies, 1);
    counts::add(&counts::dtoh_bytes, (width * height) as u64);
    check("cuMemcpy2DAsync", r)?;
    Ok(1)
}

/// Consecutive warps whose used events are fetched by one strided copy:
/// warps `start..start + len`, the first `events` events of each.
#[derive(Debug, PartialEq, Eq)]
struct Run {
    start: usize,
    len: usize,
    events: u32,
}

/// Splits the warps into runs copied one strided copy each, so that all
/// the copies together move at most 1.1 × the events the warps recorded,
/// in as few copies as that allows: each warp that recorded something
/// starts as its own run (idle warps are skipped), then the adjacent pair
/// whose merge adds the fewest unused events is merged, while the total
/// stays within the bound. Warps with equal counts (a uniform kernel) merge
/// for free into one copy.
fn plan_runs(counts: &[u32]) -> Vec<Run> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut runs: Vec<Run> = counts
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(start, &n)| Run {
            start,
            len: 1,
            events: n,
        })
        .collect();
    let needed: u64 = counts.iter().map(|&n| u64::from(n)).sum();
    let mut moved = needed;
    let moved_by = |r: &Run| r.len as u64 * u64::from(r.events);
    let merged = |a: &Run, b: &Run| Run {
        start: a.start,
        len: b.start + b.len - a.start,
        events: a.events.max(b.events),
    };
    // Runs as a list (next/prev by index), merge candidates in a heap
    // checked against each run's version when taken.
    let n = runs.len();
    let mut next: Vec<usize> = (1..=n).collect();
    let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
    let mut version = vec![0u32; n];
    let mut alive = vec![true; n];
    let cost = |runs: &[Run], i: usize, j: usize| {
        moved_by(&merged(&runs[i], &runs[j])) - moved_by(&runs[i]) - moved_by(&runs[j])
    };
    let mut heap = BinaryHeap::new();
    for i in 0..n.saturating_sub(1) {
        heap.push(Reverse((cost(&runs, i, i + 1), i, 0u32, 0u32)));
    }
    while let Some(Reverse((extra, i, vi, vj))) = heap.pop() {
        let j = next[i];
        if !alive[i] || j >= n || version[i] != vi || version[j] != vj {
            continue;
        }
        if 10 * (moved + extra) > 11 * needed {
            break; // the cheapest merge left no longer fits
        }
        moved += extra;
        runs[i] = merged(&runs[i], &runs[j]);
        alive[j] = false;
        version[i] += 1;
        next[i] = next[j];
        if next[i] < n {
            prev[next[i]] = i;
            let k = next[i];
            heap.push(Reverse((cost(&runs, i, k), i, version[i], version[k])));
        }
        let p = prev[i];
        if p < n {
            heap.push(Reverse((cost(&runs, p, i), p, version[p], version[i])));
        }
    }
    runs.into_iter()
        .zip(alive)
        .filter_map(|(r, a)| a.then_some(r))
        .collect()
}

/// Where copies land: pinned staging (asynchronous copies, one wait) or,
/// where the driver has none, ordinary memory (each copy waits).
enum Landing {
    Pinned(staging::Staging),
    Pageable(Vec<u8>),
}

impl Landing {
    fn take(cuda: &Cuda, bytes: usize) -> Landing {
        match staging::take(cuda, bytes) {
            Some(pinned) => Landing::Pinned(pinned),
            None => Landing::Pageable(vec![0; bytes]),
        }
    }

    fn bytes_mut(&mut self, len: usize) -> &mut [u8] {
        match self {
            Landing::Pinned(pinned) => pinned.bytes_mut(len),
            Landing::Pageable(v) => &mut v[..len],
        }
    }

    fn pinned(&self) -> bool {
        matches!(self, Landing::Pinned(_))
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
        let _ = write_descriptor(self.on, self.address, Descriptor::default());
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
    _lease: device_pool::Lease,
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
    let sizes = sizes(geometry, config, budget(cuda, config))?;
    let lease = device_pool::take(cuda, sizes.total())?;
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
/// `descriptor` records through (0: none), on `stream`, with the
/// descriptor's `armed` word (adjacent, one copy): set with a count, cleared
/// with none. A module records through its table or through its own
/// `trace`, never both at once (its capture lock), so `trace` is zero here.
pub fn set_launch_count(
    cuda: &Cuda,
    stream: CUstream,
    descriptor: u64,
    count: u32,
) -> Result<(), String> {
    use prlx_ptx_instrument::runtime::LAUNCH_COUNT_OFFSET;
    let on = OnStream { cuda, stream };
    let words = [count, armed_word(0, count)];
    on.htod(
        descriptor + u64::from(LAUNCH_COUNT_OFFSET),
        bytemuck::cast_slice(&words),
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
    let mut header = header_for(kernel, geometry, config, sizes.slots, device_arch(on.cuda));
    header.events_per_warp = sizes.events_per_warp;
    if sizes.events_per_warp < config.events_per_warp {
        crate::log::log(
            crate::config::LogLevel::Warn,
            &format!(
                "{kernel}: {} warps get {} event slots each (PRLX_EVENTS_PER_WARP={}) to fit the {} MiB capture budget (PRLX_CAPTURE_BUDGET_MB); warps that record more overflow",
                sizes.slots,
                sizes.events_per_warp,
                config.events_per_warp,
                sizes.budget >> 20
            ),
        );
    }
    let [trace, history, snapshot] = sizes.offsets().map(|o| o.map_or(0, |o| base + o));
    // Only the warp headers are reset: the device writes events below a
    // warp's write index, and only those are copied back, so stale events
    // of earlier launches in the pooled memory are never read.
    on.htod(trace, bytemuck::bytes_of(&header))?;
    on.memset_rows(
        trace + HEADER_SIZE as u64,
        sizes.warp_buffer,
        0,
        (WARP_HEADER_SIZE / 4) as u64,
        u64::from(sizes.slots),
    )?;
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
        events_per_warp: sizes.events_per_warp,
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
        ..Descriptor::default()
    };
    write_descriptor(on, descriptor, desc)?;
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
    let started = std::time::Instant::now();
    let epw = header.events_per_warp;
    let slots = sizes.slots as usize;
    let first_warp = trace + HEADER_SIZE as u64;
    // Counts first: every warp's 16-byte header, in one strided copy queued
    // after the kernel on its stream.
    let header_bytes = slots * WARP_HEADER_SIZE;
    let mut landing = Landing::take(on.cuda, header_bytes);
    if !landing.pinned() {
        // Waiting first lets a failed kernel surface here, not as a copy error.
        on.synchronize()?;
    }
    let mut copy_calls = dtoh_rows(
        on,
        landing.bytes_mut(header_bytes),
        first_warp,
        sizes.warp_buffer,
        WARP_HEADER_SIZE,
        slots,
    )?;
    if landing.pinned() {
        on.synchronize()?;
    }
    let mut warp_headers = vec![WarpBufferHeader::default(); slots];
    bytemuck::cast_slice_mut(&mut warp_headers).copy_from_slice(landing.bytes_mut(header_bytes));
    drop(landing);
    for warp_header in &mut warp_headers {
        warp_header.num_events = warp_header.write_idx.min(epw);
    }
    let counts: Vec<u32> = warp_headers.iter().map(|h| h.num_events).collect();
    // Then only the used events, in strided runs, into one landing buffer.
    let event = std::mem::size_of::<TraceEvent>();
    let runs = plan_runs(&counts);
    let total: usize = runs.iter().map(|r| r.len * r.events as usize * event).sum();
    let mut landing = Landing::take(on.cuda, total);
    let first_events = first_warp + WARP_HEADER_SIZE as u64;
    let mut at = 0;
    for run in &runs {
        let width = run.events as usize * event;
        copy_calls += dtoh_rows(
            on,
            &mut landing.bytes_mut(total)[at..at + width * run.len],
            first_events + run.start as u64 * sizes.warp_buffer,
            sizes.warp_buffer,
            width,
            run.len,
        )?;
        at += width * run.len;
    }
    if landing.pinned() && !runs.is_empty() {
        on.synchronize()?;
    }
    let bytes = landing.bytes_mut(total);
    let mut warps: Vec<(WarpBufferHeader, Vec<TraceEvent>)> =
        warp_headers.into_iter().map(|h| (h, Vec::new())).collect();
    let mut at = 0;
    for run in &runs {
        let width = run.events as usize * event;
        for (k, row) in bytes[at..at + width * run.len]
            .chunks_exact(width)
            .enumerate()
        {
            let (h, events) = &mut warps[run.start + k];
            let used = h.num_events as usize;
            let mut kept = vec![TraceEvent::default(); used];
            bytemuck::cast_slice_mut(&mut kept).copy_from_slice(&row[..used * event]);
            *events = kept;
        }
        at += width * run.len;
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
    let recorded: u64 = counts
        .iter()
        .map(|&n| u64::from(n) * event as u64)
        .sum::<u64>()
        + sizes.history
        + sizes.snapshot;
    counts::add(&counts::recorded_bytes, recorded);
    counts::add(&counts::warp_headers, slots as u64);
    let truncation = truncation(sizes, &warps);
    Ok(CapturedTrace {
        header,
        warps,
        history: history_bytes,
        snapshot: snapshot_bytes,
        copy_nanos: started.elapsed().as_nanos() as u64,
        copy_calls,
        truncation,
    })
}

/// What fitting the buffers to the budget cost, when it reduced the event
/// slots per warp below the configured number: the warps that recorded more than they
/// were granted, and the events they lost.
fn truncation(
    sizes: &Sizes,
    warps: &[(WarpBufferHeader, Vec<TraceEvent>)],
) -> Option<prlx_session::Truncation> {
    let requested = sizes.requested_events_per_warp;
    if sizes.events_per_warp >= requested {
        return None;
    }
    let granted = sizes.events_per_warp;
    let (mut overflowed_warps, mut dropped_events) = (0u64, 0u64);
    for (header, _) in warps {
        if header.write_idx > granted {
            overflowed_warps += 1;
            dropped_events += u64::from(header.write_idx - granted);
        }
    }
    Some(prlx_session::Truncation {
        events_per_warp: granted,
        requested_events_per_warp: requested,
        budget_bytes: sizes.budget,
        overflowed_warps,
        dropped_events,
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
    fn runs_move_at_most_a_tenth_more_than_recorded() {
        assert_eq!(plan_runs(&[0, 0, 0]), vec![]);
        assert_eq!(plan_runs(&[]), vec![]);
        // Every warp ran the same loop: one strided copy.
        assert_eq!(
            plan_runs(&[512; 128]),
            vec![Run {
                start: 0,
                len: 128,
                events: 512
            }]
        );
        // Idle warps are skipped; a busy one among them is copied alone.
        let mut sparse = vec![0u32; 4096];
        sparse[17] = 4096;
        assert_eq!(
            plan_runs(&sparse),
            vec![Run {
                start: 17,
                len: 1,
                events: 4096
            }]
        );
        // Uneven warps: whatever the pattern, the copies move ≤ 1.1× the events.
        for counts in [
            (0..1024u32)
                .map(|w| 2048 + (w % 2) * 2048)
                .collect::<Vec<_>>(),
            (0..1000u32).map(|w| (w * 7919) % 613).collect(),
            (0..300u32).map(|w| 100 + w % 9).collect(),
        ] {
            let runs = plan_runs(&counts);
            let moved: u64 = runs
                .iter()
                .map(|r| r.len as u64 * u64::from(r.events))
                .sum();
            let needed: u64 = counts.iter().map(|&n| u64::from(n)).sum();
            assert!(10 * moved <= 11 * needed, "{moved} moved for {needed}");
            // Every warp that recorded lies in exactly one run, which copies all its events.
            let mut seen = vec![0; counts.len()];
            for r in &runs {
                for (k, n) in counts[r.start..r.start + r.len].iter().enumerate() {
                    assert!(*n <= r.events);
                    seen[r.start + k] += 1;
                }
            }
            for (n, s) in counts.iter().zip(&seen) {
                assert!(*s <= 1 && (*n == 0 || *s == 1));
            }
        }
        // Near-equal counts share a copy.
        assert_eq!(
            plan_runs(&(0..300u32).map(|w| 100 + w % 9).collect::<Vec<_>>()).len(),
            1
        );
        // Alternating busy and idle warps: merged as far as the bound allows
        // (half of the 1000 warps idle: copying them all would move 2×).
        let alternating: Vec<u32> = (0..1000).map(|w| 50 * (w % 2)).collect();
        let runs = plan_runs(&alternating);
        assert!(runs.len() < 500, "{} copies", runs.len());
    }

    #[test]
    fn a_sixteen_million_thread_grid_fits_the_budget_with_fewer_events() {
        let config = Config::from_lookup(|_| None);
        assert_eq!(config.events_per_warp, 4096);
        let budget = DEFAULT_CAPTURE_BUDGET_BYTES;
        // 65536 blocks of 256 threads: 524288 warps.
        let big = Geometry {
            grid: [65536, 1, 1],
            block: [256, 1, 1],
        };
        let s = sizes(big, &config, budget).expect("captured with defaults");
        assert!(s.events_per_warp >= 64 && s.events_per_warp < 4096);
        assert_eq!(s.requested_events_per_warp, 4096);
        assert!(s.total() <= budget);
        // One more event per warp would not have fitted.
        let warp = WARP_HEADER_SIZE as u64 + u64::from(s.events_per_warp + 1) * 16;
        assert!(HEADER_SIZE as u64 + 524_288 * warp > budget - 2 * SECTION_ALIGN);
        // A larger device budget grants more slots to the same grid.
        let s8 = sizes(big, &config, MAX_DEVICE_BUDGET_BYTES).unwrap();
        assert!(
            s8.events_per_warp > 3 * s.events_per_warp,
            "{}",
            s8.events_per_warp
        );
        // A small grid keeps the configured size.
        let small = Geometry {
            grid: [32, 1, 1],
            block: [128, 1, 1],
        };
        assert_eq!(sizes(small, &config, budget).unwrap().events_per_warp, 4096);
        // Beyond even MIN_EVENTS_PER_WARP per warp: refused, with the reason.
        let huge = Geometry {
            grid: [1 << 22, 1, 1],
            block: [1024, 1, 1],
        };
        let e = sizes(huge, &config, budget).err().expect("too large");
        assert!(e.contains("capture budget"), "{e}");
    }

    #[test]
    fn the_device_budget_is_a_capped_share_of_free_memory() {
        assert_eq!(budget_from_free_memory(None), DEFAULT_CAPTURE_BUDGET_BYTES);
        assert_eq!(budget_from_free_memory(Some(4 << 30)), 1 << 30);
        assert_eq!(
            budget_from_free_memory(Some(140 << 30)),
            MAX_DEVICE_BUDGET_BYTES
        );
        // PRLX_CAPTURE_BUDGET_MB wins without asking the driver (HIP's
        // table has no cuMemGetInfo; the real one is not loaded here).
        let config = Config::from_lookup(|k| (k == "PRLX_CAPTURE_BUDGET_MB").then(|| "3".into()));
        assert_eq!(budget(crate::hip_driver::as_cuda(), &config), 3 << 20);
    }

    #[test]
    fn truncation_counts_the_warps_past_their_slots() {
        let config = Config::from_lookup(|_| None);
        let geometry = Geometry {
            grid: [4, 1, 1],
            block: [64, 1, 1],
        };
        let fitted = sizes(geometry, &config, 64 << 10).unwrap();
        assert!(fitted.events_per_warp < 4096);
        let warp = |written: u32| {
            let header = WarpBufferHeader {
                write_idx: written,
                ..WarpBufferHeader::default()
            };
            (header, Vec::new())
        };
        let granted = fitted.events_per_warp;
        let warps = [
            warp(0),
            warp(granted),
            warp(granted + 5),
            warp(granted + 100),
        ];
        let t = truncation(&fitted, &warps).expect("fewer slots than configured");
        assert_eq!(
            (
                t.events_per_warp,
                t.requested_events_per_warp,
                t.budget_bytes
            ),
            (granted, 4096, 64 << 10)
        );
        assert_eq!((t.overflowed_warps, t.dropped_events), (2, 105));
        let roomy = sizes(geometry, &config, 1 << 30).unwrap();
        assert_eq!(truncation(&roomy, &warps), None);
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
            truncation: None,
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
