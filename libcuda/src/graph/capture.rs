//! Stream capture: `cuStreamBeginCapture` .. `cuStreamEndCapture`, and the
//! rules the driver enforces while a capture runs.
//!
//! Work issued to a capturing stream is not run: it becomes a node of the
//! capture's graph, depending on the stream's current dependency set, and
//! becomes that set. Events join streams: recording an event in a
//! capturing stream remembers the stream's dependency set; a stream that
//! waits on it joins the capture (or, if already in it, adds that set).
//! Other modules ask this one first:
//!
//! - [`intercept`] from every stream-ordered call (launches, async copies
//!   and memsets, host functions): a node instead of the work, an error for
//!   an invalidated capture, or `None` to go on;
//! - [`unsafe_call`] from calls that capture cannot record (allocation,
//!   freeing, ...): refused with `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`,
//!   invalidating the captures that prohibit them, under the modes
//!   `cuThreadExchangeStreamCaptureMode` documents; synchronous copies and
//!   memsets are uses of the legacy stream ([`sync_call`]), not unsafe calls,
//!   as on NVIDIA's driver;
//! - [`stream_sync`], [`ctx_sync`], [`event_query`], [`event_record`],
//!   [`wait_event`] for synchronization and events.
//!
//! The legacy stream (NULL, `CU_STREAM_LEGACY`) cannot capture, and while a
//! blocking stream of the context captures, using it fails with
//! `CUDA_ERROR_STREAM_CAPTURE_IMPLICIT` (it would depend on the capture).

