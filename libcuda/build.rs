//! Gives the cdylib the soname of NVIDIA's driver library, so programs linked
//! against it record `libcuda.so.1` as their dependency, exactly as with the
//! real driver.
//!
//! `-Bsymbolic-functions` binds the library's references to its own entry
//! points (the function pointers `cuGetProcAddress` hands out, internal
//! calls between `_v2` forms) to its own definitions, as a vendor driver's
//! are: an interposer such as `LD_PRELOAD=libprlx.so` then wraps what the
//! application calls, never the driver's internals.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuda.so.1");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic-functions");
    println!("cargo:rerun-if-changed=build.rs");
}
