//! Nothing panics across the C boundary: every hook body runs through
//! [`guarded`] (a panic is logged once and the call passes through), and a
//! recording wrapped around the application's call through [`forward_once`]
//! (the call is made exactly once whatever happens while recording).

use crate::config::LogLevel;
use crate::ffi::{CUDA_SUCCESS, CUresult};
use crate::log;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `body`; a panic inside is logged once and answered with `fallback`.
pub fn guarded<T>(what: &str, fallback: impl FnOnce() -> T, body: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(_) => {
            log::once(
                LogLevel::Error,
                what,
                &format!("internal error in {what}; passing the call through"),
            );
            fallback()
        }
    }
}

/// Runs `record`, which makes the application's call through `run` (at
/// most once), so that `forward` runs exactly once whatever happens: a
/// panic while recording is logged once (naming `what`) and the call still
/// goes through (if `record` had not made it yet), its result returned.
pub fn forward_once<F: FnOnce() -> CUresult>(
    what: &str,
    forward: F,
    record: impl FnOnce(&mut dyn FnMut() -> CUresult),
) -> CUresult {
    let mut forward = Some(forward);
    let mut result: Option<CUresult> = None;
    let recorded = catch_unwind(AssertUnwindSafe(|| {
        let mut run = || -> CUresult {
            let r = forward.take().map_or(CUDA_SUCCESS, |f| f());
            result = Some(r);
            r
        };
        record(&mut run)
    }));
    if recorded.is_err() {
        log::once(
            LogLevel::Error,
            what,
            &format!("internal error while recording {what}; passing the call through"),
        );
    }
    match (result, forward.take()) {
        (Some(result), _) => result,
        (None, Some(forward)) => forward(),
        (None, None) => CUDA_SUCCESS, // unreachable: taking the call sets the result
    }
}
