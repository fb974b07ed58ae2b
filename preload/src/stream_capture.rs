//! Streams being captured into CUDA graphs.
//!
//! A kernel launched on a stream that is being captured does not run: it
//! becomes a node of a graph (recorded when that graph is launched,
//! `graphs`). Captures are tracked (`cuStreamBeginCapture*` /
//! `cuStreamEndCapture` wrapped in `graph_hooks`, and `cuStreamIsCapturing`
//! asked per launch). While any stream captures, the shim issues no driver
//! call that capture forbids — no allocation, copy or synchronisation (in
//! the global capture mode they are illegal from *any* thread and would
//! invalidate the application's capture).

use crate::config::LogLevel;
use crate::driver;
use crate::ffi::*;
use crate::log;
use std::collections::HashSet;
use std::ffi::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// `CU_STREAM_CAPTURE_STATUS_NONE`.
const CAPTURE_NONE: c_int = 0;

/// Streams between a successful begin and the matching end of capture.
static CAPTURING: Mutex<Option<HashSet<usize>>> = Mutex::new(None);
/// The number of capturing streams, readable without the lock on every launch.
static CAPTURES: AtomicUsize = AtomicUsize::new(0);

fn capturing() -> MutexGuard<'static, Option<HashSet<usize>>> {
    CAPTURING.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether some stream is capturing: the shim must not allocate, copy or
/// synchronise (only metadata may be recorded).
pub fn any_capture_in_progress() -> bool {
    CAPTURES.load(Ordering::Relaxed) > 0
}

/// Whether a launch on `stream` is being captured into a graph rather than
/// run. Asks the driver when it can (captures begun through a road the
/// shim did not see count too); an error answer (the legacy stream while
/// another stream captures) counts as capturing.
pub(crate) fn stream_is_capturing(stream: CUstream) -> bool {
    if let Some(is_capturing) = driver::cuda().cuStreamIsCapturing {
        let mut status: c_int = CAPTURE_NONE;
        // SAFETY: the application's stream handle; an out-pointer to a local.
        let result = unsafe { is_capturing(stream, &mut status) };
        return result != CUDA_SUCCESS || status != CAPTURE_NONE;
    }
    any_capture_in_progress()
        && capturing()
            .as_ref()
            .is_some_and(|s| s.contains(&(stream as usize)))
}

/// Called for a launch on a capturing stream: said once.
pub fn note_captured_launch(kernel: &str) {
    log::once(
        LogLevel::Info,
        "stream-capture",
        &format!(
            "{kernel} was launched on a stream being captured into a CUDA graph: it is recorded (metadata only) each time the graph is launched"
        ),
    );
}

/// A capture of `stream` began.
pub fn began(stream: CUstream) {
    let mut set = capturing();
    let set = set.get_or_insert_with(HashSet::new);
    set.insert(stream as usize);
    CAPTURES.store(set.len(), Ordering::Relaxed);
}

/// The capture of `stream` ended (an invalidated capture ends with an error too).
pub fn ended(stream: CUstream) {
    let mut set = capturing();
    let set = set.get_or_insert_with(HashSet::new);
    set.remove(&(stream as usize));
    CAPTURES.store(set.len(), Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_are_counted_per_stream() {
        let s = 0x5150 as CUstream;
        began(s);
        began(s);
        assert!(any_capture_in_progress());
        ended(s);
        assert!(!capturing().as_ref().unwrap().contains(&(s as usize)));
    }
}
