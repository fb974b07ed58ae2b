//! What the shim's benchmarks share: the quick mode of `cargo test
//! --benches`, the toolchain check, building what they measure into the
//! bench's own target directory, the stub driver with a program linked
//! against it, the measured process's environment, running a command and
//! reading what it reported, medians.

// Each bench uses only part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether to keep the run short: `cargo bench` passes `--bench`, and
/// `cargo test --benches` runs the benches without it.
pub fn quick() -> bool {
    !std::env::args().any(|a| a == "--bench")
}

/// `cc`, or `None` after the skip line (a failure under
/// `PRLX_REQUIRE_TOOLCHAIN=1`).
pub fn cc_or_skip() -> Option<PathBuf> {
    let cc = prlx_tests::find_tool("cc");
    if cc.is_none() {
        prlx_tests::missing("cc");
    }
    cc
}

/// Builds `packages` in this bench's profile into its target directory and
/// returns where the binaries are, `target/<profile>`.
pub fn build_packages(packages: &[&str]) -> PathBuf {
    // target/<profile>/deps/<this bench> → target/<profile>
    let exe = std::env::current_exe().unwrap();
    let lib_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
    let mut build = Command::new(env!("CARGO"));
    build
        .args(["build", "-q"])
        .args(packages.iter().flat_map(|p| ["-p", p]))
        .env("CARGO_TARGET_DIR", lib_dir.parent().unwrap());
    if lib_dir.file_name().is_some_and(|n| n == "release") {
        build.arg("--release");
    }
    assert!(build.status().expect("run cargo build").success());
    lib_dir
}

/// Builds libprlx.so and the emulator's libcuda (with its `libcuda.so.1`
/// link) into this bench's target directory; returns that directory.
pub fn build_shim_and_emulator() -> PathBuf {
    let lib_dir = build_packages(&["prlx-preload", "prlx-libcuda"]);
    prlx_tests::link_libcuda_soname(&lib_dir);
    lib_dir
}

/// The do-nothing `libcuda.so.1` (`stub/libcuda_stub.c`) and the program
/// `stub/<program>.c` linked against it, built in `scratch/stub`:
/// (the stub's directory, the program).
pub fn build_stub_program(cc: &Path, scratch: &Path, program: &str) -> (PathBuf, PathBuf) {
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/stub");
    let stub_dir = scratch.join("stub");
    std::fs::create_dir_all(&stub_dir).unwrap();
    run_ok(
        Command::new(cc)
            .args(["-shared", "-fPIC", "-O2", "-Wall", "-Werror"])
            .arg("-Wl,-soname,libcuda.so.1")
            .arg(sources.join("libcuda_stub.c"))
            .arg("-o")
            .arg(stub_dir.join("libcuda.so.1")),
    );
    let binary = stub_dir.join(program);
    run_ok(
        Command::new(cc)
            .args(["-O2", "-Wall", "-Werror"])
            .arg(sources.join(format!("{program}.c")))
            .arg(format!("-L{}", stub_dir.display()))
            .args(["-l:libcuda.so.1", "-o"])
            .arg(&binary),
    );
    (stub_dir, binary)
}

/// Clears what would configure the measured process behind the bench's
/// back: every `PRLX_*` variable of this process and `LD_PRELOAD`. Each
/// configuration then sets its own.
pub fn without_shim_settings(command: &mut Command) -> &mut Command {
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("PRLX_") {
            command.env_remove(key);
        }
    }
    command.env_remove("LD_PRELOAD")
}

/// The number a stub program printed after `key` on a line of `out`.
pub fn reported(out: &str, key: &str) -> f64 {
    out.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {out:?}"))
}

/// Runs `command`, failing with its output unless it exits 0; its stdout.
pub fn run_ok(command: &mut Command) -> String {
    String::from_utf8(prlx_tests::run_ok(command).stdout).unwrap()
}

/// The median of `values` (the upper one of an even count), sorting them.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}
