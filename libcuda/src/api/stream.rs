//! Streams and events. All work completes before the call that issues it
//! returns, so streams are always idle and events record the emulated clock
//! (see [`crate::clock`]) at the moment they are recorded. A capturing
//! stream (see [`crate::graph::capture`]) records work into a graph
//! instead; events recorded and waited on there join streams.

use crate::cu::*;
use crate::driver::{Event, Stream, as_handle, with_context, with_driver};
use crate::entry::{ProcEntry, procs};
use crate::entry::{aliases, exports, non_null, write_out};
use crate::graph::capture;
use std::ffi::{c_int, c_uint, c_void};

/// `CUhostFn`.
pub type HostFn = Option<unsafe extern "C" fn(*mut c_void)>;
/// `CUstreamCallback`.
pub type StreamCallback = Option<unsafe extern "C" fn(CUstream, CUresult, *mut c_void)>;

fn create_stream(ph_stream: *mut CUstream, flags: c_uint, priority: c_int) -> Result<(), CUresult> {
    with_context(|d, ctx| {
        non_null(ph_stream)?;
        if flags & !CU_STREAM_NON_BLOCKING != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let s = d.streams.insert(Stream {
            ctx,
            flags,
            // Priorities are clamped to the supported range [0, 0].
            priority: priority.clamp(0, 0),
        });
        // SAFETY: `ph_stream` is NULL or valid by `create_stream`'s `# Safety` contract (writable for a
        // `CUstream`); `write_out` refuses NULL.
        unsafe { write_out(ph_stream, s) }
    })
}

/// A stream argument that may be a default stream (NULL, legacy, per-thread).
fn is_default_stream(s: CUstream) -> bool {
    matches!(s as usize, 0 | CU_STREAM_LEGACY | CU_STREAM_PER_THREAD)
}

