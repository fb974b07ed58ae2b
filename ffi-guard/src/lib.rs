//! The boundary every exported function of prlx's emulated drivers
//! (`libcuda.so.1` in `libcuda/`, `libamdhip64.so.5` in `hip-runtime/`)
//! crosses, written once for both.
//!
//! The helpers are generic over the C API's error-code type through
//! [`ErrorCodes`]: a driver names its success, invalid-value and
//! panic codes once (`CUDA_SUCCESS`, `CUDA_ERROR_INVALID_VALUE`,
//! `CUDA_ERROR_UNKNOWN` for CUDA; the `hipError_t` ones for HIP) and
//! [`boundary!`] gives it `write_out`, `write_optional`, `non_null` and
//! `c_str` that return its own code type, so call sites read as plain
//! functions.
//!
//! - [`guard`] runs an exported function's body: `Ok` becomes the success
//!   code, `Err(code)` the code, and a panic the panic code; nothing unwinds
//!   into C.
//! - [`write_out`] writes through a caller's out-pointer, NULL being an
//!   invalid value; [`write_optional`] skips a NULL one.
//! - [`non_null`] and [`c_str`] check input pointers.

use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The error codes of one C API. Implemented by a marker type of the
/// driver (the code types themselves are plain integers, shared by
/// several APIs).
pub trait ErrorCodes {
    /// The C API's result type (`CUresult`, `hipError_t`).
    type Code: Copy;
    /// What a body that returned `Ok(())` reports.
    const SUCCESS: Self::Code;
    /// A NULL pointer where one is required, or a string that is not UTF-8.
    const INVALID_VALUE: Self::Code;
    /// What a body that panicked reports.
    const PANICKED: Self::Code;
}

/// Runs an exported function's body; nothing unwinds into C.
pub fn guard<E: ErrorCodes>(body: impl FnOnce() -> Result<(), E::Code>) -> E::Code {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => E::SUCCESS,
        Ok(Err(code)) => code,
        Err(_) => E::PANICKED,
    }
}

/// Writes `value` through a caller's out-pointer; NULL is
/// [`ErrorCodes::INVALID_VALUE`]. The pointer need not be aligned (C
/// callers pass pointers into packed structs and byte buffers).
///
/// # Safety
/// `ptr` must be NULL or valid for a write of `T`, as the C API requires.
pub unsafe fn write_out<E: ErrorCodes, T>(ptr: *mut T, value: T) -> Result<(), E::Code> {
    non_null::<E, T>(ptr)?;
    // SAFETY: non-null (checked above), and the caller guarantees a non-null
    // `ptr` is valid for a write of `T`; `write_unaligned` needs no alignment.
    unsafe { ptr.write_unaligned(value) };
    Ok(())
}

/// Like [`write_out`], but a NULL pointer means "not wanted".
///
/// # Safety
/// As for [`write_out`].
pub unsafe fn write_optional<T>(ptr: *mut T, value: T) {
    if !ptr.is_null() {
        // SAFETY: non-null, so valid for a write of `T` by the caller's
        // contract; `write_unaligned` needs no alignment.
        unsafe { ptr.write_unaligned(value) };
    }
}

/// Fails with [`ErrorCodes::INVALID_VALUE`] when `ptr` is NULL.
pub fn non_null<E: ErrorCodes, T>(ptr: *const T) -> Result<(), E::Code> {
    if ptr.is_null() {
        Err(E::INVALID_VALUE)
    } else {
        Ok(())
    }
}

/// Reads a C string argument; NULL or non-UTF-8 is
/// [`ErrorCodes::INVALID_VALUE`].
///
/// # Safety
/// `ptr` must be NULL or point to a NUL-terminated string that outlives `'a`.
pub unsafe fn c_str<'a, E: ErrorCodes>(ptr: *const c_char) -> Result<&'a str, E::Code> {
    non_null::<E, c_char>(ptr)?;
    // SAFETY: non-null (checked above), and the caller guarantees it is
    // NUL-terminated and lives for `'a`.
    unsafe { CStr::from_ptr(ptr) }
        .to_str()
        .map_err(|_| E::INVALID_VALUE)
}

