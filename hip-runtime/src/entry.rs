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
use std::cell::Cell;
use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

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
    record(match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => hipSuccess,
        Ok(Err(code)) => code,
        Err(_) => hipErrorUnknown,
    })
}

/// Writes `value` through a caller's out-pointer; NULL is `hipErrorInvalidValue`.
///
/// # Safety
/// `ptr` must be NULL or valid for a write of `T`, as the C API requires.
pub unsafe fn write_out<T>(ptr: *mut T, value: T) -> Result<(), hipError_t> {
    if ptr.is_null() {
        return Err(hipErrorInvalidValue);
    }
    // SAFETY: non-null, and the caller guarantees it points to a `T`.
    unsafe { ptr.write_unaligned(value) };
    Ok(())
}

/// Fails with `hipErrorInvalidValue` when `ptr` is NULL.
pub fn non_null<T>(ptr: *const T) -> Result<(), hipError_t> {
    if ptr.is_null() {
        Err(hipErrorInvalidValue)
    } else {
        Ok(())
    }
}

/// Reads a C string argument; NULL or non-UTF-8 is `hipErrorInvalidValue`.
///
/// # Safety
/// `ptr` must be NULL or point to a NUL-terminated string.
pub unsafe fn c_str<'a>(ptr: *const c_char) -> Result<&'a str, hipError_t> {
    non_null(ptr)?;
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    unsafe { CStr::from_ptr(ptr) }
        .to_str()
        .map_err(|_| hipErrorInvalidValue)
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
