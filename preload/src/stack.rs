//! The CPU call stack at a launch: captured as raw instruction pointers on
//! the application's thread (no lock, no allocation beyond one small Vec),
//! symbolised to `function (file:line)` later on the writer thread, with a
//! cache per address so a launch site is resolved once per process.

use prlx_session::StackFrame;
use std::collections::HashMap;
use std::ffi::c_void;

/// Frames kept per launch.
const MAX_FRAMES: usize = 48;

/// Instruction pointers, innermost first.
pub struct RawStack(Vec<usize>);

/// Walks the calling thread's stack.
pub fn capture() -> RawStack {
    let mut ips = Vec::with_capacity(MAX_FRAMES);
    // SAFETY: unsynchronised unwinding is safe on Linux (the unwinder is
    // thread-safe); the crate's lock only guards Windows' dbghelp. Taking it
    // would make the application thread wait on the writer's symbolisation.
    unsafe {
        backtrace::trace_unsynchronized(|frame| {
            ips.push(frame.ip() as usize);
            ips.len() < MAX_FRAMES
        });
    }
    RawStack(ips)
}

/// Resolves raw stacks, remembering every address it has seen.
pub struct Symbolizer {
    own_base: usize,
    cache: HashMap<usize, Option<StackFrame>>,
}

impl Default for Symbolizer {
    fn default() -> Symbolizer {
        Symbolizer {
            own_base: own_module_base(),
            cache: HashMap::new(),
        }
    }
}

impl Symbolizer {
    /// The application's frames of `stack` (the shim's own dropped), at most 32.
    pub fn resolve(&mut self, stack: &RawStack) -> Vec<StackFrame> {
        let own_base = self.own_base;
        stack
            .0
            .iter()
            .filter(|&&ip| ip != 0) // the unwinder's end marker
            .filter_map(|&ip| {
                self.cache
                    .entry(ip)
                    .or_insert_with(|| symbolize(ip, own_base))
                    .clone()
            })
            .take(32)
            .collect()
    }
}

/// One frame, or None for a frame of libprlx itself.
fn symbolize(ip: usize, own_base: usize) -> Option<StackFrame> {
    if own_base != 0 && module_base(ip as *mut c_void) == own_base {
        return None;
    }
    let mut frame = StackFrame {
        ip: format!("{ip:#x}"),
        ..StackFrame::default()
    };
    let mut first = true;
    backtrace::resolve(ip as *mut c_void, |symbol| {
        if std::mem::take(&mut first) {
            frame.function = symbol.name().map(|n| n.to_string());
            frame.file = symbol.filename().map(|f| f.display().to_string());
            frame.line = symbol.lineno();
        }
    });
    Some(frame)
}

/// The load address of the object containing `address` (0 if none).
fn module_base(address: *mut c_void) -> usize {
    // SAFETY: dladdr only reads the address and fills `info`.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let found = unsafe { libc::dladdr(address, &mut info) };
    if found != 0 {
        info.dli_fbase as usize
    } else {
        0
    }
}

/// The load address of libprlx itself, to drop its frames from call stacks.
fn own_module_base() -> usize {
    module_base(own_module_base as *mut c_void)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn a_named_caller() -> RawStack {
        capture()
    }

    #[test]
    fn resolves_the_callers_and_caches_them() {
        let raw = a_named_caller();
        // In the test binary the crate is linked into the executable, so
        // "the shim's own frames" would be all of them: no filter here.
        let mut symbolizer = Symbolizer {
            own_base: 0,
            cache: HashMap::new(),
        };
        let frames = symbolizer.resolve(&raw);
        assert!(
            frames.iter().any(|f| f
                .function
                .as_deref()
                .is_some_and(|n| n.contains("a_named_caller"))),
            "{frames:#?}"
        );
        let cached = symbolizer.cache.len();
        assert_eq!(symbolizer.resolve(&raw), frames);
        assert_eq!(
            symbolizer.cache.len(),
            cached,
            "second resolution is all cache hits"
        );
    }
}