exports! {
    fn cuStreamCreate(ph_stream: *mut CUstream, flags: c_uint) {
        create_stream(ph_stream, flags, 0)
    }

    fn cuStreamCreateWithPriority(ph_stream: *mut CUstream, flags: c_uint, priority: c_int) {
        create_stream(ph_stream, flags, priority)
    }

    fn cuStreamDestroy_v2(h_stream: CUstream) {
        with_context(|d, _| {
            d.streams.remove(h_stream).map(|_| ()).ok_or(CUDA_ERROR_INVALID_HANDLE)
        })?;
        capture::stream_destroyed(h_stream);
        Ok(())
    }

    /// A capturing stream cannot be synchronized (the capture is invalidated).
    fn cuStreamSynchronize(h_stream: CUstream) {
        with_context(|d, _| {
            d.check_stream(h_stream)?;
            capture::stream_sync(d, h_stream)
        })
    }

    fn cuStreamQuery(h_stream: CUstream) {
        with_context(|d, _| {
            d.check_stream(h_stream)?;
            capture::stream_sync(d, h_stream)
        })
    }

    fn cuStreamIsCapturing(h_stream: CUstream, capture_status: *mut c_int) {
        with_context(|d, _| {
            non_null(capture_status)?;
            d.check_stream(h_stream)?;
            let status = capture::is_capturing(d, h_stream)?;
            // SAFETY: `cuStreamIsCapturing`'s caller passes `capture_status` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `c_int`.
            unsafe { write_out(capture_status, status as c_int) }
        })
    }

    /// Work is already complete when this is called, so there is nothing to
    /// order, except in stream capture, where the wait joins streams.
    fn cuStreamWaitEvent(h_stream: CUstream, h_event: CUevent, flags: c_uint) {
        with_context(|d, _| {
            d.check_stream(h_stream)?;
            if !d.events.contains(h_event) {
                return Err(CUDA_ERROR_INVALID_HANDLE);
            }
            if flags > 1 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            capture::wait_event(d, h_stream, h_event, flags).unwrap_or(Ok(()))
        })
    }

    fn cuStreamGetPriority(h_stream: CUstream, priority: *mut c_int) {
        with_context(|d, _| {
            non_null(priority)?;
            d.check_stream(h_stream)?;
            let p = d.streams.get(h_stream).map_or(0, |s| s.priority);
            // SAFETY: `cuStreamGetPriority`'s caller passes `priority` as cuda.h specifies: NULL (refused
            // by `write_out`) or valid for writing a `c_int`.
            unsafe { write_out(priority, p) }
        })
    }

    fn cuStreamGetFlags(h_stream: CUstream, flags: *mut c_uint) {
        with_context(|d, _| {
            non_null(flags)?;
            d.check_stream(h_stream)?;
            let f = d.streams.get(h_stream).map_or(0, |s| s.flags);
            // SAFETY: `cuStreamGetFlags`'s caller passes `flags` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `c_uint`.
            unsafe { write_out(flags, f) }
        })
    }

    fn cuStreamGetCtx(h_stream: CUstream, pctx: *mut CUcontext) {
        with_context(|d, current| {
            non_null(pctx)?;
            d.check_stream(h_stream)?;
            let ctx = if is_default_stream(h_stream) {
                current
            } else {
                d.streams.get(h_stream).map_or(current, |s| s.ctx)
            };
            // SAFETY: `cuStreamGetCtx`'s caller passes `pctx` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUcontext`.
            unsafe { write_out(pctx, as_handle(ctx)) }
        })
    }

    /// Green contexts do not exist here: `*p_green_ctx` is always NULL.
    fn cuStreamGetCtx_v2(h_stream: CUstream, pctx: *mut CUcontext, p_green_ctx: *mut *mut c_void) {
        non_null(p_green_ctx)?;
        // SAFETY: `pctx` is the caller's out-parameter, valid as cuda.h specifies for `cuStreamGetCtx_v2`,
        // which is `cuStreamGetCtx`'s contract.
        unsafe { cuStreamGetCtx(h_stream, pctx) }.into_result()?;
        // SAFETY: `cuStreamGetCtx_v2`'s caller passes `p_green_ctx` as cuda.h specifies: NULL (refused by
        // `write_out`) or valid for writing a `*mut c_void`.
        unsafe { write_out(p_green_ctx, std::ptr::null_mut()) }
    }

    /// Runs `f(user_data)` now: all earlier work in the stream is complete.
    fn cuLaunchHostFunc(h_stream: CUstream, f: HostFn, user_data: *mut c_void) {
        let f = f.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let captured = with_context(|d, _| {
            d.check_stream(h_stream)?;
            Ok(capture::host_fn(d, h_stream, f as usize, user_data as usize))
        })?;
        if let Some(r) = captured {
            return r;
        }
        // Called without the driver lock held: the function may call the driver.
        // SAFETY: `f` is the CUhostFn the application passed with `user_data`, to be called with it exactly
        // once; no driver lock is held, so it may call back into the driver.
        unsafe { f(user_data) };
        Ok(())
    }

    /// Runs the callback now with the stream's status (always success: a
    /// faulted context fails the call instead).
    fn cuStreamAddCallback(h_stream: CUstream, callback: StreamCallback, user_data: *mut c_void, flags: c_uint) {
        let callback = callback.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        with_context(|d, _| {
            d.check_stream(h_stream)?;
            // Not capturable: a callback's signature has no graph node.
            capture::refuse_in_capture(d, h_stream)
        })?;
        // SAFETY: `callback` is the CUstreamCallback the application passed with `user_data` for this
        // stream; called once, with no driver lock held.
        unsafe { callback(h_stream, CUDA_SUCCESS, user_data) };
        Ok(())
    }

    fn cuEventCreate(ph_event: *mut CUevent, flags: c_uint) {
        with_context(|d, ctx| {
            non_null(ph_event)?;
            if flags & !CU_EVENT_FLAGS_MASK != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let e = d.events.insert(Event {
                ctx,
                flags,
                recorded_at: None,
            });
            // SAFETY: `cuEventCreate`'s caller passes `ph_event` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUevent`.
            unsafe { write_out(ph_event, e) }
        })
    }

    fn cuEventRecord(h_event: CUevent, h_stream: CUstream) {
        record_event(h_event, h_stream, 0)
    }

    fn cuEventRecordWithFlags(h_event: CUevent, h_stream: CUstream, flags: c_uint) {
        if flags > 1 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        record_event(h_event, h_stream, flags)
    }

    fn cuEventQuery(h_event: CUevent) {
        with_context(|d, _| d.events.get(h_event).map(|_| ()).ok_or(CUDA_ERROR_INVALID_HANDLE))?;
        capture::event_query(h_event)
    }

    fn cuEventSynchronize(h_event: CUevent) {
        with_context(|d, _| d.events.get(h_event).map(|_| ()).ok_or(CUDA_ERROR_INVALID_HANDLE))?;
        capture::event_query(h_event)
    }


    fn cuEventDestroy_v2(h_event: CUevent) {
        with_driver(|d| d.events.remove(h_event).map(|_| ()).ok_or(CUDA_ERROR_INVALID_HANDLE))
    }

    fn cuEventElapsedTime(pms: *mut f32, h_start: CUevent, h_end: CUevent) {
        capture::event_query(h_start)?;
        capture::event_query(h_end)?;
        with_context(|d, _| {
            non_null(pms)?;
            let start = d.events.get(h_start).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            let end = d.events.get(h_end).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            if (start.flags | end.flags) & CU_EVENT_DISABLE_TIMING != 0 {
                return Err(CUDA_ERROR_INVALID_HANDLE);
            }
            let (Some(t0), Some(t1)) = (start.recorded_at, end.recorded_at) else {
                return Err(CUDA_ERROR_INVALID_HANDLE);
            };
            let ms = (t1 as f64 - t0 as f64) / 1e6;
            // SAFETY: `cuEventElapsedTime`'s caller passes `pms` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `f32`.
            unsafe { write_out(pms, ms as f32) }
        })
    }
}

