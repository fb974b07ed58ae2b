//! Whose module is being loaded: the application's, or a vendor library's.
//!
//! By default the shim instruments only the modules the application itself
//! loads and leaves vendor libraries' modules (cuBLAS, cuDNN, NCCL,
//! PyTorch's own kernels …) exactly as they are: their launches are still
//! recorded, as metadata, with the reason in the session.
//!
//! The owner of a module is found, in order, from
//! 1. the image's address: a fatbinary that cudart registers (statically
//!    linked into a vendor library, or the shared `libcudart.so` on behalf of
//!    whoever registered it) lies in the `.nv_fatbin` section of the object
//!    that embeds it, and `dladdr` names that object;
//! 2. the loading call's return addresses: the first frame outside the shim,
//!    the driver and the shared CUDA runtime is the code that asked for the
//!    load (a vendor library with cudart linked in statically calls the
//!    driver from inside itself).
//!
//! An image in heap memory loaded from the application's own code belongs to
//! the application.
//!
//! `PRLX_CAPTURE_LIBS` says which libraries' modules are instrumented:
//! `app` (the default: every module but those of [`VENDOR_LIBRARIES`]),
//! `all` (every module), or a comma-separated list of library file-name
//! globs whose modules are instrumented too (`libcublas*,libcudnn*`); `app`
//! may be named in the list.

use crate::config::glob_match;
use std::ffi::{CStr, c_void};

/// Vendor libraries whose modules are left as they are by default, as
/// globs on the library's file name. The one list of them.
pub const VENDOR_LIBRARIES: &[&str] = &[
    "libcublas.so*",
    "libcublasLt.so*",
    "libcudnn*.so*",
    "libcufft.so*",
    "libcufftw.so*",
    "libcusparse.so*",
    "libcusparseLt.so*",
    "libcurand.so*",
    "libcusolver.so*",
    "libcusolverMg.so*",
    "libnccl.so*",
    "libnvshmem*.so*",
    "libcutensor*.so*",
    "libnpp*.so*",
    "libnvjpeg.so*",
    "libnvJitLink.so*",
    "libnvrtc.so*",
    "libnvinfer*.so*",
    "libtorch_cuda*.so*",
    "libc10_cuda.so*",
    "libcaffe2_nvrtc.so*",
    "libflashinfer*.so*",
    "libcupti.so*",
];

/// Libraries that only pass a load on for someone else: the driver itself
/// and the shared CUDA runtime. Their frames are skipped when the caller is
/// looked for.
const RELAYS: &[&str] = &["libcuda.so*", "libcudart.so*", "libamdhip64.so*"];

/// `PRLX_CAPTURE_LIBS`, parsed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CaptureLibs {
    /// `all`: every module is instrumented, vendor or not.
    pub all: bool,
    /// Vendor libraries whose modules are instrumented too.
    pub also: Vec<String>,
}

impl CaptureLibs {
    /// Reads `PRLX_CAPTURE_LIBS` (None: unset); warnings name bad values.
    pub fn parse(value: Option<&str>) -> (CaptureLibs, Vec<String>) {
        let mut libs = CaptureLibs::default();
        let mut warnings = Vec::new();
        for item in value.unwrap_or("").split(',').map(str::trim) {
            match item {
                "" | "app" => {}
                "all" => libs.all = true,
                glob if glob.contains('/') => warnings.push(format!(
                    "PRLX_CAPTURE_LIBS: {glob:?} is a path; name a library file (glob), e.g. libcublas*"
                )),
                glob => libs.also.push(glob.to_owned()),
            }
        }
        (libs, warnings)
    }

