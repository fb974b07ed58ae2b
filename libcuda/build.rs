//! Gives the cdylib the soname of NVIDIA's driver library, so programs linked
//! against it record `libcuda.so.1` as their dependency, exactly as with the
//! real driver.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuda.so.1");
    println!("cargo:rerun-if-changed=build.rs");
}
