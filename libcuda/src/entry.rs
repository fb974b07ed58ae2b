//! The boundary every exported function crosses: panics become
//! `CUDA_ERROR_UNKNOWN`, `Result`s become `CUresult`s, and caller pointers are
//! checked before they are touched.

use crate::cu::*;
use prlx_ffi_guard::ErrorCodes;

/// `CUresult`'s codes for the shared boundary helpers (`prlx-ffi-guard`).
pub enum Cuda {}

impl ErrorCodes for Cuda {
    type Code = CUresult;
    const SUCCESS: CUresult = CUDA_SUCCESS;
    const INVALID_VALUE: CUresult = CUDA_ERROR_INVALID_VALUE;
    const PANICKED: CUresult = CUDA_ERROR_UNKNOWN;
}

// `write_out`, `write_optional`, `non_null` and `c_str`, returning `CUresult`.
prlx_ffi_guard::boundary!(Cuda);

/// Runs an exported function's body; nothing unwinds into C.
pub fn guard(body: impl FnOnce() -> Result<(), CUresult>) -> CUresult {
    prlx_ffi_guard::guard::<Cuda>(body)
}

/// [`guard`] for an exported function named `name`: with
/// `PRLX_LIBCUDA_TRACE=1`, every error it returns is reported on stderr,
/// which is how to find the call a runtime or library gave up on.
pub fn guard_named(name: &str, body: impl FnOnce() -> Result<(), CUresult>) -> CUresult {
    let result = guard(body);
    if result != CUDA_SUCCESS && trace_enabled() {
        eprintln!(
            "prlx libcuda: {name} -> {}",
            crate::error_table::name_str(result)
        );
    }
    result
}

/// `PRLX_LIBCUDA_TRACE=1`: report failing calls, lookups of functions this
/// library lacks, export-table requests.
pub fn trace_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("PRLX_LIBCUDA_TRACE").is_ok_and(|v| v == "1"))
}

/// One implementation of a driver API function.
#[derive(Debug, Clone, Copy)]
pub struct ProcEntry {
    /// The name callers ask for (`"cuMemAlloc"`).
    pub name: &'static str,
    /// The exported symbol (`"cuMemAlloc_v2"`).
    pub symbol: &'static str,
    /// The CUDA version that introduced this ABI (3020 for 3.2).
    pub version: i32,
    /// A `_ptds`/`_ptsz` (per-thread default stream) variant.
    pub per_thread: bool,
    pub address: usize,
}

/// Builds entries: `"name": version => symbol, ...;` with `ptds` marking
/// per-thread variants.
macro_rules! procs {
    ($( $name:literal : $( $(@$pt:ident)? $ver:literal => $f:ident ),+ ; )*) => {
        vec![$($(
            $crate::entry::ProcEntry {
                name: $name,
                symbol: stringify!($f),
                version: $ver,
                per_thread: $crate::entry::procs!(@pt $($pt)?),
                address: $f as *const () as usize,
            },
        )+)*]
    };
    (@pt ptds) => { true };
    (@pt) => { false };
}
pub(crate) use procs;

/// Declares exported driver-API functions: `#[no_mangle] extern "C"`, the
/// body run through [`guard`]. Bodies evaluate to `Result<(), CUresult>`.
macro_rules! exports {
    ($(
        $(#[$meta:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block
    )*) => {$(
        $(#[$meta])*
        ///
        /// # Safety
        /// Pointer arguments must be valid as `cuda.h` documents for this call.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $crate::cu::CUresult {
            $crate::entry::guard_named(stringify!($name), || $body)
        }
    )*};
}
pub(crate) use exports;

/// Declares exported names that share another export's ABI and behaviour
/// (`cuCtxDestroy` and `cuCtxDestroy_v2`, the `_ptds`/`_ptsz` variants, ...).
macro_rules! aliases {
    ($( $alias:ident = $target:ident($($arg:ident: $ty:ty),* $(,)?); )*) => {$(
        #[doc = concat!("Same as [`", stringify!($target), "`].")]
        ///
        /// # Safety
        /// As for the target.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $alias($($arg: $ty),*) -> $crate::cu::CUresult {
            // In a `_ptsz`/`_ptds` entry point a NULL stream is the calling
            // thread's default stream, not the legacy one.
            let per_thread = $crate::entry::is_per_thread_name(stringify!($alias));
            $( let $arg = $crate::entry::per_thread_arg!($arg, $arg, per_thread); )*
            let _ = per_thread;
            // SAFETY: same contract as the target.
            unsafe { $target($($arg),*) }
        }
    )*};
}
pub(crate) use aliases;

/// Whether an exported name is a per-thread-default-stream variant.
pub const fn is_per_thread_name(name: &str) -> bool {
    let b = name.as_bytes();
    let n = b.len();
    n > 5
        && b[n - 5] == b'_'
        && b[n - 4] == b'p'
        && b[n - 3] == b't'
        && (b[n - 2] == b's' || b[n - 2] == b'd')
        && (b[n - 1] == b'z' || b[n - 1] == b's')
}

/// A stream argument of a per-thread variant: NULL becomes
/// `CU_STREAM_PER_THREAD`, which the rest of the driver (stream capture in
/// particular) tells apart from the legacy stream.
pub fn per_thread_stream(stream: crate::cu::CUstream, per_thread: bool) -> crate::cu::CUstream {
    if per_thread && stream.is_null() {
        crate::cu::CU_STREAM_PER_THREAD as crate::cu::CUstream
    } else {
        stream
    }
}

/// [`aliases`]' argument rewrite: stream arguments (by name) go through
/// [`per_thread_stream`], the rest pass unchanged.
macro_rules! per_thread_arg {
    (h_stream, $e:ident, $pt:ident) => {
        $crate::entry::per_thread_stream($e, $pt)
    };
    (stream, $e:ident, $pt:ident) => {
        $crate::entry::per_thread_stream($e, $pt)
    };
    ($other:ident, $e:ident, $pt:ident) => {
        $e
    };
}
pub(crate) use per_thread_arg;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_thread_variants_map_a_null_stream_to_the_per_thread_stream() {
        assert!(is_per_thread_name("cuLaunchKernel_ptsz") && is_per_thread_name("cuMemcpy_ptds"));
        assert!(!is_per_thread_name("cuLaunchKernel") && !is_per_thread_name("cuMemcpy2D_v2"));
        let null = std::ptr::null_mut();
        assert_eq!(per_thread_stream(null, true) as usize, CU_STREAM_PER_THREAD);
        assert!(per_thread_stream(null, false).is_null());
        let s = 0x1234 as CUstream;
        assert_eq!(per_thread_stream(s, true), s);
    }

    #[test]
    fn panics_become_unknown_errors() {
        let code = guard(|| panic!("boom"));
        assert_eq!(code, CUDA_ERROR_UNKNOWN);
        assert_eq!(guard(|| Ok(())), CUDA_SUCCESS);
        assert_eq!(
            guard(|| Err(CUDA_ERROR_INVALID_HANDLE)),
            CUDA_ERROR_INVALID_HANDLE
        );
    }

    #[test]
    fn null_out_pointers_are_invalid_values() {
        assert_eq!(
            // SAFETY: NULL is allowed: `write_out` refuses it without writing.
            unsafe { write_out(std::ptr::null_mut::<i32>(), 1) },
            Err(CUDA_ERROR_INVALID_VALUE)
        );
        let mut x = 0;
        // SAFETY: `x` is a live local `i32`.
        unsafe { write_out(&mut x, 5) }.unwrap();
        assert_eq!(x, 5);
    }
}