    /// Why a module of `library` (a path) is left as it is, or None when it
    /// is instrumented.
    pub fn skip_reason(&self, library: &str) -> Option<String> {
        if self.all {
            return None;
        }
        let name = file_name(library);
        let vendor = VENDOR_LIBRARIES.iter().any(|g| glob_match(g, name));
        if !vendor || self.also.iter().any(|g| glob_match(g, name)) {
            return None;
        }
        Some(format!(
            "it belongs to {name}, a vendor library whose modules are left as they are \
             (PRLX_CAPTURE_LIBS=app; set PRLX_CAPTURE_LIBS={}* or all to instrument them)",
            name.split(".so").next().unwrap_or(name)
        ))
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn is_relay(path: &str) -> bool {
    let name = file_name(path);
    RELAYS.iter().any(|g| glob_match(g, name))
}

/// The object `address` lies in: its base and path (None for heap, stack
/// or anonymous memory).
fn object_of(address: usize) -> Option<(usize, String)> {
    // SAFETY: dladdr only reads the address and fills `info`.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if address == 0 || unsafe { libc::dladdr(address as *const c_void, &mut info) } == 0 {
        return None;
    }
    let path = if info.dli_fname.is_null() {
        String::new()
    } else {
        // SAFETY: non-null, NUL-terminated, owned by the dynamic linker.
        unsafe { CStr::from_ptr(info.dli_fname) }
            .to_string_lossy()
            .into_owned()
    };
    Some((info.dli_fbase as usize, path))
}

fn own_base() -> usize {
    static BASE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BASE.get_or_init(|| object_of(own_base as *const () as usize).map_or(0, |(base, _)| base))
}

/// The library a module image comes from, as a path: the object holding
/// the image, else the first caller outside the shim, the driver and the
/// CUDA runtime. None when neither is a library (the application's heap
/// and code: the main program's path is returned as is).
pub fn owner(image: *const c_void) -> Option<String> {
    let own = own_base();
    if let Some((base, path)) = object_of(image as usize) {
        if base != own && !path.is_empty() && !is_relay(&path) {
            return Some(path);
        }
    }
    let mut found = None;
    let mut frames = 0;
    // SAFETY: unsynchronised unwinding is safe on Linux (the unwinder is
    // thread-safe; the crate's lock only guards Windows' dbghelp).
    unsafe {
        backtrace::trace_unsynchronized(|frame| {
            frames += 1;
            if let Some((base, path)) = object_of(frame.ip() as usize) {
                if base != own && !is_relay(&path) {
                    found = Some(path);
                    return false;
                }
            }
            frames < 64
        });
    }
    found
}

/// Why the module at `image` is left as it is, by `libs`; None when it is
/// the application's, or a library `libs` asks for.
pub fn skip_reason(libs: &CaptureLibs, image: *const c_void) -> Option<String> {
    if libs.all {
        return None;
    }
    libs.skip_reason(&owner(image)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_libs_syntax() {
        let (libs, w) = CaptureLibs::parse(None);
        assert_eq!(libs, CaptureLibs::default());
        assert!(w.is_empty());
        let (libs, w) = CaptureLibs::parse(Some("app, libcublas*"));
        assert!(!libs.all && libs.also == ["libcublas*"] && w.is_empty());
        let (libs, _) = CaptureLibs::parse(Some("all"));
        assert!(libs.all);
        let (_, w) = CaptureLibs::parse(Some("/usr/lib/libcublas.so"));
        assert_eq!(w.len(), 1, "{w:?}");
    }

    #[test]
    fn vendor_modules_are_left_alone_unless_asked_for() {
        let (app, _) = CaptureLibs::parse(None);
        let cublas = "/venv/site-packages/nvidia/cu13/lib/libcublas.so.13";
        let why = app.skip_reason(cublas).expect("cuBLAS is a vendor library");
        assert!(why.contains("libcublas.so.13"), "{why}");
        for vendor in [
            "/x/libcublasLt.so.12",
            "libcudnn_engines_precompiled.so.9",
            "/t/lib/libtorch_cuda.so",
            "/t/lib/libc10_cuda.so",
            "libnccl.so.2",
            "libcufft.so.11",
            "libcusparse.so.12",
            "libcurand.so.10",
            "libcusolver.so.11",
        ] {
            assert!(app.skip_reason(vendor).is_some(), "{vendor}");
        }
        for own in [
            "/home/u/app",
            "/home/u/libmykernels.so",
            "/x/libcudart_like.so",
        ] {
            assert_eq!(app.skip_reason(own), None, "{own}");
        }
        let (also, _) = CaptureLibs::parse(Some("libcublas.*"));
        assert_eq!(also.skip_reason(cublas), None);
        assert!(also.skip_reason("/x/libcublasLt.so.13").is_some());
        let (all, _) = CaptureLibs::parse(Some("all"));
        assert_eq!(all.skip_reason("/x/libnccl.so.2"), None);
    }

    #[test]
    fn heap_images_belong_to_the_caller_and_library_images_to_their_library() {
        let heap = Box::new([0u8; 64]);
        // The caller of this test is the test binary (not a vendor library).
        let owner_of_heap = owner(heap.as_ptr() as *const c_void);
        let (app, _) = CaptureLibs::parse(None);
        assert_eq!(
            owner_of_heap.as_deref().and_then(|o| app.skip_reason(o)),
            None
        );
        // An address inside libc is owned by libc.
        let in_libc = libc::strlen as *const c_void;
        let libc_path = owner(in_libc).expect("libc is a loaded object");
        assert!(file_name(&libc_path).starts_with("libc"), "{libc_path}");
    }
}
