//! The C programs of `tests/driver-api/`, compiled against NVIDIA's `cuda.h`,
//! linked with `-lcuda` and run on this crate's `libcuda.so.1`.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

fn driver_api_dir() -> std::path::PathBuf {
    repo_root().join("tests/driver-api")
}

/// clang-19 CUDA -> PTX, SDK-free.
fn compile_ptx(clang: &Path, source: &Path, out: &Path) {
    let output = Command::new(clang)
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
        ])
        .args(["-O2", "-S"])
        .arg(source)
        .arg("-o")
        .arg(out)
        .output()
        .expect("run clang-19");
    assert!(
        output.status.success(),
        "clang-19 failed on {}:\n{}",
        source.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn full_driver_api_program_runs_and_checks_its_results() {
    let (Some(cc), Some(clang), Some(variants)) = (tool("cc"), tool("clang-19"), header_variants())
    else {
        return;
    };
    let lib_dir = libcuda_dir();
    let tmp = tempfile::tempdir().unwrap();
    let ptx = tmp.path().join("kernels.ptx");
    compile_ptx(&clang, &driver_api_dir().join("kernels.cu"), &ptx);
    for (i, header) in variants.iter().enumerate() {
        let program = tmp.path().join(format!("driver_api_full_{i}"));
        let source = driver_api_dir().join("driver_api_full.c");
        compile_c(&cc, header, &lib_dir, &source, &program);

        let needed = read_dynamic(&program).needed;
        assert!(
            needed.iter().any(|n| n == "libcuda.so.1"),
            "program should depend on the soname, not the file name: {needed:?}"
        );

        let run = run_with_libcuda(&program, &[&ptx], &lib_dir);
        assert_eq!(
            run.code,
            Some(0),
            "{}\nstdout:\n{}\nstderr:\n{}",
            header.label,
            run.stdout,
            run.stderr
        );
        assert!(
            run.stdout.contains("device: prlx PTX emulator"),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout.contains("driver_api_full: all checks passed"),
            "{}",
            run.stdout
        );
    }
}

#[test]
fn error_paths_return_driver_codes_and_never_crash() {
    let (Some(cc), Some(variants)) = (tool("cc"), header_variants()) else {
        return;
    };
    let lib_dir = libcuda_dir();
    let tmp = tempfile::tempdir().unwrap();
    for (i, header) in variants.iter().enumerate() {
        let program = tmp.path().join(format!("driver_api_errors_{i}"));
        let source = driver_api_dir().join("driver_api_errors.c");
        compile_c(&cc, header, &lib_dir, &source, &program);
        let run = run_with_libcuda(&program, &[], &lib_dir);
        assert_eq!(
            run.code,
            Some(0),
            "{}\nstdout:\n{}\nstderr:\n{}",
            header.label,
            run.stdout,
            run.stderr
        );
        check_error_run_output(&run);
    }
}

fn check_error_run_output(run: &Run) {
    assert!(
        run.stdout.contains("driver_api_errors: all checks passed"),
        "{}",
        run.stdout
    );
    // The JIT logs the program printed name the file, line and problem.
    assert!(
        run.stdout
            .contains("module.ptx:7:3: unsupported instruction `frobnicate.u32`"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("module.ptx:9:3: unsupported instruction `sust.p.1d.b32.trap`"),
        "{}",
        run.stdout
    );
    // The fault is reported once, naming kernel, block, thread, line and address,
    // even though the program kept calling into the sticky context afterwards.
    let faults: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("CUDA_ERROR_ILLEGAL_ADDRESS"))
        .collect();
    assert_eq!(faults.len(), 1, "stderr:\n{}", run.stderr);
    let fault = faults[0];
    for part in [
        "illegal address 0x",
        "kernel store_at",
        "block (0,0,0)",
        "thread (",
        "module.ptx:14",
    ] {
        assert!(fault.contains(part), "`{part}` missing from: {fault}");
    }
}

#[test]
fn library_carries_the_driver_soname() {
    let lib_dir = libcuda_dir();
    let info = read_dynamic(&lib_dir.join("libcuda.so"));
    assert_eq!(info.soname.as_deref(), Some("libcuda.so.1"));
    let link = std::fs::read_link(lib_dir.join("libcuda.so.1")).unwrap();
    assert_eq!(link, Path::new("libcuda.so"));
}
