//! Streams and events. Work runs inside the call that enqueues it, so every
//! stream is idle whenever the program looks: synchronising returns the
//! sticky kernel fault (if any), waiting on an event has nothing to wait
//! for, and a host callback runs at once. An event's time is the host clock
//! when it was recorded, so `hipEventElapsedTime` measures the emulator.

use crate::abi::*;
use crate::entry::{exports, write_out};
use crate::runtime::{Event, Stream, runtime};
use std::ffi::{c_int, c_uint, c_void};
use std::time::Instant;

/// `hipEventDisableTiming`.
const EVENT_DISABLE_TIMING: u32 = 0x2;
/// Every `hipEvent*` flag HIP 5.2 defines (default, blocking sync, disable
/// timing, interprocess, release-to-device/system).
const EVENT_FLAGS: u32 = 0x1 | 0x2 | 0x4 | 0x4000_0000 | 0x8000_0000;

/// `hipStreamCallback_t`.
pub type StreamCallback = Option<unsafe extern "C" fn(hipStream_t, hipError_t, *mut c_void)>;

fn create_stream(stream: *mut hipStream_t, flags: u32, priority: i32) -> Result<(), hipError_t> {
    if flags > 1 {
        return Err(hipErrorInvalidValue);
    }
    crate::entry::non_null(stream)?;
    let mut rt = runtime();
    let handle = rt.handle();
    // Priorities clamp to [greatest = -1, least = 0], as hipDeviceGetStreamPriorityRange says.
    rt.streams.insert(
        handle,
        Stream {
            flags,
            priority: priority.clamp(-1, 0),
        },
    );
    // SAFETY: checked non-null.
    unsafe { write_out(stream, handle as hipStream_t) }
}

fn stream_info(stream: hipStream_t) -> Result<Stream, hipError_t> {
    let rt = runtime();
    rt.check_stream(stream)?;
    Ok(rt.streams.get(&(stream as u64)).copied().unwrap_or(Stream {
        flags: 0,
        priority: 0,
    }))
}

fn create_event(event: *mut hipEvent_t, flags: u32) -> Result<(), hipError_t> {
    if flags & !EVENT_FLAGS != 0 {
        return Err(hipErrorInvalidValue);
    }
    crate::entry::non_null(event)?;
    let mut rt = runtime();
    let handle = rt.handle();
    rt.events.insert(
        handle,
        Event {
            flags,
            recorded: None,
        },
    );
    // SAFETY: checked non-null.
    unsafe { write_out(event, handle as hipEvent_t) }
}

fn record(event: hipEvent_t, stream: hipStream_t) -> Result<(), hipError_t> {
    let mut rt = runtime();
    rt.check_stream(stream)?;
    let e = rt
        .events
        .get_mut(&(event as u64))
        .ok_or(hipErrorInvalidHandle)?;
    e.recorded = Some(Instant::now());
    Ok(())
}

/// Records `event` on the null stream unless it is NULL (`hipExtLaunchKernel`).
pub fn record_optional(event: hipEvent_t) -> Result<(), hipError_t> {
    if event.is_null() {
        Ok(())
    } else {
        record(event, std::ptr::null_mut())
    }
}

exports! {
    fn hipStreamCreate(stream: *mut hipStream_t) {
        create_stream(stream, 0, 0)
    }

    fn hipStreamCreateWithFlags(stream: *mut hipStream_t, flags: c_uint) {
        create_stream(stream, flags, 0)
    }

    fn hipStreamCreateWithPriority(stream: *mut hipStream_t, flags: c_uint, priority: c_int) {
        create_stream(stream, flags, priority)
    }

    fn hipStreamDestroy(stream: hipStream_t) {
        runtime().streams.remove(&(stream as u64)).map(|_| ()).ok_or(hipErrorInvalidHandle)
    }

    fn hipStreamSynchronize(stream: hipStream_t) {
        let rt = runtime();
        rt.check_stream(stream)?;
        rt.healthy()
    }

    /// Always complete (`hipSuccess`), or the sticky fault.
    fn hipStreamQuery(stream: hipStream_t) {
        let rt = runtime();
        rt.check_stream(stream)?;
        rt.healthy()
    }

    fn hipStreamWaitEvent(stream: hipStream_t, event: hipEvent_t, flags: c_uint) {
        if flags != 0 {
            return Err(hipErrorInvalidValue);
        }
        let rt = runtime();
        rt.check_stream(stream)?;
        rt.events.get(&(event as u64)).map(|_| ()).ok_or(hipErrorInvalidHandle)
    }

    fn hipStreamGetFlags(stream: hipStream_t, flags: *mut c_uint) {
        let info = stream_info(stream)?;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(flags, info.flags) }
    }

    fn hipStreamGetPriority(stream: hipStream_t, priority: *mut c_int) {
        let info = stream_info(stream)?;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(priority, info.priority) }
    }

    /// The stream is idle, so the callback runs now, on this thread.
    fn hipStreamAddCallback(stream: hipStream_t, callback: StreamCallback, user_data: *mut c_void, flags: c_uint) {
        if flags != 0 {
            return Err(hipErrorInvalidValue);
        }
        let callback = callback.ok_or(hipErrorInvalidValue)?;
        let status = {
            let rt = runtime();
            rt.check_stream(stream)?;
            rt.sticky.unwrap_or(hipSuccess)
        };
        // SAFETY: the program's callback, called as HIP documents; the
        // runtime lock is released so it may call HIP itself.
        unsafe { callback(stream, status, user_data) };
        Ok(())
    }

    fn hipEventCreate(event: *mut hipEvent_t) {
        create_event(event, 0)
    }

    fn hipEventCreateWithFlags(event: *mut hipEvent_t, flags: c_uint) {
        create_event(event, flags)
    }

    fn hipEventRecord(event: hipEvent_t, stream: hipStream_t) {
        record(event, stream)
    }

    fn hipEventDestroy(event: hipEvent_t) {
        runtime().events.remove(&(event as u64)).map(|_| ()).ok_or(hipErrorInvalidHandle)
    }

    fn hipEventSynchronize(event: hipEvent_t) {
        let rt = runtime();
        rt.events.get(&(event as u64)).ok_or(hipErrorInvalidHandle)?;
        rt.healthy()
    }

    fn hipEventQuery(event: hipEvent_t) {
        let rt = runtime();
        rt.events.get(&(event as u64)).map(|_| ()).ok_or(hipErrorInvalidHandle)
    }

    fn hipEventElapsedTime(ms: *mut f32, start: hipEvent_t, stop: hipEvent_t) {
        crate::entry::non_null(ms)?;
        let rt = runtime();
        let a = rt.events.get(&(start as u64)).ok_or(hipErrorInvalidHandle)?;
        let b = rt.events.get(&(stop as u64)).ok_or(hipErrorInvalidHandle)?;
        if (a.flags | b.flags) & EVENT_DISABLE_TIMING != 0 {
            return Err(hipErrorInvalidHandle);
        }
        let (Some(t0), Some(t1)) = (a.recorded, b.recorded) else {
            return Err(hipErrorNotReady);
        };
        let elapsed = if t1 >= t0 {
            t1.duration_since(t0).as_secs_f64()
        } else {
            -t0.duration_since(t1).as_secs_f64()
        };
        // SAFETY: checked non-null.
        unsafe { write_out(ms, (elapsed * 1e3) as f32) }
    }
}