/// `cuEventRecord(WithFlags)`: in a capturing stream, the event marks the
/// capture's progress (see [`capture::event_record`]); otherwise it records
/// the emulated clock.
fn record_event(h_event: CUevent, h_stream: CUstream, flags: c_uint) -> Result<(), CUresult> {
    with_context(|d, _| {
        d.check_stream(h_stream)?;
        if !d.events.contains(h_event) {
            return Err(CUDA_ERROR_INVALID_HANDLE);
        }
        if let Some(r) = capture::event_record(d, h_event, h_stream, flags) {
            return r;
        }
        let now = d.clock_ns;
        let e = d.events.get_mut(h_event).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        e.recorded_at = Some(now);
        Ok(())
    })
}

/// Turns a returned `CUresult` back into a `Result`, for exports that
/// delegate to other exports.
trait IntoResult {
    fn into_result(self) -> Result<(), CUresult>;
}

impl IntoResult for CUresult {
    fn into_result(self) -> Result<(), CUresult> {
        if self == CUDA_SUCCESS {
            Ok(())
        } else {
            Err(self)
        }
    }
}

aliases! {
    cuStreamDestroy = cuStreamDestroy_v2(h_stream: CUstream);
    cuEventDestroy = cuEventDestroy_v2(h_event: CUevent);
    cuEventElapsedTime_v2 = cuEventElapsedTime(pms: *mut f32, h_start: CUevent, h_end: CUevent);
    cuStreamSynchronize_ptsz = cuStreamSynchronize(h_stream: CUstream);
    cuStreamQuery_ptsz = cuStreamQuery(h_stream: CUstream);
    cuStreamIsCapturing_ptsz = cuStreamIsCapturing(h_stream: CUstream, capture_status: *mut c_int);
    cuStreamWaitEvent_ptsz = cuStreamWaitEvent(h_stream: CUstream, h_event: CUevent, flags: c_uint);
    cuStreamGetPriority_ptsz = cuStreamGetPriority(h_stream: CUstream, priority: *mut c_int);
    cuStreamGetFlags_ptsz = cuStreamGetFlags(h_stream: CUstream, flags: *mut c_uint);
    cuStreamGetCtx_ptsz = cuStreamGetCtx(h_stream: CUstream, pctx: *mut CUcontext);
    cuStreamGetCtx_v2_ptsz = cuStreamGetCtx_v2(h_stream: CUstream, pctx: *mut CUcontext, p_green_ctx: *mut *mut c_void);
    cuLaunchHostFunc_ptsz = cuLaunchHostFunc(h_stream: CUstream, f: HostFn, user_data: *mut c_void);
    cuStreamAddCallback_ptsz = cuStreamAddCallback(h_stream: CUstream, callback: StreamCallback, user_data: *mut c_void, flags: c_uint);
    cuEventRecord_ptsz = cuEventRecord(h_event: CUevent, h_stream: CUstream);
    cuEventRecordWithFlags_ptsz = cuEventRecordWithFlags(h_event: CUevent, h_stream: CUstream, flags: c_uint);
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuStreamCreate": 2000 => cuStreamCreate;
        "cuStreamCreateWithPriority": 5050 => cuStreamCreateWithPriority;
        "cuStreamGetPriority": 5050 => cuStreamGetPriority, @ptds 7000 => cuStreamGetPriority_ptsz;
        "cuStreamGetFlags": 5050 => cuStreamGetFlags, @ptds 7000 => cuStreamGetFlags_ptsz;
        "cuStreamGetCtx": 9020 => cuStreamGetCtx, 12050 => cuStreamGetCtx_v2,
                @ptds 9020 => cuStreamGetCtx_ptsz, @ptds 12050 => cuStreamGetCtx_v2_ptsz;
        "cuStreamWaitEvent": 3020 => cuStreamWaitEvent, @ptds 7000 => cuStreamWaitEvent_ptsz;
        "cuStreamQuery": 2000 => cuStreamQuery, @ptds 7000 => cuStreamQuery_ptsz;
        "cuStreamIsCapturing": 10000 => cuStreamIsCapturing, @ptds 10000 => cuStreamIsCapturing_ptsz;
        "cuStreamSynchronize": 2000 => cuStreamSynchronize, @ptds 7000 => cuStreamSynchronize_ptsz;
        "cuStreamDestroy": 2000 => cuStreamDestroy, 4000 => cuStreamDestroy_v2;
        "cuLaunchHostFunc": 10000 => cuLaunchHostFunc, @ptds 10000 => cuLaunchHostFunc_ptsz;
        "cuStreamAddCallback": 5000 => cuStreamAddCallback, @ptds 7000 => cuStreamAddCallback_ptsz;
        "cuEventCreate": 2000 => cuEventCreate;
        "cuEventRecord": 2000 => cuEventRecord, @ptds 7000 => cuEventRecord_ptsz;
        "cuEventRecordWithFlags": 11010 => cuEventRecordWithFlags, @ptds 11010 => cuEventRecordWithFlags_ptsz;
        "cuEventQuery": 2000 => cuEventQuery;
        "cuEventSynchronize": 2000 => cuEventSynchronize;
        "cuEventDestroy": 2000 => cuEventDestroy, 4000 => cuEventDestroy_v2;
        "cuEventElapsedTime": 2000 => cuEventElapsedTime, 12080 => cuEventElapsedTime_v2;
    }
}
