//! Error log management (`cuLogsRegisterCallback`, `cuLogsUnregisterCallback`,
//! `cuLogsCurrent`, `cuLogsDumpToFile`, `cuLogsDumpToMemory`, CUDA 12.9+).
//!
//! The driver keeps its recent error and warning messages in a bounded
//! buffer (25,600 bytes, the limit `cuda.h` documents; the oldest messages
//! go first) and hands each new one to the registered callbacks. The
//! emulator's messages (the one line a refused function or a refused kernel
//! image writes to stderr) go through [`error`]/[`warning`], so they reach
//! stderr, the buffer and the callbacks alike.
//!
//! An iterator is the sequence number of the next message to read; dumping
//! advances it past what was dumped.

use crate::cu::*;
use crate::entry::{ProcEntry, procs};
use crate::entry::{guard, non_null, write_out};
use std::collections::VecDeque;
use std::ffi::{c_char, c_uint, c_void};
use std::sync::Mutex;

/// `CUlogLevel`.
pub const CU_LOG_LEVEL_ERROR: c_uint = 0;
pub const CU_LOG_LEVEL_WARNING: c_uint = 1;

/// The buffer's capacity in bytes, as `cuLogsDumpToMemory` documents it.
const CAPACITY: usize = 25_600;

/// `CUlogsCallback`.
type Callback = unsafe extern "C" fn(*mut c_void, c_uint, *mut c_char, usize);

struct Registration {
    handle: usize,
    callback: Callback,
    data: usize,
}

#[derive(Default)]
struct Log {
    /// (sequence number, message) of the messages still kept, oldest first.
    messages: VecDeque<(u32, String)>,
    bytes: usize,
    next: u32,
    callbacks: Vec<Registration>,
    next_handle: usize,
}

static LOG: Mutex<Log> = Mutex::new(Log {
    messages: VecDeque::new(),
    bytes: 0,
    next: 0,
    callbacks: Vec::new(),
    next_handle: 0,
});

fn log() -> std::sync::MutexGuard<'static, Log> {
    LOG.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// An error message of the driver: stderr, the log buffer, the callbacks.
pub fn error(message: &str) {
    record(CU_LOG_LEVEL_ERROR, message);
}

/// A warning of the driver, as [`error`].
pub fn warning(message: &str) {
    record(CU_LOG_LEVEL_WARNING, message);
}

fn record(level: c_uint, message: &str) {
    eprintln!("{message}");
    let callbacks: Vec<(Callback, usize)> = {
        let mut log = log();
        let seq = log.next;
        log.next = log.next.wrapping_add(1);
        log.bytes += message.len() + 1;
        log.messages.push_back((seq, message.to_owned()));
        while log.bytes > CAPACITY && log.messages.len() > 1 {
            if let Some((_, old)) = log.messages.pop_front() {
                log.bytes -= old.len() + 1;
            }
        }
        log.callbacks.iter().map(|r| (r.callback, r.data)).collect()
    };
    // Called without the lock: a callback may call back into the driver.
    for (callback, data) in callbacks {
        let mut text: Vec<u8> = message.bytes().chain([0]).collect();
        // SAFETY: the callback was registered by the application for exactly
        // this signature; `text` is a NUL-terminated buffer of `len + 1`
        // bytes that outlives the call.
        unsafe {
            callback(
                data as *mut c_void,
                level,
                text.as_mut_ptr().cast(),
                message.len(),
            )
        };
    }
}

/// The messages from `from` on (all kept ones for `None`), the note that
/// some were lost if older ones were asked for, and the next iterator.
fn since(from: Option<u32>) -> (Vec<String>, u32) {
    let log = log();
    let oldest = log.messages.front().map_or(log.next, |(seq, _)| *seq);
    let start = from.unwrap_or(oldest);
    let mut out = Vec::new();
    if log.next.wrapping_sub(start) > log.next.wrapping_sub(oldest) {
        out.push(format!(
            "[prlx libcuda: {} older log messages were overwritten]",
            oldest.wrapping_sub(start)
        ));
    }
    out.extend(
        log.messages
            .iter()
            .filter(|(seq, _)| log.next.wrapping_sub(*seq) <= log.next.wrapping_sub(start))
            .map(|(_, m)| m.clone()),
    );
    (out, log.next)
}

/// Reads an optional in/out iterator.
///
/// # Safety
/// `iterator` is NULL or points to a `CUlogIterator`.
unsafe fn read_iterator(iterator: *mut c_uint) -> Option<u32> {
    // SAFETY: NULL or a valid `CUlogIterator` by the caller's contract.
    (!iterator.is_null()).then(|| unsafe { iterator.read_unaligned() })
}