/// Defines, in the invoking module, the pointer helpers for the C API whose
/// codes `$codes` (an [`ErrorCodes`] implementation) names:
/// `write_out`, `write_optional`, `non_null` and `c_str`, returning
/// `$codes`'s code type. Each forwards to the generic function of this
/// crate with the same name.
#[macro_export]
macro_rules! boundary {
    ($codes:ty) => {
        /// Writes `value` through a caller's out-pointer; NULL is an
        /// invalid value ([`prlx_ffi_guard::write_out`]).
        ///
        /// # Safety
        /// `ptr` must be NULL or valid for a write of `T`, as the C API
        /// requires.
        pub unsafe fn write_out<T>(
            ptr: *mut T,
            value: T,
        ) -> ::core::result::Result<(), <$codes as $crate::ErrorCodes>::Code> {
            // SAFETY: this function's contract is the callee's.
            unsafe { $crate::write_out::<$codes, T>(ptr, value) }
        }

        /// Like [`write_out`] but a NULL pointer means "not wanted".
        ///
        /// # Safety
        /// As for [`write_out`].
        pub unsafe fn write_optional<T>(ptr: *mut T, value: T) {
            // SAFETY: this function's contract is the callee's.
            unsafe { $crate::write_optional(ptr, value) }
        }

        /// Fails with the invalid-value code when `ptr` is NULL.
        pub fn non_null<T>(
            ptr: *const T,
        ) -> ::core::result::Result<(), <$codes as $crate::ErrorCodes>::Code> {
            $crate::non_null::<$codes, T>(ptr)
        }

        /// Reads a C string argument; NULL or non-UTF-8 is the
        /// invalid-value code.
        ///
        /// # Safety
        /// `ptr` must be NULL or point to a NUL-terminated string that
        /// outlives `'a`.
        pub unsafe fn c_str<'a>(
            ptr: *const ::std::ffi::c_char,
        ) -> ::core::result::Result<&'a str, <$codes as $crate::ErrorCodes>::Code> {
            // SAFETY: this function's contract is the callee's.
            unsafe { $crate::c_str::<$codes>(ptr) }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes that differ from each other and from 0, so a mix-up shows.
    enum Test {}
    impl ErrorCodes for Test {
        type Code = i32;
        const SUCCESS: i32 = 0;
        const INVALID_VALUE: i32 = 11;
        const PANICKED: i32 = 999;
    }

    mod generated {
        crate::boundary!(super::Test);
    }

    #[test]
    fn guard_maps_ok_err_and_panic() {
        assert_eq!(guard::<Test>(|| Ok(())), 0);
        assert_eq!(guard::<Test>(|| Err(42)), 42);
        assert_eq!(guard::<Test>(|| panic!("boom")), 999);
    }

    #[test]
    fn null_out_pointers_are_invalid_values_and_others_are_written_unaligned() {
        // SAFETY: NULL is allowed by the contract.
        let r = unsafe { write_out::<Test, u32>(std::ptr::null_mut(), 1) };
        assert_eq!(r, Err(11));
        let mut bytes = [0u8; 9];
        // An odd address: the write must not assume alignment.
        let p = bytes[1..].as_mut_ptr().cast::<u64>();
        // SAFETY: `p` points at 8 writable bytes inside `bytes`.
        unsafe { write_out::<Test, u64>(p, 0x0102_0304_0506_0708) }.unwrap();
        assert_eq!(bytes[1..], 0x0102_0304_0506_0708u64.to_ne_bytes());
        // SAFETY: NULL is allowed and means "not wanted".
        unsafe { write_optional::<u8>(std::ptr::null_mut(), 3) };
        let mut x = 0u8;
        // SAFETY: a live local.
        unsafe { write_optional(&mut x, 3) };
        assert_eq!(x, 3);
    }

    #[test]
    fn c_strings_must_be_present_and_utf8() {
        // SAFETY: NULL is allowed by the contract.
        assert_eq!(unsafe { c_str::<Test>(std::ptr::null()) }, Err(11));
        // SAFETY: a static NUL-terminated string.
        assert_eq!(unsafe { c_str::<Test>(c"cuInit".as_ptr()) }, Ok("cuInit"));
        // SAFETY: as above.
        assert_eq!(unsafe { c_str::<Test>(c"\xff".as_ptr()) }, Err(11));
        assert_eq!(non_null::<Test, u8>(std::ptr::null()), Err(11));
        assert_eq!(non_null::<Test, u8>(&0), Ok(()));
    }

    #[test]
    fn the_generated_helpers_return_the_api_s_code_type() {
        // SAFETY: NULL is allowed by the contract.
        let r: Result<(), i32> = unsafe { generated::write_out::<u8>(std::ptr::null_mut(), 1) };
        assert_eq!(r, Err(11));
        let mut x = 0u16;
        // SAFETY: a live local.
        unsafe { generated::write_out(&mut x, 7) }.unwrap();
        // SAFETY: as above.
        unsafe { generated::write_optional(&mut x, 8) };
        assert_eq!(x, 8);
        assert_eq!(generated::non_null::<u8>(std::ptr::null()), Err(11));
        // SAFETY: a static NUL-terminated string.
        assert_eq!(unsafe { generated::c_str(c"hip".as_ptr()) }, Ok("hip"));
    }
}