use super::abi::*;
use super::model::{
    Capture, CapturedEvent, ExecGraph, KernelOp, Op, State, StreamCapture, captures_active,
    with_state,
};
use super::read_nodes;
use crate::cu::*;
use crate::driver::{Driver, with_driver};
use crate::entry::{non_null, write_optional, write_out};
use std::cell::Cell;
use std::collections::HashSet;
use std::ffi::{c_uint, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

thread_local! {
    /// This thread's capture interaction mode (`cuThreadExchangeStreamCaptureMode`).
    static THREAD_MODE: Cell<u32> = const { Cell::new(CAPTURE_MODE_GLOBAL) };
    /// This thread's key for its per-thread default stream.
    static PER_THREAD_KEY: usize = {
        static NEXT: AtomicUsize = AtomicUsize::new(1);
        // Small values no real stream handle takes (see `handles`).
        0x1000 + NEXT.fetch_add(1, Ordering::Relaxed) * 16
    };
}

/// Which stream a `CUstream` names: `None` for the legacy default stream,
/// a per-thread key for `CU_STREAM_PER_THREAD`, else the handle.
pub fn stream_key(stream: CUstream) -> Option<usize> {
    match stream as usize {
        0 | CU_STREAM_LEGACY => None,
        CU_STREAM_PER_THREAD => Some(PER_THREAD_KEY.with(|k| *k)),
        s => Some(s),
    }
}

/// Marks a capture invalidated: later work in its streams fails, and
/// `cuStreamEndCapture` returns no graph.
fn invalidate(s: &mut State, capture: u64) {
    if let Some(c) = s.captures.get_mut(&capture) {
        c.invalidated = true;
    }
}

/// Invalidates every capture in `captures`, which then fail the call with
/// `error`; none: the call may go on.
fn invalidate_all(s: &mut State, captures: Vec<u64>, error: CUresult) -> Result<(), CUresult> {
    if captures.is_empty() {
        return Ok(());
    }
    for c in captures {
        invalidate(s, c);
    }
    Err(error)
}

/// A stream that synchronizes with the legacy stream: one created without
/// `CU_STREAM_NON_BLOCKING`, or a per-thread default stream.
fn is_blocking(d: &Driver, key: usize) -> bool {
    d.streams
        .get(key as *mut c_void)
        .is_none_or(|s| s.flags & CU_STREAM_NON_BLOCKING == 0)
}

/// Captures in the current context that a use of the legacy stream would
/// implicitly depend on (those with a blocking stream).
fn implicit_conflicts(d: &Driver, s: &State) -> Vec<u64> {
    if s.captures.is_empty() {
        return Vec::new();
    }
    let ctx = d.current_context().ok();
    s.captures
        .iter()
        .filter(|(_, c)| Some(c.ctx) == ctx)
        .filter(|(_, c)| {
            std::iter::once(c.origin)
                .chain(c.joined.iter().copied())
                .any(|k| is_blocking(d, k))
        })
        .map(|(id, _)| *id)
        .collect()
}

/// Work on the legacy stream while a blocking stream captures: the
/// captures are invalidated and the work fails.
fn legacy_use(d: &Driver, s: &mut State) -> Result<(), CUresult> {
    let conflicts = implicit_conflicts(d, s);
    invalidate_all(s, conflicts, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
}

/// Appends `op` to the capture `stream` takes part in, after the stream's
/// dependencies; the node becomes them.
fn append(s: &mut State, key: usize, op: Op) -> Result<usize, CUresult> {
    let sc = s.streams.get(&key).ok_or(CUDA_ERROR_ILLEGAL_STATE)?;
    let capture = sc.capture;
    let deps = sc.deps.clone();
    let graph = s
        .captures
        .get(&capture)
        .ok_or(CUDA_ERROR_ILLEGAL_STATE)?
        .graph;
    let node = s.add_node(graph, &deps, op)?;
    if let Some(sc) = s.streams.get_mut(&key) {
        sc.deps = vec![node];
    }
    Ok(node)
}

/// What a stream-ordered call does first. `None`: the stream is not
/// capturing (and the call may run). `Some(result)`: the call is done:
/// its work became a node (`make` describes it), or it failed because the
/// capture is invalidated, or because it used the legacy stream against a
/// capture. A failure to describe the work invalidates the capture.
pub fn intercept(
    d: &Driver,
    stream: CUstream,
    make: impl FnOnce(&mut State) -> Result<Op, CUresult>,
) -> Option<Result<(), CUresult>> {
    if !captures_active() {
        return None;
    }
    with_state(|s| {
        let (key, capture) = match capturing(d, s, stream)? {
            Ok(c) => c,
            Err(e) => return Some(Err(e)),
        };
        let made = make(s).and_then(|op| append(s, key, op));
        if made.is_err() {
            invalidate(s, capture);
        }
        Some(made.map(|_| ()))
    })
}

/// The capture `stream` takes part in, as (stream key, capture id).
/// `None`: the stream does not capture. `Some(Err)`: the legacy stream was
/// used against a capture, or the stream's capture is invalidated.
fn capturing(
    d: &Driver,
    s: &mut State,
    stream: CUstream,
) -> Option<Result<(usize, u64), CUresult>> {
    let Some(key) = stream_key(stream) else {
        return legacy_use(d, s).err().map(Err);
    };
    let capture = s.streams.get(&key)?.capture;
    if s.captures.get(&capture).is_none_or(|c| c.invalidated) {
        return Some(Err(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED));
    }
    Some(Ok((key, capture)))
}

/// [`intercept`] for a kernel launch whose arguments are packed.
#[allow(clippy::too_many_arguments)]
pub fn kernel(
    d: &Driver,
    stream: CUstream,
    f: CUfunction,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    cooperative: bool,
    args: &[u8],
) -> Option<Result<(), CUresult>> {
    intercept(d, stream, |_| {
        let emu = d.function(f)?.emu;
        let info = d.device.kernel_info(emu).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let offsets = info.params.iter().map(|p| p.offset).collect();
        let module = d.function(f)?.module;
        let mut op = KernelOp::new(
            f as usize,
            grid,
            block,
            shared,
            cooperative,
            args.to_vec(),
            offsets,
        );
        // A library's kernel is a CUkernel (what the runtime launches).
        op.as_kernel = !d.libraries.handles_where(|l| l.module == module).is_empty();
        Ok(Op::Kernel(op))
    })
}

/// [`intercept`] for a linear copy of `bytes` bytes between two addresses
/// (device, or host when `*_host`).
pub fn copy_1d(
    d: &Driver,
    stream: CUstream,
    dst: u64,
    dst_host: bool,
    src: u64,
    src_host: bool,
    bytes: usize,
) -> Option<Result<(), CUresult>> {
    let end = |address: u64, host: bool| {
        if host {
            RowEnd::Host(address as usize)
        } else {
            RowEnd::Device(address)
        }
    };
    intercept(d, stream, |_| {
        Ok(row_copy(end(src, src_host), end(dst, dst_host), bytes))
    })
}

/// [`intercept`] for `cuMemcpyHtoAAsync`: `bytes` from host memory to a
/// CUDA array at byte offset `offset` (a copy of one row).
pub fn copy_to_array(
    d: &Driver,
    stream: CUstream,
    array: *mut c_void,
    offset: usize,
    src: *const c_void,
    bytes: usize,
) -> Option<Result<(), CUresult>> {
    let (src, dst) = (RowEnd::Host(src as usize), RowEnd::Array(array, offset));
    intercept(d, stream, |_| Ok(row_copy(src, dst, bytes)))
}

/// [`intercept`] for `cuMemcpyAtoHAsync`.
pub fn copy_from_array(
    d: &Driver,
    stream: CUstream,
    dst: *mut c_void,
    array: *mut c_void,
    offset: usize,
    bytes: usize,
) -> Option<Result<(), CUresult>> {
    let (src, dst) = (RowEnd::Array(array, offset), RowEnd::Host(dst as usize));
    intercept(d, stream, |_| Ok(row_copy(src, dst, bytes)))
}

/// Where one end of a one-row copy lies.
#[derive(Clone, Copy)]
enum RowEnd {
    /// Host memory at this address.
    Host(usize),
    /// Device memory at this address.
    Device(u64),
    /// A CUDA array, at this byte offset into its first row.
    Array(*mut c_void, usize),
}

impl RowEnd {
    /// This end's `CUDA_MEMCPY3D` fields: memory type, host address,
    /// device address, array, x offset in bytes (the unused ones zero).
    fn fields(self) -> (u32, *mut c_void, u64, *mut c_void, usize) {
        let null = std::ptr::null_mut();
        match self {
            RowEnd::Host(address) => (CU_MEMORYTYPE_HOST, address as *mut c_void, 0, null, 0),
            RowEnd::Device(address) => (CU_MEMORYTYPE_DEVICE, null, address, null, 0),
            RowEnd::Array(array, offset) => (CU_MEMORYTYPE_ARRAY, null, 0, array, offset),
        }
    }
}

/// The memcpy node operation copying `bytes` bytes (one row) from `src` to
/// `dst`.
fn row_copy(src: RowEnd, dst: RowEnd, bytes: usize) -> Op {
    let mut c = super::model::Copy3D::zeroed();
    let p = &mut c.0;
    let src_host;
    (
        p.src_memory_type,
        src_host,
        p.src_device,
        p.src_array,
        p.src_x_in_bytes,
    ) = src.fields();
    p.src_host = src_host;
    (
        p.dst_memory_type,
        p.dst_host,
        p.dst_device,
        p.dst_array,
        p.dst_x_in_bytes,
    ) = dst.fields();
    p.width_in_bytes = bytes;
    p.height = 1;
    p.depth = 1;
    Op::Memcpy(c)
}

/// [`intercept`] for a `cuMemcpy` whose direction follows from where the
/// pointers lie (unified addressing).
pub fn copy_unified(
    d: &Driver,
    stream: CUstream,
    dst: u64,
    src: u64,
    bytes: usize,
) -> Option<Result<(), CUresult>> {
    let dst_host = d.device.mem_range(dst).is_none();
    let src_host = d.device.mem_range(src).is_none();
    copy_1d(d, stream, dst, dst_host, src, src_host, bytes)
}

/// [`intercept`] for a `CUDA_MEMCPY2D` copy, as the 3D copy of depth 1 it is.
///
/// # Safety
/// `p` must be NULL or a valid `CUDA_MEMCPY2D`.
pub unsafe fn copy_2d(
    d: &Driver,
    stream: CUstream,
    p: *const CUDA_MEMCPY2D,
) -> Option<Result<(), CUresult>> {
    intercept(d, stream, |_| {
        non_null(p)?;
        // SAFETY: non-null, the caller's struct.
        let c2 = unsafe { &*p };
        let mut c = super::model::Copy3D::zeroed();
        let q = &mut c.0;
        q.src_x_in_bytes = c2.src_x_in_bytes;
        q.src_y = c2.src_y;
        q.src_memory_type = c2.src_memory_type;
        q.src_host = c2.src_host;
        q.src_device = c2.src_device;
        q.src_array = c2.src_array;
        q.src_pitch = c2.src_pitch;
        q.dst_x_in_bytes = c2.dst_x_in_bytes;
        q.dst_y = c2.dst_y;
        q.dst_memory_type = c2.dst_memory_type;
        q.dst_host = c2.dst_host;
        q.dst_device = c2.dst_device;
        q.dst_array = c2.dst_array;
        q.dst_pitch = c2.dst_pitch;
        q.width_in_bytes = c2.width_in_bytes;
        q.height = c2.height;
        q.depth = 1;
        // Rows per slice: irrelevant for one slice, but must cover the copy.
        q.src_height = c2.src_y + c2.height;
        q.dst_height = c2.dst_y + c2.height;
        Ok(Op::Memcpy(c))
    })
}

/// [`intercept`] for a `CUDA_MEMCPY3D` copy.
///
/// # Safety
/// `p` must be NULL or a valid `CUDA_MEMCPY3D`.
pub unsafe fn copy_3d(
    d: &Driver,
    stream: CUstream,
    p: *const CUDA_MEMCPY3D,
) -> Option<Result<(), CUresult>> {
    // SAFETY: forwarded contract.
    intercept(d, stream, |_| {
        // SAFETY: `p` is NULL or a CUDA_MEMCPY3D by this function's `# Safety` contract, which is
        // `copy_op`'s.
        unsafe { super::ops::copy_op(p) }.map(Op::Memcpy)
    })
}

/// [`intercept`] for a memset of `width` x `height` elements of
/// `element_size` bytes.
#[allow(clippy::too_many_arguments)]
pub fn memset(
    d: &Driver,
    stream: CUstream,
    dst: u64,
    pitch: usize,
    value: u32,
    element_size: u32,
    width: usize,
    height: usize,
) -> Option<Result<(), CUresult>> {
    intercept(d, stream, |_| {
        super::ops::memset_op(&MemsetNodeParams {
            dst,
            pitch,
            value,
            element_size,
            width,
            height,
        })
        .map(Op::Memset)
    })
}

/// `cuMemAllocAsync`/`cuMemAllocFromPoolAsync` on a capturing stream: an
/// allocation node, whose address (reserved now) the call returns.
pub fn mem_alloc(
    d: &mut Driver,
    ctx: usize,
    stream: CUstream,
    bytes: usize,
) -> Option<Result<u64, CUresult>> {
    if !captures_active() {
        return None;
    }
    if let Err(e) = with_state(|s| capturing(d, s, stream))? {
        return Some(Err(e));
    }
    if bytes == 0 {
        return Some(Err(CUDA_ERROR_INVALID_VALUE));
    }
    // Reserve first (the driver lock is held, the state's is not).
    let op = match super::ops::alloc_op(d, ctx, bytes) {
        Ok(op) => op,
        Err(e) => return Some(Err(e)),
    };
    let Op::MemAlloc { dptr, .. } = op else {
        return Some(Err(CUDA_ERROR_UNKNOWN));
    };
    Some(
        intercept(d, stream, |_| Ok(op))
            .unwrap_or(Err(CUDA_ERROR_ILLEGAL_STATE))
            .map(|()| dptr),
    )
}

/// `cuMemFreeAsync` on a capturing stream: a free node, of a graph
/// allocation only.
pub fn mem_free(d: &Driver, stream: CUstream, dptr: u64) -> Option<Result<(), CUresult>> {
    intercept(d, stream, |s| {
        if s.graph_memory.contains_key(&dptr) {
            Ok(Op::MemFree(dptr))
        } else {
            Err(CUDA_ERROR_INVALID_VALUE)
        }
    })
}

/// `cuMemFree`/`cuMemFreeAsync` of a graph allocation outside capture:
/// it stops being allocated (its reservation stays, for the graph's next
/// launch). `None`: not graph memory.
pub fn free_graph_memory(dptr: u64) -> Option<Result<(), CUresult>> {
    with_state(|s| {
        let m = s.graph_memory.get_mut(&dptr)?;
        if !m.live {
            return Some(Err(CUDA_ERROR_INVALID_VALUE));
        }
        m.live = false;
        Some(Ok(()))
    })
}

/// [`intercept`] for `cuLaunchHostFunc`.
pub fn host_fn(
    d: &Driver,
    stream: CUstream,
    f: usize,
    data: usize,
) -> Option<Result<(), CUresult>> {
    intercept(d, stream, |_| Ok(Op::Host { f, data }))
}

/// [`intercept`] for `cuGraphLaunch`: the executable graph, as it is now,
/// becomes a child graph node.
pub fn intercept_graph(stream: CUstream, exec: &ExecGraph) -> Option<Result<(), CUresult>> {
    with_driver(|d| {
        Ok(intercept(d, stream, |s| {
            Ok(Op::Child(s.graph_from_exec(exec)?))
        }))
    })
    .unwrap_or_else(|e| Some(Err(e)))
}

/// A call that capture cannot record and that is not safe while one runs
/// (allocation, freeing): refused, and the
/// captures that prohibit it invalidated, when this thread's mode says so.
pub fn unsafe_call() -> Result<(), CUresult> {
    if !captures_active() {
        return Ok(());
    }
    let mode = THREAD_MODE.with(Cell::get);
    if mode == CAPTURE_MODE_RELAXED {
        return Ok(());
    }
    let me = std::thread::current().id();
    with_state(|s| {
        let prohibiting: Vec<u64> = s
            .captures
            .iter()
            .filter(|(_, c)| {
                let own = c.thread == me && c.mode != CAPTURE_MODE_RELAXED;
                let other_global = c.thread != me && c.mode == CAPTURE_MODE_GLOBAL;
                own || (mode == CAPTURE_MODE_GLOBAL && other_global)
            })
            .map(|(id, _)| *id)
            .collect();
        invalidate_all(s, prohibiting, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
    })
}

/// A synchronous call on the legacy stream (`cuMemcpy`, `cuMemsetD8`, ...):
/// a use of the legacy stream, refused only while a blocking stream of the
/// context captures. Not an [`unsafe_call`]: on an H200 (driver 580) a
/// synchronous `cudaMemcpy` from the thread that captures a non-blocking
/// stream in thread-local mode succeeds (`graph_capture_errors.cu`).
pub fn legacy_sync(d: &Driver) -> Result<(), CUresult> {
    with_state(|s| legacy_use(d, s))
}

/// [`legacy_sync`] for callers that hold no driver state yet.
pub fn sync_call() -> Result<(), CUresult> {
    if !captures_active() {
        return Ok(());
    }
    with_driver(|d| with_state(|s| legacy_use(d, s)))
}

/// A call that is refused on a capturing stream and invalidates its
/// capture (stream-ordered allocation, which capture does not model).
pub fn refuse_in_capture(d: &Driver, stream: CUstream) -> Result<(), CUresult> {
    if !captures_active() {
        return Ok(());
    }
    with_state(|s| {
        let Some(key) = stream_key(stream) else {
            return legacy_use(d, s);
        };
        match s.streams.get(&key) {
            Some(sc) => {
                let c = sc.capture;
                invalidate(s, c);
                Err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
            }
            None => Ok(()),
        }
    })
}

/// `cuStreamSynchronize`/`cuStreamQuery`: a capturing stream cannot be
/// waited for (its capture is invalidated); the legacy stream cannot
/// while a blocking stream captures.
pub fn stream_sync(d: &Driver, stream: CUstream) -> Result<(), CUresult> {
    refuse_in_capture(d, stream)
}

/// `cuCtxSynchronize`: refused while a stream of the context captures
/// (those captures are invalidated).
pub fn ctx_sync(ctx: usize) -> Result<(), CUresult> {
    if !captures_active() {
        return Ok(());
    }
    with_state(|s| {
        let ids: Vec<u64> = s
            .captures
            .iter()
            .filter(|(_, c)| c.ctx == ctx)
            .map(|(id, _)| *id)
            .collect();
        invalidate_all(s, ids, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
    })
}

/// `cuEventQuery`/`cuEventSynchronize`/`cuEventElapsedTime`: not on an
/// event last recorded in a capture still running.
pub fn event_query(event: CUevent) -> Result<(), CUresult> {
    if !captures_active() {
        return Ok(());
    }
    with_state(|s| match s.events.get(&(event as usize)) {
        Some(e) if s.captures.contains_key(&e.capture) => Err(CUDA_ERROR_CAPTURED_EVENT),
        _ => Ok(()),
    })
}

/// `cuEventRecord(WithFlags)`: in a capturing stream, the event remembers
/// the stream's dependencies (or, with `CU_EVENT_RECORD_EXTERNAL`, becomes
/// an event record node); elsewhere it stops being a captured event.
pub fn event_record(
    d: &Driver,
    event: CUevent,
    stream: CUstream,
    flags: u32,
) -> Option<Result<(), CUresult>> {
    if !captures_active() {
        return None;
    }
    if flags & EVENT_EXTERNAL != 0 {
        if let Some(r) = intercept(d, stream, |_| Ok(Op::EventRecord(event as usize))) {
            return Some(r);
        }
    }
    with_state(|s| {
        let Some(key) = stream_key(stream) else {
            s.events.remove(&(event as usize));
            return legacy_use(d, s).err().map(Err);
        };
        let Some(sc) = s.streams.get(&key) else {
            s.events.remove(&(event as usize));
            return None;
        };
        let (capture, nodes) = (sc.capture, sc.deps.clone());
        if s.captures.get(&capture).is_none_or(|c| c.invalidated) {
            return Some(Err(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED));
        }
        s.events
            .insert(event as usize, CapturedEvent { capture, nodes });
        Some(Ok(()))
    })
}

/// `cuStreamWaitEvent`: waiting on an event recorded in a capture joins
/// the stream to that capture (fork), or adds the event's dependencies to
/// a stream already in it (join). A capturing stream cannot wait on work
/// outside its capture (`CUDA_ERROR_STREAM_CAPTURE_ISOLATION`) unless the
/// wait is external (`CU_EVENT_WAIT_EXTERNAL`: an event wait node), nor on
/// another capture (`CUDA_ERROR_STREAM_CAPTURE_MERGE`).
pub fn wait_event(
    d: &Driver,
    stream: CUstream,
    event: CUevent,
    flags: u32,
) -> Option<Result<(), CUresult>> {
    if !captures_active() {
        return None;
    }
    with_state(|s| {
        let captured = s
            .events
            .get(&(event as usize))
            .filter(|e| s.captures.contains_key(&e.capture))
            .map(|e| (e.capture, e.nodes.clone()));
        let Some(key) = stream_key(stream) else {
            if let Some((capture, _)) = captured {
                invalidate(s, capture);
                return Some(Err(CUDA_ERROR_STREAM_CAPTURE_ISOLATION));
            }
            return legacy_use(d, s).err().map(Err);
        };
        let own = s.streams.get(&key).map(|sc| sc.capture);
        if let Some(c) = own
            && s.captures.get(&c).is_none_or(|c| c.invalidated)
        {
            return Some(Err(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED));
        }
        match (own, captured) {
            (None, None) => None,
            // Fork: the stream joins the capture after the event's nodes.
            (None, Some((capture, nodes))) => {
                s.streams.insert(
                    key,
                    StreamCapture {
                        capture,
                        deps: nodes,
                        deps_out: Vec::new(),
                        edges_out: Vec::new(),
                    },
                );
                if let Some(c) = s.captures.get_mut(&capture) {
                    c.joined.push(key);
                }
                Some(Ok(()))
            }
            (Some(c), Some((capture, nodes))) if c == capture => {
                let sc = s.streams.get_mut(&key)?;
                for n in nodes {
                    if !sc.deps.contains(&n) {
                        sc.deps.push(n);
                    }
                }
                Some(Ok(()))
            }
            (Some(c), Some((other, _))) => {
                invalidate(s, c);
                invalidate(s, other);
                Some(Err(CUDA_ERROR_STREAM_CAPTURE_MERGE))
            }
            (Some(c), None) => {
                if flags & EVENT_EXTERNAL != 0 {
                    let r = append(s, key, Op::EventWait(event as usize));
                    if r.is_err() {
                        invalidate(s, c);
                    }
                    return Some(r.map(|_| ()));
                }
                invalidate(s, c);
                Some(Err(CUDA_ERROR_STREAM_CAPTURE_ISOLATION))
            }
        }
    })
}

/// A destroyed stream leaves its capture. Destroying a capture's origin
/// ends the capture (it can no longer be ended): its other streams leave
/// it and its graph goes, unless it was the caller's.
pub fn stream_destroyed(stream: CUstream) {
    let Some(key) = stream_key(stream) else {
        return;
    };
    with_state(|s| {
        let Some(sc) = s.streams.remove(&key) else {
            return;
        };
        let capture = sc.capture;
        let Some(c) = s.captures.get_mut(&capture) else {
            return;
        };
        c.joined.retain(|k| *k != key);
        if c.origin != key {
            return;
        }
        if let Some(c) = s.captures.remove(&capture) {
            s.streams.retain(|_, sc| sc.capture != capture);
            s.events.retain(|_, e| e.capture != capture);
            if let Ok(g) = s.graph_mut(c.graph) {
                g.capture = None;
            }
            if !c.user_graph {
                s.destroy_graph(c.graph);
            }
        }
    })
}

/// The nodes of `graph` that `nodes` depend on, directly or not, and
/// `nodes` themselves.
fn ancestors(s: &State, graph: usize, nodes: &[usize]) -> HashSet<usize> {
    let edges = s.graph(graph).map(|g| g.edges.clone()).unwrap_or_default();
    let mut seen: HashSet<usize> = nodes.iter().copied().collect();
    let mut todo: Vec<usize> = nodes.to_vec();
    while let Some(n) = todo.pop() {
        for (a, b) in &edges {
            if *b == n && seen.insert(*a) {
                todo.push(*a);
            }
        }
    }
    seen
}

/// Starts a capture on `stream` into `graph` (a new one when `None`).
pub fn begin(
    stream: CUstream,
    mode: u32,
    graph: Option<(usize, Vec<usize>)>,
) -> Result<(), CUresult> {
    if mode > CAPTURE_MODE_RELAXED {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    with_driver(|d| {
        let ctx = d.current_context()?;
        d.check_stream(stream)?;
        // The legacy stream cannot be captured.
        let key = stream_key(stream).ok_or(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)?;
        with_state(|s| {
            if s.streams.contains_key(&key) {
                return Err(CUDA_ERROR_ILLEGAL_STATE);
            }
            let (graph, deps, user_graph) = match graph {
                Some((g, deps)) => {
                    if s.graph(g)?.capture.is_some() || s.graph(g)?.owner.is_some() {
                        return Err(CUDA_ERROR_INVALID_VALUE);
                    }
                    if deps.iter().any(|n| s.node(*n).map(|n| n.graph) != Ok(g)) {
                        return Err(CUDA_ERROR_INVALID_VALUE);
                    }
                    (g, deps, true)
                }
                None => (s.new_graph(), Vec::new(), false),
            };
            let id = s.next_capture_id();
            s.graph_mut(graph)?.capture = Some(id);
            s.captures.insert(
                id,
                Capture {
                    origin: key,
                    graph,
                    mode,
                    thread: std::thread::current().id(),
                    ctx,
                    invalidated: false,
                    joined: Vec::new(),
                    user_graph,
                },
            );
            s.streams.insert(
                key,
                StreamCapture {
                    capture: id,
                    deps,
                    deps_out: Vec::new(),
                    edges_out: Vec::new(),
                },
            );
            Ok(())
        })
    })
}

/// `cuStreamEndCapture`: the graph, or why there is none.
pub fn end(stream: CUstream) -> Result<usize, CUresult> {
    with_driver(|d| d.check_stream(stream))?;
    let key = stream_key(stream).ok_or(CUDA_ERROR_ILLEGAL_STATE)?;
    with_state(|s| {
        let capture = s.streams.get(&key).ok_or(CUDA_ERROR_ILLEGAL_STATE)?.capture;
        let c = s.captures.get(&capture).ok_or(CUDA_ERROR_ILLEGAL_STATE)?;
        if c.origin != key {
            invalidate(s, capture);
            return Err(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
        }
        if c.mode != CAPTURE_MODE_RELAXED && c.thread != std::thread::current().id() {
            return Err(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
        }
        let c = s
            .captures
            .remove(&capture)
            .ok_or(CUDA_ERROR_ILLEGAL_STATE)?;
        let origin_deps = s
            .streams
            .get(&key)
            .map(|sc| sc.deps.clone())
            .unwrap_or_default();
        let joined: Vec<Vec<usize>> = c
            .joined
            .iter()
            .filter_map(|k| s.streams.get(k))
            .filter(|sc| sc.capture == capture)
            .map(|sc| sc.deps.clone())
            .collect();
        s.streams.retain(|_, sc| sc.capture != capture);
        s.events.retain(|_, e| e.capture != capture);
        if let Ok(g) = s.graph_mut(c.graph) {
            g.capture = None;
        }
        let give_up = |s: &mut State, code| {
            if !c.user_graph {
                s.destroy_graph(c.graph);
            }
            Err(code)
        };
        if c.invalidated {
            return give_up(s, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
        }
        // Every forked stream's last work must lead into the origin's.
        let reached = ancestors(s, c.graph, &origin_deps);
        if joined.iter().flatten().any(|n| !reached.contains(n)) {
            return give_up(s, CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
        }
        Ok(c.graph)
    })
}

/// `cuStreamGetCaptureInfo` (all versions): status, id, graph, the
/// dependency set (a driver-owned array, valid until the next call on the
/// stream) and, for `_v3`, its (all-ordinary) edge data.
///
/// # Safety
/// Out-pointers NULL or writable.
pub unsafe fn capture_info(
    stream: CUstream,
    status: *mut c_uint,
    id: *mut u64,
    graph: *mut CUgraph,
    deps: *mut *const CUgraphNode,
    edges: *mut *const EdgeData,
    count: *mut usize,
) -> Result<(), CUresult> {
    non_null(status)?;
    if !edges.is_null() && deps.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    with_driver(|d| {
        d.current_context()?;
        d.check_stream(stream)?;
        with_state(|s| {
            let Some(key) = stream_key(stream) else {
                if !implicit_conflicts(d, s).is_empty() {
                    return Err(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
                }
                // SAFETY: non-null, the caller's out-pointer.
                return unsafe { write_out(status, CAPTURE_STATUS_NONE) };
            };
            let Some(sc) = s.streams.get(&key) else {
                // SAFETY: as above.
                return unsafe { write_out(status, CAPTURE_STATUS_NONE) };
            };
            let capture = sc.capture;
            let Some(c) = s.captures.get(&capture) else {
                // SAFETY: as above.
                return unsafe { write_out(status, CAPTURE_STATUS_NONE) };
            };
            let (invalidated, g) = (c.invalidated, c.graph);
            let st = if invalidated {
                CAPTURE_STATUS_INVALIDATED
            } else {
                CAPTURE_STATUS_ACTIVE
            };
            // SAFETY: out-pointers checked or optional, the caller's.
            unsafe {
                write_out(status, st)?;
                write_optional(id, capture);
            }
            if invalidated {
                return Ok(());
            }
            let sc = s.streams.get_mut(&key).ok_or(CUDA_ERROR_ILLEGAL_STATE)?;
            sc.deps_out = sc.deps.clone();
            sc.edges_out = vec![EdgeData::default(); sc.deps.len()];
            let deps_ptr = if sc.deps_out.is_empty() {
                std::ptr::null()
            } else {
                sc.deps_out.as_ptr() as *const CUgraphNode
            };
            let edges_ptr = if sc.edges_out.is_empty() {
                std::ptr::null()
            } else {
                sc.edges_out.as_ptr()
            };
            // SAFETY: optional out-pointers of the caller.
            unsafe {
                write_optional(graph, g as CUgraph);
                write_optional(deps, deps_ptr);
                write_optional(edges, edges_ptr);
                write_optional(count, sc.deps_out.len());
            }
            Ok(())
        })
    })
}

/// `cuStreamUpdateCaptureDependencies`: add to or replace the set.
///
/// # Safety
/// `deps` NULL or `n` handles.
pub unsafe fn update_dependencies(
    stream: CUstream,
    deps: *const CUgraphNode,
    n: usize,
    flags: u32,
) -> Result<(), CUresult> {
    // SAFETY: forwarded contract.
    let nodes = unsafe { read_nodes(deps, n) }?;
    if flags > SET_CAPTURE_DEPENDENCIES {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    with_driver(|d| d.check_stream(stream))?;
    let key = stream_key(stream).ok_or(CUDA_ERROR_ILLEGAL_STATE)?;
    with_state(|s| {
        let capture = s.streams.get(&key).ok_or(CUDA_ERROR_ILLEGAL_STATE)?.capture;
        let c = s.captures.get(&capture).ok_or(CUDA_ERROR_ILLEGAL_STATE)?;
        if c.invalidated {
            return Err(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
        }
        let graph = c.graph;
        if nodes
            .iter()
            .any(|n| s.node(*n).map(|x| x.graph) != Ok(graph))
        {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let sc = s.streams.get_mut(&key).ok_or(CUDA_ERROR_ILLEGAL_STATE)?;
        if flags == SET_CAPTURE_DEPENDENCIES {
            sc.deps.clear();
        }
        for n in nodes {
            if !sc.deps.contains(&n) {
                sc.deps.push(n);
            }
        }
        Ok(())
    })
}

/// `cuStreamIsCapturing`.
pub fn is_capturing(d: &Driver, stream: CUstream) -> Result<u32, CUresult> {
    with_state(|s| {
        let Some(key) = stream_key(stream) else {
            if !implicit_conflicts(d, s).is_empty() {
                return Err(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
            }
            return Ok(CAPTURE_STATUS_NONE);
        };
        Ok(
            match s
                .streams
                .get(&key)
                .and_then(|sc| s.captures.get(&sc.capture))
            {
                None => CAPTURE_STATUS_NONE,
                Some(c) if c.invalidated => CAPTURE_STATUS_INVALIDATED,
                Some(_) => CAPTURE_STATUS_ACTIVE,
            },
        )
    })
}

/// `cuThreadExchangeStreamCaptureMode`: sets this thread's capture
/// interaction mode to `new` (already checked) and returns the old one.
pub fn exchange_thread_mode(new: u32) -> u32 {
    THREAD_MODE.with(|m| m.replace(new))
}