/// # Safety
/// `callback_out` is NULL or points to a `CUlogsCallbackHandle`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLogsRegisterCallback(
    callback: Option<Callback>,
    user_data: *mut c_void,
    callback_out: *mut *mut c_void,
) -> CUresult {
    guard(|| {
        let callback = callback.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let mut log = log();
        log.next_handle += 1;
        let handle = log.next_handle;
        log.callbacks.push(Registration {
            handle,
            callback,
            data: user_data as usize,
        });
        if !callback_out.is_null() {
            // SAFETY: non-null, a `CUlogsCallbackHandle` by the contract.
            unsafe { callback_out.write_unaligned(handle as *mut c_void) };
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuLogsUnregisterCallback(callback: *mut c_void) -> CUresult {
    guard(|| {
        let mut log = log();
        let at = log
            .callbacks
            .iter()
            .position(|r| r.handle == callback as usize)
            .ok_or(CUDA_ERROR_INVALID_VALUE)?;
        log.callbacks.remove(at);
        Ok(())
    })
}

/// # Safety
/// `iterator_out` points to a `CUlogIterator`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLogsCurrent(iterator_out: *mut c_uint, flags: c_uint) -> CUresult {
    guard(|| {
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let next = log().next;
        // SAFETY: checked for NULL by write_out; a `CUlogIterator` otherwise.
        unsafe { write_out(iterator_out, next) }
    })
}

/// # Safety
/// `iterator` is NULL or points to a `CUlogIterator`; `path` is a
/// NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLogsDumpToFile(
    iterator: *mut c_uint,
    path: *const c_char,
    flags: c_uint,
) -> CUresult {
    guard(|| {
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        non_null(path)?;
        // SAFETY: non-null and NUL-terminated by the contract.
        let path = unsafe { std::ffi::CStr::from_ptr(path) };
        let path = std::path::Path::new(
            <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(path.to_bytes()),
        );
        // SAFETY: NULL or a `CUlogIterator` by the contract.
        let (messages, next) = since(unsafe { read_iterator(iterator) });
        let mut text = String::new();
        for m in &messages {
            text.push_str(m);
            text.push('\n');
        }
        std::fs::write(path, text).map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
        if !iterator.is_null() {
            // SAFETY: non-null, a `CUlogIterator` by the contract.
            unsafe { iterator.write_unaligned(next) };
        }
        Ok(())
    })
}

/// # Safety
/// `iterator` is NULL or points to a `CUlogIterator`; `buffer` holds
/// `*size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLogsDumpToMemory(
    iterator: *mut c_uint,
    buffer: *mut c_char,
    size: *mut usize,
    flags: c_uint,
) -> CUresult {
    guard(|| {
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        non_null(buffer)?;
        non_null(size)?;
        // SAFETY: non-null, a `size_t` by the contract.
        let capacity = unsafe { size.read_unaligned() };
        // SAFETY: NULL or a `CUlogIterator` by the contract.
        let (messages, next) = since(unsafe { read_iterator(iterator) });
        let text = fit(&messages, capacity).ok_or_else(|| {
            // SAFETY: as above.
            unsafe { size.write_unaligned(0) };
            CUDA_ERROR_INVALID_VALUE
        })?;
        // SAFETY: `text.len() + 1 <= capacity` (see `fit`), and `buffer`
        // holds `capacity` bytes by the contract.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), buffer.cast::<u8>(), text.len());
            buffer.add(text.len()).write(0);
            size.write_unaligned(text.len());
        }
        if !iterator.is_null() {
            // SAFETY: non-null, a `CUlogIterator` by the contract.
            unsafe { iterator.write_unaligned(next) };
        }
        Ok(())
    })
}

/// The messages joined by newlines in `capacity` bytes with the NUL: all of
/// them, or a note that some did not fit followed by as many of the newest
/// as do. `None` when not even one fits; `Some("")` when there are none.
fn fit(messages: &[String], capacity: usize) -> Option<String> {
    let joined = messages.join("\n");
    if joined.len() < capacity {
        return Some(joined);
    }
    let mut kept: Vec<&str> = Vec::new();
    for m in messages.iter().rev() {
        let dropped = messages.len() - kept.len() - 1;
        let note = format!("[prlx libcuda: {dropped} log messages did not fit]");
        let len = note.len() + 1 + m.len() + kept.iter().map(|k| k.len() + 1).sum::<usize>();
        if len >= capacity {
            break;
        }
        kept.push(m);
    }
    if kept.is_empty() {
        return None;
    }
    let dropped = messages.len() - kept.len();
    let mut text = format!("[prlx libcuda: {dropped} log messages did not fit]");
    for m in kept.iter().rev() {
        text.push('\n');
        text.push_str(m);
    }
    Some(text)
}

pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuLogsRegisterCallback": 12090 => cuLogsRegisterCallback;
        "cuLogsUnregisterCallback": 12090 => cuLogsUnregisterCallback;
        "cuLogsCurrent": 12090 => cuLogsCurrent;
        "cuLogsDumpToFile": 12090 => cuLogsDumpToFile;
        "cuLogsDumpToMemory": 12090 => cuLogsDumpToMemory;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_that_do_not_fit_leave_a_note_and_the_newest() {
        let messages: Vec<String> = (0..10).map(|i| format!("message {i}")).collect();
        assert_eq!(fit(&messages, 1000).unwrap(), messages.join("\n"));
        let text = fit(&messages, 70).unwrap();
        assert!(
            text.starts_with("[prlx libcuda: 8 log messages did not fit]\nmessage 8\nmessage 9"),
            "{text}"
        );
        assert!(text.len() < 70);
        assert_eq!(fit(&messages, 5), None);
        assert_eq!(fit(&[], 1).unwrap(), "");
    }
}
