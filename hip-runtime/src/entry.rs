//! The boundary every exported function crosses: panics become
//! `hipErrorUnknown`, `Result`s become `hipError_t`s and each failure is
//! remembered for `hipGetLastError`, and caller pointers are checked before
//! they are touched.
//!
//! `hipGetLastError` follows the CUDA (and HIP 6) contract: it returns the
//! last *error* of the calling thread and resets it to `hipSuccess`. HIP 5.2
//! itself overwrote it with every call's result, success included, which
//! hides a failed launch behind the `hipDeviceSynchronize` after it.

use crate::abi::*;
use prlx_ffi_guard::ErrorCodes;
use std::cell::Cell;
use std::ffi::CStr;

/// `hipError_t`'s codes for the shared boundary helpers (`prlx-ffi-guard`).
pub enum Hip {}

impl ErrorCodes for Hip {
    type Code = hipError_t;
    const SUCCESS: hipError_t = hipSuccess;
    const INVALID_VALUE: hipError_t = hipErrorInvalidValue;
    const PANICKED: hipError_t = hipErrorUnknown;
}

// `write_out`, `write_optional`, `non_null` and `c_str`, returning `hipError_t`.
prlx_ffi_guard::boundary!(Hip);

thread_local! {
    static LAST_ERROR: Cell<hipError_t> = const { Cell::new(hipSuccess) };
}

/// Records `code` as the thread's last error unless it is `hipSuccess`.
pub fn record(code: hipError_t) -> hipError_t {
    if code != hipSuccess {
        LAST_ERROR.with(|e| e.set(code));
    }
    code
}

/// The thread's last error, reset to `hipSuccess` when `reset`.
pub fn last_error(reset: bool) -> hipError_t {
    LAST_ERROR.with(|e| {
        if reset {
            e.replace(hipSuccess)
        } else {
            e.get()
        }
    })
}

/// Runs an exported function's body; nothing unwinds into C.
pub fn guard(body: impl FnOnce() -> Result<(), hipError_t>) -> hipError_t {
    record(prlx_ffi_guard::guard::<Hip>(body))
}

/// The name of an error code (`hipErrorUnknown` for values HIP 5.2 lacks).
pub fn error_name(code: hipError_t) -> &'static CStr {
    ERROR_NAMES
        .iter()
        .find(|(value, _)| *value == code)
        .map_or(c"hipErrorUnknown", |(_, name)| name)
}

/// Declares exported HIP functions: `#[no_mangle] extern "C"`, the body run
/// through [`guard`]. Bodies evaluate to `Result<(), hipError_t>`.
macro_rules! exports {
    ($(
        $(#[$meta:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block
    )*) => {$(
        $(#[$meta])*
        ///
        /// # Safety
        /// Pointer arguments must be valid as `hip_runtime_api.h` documents for this call.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $crate::abi::hipError_t {
            $crate::entry::guard(|| $body)
        }
    )*};
}
pub(crate) use exports;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_error_keeps_the_error_until_read() {
        assert_eq!(guard(|| Err(hipErrorInvalidValue)), hipErrorInvalidValue);
        assert_eq!(guard(|| Ok(())), hipSuccess);
        assert_eq!(last_error(false), hipErrorInvalidValue);
        assert_eq!(last_error(true), hipErrorInvalidValue);
        assert_eq!(last_error(true), hipSuccess);
    }

    #[test]
    fn panics_become_unknown() {
        assert_eq!(guard(|| panic!("boom")), hipErrorUnknown);
        last_error(true);
    }

    #[test]
    fn names_match_hip_5_2() {
        assert_eq!(error_name(hipErrorOutOfMemory), c"hipErrorOutOfMemory");
        assert_eq!(error_name(hipErrorInvalidHandle), c"hipErrorInvalidHandle");
        assert_eq!(error_name(12345), c"hipErrorUnknown");
        assert_eq!(error_name(hipSuccess), c"hipSuccess");
    }
}
