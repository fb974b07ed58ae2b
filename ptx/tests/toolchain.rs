//! Freshly compiled PTX (this machine's clang-19 and nvcc) parses and
//! round-trips, so the committed samples are not the only evidence.
//!
//! Without the tools these tests print a skip line, unless
//! `PRLX_REQUIRE_TOOLCHAIN=1` makes a missing tool a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use prlx_ptx::{parse, parse_file, same_module};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn sources() -> PathBuf {
    repo_root().join("tests/ptx-samples/src")
}

/// `Some(program)` if it runs; otherwise skips (or fails under PRLX_REQUIRE_TOOLCHAIN=1).
fn locate(program: &Path, what: &str) -> Option<PathBuf> {
    let works = Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if works {
        return Some(program.to_path_buf());
    }
    if std::env::var("PRLX_REQUIRE_TOOLCHAIN").as_deref() == Ok("1") {
        panic!(
            "{what} not found at {}, run scripts/setup.sh",
            program.display()
        );
    }
    println!("skipped: {what} not found, run scripts/setup.sh");
    None
}

fn check_compiled(ptx: &Path) {
    let m = parse_file(ptx).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        m.functions().any(|f| f.body.is_some()),
        "{}: no kernels",
        ptx.display()
    );
    let again =
        parse(&m.to_string(), "printed.ptx").unwrap_or_else(|e| panic!("{}: {e}", ptx.display()));
    assert!(
        same_module(&m, &again),
        "{}: round trip changed the module",
        ptx.display()
    );
}

/// Runs `cmd`, failing the test with `context` and the tool's stderr if it fails.
fn run(context: &str, cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{context}: cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{context}: {cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn fresh_clang_ptx_parses() {
    let Some(clang) = locate(Path::new("clang-19"), "clang-19") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, extra) in [
        ("vector_add", &[][..]),
        ("device_calls", &[][..]),
        ("globals", &[][..]),
        ("debug_loop", &["-g", "-O0"][..]),
    ] {
        let out = dir.path().join(format!("{name}.ptx"));
        run(
            name,
            Command::new(&clang)
                .args([
                    "-x",
                    "cuda",
                    "--cuda-device-only",
                    "-nocudainc",
                    "-nocudalib",
                ])
                .args([
                    "--cuda-gpu-arch=sm_80",
                    "-Xclang",
                    "-target-feature",
                    "-Xclang",
                    "+ptx75",
                    "-O2",
                ])
                .args(extra)
                .arg("-S")
                .arg(sources().join(format!("{name}.cu")))
                .arg("-o")
                .arg(&out),
        );
        check_compiled(&out);
    }
}

#[test]
fn fresh_nvcc_ptx_parses() {
    let nvcc = repo_root().join(".tools/cuda13/nvidia/cu13/bin/nvcc");
    let Some(nvcc) = locate(&nvcc, "nvcc (CUDA 13)") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, extra) in [
        ("reduction", &[][..]),
        ("printf_bounds", &[][..]),
        ("debug_loop", &["-lineinfo"][..]),
    ] {
        let out = dir.path().join(format!("{name}.ptx"));
        run(
            name,
            Command::new(&nvcc)
                .args(["-ptx", "-arch=sm_80"])
                .args(extra)
                .arg(sources().join(format!("{name}.cu")))
                .arg("-o")
                .arg(&out),
        );
        check_compiled(&out);
    }
}

/// The printer's output is PTX that NVIDIA's own assembler accepts.
#[test]
fn printed_samples_assemble_with_ptxas() {
    let ptxas = repo_root().join(".tools/cuda13/nvidia/cu13/bin/ptxas");
    let Some(ptxas) = locate(&ptxas, "ptxas (CUDA 13)") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let samples = repo_root().join("tests/ptx-samples");
    let mut checked = 0;
    for sub in ["clang", "nvcc", "triton"] {
        let Ok(entries) = std::fs::read_dir(samples.join(sub)) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().is_none_or(|x| x != "ptx") {
                continue;
            }
            let m = parse_file(&path).unwrap_or_else(|e| panic!("{e}"));
            let printed = dir.path().join("printed.ptx");
            std::fs::write(&printed, m.to_string()).unwrap();
            run(
                &path.display().to_string(),
                Command::new(&ptxas)
                    .arg("-arch=sm_80")
                    .arg(&printed)
                    .arg("-o")
                    .arg(dir.path().join("printed.cubin")),
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} samples assembled");
}
