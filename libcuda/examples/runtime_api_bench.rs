//! The runtime-API benchmark (docs/emulator-benchmark.md): builds
//! `runtime_api_matmul.cu` with nvcc 13 (PTX only, static cudart, `-O3`)
//! and runs it on this profile's `libcuda.so.1`, which prints its own
//! figures (the kernel through cudart against the same algorithm on the
//! CPU, in one process).
//!
//! `cargo run --release -p prlx-libcuda --example runtime_api_bench [n] [reps]`

use prlx_tests::{Nvcc13, link_libcuda_soname, run_ok};
use std::process::Command;

fn main() {
    let Some(nvcc) = Nvcc13::find() else {
        std::process::exit(2)
    };
    // target/<profile>/examples/<this> → target/<profile>; an example links
    // the rlib only, so build the cdylib there too.
    let exe_path = std::env::current_exe().expect("current_exe");
    let lib_dir = exe_path
        .parent()
        .and_then(|p| p.parent())
        .expect("target/<profile>");
    let mut build = Command::new(env!("CARGO"));
    build
        .args(["build", "-q", "-p", "prlx-libcuda"])
        .env("CARGO_TARGET_DIR", lib_dir.parent().expect("target dir"));
    if lib_dir.ends_with("release") {
        build.arg("--release");
    }
    run_ok(&mut build);
    link_libcuda_soname(lib_dir);
    let scratch = tempfile::tempdir().expect("scratch");
    let exe = scratch.path().join("runtime_api_matmul");
    let source =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/runtime_api_matmul.cu");
    run_ok(
        Command::new(&nvcc.nvcc)
            .args(["-O3", "-gencode", "arch=compute_80,code=compute_80"])
            .arg(&source)
            .arg("-o")
            .arg(&exe),
    );
    let args: Vec<String> = std::env::args().skip(1).collect();
    let start = std::time::Instant::now();
    let out = run_ok(
        Command::new(&exe)
            .args(&args)
            .env("LD_LIBRARY_PATH", lib_dir),
    );
    let total = start.elapsed();
    print!("{}", String::from_utf8_lossy(&out.stdout));
    println!(
        "whole process (exec to exit, CPU reference included) {:.0} ms",
        total.as_secs_f64() * 1e3
    );
}
